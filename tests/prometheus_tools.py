"""Where promtool and mysqld_exporter are, and skip-or-fail when they are not.

Debian's packages (.ci/install-prometheus): ``prometheus`` ships promtool,
``prometheus-mysqld-exporter`` the exporter. A test that needs one skips when it is missing,
and fails instead under ``ADVISOR_REQUIRE_PROMETHEUS=1`` (CI), as ``ADVISOR_REQUIRE_GALERA``
does for the Galera cluster (tests/integration/galera_cluster.py).
"""

from __future__ import annotations

__all__ = ["exporter", "promtool", "require_prometheus"]

import os
import shutil

import pytest


def _which(*names: str) -> str | None:
    search = os.environ.get("PATH", "") + os.pathsep + "/usr/bin" + os.pathsep + "/usr/sbin"
    for name in names:
        found = shutil.which(name, path=search)
        if found:
            return found
    return None


def promtool() -> str | None:
    """promtool's path, or None."""
    return _which("promtool")


def exporter() -> str | None:
    """mysqld_exporter's path (Debian names it prometheus-mysqld-exporter), or None."""
    return _which("prometheus-mysqld-exporter", "mysqld_exporter")


def require_prometheus(missing: list[str]) -> None:
    """Skip when something is ``missing``; fail instead under ``ADVISOR_REQUIRE_PROMETHEUS=1``."""
    if not missing:
        return
    reason = "needs " + "; ".join(missing) + " (run .ci/install-prometheus)"
    if os.environ.get("ADVISOR_REQUIRE_PROMETHEUS") == "1":
        pytest.fail(f"ADVISOR_REQUIRE_PROMETHEUS=1 but this test {reason}")
    pytest.skip(reason)


def require_promtool() -> str:
    """promtool's path; skips (or fails under ADVISOR_REQUIRE_PROMETHEUS=1) without it."""
    path = promtool()
    require_prometheus([] if path else ["promtool (apt-get install prometheus)"])
    assert path is not None
    return path

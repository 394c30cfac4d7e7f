"""Rule files are read at every analysis: a change on disk is seen, an error is never kept
(parsing the shipped pack costs about 2 ms, a small share of an analysis)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from advisor.errors import AdvisorError
from advisor.rules import pack


def test_an_override_changed_on_disk_is_read_again(tmp_path: Path) -> None:
    override = tmp_path / "hot-row-rate.yaml"
    override.write_text("id: HOT-ROW-RATE\nseverity: warning\n", encoding="utf-8")
    assert pack.load_rules([tmp_path])["HOT-ROW-RATE"].severity == "warning"
    override.write_text("id: HOT-ROW-RATE\nseverity: info\n", encoding="utf-8")
    os.utime(override, ns=(1, 1))  # even with a stamp from the past
    assert pack.load_rules([tmp_path])["HOT-ROW-RATE"].severity == "info"


def test_a_broken_override_fails_every_time_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("id: HOT-ROW-RATE\n  x: [1\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(AdvisorError, match=r"bad\.yaml:2: YAML syntax error"):
            pack.load_rules([tmp_path])

"""What runs on the node: flavour, versions, provider options, and whether it is a member.

Read once at the start from ``SHOW GLOBAL VARIABLES`` and ``SHOW GLOBAL STATUS``.
"""

from __future__ import annotations

__all__ = [
    "MODEL_OPTIONS",
    "ServerInfo",
    "applier_threads_setting",
    "detect_flavor",
    "galera_version",
    "parse_provider_options",
    "server_info",
]

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from advisor.errors import AdvisorError

Flavor = Literal["mariadb", "pxc", "codership"]
OptionValue = int | float | str

# The provider options advisor's model reads (advisor/model/provider_options.py), plus the socket
# buffers that cap one TCP stream per RTT (codership/galera#552:
# https://github.com/mariadb-corporation/galera/issues/552).
MODEL_OPTIONS = (
    "evs.send_window",
    "evs.user_send_window",
    "evs.keepalive_period",
    "evs.suspect_timeout",
    "evs.inactive_timeout",
    "evs.inactive_check_period",
    "evs.install_timeout",
    "evs.join_retrans_period",
    "evs.delay_margin",
    "evs.delayed_keep_period",
    "evs.auto_evict",
    "gcs.fc_limit",
    "gcs.fc_factor",
    "gcs.fc_single_primary",
    "gcs.fc_master_slave",
    "gcs.max_packet_size",
    "gmcast.segment",
    "gmcast.peer_timeout",
    "pc.weight",
    "socket.recv_buf_size",
)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
# C0 and C1 controls and DEL, as the loader refuses them in text (advisor.inputs.topology).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_VERSION = re.compile(r"^\s*(\d+(?:\.\d+){0,3})")
# Galera library versions are "25.3.x" (Galera 3) and "26.4.x" (Galera 4), the first number
# being the wsrep API version; some builds (Debian's galera-4) report only "4.23".
_WSREP_API_FOR_MAJOR = {"3": "25", "4": "26"}


@dataclass(frozen=True)
class ServerInfo:
    """The node as ``SHOW VARIABLES`` and ``SHOW STATUS`` describe it at the start."""

    version: str
    version_comment: str
    flavor: Flavor
    galera_version: str | None
    galera_version_reported: str | None
    provider_options: dict[str, OptionValue]
    cluster_name: str | None
    node_name: str | None
    log_bin: bool
    binlog_format: str
    log_slave_updates: bool
    performance_schema: bool
    # Options advisor reads whose value it cannot use (a number of 5,000 digits): (key, what
    # was there, shortened); left out of provider_options.
    ignored_options: tuple[tuple[str, str], ...] = ()


def detect_flavor(version: str, version_comment: str) -> Flavor:
    """``pxc`` for Percona XtraDB Cluster, ``mariadb`` for MariaDB, else ``codership``.

    >>> detect_flavor("8.0.36-28.1", "Percona XtraDB Cluster (GPL), Release rel28")
    'pxc'
    >>> detect_flavor("10.11.6-MariaDB-log", "MariaDB Server")
    'mariadb'
    >>> detect_flavor("8.0.35", "MySQL Community Server - (GPL), wsrep_26.1.4.3")
    'codership'
    """
    if "xtradb cluster" in version_comment.lower() or "percona xtradb" in version.lower():
        return "pxc"
    if "mariadb" in version.lower() or "mariadb" in version_comment.lower():
        return "mariadb"
    return "codership"


def galera_version(reported: str | None) -> str | None:
    """The Galera library version as FORMAT.md spells it (``26.4.23``), from what it reports.

    >>> galera_version("26.4.16(r7dce5149)"), galera_version("4.23(rXXXX)"), galera_version("")
    ('26.4.16', '26.4.23', None)
    """
    match = _VERSION.match(reported or "")
    if not match:
        return None
    version = match.group(1)
    parts = version.split(".")
    if len(parts) == 2 and parts[0] in _WSREP_API_FOR_MAJOR:
        version = f"{_WSREP_API_FOR_MAJOR[parts[0]]}.{version}"
    return version


# The longest number read from an option: Galera's are 64-bit at most (20 digits); a longer
# one is not a setting (and int() of 5,000 digits is refused by Python itself).
_MAX_NUMBER_CHARS = 40


def _typed(value: str) -> OptionValue | None:
    """A number as a number, text as text; None for a number no setting can be, or text
    with a control character (which no setting holds and topology.yaml refuses)."""
    if _CONTROL.search(value):
        return None
    if _NUMBER.match(value):
        if len(value) > _MAX_NUMBER_CHARS:
            return None
        number = float(value) if "." in value else int(value)
        return number if math.isfinite(number) else None
    return value


def _shortened(value: str) -> str:
    shown = value if len(value) <= 40 else f"{value[:20]}... ({len(value):,} characters)"
    return shown.encode("unicode_escape").decode("ascii") if _CONTROL.search(shown) else shown


def parse_provider_options(
    text: str, keys: tuple[str, ...] = MODEL_OPTIONS
) -> dict[str, OptionValue]:
    """The ``keys`` present in a ``wsrep_provider_options`` string, numbers as numbers.

    Galera's spelling and units are kept (``PT5S``, ``NO``).

    >>> parse_provider_options("evs.send_window = 4; evs.suspect_timeout = PT5S; gcache.size = 1M")
    {'evs.send_window': 4, 'evs.suspect_timeout': 'PT5S'}
    """
    return _provider_options(text, keys)[0]


def _provider_options(
    text: str, keys: tuple[str, ...] = MODEL_OPTIONS
) -> tuple[dict[str, OptionValue], tuple[tuple[str, str], ...]]:
    """The options as :func:`parse_provider_options` gives them, and those left out (key,
    the value shortened): numbers no setting can be."""
    options: dict[str, OptionValue] = {}
    ignored: dict[str, str] = {}
    for item in text.split(";"):
        key, equals, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if equals and key in keys and value:
            typed = _typed(value)
            if typed is None:
                ignored[key] = _shortened(value)
                options.pop(key, None)
            else:
                options[key] = typed
                ignored.pop(key, None)
    return (
        {key: options[key] for key in keys if key in options},
        tuple((key, ignored[key]) for key in keys if key in ignored),
    )


def applier_threads_setting(variables: Mapping[str, str]) -> tuple[str, str] | None:
    """The appliers a node runs as ``SHOW GLOBAL VARIABLES`` names them: (name, value) of
    ``wsrep_slave_threads`` (MariaDB, PXC before 8.0.26), else ``wsrep_applier_threads``
    (PXC 8.0.26+); None when neither is there."""
    for name in ("wsrep_slave_threads", "wsrep_applier_threads"):
        if name in variables:
            return name, variables[name].strip()
    return None


def _on(value: str | None) -> bool:
    return (value or "").strip().upper() in {"ON", "1", "YES", "TRUE"}


def server_info(variables: Mapping[str, str], status: Mapping[str, str], where: str) -> ServerInfo:
    """Describe the node; :class:`AdvisorError` if it is not a working Galera member.

    ``where`` names the node in messages (``user@host:port``).
    """
    if "wsrep_on" not in variables:
        raise AdvisorError(
            f"{where} is not a Galera node: it has no wsrep variables "
            "(expected MariaDB Galera, Percona XtraDB Cluster or MySQL-wsrep)"
        )
    if not _on(variables.get("wsrep_on")):
        raise AdvisorError(f"{where} is not a Galera member: wsrep_on is OFF")
    provider = variables.get("wsrep_provider", "")
    if not provider or provider.lower() == "none":
        raise AdvisorError(f"{where} is not a Galera member: wsrep_provider is none")
    state = status.get("wsrep_cluster_status", "")
    if state.lower() == "disconnected" or not _on(status.get("wsrep_connected", "ON")):
        raise AdvisorError(
            f"{where} is not connected to a Galera cluster "
            f"(wsrep_cluster_status {state or 'unknown'}, "
            f"wsrep_connected {status.get('wsrep_connected', 'unknown')})"
        )
    version = variables.get("version", "")
    comment = variables.get("version_comment", "")
    reported = status.get("wsrep_provider_version") or variables.get("wsrep_provider_version")
    options, ignored = _provider_options(variables.get("wsrep_provider_options", ""))
    return ServerInfo(
        version=version,
        version_comment=comment,
        flavor=detect_flavor(version, comment),
        galera_version=galera_version(reported),
        galera_version_reported=reported,
        provider_options=options,
        cluster_name=variables.get("wsrep_cluster_name"),
        node_name=variables.get("wsrep_node_name"),
        log_bin=_on(variables.get("log_bin")),
        binlog_format=variables.get("binlog_format", "").upper(),
        log_slave_updates=_on(variables.get("log_slave_updates")),
        performance_schema=_on(variables.get("performance_schema")),
        ignored_options=ignored,
    )

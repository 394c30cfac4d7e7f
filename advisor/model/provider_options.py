"""Galera provider options: the ones the model reads, their flavour defaults and parsing.

Values keep Galera's own spelling and units (``PT5S``); :func:`effective_options` turns a
user's ``galera.provider_options`` into typed values (durations in seconds) on top of the
flavour's defaults. Sources: Galera's ``gcomm/src/defaults.cpp`` and ``gcs/src/gcs_params.cpp``
(https://github.com/codership/galera, branch 4.x), the PXC build's ``#ifdef PXC`` values from
percona/galera PR #110 (https://github.com/percona/galera/pull/110), and Codership docs,
Galera Parameters: https://galeracluster.com/library/documentation/galera-parameters.html.
"""

from __future__ import annotations

__all__ = [
    "FLAVOR_DEFAULTS",
    "KNOWN_OPTIONS",
    "MAX_WINDOW",
    "check_option",
    "effective_options",
    "format_duration",
    "parse_duration_s",
]

import re
from collections.abc import Callable, Mapping
from typing import Literal

Flavor = Literal["mariadb", "pxc", "codership"]
OptionValue = int | float | bool | str

_DURATION = re.compile(  # matched whole (fullmatch)
    r"P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?"
)


def _shown(value: OptionValue) -> str:
    """A value as an error message shows it: its repr, cut to 60 characters (a value of
    thousands of digits stays a short line)."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**60 else "a huge integer"
    return text if len(text) <= 60 else text[:57] + "..."


def parse_duration_s(value: OptionValue) -> float:
    """Seconds in a Galera duration.

    Parameters
    ----------
    value : int, float or str
        ISO 8601 ``PT5S``, ``PT1M``, ``PT0.5S``, or plain seconds [s].

    Returns
    -------
    float
        The duration [s], finite and >= 0.

    >>> parse_duration_s("PT1M30S"), parse_duration_s("PT0.5S"), parse_duration_s(3)
    (90.0, 0.5, 3.0)
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as PT5S, got {_shown(value)}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.fullmatch(value.strip().upper())
        if not match or value.strip().upper() in {"P", "PT"}:
            raise ValueError(
                f"expected an ISO 8601 duration such as PT5S or PT1M, got {_shown(value)}"
            )
        parts = {k: float(v) for k, v in match.groupdict().items() if v}
        seconds = (
            parts.get("d", 0) * 86400
            + parts.get("h", 0) * 3600
            + parts.get("m", 0) * 60
            + parts.get("s", 0)
        )
    if not seconds >= 0 or seconds == float("inf"):
        raise ValueError(f"expected a non-negative finite duration, got {_shown(value)}")
    return seconds


def format_duration(seconds: float) -> str:
    """Galera's spelling of a duration.

    Parameters
    ----------
    seconds : float
        The duration [s].

    Returns
    -------
    str
        ISO 8601: ``PT30S``, ``PT1M``, ``PT0.5S`` (to the millisecond).

    >>> format_duration(90.0), format_duration(120.0), format_duration(0.5)
    ('PT90S', 'PT2M', 'PT0.5S')
    """
    if seconds >= 60 and seconds % 60 == 0:
        return f"PT{int(seconds // 60)}M"
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return f"PT{text}S"


def _int_in(low: int, high: int) -> Callable[[OptionValue], int]:
    def parse(value: OptionValue) -> int:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"expected an integer from {low} to {high}, got {_shown(value)}")
        try:
            number = int(value)
        except ValueError:
            raise ValueError(
                f"expected an integer from {low} to {high}, got {_shown(value)}"
            ) from None
        if not low <= number <= high:
            raise ValueError(f"expected an integer from {low} to {high}, got {_shown(number)}")
        return number

    return parse


def _fraction(value: OptionValue) -> float:
    try:
        number = float(value) if not isinstance(value, bool) else float("nan")
    except ValueError:
        number = float("nan")
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"expected a number from 0 to 1, got {_shown(value)}")
    return number


def _boolean(value: OptionValue) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"yes", "true", "on", "1"}:
        return True
    if text in {"no", "false", "off", "0"}:
        return False
    raise ValueError(f"expected YES or NO, got {_shown(value)}")


# The shortest EVS periods Galera starts with: gcomm's Defaults::EvsSuspectTimeoutMin,
# EvsInactiveTimeoutMin and EvsRetransPeriodMin, each "PT0.1S", enforced by check_range in
# the evs::Proto constructor (https://github.com/codership/galera/blob/4.x/gcomm/src/
# defaults.cpp, evs_proto.cpp); a shorter value stops mariadbd at start. evs.install_timeout
# must lie in [evs.keepalive_period, evs.inactive_timeout], so it is at least as long.
EVS_PERIOD_MIN_S = 0.1
# The largest EVS window a design applies or a finding advises: the largest power of two
# within the range Galera and this parser accept for evs.send_window and
# evs.user_send_window (1 to 1,000,000, below).
MAX_WINDOW = 2**19


def _duration_at_least(minimum_s: float) -> Callable[[OptionValue], float]:
    def parse(value: OptionValue) -> float:
        seconds = parse_duration_s(value)
        if seconds < minimum_s:
            raise ValueError(
                f"expected a duration of at least {format_duration(minimum_s)} "
                f"(Galera's minimum), got {_shown(value)}"
            )
        return seconds

    return parse


# The options the model reads, with their parsers. Durations come back in seconds.
_PARSERS: dict[str, Callable[[OptionValue], OptionValue]] = {
    "evs.send_window": _int_in(1, 1_000_000),
    "evs.user_send_window": _int_in(1, 1_000_000),
    "evs.keepalive_period": _duration_at_least(EVS_PERIOD_MIN_S),
    "evs.suspect_timeout": _duration_at_least(EVS_PERIOD_MIN_S),
    "evs.inactive_timeout": _duration_at_least(EVS_PERIOD_MIN_S),
    "evs.inactive_check_period": parse_duration_s,
    "evs.install_timeout": _duration_at_least(EVS_PERIOD_MIN_S),
    "evs.join_retrans_period": _duration_at_least(EVS_PERIOD_MIN_S),
    "evs.delay_margin": parse_duration_s,
    "evs.delayed_keep_period": parse_duration_s,
    "evs.auto_evict": _int_in(0, 1_000_000),
    "gcs.fc_limit": _int_in(1, 2**31 - 1),
    "gcs.fc_factor": _fraction,
    "gcs.fc_single_primary": _boolean,
    "gcs.fc_master_slave": _boolean,
    "gcs.max_packet_size": _int_in(1, 2**31 - 1),
    "gmcast.segment": _int_in(0, 255),
    "gmcast.peer_timeout": parse_duration_s,
    "pc.weight": _int_in(0, 255),
}

# Galera options the model does not read but a user may legitimately set; a key close to one
# of these or of the parsed ones but not equal is a typo (Galera Parameters, module docstring).
_OTHER_KNOWN = {
    "evs.max_install_timeouts",
    "evs.use_aggregate",
    "evs.version",
    "evs.stats_report_period",
    "evs.debug_log_mask",
    "evs.info_log_mask",
    "evs.causal_keepalive_period",
    "evs.view_forget_timeout",
    "gcs.fc_debug",
    "gcs.fc_auto_evict_window",
    "gcs.fc_auto_evict_threshold",
    "gcs.recv_q_hard_limit",
    "gcs.recv_q_soft_limit",
    "gcs.max_throttle",
    "gcs.sync_donor",
    "gcs.check_appl_proto",
    "gmcast.listen_addr",
    "gmcast.mcast_addr",
    "gmcast.mcast_ttl",
    "gmcast.time_wait",
    "gmcast.version",
    "gmcast.isolate",
    "pc.ignore_sb",
    "pc.ignore_quorum",
    "pc.recovery",
    "pc.wait_prim",
    "pc.wait_prim_timeout",
    "pc.announce_timeout",
    "pc.linger",
    "pc.npvo",
    "pc.checksum",
    "pc.bootstrap",
    "pc.version",
    "socket.recv_buf_size",
    "socket.send_buf_size",
    "socket.checksum",
    "socket.ssl",
    "socket.ssl_ca",
    "socket.ssl_cert",
    "socket.ssl_key",
    "socket.ssl_cipher",
    "socket.ssl_compression",
    "socket.ssl_password_file",
    "socket.ssl_reload",
    "socket.dynamic",
    "gcache.size",
    "gcache.page_size",
    "gcache.dir",
    "gcache.name",
    "gcache.recover",
    "gcache.keep_pages_size",
    "gcache.mem_size",
    "gcache.keep_plaintext_size",
    "gcache.encryption",
    "repl.commit_order",
    "repl.causal_read_timeout",
    "repl.key_format",
    "repl.max_ws_size",
    "repl.proto_max",
    "base_host",
    "base_port",
    "base_dir",
    "cert.log_conflicts",
    "cert.optimistic_pa",
    "debug",
    "gcomm.thread_prio",
    "ist.recv_addr",
    "ist.recv_bind",
    "protonet.backend",
    "protonet.version",
    "gcs.fc_limit",
    "gcs.fc_factor",
}
KNOWN_OPTIONS = frozenset(_PARSERS) | frozenset(_OTHER_KNOWN)

_COMMON_DEFAULTS: dict[str, OptionValue] = {
    "evs.send_window": 4,
    "evs.user_send_window": 2,
    "evs.keepalive_period": 1.0,
    "evs.suspect_timeout": 5.0,
    "evs.inactive_timeout": 15.0,
    "evs.inactive_check_period": 0.5,
    "evs.install_timeout": 7.5,
    "evs.join_retrans_period": 1.0,
    "evs.delay_margin": 1.0,
    "evs.delayed_keep_period": 30.0,
    "evs.auto_evict": 0,
    "gcs.fc_limit": 16,
    "gcs.fc_factor": 1.0,
    "gcs.fc_single_primary": False,
    "gcs.fc_master_slave": False,
    "gcs.max_packet_size": 64500,
    "gmcast.segment": 0,
    "gmcast.peer_timeout": 3.0,
    "pc.weight": 1,
}
FLAVOR_DEFAULTS: dict[str, dict[str, OptionValue]] = {
    "codership": dict(_COMMON_DEFAULTS),
    "mariadb": dict(_COMMON_DEFAULTS),
    # PXC build: send_window 10, user_send_window 4, fc_limit 100 (percona/galera PR #110).
    "pxc": {
        **_COMMON_DEFAULTS,
        "evs.send_window": 10,
        "evs.user_send_window": 4,
        "gcs.fc_limit": 100,
    },
}


# What can be written into ``wsrep_provider_options = "k=v; ..."`` of a my.cnf without changing
# its meaning: no quote, ';' (the option separator), newline, '#' or control character.
# Matched whole (fullmatch): with re.match, '$' also matches before a final newline, so
# "x\n" passed and split the cnf line and garbd.conf's GALERA_OPTIONS (issue 26).
WRITABLE_KEY = re.compile(r"[A-Za-z0-9_.]+")
WRITABLE_VALUE = re.compile(r"[A-Za-z0-9_.:/+,@=-]*")


def option_text(value: OptionValue) -> str:
    """A provider option value as written in ``wsrep_provider_options``.

    Parameters
    ----------
    value : int, float, bool or str
        The value, in the option's own unit.

    Returns
    -------
    str
        ``YES``/``NO`` for booleans, integers without a decimal point, else as given.

    >>> option_text(True), option_text(4.0), option_text("PT5S")
    ('YES', '4', 'PT5S')
    """
    if isinstance(value, bool):
        return "YES" if value else "NO"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def check_option(key: str, value: OptionValue) -> OptionValue:
    """Parse one provider option; raise ``ValueError`` naming a likely typo or a bad value.

    Every option must also be writable as it is into the generated configuration, so that
    ``validate`` refuses what ``doc`` could not write.

    Parameters
    ----------
    key : str
        The option, e.g. ``evs.send_window``.
    value : int, float, bool or str
        Its value as the user gave it, in Galera's units.

    Returns
    -------
    int, float, bool or str
        The parsed value; durations in seconds [s], others in the option's unit.

    >>> check_option("evs.user_send_window", 4)
    4
    >>> check_option("x.y", "a;b")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: provider option 'x.y' = 'a;b' cannot be written into wsrep_provider_options: ...
    """
    parser = _PARSERS.get(key)
    parsed = value if parser is None else parser(value)  # a bad value's own message first
    if parser is None and key not in KNOWN_OPTIONS:
        import difflib  # only for a misspelt option: not on every run's start-up

        close = difflib.get_close_matches(key, sorted(KNOWN_OPTIONS), n=1, cutoff=0.85)
        if close:
            raise ValueError(f"unknown provider option {_shown(key)}; did you mean {close[0]!r}?")
    text = option_text(value)
    if not WRITABLE_KEY.fullmatch(key) or not WRITABLE_VALUE.fullmatch(text):
        raise ValueError(
            f"provider option {_shown(key)} = {_shown(text)} cannot be written into "
            "wsrep_provider_options: expected letters, digits and _.:/+,@=- only"
        )
    return parsed


def effective_options(
    flavor: Flavor, given: Mapping[str, OptionValue] | None = None
) -> dict[str, OptionValue]:
    """The flavour's defaults overlaid with the given options, parsed.

    Parameters
    ----------
    flavor : {"mariadb", "pxc", "codership"}
        The Galera build.
    given : mapping of str to value, optional
        The user's ``galera.provider_options``, in Galera's units.

    Returns
    -------
    dict of str to value
        Every option the model reads and every one given; durations in seconds [s].
    """
    options = dict(FLAVOR_DEFAULTS[flavor])
    for key, value in (given or {}).items():
        options[key] = check_option(key, value)
    return options

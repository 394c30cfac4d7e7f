"""Hostile input, generated: nothing but a result or one clean line ever comes out.

Valid topologies and tool logs are generated from the shapes of FORMAT.md and of the real
tools, then mutated (keys, values, types, structure, bytes). For each, the loader, every
measurement parser, the engine and the CLI must give a result or an ``AdvisorError`` whose
message is one line naming the input; the CLI must exit 0 or 2 with no traceback.

Example counts come from tests/hypothesis_profiles.py (``HYPOTHESIS_PROFILE=slow`` for ten
times more). Protection each test guards: AdvisorError at every user-facing boundary, the
loader's error mapping, the parsers' validation and the CLI's error boundary; remove any one
and the matching test fails with the input that escapes.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from hypothesis_profiles import examples
from typer.testing import CliRunner

from advisor.cli import app
from advisor.engine.evidence import gather_links
from advisor.errors import AdvisorError
from advisor.inputs.loading import parse_topology
from advisor.inputs.topology import MEDIA, MIN_DISTANCE_KM, MIN_TIME_MS, Topology
from advisor.measurements import FORMATS, ParsedMeasurement, parse_file, parse_measurement
from advisor.model.rtt import RttDistribution
from advisor.recommendation import recommend
from advisor.text.report import to_json

DATA = Path(__file__).parent / "data" / "measurements"
SOURCE = "generated.yaml"
# Names refuse control characters (C0, DEL, C1: category Cc) and the bidi marks, overrides
# and isolates (issue 14); a description keeps newlines and tabs.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
NAME_CHARS = st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters=_BIDI)
PROSE_CHARS = st.one_of(NAME_CHARS, st.sampled_from("\n\t"))


class NonFiniteJson(AssertionError):
    """The JSON output holds NaN or Infinity, which strict JSON parsers refuse."""


def _sites(data: Any) -> list[dict[Any, Any]]:
    sites = data.get("sites") if isinstance(data, dict) else None
    return [s for s in sites if isinstance(s, dict)] if isinstance(sites, list) else []


# ---------------------------------------------------------------------------------------------
# What "clean" means


def check_error(error: AdvisorError, source: str | None) -> None:
    """One non-empty line, naming the input first when the input has a name."""
    text = str(error)
    assert text.strip(), "empty error message"
    assert "\n" not in text and "\r" not in text, f"multi-line error: {text!r}"
    assert "Traceback" not in text
    if source is not None:
        assert text.startswith(source), f"error does not name {source!r} first: {text!r}"


def outcome(run: Callable[[], Any], source: str | None) -> Any:
    """``run()``'s result, or None after checking the AdvisorError it raised; any other
    exception fails the test (the tolerated crash classes of the first round are fixed)."""
    try:
        return run()
    except AdvisorError as error:
        check_error(error, source)
        return None


def usable(parsed: ParsedMeasurement) -> ParsedMeasurement:
    """Build what evidence.py builds from a parsed file. A ValueError is fine (evidence turns
    it into a located AdvisorError: percentiles that decrease, every probe lost); any other
    exception is a crash."""
    loss = parsed.loss or 0.0
    with contextlib.suppress(ValueError):
        if parsed.samples_ms is not None and parsed.samples_ms.size:
            RttDistribution.from_samples(parsed.samples_ms, loss=loss)
        elif {k for k in parsed.percentiles_ms or {} if k != "mean"}:
            RttDistribution.from_percentiles(parsed.percentiles_ms or {}, loss=loss)
        else:
            RttDistribution.point((parsed.percentiles_ms or {})["mean"], loss=loss)
    return parsed


def check_parsed(parsed: ParsedMeasurement) -> None:
    """What evidence.py relies on: finite non-negative times, a fraction of loss, some data."""
    assert parsed.tool in {"ping-iputils", "ping-bsd", "netperf", "sockperf", "samples"}
    samples = parsed.samples_ms
    if samples is not None:
        assert samples.dtype == np.float64 and samples.ndim == 1
        assert np.all(np.isfinite(samples)) and np.all(samples >= 0)
    for key, value in (parsed.percentiles_ms or {}).items():
        assert math.isfinite(value) and value >= 0, f"{key}={value}"
    assert (samples is not None and samples.size > 0) or parsed.percentiles_ms
    assert parsed.loss is None or 0.0 <= parsed.loss <= 1.0
    assert parsed.duplicates >= 0
    for count in (parsed.transmitted, parsed.received):
        assert count is None or count >= 0


def strict_json(text: str) -> Any:
    """JSON that any parser reads: no NaN or Infinity."""

    def refuse(constant: str) -> None:
        raise NonFiniteJson(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


# ---------------------------------------------------------------------------------------------
# Valid topologies (FORMAT.md), as plain data

site_names = st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True)
# Realistic values most of the time, the model's whole range sometimes (1e-300 .. 1e308).
SCHEMA = Topology.model_json_schema()


def schema_bounds(model: str, key: str) -> tuple[float, float, bool, bool]:
    """(low, high, low excluded, high excluded) of a number in the models, read from their
    JSON schema, so that these generators follow topology.py's bounds as they change."""
    prop = SCHEMA["$defs"][model]["properties"][key]
    numeric = next(o for o in prop.get("anyOf", [prop]) if o.get("type") != "null")
    numeric = numeric.get("items", numeric)  # a list of numbers: its items' bounds
    low = numeric.get("minimum", numeric.get("exclusiveMinimum", -1e308))
    high = numeric.get("maximum", numeric.get("exclusiveMaximum", 1e308))
    return float(low), float(high), "exclusiveMinimum" in numeric, "exclusiveMaximum" in numeric


def numbers(
    model: str, key: str, usual_high: float, *, wide: bool = True
) -> st.SearchStrategy[float]:
    """Values of ``model.key`` that the model accepts: realistic ones up to ``usual_high``
    most of the time; with ``wide``, also the whole allowed range and its very edges
    (1,000 s round trips, ten million commits a second, the smallest positive value)."""
    strategy = _numbers(model, key, usual_high, wide=wide)
    if model in {"Percentiles", "CommitLatencySlo"} or key.endswith("_ms"):
        # A time is 0 or at least 1 ns (inputs.topology.MIN_TIME_MS; not in the schema).
        return strategy.filter(lambda x: x == 0 or x >= MIN_TIME_MS)
    if key in {"distance_km", "route_km"}:
        # A distance is at least a metre (inputs.topology.MIN_DISTANCE_KM; not in the schema).
        return strategy.filter(lambda x: x >= MIN_DISTANCE_KM)
    return strategy


def _numbers(model: str, key: str, usual_high: float, *, wide: bool) -> st.SearchStrategy[float]:
    low, high, exclude_low, exclude_high = schema_bounds(model, key)
    usual = st.floats(min_value=low, max_value=min(usual_high, high), exclude_min=exclude_low)
    rounded = usual.map(lambda x: round(x, 3)).filter(lambda x: x > low or not exclude_low)
    if not wide:
        return st.one_of(usual, rounded)
    whole = st.floats(
        min_value=low, max_value=high, exclude_min=exclude_low, exclude_max=exclude_high
    )
    edges = [
        math.nextafter(low, math.inf) if exclude_low else low,
        math.nextafter(high, -math.inf) if exclude_high else high,
    ]
    return st.one_of(usual, rounded, whole, st.sampled_from(edges))


@st.composite
def percentiles(
    draw: st.DrawFn,
    model: str = "Percentiles",
    *,
    high: float = 500.0,
    wide: bool = True,
    single: bool = True,
) -> dict[str, float] | float:
    """Some percentiles of ``model``, non-decreasing; or one number (read as the peak)."""
    keys = tuple(SCHEMA["$defs"][model]["properties"])
    value = numbers(model, keys[-1], high, wide=wide)
    if single and draw(st.booleans()) and draw(st.booleans()):
        return draw(value)
    chosen = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4, unique=True))
    chosen.sort(key=keys.index)
    values = sorted(draw(st.lists(value, min_size=len(chosen), max_size=len(chosen))))
    return dict(zip(chosen, values, strict=True))


@st.composite
def rates(draw: st.DrawFn, model: str, high: float, wide: bool = True) -> dict[str, float] | float:
    value = numbers(model, "peak", high, wide=wide)
    kind = draw(st.sampled_from(["number", "avg", "peak", "both"]))
    if kind == "number":
        return draw(value)
    if kind == "both":
        avg, peak = sorted(draw(st.lists(value, min_size=2, max_size=2)))
        return {"avg": avg, "peak": peak}
    return {kind: draw(value)}


@st.composite
def measurements(draw: st.DrawFn, files: list[str], wide: bool = True) -> dict[str, Any]:
    method = draw(st.sampled_from(["icmp", "tcp_rr"]))
    spec: dict[str, Any] = {"method": method}
    if method == "icmp" and draw(st.booleans()):
        spec["payload_bytes"] = draw(st.integers(0, 65507))
    if method == "tcp_rr":
        spec["request_bytes"] = draw(st.integers(1, 2**31))
        if draw(st.booleans()):
            spec["response_bytes"] = draw(st.integers(1, 2**31))
    source = draw(
        st.sampled_from(["samples", "percentiles", "file"] if files else ["samples", "percentiles"])
    )
    if source == "samples":
        spec["samples_ms"] = draw(
            st.lists(numbers("Measurement", "samples_ms", 300, wide=wide), min_size=1, max_size=30)
        )
    elif source == "percentiles":
        spec["percentiles_ms"] = draw(percentiles(wide=wide, single=False))
    else:
        spec["file"] = draw(st.sampled_from(files))
        spec["format"] = draw(st.sampled_from(sorted(FORMATS)))
    if source != "file" and draw(st.booleans()):
        spec["loss"] = draw(numbers("Measurement", "loss", 0.1, wide=wide))
    return spec


OPTION_VALUES = {
    "evs.send_window": st.integers(1, 1_000_000),
    "evs.user_send_window": st.integers(1, 1_000_000),
    "evs.suspect_timeout": st.sampled_from(["PT5S", "PT30S", "PT1M", "PT0.5S", "P1D"]),
    "evs.inactive_timeout": st.sampled_from(["PT15S", "PT1M", 10]),
    "evs.keepalive_period": st.sampled_from(["PT1S", "PT3S", 0.5]),
    "gcs.fc_limit": st.integers(1, 2**31 - 1),
    "gcs.fc_factor": st.floats(0, 1),
    "gcs.fc_single_primary": st.sampled_from([True, False, "YES", "no"]),
    "gmcast.segment": st.integers(0, 255),
    "pc.weight": st.integers(0, 255),
}


@st.composite
def topologies(
    draw: st.DrawFn, max_sites: int = 3, files: tuple[str, ...] = (), wide: bool = True
) -> dict[str, Any]:
    """A topology FORMAT.md accepts; ``files`` are measurement files a link may name.

    ``wide=False`` keeps numbers in realistic ranges, for tests of other layers (the CLI);
    ``wide=True`` also draws the whole range the models allow, edges included.
    """
    names = draw(st.lists(site_names, min_size=1, max_size=max_sites, unique=True))
    sites: list[dict[str, Any]] = []
    for name in names:
        site: dict[str, Any] = {"name": name}
        if draw(st.integers(0, 9)) < 8:
            site["location"] = {"lat": draw(st.floats(-90, 90)), "lon": draw(st.floats(-180, 180))}
        nodes = draw(st.one_of(st.integers(1, 7), st.integers(0, 7), st.just(1000)))
        site["nodes"] = nodes
        if nodes == 0 or draw(st.integers(0, 4)) == 0:
            site["writes"] = False
        if draw(st.booleans()):
            site["arbitrator"] = draw(st.booleans())
        if draw(st.integers(0, 3)) == 0:
            site["lan_rtt_ms"] = draw(percentiles(high=5.0, wide=wide))
        if draw(st.integers(0, 3)) == 0:
            site["weight"] = draw(st.integers(0, 255))
        sites.append(site)
    if all(site["nodes"] == 0 for site in sites):
        sites[0]["nodes"] = 1  # FORMAT: at least one site holds Galera nodes
    data: dict[str, Any] = {
        "name": draw(st.text(NAME_CHARS, min_size=1, max_size=20).filter(str.strip)),
        "sites": sites,
    }
    if draw(st.booleans()):
        data["version"] = 1
    if draw(st.booleans()):
        data["description"] = draw(st.text(PROSE_CHARS, max_size=40))

    links = []
    pairs = list(itertools.combinations(names, 2))
    for a, b in draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []:
        link: dict[str, Any] = {"sites": [a, b]}
        if draw(st.booleans()):
            link["distance_km"] = draw(numbers("Link", "distance_km", 20000, wide=wide))
            if draw(st.booleans()):
                longest = schema_bounds("Link", "route_km")[1]
                link["route_km"] = min(link["distance_km"] * draw(st.floats(1, 3)), longest)
        elif draw(st.integers(0, 3)) == 0:
            link["route_km"] = draw(numbers("Link", "route_km", 30000, wide=wide))
        if draw(st.booleans()):
            link["medium"] = draw(st.sampled_from(MEDIA))
        if draw(st.booleans()):
            link["bandwidth_mbps"] = draw(numbers("Link", "bandwidth_mbps", 100000, wide=wide))
        link["measurements"] = draw(st.lists(measurements(list(files), wide), max_size=2))
        links.append(link)
    if links:
        data["links"] = links

    if draw(st.booleans()):
        requirements: dict[str, Any] = {}
        if draw(st.booleans()):
            slo = draw(percentiles("CommitLatencySlo", wide=wide, single=False))
            requirements["commit_latency_ms"] = slo
        if draw(st.booleans()):
            requirements["survive"] = draw(st.sampled_from(["node", "site"]))
        if draw(st.booleans()):
            requirements["max_data_loss_s"] = draw(
                numbers("Requirements", "max_data_loss_s", 3600, wide=wide)
            )
        data["requirements"] = requirements

    if draw(st.booleans()):
        workload: dict[str, Any] = {}
        if draw(st.booleans()):
            workload["commits_per_s"] = draw(rates("CommitRate", 20000, wide))
        if draw(st.booleans()):
            workload["writeset_bytes"] = draw(percentiles("SizePercentiles", high=1e7, wide=wide))
        if draw(st.booleans()):
            workload["replicated_bytes_per_s"] = draw(rates("ByteRate", 1e9, wide))
        if draw(st.integers(0, 3)) == 0:
            workload["local_commit_ms"] = draw(numbers("Workload", "local_commit_ms", 5, wide=wide))
        # hot-row writers must hold nodes; without writer_sites, some site must write
        holders = [s["name"] for s in sites if s["nodes"] > 0 and s.get("writes", True)]
        writing = any(s.get("writes", True) and s["nodes"] > 0 for s in sites)
        rows = draw(st.lists(st.text(NAME_CHARS, min_size=1, max_size=12), max_size=2, unique=True))
        if rows and holders:
            workload["hot_rows"] = []
            for row in rows:
                hot: dict[str, Any] = {
                    "name": row,
                    "updates_per_s": draw(numbers("HotRow", "updates_per_s", 500, wide=wide)),
                }
                if not writing or draw(st.booleans()):
                    hot["writer_sites"] = draw(
                        st.lists(st.sampled_from(holders), min_size=1, max_size=3)
                    )
                workload["hot_rows"].append(hot)
        if draw(st.booleans()):
            workload["clients"] = {
                "concurrency": draw(st.integers(1, 1_000_000)),
                "baseline_txn_latency_ms": draw(
                    numbers("Clients", "baseline_txn_latency_ms", 1000, wide=wide)
                ),
                "commits_per_txn": draw(st.integers(1, 10_000)),
            }
        data["workload"] = workload

    if draw(st.booleans()):
        galera: dict[str, Any] = {"flavor": draw(st.sampled_from(["mariadb", "pxc", "codership"]))}
        if draw(st.booleans()):
            galera["version"] = draw(st.from_regex(r"\d{1,3}(\.\d{1,3}){0,3}", fullmatch=True))
        keys = draw(st.lists(st.sampled_from(sorted(OPTION_VALUES)), unique=True, max_size=4))
        if keys:
            galera["provider_options"] = {k: draw(OPTION_VALUES[k]) for k in keys}
        data["galera"] = galera
    return data


class _Dumper(yaml.SafeDumper):
    """PyYAML writes YAML 1.1: it leaves '1e3' unquoted, which advisor reads (as YAML 1.2
    does) as a number. Quote such strings so the file says what the data says."""


_LOOKS_LIKE_A_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+")
_Dumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="'" if _LOOKS_LIKE_A_FLOAT.fullmatch(text) else None
    ),
)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


# ---------------------------------------------------------------------------------------------
# Mutations: of the data (keys, values, types, structure) and of the text (bytes)

JUNK_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "0",
            "-1",
            "1e3",
            "PT5S",
            "nan",
            ".inf",
            "~",
            "null",
            "yes",
            "a",
            "paris-1",
            "..",
            "../../etc/passwd",
            "/dev/zero",
            "{0.__class__}",
            "icmp",
            "tcp_rr",
            "fiber",
            "samples",
            "ping",
            "x" * 300,
        ]
    ),
)
JUNK = st.recursive(
    JUNK_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += paths(value, (*prefix, index))
    return found


def get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def mutated(draw: st.DrawFn, data: Any) -> Any:
    """``data`` after 1 to 4 structural edits at places drawn from its own tree."""
    for _ in range(draw(st.integers(1, 4))):
        places = paths(data)
        path = draw(st.sampled_from(places))
        target = get(data, path)
        edit = draw(
            st.sampled_from(
                ["replace", "delete", "add_key", "wrap", "duplicate", "numeric", "rename"]
            )
        )
        if edit == "replace" or not path:
            value = draw(JUNK)
            data = value if not path else data
            if path:
                get(data, path[:-1])[path[-1]] = value
        elif edit == "delete":
            del get(data, path[:-1])[path[-1]]
        elif edit == "add_key" and isinstance(target, dict):
            key = draw(
                st.sampled_from(
                    [
                        "extra",
                        "p50",
                        "max",
                        "nodes",
                        "file",
                        "format",
                        "samples_ms",
                        "loss",
                        "<<",
                        "sites",
                        "name",
                    ]
                )
            )
            target[key] = draw(JUNK)
        elif edit == "wrap":
            get(data, path[:-1])[path[-1]] = draw(st.sampled_from([[target], {"x": target}]))
        elif edit == "duplicate" and isinstance(target, list) and target:
            target.append(target[draw(st.integers(0, len(target) - 1))])
        elif edit == "numeric" and isinstance(target, int | float) and not isinstance(target, bool):
            factor = draw(st.sampled_from([0, -1, 1e-300, 1e300, 2**63, 0.5]))
            get(data, path[:-1])[path[-1]] = target * factor
        elif edit == "rename" and isinstance(get(data, path[:-1]), dict):
            parent = get(data, path[:-1])
            parent[draw(st.text(max_size=8))] = parent.pop(path[-1])
    return data


INTERESTING_TEXT = st.one_of(
    st.text(max_size=6),
    st.sampled_from(
        [
            ":",
            ": ",
            "- ",
            "\n",
            "\r\n",
            "\t",
            "  ",
            "[",
            "]",
            "{",
            "}",
            "&a ",
            "*a",
            "<<: *a",
            "!!python/object/apply:os.system [ls]",
            "!!binary",
            "? ",
            "|",
            ">",
            "#",
            "'",
            '"',
            "\\",
            "%YAML 1.1\n",
            "---\n",
            "...\n",
            "\x00",
            "\ufeff",
            "\x85",
            "\u2028",
            "=",
            "time=",
            " ms",
            "icmp_seq=",
            "e999",
            "-",
            ".",
            "0",
            "9" * 25,
            "nan",
            "-1",
            "\xff",
        ]
    ),
)


@st.composite
def edits(draw: st.DrawFn, text: str) -> str:
    """``text`` after 0 to 6 edits: inserted, deleted, repeated or swapped pieces and lines."""
    for _ in range(draw(st.integers(0, 6))):
        n = len(text)
        i, j = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
        edit = draw(st.sampled_from(["insert", "delete", "repeat", "replace", "lines"]))
        if edit == "insert":
            text = text[:i] + draw(INTERESTING_TEXT) + text[i:]
        elif edit == "delete":
            text = text[:i] + text[j:]
        elif edit == "repeat":
            text = text[:j] + text[i:j] * draw(st.integers(2, 3)) + text[j:]
        elif edit == "replace":
            text = text[:i] + draw(INTERESTING_TEXT) + text[j:]
        else:
            lines = text.split("\n")
            k = draw(st.integers(0, len(lines) - 1))
            choice = draw(st.sampled_from(["drop", "double", "swap"]))
            if choice == "drop":
                del lines[k]
            elif choice == "double":
                lines.insert(k, lines[k])
            else:
                m = draw(st.integers(0, len(lines) - 1))
                lines[k], lines[m] = lines[m], lines[k]
            text = "\n".join(lines)
    return text


# ---------------------------------------------------------------------------------------------
# Tool logs: real shapes with drawn numbers


def numbers_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(0, 10**6).map(str),
        st.floats(0, 1e5).map(lambda x: f"{x:.3f}"),
        st.floats(0, 100).map(lambda x: f"{x:.2f}"),
        st.sampled_from(
            [
                "0",
                "0.000",
                "-1",
                "-0.5",
                "1e999",
                "nan",
                "inf",
                "1e-320",
                "99999999999999999999",
                "65535",
                "65536",
                "4294967296",
                ".",
                "1.2.3",
                "",
            ]
        ),
    )


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
SEEDS = {
    fmt: [path.read_text() for path in sorted(DATA.glob(f"{fmt}*"))]
    for fmt in ("ping", "netperf", "sockperf", "samples")
}


@st.composite
def renumbered(draw: st.DrawFn, fmt: str) -> str:
    """A real log of ``fmt`` (cut to 60 lines) with some of its numbers redrawn."""
    text = "\n".join(draw(st.sampled_from(SEEDS[fmt])).split("\n")[:60])
    spans = [m.span() for m in _NUMBER.finditer(text)]
    chosen = draw(st.lists(st.sampled_from(spans), unique=True, max_size=8)) if spans else []
    for start, end in sorted(chosen, reverse=True):
        text = text[:start] + draw(numbers_text()) + text[end:]
    return text


@st.composite
def ping_logs(draw: st.DrawFn) -> tuple[str, list[float]]:
    """An iputils or BSD ping log and the round trips it reports, first reply per probe."""
    bsd = draw(st.booleans())
    first = 0 if bsd else 1
    count = draw(st.integers(1, 40))
    start = draw(st.sampled_from([first, 65530]))
    times = draw(
        st.lists(st.floats(0, 5000).map(lambda x: round(x, 3)), min_size=count, max_size=count)
    )
    stamps = draw(st.booleans()) and not bsd
    lines = [
        "PING 10.0.0.2 (10.0.0.2): 56 data bytes"
        if bsd
        else "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data."
    ]
    for k, rtt in enumerate(times):
        seq = (start + k) % 65536
        prefix = f"[{1700000000 + k}.123456] " if stamps else ""
        lines.append(f"{prefix}64 bytes from 10.0.0.2: icmp_seq={seq} ttl=63 time={rtt} ms")
        if draw(st.integers(0, 9)) == 0:
            lines.append(lines[-1] + " (DUP!)")
    if draw(st.booleans()):
        received = "packets received" if bsd else "received"
        lines += [
            "",
            "--- 10.0.0.2 ping statistics ---",
            f"{count} packets transmitted, {count} {received}, 0% packet loss",
        ]
    return "\n".join(lines) + "\n", times


@st.composite
def logs(draw: st.DrawFn, fmt: str) -> str:
    if fmt == "ping" and draw(st.booleans()):
        return draw(ping_logs())[0]
    if fmt == "samples" and draw(st.booleans()):
        values = draw(st.lists(numbers_text(), min_size=1, max_size=30))
        return "\n".join(v + draw(st.sampled_from(["", "  # note", "\r"])) for v in values)
    return draw(renumbered(fmt))


# ---------------------------------------------------------------------------------------------
# The loader


@examples(ci=400)
@given(topologies(max_sites=4))
def test_every_valid_topology_loads(data):
    # Protection: the models accept everything FORMAT.md allows (no false refusals).
    loaded = parse_topology(dump(data), source=Path(SOURCE))
    assert [s.name for s in loaded.topology.sites] == [s["name"] for s in data["sites"]]


@examples(ci=600)
@given(st.data())
def test_mutated_topologies_give_a_result_or_one_located_line(draw):
    # Protection: loading._errors maps every pydantic error to a located AdvisorError.
    data = draw.draw(mutated(draw.draw(topologies())))
    loaded = outcome(lambda: parse_topology(dump(data), source=Path(SOURCE)), SOURCE)
    if loaded is not None:  # the evidence for inline measurements is computed too
        outcome(lambda: gather_links(loaded), SOURCE)


@examples(ci=600)
@given(st.data())
def test_edited_topology_text_gives_a_result_or_one_located_line(draw):
    # Protection: YAML syntax, scalar construction and limits errors are AdvisorErrors.
    text = draw.draw(edits(dump(draw.draw(topologies()))))
    outcome(lambda: parse_topology(text, source=Path(SOURCE)), SOURCE)


@examples(ci=200)
@given(JUNK)
def test_any_yaml_document_gives_a_result_or_one_located_line(value):
    outcome(lambda: parse_topology(dump(value), source=Path(SOURCE)), SOURCE)


# ---------------------------------------------------------------------------------------------
# The measurement parsers


@pytest.mark.parametrize("fmt", ["ping", "netperf", "sockperf", "samples"])
@examples(ci=250)
@given(st.data())
def test_every_parser_gives_a_sane_result_or_one_located_line(fmt, draw):
    # Protection: each parser validates what it reads (finite, >= 0, loss a fraction).
    text = draw.draw(edits(draw.draw(logs(fmt))))
    parsed = outcome(lambda: parse_measurement(text, fmt, source="m.txt"), "m.txt")
    if parsed is not None:
        check_parsed(usable(parsed))


@examples(ci=200)
@given(ping_logs(), st.booleans())
def test_ping_logs_read_back_their_round_trips(log, crlf):
    # Protection: a valid log (Windows line ends included) must WORK, not just not crash.
    text, times = log
    parsed = parse_measurement(text.replace("\n", "\r\n") if crlf else text, "ping")
    assert parsed.samples_ms is not None
    assert parsed.samples_ms.tolist() == pytest.approx(times, rel=1e-12, abs=1e-12)


@examples(ci=200)
@given(st.binary(max_size=300), st.sampled_from(sorted(FORMATS)))
def test_any_bytes_in_a_file_give_a_result_or_one_located_line(raw, fmt):
    # Protection: parse_file refuses binary, UTF-16 and non-UTF-8 with a clean line.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.txt"
        path.write_bytes(raw)
        parsed = outcome(lambda: parse_file(path, fmt), str(path))
    if parsed is not None:
        check_parsed(usable(parsed))


# ---------------------------------------------------------------------------------------------
# The engine and the CLI


@pytest.mark.slow
@examples(ci=200)
@given(topologies(max_sites=3))
def test_the_engine_gives_a_recommendation_or_one_located_line(data):
    # Protection: every engine step either copes with extreme values or raises AdvisorError.
    loaded = parse_topology(dump(data), source=Path(SOURCE))
    document = outcome(lambda: strict_json(to_json(recommend(loaded))), SOURCE)
    if document is not None:
        assert document["architecture"] in {
            "single_cluster",
            "per_site_clusters",
            "grouped_clusters",
        }


LOG_FILES = ("a.log", "b.log")


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "100", "NO_COLOR": "1"})


def check_cli(result: Any, *, lines: int | None) -> None:
    """Exit 0, or 2 with clean ``advisor: ...`` lines on stderr; never a traceback."""
    escaped = result.exception
    assert escaped is None or isinstance(escaped, SystemExit), (
        f"{type(escaped).__name__}: {escaped}"
    )
    assert result.exit_code in (0, 2), result.exit_code
    assert "Traceback" not in result.stdout + result.stderr
    if result.exit_code == 2:
        errors = result.stderr.splitlines()
        assert errors and all(line.strip() for line in errors)
        if lines is not None:
            assert len(errors) == lines, result.stderr


@pytest.mark.slow
@examples(ci=300)
@given(st.data())
def test_the_cli_exits_0_or_2_with_clean_lines(draw):
    # Protection: cli._user_errors, the one error boundary of every command.
    data = draw.draw(topologies(max_sites=3, files=LOG_FILES, wide=False))
    text = dump(data)
    if draw.draw(st.booleans()):
        text = draw.draw(edits(text))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "topology.yaml"
        path.write_text(text, encoding="utf-8")
        for name in LOG_FILES:
            fmt = draw.draw(st.sampled_from(sorted(FORMATS)))
            (Path(folder) / name).write_text(
                draw.draw(edits(draw.draw(logs(fmt)))), encoding="utf-8"
            )
        check_cli(run_cli("validate", str(path)), lines=None)
        recommended = run_cli("recommend", str(path), "--format", "json")
        check_cli(recommended, lines=1)
        if recommended.exit_code == 0:
            outcome(lambda: strict_json(recommended.stdout), None)

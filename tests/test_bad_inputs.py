"""The corpus of known-bad inputs: each gives exit 2 and exactly its expected line.

Every case ``tests/bad/<case>.expected`` holds the one line ``advisor recommend`` must print
on stderr, with ``{tmp}`` for the test's temporary folder. The input is either
``tests/bad/<case>.yaml`` (copied to ``{tmp}/topo/``, beside a copy of ``tests/bad/logs/``)
or built at test time by ``BUILDERS[case]`` (huge files, devices, FIFOs, links, binary).
Cases in ``ISOLATED`` run in a subprocess with a timeout, so a hang or a crash of the
interpreter fails the test instead of the test run. To regenerate the expected lines after
a deliberate change of wording: ``ADVISOR_REGEN_BAD=1 pytest tests/test_bad_inputs.py``
(known gaps keep their hand-written lines), then review ``git diff tests/bad``.

Each case guards the protection its name says; the comments of ``BUILDERS`` and
``KNOWN_GAPS`` name the ones that are not obvious.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor.cli import app
from advisor.errors import AdvisorError
from advisor.measurements import parse_file

BAD = Path(__file__).parent / "bad"
REPO = Path(__file__).resolve().parent.parent
CANARY = "SECRET-CANARY-7f3a"  # content of a file outside the topology's folder
HANG_TIMEOUT_S = 60  # a subprocess case that runs longer has hung (the real ones take ~1 s)


class Crash(AssertionError):
    """The CLI raised something other than a clean exit: a traceback reached the user."""


class Leak(AssertionError):
    """The error message showed the content of a file outside the topology's folder."""


class NotRefused(AssertionError):
    """A bad input was accepted (exit 0)."""


class MultiLine(AssertionError):
    """The error took more than one line."""


class TooLong(AssertionError):
    """The error line echoed a huge piece of the input (a terminal full of one line)."""


MAX_ERROR_CHARS = 1000  # paths included; echoed input should be cut to a few dozen characters


# Gaps found here that wait for a fix in a module this test does not own. Each is a strict
# xfail that fails only in the expected way (``raises``): once fixed, the case passes, the
# strict xfail reports XPASS, and the entry goes (adjust the .expected line if the fix chose
# other words). Owners and suggested fixes are in the issue-7 report.
KNOWN_GAPS: dict[str, tuple[type[BaseException], str]] = {}

# Run in a subprocess with a timeout: an open() on a FIFO or a device must not block, and a
# crash of the interpreter (segfault) must fail one test, not the run.
ISOLATED = {
    "topology-fifo",
    "topology-dev-zero",
    "topology-dev-null",
    "topology-link-to-dev-zero",
    "measurement-fifo",
    "deep-nesting-100k",
}


# ---------------------------------------------------------------------------------------------
# Inputs built at test time: each returns the topology path to run on


def _topology(tmp: Path, body: str, name: str = "topology.yaml") -> Path:
    path = tmp / "topo" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "name: t\nsites:\n  - name: a\n    location: {lat: 48.85, lon: 2.35}\n"
        "  - name: b\n    location: {lat: 50.11, lon: 8.68}\n" + body,
        encoding="utf-8",
    )
    return path


def _measured(tmp: Path, reference: str, fmt: str = "samples") -> Path:
    return _topology(
        tmp,
        f"links:\n  - sites: [a, b]\n    measurements:\n      - method: icmp\n"
        f"        file: '{reference}'\n        format: {fmt}\n",
    )


def _raw(tmp: Path, data: bytes) -> Path:
    path = tmp / "topo" / "topology.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _sparse(path: Path, size_bytes: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as stream:
        stream.truncate(size_bytes)
    return path


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _log(tmp: Path, name: str, data: bytes | None = None) -> Path:
    path = tmp / "topo" / "logs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is not None:
        path.write_bytes(data)
    return path


def _secret(tmp: Path) -> Path:
    secret = tmp / "secret.txt"
    secret.write_text(f"{CANARY}\n")
    return secret


def _linked(tmp: Path, target: Path) -> Path:
    link = _log(tmp, "link.txt")
    link.symlink_to(target)
    return _measured(tmp, "logs/link.txt")


def _deep(tmp: Path, levels: int) -> Path:
    return _raw(
        tmp, b"name: t\nsites: [{name: a}]\ndescription: " + b"[" * levels + b"]" * levels + b"\n"
    )


BUILDERS: dict[str, Callable[[Path], Path]] = {
    # loading.read_text_file: what is not a small regular UTF-8 file
    "topology-missing": lambda tmp: tmp / "topo" / "topology.yaml",
    "topology-directory": lambda tmp: _mkdir(tmp / "topo" / "topology.yaml"),
    "topology-dev-null": lambda tmp: Path("/dev/null"),
    "topology-dev-zero": lambda tmp: Path("/dev/zero"),
    "topology-fifo": lambda tmp: _fifo(tmp / "topo" / "topology.yaml"),
    "topology-link-to-dev-zero": lambda tmp: _symlink(
        tmp / "topo" / "topology.yaml", Path("/dev/zero")
    ),
    "topology-11mb-sparse": lambda tmp: _sparse(tmp / "topo" / "topology.yaml", 11 * 2**20),
    "topology-100mb": lambda tmp: _raw(tmp, b"# padding line of a huge topology\n" * 3084000),
    "topology-binary": lambda tmp: _raw(tmp, bytes(range(256)) * 4),
    "topology-latin1": lambda tmp: _raw(tmp, "name: café\nsites: [{name: a}]\n".encode("latin-1")),
    "topology-utf16": lambda tmp: _raw(tmp, "name: t\nsites: [{name: a}]\n".encode("utf-16")),
    "topology-name-newline": lambda tmp: _raw(tmp, b"name: [\n").rename(
        tmp / "topo" / "bad\nname.yaml"
    ),
    # the libyaml composer recurses: a 200 KB file must not take the interpreter down
    "deep-nesting-100k": lambda tmp: _deep(tmp, 100_000),
    # measurements.reading.parse_file: devices, FIFOs, folders, size, encoding
    "measurement-directory": lambda tmp: (
        _mkdir(_log(tmp, "dir.txt")),
        _measured(tmp, "logs/dir.txt"),
    )[1],
    "measurement-fifo": lambda tmp: (_fifo(_log(tmp, "fifo.txt")), _measured(tmp, "logs/fifo.txt"))[
        1
    ],
    "measurement-250mb-sparse": lambda tmp: (
        _sparse(_log(tmp, "big.txt"), 250 * 2**20),
        _measured(tmp, "logs/big.txt"),
    )[1],
    "measurement-100mb-garbage": lambda tmp: (
        _log(
            tmp, "big.txt", b"64 bytes from 10.0.0.2: icmp_seq=1 ttl=63 no time here\n" * 1_906_501
        ),
        _measured(tmp, "logs/big.txt", "ping"),
    )[1],
    "measurement-binary": lambda tmp: (
        _log(tmp, "bin.txt", b"1.5\n\x00\x01\x02garbage"),
        _measured(tmp, "logs/bin.txt"),
    )[1],
    "measurement-utf16": lambda tmp: (
        _log(tmp, "u16.txt", "1.5\n2.5\n".encode("utf-16")),
        _measured(tmp, "logs/u16.txt"),
    )[1],
    "measurement-latin1": lambda tmp: (
        _log(tmp, "l1.txt", "1.5 # café\n".encode("latin-1")),
        _measured(tmp, "logs/l1.txt"),
    )[1],
    # an error quotes the bad line, but not a megabyte of it
    "measurement-long-line": lambda tmp: (
        _log(tmp, "long.txt", b"1.5\n" + b"x" * 2**20),
        _measured(tmp, "logs/long.txt"),
    )[1],
    # the policy of SECURITY.md: a topology reads files inside its own folder only
    "measurement-dotdot-canary": lambda tmp: (_secret(tmp), _measured(tmp, "../secret.txt"))[1],
    "measurement-symlink-canary": lambda tmp: _linked(tmp, _secret(tmp)),
    "measurement-absolute-etc-passwd": lambda tmp: _measured(tmp, "/etc/passwd"),
    "measurement-absolute-dev-zero": lambda tmp: _measured(tmp, "/dev/zero"),
    "measurement-link-to-dev-zero": lambda tmp: _linked(tmp, Path("/dev/zero")),
}


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def _symlink(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


# ---------------------------------------------------------------------------------------------
# Running a case


def prepare(case: str, tmp: Path) -> Path:
    if case in BUILDERS:
        return BUILDERS[case](tmp)
    (tmp / "topo").mkdir()
    shutil.copytree(BAD / "logs", tmp / "topo" / "logs")
    target = tmp / "topo" / f"{case}.yaml"
    shutil.copyfile(BAD / f"{case}.yaml", target)
    return target


def run_recommend(path: Path, isolated: bool) -> tuple[int, str, BaseException | None]:
    """Exit code, stderr and any exception that escaped the CLI's error boundary."""
    args = ["recommend", "--format", "json", str(path)]
    if isolated:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "advisor", *args],
                capture_output=True,
                text=True,
                timeout=HANG_TIMEOUT_S,
                cwd=REPO,
                env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
            )
        except subprocess.TimeoutExpired:
            raise Crash(f"still running after {HANG_TIMEOUT_S} s: it hangs") from None
        if done.returncode < 0 or "Traceback" in done.stderr:
            raise Crash(f"exit {done.returncode}: {done.stderr[-500:]}")
        return done.returncode, done.stderr, None
    result = CliRunner().invoke(app, args, env={"COLUMNS": "100", "NO_COLOR": "1"})
    escaped = result.exception if not isinstance(result.exception, SystemExit) else None
    return result.exit_code, result.stderr, escaped


def check_case(case: str, tmp: Path) -> None:
    path = prepare(case, tmp)
    code, stderr, escaped = run_recommend(path, case in ISOLATED)
    if escaped is not None:
        raise Crash(f"{type(escaped).__name__}: {escaped}")
    if CANARY in stderr or "root:x:0:0" in stderr:
        raise Leak(stderr)
    if code == 0:
        raise NotRefused("exit 0")
    if len(stderr.splitlines()) != 1:
        raise MultiLine(stderr)
    if len(stderr) > MAX_ERROR_CHARS:
        raise TooLong(f"{len(stderr)} characters: {stderr[:200]}...")
    found = stderr.rstrip("\n").replace(str(tmp), "{tmp}")
    expected_file = BAD / f"{case}.expected"
    if os.environ.get("ADVISOR_REGEN_BAD") and case not in KNOWN_GAPS:
        expected_file.write_text(found + "\n", encoding="utf-8")
    assert code == 2
    assert found == expected_file.read_text(encoding="utf-8").rstrip("\n")


CASES = sorted(p.stem for p in BAD.glob("*.expected"))


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            case,
            marks=pytest.mark.xfail(
                strict=True, raises=KNOWN_GAPS[case][0], reason=KNOWN_GAPS[case][1]
            ),
        )
        if case in KNOWN_GAPS
        else case
        for case in CASES
    ],
)
def test_bad_input_gives_exit_2_and_its_one_line(case, tmp_path):
    check_case(case, tmp_path)


def test_every_case_has_an_input_and_an_expected_line():
    static = {p.stem for p in BAD.glob("*.yaml")}
    assert not static & set(BUILDERS), "a case is both a file and a builder"
    assert set(CASES) == static | set(BUILDERS)
    assert set(KNOWN_GAPS) <= set(CASES)
    assert set(CASES) >= ISOLATED


# ---------------------------------------------------------------------------------------------
# Odd but valid input must WORK


def recommend_ok(path: Path) -> None:
    result = CliRunner().invoke(app, ["recommend", "--format", "json", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 0, result.stderr


def test_windows_line_endings_and_a_bom_work(tmp_path):
    # Protection: CRLF and a UTF-8 BOM are read as text, in the topology and in every log.
    (tmp_path / "logs").mkdir()
    for name in ("ping_iputils.txt", "samples.txt", "netperf_k.txt", "sockperf_default.txt"):
        text = (Path(__file__).parent / "data" / "measurements" / name).read_text()
        (tmp_path / "logs" / name).write_bytes(
            b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
        )
    body = (
        "name: crlf\r\nsites:\r\n  - name: a\r\n    location: {lat: 48.85, lon: 2.35}\r\n"
        "  - name: b\r\n    location: {lat: 50.11, lon: 8.68}\r\nlinks:\r\n"
        "  - sites: [a, b]\r\n    measurements:\r\n"
        "      - {method: icmp, file: logs/ping_iputils.txt, format: ping}\r\n"
        "      - {method: icmp, file: logs/samples.txt, format: samples}\r\n"
        "      - {method: tcp_rr, file: logs/netperf_k.txt, format: netperf}\r\n"
        "      - {method: tcp_rr, file: logs/sockperf_default.txt, format: sockperf}\r\n"
    )
    path = tmp_path / "topology.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    recommend_ok(path)


def test_zero_rtt_samples_work(tmp_path):
    # A loopback-like 0.000 ms is below the physical floor: a warning, not a crash.
    path = _topology(
        tmp_path,
        "links:\n  - sites: [a, b]\n    measurements:\n"
        "      - {method: icmp, samples_ms: [0.0, 0.0, 0.0]}\n",
    )
    result = CliRunner().invoke(app, ["recommend", "--format", "json", str(path)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.stderr


class NonFiniteJson(ValueError):
    """NaN or Infinity in the JSON output: JSON.parse and most strict parsers refuse it."""


def _refuse_constant(constant: str) -> None:
    raise NonFiniteJson(f"{constant} in the JSON output")


def test_a_lan_slower_than_the_wan_gives_strict_json(tmp_path):
    path = tmp_path / "topology.yaml"
    path.write_text(
        "name: t\nsites:\n"
        "  - {name: a, location: {lat: 0, lon: 0}, nodes: 3, lan_rtt_ms: {min: 2.0}}\n"
        "  - {name: b, location: {lat: 0, lon: 0}, nodes: 1, writes: false}\n"
        "links:\n  - sites: [a, b]\n    measurements: [{method: icmp, samples_ms: [1.0]}]\n"
        "requirements: {commit_latency_ms: {p50: 1.0}}\n"
    )
    result = CliRunner().invoke(app, ["recommend", "--format", "json", str(path)])
    assert result.exit_code == 0, result.stderr
    json.loads(result.stdout, parse_constant=_refuse_constant)


@pytest.mark.parametrize(
    ("log", "fmt", "method"),
    [
        ("netperf-huge-burst.txt", "netperf", "tcp_rr"),  # first burst <5000 digits>
        ("sockperf-huge-count.txt", "sockperf", "tcp_rr"),  # SentMessages=<5000 digits>
    ],
)
def test_a_count_too_long_to_be_a_number_is_ignored_not_a_crash(tmp_path, log, fmt, method):
    # Protection: bounded digit runs in the parsers' regexes (int() of 5000 digits raised).
    shutil.copytree(BAD / "logs", tmp_path / "topo" / "logs")
    path = _topology(
        tmp_path,
        f"links:\n  - sites: [a, b]\n    measurements:\n"
        f"      - {{method: {method}, request_bytes: 64, "
        f"file: logs/{log}, format: {fmt}}}\n",
    )
    recommend_ok(path)


def test_a_zero_local_commit_is_refused(tmp_path):
    # A commit cannot take 0 ms: Callaghan's bound would divide by it (Infinity in the JSON).
    path = tmp_path / "topology.yaml"
    path.write_text(
        "name: t\nsites:\n  - {name: a, nodes: 1}\nworkload:\n"
        "  local_commit_ms: 0\n  hot_rows: [{name: r, updates_per_s: 1}]\n"
    )
    result = CliRunner().invoke(app, ["recommend", "--format", "json", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"advisor: {path}:5:20: workload.local_commit_ms: must be >= 0.001, got 0\n"
    )


def recommend_strict(path: Path) -> None:
    """exit 0 with strict JSON; an exception that escaped the CLI is re-raised as it is."""
    result = CliRunner().invoke(app, ["recommend", "--format", "json", str(path)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.stderr
    json.loads(result.stdout, parse_constant=_refuse_constant)


def test_a_plan_where_no_site_writes_works(tmp_path):
    path = tmp_path / "topology.yaml"
    path.write_text(
        "name: t\nsites:\n"
        "  - {name: a, location: {lat: 48.85, lon: 2.35}, writes: false}\n"
        "  - {name: b, location: {lat: 50.11, lon: 8.68}, writes: false, arbitrator: true}\n"
        "  - {name: c, location: {lat: 52.52, lon: 13.40}, writes: false}\n"
    )
    recommend_strict(path)


def test_a_vanishing_round_trip_is_refused(tmp_path):
    # Issue 14: below 1 ns a round trip is no measurement (it made the sweep print Infinity).
    path = _topology(
        tmp_path,
        "links:\n  - sites: [a, b]\n    measurements:\n"
        "      - {method: icmp, samples_ms: [2.0e-308]}\n",
    )
    result = CliRunner().invoke(app, ["recommend", "--format", "json", str(path)])
    assert result.exit_code == 2
    assert "samples_ms[0]: must be 0 or at least 1e-06 ms (1 ns), got 2e-308" in result.stderr


def test_a_symlink_inside_the_folder_is_followed(tmp_path):
    real = _log(tmp_path, "real.txt", b"8.1\n8.3\n9.9\n")
    _log(tmp_path, "link.txt").symlink_to(real)
    recommend_ok(_measured(tmp_path, "logs/link.txt"))


# ---------------------------------------------------------------------------------------------
# Parsers on pathological text: linear time, no hang (subprocesses, all started at once)

HANG_CASES = {
    # '^\s*' spanned blank lines: 40 KB of newlines took 12 s (fixed in fa5e779)
    "netperf-blank-lines": ("netperf", "'\\n' * 2_000_000"),
    "netperf-spaces-and-newlines": ("netperf", "' \\n' * 1_000_000"),
    "ping-many-equals": ("ping", "'icmp_seq=' * 200_000"),
    "samples-long-comment": ("samples", "'#' * 2_000_000"),
    "sockperf-repeated-marker": ("sockperf", "'---> percentile ' * 100_000"),
    # one way to match each run of digits or blanks (these took seconds to hours)
    "samples-digits-then-letter": ("samples", "'1' * 1_000_000 + 'x'"),
    "samples-blanks-then-letter": ("samples", "' ' * 1_000_000 + 'x'"),
    "netperf-selector-digits": ("netperf", "'RT_LATENCY=' + '1' * 1_000_000 + 'x'"),
    "sockperf-many-summaries": ("sockperf", "'Summary: Latency ' * 100_000"),
    # bounded digit runs in ping's banner and summary regexes (were quadratic: minutes)
    "ping-banner-digits": ("ping", "'PING ' + '1' * 300_000"),
    "ping-summary-digits": ("ping", "'1 packets transmitted, ' + '1' * 300_000"),
    # a pasted command line with 300,000 ' -- ' (was quadratic: hours)
    "netperf-command-dashes": ("netperf", "'netperf ' + '-- ' * 300_000"),
}
KNOWN_HANGS: set[str] = set()
# Linear parsing of these 2 MB takes well under a second; a quadratic regex, minutes.
PARSE_TIMEOUT_S = 10
_started: dict[str, subprocess.Popen[str]] = {}
_deadline: list[float] = []


def _start_all() -> None:
    if _started:
        return
    _deadline.append(time.monotonic() + PARSE_TIMEOUT_S)
    for name, (fmt, expression) in HANG_CASES.items():
        code = (
            "from advisor.errors import AdvisorError\n"
            "from advisor.measurements import parse_measurement\n"
            f"try:\n    parse_measurement({expression}, {fmt!r})\n"
            "except AdvisorError:\n    pass\n"
        )
        _started[name] = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n,
            marks=pytest.mark.xfail(
                strict=True, raises=Crash, reason="quadratic regex (see the issue-7 report)"
            ),
        )
        if n in KNOWN_HANGS
        else n
        for n in HANG_CASES
    ],
)
def test_parsers_do_not_hang_on_pathological_text(name):
    _start_all()  # every case runs at once, against one deadline: one timeout at most
    process = _started[name]
    try:
        _, stderr = process.communicate(timeout=max(_deadline[0] - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise Crash(
            f"{name}: still parsing after {PARSE_TIMEOUT_S} s (a quadratic regex?)"
        ) from None
    if process.returncode != 0:
        raise Crash(stderr[-500:])


# ---------------------------------------------------------------------------------------------
# Sample counts: a limit per measurement (memory: ~70 bytes per sample while parsing)


def test_a_measurement_with_too_many_samples_is_refused(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("1.0\n" * 101)
    with pytest.raises(AdvisorError) as caught:
        parse_file(path, "samples", max_samples=100)
    assert str(caught.value) == (
        f"{path}: holds at least 101 samples, more than the limit of 100 per measurement"
    )

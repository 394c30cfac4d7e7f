"""Speed: each figure measured side by side in one run, several runs, median reported.

- ``advisor recommend`` as a process against a bare ``python -c "import numpy, pydantic,
  yaml"`` (the floor any Python tool with these dependencies pays), run alternately;
- the library's ``recommend()`` on 30 real data-centre cities, every pair measured with
  20,000 samples written to sample files, in a fresh subprocess per run so that its peak
  resident memory (``ru_maxrss``: the whole process, interpreter and numpy included) is its own;
- ``parse_file`` on a million-line ping log against the ``pingparsing`` package on the same
  file and ``numpy.loadtxt`` on a file of just the RTTs;
- ``sweep`` over a million RTT values: scenarios judged per second.

When a target is missed, :func:`where_time_goes` says where: import cost per package
(``python -X importtime``) and the functions with the most own time (cProfile).
"""

from __future__ import annotations

__all__ = [
    "CITIES",
    "FULL",
    "SMOKE",
    "Figure",
    "Sizes",
    "cli_vs_bare",
    "format_target",
    "format_value",
    "many_sites",
    "markdown",
    "parsing",
    "run",
    "sweep_rate",
    "where_time_goes",
    "write_many_sites",
]

import cProfile
import importlib
import importlib.util
import json
import math
import os
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from advisor.analysis import analyse
from advisor.measurements import parse_file
from advisor.model import physics
from advisor.recommendation import recommend
from advisor.sweep.grid import sweep
from benchmarks.parse_ping import write_log

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "paris-frankfurt" / "topology.yaml"
SEED = 20_240_601
BARE = "import numpy, pydantic, yaml"

# Targets of issue 6.
CLI_RATIO_MAX = 1.5
MANY_SITES_S_MAX = 5.0
MANY_SITES_RSS_MB_MAX = 1024.0
PINGPARSING_RATIO_MIN = 10.0
SWEEP_PER_S_MIN = 1e6

# Thirty cities with large data-centre markets (degrees, city centres).
CITIES: dict[str, tuple[float, float]] = {
    "paris": (48.8566, 2.3522),
    "frankfurt": (50.1109, 8.6821),
    "london": (51.5074, -0.1278),
    "amsterdam": (52.3676, 4.9041),
    "dublin": (53.3498, -6.2603),
    "madrid": (40.4168, -3.7038),
    "milan": (45.4642, 9.19),
    "stockholm": (59.3293, 18.0686),
    "warsaw": (52.2297, 21.0122),
    "zurich": (47.3769, 8.5417),
    "ashburn": (39.0438, -77.4874),
    "new-york": (40.7128, -74.006),
    "chicago": (41.8781, -87.6298),
    "dallas": (32.7767, -96.797),
    "atlanta": (33.749, -84.388),
    "toronto": (43.6532, -79.3832),
    "montreal": (45.5017, -73.5673),
    "san-jose": (37.3382, -121.8863),
    "los-angeles": (34.0522, -118.2437),
    "seattle": (47.6062, -122.3321),
    "tokyo": (35.6762, 139.6503),
    "osaka": (34.6937, 135.5023),
    "seoul": (37.5665, 126.978),
    "singapore": (1.3521, 103.8198),
    "hong-kong": (22.3193, 114.1694),
    "mumbai": (19.076, 72.8777),
    "sydney": (-33.8688, 151.2093),
    "sao-paulo": (-23.5505, -46.6333),
    "johannesburg": (-26.2041, 28.0473),
    "dubai": (25.2048, 55.2708),
}


@dataclass(frozen=True)
class Sizes:
    """How big and how often: the full benchmark or the CI smoke run."""

    runs: int  # alternating runs of the process and parse figures
    sites: int
    samples: int  # per link
    site_runs: int  # fresh subprocesses for the many-site figure
    site_timeout_s: float
    ping_lines: int
    pingparsing_runs: int  # pingparsing is slow: fewer runs, interleaved with the first ones
    sweep_points: int


FULL = Sizes(
    runs=7,
    sites=30,
    samples=20_000,
    site_runs=3,
    site_timeout_s=1800.0,
    ping_lines=1_000_000,
    pingparsing_runs=3,
    sweep_points=1_000_000,
)
SMOKE = Sizes(
    runs=1,
    sites=4,
    samples=500,
    site_runs=1,
    site_timeout_s=120.0,
    ping_lines=2_000,
    pingparsing_runs=1,
    sweep_points=1_000,
)


@dataclass(frozen=True)
class Figure:
    """One line of the speed table."""

    key: str  # stable name: cli, many_sites_time, many_sites_rss, pingparsing, loadtxt, sweep
    benchmark: str
    measure: str
    value: float
    unit: str
    target: float | None = None
    at_most: bool = True  # the target is an upper bound; False: a lower bound
    detail: str = ""
    hotspots: tuple[str, ...] = ()  # where the time goes, when the target is missed

    @property
    def met(self) -> bool | None:
        if self.target is None or not math.isfinite(self.value):
            return None
        return self.value <= self.target if self.at_most else self.value >= self.target


# -- advisor recommend as a process ---------------------------------------------------


def _wall_s(command: Sequence[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


def cli_vs_bare(example: Path = EXAMPLE, runs: int = 7, *, profile: bool = True) -> Figure:
    """Median of ``runs`` ratios (advisor recommend / bare imports), each pair run back to back."""
    bare = [sys.executable, "-c", BARE]
    cli = [sys.executable, "-m", "advisor", "recommend", str(example), "--format", "json"]
    _wall_s(bare), _wall_s(cli)  # warm the file cache
    pairs = [(_wall_s(bare), _wall_s(cli)) for _ in range(runs)]
    figure = Figure(
        "cli",
        '`advisor recommend` (process) vs bare `python -c "' + BARE + '"`',
        "time ratio",
        statistics.median(c / b for b, c in pairs),
        "x",
        CLI_RATIO_MAX,
        detail=f"{statistics.median(c for _, c in pairs):.3f} s vs "
        f"{statistics.median(b for b, _ in pairs):.3f} s on {example.parent.name}, "
        f"{runs} runs",
    )
    if profile and figure.met is False:
        return _with(figure, where_time_goes(cli, lambda: recommend(example)))
    return figure


def _with(figure: Figure, hotspots: tuple[str, ...]) -> Figure:
    return replace(figure, hotspots=hotspots)


# -- where the time goes --------------------------------------------------------------

_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def import_ms_by_package(command: Sequence[str]) -> dict[str, float]:
    """Own import time [ms] summed per top-level package, from ``python -X importtime``."""
    done = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    total: dict[str, float] = defaultdict(float)
    for match in _IMPORT_LINE.finditer(done.stderr):
        total[match.group(4).split(".")[0]] += int(match.group(1)) / 1000.0
    return dict(sorted(total.items(), key=lambda item: -item[1]))


def top_functions(call: Callable[[], object], count: int = 8) -> list[tuple[str, float, float]]:
    """The ``count`` functions with the most own time in ``call()``: (name, own s, cumulative s).

    The first entry is ``("total", s, s)``: the whole call under the profiler.
    """
    profiler = cProfile.Profile()
    profiler.runcall(call)
    stats: dict[Any, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total_s = sum(entry[2] for entry in stats.values())
    ranked = sorted(stats.items(), key=lambda item: -item[1][2])[:count]
    return [
        ("total", total_s, total_s),
        *((_function_name(key), entry[2], entry[3]) for key, entry in ranked),
    ]


def _function_name(key: tuple[str, int, str]) -> str:
    path, line, name = key
    if path == "~":
        return name.strip("<>")
    parts = Path(path).parts
    anchor = next(
        (i for i, p in enumerate(parts) if p in {"advisor", "numpy", "site-packages"}),
        len(parts) - 1,
    )
    short = "/".join(parts[anchor + (parts[anchor] == "site-packages") :])
    return f"{short}:{line} {name}"


def where_time_goes(command: Sequence[str] | None, call: Callable[[], object]) -> tuple[str, ...]:
    """Import cost per package of ``command`` (if given) and the top functions of ``call``."""
    lines = []
    if command is not None:
        imports = import_ms_by_package(command)
        shown = ", ".join(f"{name} {ms:.0f} ms" for name, ms in list(imports.items())[:8])
        lines.append(f"imports {sum(imports.values()):.0f} ms: {shown}")
    (_, total_s, _), *ranked = top_functions(call)
    lines.append(f"the library call: {total_s:.3f} s under cProfile")
    lines += [
        f"{name}: own {own:.3f} s, cumulative {cumulative:.3f} s"
        for name, own, cumulative in ranked
    ]
    return tuple(lines)


# -- recommend() on many sites --------------------------------------------------------


def write_many_sites(
    folder: Path, sites: int = 30, samples: int = 20_000, seed: int = SEED
) -> Path:
    """A topology of ``sites`` cities, every pair measured with ``samples`` RTTs in a file.

    RTTs are realistic for fibre: the physical floor over the great circle times a route
    factor of 1.25 to 1.6 plus 0.2 to 1 ms of equipment, then gamma jitter (1 % of the base)
    and 0.2 % spikes of about 20 ms. Returns the path of ``topology.yaml``.
    """
    if not 2 <= sites <= len(CITIES):
        raise ValueError(f"sites must be 2 to {len(CITIES)}, got {sites}")
    rng = np.random.default_rng(seed)
    names = list(CITIES)[:sites]
    pairs = list(combinations(names, 2))
    lat_a, lon_a = np.array([CITIES[a] for a, _ in pairs]).T
    lat_b, lon_b = np.array([CITIES[b] for _, b in pairs]).T
    floor_ms = physics.floor_rtt_ms(physics.great_circle_km(lat_a, lon_a, lat_b, lon_b))
    base_ms = floor_ms * rng.uniform(1.25, 1.6, len(pairs)) + rng.uniform(0.2, 1.0, len(pairs))
    rtt_ms = base_ms[:, None] + rng.gamma(
        2.0, 0.005 * base_ms[:, None] + 0.02, (len(pairs), samples)
    )
    spikes = rng.random(rtt_ms.shape) < 0.002
    rtt_ms[spikes] += rng.exponential(20.0, int(spikes.sum()))
    (folder / "measurements").mkdir(parents=True, exist_ok=True)
    links = []
    for (a, b), row in zip(pairs, rtt_ms, strict=True):
        name = f"measurements/{a}_{b}.samples.txt"
        (folder / name).write_text("\n".join(np.char.mod("%.3f", row)) + "\n", encoding="ascii")
        links.append(
            {
                "sites": [a, b],
                "measurements": [{"method": "icmp", "file": name, "format": "samples"}],
            }
        )
    topology = {
        "version": 1,
        "name": f"{sites}-cities",
        "requirements": {"commit_latency_ms": {"p99": 50}, "survive": "site", "max_data_loss_s": 1},
        "sites": [
            {"name": n, "location": {"lat": CITIES[n][0], "lon": CITIES[n][1]}, "nodes": 3}
            for n in names
        ],
        "links": links,
        "workload": {
            "commits_per_s": {"avg": 400, "peak": 1500},
            "writeset_bytes": {"p50": 1800, "p99": 48000},
            "hot_rows": [
                {"name": "inventory sku=1001", "updates_per_s": 20, "writer_sites": [names[0]]}
            ],
        },
    }
    path = folder / "topology.yaml"
    path.write_text(yaml.safe_dump(topology, sort_keys=False), encoding="utf-8")
    return path


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes on macOS, KiB else


def child_many_sites(path: str) -> None:
    """In a fresh process: load and recommend ``path``, print timings and peak RSS as JSON."""
    from advisor.inputs.loading import load_topology
    from advisor.recommendation import recommend

    before_mb = _peak_rss_mb()
    start = time.perf_counter()
    loaded = load_topology(path)
    loaded_s = time.perf_counter() - start
    result = recommend(loaded)
    total_s = time.perf_counter() - start
    print(
        json.dumps(
            {
                "load_s": loaded_s,
                "total_s": total_s,
                "rss_before_mb": before_mb,
                "peak_rss_mb": _peak_rss_mb(),
                "architecture": result.architecture,
                "groups": len(result.groups),
            }
        )
    )


def _child(path: Path, timeout_s: float) -> dict[str, Any] | None:
    code = f"from benchmarks.speed import child_many_sites; child_many_sites({str(path)!r})"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise RuntimeError(f"recommend() on {path} failed: {done.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def many_sites(sizes: Sizes = FULL, *, profile: bool = True) -> list[Figure]:
    """Wall time and peak RSS of load + ``recommend()`` on ``sizes.sites`` measured cities."""
    links = sizes.sites * (sizes.sites - 1) // 2
    name = f"`recommend()`, {sizes.sites} sites, {links} links x {sizes.samples:,} samples"
    with tempfile.TemporaryDirectory() as folder:
        path = write_many_sites(Path(folder), sizes.sites, sizes.samples)
        runs = []
        for _ in range(sizes.site_runs):
            run = _child(path, sizes.site_timeout_s)
            if run is None:
                break
            runs.append(run)
            if run["total_s"] > 10 * MANY_SITES_S_MAX:  # the verdict is clear; spare the time
                break
        if not runs:
            figure = Figure(
                "many_sites_time",
                name,
                "time (load + recommend)",
                math.inf,
                "s",
                MANY_SITES_S_MAX,
                detail=f"did not finish within {sizes.site_timeout_s:.0f} s",
            )
            unknown = Figure(
                "many_sites_rss", name, "peak RSS", math.nan, "MB", MANY_SITES_RSS_MB_MAX
            )
            return [_profiled(figure, path, profile), unknown]
        total_s = statistics.median(r["total_s"] for r in runs)
        detail = (
            f"`load_topology` {statistics.median(r['load_s'] for r in runs):.2f} s (the "
            "sample files are read inside `recommend()`); "
            f"verdict {runs[0]['architecture']} with {runs[0]['groups']} group(s); "
            f"{len(runs)} run(s)"
            + (
                "; no more: the first took over 10 times the target"
                if len(runs) < sizes.site_runs
                else ""
            )
        )
        time_figure = Figure(
            "many_sites_time",
            name,
            "time (load + recommend)",
            total_s,
            "s",
            MANY_SITES_S_MAX,
            detail=detail,
        )
        rss = Figure(
            "many_sites_rss",
            name,
            "peak RSS",
            max(r["peak_rss_mb"] for r in runs),
            "MB",
            MANY_SITES_RSS_MB_MAX,
            detail=f"ru_maxrss of the whole process; "
            f"{runs[0]['rss_before_mb']:.0f} MB after imports",
        )
        return [_profiled(time_figure, path, profile), rss]


def _profiled(figure: Figure, path: Path, profile: bool) -> Figure:
    if not profile or figure.met is not False:
        return figure
    from advisor.inputs.loading import load_topology
    from advisor.recommendation import recommend

    return _with(figure, where_time_goes(None, lambda: recommend(load_topology(path))))


# -- parsing a ping log ---------------------------------------------------------------


def parsing(lines: int = 1_000_000, runs: int = 7, pingparsing_runs: int = 3) -> list[Figure]:
    """``parse_file`` against pingparsing and numpy.loadtxt on the same log, run alternately."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "ping.txt"
        write_log(log, lines)
        numbers = Path(folder) / "rtt.txt"
        expected_ms = parse_file(log, "ping").samples_ms
        if expected_ms is None:
            raise RuntimeError("parse_file read no RTT samples from the generated ping log")
        np.savetxt(numbers, expected_ms, fmt="%g")
        ours_s, loadtxt_s, theirs_s = [], [], []
        for index in range(runs):
            ours_s.append(_timed(lambda: parse_file(log, "ping")))
            loadtxt_s.append(_timed(lambda: np.loadtxt(numbers)))
            if index < pingparsing_runs:
                theirs_s.append(_timed(lambda: _pingparsing(log, expected_ms)))
        size = f"{lines:,} lines, {log.stat().st_size / 2**20:.0f} MiB"
    ours = statistics.median(ours_s)
    figures = []
    if theirs_s:
        figures.append(
            Figure(
                "pingparsing",
                f"`parse_file` on a ping log ({size}) vs `pingparsing`",
                "speed-up",
                statistics.median(t / o for t, o in zip(theirs_s, ours_s, strict=False)),
                "x",
                PINGPARSING_RATIO_MIN,
                at_most=False,
                detail=f"{ours:.3f} s vs {statistics.median(theirs_s):.2f} s, {len(theirs_s)} runs",
            )
        )
    else:
        figures.append(
            Figure(
                "pingparsing",
                f"`parse_file` on a ping log ({size}) vs `pingparsing`",
                "speed-up",
                math.nan,
                "x",
                PINGPARSING_RATIO_MIN,
                at_most=False,
                detail="pingparsing is not installed (pip install pingparsing)",
            )
        )
    figures.append(
        Figure(
            "loadtxt",
            f"`parse_file` on a ping log ({size}) vs `numpy.loadtxt` of just the RTTs",
            "time ratio",
            statistics.median(o / n for o, n in zip(ours_s, loadtxt_s, strict=True)),
            "x",
            detail=f"{ours:.3f} s vs {statistics.median(loadtxt_s):.3f} s, {runs} runs",
        )
    )
    return figures


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _pingparsing(log: Path, expected_ms: npt.NDArray[np.float64]) -> None:
    """pingparsing from the file, as parse_file does; check it read the same replies."""
    pingparsing = importlib.import_module("pingparsing")  # optional: not a dependency
    with warnings.catch_warnings():  # pingparsing calls pyparsing's deprecated camelCase API
        warnings.simplefilter("ignore", DeprecationWarning)
        stats = pingparsing.PingParsing().parse(log.read_text(encoding="ascii"))
    times = [float(reply["time"]) for reply in stats.icmp_replies if not reply["duplicate"]]
    if len(times) != len(expected_ms) or abs(np.median(times) - np.median(expected_ms)) > 1e-6:
        raise RuntimeError("pingparsing and parse_file disagree on the replies of the same log")


def _has_pingparsing() -> bool:
    return importlib.util.find_spec("pingparsing") is not None


# -- sweep ----------------------------------------------------------------------------


def sweep_rate(example: Path = EXAMPLE, points: int = 1_000_000, runs: int = 7) -> Figure:
    """Scenarios judged per second by ``sweep(analysis, "rtt", grid)`` (analysis done once)."""
    analysis = analyse(example)
    grid = np.linspace(0.5, 200.0, points)
    times_s = []
    for _ in range(runs):
        start = time.perf_counter()
        result = sweep(analysis, "rtt", grid)
        times_s.append(time.perf_counter() - start)
        if result.chosen.shape != (points,):
            raise RuntimeError("sweep returned the wrong number of points")
    median_s = statistics.median(times_s)
    return Figure(
        "sweep",
        f'`sweep(analysis, "rtt", …)`, {points:,} points on {example.parent.name}',
        "scenarios per second",
        points / median_s,
        "1/s",
        SWEEP_PER_S_MIN,
        at_most=False,
        detail=f"{median_s * 1000:.1f} ms per sweep, {runs} runs, "
        f"{len(result.flips())} flip(s) on 0.5-200 ms",
    )


# -- all of it ------------------------------------------------------------------------


def run(
    sizes: Sizes = FULL, *, profile: bool = True, progress: Callable[[str], None] = lambda _: None
) -> list[Figure]:
    """Every speed figure at ``sizes``."""
    figures = []
    progress("advisor recommend vs bare imports")
    figures.append(cli_vs_bare(EXAMPLE, sizes.runs, profile=profile))
    progress(f"recommend() on {sizes.sites} sites")
    figures += many_sites(sizes, profile=profile)
    progress(f"parsing {sizes.ping_lines:,} ping lines")
    figures += parsing(
        sizes.ping_lines, sizes.runs, sizes.pingparsing_runs if _has_pingparsing() else 0
    )
    progress(f"sweep over {sizes.sweep_points:,} points")
    figures.append(sweep_rate(EXAMPLE, sizes.sweep_points, sizes.runs))
    return figures


def format_value(figure: Figure) -> str:
    if not math.isfinite(figure.value):
        return "did not finish" if math.isinf(figure.value) else "not measured"
    if figure.unit == "1/s":
        return f"{figure.value:,.0f} /s"
    number = f"{figure.value:,.0f}" if abs(figure.value) >= 1000 else f"{figure.value:.3g}"
    return f"{number}x" if figure.unit == "x" else f"{number} {figure.unit}"


def format_target(figure: Figure) -> str:
    if figure.target is None:
        return "none"
    bound = (
        f"{figure.target:,.0f} /s"
        if figure.unit == "1/s"
        else (f"{figure.target:g}x" if figure.unit == "x" else f"{figure.target:g} {figure.unit}")
    )
    return ("≤ " if figure.at_most else "≥ ") + bound


def markdown(figures: Sequence[Figure]) -> str:
    """The speed table, then where the time goes for every missed target."""
    verdicts = {True: "met", False: "**missed**", None: "-"}
    lines = [
        "| benchmark | measure | median | target | | detail |",
        "| --- | --- | ---: | --- | --- | --- |",
    ]
    lines += [
        f"| {f.benchmark} | {f.measure} | {format_value(f)} | {format_target(f)} "
        f"| {verdicts[f.met]} | {f.detail} |"
        for f in figures
    ]
    for f in figures:
        if f.hotspots:
            lines += [
                "",
                f"Where the time goes in {f.benchmark}, one extra run (imports per "
                "package from `python -X importtime`; functions by own time from cProfile):",
                "",
            ]
            lines += [f"- `{spot}`" for spot in f.hotspots]
    return "\n".join(lines) + "\n"

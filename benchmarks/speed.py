"""Speed: each figure measured beside its yardstick in the same run, several runs, medians.

Speed is a guard, not a goal (issue 20): four figures have a bound, the guards, and the
others are information without one. Every figure stands beside something measured in the
same session, so that a shared or slower machine moves both alike.

The guards (:data:`GUARDS`):

- ``advisor recommend`` on paris-frankfurt as a process, at most 3.0 times a bare ``python
  -c "import numpy, pydantic, yaml"`` (the floor any Python tool with these dependencies
  pays): the median ratio of pairs run alternately in one run, both with a bytecode cache
  as an installed package has (``PYTHONDONTWRITEBYTECODE`` would compile advisor's modules
  on every run, which no user pays);
- the library's ``recommend()`` on 30 real data-centre cities, every pair measured with
  20,000 samples written to sample files (435 links), at most 3 s and a peak resident
  memory of at most 600 MB, in a fresh subprocess per run so that the peak (the whole
  process, interpreter and numpy included) is its own;
- a fleet of 1,000 generated small topologies through ``advisor recommend --format jsonl
  --jobs 2``, at most 40 s, its output equal to ``--jobs 1``'s;
- ``parse_file`` on a million-line ping log, at most 0.5 s.

Information: the sample files' parse rate against ``numpy.loadtxt``, the largest topology
the engine accepts (its peak memory, against SECURITY.md's bound), and ``sweep`` over a
million RTT values. What a kept speed mechanism buys of a guarded figure is measured by
:mod:`benchmarks.kept`.

When a guard is missed, :func:`where_time_goes` says where: import cost per package
(``python -X importtime``) and the functions with the most own time (cProfile).
"""

from __future__ import annotations

__all__ = [
    "CITIES",
    "FULL",
    "GUARDS",
    "SMOKE",
    "Figure",
    "Sizes",
    "child_run",
    "cli_vs_bare",
    "fleet",
    "format_target",
    "format_value",
    "many_sites",
    "markdown",
    "parsing",
    "run",
    "sample_files",
    "sweep_rate",
    "where_time_goes",
    "write_many_sites",
]

import cProfile
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
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from advisor.analysis import analyse
from advisor.measurements import parse_file
from advisor.model import physics
from advisor.recommendation import recommend
from advisor.sweep.grid import MAX_POINTS, sweep
from benchmarks.parse_ping import write_log

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "paris-frankfurt" / "topology.yaml"
SEED = 20_240_601
BARE = "import numpy, pydantic, yaml"

# The guards of issue 20: a bound each, checked by every full run.
CLI_RATIO_MAX = 3.0  # advisor recommend / the bare imports
MANY_SITES_S_MAX = 3.0  # 30 sites, load + recommend()
MANY_SITES_RSS_MB_MAX = 600.0  # its peak resident memory
FLEET_S_MAX = 40.0  # 1,000 small topologies, --jobs 2
PING_LOG_S_MAX = 0.5  # a 10^6-line ping log
GUARDS = {
    "cli": CLI_RATIO_MAX,
    "many_sites_time": MANY_SITES_S_MAX,
    "many_sites_rss": MANY_SITES_RSS_MB_MAX,
    "fleet": FLEET_S_MAX,
    "ping": PING_LOG_S_MAX,
}
FLEET_JOBS = 2
# SECURITY.md's promise for the largest accepted topology (32 member sites): under 1 GB.
# Shown beside that figure, not a guard.
SECURITY_RSS_MB = 1024.0

# Thirty-two cities with large data-centre markets (degrees, city centres): the first thirty
# make the many-site figure, all of them the largest topology the engine accepts (MAX_SITES).
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
    "jakarta": (-6.2088, 106.8456),
    "santiago": (-33.4489, -70.6693),
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
    sweep_points: int
    fleet_files: int
    largest_sites: int  # the largest accepted topology (advisor.engine.evidence.MAX_SITES)


FULL = Sizes(
    runs=7,
    sites=30,
    samples=20_000,
    site_runs=3,
    site_timeout_s=1800.0,
    ping_lines=1_000_000,
    sweep_points=1_000_000,
    fleet_files=1_000,
    largest_sites=32,
)
SMOKE = Sizes(
    runs=1,
    sites=4,
    samples=500,
    site_runs=1,
    site_timeout_s=120.0,
    ping_lines=2_000,
    sweep_points=1_000,
    fleet_files=6,
    largest_sites=5,
)


@dataclass(frozen=True)
class Figure:
    """One line of the speed table."""

    key: str  # stable: cli, many_sites_time, many_sites_rss, samples, ping, ...
    benchmark: str
    measure: str
    value: float
    unit: str
    target: float | None = None  # the guard's bound (GUARDS); None: information only
    at_most: bool = True  # the target is an upper bound; False: a lower bound
    detail: str = ""
    hotspots: tuple[str, ...] = ()  # where the time goes, when the guard is missed
    yardstick: str = ""  # what the figure is set against, measured in the same run
    ratio: float | None = None  # value / yardstick (or yardstick / value for a rate)

    @property
    def met(self) -> bool | None:
        """Whether the guard holds; None for information or a figure not measured (a run
        that did not finish, infinite, misses an upper bound)."""
        if self.target is None or math.isnan(self.value):
            return None
        return self.value <= self.target if self.at_most else self.value >= self.target


# -- advisor recommend as a process ---------------------------------------------------


def _process_env(cache: Path) -> dict[str, str]:
    """The environment of a timed process: a bytecode cache, as an installed package has.

    ``PYTHONDONTWRITEBYTECODE`` (set in some CI and agent shells) would make every run
    compile advisor's modules from source; the cache lives in a folder of its own
    (``PYTHONPYCACHEPREFIX``), so the repository is not written to.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def _wall_s(command: Sequence[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


def cli_vs_bare(example: Path = EXAMPLE, runs: int = 7, *, profile: bool = True) -> Figure:
    """Median of ``runs`` ratios (advisor recommend / bare imports), each pair run back to
    back, alternating: the guard ``cli``."""
    bare = [sys.executable, "-c", BARE]
    cli = [sys.executable, "-m", "advisor", "recommend", str(example), "--format", "json"]
    with tempfile.TemporaryDirectory() as cache:
        env = _process_env(Path(cache))
        _wall_s(bare, env), _wall_s(cli, env)  # warm the file and bytecode caches
        pairs = [(_wall_s(bare, env), _wall_s(cli, env)) for _ in range(runs)]
        ratio = statistics.median(c / b for b, c in pairs)
        bare_s = statistics.median(b for b, _ in pairs)
        figure = Figure(
            "cli",
            '`advisor recommend` (process) vs bare `python -c "' + BARE + '"`',
            "time ratio",
            ratio,
            "x",
            CLI_RATIO_MAX,
            detail=f"{statistics.median(c for _, c in pairs):.3f} s vs {bare_s:.3f} s on "
            f"{example.parent.name}, {runs} alternating pairs, bytecode cached",
            yardstick=f"bare imports {bare_s:.3f} s",
            ratio=ratio,
        )
        if profile and figure.met is False:
            return _with(figure, where_time_goes(cli, lambda: recommend(example), env))
    return figure


def _with(figure: Figure, hotspots: tuple[str, ...]) -> Figure:
    return replace(figure, hotspots=hotspots)


# -- where the time goes --------------------------------------------------------------

_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def import_ms_by_package(
    command: Sequence[str], env: dict[str, str] | None = None
) -> dict[str, float]:
    """Own import time [ms] summed per top-level package, from ``python -X importtime``."""
    done = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]],
        cwd=REPO,
        env=env,
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


def where_time_goes(
    command: Sequence[str] | None, call: Callable[[], object], env: dict[str, str] | None = None
) -> tuple[str, ...]:
    """Import cost per package of ``command`` (if given) and the top functions of ``call``."""
    lines = []
    if command is not None:
        imports = import_ms_by_package(command, env)
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
    """This process's peak RSS [MB]. On Linux from VmHWM: ``ru_maxrss`` survives execve, so a
    child started by a large benchmark process would report its parent's peak (seen: 741 MB
    "after imports")."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10  # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes on macOS, KiB else


def child_many_sites(path: str) -> None:
    """In a fresh process: load and recommend ``path``, print timings and peak RSS as JSON."""
    from advisor.inputs.loading import load_topology
    from advisor.recommendation import recommend

    before_mb = _peak_rss_mb()
    start = time.perf_counter()
    start_cpu = time.process_time()  # every thread's CPU: steadier than wall on a shared host
    loaded = load_topology(path)
    loaded_s = time.perf_counter() - start
    result = recommend(loaded)
    total_s = time.perf_counter() - start
    cpu_s = time.process_time() - start_cpu
    print(
        json.dumps(
            {
                "load_s": loaded_s,
                "total_s": total_s,
                "cpu_s": cpu_s,
                "rss_before_mb": before_mb,
                "peak_rss_mb": _peak_rss_mb(),
                "architecture": result.architecture,
                "groups": len(result.groups),
            }
        )
    )


def child_run(path: Path, timeout_s: float) -> dict[str, Any] | None:
    """:func:`child_many_sites` on ``path`` in a fresh process: its JSON, or None when it
    did not finish within ``timeout_s``."""
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
    """Wall time and peak RSS of load + ``recommend()`` on ``sizes.sites`` measured cities,
    beside ``numpy.loadtxt`` of the same files and the sample files' parse rate."""
    links = sizes.sites * (sizes.sites - 1) // 2
    name = f"`recommend()`, {sizes.sites} sites, {links} links x {sizes.samples:,} samples"
    with tempfile.TemporaryDirectory() as folder:
        path = write_many_sites(Path(folder), sizes.sites, sizes.samples)
        files = sorted((Path(folder) / "measurements").glob("*.txt"))
        runs, loadtxt_s = [], []
        for _ in range(sizes.site_runs):
            loadtxt_s.append(_timed(lambda: [np.loadtxt(f) for f in files]))
            run = child_run(path, sizes.site_timeout_s)
            if run is None:
                break
            runs.append(run)
            if run["total_s"] > 10 * MANY_SITES_S_MAX:  # the verdict is clear; spare the time
                break
        samples = sample_files(files, sizes.runs)
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
            return [_profiled(figure, path, profile), unknown, samples]
        total_s = statistics.median(r["total_s"] for r in runs)
        yard_s = statistics.median(loadtxt_s)
        detail = (
            f"`load_topology` {statistics.median(r['load_s'] for r in runs):.2f} s (the "
            "sample files are read inside `recommend()`); "
            f"CPU {statistics.median(r['cpu_s'] for r in runs):.2f} s (all threads); "
            f"verdict {runs[0]['architecture']} with {runs[0]['groups']} group(s); "
            f"{len(runs)} run(s)"
            + (
                "; no more: the first took over 10 times the guard"
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
            yardstick=f"`numpy.loadtxt` of the {len(files)} files {yard_s:.2f} s",
            ratio=total_s / yard_s,
        )
        peak_mb = max(r["peak_rss_mb"] for r in runs)
        before_mb = runs[0]["rss_before_mb"]
        rss = Figure(
            "many_sites_rss",
            name,
            "peak RSS",
            peak_mb,
            "MB",
            MANY_SITES_RSS_MB_MAX,
            detail="peak RSS (VmHWM) of the whole process",
            yardstick=f"after imports {before_mb:.0f} MB",
            ratio=peak_mb / before_mb,
        )
        return [_profiled(time_figure, path, profile), rss, samples]


def largest_accepted(sizes: Sizes = FULL) -> Figure:
    """Time and peak RSS of one load + ``recommend()`` on the largest topology the engine
    accepts (every pair measured), beside what SECURITY.md's site bound promises."""
    links = sizes.largest_sites * (sizes.largest_sites - 1) // 2
    name = (
        f"`recommend()` on the largest accepted topology: {sizes.largest_sites} sites, {links} "
        f"links x {sizes.samples:,} samples"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = write_many_sites(Path(folder), sizes.largest_sites, sizes.samples)
        run = child_run(path, sizes.site_timeout_s)
    if run is None:
        return Figure(
            "largest_rss",
            name,
            "peak RSS",
            math.inf,
            "MB",
            detail=f"did not finish within {sizes.site_timeout_s:.0f} s",
        )
    promise = "within" if run["peak_rss_mb"] <= SECURITY_RSS_MB else "**beyond**"
    return Figure(
        "largest_rss",
        name,
        "peak RSS",
        run["peak_rss_mb"],
        "MB",
        detail=f"{run['total_s']:.2f} s (one run); verdict {run['architecture']}; "
        f"{promise} SECURITY.md's {SECURITY_RSS_MB:.0f} MB",
        yardstick=f"after imports {run['rss_before_mb']:.0f} MB",
        ratio=run["peak_rss_mb"] / run["rss_before_mb"],
    )


def sample_files(files: Sequence[Path], runs: int = 7) -> Figure:
    """Numbers per second of ``parse_file`` over sample files, alternating with loadtxt."""
    ours_s, theirs_s = [], []
    count = sum(parse_file(f, "samples").samples_ms.size for f in files)  # type: ignore[union-attr]
    for _ in range(runs):
        ours_s.append(_timed(lambda: [parse_file(f, "samples") for f in files]))
        theirs_s.append(_timed(lambda: [np.loadtxt(f) for f in files]))
    ours, theirs = statistics.median(ours_s), statistics.median(theirs_s)
    return Figure(
        "samples",
        f"`parse_file` on {len(files)} sample files ({count:,} numbers)",
        "numbers per second",
        count / ours,
        "1/s",
        detail=f"{ours:.3f} s vs {theirs:.3f} s, {runs} runs",
        yardstick=f"`numpy.loadtxt` {count / theirs / 1e6:.1f} M/s",
        ratio=statistics.median(t / o for t, o in zip(theirs_s, ours_s, strict=True)),
    )


def _profiled(figure: Figure, path: Path, profile: bool) -> Figure:
    if not profile or figure.met is not False:
        return figure
    from advisor.inputs.loading import load_topology
    from advisor.recommendation import recommend

    return _with(figure, where_time_goes(None, lambda: recommend(load_topology(path))))


# -- parsing a ping log ---------------------------------------------------------------


def parsing(lines: int = 1_000_000, runs: int = 7) -> Figure:
    """``parse_file`` on a ping log, beside numpy.loadtxt of just its RTTs: the guard
    ``ping``."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "ping.txt"
        write_log(log, lines)
        numbers = Path(folder) / "rtt.txt"
        expected_ms = parse_file(log, "ping").samples_ms
        if expected_ms is None:
            raise RuntimeError("parse_file read no RTT samples from the generated ping log")
        np.savetxt(numbers, expected_ms, fmt="%g")
        ours_s, loadtxt_s = [], []
        for _ in range(runs):
            ours_s.append(_timed(lambda: parse_file(log, "ping")))
            loadtxt_s.append(_timed(lambda: np.loadtxt(numbers)))
        size = f"{lines:,} lines, {log.stat().st_size / 2**20:.0f} MiB"
    return Figure(
        "ping",
        f"`parse_file` on a ping log ({size})",
        "time",
        statistics.median(ours_s),
        "s",
        PING_LOG_S_MAX,
        detail=f"{runs} runs",
        yardstick=f"`numpy.loadtxt` of just the RTTs {statistics.median(loadtxt_s):.3f} s",
        ratio=statistics.median(o / n for o, n in zip(ours_s, loadtxt_s, strict=True)),
    )


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


# -- sweep ----------------------------------------------------------------------------


def sweep_rate(example: Path = EXAMPLE, points: int = 1_000_000, runs: int = 7) -> Figure:
    """Scenarios judged per second by ``sweep(analysis, "rtt", grid)`` (analysis done once),
    over ``points`` RTTs in grids of at most :data:`advisor.sweep.grid.MAX_POINTS` (the
    largest grid one call accepts)."""
    analysis = analyse(example)
    values = np.linspace(0.5, 200.0, points)
    grids = np.array_split(values, -(-points // MAX_POINTS))
    times_s = []
    flips = 0
    for _ in range(runs):
        start = time.perf_counter()
        results = [sweep(analysis, "rtt", grid) for grid in grids]
        times_s.append(time.perf_counter() - start)
        if sum(r.chosen.size for r in results) != points:
            raise RuntimeError("sweep returned the wrong number of points")
        flips = sum(len(r.flips()) for r in results)
    median_s = statistics.median(times_s)
    return Figure(
        "sweep",
        f'`sweep(analysis, "rtt", …)`, {points:,} points on {example.parent.name}',
        "scenarios per second",
        points / median_s,
        "1/s",
        detail=f"{median_s * 1000:.1f} ms for {len(grids)} grid(s), {runs} runs, "
        f"{flips} flip(s) on 0.5-200 ms",
    )


# -- all of it ------------------------------------------------------------------------


# -- a fleet ---------------------------------------------------------------------------


def write_fleet(folder: Path, files: int, seed: int = SEED) -> list[Path]:
    """``files`` small topologies: 2 to 5 of :data:`CITIES`, unmeasured (estimated) links,
    a hot row and an SLO drawn from a few realistic values."""
    rng = np.random.default_rng(seed)
    names = list(CITIES)
    paths = []
    for number in range(files):
        sites = [names[i] for i in rng.choice(len(names), int(rng.integers(2, 6)), False)]
        topology = {
            "version": 1,
            "name": f"fleet-{number}",
            "requirements": {
                "commit_latency_ms": {"p99": int(rng.choice([20, 50, 100]))},
                "survive": "site",
                "max_data_loss_s": 1,
            },
            "sites": [
                {"name": n, "location": {"lat": CITIES[n][0], "lon": CITIES[n][1]}, "nodes": 3}
                for n in sites
            ],
            "workload": {
                "commits_per_s": {"avg": 400, "peak": 1500},
                "writeset_bytes": {"p50": 2048, "p99": 65536},
                "hot_rows": [
                    {
                        "name": "row",
                        "updates_per_s": int(rng.choice([5, 20, 80])),
                        "writer_sites": [sites[0]],
                    }
                ],
            },
        }
        path = folder / f"topology-{number:04d}.yaml"
        path.write_text(yaml.safe_dump(topology, sort_keys=False), encoding="utf-8")
        paths.append(path)
    return paths


def _fleet_run(files: Sequence[Path], jobs: int, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall time [s], CPU time of the process and its workers [s] (user and system, from
    ``getrusage`` of the children: less noisy than the wall on a shared machine), output."""
    command = [sys.executable, "-m", "advisor", "recommend", *map(str, files)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [*command, "--format", "jsonl", "--jobs", str(jobs)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"the fleet run exited {done.returncode}: {done.stderr[-2000:]}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu_s, done.stdout


def fleet(files: int = 1_000, jobs: int = FLEET_JOBS) -> Figure:
    """``advisor recommend FILES --format jsonl --jobs N`` against ``--jobs 1``: time, and
    whether the two outputs are the same bytes."""
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as cache:
        paths = write_fleet(Path(folder), files)
        env = _process_env(Path(cache))
        parallel_s, parallel_cpu_s, parallel = _fleet_run(paths, jobs, env)
        sequential_s, sequential_cpu_s, sequential = _fleet_run(paths, 1, env)
    same = parallel == sequential and len(parallel.splitlines()) == files
    return Figure(
        "fleet",
        f"`advisor recommend` on {files:,} small topologies, `--format jsonl --jobs {jobs}`",
        "time",
        parallel_s if same else math.inf,
        "s",
        FLEET_S_MAX,
        detail=(
            "output identical to `--jobs 1`"
            if same
            else "**output differs from `--jobs 1`**: a bug, whatever the time"
        )
        + f"; {parallel_s / files * 1000:.0f} ms a file; {os.cpu_count()} cores; CPU "
        f"{parallel_cpu_s / files * 1000:.0f} ms a file (`--jobs 1`: "
        f"{sequential_cpu_s / files * 1000:.0f})",
        yardstick=f"`--jobs 1` {sequential_s:.1f} s",
        ratio=parallel_s / sequential_s,
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
    progress(f"recommend() on the largest accepted topology, {sizes.largest_sites} sites")
    figures.append(largest_accepted(sizes))
    progress(f"parsing {sizes.ping_lines:,} ping lines")
    figures.append(parsing(sizes.ping_lines, sizes.runs))
    progress(f"sweep over {sizes.sweep_points:,} points")
    figures.append(sweep_rate(EXAMPLE, sizes.sweep_points, sizes.runs))
    progress(f"a fleet of {sizes.fleet_files:,} topologies")
    figures.append(fleet(sizes.fleet_files))
    figures.sort(key=lambda f: f.target is None)  # the guards first, then information
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
        return "-"
    bound = (
        f"{figure.target:,.0f} /s"
        if figure.unit == "1/s"
        else (f"{figure.target:g}x" if figure.unit == "x" else f"{figure.target:g} {figure.unit}")
    )
    return ("≤ " if figure.at_most else "≥ ") + bound


def format_ratio(figure: Figure) -> str:
    if figure.ratio is None or not math.isfinite(figure.ratio):
        return "-"
    return f"{figure.ratio:.3g}x"


def markdown(figures: Sequence[Figure]) -> str:
    """The speed table, then where the time goes for every missed guard."""
    verdicts = {True: "met", False: "**missed**", None: "-"}
    lines = [
        "| benchmark | measure | median | yardstick (same run) | ratio | guard | | detail |",
        "| --- | --- | ---: | --- | ---: | --- | --- | --- |",
    ]
    lines += [
        f"| {f.benchmark} | {f.measure} | {format_value(f)} | {f.yardstick or '-'} "
        f"| {format_ratio(f)} | {format_target(f)} | {verdicts[f.met]} | {f.detail} |"
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

"""``python -m benchmarks``: run every benchmark and rewrite BENCHMARKS.md.

``python -m benchmarks --smoke`` runs each benchmark at a tiny size to check it still runs
(not how fast), in well under 30 s, and writes nothing unless ``--output`` is given.
"""

from __future__ import annotations

__all__ = ["NEXT", "document", "machine", "main"]

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from benchmarks import estimates, fidelity, kept, speed
from benchmarks.cases import rows

REPO = Path(__file__).resolve().parents[1]
CALIBRATION = REPO / "benchmarks" / "calibration"  # a copy of ../shared/calibration

# Where to look when a guard of issue 20 is missed. Shown only for a missed guard, under the
# profile of that run, which is the current word on where the time goes. A guard bounds how
# slow simple code may be; it is not a goal: find the change that broke it before adding
# machinery for speed.
NEXT = {
    "cli": (
        "the profile above splits the process into imports per package and the library call. "
        "Measured by hand on 2026-11-27 (one process split with time.perf_counter, quiet "
        "minutes of the shared host): bare imports 75 ms, typer 20 ms, advisor's modules "
        "100 ms (inputs.topology and result build their pydantic models at import, about "
        "35 ms), networkx 52 ms, the library call 85 ms, 15 ms of garbage collection after "
        "startup.resume(). networkx is on this example's path (two unmeasured pairs bounded by "
        "a shortest path), and `import networkx` loads the whole package. The ratio moves with "
        "the load: 3.9-4.7x on a quiet host, 2.95-3.03x on a loaded one (the bare import slows "
        "more), so compare it only on a quiet machine"
    ),
    "many_sites_time": (
        "see the profile above: the sample files' reading, the pairs' draws and the grouping "
        "search's candidate clusters are the parts that grow with the sites"
    ),
    "many_sites_rss": (
        "the commit draws are (draws x sites x sites) arrays: see which of them a change "
        "keeps alive at once"
    ),
    "fleet": (
        "the fleet costs what one small topology costs, a thousand times over two workers: "
        "profile one of them (`advisor recommend` on a generated fleet file). Measured by hand "
        "on 2026-11-27 (100 fleet files in one process, CPU by phase, loaded host), of about "
        "99 ms a file: cluster evaluations 35 ms (commit draws and their percentiles per site, "
        "quorum 6 ms), every pair drawn again for each evaluator at other windows 17 ms, the "
        "asynchronous channels 18 ms (about half of them the partial options' channels to the "
        "sites they leave out), the rule pack read again for each file 4 ms, hot rows 4 ms. "
        "Tried and not kept, each under issue 20's bar: both directions of a channel in one "
        "vectorised call and quorum's search only at articulation points (together about 2 %), "
        "a cache per channel direction (6 %)"
    ),
    "ping": "see the profile above and advisor/measurements/, where the ping log is parsed",
}


def machine() -> dict[str, str]:
    """CPU model, cores, RAM, OS, and the versions that matter to the figures."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        ram = f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB"
    except (ValueError, OSError, AttributeError):
        ram = "unknown"
    info = {
        "CPU": cpu,
        "cores": f"{os.cpu_count()} logical",
        "RAM": ram,
        "OS": _os_name(),
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    for package in ("numpy", "pydantic", "PyYAML", "networkx"):
        try:
            info[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            info[package] = "not installed"
    return info


def _os_name() -> str:
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8")
        release = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        name = release.get("PRETTY_NAME", "").strip('"')
    except OSError:
        name = ""
    return f"{name or platform.system()} ({platform.system()} {platform.release()})"


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" with uncommitted changes" if dirty else "")


def document(
    figures: Sequence[speed.Figure],
    fidelity_section: str,
    host: dict[str, str],
    *,
    kept_section: str = "",
    spread_section: str = "",
    estimates_section: str = "",
    when: datetime.datetime,
    commit: str,
    elapsed_s: float,
) -> str:
    """BENCHMARKS.md: machine, speed table (and where to look for a missed guard), what the
    kept speed mechanisms buy, fidelity table, estimates from coordinates, how to rerun."""
    missed = [f for f in figures if f.met is False]
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `python -m benchmarks` on {when:%Y-%m-%d %H:%M} UTC at commit {commit}, "
        f"in {elapsed_s / 60:.1f} minutes. Do not edit by hand: rerun the command.",
        "",
        "## Machine",
        "",
        *[f"- {key}: {value}" for key, value in host.items()],
        "",
        "## Speed",
        "",
        "Speed is a guard, not a goal (issue 20). The guards: `advisor recommend "
        'examples/paris-frankfurt/topology.yaml` at most 3.0 times a bare `python -c "import '
        'numpy, pydantic, yaml"` (the median ratio of alternating pairs in one run); the '
        "30-site topology (435 links x 20,000 samples) in at most 3 s with a peak memory of at "
        "most 600 MB; a fleet of 1,000 small topologies with `--jobs 2` in at most 40 s; a "
        "10^6-line ping log parsed in at most 0.5 s. The other figures are information, "
        "without a bound. Every figure stands beside its yardstick, measured in the same run "
        "(alternating with it where both are timed), and the ratio of the two; medians of "
        "several runs. On a shared machine the absolute times carry noise that the ratios "
        "mostly cancel. Processes run with a bytecode cache (`PYTHONPYCACHEPREFIX` in a "
        "temporary folder), as an installed package has.",
        "",
        speed.markdown(figures).rstrip(),
        "",
    ]
    if missed:
        lines += ["### Missed guards: where to look", ""]
        lines += [
            f"- **{f.benchmark}, {f.measure}** ({speed.format_value(f)} against "
            f"{speed.format_target(f)}): {NEXT.get(f.key, 'see the profile above')}."
            for f in missed
        ]
        lines += [
            "",
            "A missed guard is a regression: find the change that caused it before adding "
            "machinery for speed (issue 20).",
            "",
        ]
    else:
        lines += ["Every guard holds.", ""]
    lines += ["### What a kept speed mechanism buys", "", kept_section.rstrip(), ""]
    lines += [
        "## Fidelity",
        "",
        "Every case of the calibration files (benchmarks/calibration: lab-galera.yaml and "
        "field-data.yaml, copied from ../shared/calibration, and this project's lab-runs.yaml) "
        "rebuilt as a topology by `benchmarks/cases.py` and run through the product as a user "
        "would (`analyse()`, `build_recommendation()`), with the model's defaults wherever the "
        "case did not measure an input; error = (predicted - measured) / measured. None of the "
        "sources states a verdict, so every row is a number. The copied rtt-by-distance.csv "
        "(measured round trips between named places) is not a case file and has no rows here.",
        "",
        fidelity_section.rstrip(),
        "",
    ]
    if spread_section:
        lines += ["### The lab's links as ping measured them", "", spread_section.rstrip(), ""]
    if estimates_section:
        lines += ["## Estimates from coordinates", "", estimates_section.rstrip(), ""]
    lines += [
        "## Reproduce",
        "",
        "```sh",
        "pip install -e '.[test]'",
        "python -m benchmarks          # everything, rewrites BENCHMARKS.md",
        "python -m benchmarks --smoke  # a few seconds: checks every benchmark still runs",
        "```",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, to check the benchmarks still run (CI)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="report file (default: BENCHMARKS.md; none with --smoke)",
    )
    args = parser.parse_args(argv)
    output = args.output or (None if args.smoke else REPO / "BENCHMARKS.md")
    start = time.perf_counter()

    def progress(step: str) -> None:
        print(f"[{time.perf_counter() - start:6.1f} s] {step}", file=sys.stderr, flush=True)

    progress("fidelity: calibration cases")
    calibration_rows = rows()
    fidelity_section = fidelity.markdown(calibration_rows, CALIBRATION)
    spread_section = ""
    if not args.smoke:  # the whole table once more: minutes, so not in the smoke run
        progress("fidelity: the lab's links with their measured spread")
        spread_section = fidelity.spread_markdown(calibration_rows, rows(link_spread=True))
    sizes = speed.SMOKE if args.smoke else speed.FULL
    figures = speed.run(sizes, profile=not args.smoke, progress=progress)
    progress("what the kept speed mechanisms buy")
    bought = kept.measure(kept.KEPT, sizes)
    text = document(
        figures,
        fidelity_section,
        machine(),
        kept_section=kept.markdown(bought),
        spread_section=spread_section,
        estimates_section=estimates.markdown(),
        when=datetime.datetime.now(datetime.UTC),
        commit=_commit(),
        elapsed_s=time.perf_counter() - start,
    )
    if output is not None:
        output.write_text(text, encoding="utf-8")
        progress(f"wrote {output}")
    summary = fidelity.summarise([r for r in calibration_rows if not r.held_out])
    for figure in figures:
        print(
            f"{figure.benchmark}: {figure.measure} {speed.format_value(figure)} "
            f"(guard {speed.format_target(figure)})"
        )
    for b in bought:
        print(
            f"kept: {b.mechanism.name}: "
            + (b.error or f"{b.with_it:.3g} vs {b.without_it:.3g} {b.mechanism.unit} without")
        )
    medians = ", ".join(
        f"{source} {median:.1%} over {summary.count[source]} rows"
        for source, median in summary.median_abs_error.items()
    )
    print(
        f"fidelity: median absolute error {medians}; {summary.within_tolerance} of "
        f"{summary.rows} rows within tolerance"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

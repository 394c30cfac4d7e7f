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

from benchmarks import fidelity, speed
from benchmarks.cases import rows

REPO = Path(__file__).resolve().parents[1]
CALIBRATION = REPO / "benchmarks" / "calibration"  # a copy of ../shared/calibration

# What to change when a speed target is missed, from profiling it (issue 13). Shown only for
# a missed target, under the profile of that run, which is the current word on where time goes.
NEXT = {
    "cli": (
        "beyond the bare three imports, the process pays for pydantic's model machinery "
        "(pydantic.main, .fields and .types, annotated_types, the schema generator: about a "
        "quarter of the bare imports before a single advisor model), the topology and result "
        "models (about 10 % more), advisor's engine modules (mostly their dataclasses) and "
        "the library call on paris-frankfurt. Gone from recommend: typer, networkx, the "
        "pure-Python YAML loader, numpy.ma, the collector over the start-up's objects, "
        "pydantic's plugin scan and importlib.metadata with email, string annotations in "
        "the models. Deferring the models' builds was measured slower (a model a run also "
        "uses alone is built twice). The detail gives the floor: the bare imports and one "
        "trivial pydantic model built and used already exceed 1.5x (pydantic's model "
        "machinery is imported on the first model), so 1.5x needs the command's input and "
        "output checked without pydantic models, against the design card's choice of "
        "pydantic: a decision for the maintainers (issue 13). Next within it: the engine's "
        "call on small topologies and its modules' dataclasses"
    ),
    "startup": "the detail lists what recommend imports beyond the bare three; see `cli`",
    "many_sites_time": (
        "see the profile above: most of the call waits for the two threads that read the 435 "
        "sample files (a parse and a sort per file, about 0.6 s of CPU) and draw the large "
        "clusters' pairs; the rest is quantiles and the commit draws of the grouping search's "
        "candidate clusters. Next: keep each file's samples sorted from the reading (one pass, "
        "not a parse then a sort), and reuse one cluster's draws for its sub-clusters"
    ),
    "many_sites_rss": (
        "commit draws are (20,000 x sites x sites) arrays, about 72 MB each at 30 sites in "
        "float32; reduce over paths in blocks of draws, and keep fewer of them alive at once"
    ),
    "largest_rss": "see many_sites_rss: the same arrays, for 32 sites",
    "samples": "see advisor/measurements/scan.py: decimal_lines decodes 8 bytes at a time",
    "ping": "parse_file is vectorised over bytes; see advisor/measurements/scan.py",
    "pingparsing": "see where the time goes above; parse_file is vectorised over bytes",
    "sweep": "the sweep should be one numpy expression per option; see the profile above",
    "fleet": (
        "a small topology costs about 45 to 50 ms of CPU on this machine, most of it the "
        "clusters the grouping search evaluates, for the verdict and again at both ends of "
        "every estimate's range (every link of a generated fleet topology is estimated): "
        "the commit paths (about a third), percentiles (about an eighth), pair draws (about "
        "a tenth, most of them from the by-value cache of estimated links). Next: keep whole "
        "cluster evaluations by value across a worker's topologies (the key: the sites' "
        "evidence, members, arbitrator candidates and workload), or bound which options an "
        "end of a range can flip before judging it"
    ),
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
    for package in ("numpy", "pydantic", "PyYAML", "pingparsing"):
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
    when: datetime.datetime,
    commit: str,
    elapsed_s: float,
) -> str:
    """BENCHMARKS.md: machine, speed table and what is next, fidelity table, how to rerun."""
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
        "Every figure stands beside its yardstick, measured in the same run (alternating with "
        "it where both are timed), and the ratio of the two; medians of several runs. The "
        "targets are those of issue 13, the times for a quiet machine of this kind: on a "
        "shared machine the absolute times carry noise that the ratios mostly cancel. "
        "Processes run with a bytecode cache (`PYTHONPYCACHEPREFIX` in a temporary folder), "
        "as an installed package has.",
        "",
        speed.markdown(figures).rstrip(),
        "",
    ]
    if missed:
        lines += ["### Missed targets: why, and what is next", ""]
        lines += [
            f"- **{f.benchmark}, {f.measure}** ({speed.format_value(f)} against "
            f"{speed.format_target(f)}): {NEXT.get(f.key, 'not yet profiled')}."
            for f in missed
        ]
        lines += ["", "These belong to the engine (advisor/), reported on issue 13.", ""]
    else:
        lines += ["Every speed target is met.", ""]
    lines += [
        "## Fidelity",
        "",
        "Every case of the calibration files (benchmarks/calibration: lab-galera.yaml and "
        "field-data.yaml, copied from ../shared/calibration, and this project's lab-runs.yaml) "
        "rebuilt as a topology by `benchmarks/cases.py` and run through the product as a user "
        "would (`analyse()`, `build_recommendation()`), with the model's defaults wherever the "
        "case did not measure an input; error = (predicted - measured) / measured. None of the "
        "sources states a verdict, so every row is a number.",
        "",
        fidelity_section.rstrip(),
        "",
        "## Reproduce",
        "",
        "```sh",
        "pip install -e '.[test]' pingparsing   # pingparsing only for its comparison",
        "python -m benchmarks                   # everything, rewrites BENCHMARKS.md",
        "python -m benchmarks --smoke           # a few seconds: checks every benchmark still runs",
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
    figures = speed.run(
        speed.SMOKE if args.smoke else speed.FULL, profile=not args.smoke, progress=progress
    )
    text = document(
        figures,
        fidelity_section,
        machine(),
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
            f"(target {speed.format_target(figure)})"
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

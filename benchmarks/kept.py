"""What a kept speed mechanism buys: a guarded figure measured with it and without it.

Issue 20: a mechanism that exists only for speed must buy at least 10 % of one of the
guarded figures (:data:`benchmarks.speed.GUARDS`), measured, or go. Each entry of
:data:`KEPT` names the mechanism, the guarded figure it buys and a callable that measures
that figure both ways in one run (alternating, where it can), returning ``(with_it,
without_it)`` in the figure's unit. The benchmark tabulates them in BENCHMARKS.md with the
share each buys: ``(without_it - with_it) / with_it``, how much larger the guarded figure
would be without the mechanism.

To record a mechanism, add an entry to :data:`KEPT`; its callable may switch the
mechanism off however is simplest (a flag of a child process, a monkeypatch, a parameter),
as long as everything else stays the same.
"""

from __future__ import annotations

__all__ = [
    "FIGURES",
    "KEEP_SHARE_MIN",
    "KEPT",
    "RECORDED",
    "Bought",
    "Mechanism",
    "Recorded",
    "markdown",
    "measure",
]

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks import speed

# A mechanism keeps its place when it buys at least this share of a guarded figure.
KEEP_SHARE_MIN = 0.10

# The guarded figures a mechanism may buy, by their key in speed.GUARDS.
FIGURES = {
    "cli": "`advisor recommend` on paris-frankfurt / bare imports",
    "many_sites_time": "30 sites, 435 links x 20,000 samples: time",
    "many_sites_rss": "30 sites, 435 links x 20,000 samples: peak RSS",
    "fleet": "1,000 small topologies, `--jobs 2`: time",
    "ping": "10^6-line ping log: time",
}


@dataclass(frozen=True)
class Mechanism:
    """A speed mechanism the project keeps, and how to measure what it buys."""

    name: str  # what is kept, and where
    figure: str  # the guarded figure it buys: a key of FIGURES (and speed.GUARDS)
    unit: str
    measure: Callable[[speed.Sizes], tuple[float, float]]  # (with it, without it)


@dataclass(frozen=True)
class Bought:
    """One mechanism's measurement, or why there is none."""

    mechanism: Mechanism
    with_it: float = float("nan")
    without_it: float = float("nan")
    error: str = ""  # why it could not be measured

    @property
    def share(self) -> float:
        """How much larger the guarded figure is without the mechanism, relative to it."""
        return (self.without_it - self.with_it) / self.with_it

    @property
    def earns_its_place(self) -> bool:
        return not self.error and self.share >= KEEP_SHARE_MIN


# Mechanisms measured in every run. None today: glibc's freed memory kept for reuse
# (``mallopt``) was the one entry, and on a quiet machine it bought 1 % of the 30-site time and
# 4 % of the fleet's (36.1 against 37.7 s), so it went (issue 20).
KEPT: list[Mechanism] = []


@dataclass(frozen=True)
class Recorded:
    """A kept mechanism measured by hand when it was reviewed (issue 20), not re-run here:
    switching it off needs a change to the code, not a flag."""

    name: str
    figure: str  # a key of FIGURES
    with_it: str
    without_it: str
    share: str
    how: str  # how it was measured


RECORDED: list[Recorded] = [
    Recorded(
        "the garbage collector paused while the command imports (`advisor/cli/startup.py`)",
        "cli",
        "2.35x",
        "2.90x",
        "+23 %",
        "25 alternating pairs against the bare imports, bytecode cached, a loaded host",
    ),
    Recorded(
        "one round for an unlimited warm window (`model.tcp.one_way_ms`)",
        "many_sites_time",
        "1.15 s CPU",
        "1.66 s CPU",
        "+44 %",
        "30 sites, 3 runs each; the engine runs on one thread, so CPU stands for the wall",
    ),
    Recorded(
        "one shared array of probability levels per sample count (`model.rtt._even_probs`)",
        "many_sites_rss",
        "470 MB",
        "535 MB",
        "+14 %",
        "30 sites, peak RSS of the process",
    ),
    Recorded(
        "interpolated distributions read at levels sorted once (`model.rtt.quantiles_at`)",
        "many_sites_time",
        "0.08 s",
        "0.47 s",
        "about +28 % of the run",
        "30 sites under cProfile: np.interp on 20,000 unsorted levels 4.9 ms, sorted 2.0 ms",
    ),
    Recorded(
        "each draw's write-set size kept per sizes given and draws (`engine.workload`)",
        "fleet",
        "2.07 s",
        "2.44 s",
        "+18 %",
        "CPU of 50 fleet topologies in one process (0.37 s of 2.44 s)",
    ),
    Recorded(
        "plain decimals read by `scan.read_numbers`, not `np.loadtxt` (`measurements.samples`)",
        "many_sites_time",
        "0.43 s",
        "1.01 s",
        "+28 % of the 30-site run (2.05 s)",
        "the 435 sample files parsed as the engine reads them (comments allowed), quiet host",
    ),
]


def measure(
    mechanisms: Sequence[Mechanism] = KEPT, sizes: speed.Sizes = speed.FULL
) -> list[Bought]:
    """Each mechanism's guarded figure with and without it; a failed measurement is
    recorded with its error, not raised (a mechanism removed since leaves a row saying so)."""
    bought = []
    for mechanism in mechanisms:
        try:
            with_it, without_it = mechanism.measure(sizes)
        except Exception as error:  # one row's failure must not stop the run
            bought.append(Bought(mechanism, error=f"{type(error).__name__}: {error}"))
            continue
        bought.append(Bought(mechanism, with_it, without_it))
    return bought


def _value(value: float, unit: str) -> str:
    return f"{value:.3g}x" if unit == "x" else f"{value:.3g} {unit}"


def markdown(bought: Sequence[Bought]) -> str:
    """The section of BENCHMARKS.md: one row per kept mechanism."""
    intro = (
        "A mechanism that exists only for speed stays if it buys at least "
        f"{KEEP_SHARE_MIN:.0%} of one guarded figure (issue 20). Each row is measured in this "
        "run, with and without the mechanism (benchmarks/kept.py); share = (without - with) "
        "/ with: how much larger the guarded figure would be without it."
    )
    if not bought:
        return (
            intro
            + "\n\nNo mechanism is measured in the run (benchmarks/kept.py, `KEPT`).\n"
            + (_recorded())
        )
    lines = [
        intro,
        "",
        "| mechanism | guarded figure | with it | without it | share | keeps its place |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for b in bought:
        m = b.mechanism
        figure = FIGURES.get(m.figure, m.figure)
        if b.error:
            lines.append(f"| {m.name} | {figure} | - | - | - | not measured: {b.error} |")
            continue
        verdict = "yes" if b.earns_its_place else f"**no** (under {KEEP_SHARE_MIN:.0%})"
        lines.append(
            f"| {m.name} | {figure} | {_value(b.with_it, m.unit)} "
            f"| {_value(b.without_it, m.unit)} | {b.share:+.1%} | {verdict} |"
        )
    return "\n".join(lines) + "\n" + _recorded()


def _recorded(recorded: Sequence[Recorded] = RECORDED) -> str:
    """The mechanisms measured by hand when they were reviewed: a table of its own."""
    if not recorded:
        return ""
    lines = [
        "",
        "Measured by hand when each mechanism was reviewed (issue 20), not re-run here: "
        "switching one off takes a change to the code.",
        "",
        "| mechanism | guarded figure | with it | without it | share | how measured |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in recorded:
        figure = FIGURES.get(r.figure, r.figure)
        lines.append(
            f"| {r.name} | {figure} | {r.with_it} | {r.without_it} | {r.share} | {r.how} |"
        )
    return "\n".join(lines) + "\n"

"""RTT distributions: equally likely values ("atoms") plus the fraction of probes lost.

An :class:`RttDistribution` is immutable. It holds

- ``values_ms``: sorted, read-only float64 atoms, each equally likely, at least one;
- ``loss``: the fraction of probes that never came back, in [0, 1). Lost probes are *not*
  among the atoms: every probability below (quantile, exceedance) is among delivered probes,
  and the caller decides what a loss costs (at the TCP layer, a retransmission timeout);
- ``basis``: where the atoms come from, which decides how quantiles are read:

  ``"samples"``
      the atoms are real measurements. ``quantile`` is numpy's default (``"linear"``)
      estimator; ``exceedance_probability(t)`` is the empirical fraction of samples above
      ``t``; ``n_samples`` is their number, and ``exceedance_upper_bound`` puts a confidence
      bound on the exceedance, so that 100 clean samples never read as "never".
  ``"percentiles"``
      the distribution is known only through some percentiles (``p50``, ``p99``, ``max``...).
      The quantile function Q(p) is piecewise linear in probability through the given points.
      Tails are honest: below the lowest given percentile Q holds the lowest given value
      (unless ``min`` is given), above the highest it holds the highest value (unless ``max``
      is given); no tail nobody measured is extrapolated. ``quantile`` evaluates Q itself,
      so the quantile at a given key's probability is the given value. Exceedance is the
      interpolated ``1 - F(t)`` with F the inverse of Q; it is 0 at and beyond the highest
      given value: if p99 is the highest key given, nothing beyond p99 is claimed, and the
      top 1 % is read as sitting *at* the p99 value. The atoms are Q at the mid-points of
      ``resolution`` equal probability bins (used by :meth:`RttDistribution.map` and
      :func:`max_of`).
  ``"point"``
      a single known value: quantiles are that value, exceedance is 1 below it, 0 at or above.

:func:`max_of` gives the distribution of the slowest of several independent links (what a
commit that must hear from every member waits for). It keeps ``n_samples`` = the smallest
sample count among the sampled inputs, because that many independent joint draws stand behind
the product of the CDFs; inputs given as percentiles are taken as exact.

Probabilities are fractions (``q`` in [0, 1]); percentile *keys* are percents. Glossary:
``rtt_ms`` round-trip time [ms]; ``t_ms`` a threshold [ms]; ``loss`` fraction of probes lost.
Sources: the Wilson score bound (E. B. Wilson, JASA 1927,
https://doi.org/10.1080/01621459.1927.10502953); with no exceedance the exact bound, about 3/n
at 95 % (the "rule of three": Hanley and Lippman-Hand, JAMA 1983,
https://doi.org/10.1001/jama.1983.03330370053031); the slowest of several links as in Dean and
Barroso, "The Tail at Scale", CACM 2013 (https://doi.org/10.1145/2408776.2408794).
"""

from __future__ import annotations

__all__ = ["Basis", "RttDistribution", "max_of", "parse_percentile_key", "quantiles_at"]

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from statistics import NormalDist
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

Basis = Literal["samples", "percentiles", "point"]
FloatArray = npt.NDArray[np.float64]

_BASES: tuple[str, ...] = get_args(Basis)
# Summary statistics a caller may pass with the percentiles; they are not points of Q.
_NOT_PERCENTILES = frozenset({"mean", "avg"})
_PERCENTILE_KEY = re.compile(r"p(\d+(?:\.\d+)?)")
# max_of evaluates CDFs on at most this many grid points per atom of its result and input.
_GRID_PER_ATOM = 8


def parse_percentile_key(key: str) -> float:
    """The percent a percentile key names [%].

    ``pNN`` is NN %; digits after the first two are decimals (``p999`` = 99.9,
    ``p9999`` = 99.99, the usual monitoring spelling); ``p99.9`` is accepted too.

    >>> [parse_percentile_key(k) for k in ("p50", "p999", "p9999", "p5", "min", "max")]
    [50.0, 99.9, 99.99, 5.0, 0.0, 100.0]
    """
    text = key.strip().lower()
    if text == "min":
        return 0.0
    if text == "max":
        return 100.0
    match = _PERCENTILE_KEY.fullmatch(text)
    if match:
        digits = match.group(1)
        if "." in digits or len(digits) <= 2 or digits == "100":
            percent = float(digits)
        else:
            percent = float(f"{digits[:2]}.{digits[2:]}")
        if percent <= 100.0:
            return percent
    raise ValueError(
        f"unknown percentile key {key!r}; expected min, max or p<percent> "
        "such as p50, p99, p999 (99.9th)"
    )


def _check_loss(loss: float) -> float:
    value = float(loss)
    if not 0.0 <= value < 1.0:  # also rejects NaN
        raise ValueError(f"loss must be a fraction in [0, 1), got {loss!r}")
    return value


def _read_only(values: FloatArray) -> FloatArray:
    values.setflags(write=False)
    return values


@functools.lru_cache(maxsize=8)
def _even_probs(n: int) -> FloatArray:
    """``linspace(0, 1, n)``, read-only and shared: the knots' levels of every distribution
    of n samples (435 links of 20,000 samples held 66 MB of identical copies)."""
    return _read_only(np.linspace(0.0, 1.0, n))


def _sorted(values: FloatArray) -> FloatArray:
    """``np.sort(values)``, without the sort where they are sorted already (a parser read
    them ascending): an array that owns its memory and is read-only is kept, not copied."""
    if not bool((values[1:] >= values[:-1]).all()):
        return np.sort(values)
    if values.base is None and not values.flags.writeable:
        return values
    return values.copy()


def _levels(q: npt.ArrayLike) -> FloatArray:
    if isinstance(q, float):  # one level (most calls): checked without numpy's reductions
        if not 0.0 <= q <= 1.0:  # NaN fails both
            raise ValueError(f"quantile levels must be within [0, 1], got {q!r}")
        return np.asarray(q, dtype=np.float64)
    levels = np.asarray(q, dtype=np.float64)
    if not np.all((levels >= 0.0) & (levels <= 1.0)):  # NaN fails both
        raise ValueError(f"quantile levels must be within [0, 1], got {q!r}")
    return levels


def _thresholds(t_ms: npt.ArrayLike) -> FloatArray:
    if isinstance(t_ms, float):  # one threshold: checked without numpy's reductions
        if t_ms != t_ms:  # NaN
            raise ValueError(f"thresholds must be numbers [ms], got {t_ms!r}")
        return np.asarray(t_ms, dtype=np.float64)
    t = np.asarray(t_ms, dtype=np.float64)
    if np.any(np.isnan(t)):
        raise ValueError(f"thresholds must be numbers [ms], got {t_ms!r}")
    return t


def _out(values: FloatArray) -> FloatArray | float:
    """Scalar in, float out; array in, array out."""
    return float(values) if values.ndim == 0 else values


def _cdf_from_knots(t: FloatArray, probs: FloatArray, values: FloatArray) -> FloatArray:
    """Right-continuous inverse of the piecewise linear Q through (probs, values): P(X <= t).

    A flat run of Q (repeated values) is a jump of F: at the value itself F is the top of
    the jump, just below it the bottom.
    """
    last = values.size - 1
    idx = np.searchsorted(values, t, side="right")  # knots with value <= t
    lo = np.clip(idx - 1, 0, last)
    hi = np.clip(idx, 0, last)
    span = values[hi] - values[lo]
    frac = np.divide(t - values[lo], span, out=np.zeros(np.shape(t)), where=span > 0)
    inside = probs[lo] + frac * (probs[hi] - probs[lo])
    return np.where(idx == 0, 0.0, np.where(idx > last, 1.0, inside))


def _cdf_at(t: float, probs: FloatArray, values: FloatArray) -> float:
    """:func:`_cdf_from_knots` at one threshold, value for value, without array overhead."""
    idx = int(np.searchsorted(values, t, side="right"))
    if idx == 0:
        return 0.0
    if idx > values.size - 1:
        return 1.0
    span = values[idx] - values[idx - 1]
    frac = (t - values[idx - 1]) / span if span > 0 else 0.0
    return float(probs[idx - 1] + frac * (probs[idx] - probs[idx - 1]))


def _wilson_upper(p_hat: FloatArray, n: int, confidence: float) -> FloatArray:
    """One-sided upper confidence bound of a binomial proportion, Wilson score.

    Where nothing exceeded (p_hat = 0), Wilson's z^2/(n + z^2) (2.7/n at 95 %) is known to
    undercover, and the exact Clopper-Pearson bound has a closed form, 1 - (1 - c)^(1/n)
    (the "rule of three", 3.0/n at 95 %): use it there. For 1 to about 5 exceedances Wilson
    is still slightly optimistic (1 in 100 at 95 %: 4.2 % against the exact 4.7 %).
    """
    z = NormalDist().inv_cdf(confidence)
    z2 = z * z
    centre = p_hat + z2 / (2 * n)
    spread = z * np.sqrt(p_hat * (1.0 - p_hat) / n + z2 / (4 * n * n))
    wilson = (centre + spread) / (1.0 + z2 / n)
    exact_zero = 1.0 - (1.0 - confidence) ** (1.0 / n)
    bound = np.where(p_hat == 0.0, exact_zero, np.maximum(wilson, p_hat))  # rounding at p = 1
    return np.clip(bound, 0.0, 1.0)


class RttDistribution:
    """A distribution of round-trip times [ms] among delivered probes, plus a loss fraction.

    Build one with :meth:`from_samples`, :meth:`from_percentiles` or :meth:`point`; the
    constructor is internal. See the module docstring for what each ``basis`` means.
    """

    # __weakref__: figures derived from a distribution may be kept beside it for as long as it
    # lives (membership.tail_risk), as it never changes.
    __slots__ = (
        "__weakref__",
        "_basis",
        "_knot_probs",
        "_knot_values",
        "_loss",
        "_n_samples",
        "_read",
        "_values",
    )

    _basis: Basis
    _knot_probs: FloatArray
    _knot_values: FloatArray
    _loss: float
    _n_samples: int | None
    _read: dict[float, float]
    _values: FloatArray

    def __init__(
        self,
        *,
        values_ms: FloatArray,
        knot_probs: FloatArray,
        knot_values_ms: FloatArray,
        loss: float,
        basis: Basis,
        n_samples: int | None,
    ) -> None:
        # Q(p) is the piecewise linear function through (knot_probs, knot_values_ms), which
        # run from p = 0 to p = 1; for samples the knots are the atoms themselves.
        for name, value in (
            ("_values", _read_only(values_ms)),
            ("_knot_probs", _read_only(knot_probs)),
            ("_knot_values", _read_only(knot_values_ms)),
            ("_loss", _check_loss(loss)),
            ("_basis", basis),
            ("_n_samples", n_samples),
            ("_read", {}),  # level -> quantile, for the levels asked one at a time
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"RttDistribution is immutable; cannot set {name!r}")

    def __repr__(self) -> str:
        p50 = self.quantile(0.5)
        top = self.quantile(1.0)
        return (
            f"RttDistribution(basis={self._basis!r}, atoms={self._values.size}, "
            f"p50={p50:.4g} ms, max={top:.4g} ms, loss={self._loss:g})"
        )

    # -- construction -----------------------------------------------------------------

    @classmethod
    def from_samples(cls, samples_ms: npt.ArrayLike, *, loss: float = 0.0) -> RttDistribution:
        """Measured round trips [ms], in any order; lost probes are counted in ``loss`` only.

        >>> RttDistribution.from_samples([8.3, 8.1, 9.9, 8.2]).quantile(0.5)
        8.25
        """
        try:
            raw = np.atleast_1d(np.asarray(samples_ms, dtype=np.float64))
        except (TypeError, ValueError):
            raise ValueError(f"RTT samples must be numbers [ms], got {samples_ms!r}") from None
        if raw.ndim != 1:
            raise ValueError(f"RTT samples must be one-dimensional, got shape {raw.shape}")
        if raw.size == 0:
            raise ValueError("no RTT samples given; expected at least one value [ms]")
        bad = np.flatnonzero(~np.isfinite(raw) | (raw < 0.0))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"RTT samples must be finite and >= 0 ms, found {float(raw[i])!r} at index {i}"
            )
        values = _sorted(raw)
        if values.size == 1:
            probs, knots = np.array([0.0, 1.0]), np.repeat(values, 2)
        else:
            probs, knots = _even_probs(values.size), values
        return cls(
            values_ms=values,
            knot_probs=probs,
            knot_values_ms=knots,
            loss=loss,
            basis="samples",
            n_samples=int(values.size),
        )

    @classmethod
    def from_percentiles(
        cls,
        percentiles_ms: Mapping[str, float],
        *,
        loss: float = 0.0,
        resolution: int = 2001,
    ) -> RttDistribution:
        """A distribution known by some of its percentiles [ms], e.g. ``{"p50": 4.3, "max": 212}``.

        ``mean`` and ``avg`` are skipped (they are not points of the quantile function).
        ``resolution`` is the number of atoms; odd puts an atom exactly on the median.

        >>> d = RttDistribution.from_percentiles({"p50": 4.0, "p99": 10.0})
        >>> [round(float(v), 9) for v in d.quantile([0.0, 0.5, 0.745, 0.99, 1.0])]
        [4.0, 4.0, 7.0, 10.0, 10.0]
        """
        if not isinstance(resolution, int) or resolution < 1:
            raise ValueError(f"resolution must be a positive integer, got {resolution!r}")
        points: list[tuple[float, str, float]] = []
        for key, value in percentiles_ms.items():
            if key.strip().lower() in _NOT_PERCENTILES:
                continue
            percent = parse_percentile_key(key)
            try:
                rtt_ms = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"{key} must be a number [ms], got {value!r}") from None
            if not (np.isfinite(rtt_ms) and rtt_ms >= 0.0):
                raise ValueError(f"{key} must be a finite number >= 0 ms, got {value!r}")
            points.append((percent, key, rtt_ms))
        if not points:
            raise ValueError(
                f"no percentiles given (keys: {', '.join(percentiles_ms) or 'none'}); "
                "expected e.g. {p50: 4.3, p99: 37.2}"
            )
        points.sort(key=lambda point: point[0])
        for (low_pct, low_key, low), (high_pct, high_key, high) in pairwise(points):
            if high_pct == low_pct and high != low:
                raise ValueError(
                    f"{low_key} ({low:g}) and {high_key} ({high:g}) name the same percentile "
                    "with different values"
                )
            if high < low:
                raise ValueError(
                    f"percentiles must not decrease: {high_key} ({high:g}) < {low_key} ({low:g})"
                )
        probs = np.array(sorted({pct / 100.0 for pct, _, _ in points}))
        values = np.array([next(v for pct, _, v in points if pct / 100.0 == p) for p in probs])
        # Honest tails: hold the outermost given values flat to p = 0 and p = 1.
        if probs[0] > 0.0:
            probs, values = np.r_[0.0, probs], np.r_[values[0], values]
        if probs[-1] < 1.0:
            probs, values = np.r_[probs, 1.0], np.r_[values, values[-1]]
        mids = (np.arange(resolution) + 0.5) / resolution
        atoms = np.interp(mids, probs, values)
        # Keep Q on the union of the given points and the atoms' levels, so that a monotone
        # map (the TCP model) is applied to the exact given values as well as to the atoms.
        grid = _sorted_unique(np.concatenate([probs, mids]))
        return cls(
            values_ms=atoms,
            knot_probs=grid,
            knot_values_ms=np.interp(grid, probs, values),
            loss=loss,
            basis="percentiles",
            n_samples=None,
        )

    @classmethod
    def point(cls, rtt_ms: float, *, loss: float = 0.0) -> RttDistribution:
        """A single known round trip [ms], e.g. a physics estimate."""
        value = float(rtt_ms)
        if not (np.isfinite(value) and value >= 0.0):
            raise ValueError(f"RTT must be a finite number >= 0 ms, got {rtt_ms!r}")
        return cls(
            values_ms=np.array([value]),
            knot_probs=np.array([0.0, 1.0]),
            knot_values_ms=np.array([value, value]),
            loss=loss,
            basis="point",
            n_samples=None,
        )

    # -- attributes -------------------------------------------------------------------

    @property
    def values_ms(self) -> FloatArray:
        """The atoms [ms]: sorted, read-only, equally likely."""
        return self._values

    @property
    def loss(self) -> float:
        """Fraction of probes lost (not among the atoms)."""
        return self._loss

    @property
    def basis(self) -> Basis:
        """``"samples"``, ``"percentiles"`` or ``"point"``: see the module docstring."""
        return self._basis

    @property
    def n_samples(self) -> int | None:
        """How many real samples stand behind the distribution; None for given percentiles."""
        return self._n_samples

    # -- reading ----------------------------------------------------------------------

    def quantile(self, q: npt.ArrayLike) -> FloatArray | float:
        """Q(q) [ms] for levels ``q`` in [0, 1]; non-decreasing in ``q``.

        >>> RttDistribution.from_samples([1.0, 2.0, 3.0, 4.0]).quantile([0.0, 0.5, 1.0]).tolist()
        [1.0, 2.5, 4.0]
        """
        if isinstance(q, float):  # one level (most calls): read once per distribution
            known = self._read.get(q)
            if known is None:
                known = self._read[q] = self._quantile_at(q)
            return known
        levels = _levels(q)
        if levels.ndim == 0:  # a level given as an int or a 0-d array
            return self._quantile_at(float(levels))
        knots = self._knot_values
        if self._basis == "samples" and knots.size > 1:
            # Knots at probabilities linspace(0, 1, n): numpy's "linear" quantile, by index
            # arithmetic (no partition, no search: many levels at once stay cheap).
            position = levels * (knots.size - 1)
            low = np.minimum(position.astype(np.intp), knots.size - 2)
            return _between(knots, low, low + 1, position - low)
        return _out(np.interp(levels, self._knot_probs, knots))

    def _quantile_at(self, q: float) -> float:
        """:meth:`quantile` at one level, the same arithmetic on Python floats."""
        levels = _levels(q)
        knots = self._knot_values
        if self._basis == "samples" and knots.size > 1:
            at = float(levels) * (knots.size - 1)
            index = min(int(at), knots.size - 2)
            below, above = float(knots[index]), float(knots[index + 1])
            return below + (at - index) * (above - below)
        return float(np.interp(levels, self._knot_probs, knots))

    def percentiles_ms(
        self, keys: Iterable[str] = ("p50", "p95", "p99", "p999", "max")
    ) -> dict[str, float]:
        """The named percentiles [ms], e.g. ``{"p50": 4.3, "max": 212.0}``."""
        return {key: float(self.quantile(parse_percentile_key(key) / 100.0)) for key in keys}

    def exceedance_probability(self, t_ms: npt.ArrayLike) -> FloatArray | float:
        """P(RTT > t) among delivered probes, for thresholds ``t_ms`` [ms].

        Samples: the fraction of samples above ``t``. Percentiles: interpolated, and 0 at and
        beyond the highest given value. Point: 1 below the value, 0 from it on.

        >>> RttDistribution.from_samples([1.0, 2.0, 3.0, 4.0]).exceedance_probability(2.0)
        0.5
        """
        t = _thresholds(t_ms)
        if self._basis == "samples":
            below = np.searchsorted(self._values, t, side="right")
            return _out((self._values.size - below) / self._values.size)
        if t.ndim == 0:  # one threshold (the rules ask many): the same arithmetic on scalars
            return 1.0 - _cdf_at(float(t), self._knot_probs, self._knot_values)
        return _out(1.0 - _cdf_from_knots(t, self._knot_probs, self._knot_values))

    def exceedance_upper_bound(
        self, t_ms: npt.ArrayLike, confidence: float = 0.95
    ) -> FloatArray | float:
        """One-sided upper confidence bound on P(RTT > t) [fraction].

        With ``n_samples`` known: the Wilson score bound (the exact 1 - (1 - c)^(1/n), about
        3/n at 95 %, where nothing exceeded). Without (percentiles, point): the point estimate.

        >>> d = RttDistribution.from_samples(range(1, 101))
        >>> round(d.exceedance_upper_bound(100.0), 4)  # none of 100 above: not "never"
        0.0295
        """
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must be within (0, 1), got {confidence!r}")
        p_hat = np.asarray(self.exceedance_probability(t_ms), dtype=np.float64)
        if self._n_samples is None:
            return _out(p_hat)
        return _out(_wilson_upper(p_hat, self._n_samples, confidence))

    # -- transforming -----------------------------------------------------------------

    def map(
        self,
        fn: Callable[[FloatArray], npt.ArrayLike],
        basis: Basis | None = None,
    ) -> RttDistribution:
        """Apply a non-decreasing transform [ms -> ms] to every atom, keeping ``loss``.

        ``fn`` gets a read-only float64 array and must return one of the same shape, finite,
        >= 0 and still sorted (e.g. ``lambda rtt: request_response_ms(49152, 1024, rtt)``).
        ``basis`` relabels the result: ``"percentiles"`` forgets the sample count;
        ``"samples"`` needs one, ``"point"`` needs a single value.
        """
        new_basis = self._basis if basis is None else basis
        if new_basis not in _BASES:
            raise ValueError(f"unknown basis {basis!r}; expected one of {', '.join(_BASES)}")
        size = self._values.size
        if self._knot_values is self._values:
            atoms = knots = _apply(fn, self._values)
        else:
            both = _apply(fn, np.concatenate([self._values, self._knot_values]))
            atoms, knots = both[:size].copy(), both[size:].copy()
        for part in (atoms,) if knots is atoms else (atoms, knots):
            if (part[1:] < part[:-1]).any():
                raise ValueError("the transform must be non-decreasing: its results are unsorted")
        n_samples = self._n_samples
        if new_basis == "samples" and self._basis != "samples":
            raise ValueError(f"cannot relabel a {self._basis!r} distribution as samples")
        if new_basis == "point" and atoms[0] != atoms[-1]:
            raise ValueError("cannot relabel as a point: the atoms differ")
        if new_basis == "percentiles" and self._basis == "samples":
            n_samples = None
        return RttDistribution(
            values_ms=atoms,
            knot_probs=self._knot_probs,
            knot_values_ms=knots,
            loss=self._loss,
            basis=new_basis,
            n_samples=n_samples,
        )

    def shift(self, ms: float) -> RttDistribution:
        """Add ``ms`` [ms] to every value (negative allowed while every value stays >= 0)."""
        offset_ms = float(ms)
        if not np.isfinite(offset_ms):
            raise ValueError(f"shift must be a finite number [ms], got {ms!r}")
        return self.map(lambda values: values + offset_ms)

    def scale(self, factor: float) -> RttDistribution:
        """Multiply every value by ``factor`` (> 0)."""
        ratio = float(factor)
        if not (np.isfinite(ratio) and ratio > 0.0):
            raise ValueError(f"scale factor must be a finite number > 0, got {factor!r}")
        return self.map(lambda values: values * ratio)


def quantiles_at(dists: Sequence[RttDistribution], q: npt.ArrayLike) -> list[FloatArray]:
    """Each distribution's ``quantile`` at the same levels ``q`` [ms], the shared work done once.

    The values are those of ``dist.quantile(q)``: distributions of measured samples with the
    same number of knots share the index arithmetic of the levels (a link's round trips and
    their TCP maps at write-set sizes); the others read ``np.interp`` at the levels in sorted
    order (one argsort for all of them), which walks the knots instead of searching them for
    each level and gives the same value per level.
    """
    levels = np.atleast_1d(_levels(q))
    if levels.ndim != 1:
        raise ValueError(f"quantiles_at takes one-dimensional levels, got shape {levels.shape}")
    positions: dict[int, tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], FloatArray]] = {}
    ordered: list[tuple[npt.NDArray[np.intp], FloatArray]] = []
    out = []
    for dist in dists:
        knots = dist._knot_values
        if dist._basis == "samples" and knots.size > 1:
            if knots.size not in positions:
                position = levels * (knots.size - 1)
                low = np.minimum(position.astype(np.intp), knots.size - 2)
                positions[knots.size] = (low, low + 1, position - low)
            out.append(_between(knots, *positions[knots.size]))
            continue
        if not ordered:
            order = np.argsort(levels)  # equal levels have equal quantiles: any order will do
            ordered.append((order, levels[order]))
        order, sorted_levels = ordered[0]
        values = np.empty(levels.size)
        values[order] = np.interp(sorted_levels, dist._knot_probs, knots)
        out.append(values)
    return out


def _between(
    knots: FloatArray, low: npt.NDArray[np.intp], high: npt.NDArray[np.intp], frac: FloatArray
) -> FloatArray:
    """``below + frac * (above - below)`` between the knots at ``low`` and ``high`` (= low + 1),
    in place on the gathered values (``take``: a third faster than indexing)."""
    below = knots.take(low)
    step = knots.take(high)
    step -= below
    step *= frac
    below += step
    return below


def _apply(fn: Callable[[FloatArray], npt.ArrayLike], values: FloatArray) -> FloatArray:
    values.setflags(write=False)
    result = np.array(fn(values), dtype=np.float64)
    if result.shape != values.shape:
        raise ValueError(
            f"the transform must return one value per input, got shape {result.shape} "
            f"for {values.shape}"
        )
    if not _finite_non_negative(result):
        raise ValueError("the transform must return finite values >= 0 ms")
    return result


def _finite_non_negative(values: FloatArray) -> bool:
    """Whether every value is finite and >= 0: two reductions, no temporaries (a NaN makes
    the minimum NaN, which fails the test)."""
    return values.size == 0 or bool(values.min() >= 0.0 and values.max() < np.inf)


def max_of(dists: Sequence[RttDistribution], *, resolution: int = 2001) -> RttDistribution:
    """Distribution of the maximum of independent draws, one from each of ``dists``.

    CDF of the maximum = product of the CDFs (the slowest of several links). Each CDF is the
    continuous inverse of its quantile function, evaluated on the union of all knots (or of
    8 x ``resolution`` quantiles of a large input, plus the float just below each point, so
    that jumps stay jumps), multiplied, and inverted at the
    mid-points of ``resolution`` probability bins. The result has basis ``"percentiles"``
    (``"point"`` if every input is a point), loss ``1 - prod(1 - loss_i)``, and
    ``n_samples`` the smallest sample count among the sampled inputs.

    >>> uniform = RttDistribution.from_percentiles({"min": 0.0, "max": 10.0})
    >>> round(max_of([uniform, uniform]).quantile(0.25), 3)  # F(t) = (t/10)^2
    5.0
    """
    if not dists:
        raise ValueError("max_of needs at least one distribution")
    if not isinstance(resolution, int) or resolution < 1:
        raise ValueError(f"resolution must be a positive integer, got {resolution!r}")
    if len(dists) == 1:
        return dists[0]
    loss = 1.0 - float(np.prod([1.0 - d.loss for d in dists]))
    low_ms = max(float(d._knot_values[0]) for d in dists)
    high_ms = max(float(d._knot_values[-1]) for d in dists)
    if all(d.basis == "point" for d in dists):
        return RttDistribution.point(high_ms, loss=loss)
    # Each input contributes its knots, or, when it has many (a million samples), its
    # quantiles at _GRID_PER_ATOM x resolution levels: finer than the result can hold.
    fine = np.linspace(0.0, 1.0, _GRID_PER_ATOM * resolution + 1)
    knots = _sorted_unique(
        np.concatenate(
            [
                d._knot_values
                if d._knot_values.size <= fine.size
                else np.interp(fine, d._knot_probs, d._knot_values)
                for d in dists
            ]
        )
    )
    grid = _sorted_unique(np.concatenate([knots, np.nextafter(knots, -np.inf)]))
    cdf = np.ones_like(grid)
    for d in dists:
        cdf *= _cdf_from_knots(grid, d._knot_probs, d._knot_values)
    cdf = np.maximum.accumulate(cdf)  # guard against rounding at segment joins
    levels = (np.arange(resolution) + 0.5) / resolution
    j = np.searchsorted(cdf, levels, side="left")  # first grid point with F >= level
    lo = np.clip(j - 1, 0, grid.size - 1)
    hi = np.clip(j, 0, grid.size - 1)
    rise = cdf[hi] - cdf[lo]
    frac = np.divide(levels - cdf[lo], rise, out=np.zeros_like(levels), where=rise > 0)
    atoms = np.where(j == 0, grid[0], grid[lo] + frac * (grid[hi] - grid[lo]))
    atoms = np.maximum.accumulate(np.clip(atoms, low_ms, high_ms))
    counts = [d.n_samples for d in dists if d.n_samples is not None]
    return RttDistribution(
        values_ms=atoms,
        knot_probs=np.r_[0.0, levels, 1.0],
        knot_values_ms=np.r_[low_ms, atoms, high_ms],
        loss=loss,
        basis="percentiles",
        n_samples=min(counts) if counts else None,
    )


def _sorted_unique(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``np.unique`` of finite values without its import of numpy.ma (about 10 ms of the
    command's start-up): sorted, exact duplicates dropped.

    >>> _sorted_unique(np.array([0.5, 0.1, 0.5, 0.3])).tolist()
    [0.1, 0.3, 0.5]
    """
    ordered = np.sort(values)
    keep = np.empty(ordered.size, dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]

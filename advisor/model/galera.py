"""What Galera does with the network: commit latency, hot rows, windows, tails, lag.

Pure functions over numpy arrays. Sources: ../shared/DOMAIN.md section 3,
../shared/reference/galera.md sections 1 and 2, and this project's measurements on a real
cluster (../shared/calibration/lab-galera.yaml).

**Commit latency.** A write set travels as an EVS "safe" message: it is delivered, and the
commit returns, once every member has heard from every other that it arrived. The lab
cluster shows the wait is the longest path ``w -> k -> j -> w`` over members k and j (j = k
allowed): 1 RTT for two nodes or one far node, 1.5 RTT when all pairs are equally far. The
first leg carries the write set (a TCP round trip at write-set size, measured or modelled,
less the small return leg); the others carry small acknowledgements. With ``gmcast.segment``
per site a remote segment's relay node adds a LAN hop. The draws are Monte Carlo with common
random numbers: each link's round trip is drawn once per draw and used on every path through
it, so a slow moment of one link slows every path it is on. Local certification and commit
add :data:`LOCAL_COMMIT_MS`.

**Callaghan's law.** A row cannot change more than once per commit: at most
``1 / commit latency`` updates per second, whatever the hardware.
"""

from __future__ import annotations

__all__ = [
    "DRAWS",
    "LOCAL_COMMIT_MS",
    "Cluster",
    "PairDraws",
    "async_lag_ms",
    "callaghan_bound_per_s",
    "closed_loop",
    "commit_latency_draws",
    "conflict_probability",
    "conflict_rate_per_s",
    "draw_pair",
    "hot_row_queue_ms",
    "in_step_commit_draws",
    "size_uniforms",
    "uniforms",
]

import os
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor.model.rtt import RttDistribution

FloatArray = npt.NDArray[np.float64]

# Draws per Monte Carlo evaluation: p99.9 then rests on 20 draws beyond it.
DRAWS = 20_000
# Local certification and commit on the writer [ms]: the lab's commits took 1.5 RTT "plus
# about 1 ms of local work" (lab-galera.yaml notes; innodb_flush_log_at_trx_commit=2).
LOCAL_COMMIT_MS = 1.0
_SEED = 20_261_122


@dataclass(frozen=True)
class Cluster:
    """One Galera cluster: how many voting members sit at each site (garbd included)."""

    members: Mapping[str, int]  # site -> data nodes + arbitrators there
    segments: bool = True  # gmcast.segment per site, as the advisor recommends

    @property
    def sites(self) -> list[str]:
        return [site for site, count in self.members.items() if count > 0]


PairDraws = Callable[[str, str], tuple[FloatArray, FloatArray]]
"""(a, b) -> draws of (small-message RTT, write-set round trip) [ms] between two sites, or
inside one site when a == b; the same draws for a pair in every evaluation. Called from two
threads at once for a large cluster."""

# Draws are reduced in blocks of at most this many (members x members x draws) values, so
# that a 30-site cluster's temporaries take a few MB; a small cluster takes all its draws.
_BLOCK_VALUES = 2**21
# Threads sharing a large cluster's pair draws and longest paths (the machine's cores, at
# most this many), and the fewest pairs (the diagonal included) drawn on threads.
_THREADS = 2
_THREADED_PAIRS = 64


def _threads() -> int:
    """Threads for a large cluster's work: the machine's cores, at most :data:`_THREADS`."""
    return min(os.cpu_count() or 1, _THREADS)


def uniforms(a: str, b: str, draws: int) -> FloatArray:
    """The same random levels for a pair in every evaluation (common random numbers)."""
    key = "|".join(sorted((a, b)))
    rng = np.random.default_rng([_SEED, zlib.crc32(key.encode())])
    return rng.random(draws)


def size_uniforms(draws: int) -> FloatArray:
    """The random levels of each draw's write-set size: a stream of its own (a seed of
    another length than any pair's), the same in every evaluation."""
    return np.random.default_rng([_SEED, 0, 0]).random(draws)


def draw_pair(
    small: RttDistribution, writeset: RttDistribution, u: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Draws of a pair's two round trips at the same levels ``u`` [ms], as float32."""
    return (
        np.asarray(small.quantile(u), dtype=np.float32),
        np.asarray(writeset.quantile(u), dtype=np.float32),
    )


class _Draws:
    """A cluster's pair draws, pair-major with the draws last (``[i][j]`` is one row)."""

    def __init__(self, cluster: Cluster, pair_draws: PairDraws) -> None:
        sites = cluster.sites
        n = len(sites)
        pairs = [(i, j) for i in range(n) for j in range(i, n)]

        def draw(pair: tuple[int, int]) -> tuple[FloatArray, FloatArray]:
            return pair_draws(sites[pair[0]], sites[pair[1]])

        threads = _threads() if len(pairs) >= _THREADED_PAIRS else 1
        if threads > 1:
            # The pairs are independent and mostly numpy work: both cores draw them.
            from concurrent.futures import ThreadPoolExecutor  # only for large clusters

            # In a few runs of pairs each, not one task per pair (a task costs tens of us).
            size = -(-len(pairs) // (4 * threads))
            runs = [pairs[start : start + size] for start in range(0, len(pairs), size)]
            with ThreadPoolExecutor(max_workers=threads) as pool:
                done = pool.map(lambda run: [draw(pair) for pair in run], runs)
                drawn = dict(zip(pairs, (d for run in done for d in run), strict=True))
        else:
            drawn = {pair: draw(pair) for pair in pairs}
        rows = [[drawn[(min(i, j), max(i, j))] for j in range(n)] for i in range(n)]
        self.small = [[np.asarray(r[0], dtype=np.float32) for r in row] for row in rows]
        self.writeset = [[np.asarray(r[1], dtype=np.float32) for r in row] for row in rows]
        self.size = self.small[0][0].size

    def halves(self, counts: npt.NDArray[np.int_], block: slice) -> npt.NDArray[np.float32]:
        """(s, s, b) halved small round trips over one block of draws, contiguous; the
        diagonal (a hop inside a site) 0 where the site has fewer than two members.

        Built block by block, never for all the draws at once: a 30-site cluster's
        (s, s, draws) array was 72 MB of fresh pages for every evaluation, and the block
        of such an array a strided view whose max-plus square took twice as long."""
        n = len(self.small)
        size = len(range(*block.indices(self.size)))
        half = np.empty((n, n, size), dtype=np.float32)
        for i in range(n):
            row = self.small[i]
            for j in range(i, n):
                np.multiply(row[j][block], np.float32(0.5), out=half[i, j])
            half[i, i] *= np.float32(1.0 if counts[i] >= 2 else 0.0)
            half[i + 1 :, i] = half[i, i + 1 :]  # symmetric: row i's pairs, copied once
        return half


def commit_latency_draws(
    cluster: Cluster,
    writers: Sequence[str],
    pair_draws: PairDraws,
    *,
    local_commit_ms: float = LOCAL_COMMIT_MS,
    relay_ms: Mapping[str, float] | None = None,
) -> dict[str, FloatArray]:
    """Commit latency draws [ms] for writers at each of ``writers`` (sites of ``cluster``).

    The wait is the longest path ``w -> k -> j -> w`` over members k, j other than the
    committing node (j = k allowed; two different members of one site are a LAN hop apart).
    ``relay_ms[site]`` is the extra relay hop into a remote segment (default: that site's
    LAN p50 when the cluster uses segments). Cost: O(draws x sites^2) per writer, in blocks.
    """
    sites = cluster.sites
    n = len(sites)
    counts = np.array([cluster.members[s] for s in sites])
    drawn = _Draws(cluster, pair_draws)
    idx = np.arange(n)
    relay = _relays(cluster, drawn, relay_ms)
    hops = n > 1 or counts[0] > 1  # another member to hear from
    result = {}
    paths = {}
    for writer in writers:
        w = sites.index(writer)
        if (counts - (idx == w)).sum() == 0 or not hops:  # a lone node commits locally
            result[writer] = np.full(drawn.size, local_commit_ms)
        else:
            paths[writer] = w
    if hops and paths:
        longest = _longest_paths_shared if _share_two_hops(n, len(paths)) else _longest_paths
        drawn_paths = longest(drawn, list(paths.values()), counts, relay)
        for writer, draws in zip(paths, drawn_paths, strict=True):
            result[writer] = draws + local_commit_ms
    return {writer: result[writer] for writer in writers}


def _relays(
    cluster: Cluster, drawn: _Draws, relay_ms: Mapping[str, float] | None
) -> npt.NDArray[np.float32]:
    """Each site's relay hop into its segment [ms]: ``relay_ms``, by default the site's LAN
    median; none without segments."""
    sites = cluster.sites
    if relay_ms is None:
        relay_ms = {s: float(np.median(drawn.small[i][i])) for i, s in enumerate(sites)}
    return np.array([relay_ms[s] if cluster.segments else 0.0 for s in sites], dtype=np.float32)


def _share_two_hops(sites: int, writers: int) -> bool:
    """Whether the two-hop maxima of every site pair, computed once for all writers (half
    the work of one writer's own, by symmetry), cost less than each writer's own."""
    return sites >= 3 and 2 * writers > sites


def _longest_paths(
    drawn: _Draws,
    writers: Sequence[int],
    counts: npt.NDArray[np.int_],
    relay: npt.NDArray[np.float32],
) -> list[FloatArray]:
    """Each writer's longest paths on its own (:func:`_writer_paths`), block by block of
    draws, each block's halves built once for all the writers."""
    n = len(counts)
    idx = np.arange(n)
    out = [np.empty(drawn.size) for _ in writers]
    step = max(_BLOCK_VALUES // (n * n), 256)
    inner = np.empty((n, min(drawn.size, step)), dtype=np.float32)
    for start in range(0, drawn.size, step):
        block = slice(start, start + step)
        half = drawn.halves(counts, block)
        for number, w in enumerate(writers):
            out[number][block] = _writer_paths(
                drawn.small[w], drawn.writeset[w], half, w, counts - (idx == w), relay, block, inner
            )
    return out


def _writer_paths(
    small_w: Sequence[npt.NDArray[np.float32]],
    writeset_w: Sequence[npt.NDArray[np.float32]],
    half: npt.NDArray[np.float32],
    w: int,
    others: npt.NDArray[np.int_],
    relay: npt.NDArray[np.float32],
    block: slice,
    inner: npt.NDArray[np.float32],
) -> npt.NDArray[np.float32]:
    """max over k, j of first(w, k) + half(k, j) + half(j, w) over one block of draws.

    ``small_w[k]`` and ``writeset_w[k]`` are the round trips w-k; ``half`` is the block's
    (s, s, b) halves; ``inner`` room for (s, b) values.
    """
    rest = np.arange(len(others)) != w
    s_w, first, back = _legs(small_w, writeset_w, w, others, relay, block)
    size = back.shape[1]
    np.max(half + back[None, :, :], axis=1, out=inner[:, :size])
    _own_row(half[w, rest], s_w, back, w, others, rest, inner[w, :size])
    found: npt.NDArray[np.float32] = (first + inner[:, :size]).max(axis=0)
    return found


def _legs(
    small_w: Sequence[npt.NDArray[np.float32]],
    writeset_w: Sequence[npt.NDArray[np.float32]],
    w: int,
    others: npt.NDArray[np.int_],
    relay: npt.NDArray[np.float32],
    block: slice,
) -> tuple[npt.NDArray[np.float32], ...]:
    """Writer w's legs over one block of draws: its small round trips to each member's site
    (``s_w``), the write set's first leg w -> k with k's relay (round trip less the small
    return half), and the small return half k -> w; both legs ``-inf`` toward a site with
    no other member (``others``)."""
    usable = others > 0
    relay_w = relay.copy()
    relay_w[w] = 0.0
    s_w = np.stack([row[block] for row in small_w])
    first = np.stack([row[block] for row in writeset_w]) - s_w * np.float32(0.5)
    first += relay_w[:, None]
    back = s_w * np.float32(0.5)
    first[~usable] = -np.inf
    back[~usable] = -np.inf
    return s_w, first, back


def _own_row(
    half_w_rest: npt.NDArray[np.float32],
    s_w: npt.NDArray[np.float32],
    back: npt.NDArray[np.float32],
    w: int,
    others: npt.NDArray[np.int_],
    rest: npt.NDArray[np.bool_],
    out: npt.NDArray[np.float32],
) -> None:
    """Row w of the path's middle, into ``out``: through another site, or the LAN hop
    inside w's own site, which needs two other members there."""
    own_lan = np.float32(0.5 if others[w] >= 2 else 0.0)
    np.maximum(
        (half_w_rest + back[rest]).max(axis=0, initial=-np.inf),
        s_w[w] * own_lan + back[w],
        out=out,
    )


def _longest_paths_shared(
    drawn: _Draws,
    writers: Sequence[int],
    counts: npt.NDArray[np.int_],
    relay: npt.NDArray[np.float32],
    *,
    in_step: bool = False,
) -> list[FloatArray]:
    """Every writer's longest paths, as :func:`_writer_paths` computes them, value for value
    (with ``in_step``, the waits of writers in step: :func:`in_step_commit_draws`).

    For a writer w and a member k != w, the middle of the path is ``max_j half(k, j) +
    back(j)``, where ``back(j)`` is bit for bit ``half(j, w)`` for j != w. The term j = w
    differs only on the diagonal: where w's site has two members ``half(w, w)`` is its
    ``back(w)``; where it has one, the writer's own term is left out (``back(w) = -inf``)
    while ``half(k, w) + half(w, w) = half(k, w) + 0`` is at most the term j = k,
    ``half(k, k) + half(k, w)`` (rounding is monotone). So the middle is the max-plus
    square ``two(k, w) = max_j half(k, j) + half(j, w)``, the same for both ends of a
    pair (``half`` is symmetric and a + b == b + a): computed once for all writers.
    """
    n, draws = len(counts), drawn.size
    idx = np.arange(n)
    out = [np.empty(draws) for _ in writers]
    step = max(_BLOCK_VALUES // (n * n), 256)
    blocks = [slice(start, start + step) for start in range(0, draws, step)]
    threads = _threads() if len(blocks) >= 2 * _THREADS else 1

    def paths_of(block: slice) -> list[npt.NDArray[np.float32]]:
        return _block_paths(drawn, writers, counts, relay, idx, block, in_step)

    if threads > 1:
        # Blocks are independent and their numpy work releases the GIL: both cores, in blocks
        # half as large, so that the temporaries in flight take no more memory than one.
        step = max(step // threads, 256)
        blocks = [slice(start, start + step) for start in range(0, draws, step)]
        from concurrent.futures import ThreadPoolExecutor  # only for large clusters

        with ThreadPoolExecutor(max_workers=threads) as pool:
            found = list(pool.map(paths_of, blocks))
    else:
        found = [paths_of(block) for block in blocks]
    for block, paths in zip(blocks, found, strict=True):
        for number, values in enumerate(paths):
            out[number][block] = values
    return out


def _block_paths(
    drawn: _Draws,
    writers: Sequence[int],
    counts: npt.NDArray[np.int_],
    relay: npt.NDArray[np.float32],
    idx: npt.NDArray[np.int_],
    block: slice,
    in_step: bool = False,
) -> list[npt.NDArray[np.float32]]:
    """The longest paths of every writer over one block of draws (with ``in_step``, of the
    writers in step with each other)."""
    h = drawn.halves(counts, block)
    two = _max_plus_square(h)
    # From each writer site into each member's segment (through its relay): the first
    # covering message a member hears from a writer site other than w.
    heard_of = _least_of_others(h[list(writers)] + relay[None, :, None]) if in_step else []
    found = []
    for number, w in enumerate(writers):
        others = counts - (idx == w)
        s_w, first, back = _legs(drawn.small[w], drawn.writeset[w], w, others, relay, block)
        inner = two[:, w].copy()
        rest = idx != w
        _own_row(h[w, rest], s_w, back, w, others, rest, inner[w])
        if not in_step:
            found.append((first + inner).max(axis=0))
            continue
        heard = heard_of[number]
        leave = first if heard is None else np.minimum(first, heard)
        leave[[p for p in writers if p != w]] = 0.0  # the members in step send at once
        leave[others <= 0] = -np.inf
        found.append(np.maximum((leave + inner).max(axis=0), (first + back).max(axis=0)))
    return found


def _least_of_others(
    values: npt.NDArray[np.float32],
) -> list[npt.NDArray[np.float32] | None]:
    """For each i along axis 0 of (k, ...), the least of the others (None when k == 1):
    prefix and suffix minima, one elementwise minimum each (numpy's accumulate and argmin
    along the first axis take several times as long)."""
    count = len(values)
    before: list[npt.NDArray[np.float32] | None] = [None]
    for i in range(1, count):
        last = before[-1]
        before.append(values[i - 1] if last is None else np.minimum(last, values[i - 1]))
    after: list[npt.NDArray[np.float32] | None] = [None]
    for i in range(count - 2, -1, -1):
        last = after[-1]
        after.append(values[i + 1] if last is None else np.minimum(last, values[i + 1]))
    after.reverse()
    return [
        b if a is None else a if b is None else np.minimum(b, a)
        for b, a in zip(before, after, strict=True)
    ]


def _max_plus_square(h: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """(s, s, b): ``two[k, w] = max_j h[k, j] + h[j, w]`` for a symmetric ``h``; each pair
    once (row k against the rows w >= k, as h[j, w] = h[w, j])."""
    n = h.shape[0]
    two = np.empty_like(h)
    for k in range(n):
        two[k, k:] = (h[k][None, :, :] + h[k:]).max(axis=1)
        two[k + 1 :, k] = two[k, k + 1 :]
    return two


def callaghan_bound_per_s(commit_ms: npt.ArrayLike) -> FloatArray | float:
    """Most updates per second one row can take: one per commit [1/s]."""
    return 1000.0 / np.asarray(commit_ms, dtype=float)


def hot_row_queue_ms(rate_per_s: float, commit_ms: float) -> tuple[float, float]:
    """Utilisation ``rate * latency`` and the mean M/D/1 wait [ms] for a hot row's lock.

    Each update holds the row for one commit latency (deterministic service); Pollaczek-
    Khinchine gives ``W = rho * T / (2 (1 - rho))``; infinite at rho >= 1.
    """
    rho = rate_per_s * commit_ms / 1000.0
    wait = float("inf") if rho >= 1 else rho * commit_ms / (2 * (1 - rho))
    return rho, wait


def conflict_probability(
    others_per_s: npt.ArrayLike, window_ms: npt.ArrayLike
) -> FloatArray | float:
    """Chance that an update loses certification to updates of the same row elsewhere.

    It fails when another member committed the row within its conflict window (about one
    commit latency); with Poisson arrivals at ``others_per_s`` the chance is
    ``1 - exp(-others_per_s * window)``.
    """
    rate = np.asarray(others_per_s, dtype=float)
    chance: FloatArray = 1.0 - np.exp(-rate * np.asarray(window_ms, dtype=float) / 1000.0)
    return chance


def conflict_rate_per_s(rates_per_s: Sequence[float], window_ms: Sequence[float]) -> float:
    """Certification conflicts per second for one row written from several members."""
    rates = np.asarray(rates_per_s, dtype=float)
    return float(np.sum(rates * conflict_probability(rates.sum() - rates, window_ms)))


def closed_loop(
    clients: int, baseline_ms: float, added_ms: npt.ArrayLike, cap_per_s: float = float("inf")
) -> tuple[float, FloatArray]:
    """A closed population of ``clients``: throughput [1/s] and transaction latency [ms].

    Each client waits for its transaction: ``X = min(N / (baseline + added), cap)``; when the
    cap binds the latency grows so that ``N = X * latency`` (Little's law).
    """
    latency = baseline_ms + np.asarray(added_ms, dtype=float)
    open_rate = clients / (float(np.mean(latency)) / 1000.0)
    rate = min(open_rate, cap_per_s)
    stretch = open_rate / rate if rate > 0 else float("inf")
    return rate, latency * stretch


def async_lag_ms(rtt_ms: float, apply_ms: float = LOCAL_COMMIT_MS) -> float:
    """Asynchronous replication lag [ms]: half a round trip to ship, plus applying it."""
    return rtt_ms / 2.0 + apply_ms


def in_step_commit_draws(
    cluster: Cluster,
    writers: Sequence[str],
    pair_draws: PairDraws,
    *,
    local_commit_ms: float = LOCAL_COMMIT_MS,
    relay_ms: Mapping[str, float] | None = None,
) -> dict[str, FloatArray]:
    """Commit latency draws [ms] at each of ``writers`` while a member at each other writer
    site sends its own message in step with it: one row written at several sites.

    EVS delivers a message safe once every member has reported an all-received-up-to seqno
    (aru) that covers it, and a member reports its aru as soon as it changes: on its own
    message, on the completing message it sends when it sees a higher seqno with nothing of
    its own queued, or on an empty gap message (``handle_user``, ``complete_user`` and
    ``send_user`` in gcomm/src/evs_proto.cpp). An idle member's completion leaves only when
    the write set reaches it, so a lone writer waits the path ``w -> k -> j -> w`` (1.5 RTT
    on equal links). A member whose client the row's last commit aborted retries at once:
    its next write set takes the seqno the writer's own takes, covers it without a
    completion round, and the writer waits about one round trip. The lab: a lone writer's
    p50 of 31.6 ms at RTT 20 and 61.5 at RTT 40 fell to 22.0 and 42.3 with closed-loop
    writers on the peers (benchmarks/calibration/lab-runs.yaml lone-writer-with-busy-peers).

    Each member k's covering message leaves at 0 at another writer site, or, elsewhere,
    when the first message that covers the seqno reaches it (the write set, or a writer
    site's message); the wait is the longest of ``leave(k) + k -> j -> w`` and of the write
    set's own path ``w -> j -> w``. A writer alone among ``writers`` gets the lone path.
    """
    sites = cluster.sites
    writer_sites = [sites.index(w) for w in dict.fromkeys(writers)]
    if len(writer_sites) < 2:
        return commit_latency_draws(
            cluster, writers, pair_draws, local_commit_ms=local_commit_ms, relay_ms=relay_ms
        )
    counts = np.array([cluster.members[s] for s in sites])
    drawn = _Draws(cluster, pair_draws)
    relay = _relays(cluster, drawn, relay_ms)
    paths = _longest_paths_shared(drawn, writer_sites, counts, relay, in_step=True)
    result = {
        sites[w]: draws + local_commit_ms for w, draws in zip(writer_sites, paths, strict=True)
    }
    return {w: result[w] for w in writers}

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
    "callaghan_bound_per_s",
    "commit_latency_draws",
    "conflict_probability",
    "conflict_rate_per_s",
    "fast_retransmit_delay_draws",
    "hot_row_queue_ms",
    "in_step_commit_draws",
    "lock_wait_draws",
    "retransmission_delay_draws",
    "size_uniforms",
    "uniforms",
]

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor.model.tcp import RTO_MIN_MS

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
inside one site when a == b; the same draws for a pair in every evaluation."""

# Draws are reduced in blocks of at most this many (sites x sites x draws) values, so that a
# 30-site cluster's temporaries take a few MB instead of 72 MB of fresh pages per writer.
_BLOCK_VALUES = 2**21


def uniforms(a: str, b: str, draws: int) -> FloatArray:
    """The random levels of a pair's draws: the same in every evaluation.

    Parameters
    ----------
    a, b : str
        The pair's sites, in either order (``a == b``: inside one site).
    draws : int
        Number of Monte Carlo draws.

    Returns
    -------
    numpy.ndarray
        ``draws`` levels in [0, 1) (common random numbers: a link is drawn at the same levels
        on every path through it).
    """
    key = "|".join(sorted((a, b)))
    rng = np.random.default_rng([_SEED, zlib.crc32(key.encode())])
    return rng.random(draws)


def stream_uniforms(name: str, stream: int, draws: int) -> FloatArray:
    """The random levels of a named stream of its own (``stream`` 1: a link's lone losses,
    2: a hot row's arrivals, 3: a link's fast retransmits, 4: a client's statement to the
    writer), the same in every evaluation.

    Parameters
    ----------
    name : str
        What the stream belongs to (a pair's key, a row's name).
    stream : int
        Which kind of stream: 1 lone losses, 2 arrivals, 3 fast retransmits, 4 a client's
        statement.
    draws : int
        Number of Monte Carlo draws.

    Returns
    -------
    numpy.ndarray
        ``draws`` levels in [0, 1).
    """
    return stream_rng(name, stream).random(draws)


def stream_rng(name: str, stream: int) -> np.random.Generator:
    """The generator of a named stream of its own (:func:`stream_uniforms`; stream 5: a
    member's CPU periods, :meth:`advisor.model.cpu_quota.CpuQuota.stall_draws`), seeded
    alike in every evaluation."""
    return np.random.default_rng([_SEED, zlib.crc32(name.encode()), stream])


def size_uniforms(draws: int) -> FloatArray:
    """The random levels of each draw's write-set size.

    Parameters
    ----------
    draws : int
        Number of Monte Carlo draws.

    Returns
    -------
    numpy.ndarray
        ``draws`` levels in [0, 1): a stream of its own (a seed of another length than any
        pair's), the same in every evaluation.
    """
    return np.random.default_rng([_SEED, 0, 0]).random(draws)


class _Draws:
    """A cluster's pair draws as float32 rows: ``small[i][j]`` and ``writeset[i][j]`` are
    the round trips between sites i and j [ms] (i == j: inside site i)."""

    def __init__(self, cluster: Cluster, pair_draws: PairDraws) -> None:
        sites = cluster.sites
        n = len(sites)
        drawn = {(i, j): pair_draws(sites[i], sites[j]) for i in range(n) for j in range(i, n)}
        rows = [[drawn[(min(i, j), max(i, j))] for j in range(n)] for i in range(n)]
        self.small = [[np.asarray(r[0], dtype=np.float32) for r in row] for row in rows]
        self.writeset = [[np.asarray(r[1], dtype=np.float32) for r in row] for row in rows]
        self.size = self.small[0][0].size

    def halves(self, counts: npt.NDArray[np.int_], block: slice) -> npt.NDArray[np.float32]:
        """(s, s, b) halved small round trips over one block of draws; the diagonal (a hop
        inside a site) 0 where the site has fewer than two members."""
        n = len(self.small)
        size = len(range(*block.indices(self.size)))
        half = np.empty((n, n, size), dtype=np.float32)
        for i in range(n):
            for j in range(n):
                np.multiply(self.small[i][j][block], np.float32(0.5), out=half[i, j])
            half[i, i] *= np.float32(1.0 if counts[i] >= 2 else 0.0)
        return half


def commit_latency_draws(
    cluster: Cluster,
    writers: Sequence[str],
    pair_draws: PairDraws,
    *,
    relay_ms: Mapping[str, float] | None = None,
) -> dict[str, FloatArray]:
    """The network part of a lone writer's commit at each of ``writers``, draw by draw.

    The wait is the longest path ``w -> k -> j -> w`` over members k, j other than the
    committing node (j = k allowed; two different members of one site are a LAN hop apart);
    a lone node waits for nobody (0). The local certification and commit
    (:data:`LOCAL_COMMIT_MS`) and the send windows' rounds come on top
    (:func:`advisor.model.pipeline.pipeline_commit_ms`). Cost: O(draws x sites^2) per
    writer, in blocks of draws.

    Parameters
    ----------
    cluster : Cluster
        The cluster's voting members per site.
    writers : sequence of str
        Sites of ``cluster`` whose commits are drawn.
    pair_draws : PairDraws
        The round-trip draws of each pair of the cluster's sites [ms].
    relay_ms : mapping of str to float, optional
        Each site's relay hop into its segment [ms]; by default its LAN median when the
        cluster uses segments.

    Returns
    -------
    dict of str to numpy.ndarray
        Per writer site, the longest path of each draw [ms].
    """
    return _commit_draws(cluster, writers, pair_draws, relay_ms, in_step=False)


def in_step_commit_draws(
    cluster: Cluster,
    writers: Sequence[str],
    pair_draws: PairDraws,
    *,
    relay_ms: Mapping[str, float] | None = None,
) -> dict[str, FloatArray]:
    """The network part of the commit at each of ``writers`` while a member at each other
    writer site sends its own message in step with it: one row written at several sites.

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

    Parameters and Returns are those of :func:`commit_latency_draws`.
    """
    in_step = len(set(writers)) >= 2
    return _commit_draws(cluster, writers, pair_draws, relay_ms, in_step=in_step)


def _commit_draws(
    cluster: Cluster,
    writers: Sequence[str],
    pair_draws: PairDraws,
    relay_ms: Mapping[str, float] | None,
    *,
    in_step: bool,
) -> dict[str, FloatArray]:
    """Both commit paths: a lone node waits for nobody; the others their longest path."""
    sites = cluster.sites
    counts = np.array([cluster.members[s] for s in sites])
    drawn = _Draws(cluster, pair_draws)
    result = {}
    waiting = []
    for writer in dict.fromkeys(writers):
        w = sites.index(writer)
        if counts.sum() - 1 == 0:  # a lone node: nobody to hear from
            result[writer] = np.zeros(drawn.size)
        else:
            waiting.append(w)
    if waiting:
        relay = _relays(cluster, drawn, relay_ms)
        paths = _longest_paths(drawn, waiting, counts, relay, in_step=in_step)
        for w, draws in zip(waiting, paths, strict=True):
            result[sites[w]] = draws
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


def _longest_paths(
    drawn: _Draws,
    writers: Sequence[int],
    counts: npt.NDArray[np.int_],
    relay: npt.NDArray[np.float32],
    *,
    in_step: bool,
) -> list[FloatArray]:
    """Each writer's wait, block by block of draws (each block's halves built once for all
    the writers): the lone writer's longest path, or with ``in_step`` the wait of writers
    in step with each other (:func:`in_step_commit_draws`)."""
    n = len(counts)
    out = [np.empty(drawn.size) for _ in writers]
    step = max(_BLOCK_VALUES // (n * n), 256)
    for start in range(0, drawn.size, step):
        block = slice(start, start + step)
        half = drawn.halves(counts, block)
        for number, w in enumerate(writers):
            wait = _writer_wait(drawn, half, w, writers, counts, relay, block, in_step)
            out[number][block] = wait
    return out


def _writer_wait(
    drawn: _Draws,
    half: npt.NDArray[np.float32],
    w: int,
    writers: Sequence[int],
    counts: npt.NDArray[np.int_],
    relay: npt.NDArray[np.float32],
    block: slice,
    in_step: bool,
) -> npt.NDArray[np.float32]:
    """Writer w's wait over one block of draws [ms]: ``max_k first(k) + middle(k)``, where
    ``first(k)`` is the write set's leg w -> k and ``middle(k) = max_j half(k, j) +
    half(j, w)``: the longest path ``w -> k -> j -> w``."""
    others = counts - (np.arange(len(counts)) == w)
    s_w, first, back = _legs(drawn, w, others, relay, block)
    middle = np.max(half + back[None, :, :], axis=1)
    middle[w] = _own_row(half[w], s_w, back, w, others)
    if not in_step:
        found: npt.NDArray[np.float32] = (first + middle).max(axis=0)
        return found
    # The first covering message each member hears from another writer site: the least of
    # those sites' halved round trips into the member's segment (through its relay).
    fellows = [p for p in writers if p != w]
    heard = np.min(half[fellows] + relay[None, :, None], axis=0)
    leave = np.minimum(first, heard)
    leave[fellows] = 0.0  # the members in step send at once
    leave[others <= 0] = -np.inf
    waited: npt.NDArray[np.float32] = np.maximum(
        (leave + middle).max(axis=0), (first + back).max(axis=0)
    )
    return waited


def _legs(
    drawn: _Draws,
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
    s_w = np.stack([row[block] for row in drawn.small[w]])
    first = np.stack([row[block] for row in drawn.writeset[w]]) - s_w * np.float32(0.5)
    first += relay_w[:, None]
    back = s_w * np.float32(0.5)
    first[~usable] = -np.inf
    back[~usable] = -np.inf
    return s_w, first, back


def _own_row(
    half_w: npt.NDArray[np.float32],
    s_w: npt.NDArray[np.float32],
    back: npt.NDArray[np.float32],
    w: int,
    others: npt.NDArray[np.int_],
) -> npt.NDArray[np.float32]:
    """The middle of the paths whose first leg stays in w's own site: on through another
    site, or the LAN hop to a second other member there (which needs two other members)."""
    rest = np.arange(len(others)) != w
    own_lan = np.float32(0.5 if others[w] >= 2 else 0.0)
    through: npt.NDArray[np.float32] = np.maximum(
        (half_w[rest] + back[rest]).max(axis=0, initial=-np.inf), s_w[w] * own_lan + back[w]
    )
    return through


def callaghan_bound_per_s(commit_ms: npt.ArrayLike) -> FloatArray | float:
    """Most updates per second one row can take: one per commit (Callaghan's law).

    Parameters
    ----------
    commit_ms : array_like
        Commit latency [ms].

    Returns
    -------
    numpy.ndarray or float
        The bound [updates/s]: ``1000 / commit_ms``.
    """
    return 1000.0 / np.asarray(commit_ms, dtype=float)


def hot_row_queue_ms(rate_per_s: float, commit_ms: float) -> tuple[float, float]:
    """Utilisation and the mean wait for a hot row's lock, as an M/D/1 queue.

    Each update holds the row for one commit latency (deterministic service); Pollaczek-
    Khinchine gives ``W = rho * T / (2 (1 - rho))``; infinite at rho >= 1.

    Parameters
    ----------
    rate_per_s : float
        Updates of the row [1/s], Poisson arrivals.
    commit_ms : float
        Commit latency, the time each update holds the row [ms].

    Returns
    -------
    tuple of float
        Utilisation ``rho = rate * commit`` [1] and the mean wait for the lock [ms].
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

    Parameters
    ----------
    others_per_s : array_like
        Updates of the same row at the other members [1/s].
    window_ms : array_like
        The conflict window [ms].

    Returns
    -------
    numpy.ndarray or float
        The probability [0, 1].
    """
    rate = np.asarray(others_per_s, dtype=float)
    chance: FloatArray = 1.0 - np.exp(-rate * np.asarray(window_ms, dtype=float) / 1000.0)
    return chance


def conflict_rate_per_s(rates_per_s: Sequence[float], window_ms: Sequence[float]) -> float:
    """Certification conflicts per second for one row written from several members.

    Parameters
    ----------
    rates_per_s : sequence of float
        Each member's updates of the row [1/s].
    window_ms : sequence of float
        Each member's conflict window [ms].

    Returns
    -------
    float
        Updates that lose certification [1/s].
    """
    rates = np.asarray(rates_per_s, dtype=float)
    return float(np.sum(rates * conflict_probability(rates.sum() - rates, window_ms)))


def lock_wait_draws(hold_ms: FloatArray, rate_per_s: float, levels: FloatArray) -> FloatArray:
    """How long each of a row's updates waits for the row's lock [ms], in arrival order.

    Updates arrive at random (Poisson, ``rate_per_s``) and each holds the row's lock for its
    commit (``hold_ms``, one draw per update): a single-server queue served in arrival order
    (M/G/1). The wait follows Lindley's recursion ``W[n+1] = max(0, W[n] + hold[n] -
    gap[n+1])``, which is ``C[n] - min(C[0..n])`` for the running sum ``C`` of ``hold - gap``.
    The queue starts empty; its mean matches Pollaczek-Khinchine's ``rate E[hold^2] / (2 (1 -
    rho))`` over enough draws. Above a utilisation of 1 the waits grow without bound.

    Parameters
    ----------
    hold_ms : numpy.ndarray
        Each update's hold of the lock: its commit [ms].
    rate_per_s : float
        Updates of the row [1/s].
    levels : numpy.ndarray
        Uniform levels in [0, 1), one per update, for the gaps between arrivals.

    Returns
    -------
    numpy.ndarray
        Each update's wait for the lock [ms].

    Examples
    --------
    >>> lock_wait_draws(np.array([10.0, 10.0, 10.0]), 0.0, np.zeros(3)).tolist()
    [0.0, 0.0, 0.0]
    """
    if rate_per_s <= 0.0:
        return np.zeros(len(hold_ms))
    gaps_ms = -np.log1p(-levels) * (1000.0 / rate_per_s)
    running = np.concatenate(([0.0], np.cumsum(hold_ms[:-1] - gaps_ms[1:])))
    waits: FloatArray = running - np.minimum.accumulate(np.minimum(running, 0.0))
    return waits


def retransmission_delay_draws(
    loss: float, messages: float | FloatArray, rtt_ms: FloatArray, levels: FloatArray
) -> FloatArray:
    """The delay that losses of lone messages on one link add to a commit [ms], draw by draw.

    A lone or last segment has nothing after it to trigger a fast retransmit: it waits for
    the retransmission timeout, ``RTO = RTT + 200 ms`` at least on Linux
    (:data:`advisor.model.tcp.RTO_MIN_MS`). A measured round-trip loss ``loss`` (probe or
    reply lost) is a one-way loss ``q = 1 - sqrt(1 - loss)``; a commit is held when any of
    the link's ``messages`` lone messages is lost, ``1 - (1 - q) ** messages``. A second
    loss on the same link in one commit is left out (it needs ``loss ** 2``).

    Which messages are lone is measured, not assumed: in our lab (one writer, three nodes,
    RTT 20 ms, benchmarks/calibration/lab-runs.yaml case ``loss-one-writer``) the share of
    commits held for an RTO was 0.22 %, 0.88 % and 1.82 % at a one-way loss of 0.1 %, 0.5 %
    and 1 %: one lone message per link of the writer (2 q), not one per message exchanged
    (8 q). A lost reply or a loss between two other members is recovered by the messages
    that follow it, well within the RTO.

    Parameters
    ----------
    loss : float
        The link's measured round-trip loss, a fraction in [0, 1).
    messages : float or numpy.ndarray
        Lone one-way messages the link carries during one commit (per draw, or for all).
    rtt_ms : numpy.ndarray
        The link's round trip in each draw [ms].
    levels : numpy.ndarray
        Uniform levels in [0, 1), one per draw (the link's own loss stream).

    Returns
    -------
    numpy.ndarray
        The added delay of each draw [ms]: 0, or the RTO.

    Examples
    --------
    >>> retransmission_delay_draws(0.5, 1, np.array([10.0, 10.0]), np.array([0.1, 0.9])).tolist()
    [210.0, 0.0]
    """
    held = _any_lost(loss, messages)
    delay: FloatArray = np.where(levels < held, np.asarray(rtt_ms, dtype=float) + RTO_MIN_MS, 0.0)
    return delay


def fast_retransmit_delay_draws(
    loss: float, segments: float | FloatArray, rtt_ms: FloatArray, levels: FloatArray
) -> FloatArray:
    """The delay that a lost segment followed by others adds to a commit [ms], draw by draw.

    A segment of a write set with more segments behind it is resent when the receiver's
    duplicate or selective acknowledgements of those reach the sender: about one round trip
    later, not a timeout (RFC 5681 fast retransmit, RFC 8985 RACK-TLP, both on by default in
    Linux). The draw is delayed by one RTT when any of ``segments`` is lost.

    Parameters
    ----------
    loss : float
        The link's measured round-trip loss, a fraction in [0, 1).
    segments : float or numpy.ndarray
        Segments that have another segment after them in the same burst (per draw, or for
        all).
    rtt_ms : numpy.ndarray
        The link's round trip in each draw [ms].
    levels : numpy.ndarray
        Uniform levels in [0, 1), one per draw (independent of the lone messages' levels).

    Returns
    -------
    numpy.ndarray
        The added delay of each draw [ms]: 0, or one RTT.

    Examples
    --------
    >>> fast_retransmit_delay_draws(0.5, 0, np.array([10.0]), np.array([0.0])).tolist()
    [0.0]
    >>> fast_retransmit_delay_draws(0.5, 3, np.array([10.0]), np.array([0.5])).tolist()
    [10.0]
    """
    lost = _any_lost(loss, segments)
    delay: FloatArray = np.where(levels < lost, np.asarray(rtt_ms, dtype=float), 0.0)
    return delay


def _any_lost(loss: float, messages: float | FloatArray) -> FloatArray:
    """The chance that any of ``messages`` one-way messages is lost, from a round-trip loss."""
    one_way = 1.0 - np.sqrt(1.0 - loss)
    return np.asarray(1.0 - (1.0 - one_way) ** np.asarray(messages, dtype=float), dtype=float)

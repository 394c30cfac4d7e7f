"""Galera's replication pipeline: a write set cut into fragments, sent through the EVS windows.

Pure functions over numpy arrays. The mechanism, from Galera's source (codership/galera,
branch 4.x; the same in 3.x):

- **Fragments.** gcs cuts a write set into fragments of at most ``gcs.max_packet_size``
  (default 64500) bytes, capped by the transport's message size, less a 20-byte action header
  (``gcs_core_set_pkt_size`` in gcs/src/gcs_core.cpp; ``PROTO_DATA_OFFSET`` in
  gcs/src/gcs_act_proto.cpp). The gcomm transport's message size is the asio protonet MTU,
  ``1 << 15``, less the GMCast header of 4 bytes and a 16-byte UUID (gcomm/src/asio_protonet.cpp,
  gcomm/src/gmcast.hpp): 32748 bytes. So a fragment carries at most 32728 bytes of the write
  set, whatever ``gcs.max_packet_size`` above that says.
- **Windows.** Each fragment is one EVS message. A node may not send message ``seq`` while
  ``seq > safe_seq + window`` (``Proto::is_flow_control``, gcomm/src/evs_proto.cpp), where
  ``safe_seq`` is what every member has acknowledged. A new message is sent at once with
  ``window = evs.user_send_window`` if nothing is queued; otherwise it queues, and the queue
  drains with ``window = evs.send_window`` whenever a message from a peer arrives
  (``handle_user``, ``handle_gap``), queued messages of the same order aggregated into one
  message up to the MTU (``evs.use_aggregate``, default on; ``Proto::aggregate_len``).
- **Rounds.** A message is safe, and a slot of the window frees, one commit path after it was
  sent: the longest path ``w -> k -> j -> w`` of :mod:`advisor.model.galera` (``path_ms``).
  So for a write set of ``n`` fragments, windows ``U`` (user) and ``S`` (send): fragments
  ``1..U`` leave at once; ``U+1..S`` at the first reply from a peer (``first_reply_ms``, the
  nearest member's round trip); fragment ``s > S`` when fragment ``s - S`` is safe, one path
  after it left. The commit returns one path after the last fragment left.

Checked against this project's lab (benchmarks/calibration/lab-galera.yaml,
``large-writeset-one-writer-rtt20``, and benchmarks/calibration/lab-runs.yaml): 3 KB to 3 MB
write sets at RTT 20 ms with the default windows 4/2 within 4 % once the local cost of each
size (measured with no delay) is added.

Glossary: ``writeset_bytes`` the replicated size of one write set [bytes];
``fragment_bytes`` the write-set bytes one fragment carries [bytes]; ``*_ms`` [ms];
``user_window``, ``send_window`` counts of EVS messages.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_PACKET_SIZE_BYTES",
    "DEFAULT_SIMULATED_COMMITS",
    "GCOMM_MTU_BYTES",
    "GCS_ACTION_HEADER_BYTES",
    "MAX_SIMULATED_CLIENTS",
    "MAX_SIMULATED_COMMITS",
    "MAX_SIMULATED_FRAGMENTS",
    "MAX_SIMULATED_ROW_LOCKS",
    "ClosedLoop",
    "burst_bytes",
    "closed_loop",
    "fragment_bytes",
    "fragment_count",
    "most_messages_per_s",
    "pipeline_commit_ms",
    "rtt_at_bytes",
    "send_rounds",
    "send_window_for",
    "window_limit_commits_per_s",
    "writesets_per_message",
]

import heapq
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from advisor.model.cpu_quota import CpuQuota, Throttle
from advisor.model.flow_control import ApplyQueue, SlowMember
from advisor.model.row_locks import RowLocks, RowWrites

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# gcomm's message size: asio protonet mtu_ = 1 << 15 less GMCast's 4 + UUID::serial_size() 16
# (https://github.com/codership/galera/blob/4.x/gcomm/src/asio_protonet.cpp, gmcast.hpp).
GCOMM_MTU_BYTES = (1 << 15) - (4 + 16)
# gcs action header before each fragment's payload: PROTO_DATA_OFFSET
# (https://github.com/codership/galera/blob/4.x/gcs/src/gcs_act_proto.cpp).
GCS_ACTION_HEADER_BYTES = 20
# gcs.max_packet_size's default (https://galeracluster.com/library/documentation/galera-parameters.html).
DEFAULT_MAX_PACKET_SIZE_BYTES = 64_500


def fragment_bytes(max_packet_size_bytes: int = DEFAULT_MAX_PACKET_SIZE_BYTES) -> int:
    """Write-set bytes one fragment carries: the smaller of ``gcs.max_packet_size`` and the
    transport's message size, less the gcs action header.

    Parameters
    ----------
    max_packet_size_bytes : int, default DEFAULT_MAX_PACKET_SIZE_BYTES
        ``gcs.max_packet_size`` [bytes].

    Returns
    -------
    int
        Payload of one fragment [bytes].

    >>> fragment_bytes()          # the default 64500 is capped by gcomm's 32748
    32728
    >>> fragment_bytes(16384)
    16364
    >>> fragment_bytes(1)         # Galera raises a packet below the header to header + 1
    1
    """
    # gcs_core_set_pkt_size (gcs/src/gcs_core.cpp) takes max(header + 1, packet size), then
    # the transport's size: a gcs.max_packet_size of 0 to 20 still carries one byte.
    message_bytes = max(GCS_ACTION_HEADER_BYTES + 1, int(max_packet_size_bytes))
    return min(message_bytes, GCOMM_MTU_BYTES) - GCS_ACTION_HEADER_BYTES


def fragment_count(writeset_bytes: npt.ArrayLike, fragment_size_bytes: int) -> IntArray:
    """Fragments, hence EVS messages, of one write set.

    Parameters
    ----------
    writeset_bytes : array_like
        Write-set size [bytes].
    fragment_size_bytes : int
        Payload of one fragment (:func:`fragment_bytes`) [bytes].

    Returns
    -------
    ndarray of int64
        Fragments per write set [count], at least one.

    >>> int(fragment_count(197_983, 32_728))     # the lab's 198 KB write set
    7
    """
    size = np.asarray(writeset_bytes, dtype=float)
    return np.maximum(np.ceil(size / fragment_size_bytes), 1).astype(np.int64)


def send_rounds(
    fragments: npt.ArrayLike, user_window: int, send_window: int
) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """How the last fragment leaves: after how many full commit paths, and whether it also
    waits for a first reply.

    Fragment ``s`` leaves at 0 (``s <= U``), at the first reply (``U < s <= S``), or one path
    after fragment ``s - S`` left. Reducing ``n`` by ``S`` per path: ``rounds = ceil(n / S) - 1``
    paths, then the rest ``n - rounds * S`` waits for a reply when it exceeds ``U``.

    Parameters
    ----------
    fragments : array_like
        Fragments of each write set [count].
    user_window : int
        ``evs.user_send_window`` [messages]; capped at ``send_window``.
    send_window : int
        ``evs.send_window`` [messages].

    Returns
    -------
    rounds : ndarray of int64
        Full commit paths before the last fragment leaves [count].
    reply : ndarray of bool
        Whether the last fragment also waits for a first reply.

    >>> rounds, reply = send_rounds([1, 2, 3, 7, 25], user_window=2, send_window=4)
    >>> rounds.tolist(), reply.tolist()
    ([0, 0, 0, 1, 6], [False, False, True, True, False])
    """
    n = np.asarray(fragments, dtype=np.int64)
    send = max(int(send_window), 1)
    user = min(max(int(user_window), 1), send)  # Galera caps the user window at send_window
    rounds = -(-n // send) - 1
    rest = n - rounds * send
    return rounds, rest > user


def pipeline_commit_ms(
    fragments: npt.ArrayLike,
    user_window: int,
    send_window: int,
    path_ms: npt.ArrayLike,
    first_reply_ms: npt.ArrayLike,
) -> FloatArray:
    """From the first fragment's send to the last one's safe delivery; inputs broadcast.

    Local certification and commit are not included.

    Parameters
    ----------
    fragments : array_like
        Fragments of each write set [count].
    user_window : int
        ``evs.user_send_window`` [messages].
    send_window : int
        ``evs.send_window`` [messages].
    path_ms : array_like
        Commit path of one message (longest ``w -> k -> j -> w``), drawn or given [ms].
    first_reply_ms : array_like
        Round trip to the nearest member [ms].

    Returns
    -------
    ndarray
        The pipeline's time per write set [ms].

    >>> # RTT 20 ms on three pairs: path 30 ms, first reply 20 ms; default windows 4/2.
    >>> pipeline_commit_ms([1, 7, 25, 97], 2, 4, 30.0, 20.0).tolist()
    [30.0, 80.0, 210.0, 750.0]
    """
    rounds, reply = send_rounds(fragments, user_window, send_window)
    path = np.asarray(path_ms, dtype=float)
    reply_ms = np.where(reply, np.asarray(first_reply_ms, dtype=float), 0.0)
    return np.asarray((rounds + 1) * path + reply_ms, dtype=float)


def burst_bytes(
    writeset_bytes: npt.ArrayLike, fragment_size_bytes: int, send_window: int
) -> FloatArray:
    """Bytes in flight on one link per round: the whole write set, or a window of fragments.

    What the first leg of a commit path carries over TCP; small write sets are one burst.

    Parameters
    ----------
    writeset_bytes : array_like
        Write-set size [bytes].
    fragment_size_bytes : int
        Payload of one fragment [bytes].
    send_window : int
        ``evs.send_window`` [messages].

    Returns
    -------
    ndarray
        Bytes of one round [bytes].

    >>> burst_bytes([2_048, 3_103_172], 32_728, 4).tolist()
    [2048.0, 130912.0]
    """
    size = np.asarray(writeset_bytes, dtype=float)
    return np.asarray(np.minimum(size, float(send_window) * fragment_size_bytes), dtype=float)


def rtt_at_bytes(
    bytes_: npt.ArrayLike,
    low_bytes: float,
    rtt_at_low_ms: npt.ArrayLike,
    high_bytes: float,
    rtt_at_high_ms: npt.ArrayLike,
    small_rtt_ms: npt.ArrayLike,
) -> FloatArray:
    """A link's round trip at a size per draw, from its round trips at two sizes.

    Linear in the size between (and beyond) the two anchors, as serialisation is; never below
    the small-message round trip of the same draw. One anchor (``high == low``) is used as is.

    Parameters
    ----------
    bytes_ : array_like
        Size of each draw's burst [bytes].
    low_bytes : float
        The smaller anchor size [bytes].
    rtt_at_low_ms : array_like
        Round trip at ``low_bytes``, per draw [ms].
    high_bytes : float
        The larger anchor size [bytes].
    rtt_at_high_ms : array_like
        Round trip at ``high_bytes``, per draw [ms].
    small_rtt_ms : array_like
        Small-message round trip, per draw [ms].

    Returns
    -------
    ndarray
        Round trip at ``bytes_`` per draw [ms].

    >>> rtt_at_bytes([1_000, 2_000, 40_000], 2_000, 10.5, 66_000, 12.5, 10.0).tolist()
    [10.46875, 10.5, 11.6875]
    """
    size = np.asarray(bytes_, dtype=float)
    low = np.asarray(rtt_at_low_ms, dtype=float)
    if high_bytes <= low_bytes:
        return np.asarray(np.maximum(low + 0.0 * size, small_rtt_ms), dtype=float)
    slope = (np.asarray(rtt_at_high_ms, dtype=float) - low) / (high_bytes - low_bytes)
    return np.asarray(np.maximum(low + slope * (size - low_bytes), small_rtt_ms), dtype=float)


def writesets_per_message(writeset_bytes: float, fragment_size_bytes: int) -> float:
    """Write sets one EVS message carries when they queue: small ones aggregate up to a
    message's payload, a large one spans several messages (a fraction per message).

    Parameters
    ----------
    writeset_bytes : float
        Write-set size [bytes].
    fragment_size_bytes : int
        Payload of one fragment [bytes].

    Returns
    -------
    float
        Write sets per message [count; a fraction for a large write set].

    >>> writesets_per_message(1_650, 32_728), writesets_per_message(100_000, 32_728)
    (19.0, 0.25)
    """
    size = max(float(writeset_bytes), 1.0)
    if size <= fragment_size_bytes:
        return float(fragment_size_bytes // size)
    return 1.0 / math.ceil(size / fragment_size_bytes)


def window_limit_commits_per_s(
    send_window: int, path_ms: float, writesets_per_message: float
) -> float:
    """Commits per second one node can replicate before its send window stalls it.

    Under load write sets queue, and the queue drains with ``evs.send_window`` messages
    beyond ``safe_seq``, which advances once per commit path; each message carries
    ``writesets_per_message`` queued write sets (``evs.use_aggregate``). The user window only
    governs a message sent into an empty queue.

    Parameters
    ----------
    send_window : int
        ``evs.send_window`` [messages].
    path_ms : float
        Commit path [ms].
    writesets_per_message : float
        Write sets one message carries (:func:`writesets_per_message`) [count].

    Returns
    -------
    float
        The rate at which the window stalls [commits/s].

    >>> round(window_limit_commits_per_s(4, 30.0, 19.0))     # defaults 4/2 at a 30 ms path
    2533
    """
    return send_window / (max(path_ms, 1e-9) / 1000.0) * writesets_per_message


def most_messages_per_s(user_window: int, path_ms: float) -> float:
    """The most messages a second one writer sends: ``evs.user_send_window`` of them in flight,
    each for one commit path; beyond that rate more write sets share each message. The
    project's lab (benchmarks/calibration/lab-runs.yaml, cpu-cost-split; the writer's
    wsrep_evs_sent_user) counted 669 and 692 a second at RTT 2 ms with 4 and 16 clients (523
    with 64, the host 94 % busy) and 76 to 101 at RTT 20 ms with 4 to 64, at the default
    window of 2; under load the writer's queue puts more write sets in each (6.9 to 7.6 a
    message at 64 clients and RTT 20 ms, about what the closed loop's messages carry there).

    Parameters
    ----------
    user_window : int
        ``evs.user_send_window`` [messages].
    path_ms : float
        Commit path [ms].

    Returns
    -------
    float
        Messages a second [1/s].

    >>> most_messages_per_s(2, 20.0)
    100.0
    """
    return max(user_window, 1) * 1000.0 / max(path_ms, 1e-3)


def send_window_for(
    rate_per_s: float, path_ms: float, writesets_per_message: float, min_window: int
) -> int:
    """The ``evs.send_window`` that carries ``rate_per_s`` commits at this commit path: the
    inverse of :func:`window_limit_commits_per_s`, rounded up to a power of two and never
    below ``min_window``. Codership advises ``evs.user_send_window`` at about half of it
    (https://galeracluster.com/library/documentation/galera-parameters.html).

    Parameters
    ----------
    rate_per_s : float
        Commits to carry [commits/s].
    path_ms : float
        Commit path [ms].
    writesets_per_message : float
        Write sets one message carries [count].
    min_window : int
        The least window to advise [messages].

    Returns
    -------
    int
        ``evs.send_window`` [messages], a power of two.

    >>> send_window_for(4000.0, 7.0, 1.0, 16)   # 4000/s x 7 ms = 28 messages in flight
    32
    """
    needed = rate_per_s * path_ms / 1000.0 / max(writesets_per_message, 1e-9)
    return int(max(min_window, 2 ** math.ceil(math.log2(max(needed, 1.0)))))


@dataclass(frozen=True)
class ClosedLoop:
    """What a closed population of clients gets through the pipeline."""

    commits_per_s: float
    commit_ms: FloatArray  # each simulated commit, queueing for the window included [ms]
    txn_ms: FloatArray  # each simulated transaction: think time plus its commits [ms]
    # The share of the run's time a slow member's flow control held every sender [fraction].
    paused_share: float = 0.0
    # The share of CPU periods in which a member held to a CPU limit spent its budget and
    # stopped until the next period (cpu.stat's nr_throttled over nr_periods) [fraction].
    throttled_share: float = 0.0


def closed_loop(
    clients: int,
    think_ms: float,
    commits_per_txn: int,
    path_ms: npt.ArrayLike,
    first_reply_ms: npt.ArrayLike,
    fragments: npt.ArrayLike,
    *,
    user_window: int,
    send_window: int,
    writesets_per_message: float,
    local_commit_ms: float,
    row_writes: RowWrites | None = None,
    slow_member: SlowMember | None = None,
    cpu_quota: CpuQuota | None = None,
    commits: int | None = None,
    seed: int = 20_261_122,
) -> ClosedLoop:
    """Simulate ``clients`` that each think, then commit, through one node's EVS send path.

    The mechanism of the module docstring, event by event: a write set goes out at once into an
    empty queue within ``user_window``, else it queues; the queue drains at every arrival from
    a peer (the nearest's reply, ``first_reply_ms`` after a send, and the safe delivery of
    earlier messages) with ``send_window``, queued single-fragment write sets aggregated
    ``writesets_per_message`` to a message. A message is safe one commit path after it left
    (``path_ms``, without local work), and in order; its write sets then commit after
    ``local_commit_ms``. Think times are exponential with mean ``think_ms`` (the usual closed
    queueing assumption: clients' SQL times vary); each commit takes the next of the drawn
    ``path_ms``, ``first_reply_ms`` and ``fragments``. The first fifth of the commits is a
    warm-up and not reported.

    With ``row_writes``, each commit first locks its rows (:mod:`advisor.model.row_locks`):
    a row another client holds delays the write set until that client's commit is done, and
    the wait counts in the transaction's time, not in the commit's. The asymptotic bounds
    taken beyond ``MAX_SIMULATED_CLIENTS`` clients or ``MAX_SIMULATED_FRAGMENTS`` fragments
    know no row locks: there they are an upper bound on the rate. Beyond
    ``MAX_SIMULATED_ROW_LOCKS`` rows locked, fewer commits are simulated (ten per client at
    least), and beyond that too, the asymptotic bounds are taken.

    With ``slow_member``, every write set is delivered to that member when it is safe, and
    waits there for its appliers (:class:`advisor.model.flow_control.ApplyQueue`); the
    member's FC_STOP and FC_CONT are delivered one drawn commit path after it sends them,
    and while a STOP is in force no new write set is sent: the clients' commits wait, and
    go out together when the CONT is delivered. The asymptotic bounds then take the member's
    capacity as one more bound, and the pause share as what is left of the offered rate.

    With ``cpu_quota``, a member held to a CPU limit spends its budget on every message
    delivered and the write sets it carries, and a message that finds the period's budget
    spent is delivered when the next period begins
    (:class:`advisor.model.cpu_quota.Throttle`): the commits wait, and so do the window's
    slots. The asymptotic bounds take its capacity (one write set a message) as one more
    bound.

    Parameters
    ----------
    clients : int
        Clients of the node [count].
    think_ms : float
        Mean think time of a transaction, its SQL before the commits [ms].
    commits_per_txn : int
        Commits per transaction [count].
    path_ms : array_like
        Commit paths of one message, drawn [ms], used in turn.
    first_reply_ms : array_like
        Round trips to the nearest member, drawn [ms], used in turn.
    fragments : array_like
        Fragments per write set, drawn [count], used in turn.
    user_window : int
        ``evs.user_send_window`` [messages].
    send_window : int
        ``evs.send_window`` [messages].
    writesets_per_message : float
        Write sets one message carries when they queue [count].
    local_commit_ms : float
        Local certification and commit [ms].
    row_writes : RowWrites, optional
        Where each commit's writes fall; None: no row locks.
    slow_member : SlowMember, optional
        The member that applies least and its flow-control limits; None: every member keeps
        up.
    cpu_quota : CpuQuota, optional
        The CPU limit of the member it holds back most, and its cost of a write set; None:
        no member is held to one.
    commits : int, optional
        Commits to simulate [count], at least ten per client, at most
        ``MAX_SIMULATED_COMMITS``. None: ``DEFAULT_SIMULATED_COMMITS``, doubled until the
        rate settles to within ``SETTLED_RATE_SHARE`` (:func:`_settled`), at most
        ``MAX_SIMULATED_COMMITS`` within the fragment and row bounds.
    seed : int, default 20_261_122
        Seed of the think times and row draws.

    Returns
    -------
    ClosedLoop
        Throughput [commits/s], each commit's latency [ms], each transaction's [ms], the
        share of time flow control paused the cluster [fraction], and the share of CPU
        periods the throttled member spent its budget in [fraction].

    >>> run = closed_loop(1, 4.0, 1, [30.0], [20.0], [1], user_window=2, send_window=4,
    ...                   writesets_per_message=19, local_commit_ms=1.0, commits=500)
    >>> float(np.median(run.commit_ms))    # alone: one path plus local work
    31.0
    """
    paths = np.asarray(path_ms, dtype=float).ravel()
    replies = np.asarray(first_reply_ms, dtype=float).ravel()
    pieces = np.asarray(fragments, dtype=np.int64).ravel()
    settle = commits is None  # the run may grow until its rate settles
    commits = DEFAULT_SIMULATED_COMMITS if commits is None else commits
    # Ten commits per client at least, so that every client reaches a steady state; bounded,
    # so that long transactions cannot make the run long (their latency then follows from
    # Little's law, below).
    commits = min(max(commits, 10 * clients), MAX_SIMULATED_COMMITS)
    # Every fragment is an event: write sets of many fragments fill the window by themselves,
    # where the asymptotic bounds hold, and would make the simulation run for minutes.
    fragments_per_commit = float(np.mean(pieces))
    fragment_events = commits * fragments_per_commit
    if clients == 1:
        row_writes = None  # a lone client never waits for a row: the same run without locks
    if row_writes is not None and _always_share(row_writes):
        return _capped(_serialised(clients, paths + local_commit_ms), slow_member, cpu_quota)
    # Every row a commit writes is locked and released: bounded like the fragments, first
    # by simulating fewer commits (ten per client at least), then by the asymptotic bounds.
    rows = 0 if row_writes is None else row_writes.rows_per_commit
    if commits * rows > MAX_SIMULATED_ROW_LOCKS:
        commits = max(MAX_SIMULATED_ROW_LOCKS // rows, 10 * clients)
    if (
        clients > MAX_SIMULATED_CLIENTS
        or fragment_events > MAX_SIMULATED_FRAGMENTS
        or commits * rows > MAX_SIMULATED_ROW_LOCKS
    ):
        run = _asymptotic(
            clients, think_ms, commits_per_txn, paths + local_commit_ms, pieces,
            send_window, writesets_per_message,
        )  # fmt: skip
        return _capped(run, slow_member, cpu_quota)
    sim = _Pipeline(user_window, send_window, max(int(writesets_per_message), 1))
    rng = np.random.default_rng(seed)
    per_txn = max(int(commits_per_txn), 1)
    events: list[tuple[float, int, int, int]] = []  # (time, order, kind, value)
    started: dict[int, float] = {}
    txn_start: dict[int, float] = {}
    left_in_txn = dict.fromkeys(range(clients), per_txn)
    done: list[tuple[float, float]] = []
    txns: list[float] = []
    order = 0

    def push(time: float, kind: int, value: int) -> None:
        nonlocal order
        order += 1
        heapq.heappush(events, (time, order, kind, value))

    for client in range(clients):
        txn_start[client] = 0.0
        push(float(rng.exponential(think_ms / per_txn)), _WRITESET, client)
    locks = None if row_writes is None else RowLocks(row_writes, np.random.default_rng(seed + 1))
    member = None if slow_member is None else ApplyQueue(slow_member)
    throttle = None if cpu_quota is None else Throttle(cpu_quota)
    held: list[int] = []  # clients whose write set waits for flow control to let it go
    pauses: list[list[float]] = []  # [start, end] of each pause [ms]
    fc_messages, fc_due = 0, 0.0

    def send_fc(time: float, stop: bool) -> None:
        """The slow member's FC_STOP or FC_CONT, delivered one commit path later and after
        the ones it sent before (EVS delivers one sender's messages in order)."""
        nonlocal fc_messages, fc_due
        fc_messages += 1
        fc_due = max(fc_due, time + paths[fc_messages % paths.size])
        push(fc_due, _FC, int(stop))

    def apply_events(time: float, starts: bool, fc_sent: bool, stop: bool) -> None:
        """An applier of the slow member starting a write set, and its STOP or CONT."""
        assert slow_member is not None
        if starts:
            push(time + slow_member.apply_ms, _APPLIED, 0)
        if fc_sent:
            send_fc(time, stop)

    def fc_delivered(time: float, stop: bool) -> list[int]:
        """A STOP or CONT delivered: a pause starts, or it ends and the write sets held
        during it go out. Returns the messages sent."""
        assert member is not None
        was_paused = member.paused
        if member.delivered(stop) == was_paused:
            return []
        if member.paused:
            pauses.append([time, math.inf])
            return []
        pauses[-1][1] = time
        sent = [seq for client in held for seq in sim.submit(client, int(pieces[k % pieces.size]))]
        held.clear()
        return sent

    def granted(time: float) -> None:
        """Clients given the row they waited for go on at ``time``."""
        if locks is not None:
            for client in locks.granted:
                push(time, _GRANTED, client)
            locks.granted.clear()

    k = 0
    # Commits that share rows deadlock again and again (5 of 20 rows or 5,000 of 10,000 by
    # 64 clients: nearly every request closes a cycle and its victim draws again), so the
    # run stops at a bound on that work too and reports the commits done by then.
    longest = _longest_run(commits, rows, fragments_per_commit) if settle else commits
    while events and (locks is None or not _thrashing(locks)):
        if len(done) >= commits:
            if commits >= longest or _settled(done):
                break
            commits = min(2 * commits, longest)
        now, _, kind, value = heapq.heappop(events)
        if kind in (_WRITESET, _GRANTED):
            holds = locks is None or (
                locks.request(value) if kind == _WRITESET else locks.proceed(value)
            )
            granted(now)  # a deadlock victim's rows
            sent = []
            if holds:
                started[value] = now
                if member is not None and member.paused:
                    held.append(value)
                else:
                    sent = sim.submit(value, int(pieces[k % pieces.size]))
        elif kind == _REPLY:
            sent = sim.drain()
        elif kind == _APPLIED:
            assert member is not None
            apply_events(now, *member.applied(), stop=False)
            sent = []
        elif kind == _FC:
            sent = fc_delivered(now, stop=value == 1)
        else:
            for client in sim.safe(value):
                done.append((now, now - started[client] + local_commit_ms))
                left_in_txn[client] -= 1
                end = now + local_commit_ms
                if locks is not None:  # the commit is done: its rows go to their waiters
                    locks.release(client)
                    granted(end)
                if left_in_txn[client] == 0:
                    txns.append(end - txn_start[client])
                    left_in_txn[client], txn_start[client] = per_txn, end
                push(end + float(rng.exponential(think_ms / per_txn)), _WRITESET, client)
                if member is not None:  # delivered to the slow member too
                    apply_events(now, *member.deliver(), stop=True)
            sent = sim.drain()
        for seq in sent:
            push(now + replies[k % replies.size], _REPLY, seq)
            due = sim.safe_time(now + paths[k % paths.size])
            if throttle is not None:  # the throttled member has to take it in first
                due = sim.safe_time(throttle.admit(due, len(sim.carried[seq])))
            push(due, _SAFE, seq)
            k += 1
    kept = np.array(done[len(done) // 5 :])
    span_ms = float(kept[-1, 0] - kept[0, 0]) if kept.size else 0.0
    if span_ms <= 0.0:  # stopped by the bound before two commits ended apart
        return _capped(_serialised(clients, paths + local_commit_ms), slow_member, cpu_quota)
    # Every commit takes at least its local work, so simulated time always advances.
    rate = (len(kept) - 1) / (span_ms / 1000.0)
    finished = np.asarray(txns[len(txns) // 5 :], dtype=float)
    if finished.size < _MIN_TXNS:  # long transactions: few finish in the run; by Little's law
        finished = np.full(1, clients * per_txn / rate * 1000.0)
    paused = _paused_ms(pauses, float(kept[0, 0]), float(kept[-1, 0]))
    throttled = (
        0.0 if throttle is None else throttle.throttled_share(float(kept[0, 0]), float(kept[-1, 0]))
    )
    return ClosedLoop(rate, kept[:, 1], finished, paused / span_ms, throttled)


def _paused_ms(pauses: list[list[float]], start_ms: float, end_ms: float) -> float:
    """The time within ``start_ms`` to ``end_ms`` that the pauses cover [ms]."""
    return sum(max(0.0, min(b, end_ms) - max(a, start_ms)) for a, b in pauses)


def _capped(
    run: ClosedLoop, slow_member: SlowMember | None, cpu_quota: CpuQuota | None
) -> ClosedLoop:
    """An unsimulated run held to the slow member's or the throttled member's capacity,
    when it offers more: the cluster commits at the capacity, the clients' commits and
    transactions stretched alike (Little's law: the same clients at a lower rate). Flow
    control pauses the rest of the time; a CPU quota holds the deliveries instead."""
    applies = math.inf if slow_member is None else slow_member.capacity_per_s
    keeps_up = math.inf if cpu_quota is None else cpu_quota.capacity_per_s
    capacity = min(applies, keeps_up)
    if run.commits_per_s <= capacity:
        return run
    stretch = run.commits_per_s / capacity
    paused = 1.0 - 1.0 / stretch if applies < keeps_up else 0.0
    throttled = 1.0 if keeps_up <= applies else 0.0  # held to the budget in every period
    return ClosedLoop(capacity, run.commit_ms * stretch, run.txn_ms * stretch, paused, throttled)


def _longest_run(commits: int, rows_per_commit: int, fragments_per_commit: float) -> int:
    """The most commits a run that has not settled may grow to: ``MAX_SIMULATED_COMMITS``,
    within the fragment and row bounds, and never fewer than ``commits``."""
    fit = MAX_SIMULATED_FRAGMENTS / max(fragments_per_commit, 1.0)
    if rows_per_commit:
        fit = min(fit, MAX_SIMULATED_ROW_LOCKS / rows_per_commit)
    return int(max(commits, min(MAX_SIMULATED_COMMITS, fit)))


def _settled(done: list[tuple[float, float]]) -> bool:
    """Whether the run's rate is known to within ``SETTLED_RATE_SHARE``: the standard error of
    the rates of ``SETTLE_BATCHES`` consecutive batches of the commits after the warm-up (the
    method of batch means).

    Convoys of row-lock waits settle slowly. sysbench's hot set (303 of 40,000 rows) at 64
    clients and RTT 20 ms, six seeds of a fixed 4,000 commits: rates 705 to 872/s (6.6 %
    apart), transaction p95 170 to 299 ms. Uniform ids at the same 64 clients: 0.2 % apart at
    4,000. Runs of 20,000 commits, the most a run takes, still spread: measured again on
    2026-11-28 (that setting, six seeds), 776 to 834/s and a p95 of 200 to 230 ms with links
    of exactly 20 ms; 783 to 834/s and 201 to 231 ms with the lab's measured spread
    (benchmarks/calibration/lab-runs.yaml emulator-links). The convoys come and go on a longer
    scale than a run: read such a p95 to within about 7 %.
    """
    ends = np.fromiter((end for end, _ in done[len(done) // 5 :]), dtype=float)
    batches = [b for b in np.array_split(ends, SETTLE_BATCHES) if b.size > 1 and b[-1] > b[0]]
    if len(batches) < SETTLE_BATCHES:
        return True  # too few commits apart in time to judge: no longer run would help
    rates = np.array([(b.size - 1) / (b[-1] - b[0]) for b in batches])
    error = float(np.std(rates, ddof=1)) / math.sqrt(rates.size)
    return error <= SETTLED_RATE_SHARE * float(np.mean(rates))


# Below this many finished transactions their percentiles are noise: report the mean.
_MIN_TXNS = 50
# Beyond this many clients the event simulation would cost seconds; the window is then
# saturated or nearly, where the asymptotic bounds are close.
MAX_SIMULATED_CLIENTS = 1000
MAX_SIMULATED_COMMITS = 20_000
# Commits a run starts with when the caller names none; it doubles, up to
# MAX_SIMULATED_COMMITS, until its rate settles (_settled).
DEFAULT_SIMULATED_COMMITS = 4_000
SETTLE_BATCHES = 5
SETTLED_RATE_SHARE = 0.01
# Fragments sent in one simulation, at most: a second or so of events. The examples and the
# calibration cases send at most 8,650 (50 clients, 2.2 fragments per write set).
MAX_SIMULATED_FRAGMENTS = 200_000
# Row locks taken in one simulation, at most: about a second (each row is drawn, looked up
# and released, about 1 us in all). sysbench's 3 rows a commit take 12,000; 5,000 rows a
# commit of a 1e12-row table took over 300 s before this bound (issue 26).
MAX_SIMULATED_ROW_LOCKS = 1_000_000


# Deadlocks in one simulation, at most (each costs a fresh draw of the victim's rows and a
# walk of the waits: 40 to 100 us), and rows drawn or examined for locking, at most (a
# request granted a row looks again at the rows it still wants).
MAX_SIMULATED_DEADLOCKS = 20_000
MAX_SIMULATED_ROW_WORK = 4 * MAX_SIMULATED_ROW_LOCKS


def _always_share(writes: RowWrites) -> bool:
    """Whether any two commits share a row: uniform writes of more than half the table
    (pigeonhole: two sets of R of T rows share at least 2R - T). Such commits run one at a
    time, and drawing R of nearly T distinct rows by rejection would take T ln T draws."""
    return writes.hot_rows == 0 and 2 * writes.rows_per_commit > writes.table_rows


def _thrashing(locks: RowLocks) -> bool:
    """Whether the row locks have cost the simulation its bound of work."""
    return locks.deadlocks > MAX_SIMULATED_DEADLOCKS or locks.work > MAX_SIMULATED_ROW_WORK


def _serialised(clients: int, commit_ms: FloatArray) -> ClosedLoop:
    """Clients whose commits share rows wait for each other's: one commit at a time, each
    taking a lone commit (path and local work), and by Little's law a transaction waits for
    every client's. What the simulation tends to when nearly every commit deadlocks (5 of 20
    rows by 64 clients simulated to 32.3 commits/s against 1000 / 31 = 32.3 here)."""
    mean_ms = float(np.mean(commit_ms))
    rate = 1000.0 / mean_ms
    return ClosedLoop(rate, np.asarray(commit_ms, dtype=float), np.full(1, clients * mean_ms))


def _asymptotic(
    clients: int,
    think_ms: float,
    commits_per_txn: int,
    commit_ms: FloatArray,
    fragments: IntArray,
    send_window: int,
    writesets_per_message: float,
) -> ClosedLoop:
    """Many clients: the asymptotic bounds of operational analysis (Lazowska et al.,
    "Quantitative System Performance", 1984, ch. 5): ``X = min(N / (Z + T), capacity)``, the
    capacity being the send window's messages per commit path; latency by Little's law."""
    per_txn = max(int(commits_per_txn), 1)
    lone_ms = float(np.mean(commit_ms))
    path_ms = max(lone_ms, 1e-3)
    messages = float(np.mean(fragments)) if writesets_per_message < 1 else 1.0
    capacity = send_window / (path_ms / 1000.0) * max(writesets_per_message, 1.0 / messages)
    rate = min(clients / ((think_ms / per_txn + lone_ms) / 1000.0), capacity)
    stretch = clients / (rate / 1000.0) / (think_ms / per_txn + lone_ms)
    txn = (think_ms + per_txn * commit_ms) * max(stretch, 1.0)
    return ClosedLoop(rate, commit_ms * max(stretch, 1.0), np.asarray(txn, dtype=float))


_WRITESET, _REPLY, _SAFE, _GRANTED, _APPLIED, _FC = 0, 1, 2, 3, 4, 5


class _Pipeline:
    """One node's EVS send path: the output queue, the windows, safe_seq (evs_proto.cpp)."""

    def __init__(self, user_window: int, send_window: int, per_message: int) -> None:
        self.send_window = max(send_window, 1)
        self.user_window = min(max(user_window, 1), self.send_window)
        self.per_message = per_message
        self.queue: list[tuple[int, int]] = []  # (client, fragments left to send)
        self.last_seq = 0
        self.safe_seq = 0
        self.last_safe_ms = 0.0
        self.carried: dict[int, list[int]] = {}  # seq -> clients whose last fragment it is

    def submit(self, client: int, fragments: int) -> list[int]:
        """A write set of ``fragments`` messages: into an empty queue within the user window
        at once, one fragment per message; the rest queues."""
        sent = []
        left = fragments
        while not self.queue and left > 0 and self._fits(self.user_window):
            left -= 1
            sent.append(self._send([client] if left == 0 else []))
        if left > 0:
            self.queue.append((client, left))
        return sent

    def _fits(self, window: int) -> bool:
        return self.last_seq + 1 <= self.safe_seq + window

    def drain(self) -> list[int]:
        sent = []
        while self.queue and self._fits(self.send_window):
            client, left = self.queue[0]
            if left > 1:  # one fragment of a large write set per message
                self.queue[0] = (client, left - 1)
                sent.append(self._send([]))
                continue
            batch: list[int] = []
            while self.queue and self.queue[0][1] == 1 and len(batch) < self.per_message:
                batch.append(self.queue.pop(0)[0])
            sent.append(self._send(batch))
        return sent

    def _send(self, finishing: list[int]) -> int:
        self.last_seq += 1
        self.carried[self.last_seq] = finishing
        return self.last_seq

    def safe_time(self, due_ms: float) -> float:
        """Messages become safe in order."""
        self.last_safe_ms = max(self.last_safe_ms, due_ms)
        return self.last_safe_ms

    def safe(self, seq: int) -> list[int]:
        self.safe_seq = max(self.safe_seq, seq)
        return self.carried.pop(seq)

"""galera: the longest paths of many writers from one shared max-plus square equal, bit for
bit, those computed writer by writer (one-member sites, one-site and two-site clusters too)."""

import numpy as np
import pytest

from advisor.model import galera


@pytest.mark.parametrize("seed", range(40))
def test_shared_two_hops_give_each_writers_own_draws(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(seed)
    n, draws = int(rng.integers(1, 9)), int(rng.integers(1, 700))
    sites = [f"s{i}" for i in range(n)]
    drawn: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}

    def pair_draws(a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
        key = tuple(sorted((a, b)))
        if key not in drawn:
            small = (rng.gamma(2.0, 3.0, draws) + (0.2 if a == b else 5.0)).astype(np.float32)
            drawn[key] = small, small + rng.random(draws).astype(np.float32) * 4
        return drawn[key]

    cluster = galera.Cluster({s: int(rng.integers(1, 4)) for s in sites}, bool(seed % 2))
    writers = [s for s in sites if rng.random() < 0.7] or [sites[-1]]
    got = {}
    for shared in (False, True):
        monkeypatch.setattr(galera, "_share_two_hops", lambda *_, on=shared: on)
        got[shared] = galera.commit_latency_draws(cluster, writers, pair_draws)
    assert list(got[True]) == writers
    for writer in writers:
        assert np.array_equal(got[True][writer], got[False][writer])


@pytest.mark.parametrize("seed", range(6))
def test_pairs_and_blocks_shared_by_threads_give_the_same_draws(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # blocks of 256 draws and any number of pairs: a large cluster's pairs are drawn and its
    # blocks reduced on two threads, each writing its own
    rng = np.random.default_rng(100 + seed)
    n, draws = int(rng.integers(3, 7)), int(rng.integers(1100, 2000))
    sites = [f"s{i}" for i in range(n)]
    small = {
        (a, b): (rng.gamma(2.0, 3.0, draws) + (0.2 if a == b else 5.0)).astype(np.float32)
        for i, a in enumerate(sites)
        for b in sites[i:]
    }

    def pair_draws(a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
        key = (min(a, b), max(a, b))
        return small[key], small[key] * np.float32(1.5)

    cluster = galera.Cluster({s: int(rng.integers(1, 4)) for s in sites})
    monkeypatch.setattr(galera, "_BLOCK_VALUES", 64)
    monkeypatch.setattr(galera, "_THREADED_PAIRS", 1)
    monkeypatch.setattr(galera, "_share_two_hops", lambda *_: True)
    got = {}
    for cores in (1, 2):
        monkeypatch.setattr(galera.os, "cpu_count", lambda cores=cores: cores)
        got[cores] = galera.commit_latency_draws(cluster, sites, pair_draws)
    for writer in sites:
        assert np.array_equal(got[1][writer], got[2][writer])

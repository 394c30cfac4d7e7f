"""What a manual bootstrap of the survivors loses when the weighted site of a two-site Galera
cluster dies: the run recorded in benchmarks/calibration/lab-bootstrap.yaml.

A two-node MariaDB Galera cluster on loopback (tests/integration/galera_cluster.py), node 1
carrying pc.weight 2 (the design's weighted site), node 2 weight 1. Node 1 commits (``idle``:
20 autocommits, then nothing; ``busy``: one client committing in a loop for 2 s), is killed
with SIGKILL, node 2 goes non-Primary and is bootstrapped (``pc.bootstrap=YES``); the rows
node 2 then holds are compared with the commits node 1 acknowledged.

    python -m benchmarks.bootstrap_loss idle   # or busy; one run, about 30 s
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))

from galera_cluster import galera_cluster


def _status(node: Any, name: str) -> str:
    with node.root_connection(connect_timeout=2) as conn, conn.cursor() as cur:
        cur.execute(f"SHOW GLOBAL STATUS LIKE '{name}'")
        row = cur.fetchone()
        return str(row[1]) if row else ""


def _wait(node: Any, name: str, value: str, timeout_s: float = 30.0) -> list[str]:
    deadline = time.monotonic() + timeout_s
    seen: list[str] = []
    while time.monotonic() < deadline:
        seen.append(_status(node, name))
        if seen[-1] == value:
            break
        time.sleep(0.2)
    return seen


def run(mode: str) -> dict[str, Any]:
    """One run: the commits node 1 acknowledged and the rows node 2 holds after bootstrap."""
    with galera_cluster(size=2) as cluster:
        a, b = cluster.nodes
        cluster.execute(
            a,
            "SET GLOBAL wsrep_provider_options = 'pc.weight=2'",
            "CREATE DATABASE w",
            "CREATE TABLE w.t (id INT PRIMARY KEY)",
        )
        acked: list[int] = []
        stop = threading.Event()

        def writer() -> None:
            with a.root_connection() as conn, conn.cursor() as cur:
                i = 0
                while not stop.is_set():
                    try:
                        cur.execute(f"INSERT INTO w.t VALUES ({i})")
                        conn.commit()
                    except Exception:  # the node died under it
                        return
                    acked.append(i)
                    i += 1

        thread = threading.Thread(target=writer)
        if mode == "busy":
            thread.start()
            time.sleep(2)
        else:
            cluster.execute(a, *(f"INSERT INTO w.t VALUES ({i})" for i in range(20)))
            acked = list(range(20))
        os.killpg(a.process.pid, signal.SIGKILL)
        a.process.wait()
        stop.set()
        if mode == "busy":
            thread.join()
        states = _wait(b, "wsrep_cluster_status", "non-Primary")
        cluster.execute(b, "SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'")
        _wait(b, "wsrep_cluster_status", "Primary")
        with b.root_connection() as conn, conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM w.t")
            held = int(cur.fetchone()[0])
        return {
            "mode": mode,
            "acknowledged": len(acked),
            "held_after_bootstrap": held,
            "lost": max(0, len(acked) - held),
            "states": list(dict.fromkeys(states)),
        }


if __name__ == "__main__":
    print(run(sys.argv[1] if len(sys.argv) > 1 else "idle"))

"""The replica's appliers in the verdict and the configuration (issue 22, part 1).

paris-frankfurt with its peak raised to 5,000 commits/s: a replica applies each transaction as
a commit in its own cluster, about 1.4 ms in a three-node site, so the SQL thread alone keeps
up with about 700 a second. Given as the user runs it (one applier), the channel falls behind
without bound: under max_data_loss_s: 1 the asynchronous options are not viable, and the
finding names the appliers that restore them; given those, or left to the design, they are
viable and the generated SQL sets them.
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest

from advisor.analysis import analyse
from advisor.config import plan_configuration
from advisor.recommendation import recommend

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "paris-frankfurt" / "topology.yaml"


def paris_frankfurt(peak: int, threads: int | None) -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    text = text.replace("commits_per_s: {avg: 400, peak: 1500}", f"commits_per_s: {{peak: {peak}}}")
    text = text.replace("  replicated_bytes_per_s: {peak: 2500000}\n", "")
    assert f"peak: {peak}" in text
    if threads is not None:
        text += f"\nreplication: {{applier_threads: {threads}}}\n"
    return text


@pytest.fixture(scope="module")
def one_applier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write(tmp_path_factory.mktemp("apply") / "topology.yaml", paris_frankfurt(5000, 1))


def test_one_applier_cannot_keep_up_and_the_finding_names_the_appliers(one_applier: Path) -> None:
    result = recommend(one_applier)
    grouped = next(o for o in result.options if o.architecture == "grouped_clusters")
    assert not grouped.viable and "ASYNC-DATA-LOSS" in grouped.blockers
    assert grouped.data_at_risk_unbounded and grouped.survives_site_loss is None
    loss = next(
        f for f in result.findings if f.rule == "ASYNC-DATA-LOSS" and f.option == "grouped_clusters"
    )
    assert loss.remedy == "decision"
    # frankfurt writes too, so paris's replica applies frankfurt's 5,000 commits/s as commits
    # of the two-site paris cluster, about 2.2 ms each: about 11 appliers busy all the time.
    needed = int(re.search(r"Run (\d+) appliers", loss.message).group(1))
    assert 12 <= needed <= 18
    assert "keep 11." in loss.message and "it runs 1" in loss.message
    (capacity,) = [
        f
        for f in result.findings
        if f.rule == "ASYNC-APPLY-CAPACITY" and f.option == "grouped_clusters"
    ]
    assert capacity.severity == "warning" and f"Run {needed} appliers" in capacity.message


def test_the_appliers_the_finding_names_restore_the_option(tmp_path: Path) -> None:
    first = recommend(_write(tmp_path / "one.yaml", paris_frankfurt(5000, 1)))
    loss = next(
        f for f in first.findings if f.rule == "ASYNC-DATA-LOSS" and f.option == "grouped_clusters"
    )
    needed = int(re.search(r"Run (\d+) appliers", loss.message).group(1))
    fixed = recommend(_write(tmp_path / "fixed.yaml", paris_frankfurt(5000, needed)))
    grouped = next(o for o in fixed.options if o.architecture == "grouped_clusters")
    assert grouped.viable and not grouped.data_at_risk_unbounded
    assert grouped.data_at_risk_s is not None and grouped.data_at_risk_s < 0.05


def test_left_to_the_design_the_appliers_are_set_in_the_generated_sql(tmp_path: Path) -> None:
    analysis = analyse(_write(tmp_path / "free.yaml", paris_frankfurt(5000, None)))
    grouped = analysis.option("grouped_clusters")
    (link,) = grouped.async_links
    assert not link.applier_threads_given
    # The fewest whose p99 wait for a free applier is within one p99 apply: hand-checked
    # with the M/M/1 queue of one server that many times faster.
    threads = link.applier_threads
    busy = 5000 * link.apply_ms / 1000 / threads
    wait_ms = link.apply_ms / threads / (1 - busy) * math.log(busy / 0.01)
    assert wait_ms <= link.lag_p99_parts_ms["apply"]
    # frankfurt's "orders_de next_id" (40/s) applies in order on one applier, about 9 % busy:
    # spaced by frankfurt's own commits, its updates add no wait of their own.
    assert (link.in_order_row, link.in_order_per_s) == ("orders_de next_id", 40.0)
    assert link.in_order_busy < 1
    assert link.lag_p99_parts_ms["apply_queue"] == pytest.approx(wait_ms, rel=1e-9)
    fewer = threads - 1
    busy_fewer = 5000 * link.apply_ms / 1000 / fewer
    assert busy_fewer >= 1 or (
        link.apply_ms / fewer / (1 - busy_fewer) * math.log(busy_fewer / 0.01)
        > link.lag_p99_parts_ms["apply"]
    )
    plan = plan_configuration(analysis, "grouped_clusters")
    for channel in plan.async_links[0].channels:  # both ways: both clusters write
        appliers = {s.name: s.value for s in channel.appliers}
        assert appliers == {"slave_parallel_threads": threads, "slave_parallel_mode": "optimistic"}
        assert "5000 commits/s at the peak" in channel.appliers[0].reason


def test_pxc_sets_workers_and_commit_order(tmp_path: Path) -> None:
    text = paris_frankfurt(5000, None).replace("flavor: mariadb", "flavor: pxc")
    assert "flavor: pxc" in text
    analysis = analyse(_write(tmp_path / "pxc.yaml", text))
    plan = plan_configuration(analysis, "grouped_clusters")
    channel = plan.async_links[0].channels[0]
    appliers = {s.name: s.value for s in channel.appliers}
    assert appliers["replica_preserve_commit_order"] == "ON"
    assert appliers["replica_parallel_workers"] >= 4  # MySQL 8.0.27's default, at least


def _write(path: Path, text: str) -> Path:
    """``text`` as a topology file beside the example's measurement files."""
    measurements = path.parent / "measurements"
    if not measurements.exists():
        shutil.copytree(EXAMPLE.parent / "measurements", measurements)
    path.write_text(text, encoding="utf-8")
    return path


def test_pxc_wan_windows_no_longer_says_an_unbounded_option_would_also_work() -> None:
    # Its 2,700 commits/s of 16-256 KB write sets need 117 % of the assumed 1 Gbit/s between
    # the clusters: a failover would lose an ever-growing backlog.
    path = EXAMPLE.parents[1] / "pxc-wan-windows" / "topology.yaml"
    result = recommend(path)
    assert result.architecture == "single_cluster"
    assert "would also work" not in result.summary
    for name in ("per_site_clusters", "grouped_clusters"):
        option = next(o for o in result.options if o.architecture == name)
        assert option.survives_site_loss is None and option.data_at_risk_unbounded
        assert option.data_at_risk_s is None and option.failover_rpo_ms is None
        assert option.data_at_risk_reason == (
            "the asynchronous channel dc-a-dc-b cannot keep up with the peak: the replicated "
            "bytes need 117% of the link's 1000 Mbit/s (assumed: the topology gives no "
            "bandwidth_mbps)"
        )
        assert f"{name} keeps writing on every failure only by losing an unbounded" in (
            result.summary
        )


def test_an_unbounded_loss_says_why_once_not_a_median_of_infinity() -> None:
    # dr-site-durable: Krakow's replica applies no more than its 6 dependencies let at
    # 4.42 ms a commit of its own cluster (1,357/s), below the 1,800/s peak
    path = EXAMPLE.parents[1] / "dr-site-durable" / "topology.yaml"
    result = recommend(path)
    (finding,) = [
        f
        for f in result.findings
        if f.rule == "ASYNC-DATA-LOSS" and f.option == "per_site_clusters"
    ]
    assert (
        "had not delivered yet: an ever-growing backlog of commits (1800 commits/s at 4.42 ms"
        in (finding.message)
    )
    assert "p50 lag" not in finding.message
    assert finding.values["at_risk_s"] is None and finding.values["lag_p50_ms"] is None

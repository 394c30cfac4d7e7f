"""The configuration plan: values computed by hand from the topology, each with a reason."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from advisor.analysis import Analysis, analyse
from advisor.config.model import cluster_labels, short_name
from advisor.config.plan import ConfigPlan, Setting, plan_configuration
from advisor.errors import AdvisorError
from advisor.inputs.loading import parse_topology
from advisor.model import tcp

THREE_SITES = """
name: t
sites: [{{name: a}}, {{name: b}}, {{name: c}}]
links:
  - {{sites: [a, b], measurements: [{{method: icmp, samples_ms: [{rtt}, {rtt}]}}]}}
  - {{sites: [a, c], measurements: [{{method: icmp, samples_ms: [{rtt}, {rtt}]}}]}}
  - {{sites: [b, c], measurements: [{{method: icmp, samples_ms: [{rtt}, {rtt}]}}]}}
"""


def run(text: str, extra: str = "", rtt: float = 7.0) -> Analysis:
    body = textwrap.dedent(text).format(rtt=rtt) + textwrap.dedent(extra)
    return analyse(parse_topology(body))


def options_of(plan: ConfigPlan, cluster: int = 0, site: int = 0) -> dict[str, Any]:
    return {s.name: s.value for s in plan.clusters[cluster].site_plans[site].provider_options}


def settings(items: list[Setting]) -> dict[str, Any]:
    return {s.name: s.value for s in items}


def all_settings(value: Any) -> list[Setting]:
    """Every Setting anywhere in a plan."""
    if isinstance(value, Setting):
        return [value]
    if isinstance(value, list | tuple):
        return [s for item in value for s in all_settings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in all_settings(item)]
    if isinstance(value, BaseModel):
        return [s for name in type(value).model_fields for s in all_settings(getattr(value, name))]
    return []


def test_segments_one_per_site_and_placeholder_hosts() -> None:
    plan = plan_configuration(run(THREE_SITES, "workload: {commits_per_s: 20}"), "single_cluster")
    cluster = plan.clusters[0]
    assert [(s.site, s.segment) for s in cluster.site_plans] == [("a", 0), ("b", 1), ("c", 2)]
    assert [options_of(plan, 0, i)["gmcast.segment"] for i in range(3)] == [0, 1, 2]
    assert cluster.site_plans[1].hosts == ["b-db1", "b-db2", "b-db3"]
    assert settings(cluster.server)["wsrep_cluster_address"] == (
        "gcomm://a-db1,a-db2,a-db3,b-db1,b-db2,b-db3,c-db1,c-db2,c-db3"
    )
    assert cluster.site_plans[0].file == "config/galera-a_b_c.a.cnf"
    assert "placeholders" in plan.placeholder_note


def test_send_window_follows_the_rule_power_of_two_above_peak_times_headroom() -> None:
    analysis = run(THREE_SITES, "workload: {commits_per_s: {peak: 2000}}")
    option = next(o for o in analysis.options if o.architecture == "single_cluster")
    cluster = option.clusters[0]
    # SEND-WINDOW: 2000/s x headroom 2 x one commit round, in messages of
    # writesets_per_message queued write sets (32728 // 10656 = 3 at the default sizes),
    # rounded up to a power of two, >= 16; the user window half of it.
    assert cluster.writesets_per_message == 3.0
    in_flight = 2000 * 2 * cluster.safe_period_ms / 1000 / cluster.writesets_per_message
    expected = max(16, 2 ** math.ceil(math.log2(in_flight)))
    options = options_of(plan_configuration(analysis, option))
    assert options["evs.send_window"] == expected
    assert options["evs.user_send_window"] == expected // 2


def test_send_window_without_a_commit_rate_keeps_what_the_predictions_use() -> None:
    # Nothing sizes the windows without a peak rate: the design keeps the defaults, predicts
    # with them, and says what to give (no longer 512 written while 4/2 was predicted).
    analysis = run(THREE_SITES)
    assert (
        analysis.provider_options["evs.send_window"],
        analysis.provider_options["evs.user_send_window"],
    ) == (4, 2)
    plan = plan_configuration(analysis, "single_cluster")
    options = options_of(plan)
    assert (options["evs.send_window"], options["evs.user_send_window"]) == (4, 2)
    (window,) = [s for s in plan.clusters[0].provider_options if s.name == "evs.send_window"]
    reason = window.reason
    assert "give workload.commits_per_s" in reason


def test_send_window_kept_when_the_default_carries_the_peak() -> None:
    options = options_of(
        plan_configuration(run(THREE_SITES, "workload: {commits_per_s: 5}"), "single_cluster")
    )
    assert (options["evs.send_window"], options["evs.user_send_window"]) == (4, 2)


TAILED = """
name: t
sites: [{name: a}, {name: b}, {name: c}]
links:
  - sites: [a, b]
    measurements:
      - {method: icmp, samples_ms: [10, 10, 10, 10, 10, 10, 10, 10, 10, 2500], loss: 0.02}
  - {sites: [a, c], measurements: [{method: icmp, samples_ms: [1, 1.1]}]}
  - {sites: [b, c], measurements: [{method: icmp, samples_ms: [1, 1.1]}]}
"""
_RECIPE = (
    "evs.keepalive_period",
    "evs.suspect_timeout",
    "evs.inactive_timeout",
    "evs.install_timeout",
)


def test_timers_where_a_silence_reaches_them_and_a_user_value_kept_as_given() -> None:
    # A 2.5 s round trip in 10 samples: it reaches keepalive (1 s) and the delayed list
    # (2 s), 8,640 times a day; keepalive to the whole second above it, 3 s, and suspect to
    # 3 x 3 = 9 s (Galera: keepalive <= suspect / 3). Nothing reaches 15 s: inactive and
    # install stay at their defaults.
    analysis = analyse(parse_topology(TAILED))
    (finding, *_) = [f for f in analysis.findings if f.rule == "RTT-TAIL-INSTABILITY"]
    assert "round trips up to 2,500 ms reach evs.keepalive_period (1 s)" in finding.message
    assert "set evs.keepalive_period=PT3S; evs.suspect_timeout=PT9S" in finding.message
    options = options_of(plan_configuration(analysis, "single_cluster"))
    assert (options["evs.keepalive_period"], options["evs.suspect_timeout"]) == ("PT3S", "PT9S")
    assert "evs.inactive_timeout" not in options and "evs.install_timeout" not in options
    # Codership KB "WAN Latency": every period must exceed the highest RTT, 2.5 s.
    assert options["evs.delay_margin"] == options["evs.join_retrans_period"] == "PT3S"
    pinned = analyse(
        parse_topology(TAILED + "galera: {provider_options: {evs.suspect_timeout: PT40S}}\n")
    )
    options = options_of(plan_configuration(pinned, "single_cluster"))
    assert options["evs.suspect_timeout"] == "PT40S"  # the user's, kept as given
    assert options["evs.keepalive_period"] == "PT3S"
    # Galera wants inactive > suspect: 15 s is not, so the design doubles the user's 40 s.
    assert options["evs.inactive_timeout"] == "PT80S"


def test_a_clean_wan_keeps_the_default_timeouts() -> None:
    # A 7 ms metro link without a tail: longer timers would only turn a 5 s stall on a dead
    # node into a 30 s one.
    analysis = run(THREE_SITES)
    assert not any(f.rule == "RTT-TAIL-INSTABILITY" for f in analysis.findings)
    options = options_of(plan_configuration(analysis, "single_cluster"))
    assert not set(_RECIPE) & set(options)


def test_periods_exceed_a_round_trip_over_one_second() -> None:
    plan = plan_configuration(run(THREE_SITES, rtt=1500.0), "single_cluster")
    options = options_of(plan)
    # Codership KB "WAN Latency": every period above the highest RTT (1.5 s -> 2 s).
    assert options["evs.delay_margin"] == "PT2S"
    assert options["evs.join_retrans_period"] == "PT2S"


def test_one_writer_flow_control_and_the_pre_4_10_spelling() -> None:
    options = options_of(plan_configuration(run(THREE_SITES), "single_cluster"))
    assert (
        options["gcs.fc_limit"],
        options["gcs.fc_factor"],
        options["gcs.fc_single_primary"],
    ) == (256, 0.99, "YES")
    old = run(THREE_SITES, 'galera: {version: "25.3.37"}')
    options = options_of(plan_configuration(old, "single_cluster"))
    assert options["gcs.fc_master_slave"] == "YES"
    assert "gcs.fc_single_primary" not in options


def test_flow_control_pinned_in_topology_yaml_is_kept_with_the_designs_value_said() -> None:
    pinned = run(THREE_SITES, 'galera: {provider_options: {"gcs.fc_limit": 16}}')
    plan = plan_configuration(pinned, "single_cluster")
    settings = {s.name: s for s in plan.clusters[0].site_plans[0].provider_options}
    assert settings["gcs.fc_limit"].value == "16"
    assert settings["gcs.fc_limit"].reason.startswith(
        "kept as given in topology.yaml; the design would set 256"
    )
    assert "the predictions use the value given" in settings["gcs.fc_limit"].reason
    # the keys it does not pin take the design's values
    assert (settings["gcs.fc_factor"].value, settings["gcs.fc_single_primary"].value) == (
        0.99,
        "YES",
    )
    old_name = run(THREE_SITES, 'galera: {provider_options: {"gcs.fc_master_slave": false}}')
    options = options_of(plan_configuration(old_name, "single_cluster"))
    assert options["gcs.fc_master_slave"] == "NO" and "gcs.fc_single_primary" not in options


def test_old_galera_gets_a_receive_buffer_for_the_bdp() -> None:
    old = run(THREE_SITES, 'galera: {version: "26.4.3"}', rtt=80.0)
    options = options_of(plan_configuration(old, "single_cluster"))
    # 1000 Mbit/s (assumed) x 80 ms = 10 MB in flight, half a buffer advertised: 20 MB.
    assert options["socket.recv_buf_size"] == 20_000_000
    new = run(THREE_SITES, 'galera: {version: "26.4.5"}', rtt=80.0)
    assert "socket.recv_buf_size" not in options_of(plan_configuration(new, "single_cluster"))


def test_lan_clusters_keep_the_defaults_except_flow_control() -> None:
    plan = plan_configuration(run(THREE_SITES), "per_site_clusters")
    assert [c.name for c in plan.clusters] == ["a", "b", "c"]
    options = options_of(plan, 1)
    assert set(options) == {
        "gcs.fc_limit",
        "gcs.fc_factor",
        "gcs.fc_single_primary",
        "socket.ssl_key",
        "socket.ssl_cert",
        "socket.ssl_ca",
    }
    assert plan.clusters[1].site_plans[0].file == "config/galera-b.cnf"


def test_user_provider_options_are_kept_and_bad_values_refused(write: Callable[..., Path]) -> None:
    kept = run(THREE_SITES, "galera: {provider_options: {gcache.size: 2G}}")
    assert options_of(plan_configuration(kept, "single_cluster"))["gcache.size"] == "2G"
    hostile = 'galera: {provider_options: {gcache.name: "x; pc.ignore_sb=YES"}}\n'
    path = write(textwrap.dedent(THREE_SITES).format(rtt=7.0) + hostile)
    with pytest.raises(AdvisorError) as error:  # at load, so validate refuses it too
        analyse(path)
    assert str(error.value) == (
        f"{path}:7:42: galera.provider_options.gcache.name: provider option 'gcache.name' = "
        "'x; pc.ignore_sb=YES' cannot be written into wsrep_provider_options: expected "
        "letters, digits and _.:/+,@=- only"
    )


def test_mariadb_async_links_gtid_domains_and_channels() -> None:
    analysis = run(THREE_SITES, rtt=100.0)
    plan = plan_configuration(analysis, "per_site_clusters")
    server = [settings(c.server) for c in plan.clusters]
    assert [s["wsrep_gtid_domain_id"] for s in server] == [1, 2, 3]
    assert [s["server_id"] for s in server] == [1, 2, 3]
    assert all(s["log_slave_updates"] == "ON" for s in server)
    # Each cluster receives two channels (full mesh, both ways): duplicates are skipped.
    assert all(s["gtid_ignore_duplicates"] == "ON" for s in server)
    # A channel's replica, stopped while its node is out of the primary component, restarts
    # when the node rejoins (MariaDB's default leaves it stopped with no error shown).
    assert all(s["wsrep_restart_slave"] == "ON" for s in server)
    node_ids = [
        settings(v)["gtid_domain_id"]
        for c in plan.clusters
        for s in c.site_plans
        for v in s.per_node.values()
    ]
    assert node_ids == [101, 102, 103, 201, 202, 203, 301, 302, 303]
    link = plan.async_links[0]
    assert (link.clusters, link.variant, link.file) == (
        ("a", "b"),
        "mariadb",
        "config/async-replication-a-b.sql",
    )
    assert [(c.source_cluster, c.replica_cluster) for c in link.channels] == [
        ("a", "b"),
        ("b", "a"),
    ]
    channel = link.channels[0]
    options = settings(channel.options)
    # The source is not the ProxySQL writer (a-db1) of its cluster.
    assert (channel.source_host, channel.replica_host) == ("a-db2", "b-db2")
    assert (options["MASTER_HOST"], options["MASTER_USE_GTID"]) == ("a-db2", "slave_pos")
    # p99 lag: half the round trip, the default p99 write set (65,536 B) at the assumed
    # 1 Gbit/s (0.524288 ms), no load given so no queue, and the apply: a commit in cluster b,
    # at p99 (1 ms of local work and b's LAN round trip).
    apply_p99_ms = analysis.lan_commit_ms["b"]["p99"]
    assert 1.0 < apply_p99_ms < 2.0
    assert link.lag_p99_ms == pytest.approx(100.0 / 2 + 0.524 + apply_p99_ms, abs=2e-3)
    # No peak given: the SQL thread alone (MariaDB's default), said so in its reason.
    appliers = settings(channel.appliers)
    assert (appliers["slave_parallel_threads"], appliers["slave_parallel_mode"]) == (
        2,  # b-db2 replicates from a and from c: MariaDB's pool serves both channels
        "optimistic",
    )


def test_mysql_variant_for_pxc_with_failover_sources() -> None:
    plan = plan_configuration(
        run(THREE_SITES, "galera: {flavor: pxc}", rtt=100.0), "per_site_clusters"
    )
    server = settings(plan.clusters[0].server)
    assert "wsrep_on" not in server
    assert (
        server["gtid_mode"],
        server["enforce_gtid_consistency"],
        server["log_replica_updates"],
    ) == ("ON", "ON", "ON")
    assert server["wsrep_restart_replica"] == "ON"  # PXC's name since 8.0.26
    link = plan.async_links[0]
    assert link.variant == "mysql"
    channel = link.channels[0]
    options = settings(channel.options)
    assert (options["SOURCE_AUTO_POSITION"], options["SOURCE_CONNECTION_AUTO_FAILOVER"]) == (1, 1)
    # a-db2 is the first source; a-db1, the ProxySQL writer, the last resort.
    assert settings(channel.failover_sources) == {"a-db1": 40, "a-db2": 90, "a-db3": 80}
    assert any("PXC-4238" in note for note in link.notes)


def test_one_direction_when_only_one_cluster_writes() -> None:
    text = """
    name: t
    sites: [{name: a}, {name: b, writes: false}]
    links: [{sites: [a, b], measurements: [{method: icmp, samples_ms: [100, 101]}]}]
    """
    plan = plan_configuration(analyse(parse_topology(textwrap.dedent(text))), "per_site_clusters")
    assert [(c.source_cluster, c.replica_cluster) for c in plan.async_links[0].channels] == [
        ("a", "b")
    ]
    assert "gtid_ignore_duplicates" not in settings(plan.clusters[1].server)
    # Only the cluster that receives the channel runs a replica to restart.
    assert settings(plan.clusters[1].server)["wsrep_restart_slave"] == "ON"
    assert "wsrep_restart_slave" not in settings(plan.clusters[0].server)


def test_proxysql_one_writer_per_cluster_and_owner_routing() -> None:
    extra = """
    workload:
      hot_rows:
        - {name: "accounts id=42", updates_per_s: 5, writer_sites: [b]}
        - {name: "the stock counter", updates_per_s: 5, writer_sites: [c]}
    """
    plan = plan_configuration(run(THREE_SITES, extra, rtt=100.0), "per_site_clusters")
    proxy = plan.proxysql
    groups = [settings(r.columns) for r in proxy.galera_hostgroups]
    assert [
        (
            g["writer_hostgroup"],
            g["backup_writer_hostgroup"],
            g["reader_hostgroup"],
            g["offline_hostgroup"],
            g["max_writers"],
        )
        for g in groups
    ] == [(10, 11, 12, 13, 1), (20, 21, 22, 23, 1), (30, 31, 32, 33, 1)]
    weights = {
        settings(r.columns)["hostname"]: settings(r.columns)["weight"] for r in proxy.servers
    }
    # b-db1 writes; b-db2 serves the channels (replica of a and c, source for them): the
    # lowest weight, a writer only when nothing else is left; b-db3 is the next writer.
    assert (weights["b-db1"], weights["b-db2"], weights["b-db3"]) == (1_000_000, 10, 100_000)
    first, second = proxy.query_rules
    rule = settings(first.columns)
    assert (rule["destination_hostgroup"], rule["active"], first.active) == (20, 1, True)
    pattern = re.compile(str(rule["match_pattern"]), re.IGNORECASE)
    assert pattern.search("UPDATE accounts SET balance = balance - 1 WHERE id = 42")
    assert pattern.search("update accounts set n = 1 where id='42'")
    assert not pattern.search("UPDATE accounts SET n = 1 WHERE id = 420")
    assert not pattern.search("SELECT * FROM accounts WHERE id = 42")
    # A name that is not "table column=value" gives an inactive placeholder to adapt.
    assert (settings(second.columns)["destination_hostgroup"], second.active) == (30, False)
    # Three clusters take writes: a mysql_users row per site, none active by itself.
    assert [settings(r.columns)["default_hostgroup"] for r in proxy.users] == [10, 20, 30]
    assert not any(r.active for r in proxy.users)


def test_proxysql_single_cluster_needs_no_rules_and_one_active_user() -> None:
    plan = plan_configuration(run(THREE_SITES), "single_cluster")
    assert plan.proxysql.query_rules == []
    assert [(settings(r.columns)["default_hostgroup"], r.active) for r in plan.proxysql.users] == [
        (10, True)
    ]
    timeout = settings(plan.proxysql.variables)["mysql-monitor_galera_healthcheck_timeout"]
    assert timeout == 800  # 4 round trips of 7 ms fit ProxySQL's default


def test_healthcheck_timeout_grows_with_a_long_round_trip() -> None:
    plan = plan_configuration(run(THREE_SITES, rtt=300.0), "per_site_clusters")
    # 4 round trips of 300 ms = 1200 ms, above the 800 ms default.
    assert settings(plan.proxysql.variables)["mysql-monitor_galera_healthcheck_timeout"] == 1200


def test_os_buffers_from_the_worst_link_bdp() -> None:
    plan = plan_configuration(run(THREE_SITES, rtt=80.0), "single_cluster")
    os_settings = settings(plan.os.settings)
    buffer = int(tcp.socket_buffer_bytes_for(1000.0, 80.0))
    assert buffer == 20_000_000
    assert settings(plan.os.exact) == {"net.ipv4.tcp_slow_start_after_idle": 0}
    assert (os_settings["net.core.rmem_max"], os_settings["net.core.wmem_max"]) == (buffer, buffer)
    assert os_settings["net.ipv4.tcp_rmem"] == f"4096 131072 {buffer}"
    assert os_settings["net.ipv4.tcp_wmem"] == f"4096 16384 {buffer}"
    small = settings(plan_configuration(run(THREE_SITES, rtt=1.0), "single_cluster").os.settings)
    assert small["net.ipv4.tcp_rmem"] == "4096 131072 6291456"  # Linux default kept
    assert small["net.core.rmem_max"] == 250_000  # 1000 Mbit/s x 1 ms / 0.5


def test_garbd_joins_with_the_clusters_name_and_its_own_segment() -> None:
    text = """
    name: t
    sites: [{name: a}, {name: b}, {name: w, nodes: 0, writes: false, arbitrator: true}]
    links:
      - {sites: [a, b], measurements: [{method: icmp, samples_ms: [5, 5.1]}]}
      - {sites: [a, w], measurements: [{method: icmp, samples_ms: [6, 6.1]}]}
      - {sites: [b, w], measurements: [{method: icmp, samples_ms: [6, 6.1]}]}
    """
    plan = plan_configuration(analyse(parse_topology(textwrap.dedent(text))), "single_cluster")
    cluster = plan.clusters[0]
    assert cluster.garbd is not None
    garbd = settings(cluster.garbd.settings)
    assert garbd["GALERA_GROUP"] == settings(cluster.server)["wsrep_cluster_name"] == "a_b"
    assert garbd["GALERA_NODES"] == (
        "a-db1:4567,a-db2:4567,a-db3:4567,b-db1:4567,b-db2:4567,b-db3:4567"
    )
    assert str(garbd["GALERA_OPTIONS"]).startswith("gmcast.segment=2; evs.send_window=")
    assert "repl." not in str(garbd["GALERA_OPTIONS"])
    assert cluster.garbd.file == "config/garbd.conf"


def test_every_value_has_a_reason() -> None:
    extra = """
    workload:
      commits_per_s: {peak: 3000}
      hot_rows: [{name: "t id=1", updates_per_s: 5}]
    """
    analysis = run(THREE_SITES, extra, rtt=30.0)
    for option in analysis.options:
        plan = plan_configuration(analysis, option)
        found = all_settings(plan)
        assert found
        short = [s.name for s in found if len(s.reason) <= 10]
        assert not short


def test_unknown_option_name_is_an_error() -> None:
    with pytest.raises(AdvisorError) as error:
        plan_configuration(run(THREE_SITES), "two_clusters")
    assert str(error.value) == (
        "no option 'two_clusters' in this analysis; evaluated options: "
        "single_cluster, per_site_clusters, grouped_clusters"
    )


def test_labels_stay_short_and_distinct() -> None:
    assert cluster_labels([["a", "b"], ["c"]]) == ["a_b", "c"]
    long = [[f"site-{n}-" + "x" * 40 for n in range(3)], ["y" * 60]]
    labels = cluster_labels(long)
    assert all(len(label) == 48 for label in labels)
    assert len(set(labels)) == 2
    assert short_name("abc", 3) == "abc"

"""The Prometheus alerting rules ``advisor doc`` writes (advisor/config/alerts.py).

For every example: the file parses, holds a group per cluster of the design and the channel
rules of the design's channels only, each rule selecting its own cluster; paris-frankfurt's
and us-eu's thresholds are computed here by hand from the design. With promtool (Debian's
``prometheus``), ``promtool check rules`` accepts every file and ``promtool test rules`` runs
a unit-test file made here: for each rule of each group, series that breach it (the alert
fires, with its labels and its annotations as Prometheus expands them) and series that do not
(it stays quiet). Without promtool those tests skip; ``ADVISOR_REQUIRE_PROMETHEUS=1`` (CI)
makes them fail instead.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_tools import require_prometheus, require_promtool

from advisor.config.alerts import (
    ALERTS_FILE,
    PAUSE_TOLERANCE,
    SEVERITY,
    SURVIVED,
    TARGET_LABEL,
    AlertRule,
    AlertsPlan,
    promql_string,
    template_text,
)

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = (
    "amsterdam-metro",
    "dr-site-durable",
    "global-counter",
    "paris-frankfurt",
    "pxc-wan-windows",
    "us-eu",
)


@dataclass(frozen=True)
class Generated:
    analysis: Any
    plan: Any
    alerts: AlertsPlan
    text: str


_CACHE: dict[Path, Generated] = {}


def _generate(topology: Path) -> Generated:
    """The analysis, plan, alerts and the file ``advisor doc`` writes (cached per path)."""
    if topology not in _CACHE:
        from advisor.analysis import analyse
        from advisor.config.alerts import alerts_plan
        from advisor.config.plan import plan_configuration
        from advisor.documents.render import render_documents

        analysis = analyse(topology)
        plan = plan_configuration(analysis)
        text = render_documents(analysis, ("md",))[ALERTS_FILE]
        _CACHE[topology] = Generated(analysis, plan, alerts_plan(analysis, plan), text)
    return _CACHE[topology]


def _example(name: str) -> Generated:
    return _generate(REPO / "examples" / name / "topology.yaml")


def _rules_by_group(text: str) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """group name -> alert name -> its rules (one per alert name, two channels aside)."""
    document = yaml.safe_load(text)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for group in document["groups"]:
        by_name: dict[str, list[dict[str, Any]]] = {}
        for rule in group["rules"]:
            by_name.setdefault(rule["alert"], []).append(rule)
        out[group["name"]] = by_name
    return out


def _seconds(duration: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([sm])", duration).groups()  # type: ignore[union-attr]
    return int(number) * (60 if unit == "m" else 1)


# -- the file and the design ---------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_rule_file_holds_the_designs_clusters_and_channels_only(example: str) -> None:
    generated = _example(example)
    plan, rules = generated.plan, generated.analysis.rules
    document = yaml.safe_load(generated.text)
    assert [g["name"] for g in document["groups"]] == [f"advisor.{c.name}" for c in plan.clusters]
    channels = {(ch.replica_cluster, ch.name) for link in plan.async_links for ch in link.channels}
    written = set()
    for group, cluster in zip(document["groups"], plan.clusters, strict=True):
        names = [r["alert"] for r in group["rules"]]
        assert names[:6] == [
            "GaleraFlowControlPaused",
            "GaleraRecvQueueAtFlowControlLimit",
            "GaleraClusterSizeBelowDesign",
            "GaleraNotPrimary",
            "MySQLDown",
            "GaleraConflictsAboveModel",
        ]
        for rule in group["rules"]:
            # Each rule reads its own cluster's targets, and carries its rule's severity; a
            # loss the design survives warns at most (a node restart does not page).
            assert f"{TARGET_LABEL}={promql_string(cluster.name)}" in rule["expr"]
            labels = rule["labels"]
            assert labels[TARGET_LABEL] == cluster.name
            severity = rules[labels["advisor_rule"]].severity
            if rule["alert"] in SURVIVED and severity == "blocker":
                severity = "warning"
            assert labels["severity"] == SEVERITY[severity]
            assert _seconds(rule["for"]) >= 0
            assert set(rule["annotations"]) == {"summary", "description", "runbook"}
            if "channel" in labels:
                written.add((cluster.name, labels["channel"]))
                assert names.count(rule["alert"]) == len(
                    [c for c in channels if c[0] == cluster.name]
                )
    assert written == channels
    # What the file says is what the plan holds: expressions, durations, annotations.
    for group, written_group in zip(generated.alerts.groups, document["groups"], strict=True):
        for rule, rule_doc in zip(group.rules, written_group["rules"], strict=True):
            assert rule_doc["expr"] == rule.expr
            assert _seconds(rule_doc["for"]) == rule.for_s
            description = rule_doc["annotations"]["description"]
            assert description == template_text(rule.description) + (f" (for: {rule.for_reason}.)")
    # The runbooks named are files this design writes.
    files = set(plan.files())
    for group in document["groups"]:
        for rule in group["rules"]:
            assert set(rule["annotations"]["runbook"].split(", ")) <= files


def test_paris_frankfurt_thresholds_by_hand() -> None:
    generated = _example("paris-frankfurt")
    groups = _rules_by_group(generated.text)
    paris, frankfurt = groups["advisor.paris-1_paris-2"], groups["advisor.frankfurt"]

    # Members of the view: 3 + 3 data nodes and the garbd at paris-witness; Frankfurt 3.
    assert paris["GaleraClusterSizeBelowDesign"][0]["expr"].endswith("< 7")
    assert frankfurt["GaleraClusterSizeBelowDesign"][0]["expr"].endswith("< 3")

    # The design's flow control (Codership's one-writer recipe): gcs.fc_limit 256,
    # gcs.fc_factor 0.99, gcs.fc_single_primary YES, so no sqrt(members): FC_STOP above
    # int(256 + 0.5) = 256, FC_CONT at or below int(256 x 0.99 + 0.5) = int(253.94) = 253.
    for group in (paris, frankfurt):
        assert group["GaleraRecvQueueAtFlowControlLimit"][0]["expr"].endswith(">= 253")
        assert (
            "FC_STOP above 256"
            in group["GaleraRecvQueueAtFlowControlLimit"][0]["annotations"]["description"]
        )

    # Every member's appliers carry the peak (the design's threads: twice it): the model
    # predicts no pause, so the threshold is the tolerance alone.
    option = generated.analysis.option(generated.plan.architecture)
    assert all(c.apply_capacity_per_s >= 2 * 1500 for c in option.clusters)
    for group in (paris, frankfurt):
        assert group["GaleraFlowControlPaused"][0]["expr"].endswith(f"> {PAUSE_TOLERANCE:g}")

    # Conflicts: ProxySQL's one writer per cluster means none under the design; any is drift.
    # Paris's hot row would conflict were writes spread over its sites, and the description
    # says at what rate, but the threshold stays 0.
    rows = [r for r in option.hot_rows if r.cluster == 0]
    rate = sum(r.conflicts_per_s for r in rows)
    assert rate > 0 and [r.row.name for r in rows] == ["inventory sku=1001"]
    for group in (paris, frankfurt):
        (conflicts,) = group["GaleraConflictsAboveModel"]
        assert conflicts["expr"].endswith("> 0")
        assert conflicts["annotations"]["description"].startswith("Predicted conflicts: none.")
    assert f"{rate:.3g}/s" in paris["GaleraConflictsAboveModel"][0]["annotations"]["description"]

    # Channels: max_data_loss_s 1, Seconds_Behind_Master in whole seconds: above 1. MariaDB
    # names a channel by Connection_name; each sits in its replica's group.
    lag = paris["ReplicationChannelLag"][0]
    assert lag["expr"] == (
        'mysql_slave_status_seconds_behind_master{galera_cluster="paris-1_paris-2", '
        'connection_name="from_frankfurt"} > 1'
    )
    assert lag["for"] == "1m"
    assert "requirements.max_data_loss_s (1 s)" in lag["annotations"]["description"]
    assert frankfurt["ReplicationChannelLag"][0]["labels"]["channel"] == "from_paris-1_paris-2"
    # The channel has no MASTER_CONNECT_RETRY: MariaDB's default, 60 s.
    assert paris["ReplicationChannelStopped"][0]["for"] == "1m"

    # for: evs.inactive_timeout the design leaves at PT15S; ProxySQL's detection 15.8 s.
    assert paris["GaleraNotPrimary"][0]["for"] == "15s"
    assert generated.plan.detection_s == 15.8
    assert paris["MySQLDown"][0]["for"] == "16s"

    # Severities: FLOW-CONTROL, QUORUM-* and ASYNC-DATA-LOSS are blockers, HOT-ROW-CONFLICTS
    # a warning.
    assert paris["GaleraFlowControlPaused"][0]["labels"]["severity"] == "critical"
    assert paris["GaleraConflictsAboveModel"][0]["labels"]["severity"] == "warning"
    assert lag["labels"]["severity"] == "critical"


def test_us_eu_channels_use_mysqls_label_and_the_designs_connect_retry() -> None:
    groups = _rules_by_group(_example("us-eu").text)
    dublin = groups["advisor.dublin"]
    selector = '{galera_cluster="dublin", channel_name="from_virginia"}'
    assert dublin["ReplicationChannelLag"][0]["expr"] == (
        f"(mysql_slave_status_seconds_behind_master{selector} or "
        f"mysql_slave_status_seconds_behind_source{selector}) > 1"
    )
    # SOURCE_CONNECT_RETRY=10 in the design's channel options.
    assert dublin["ReplicationChannelStopped"][0]["for"] == "10s"
    # No garbd: three nodes.
    assert dublin["GaleraClusterSizeBelowDesign"][0]["expr"].endswith("< 3")


def _copy_example(name: str, tmp_path: Path, edit: dict[str, str]) -> Path:
    folder = tmp_path / name
    shutil.copytree(REPO / "examples" / name, folder)
    topology = folder / "topology.yaml"
    text = topology.read_text()
    for old, new in edit.items():
        assert old in text
        text = text.replace(old, new)
    topology.write_text(text)
    return topology


def test_the_lag_allowance_is_the_requirement_rounded_up_else_the_predicted_lag(
    tmp_path: Path,
) -> None:
    looser = _generate(
        _copy_example("us-eu", tmp_path, {"max_data_loss_s: 1": "max_data_loss_s: 2.5"})
    )
    lag = _rules_by_group(looser.text)["advisor.dublin"]["ReplicationChannelLag"][0]
    assert lag["expr"].endswith("> 3")  # 2.5 s in whole seconds
    # global-counter states no max_data_loss_s: the predicted p99 lag (about 10 ms) rounds up
    # to the counter's one second.
    generated = _example("global-counter")
    assert generated.analysis.topology.requirements.max_data_loss_s is None
    link = generated.plan.async_links[0]
    assert link.lag_p99_ms < 1000
    lag = _rules_by_group(generated.text)["advisor.london"]["ReplicationChannelLag"][0]
    assert lag["expr"].endswith("> 1")
    assert (
        f"predicted p99 lag, the data at risk ({link.lag_p99_ms:.1f} ms"
        in (lag["annotations"]["description"])
    )


def test_no_channel_no_channel_rules() -> None:
    for name in ("amsterdam-metro", "pxc-wan-windows"):
        generated = _example(name)
        assert not generated.plan.async_links
        assert "mysql_slave_status" not in generated.text


def test_names_from_user_text_stay_text(tmp_path: Path) -> None:
    # A hot row's name is free text: it reaches the conflicts rule's description, which
    # Prometheus expands as a Go template, inside a YAML file.
    name = 'ledger {{ $value }} "q" \'a\': #x {{ template "y" }}'
    topology = _copy_example(
        "amsterdam-metro",
        tmp_path,
        {'name: "ledger_seq id=1"': "name: " + yaml.safe_dump(name).strip().removesuffix("...")},
    )
    generated = _generate(topology.resolve())
    rule = _rules_by_group(generated.text)["advisor.ams-1_ams-2_ams-3"][
        "GaleraConflictsAboveModel"
    ][0]
    description = rule["annotations"]["description"]
    assert template_text(name) in description
    assert _expand(description, "", "").count(name) == 1
    assert "{{ $value }}" not in description.replace(template_text(name), "")


# -- promtool ------------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES)
def test_promtool_check_rules_accepts_every_file(example: str, tmp_path: Path) -> None:
    binary = require_promtool()
    path = tmp_path / "prometheus-alerts.yml"
    path.write_text(_example(example).text)
    result = subprocess.run(
        [binary, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rules = sum(len(g.rules) for g in _example(example).alerts.groups)
    assert f"SUCCESS: {rules} rules found" in result.stdout


def _expand(text: str, instance: str, value: str) -> str:
    """An annotation as Prometheus expands it, for the templates this file writes."""
    text = text.replace("{{ $labels.instance }}", instance).replace("{{ $value }}", value)
    return text.replace('{{ "{{" }}', "{{").replace('{{ "}}" }}', "}}")


def _series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ", ".join(f"{k}={promql_string(v)}" for k, v in labels.items())
    return {"series": f"{metric}{{{inner}}}", "values": values}


def _flat(value: float) -> str:
    return f"{value:g}+0x20"


def _climbing(per_minute: float) -> str:
    return f"0+{per_minute!r}x20"


_EVAL = "15m"  # after every window (5m) and every for: (at most 5m) has passed


@dataclass
class _Case:
    series: list[dict[str, str]]
    fires: bool
    labels: dict[str, str]  # the alert's labels when it fires
    value: str  # {{ $value }} as Prometheus prints it


def _cases(
    rule: AlertRule, written: dict[str, Any], cluster: str, channel_label: str | None
) -> list[_Case]:
    """Series that breach ``rule`` and series that do not, for one group's rule."""
    instance = f"{cluster}-node"
    own = {TARGET_LABEL: cluster, "instance": instance}
    rule_labels = dict(written["labels"])
    threshold = rule.threshold
    name = rule.alert
    if name == "GaleraFlowControlPaused":
        assert threshold < 1, "a pause share above 1 can never be reached"
        breach, healthy = (threshold + 1.0) / 2.0, threshold / 2.0
        labels = {TARGET_LABEL: cluster, **rule_labels}
        metric = rule.metrics[0]
        return [
            _Case([_series(metric, own, _climbing(s * 60e9))], fires, labels, "")
            for s, fires in ((breach, True), (healthy, False))
        ]
    if name == "GaleraConflictsAboveModel":
        # Per 5 minutes, both counters together: past the bound, or at 90 % of it (none).
        over = threshold + max(10.0, 0.05 * threshold)
        labels = {TARGET_LABEL: cluster, **rule_labels}
        return [
            _Case(
                [_series(m, own, _climbing(total / 5.0 / 2.0)) for m in rule.metrics],
                fires,
                labels,
                "",
            )
            for total, fires in ((over, True), (0.9 * threshold, False))
        ]
    gauges = {
        "GaleraRecvQueueAtFlowControlLimit": (threshold, threshold - 1),
        "GaleraClusterSizeBelowDesign": (threshold - 1, threshold),
        "GaleraNotPrimary": (0, 1),
        "MySQLDown": (0, 1),
    }
    if name in gauges:
        breach, healthy = gauges[name]
        return [
            _Case(
                [_series(rule.metrics[0], own, _flat(v))],
                fires,
                {**own, **rule_labels},
                f"{v:g}",
            )
            for v, fires in ((breach, True), (healthy, False))
        ]
    assert channel_label is not None
    channel = {**own, channel_label: rule.labels["channel"]}
    if name == "ReplicationChannelLag":
        # SHOW SLAVE STATUS's Seconds_Behind_Master; for MySQL also SHOW REPLICA STATUS's
        # Seconds_Behind_Source (MySQL 8.4, mysqld_exporter 0.16 and later).
        cases = [
            _Case(
                [_series(rule.metrics[0], channel, _flat(v))],
                fires,
                {**channel, **rule_labels},
                f"{v:g}",
            )
            for v, fires in ((threshold + 1, True), (threshold, False))
        ]
        cases += [
            _Case(
                [_series(metric, channel, _flat(threshold + 1))],
                True,
                {**channel, **rule_labels},
                f"{threshold + 1:g}",
            )
            for metric in rule.metrics[1:]
        ]
        return cases
    assert name == "ReplicationChannelStopped"
    ios = [m for m in rule.metrics if m.endswith("_io_running")]
    sqls = [m for m in rule.metrics if m.endswith("_sql_running")]
    assert len(ios) == len(sqls) == len(rule.metrics) // 2

    def running(io_value: int, sql_value: int, which: int = 0) -> list[dict[str, str]]:
        return [
            _series(ios[which], channel, _flat(io_value)),
            _series(sqls[which], channel, _flat(sql_value)),
        ]

    missing = {TARGET_LABEL: cluster, channel_label: rule.labels["channel"]}
    cases = [
        _Case(running(1, 0), True, {**channel, **rule_labels}, ""),
        _Case(running(0, 1), True, {**channel, **rule_labels}, ""),
        _Case([], True, {**missing, **rule_labels}, ""),  # absent(): the channel is gone
        _Case(running(1, 1), False, {}, ""),
    ]
    for which in range(1, len(ios)):  # MySQL 8.4's names: stopped, and running (not absent)
        cases += [
            _Case(running(1, 0, which), True, {**channel, **rule_labels}, ""),
            _Case(running(1, 1, which), False, {}, ""),
        ]
    return cases


def _unit_tests(generated: Generated) -> dict[str, Any]:
    """promtool's test file: every rule of every group, breached and quiet."""
    document = yaml.safe_load(generated.text)
    labels_of = {
        ch.name + "@" + ch.replica_cluster: (
            "connection_name" if link.variant == "mariadb" else "channel_name"
        )
        for link in generated.plan.async_links
        for ch in link.channels
    }
    # Every channel running and current, so that absent() of one channel fires only in the
    # case that removes it.
    baseline: dict[str, list[dict[str, str]]] = {}
    for key, label in labels_of.items():
        channel, cluster = key.split("@")
        labels = {TARGET_LABEL: cluster, "instance": f"{cluster}-node", label: channel}
        baseline[key] = [
            _series("mysql_slave_status_slave_io_running", labels, _flat(1)),
            _series("mysql_slave_status_slave_sql_running", labels, _flat(1)),
        ]
    tests = []
    for group, written in zip(generated.alerts.groups, document["groups"], strict=True):
        for rule, rule_doc in zip(group.rules, written["rules"], strict=True):
            key = f"{rule.labels.get('channel', '')}@{group.cluster}"
            for case in _cases(rule, rule_doc, group.cluster, labels_of.get(key)):
                others = [s for k, v in baseline.items() if k != key for s in v]
                expected = []
                if case.fires:
                    instance = case.labels.get("instance", "")
                    expected = [
                        {
                            "exp_labels": case.labels,
                            "exp_annotations": {
                                k: _expand(v, instance, case.value)
                                for k, v in rule_doc["annotations"].items()
                            },
                        }
                    ]
                tests.append(
                    {
                        "name": f"{group.cluster} {rule.alert} "
                        + ("fires" if case.fires else "stays quiet"),
                        "interval": "1m",
                        "input_series": case.series + others,
                        "alert_rule_test": [
                            {"eval_time": _EVAL, "alertname": rule.alert, "exp_alerts": expected}
                        ],
                    }
                )
    return {"rule_files": ["prometheus-alerts.yml"], "evaluation_interval": "1m", "tests": tests}


def _promtool_test(
    generated: Generated, tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], int]:
    binary = require_promtool()
    (tmp_path / "prometheus-alerts.yml").write_text(generated.text)
    tests = _unit_tests(generated)
    (tmp_path / "alerts-test.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    result = subprocess.run(
        [binary, "test", "rules", "alerts-test.yml"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    return result, len(tests["tests"])


@pytest.mark.parametrize("example", EXAMPLES)
def test_promtool_each_alert_fires_on_a_breach_and_stays_quiet_otherwise(
    example: str, tmp_path: Path
) -> None:
    generated = _example(example)
    result, count = _promtool_test(generated, tmp_path)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "SUCCESS" in result.stdout
    per_group = 6 * 2  # the six cluster rules, each breached and quiet
    # Per channel: lag breached and quiet, stopped 4 ways; MySQL's second set of names adds a
    # lag breach and a stopped breach and quiet.
    per_channel = {"mariadb": 2 + 4, "mysql": 2 + 1 + 4 + 2}
    channels = sum(
        per_channel[link.variant] * len(link.channels) for link in generated.plan.async_links
    )
    assert count == len(generated.alerts.groups) * per_group + channels


def test_promtool_sees_a_wrong_expectation_fail(tmp_path: Path) -> None:
    # The unit tests can fail: the same file with one threshold moved past its breach.
    generated = _example("paris-frankfurt")
    moved = generated.text.replace(
        'wsrep_cluster_size{galera_cluster="frankfurt"} < 3',
        'wsrep_cluster_size{galera_cluster="frankfurt"} < 2',
    )
    assert moved != generated.text
    result, _ = _promtool_test(
        Generated(generated.analysis, generated.plan, generated.alerts, moved), tmp_path
    )
    assert result.returncode != 0
    assert "frankfurt GaleraClusterSizeBelowDesign fires" in result.stdout + result.stderr


def test_promtool_accepts_a_user_name_with_template_braces(tmp_path: Path) -> None:
    name = 'ledger {{ $value }} "q" {{ template "y" }}'
    topology = _copy_example(
        "amsterdam-metro",
        tmp_path,
        {'name: "ledger_seq id=1"': "name: " + yaml.safe_dump(name).strip().removesuffix("...")},
    )
    generated = _generate(topology.resolve())
    out = tmp_path / "out"
    out.mkdir()
    result, _ = _promtool_test(generated, out)
    # The expected description holds the name as written: Prometheus printed it, braces and all.
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


def test_the_readme_excerpt_is_the_generated_file() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("### Alert rules", 1)[1]
    excerpt = re.search(r"```text\n(.*?)\n```", section, re.S)
    assert excerpt is not None
    generated = _example("paris-frankfurt").text
    assert "\n" + excerpt.group(1) + "\n" in generated


def test_a_missing_tool_skips_here_and_fails_under_the_ci_switch(monkeypatch) -> None:
    require_prometheus([])  # nothing missing: nothing happens
    monkeypatch.delenv("ADVISOR_REQUIRE_PROMETHEUS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="needs promtool"):
        require_prometheus(["promtool"])
    monkeypatch.setenv("ADVISOR_REQUIRE_PROMETHEUS", "1")
    with pytest.raises(pytest.fail.Exception, match="ADVISOR_REQUIRE_PROMETHEUS=1"):
        require_prometheus(["promtool"])


def test_an_unbounded_lag_with_no_requirement_gets_no_lag_rule(tmp_path: Path) -> None:
    # paris-frankfurt at 5,000 commits/s with one applier and no max_data_loss_s: the
    # recommended grouped design's channel cannot keep up (its p99 lag is unbounded), and no
    # requirement bounds it, so no threshold follows; the channels are still watched for a stop.
    topology = _copy_example(
        "paris-frankfurt",
        tmp_path,
        {
            "  max_data_loss_s: 1\n": "",
            "commits_per_s: {avg: 400, peak: 1500}": "commits_per_s: {peak: 5000}",
        },
    )
    topology.write_text(topology.read_text() + "\nreplication: {applier_threads: 1}\n")
    generated = _generate(topology)
    assert [link.lag_p99_ms for link in generated.plan.async_links] == [float("inf")]
    groups = _rules_by_group(generated.text)
    for group in groups.values():
        assert "ReplicationChannelLag" not in group
        assert len(group["ReplicationChannelStopped"]) == 1

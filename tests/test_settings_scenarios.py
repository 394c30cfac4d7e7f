"""Issue 21, parts 2 and 4, as a user meets them: a link's silences judged against the EVS
timers, and one set of provider options per design (findings, configuration, predictions).

Every scenario goes through :func:`advisor.analysis.analyse` and
:func:`advisor.documents.render.render_documents`, the calls behind ``advisor recommend`` and
``advisor doc``, and reads the generated files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from advisor.analysis import Analysis, analyse
from advisor.config.plan import plan_configuration
from advisor.documents.render import render_documents
from advisor.inputs.loading import parse_topology
from advisor.recommendation import recommend
from advisor.text.report import to_json

REPO = Path(__file__).resolve().parents[1]


def provider_options(files: dict[str, str]) -> dict[str, dict[str, str]]:
    """Each generated galera-*.cnf's wsrep_provider_options, as name -> value."""
    found = {}
    for name, text in files.items():
        if not re.fullmatch(r"config/galera-.*\.cnf", name):
            continue
        (line,) = re.findall(r'^wsrep_provider_options = "(.*)"$', text, re.MULTILINE)
        found[name] = dict(part.split("=", 1) for part in line.split("; "))
    return found


EVS_TIMERS = (
    "evs.keepalive_period",
    "evs.delay_margin",
    "evs.suspect_timeout",
    "evs.inactive_timeout",
    "evs.install_timeout",
)


def test_amsterdam_metro_keeps_the_evs_timers_at_their_defaults() -> None:
    # ams-1-ams-2's sockperf tail: max 4.5 ms, 9x its 0.5 ms median, a thousand times shorter
    # than the shortest EVS timer (keepalive PT1S): no finding, and the payments cluster's
    # nodes keep suspect_timeout PT5S (a dead node stalls commits 5 s, not 30).
    analysis = analyse(REPO / "examples" / "amsterdam-metro" / "topology.yaml")
    assert not [f for f in analysis.findings if f.rule == "RTT-TAIL-INSTABILITY"]
    options = provider_options(render_documents(analysis, ()))
    assert options  # one file per site of the chosen single cluster
    for name, values in options.items():
        assert not set(EVS_TIMERS) & set(values), (name, values)


LONG_SILENCE = """
name: long-silence
sites: [{name: a}, {name: b}, {name: c}]
links:
  - sites: [a, b]
    measurements:
      - {method: icmp, samples_ms: [20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 6500]}
  - {sites: [a, c], measurements: [{method: icmp, samples_ms: [1, 1.1]}]}
  - {sites: [b, c], measurements: [{method: icmp, samples_ms: [1, 1.1]}]}
"""


def test_a_link_silent_for_seconds_still_gets_the_timer_advice_and_the_config_applies_it() -> None:
    # One round trip in 12 lasts 6.5 s: it reaches keepalive (1 s), the delayed list (2 s) and
    # suspect_timeout (5 s), 7,200 times a day each. keepalive to 7 s (above 6.5 s); suspect
    # to 7 s beyond the silence, but Galera wants keepalive <= suspect / 3: 21 s; inactive
    # 15 s must exceed it: 42 s; install into [7, 42]: 7.5 s stays.
    analysis = analyse(parse_topology(LONG_SILENCE))
    (finding, *_) = [
        f
        for f in analysis.findings
        if f.rule == "RTT-TAIL-INSTABILITY" and f.option == analysis.chosen.architecture
    ]
    assert "about 7,200 silences a day beyond evs.suspect_timeout (5 s)" in finding.message
    advice = "evs.keepalive_period=PT7S; evs.suspect_timeout=PT21S; evs.inactive_timeout=PT42S"
    assert f"set {advice} (this option's configuration applies them)" in finding.message
    for name, values in provider_options(render_documents(analysis, ())).items():
        assert values["evs.keepalive_period"] == "PT7S", name
        assert values["evs.suspect_timeout"] == "PT21S", name
        assert values["evs.inactive_timeout"] == "PT42S", name
        assert "evs.install_timeout" not in values, name


FIVE_MB = """
name: five-mb
sites: [{name: a}, {name: b}, {name: c}]
links:
  - sites: [a, b]
    bandwidth_mbps: 10000
    measurements: [{method: icmp, samples_ms: [20, 20.2, 20.4]}]
  - sites: [a, c]
    bandwidth_mbps: 10000
    measurements: [{method: icmp, samples_ms: [20, 20.2, 20.4]}]
  - {sites: [b, c], bandwidth_mbps: 10000, measurements: [{method: icmp, samples_ms: [1, 1.1]}]}
workload:
  commits_per_s: {peak: 20}
  writeset_bytes: {p50: 5000000, p99: 5000000}
"""


def _single(result: dict) -> dict:
    return next(o for o in result["options"] if o["architecture"] == "single_cluster")


def test_the_5_mb_design_applies_the_windows_it_advises_and_predicts_with_them() -> None:
    # 5 MB is ceil(5,000,000 / 32,728) = 153 EVS messages: at the defaults 2/4 that is 39
    # commit paths; the user window 153 rounded up to a power of two, 256, and the send window
    # twice that, 512, send it at once. Findings, cnf and predictions all read 256/512.
    text = FIVE_MB
    result = json.loads(to_json(recommend(parse_topology(text))))
    analysis = analyse(parse_topology(text))
    single = analysis.option("single_cluster")
    assert (single.clusters[0].user_window, single.clusters[0].send_window) == (256, 512)
    for rule in ("WRITESET-ROUNDS", "SEND-WINDOW"):
        (finding,) = [
            f for f in analysis.findings if f.rule == rule and f.option == "single_cluster"
        ]
        assert (finding.values["user_send_window"], finding.values["send_window"]) == (256, 512)
        assert (
            "evs.user_send_window=256; evs.send_window=512 (this option's configuration "
            "applies them and its predictions use them)"
        ) in finding.message
    plan_options = _plan_windows(analysis, "single_cluster")
    assert plan_options == {(256, 512)}
    # The same topology with the defaults pinned: the design keeps them, the finding says so,
    # and the commit the JSON reports is the one 39 commit paths cost.
    pinned_text = (
        text + "galera: {provider_options: {evs.send_window: 4, evs.user_send_window: 2}}\n"
    )
    pinned = json.loads(to_json(recommend(parse_topology(pinned_text))))
    designed_ms = _single(result)["commit_latency_ms"]["p50"]
    defaults_ms = _single(pinned)["commit_latency_ms"]["p50"]
    # One path of about 20 ms plus 5 MB at 10 Gbit/s and slow start, against 39 paths.
    assert designed_ms < 100.0 < 20.0 * 38 < defaults_ms
    (held,) = [
        f
        for f in analyse(parse_topology(pinned_text)).findings
        if f.rule == "WRITESET-ROUNDS" and f.option == "single_cluster"
    ]
    assert (
        "galera.provider_options in topology.yaml pins evs.user_send_window=2; "
        "evs.send_window=4: the design keeps them as given and its predictions use them"
    ) in held.message
    pinned_plan = plan_configuration(analyse(parse_topology(pinned_text)), "single_cluster")
    for cluster in pinned_plan.clusters:
        for site in cluster.site_plans:
            windows = [s for s in site.provider_options if s.name.endswith("send_window")]
            assert [(s.name, s.value) for s in windows] == [
                ("evs.send_window", 4),
                ("evs.user_send_window", 2),
            ]
            assert all("topology.yaml, kept as given" in s.reason for s in windows)


def _plan_windows(analysis: Analysis, option: str) -> set[tuple[int, int]]:
    """(user, send) windows of every galera cnf of ``option``'s configuration."""
    plan = plan_configuration(analysis, option)
    found = set()
    for cluster in plan.clusters:
        for site in cluster.site_plans:
            values = {s.name: s.value for s in site.provider_options}
            found.add((int(values["evs.user_send_window"]), int(values["evs.send_window"])))
    return found


def test_windows_beyond_galeras_range_are_capped_and_said() -> None:
    # 50,000 commits/s of 2.26 MB write sets over a 27,296 km route: SEND-WINDOW's sizing asks
    # for more than 1,000,000 messages in flight, beyond Galera's range: the design caps the
    # window at 2^19 = 524,288 and its reason says so.
    text = """
name: far
sites:
  - {name: a, location: {lat: 0.0, lon: 0.0}, nodes: 1}
  - {name: b, location: {lat: 0.0, lon: 0.0}, nodes: 1, writes: false}
  - {name: c, location: {lat: 0.0, lon: 0.0}, nodes: 1, writes: false}
links:
  - {sites: [a, b], route_km: 27296.0}
  - {sites: [a, c], route_km: 1.0}
  - {sites: [b, c], route_km: 1.0}
workload: {commits_per_s: 50000.0, writeset_bytes: 2258233.0, local_commit_ms: 1.0}
"""
    analysis = analyse(parse_topology(text))
    single = analysis.option("single_cluster").clusters[0]
    assert single.send_window == 2**19
    reason = analysis.option_reasons["single_cluster"]["evs.send_window"]
    assert "capped at 524288" in reason
    # The finding advises no value beyond that range either, and says the largest one still
    # falls short (issue 21: SEND-WINDOW's sizing clamps to Galera's range).
    found = [f for f in analysis.findings if f.rule in ("SEND-WINDOW", "WRITESET-ROUNDS")]
    for finding in found:
        for key in ("send_window", "user_send_window", "needed_send_window"):
            value = finding.values.get(key)
            assert value is None or int(value) <= 2**19, (finding.rule, key, value)
    (window,) = [f for f in found if f.rule == "SEND-WINDOW" and f.option == "single_cluster"]
    assert "evs.send_window=524288" in window.message
    assert "the largest window Galera admits" in window.message

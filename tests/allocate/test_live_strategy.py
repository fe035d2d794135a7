"""Live allocation predicts with the strategy the clients report.

Corpus: ../shared/samples/real/<v>/running-info/307_* (the property key
``allocateMessageQueueStrategy`` = ``<class>@<hash>``) and client-logs/*_rocketmq_client.log
(``rebalanced result changed. allocateMessageQueueStrategyName=AVG``)."""

from __future__ import annotations

import copy
import re

import pytest
from corpus_views import REAL, VERSIONS, body

from mqctl.allocate.engine import compute_allocation
from mqctl.allocate.live import LiveReports, choose_strategy, per_client_allocation
from mqctl.models import ConsumerRunningInfo, MessageQueue

from .fake_cluster import FakeCluster

T, G = "TopicOrder", "GID_ORDER"
A, B, C = "10.0.0.5@12345#1", "10.0.0.6@23456#2", "10.0.0.7@34567#3"
PKG = "org.apache.rocketmq.client.consumer.rebalance."
QUEUES = [MessageQueue(T, b, i) for b in ("broker-a", "broker-b") for i in range(4)]


def _info(version: str, cls: str) -> ConsumerRunningInfo:
    """The real 307 body of that version, with its strategy property set to ``cls``."""
    d = copy.deepcopy(body(version, "running-info/307_getConsumerRunningInfo_concurrent.json"))
    d["properties"]["allocateMessageQueueStrategy"] = f"{PKG}{cls}@5e9f23b4"
    return ConsumerRunningInfo.from_body(d)


def _reports(version: str, classes: dict[str, str]) -> LiveReports:
    from mqctl.allocate.live import reports_from_infos

    return reports_from_infos({c: _info(version, k) for c, k in classes.items()}, T)


@pytest.mark.parametrize("version", VERSIONS)
def test_real_running_info_strategy_and_log_name_agree(version):
    """The 307 property the clients report, and the name their rebalance log line prints."""
    info = ConsumerRunningInfo.from_body(
        body(version, "running-info/307_getConsumerRunningInfo_concurrent.json"))
    assert info.strategy_class == PKG + "AllocateMessageQueueAveragely"
    choice = choose_strategy(None, _reports(version, {A: "AllocateMessageQueueAveragely"}))
    assert choice.strategy == "avg" and choice.source == "clients"
    log = (REAL / version / "client-logs/cl-c1_rocketmq_client.log").read_text()
    assert set(re.findall(r"allocateMessageQueueStrategyName=(\w+)", log)) == {"AVG"}


@pytest.mark.parametrize("version", VERSIONS)
def test_all_clients_agree_use_their_strategy(version):
    rep = _reports(version, {c: "AllocateMessageQueueAveragelyByCircle" for c in (A, B, C)})
    choice = choose_strategy(None, rep)
    assert choice.strategy == "avg-by-circle" and choice.per_client == {}
    assert any("clients report avg-by-circle (3 of 3)" in n for n in choice.notes)
    assert not choice.warnings


def test_strategy_option_overrides_with_a_note():
    rep = _reports("4.9.3", {c: "AllocateMessageQueueAveragelyByCircle" for c in (A, B, C)})
    choice = choose_strategy("avg", rep)
    assert choice.strategy == "avg" and choice.source == "option"
    assert any("--strategy avg overrides" in n and "avg-by-circle" in n for n in choice.notes)


def test_no_report_falls_back_to_avg_and_says_so():
    choice = choose_strategy(None, LiveReports(owned={}, failures={A: "timed out"}))
    assert choice.strategy == "avg" and choice.source == "default"
    assert any("no client reported" in n for n in choice.notes)


def test_consistent_hash_virtual_nodes_are_assumed():
    rep = _reports("5.3.3", {c: "AllocateMessageQueueConsistentHash" for c in (A, B)})
    choice = choose_strategy(None, rep)
    assert choice.strategy == "consistent-hash"
    assert any("virtual nodes" in n and "default 10 is assumed" in n for n in choice.notes)
    assert not any("virtual nodes" in n
                   for n in choose_strategy(None, rep, virtual_nodes_given=True).notes)


def test_disagreeing_clients_predicted_per_client_with_warning():
    rep = _reports("4.9.3", {A: "AllocateMessageQueueAveragely",
                             B: "AllocateMessageQueueAveragely",
                             C: "AllocateMessageQueueAveragelyByCircle"})
    choice = choose_strategy(None, rep)
    assert choice.strategy is None
    assert choice.per_client == {A: "avg", B: "avg", C: "avg-by-circle"}
    assert any("different strategies" in w for w in choice.warnings)
    a = per_client_allocation(QUEUES, [A, B, C], G, choice.per_client, {})
    avg = compute_allocation("avg", QUEUES, [A, B, C], group=G).assignments
    circle = compute_allocation("avg-by-circle", QUEUES, [A, B, C], group=G).assignments
    assert a.assignments[A] == avg[A] and a.assignments[B] == avg[B]
    assert a.assignments[C] == circle[C]
    # AVG gives C broker-b:2-3, AVG_BY_CIRCLE broker-a:2 and broker-b:1: two queues go to two
    # clients, two to none
    assert a.unassigned and a.shared
    assert a.strategy.startswith("per-client")


# ------------------------------------------------------------------------ end to end (TCP)

def _cluster(strategy_class: str, **kw) -> FakeCluster:
    return FakeCluster(topic=T, group=G, queues_per_broker={"broker-a": 4, "broker-b": 4},
                       members={"broker-a": [A, B, C], "broker-b": [A, B, C]},
                       strategy_class=strategy_class, **kw)


def test_cli_live_defaults_to_the_clients_strategy(cli):
    """The issue's case: every client runs AVG_BY_CIRCLE; mqctl predicted AVG silently."""
    with _cluster("AllocateMessageQueueAveragelyByCircle") as fc:
        r = cli(["--timeout", "3", "allocate", "-n", fc.namesrv, "-g", G, "-t", T, "-o",
                 "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["strategy"] == "avg-by-circle"
    want = compute_allocation("avg-by-circle", QUEUES, [A, B, C], group=G).assignments
    assert {c: [MessageQueue.from_dict(x) for x in v] for c, v in d["assignments"].items()} \
        == want
    assert d["strategySource"] == "clients"
    assert any("clients report avg-by-circle (3 of 3)" in n for n in d["notes"])


def test_cli_live_strategy_option_overrides(cli):
    with _cluster("AllocateMessageQueueAveragelyByCircle") as fc:
        r = cli(["--timeout", "3", "allocate", "-n", fc.namesrv, "-g", G, "-t", T,
                 "--strategy", "avg", "-o", "plain"])
    assert r.exit_code == 0, r.stderr
    assert "--strategy avg overrides the strategy the clients report (avg-by-circle" \
        in r.stdout


def test_cli_live_silent_client_is_a_note_without_against_live(cli):
    with _cluster("AllocateMessageQueueAveragelyByCircle", silent_clients={C}) as fc:
        r = cli(["--timeout", "3", "allocate", "-n", fc.namesrv, "-g", G, "-t", T, "-o",
                 "json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["strategy"] == "avg-by-circle"
    assert any("clients report avg-by-circle (2 of 3)" in n for n in r.json["notes"])


def test_cli_per_client_result_shows_the_gap_and_the_warning():
    """Disagreeing clients through the CLI's rendering path (the TCP fake runs one strategy
    for every client): the per-client prediction, its unowned/shared queues, the warning."""
    from mqctl.allocate.live import LiveGroup
    from mqctl.allocate.preview import PreviewOptions
    from mqctl.allocate.report import add_strategy_choice
    from mqctl.allocate.workflow import per_client_preview as _per_client_preview
    from mqctl.models import TopicRoute

    rep = _reports("5.3.3", {A: "AllocateMessageQueueAveragely",
                             B: "AllocateMessageQueueAveragely",
                             C: "AllocateMessageQueueAveragelyByCircle"})
    choice = choose_strategy(None, rep, consumers=[A, B, C])
    live = LiveGroup(group=G, topic=T, route=TopicRoute(T, (), ()), queues=tuple(QUEUES),
                     by_broker={"broker-a": (A, B, C), "broker-b": (A, B, C)})
    res = _per_client_preview(list(QUEUES), [A, B, C], G, PreviewOptions(), choice, live, rep)
    add_strategy_choice(res, choice)
    d = res.data
    assert d["strategy"] == "per-client (avg: 2; avg-by-circle: 1)"
    assert d["strategySource"] == "clients"
    assert d["clientStrategies"] == {A: "avg", B: "avg", C: "avg-by-circle"}
    assert d["unassigned"] and d["warnings"]
    assert res.notes[0].startswith("warning: clients run different strategies (avg: ")
    assert "differences" in d  # --against-live comparison against what they report

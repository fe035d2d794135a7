"""The reset planner's pure parts: targets, clamping, scope, plan files, preflight, verify rule."""

from __future__ import annotations

import json

import pytest

from mqctl.errors import UsageError
from mqctl.models import MessageQueue
from mqctl.reset import (
    BrokerPlan,
    ConsumerState,
    Path_,
    Plan,
    QueuePlan,
    Target,
    compute_target,
    parse_queue_scope,
    preflight,
    read_plan_file,
    read_rollback,
    target_from_options,
    took,
)

MQ = MessageQueue("T", "broker-a", 0)


def qp(current=500, lo=100, hi=1000, mq=MQ):
    return QueuePlan(mq, lo, hi, current, 0)


@pytest.mark.parametrize("target, searched, expected, clamped", [
    (Target("time", 1), 700, 700, False),
    (Target("time", 1), None, 1000, False),  # nothing found: the max offset
    (Target("earliest"), None, 100, False),
    (Target("latest"), None, 1000, False),
    (Target("offset", 0), None, 100, True),  # below min: clamped
    (Target("offset", 5000), None, 1000, True),
    (Target("offset", 300), None, 300, False),
    (Target("shift", -450), None, 100, True),
    (Target("shift", -100), None, 400, False),
    (Target("shift", 0), None, 500, False),
    (Target("plan", plan={MQ: 250}), None, 250, False),
])
def test_targets_and_clamping(target, searched, expected, clamped):
    q = compute_target(qp(), target, searched)
    assert q.target == expected and q.clamped is clamped
    assert q.change == expected - 500
    assert q.replay == max(0, 500 - expected) and q.skip == max(0, expected - 500)
    if clamped:
        assert "clamped" in q.note


def test_offset_zero_and_queue_zero():
    q = compute_target(qp(current=7, lo=0, hi=10), Target("offset", 0), None)
    assert (q.target, q.clamped, q.replay) == (0, False, 7)


def test_shift_without_committed_offset():
    q = compute_target(qp(current=None), Target("shift", -5), None)
    assert q.target == 100 and "no committed offset" in q.note


def test_exactly_one_target_and_zero_counts():
    t = target_from_options(to_time=None, by_duration=None, to_earliest=False,
                            to_latest=False, to_offset=0, shift_by=None, from_file=None,
                            group="G", topic="T")
    assert (t.kind, t.value) == ("offset", 0)
    for kw in ({}, {"to_latest": True, "to_earliest": True}):
        base = dict(to_time=None, by_duration=None, to_earliest=False, to_latest=False,
                    to_offset=None, shift_by=None, from_file=None)
        base.update(kw)
        with pytest.raises(UsageError, match="exactly one target"):
            target_from_options(group="G", topic="T", **base)
    t = target_from_options(to_time="2024-06-01T00:00:00Z", by_duration=None,
                            to_earliest=False, to_latest=False, to_offset=None,
                            shift_by=None, from_file=None, group="G", topic="T")
    assert t.value == 1_717_200_000_000 and t.by_time and t.timestamp == t.value


def test_queue_scope():
    assert parse_queue_scope(["broker-a:0,1,broker-b:3", "hz@broker-c:2"]) == {
        ("broker-a", 0), ("broker-a", 1), ("broker-b", 3), ("hz@broker-c", 2)}
    assert parse_queue_scope([]) is None
    for bad in ("0,1", "broker-a:x", "broker-a:"):
        with pytest.raises(UsageError, match="bad queue"):
            parse_queue_scope([bad])


def test_plan_files(tmp_path):
    csv_ = tmp_path / "p.csv"
    csv_.write_text("group,topic,broker,queue_id,current,target\nG,T,broker-a,0,5,0\n"
                    "G,T,broker-b,3,9,7\n")
    t = read_plan_file(str(csv_), "G", "T")
    assert t.plan == {MQ: 0, MessageQueue("T", "broker-b", 3): 7}
    js = tmp_path / "p.json"
    js.write_text(json.dumps({"group": "G", "topic": "T", "queues": [
        {"broker": "broker-a", "queue_id": 1, "target": 4}]}))
    assert read_plan_file(str(js), "G", "T").plan == {MessageQueue("T", "broker-a", 1): 4}
    cases = {
        "G,T,broker-a,0,5,x\n": "must be integers",
        "H,T,broker-a,0,5,1\n": "is for group 'H'",
        "G,U,broker-a,0,5,1\n": "is for topic 'U'",
        "G,T,broker-a,0,5,1\nG,T,broker-a,0,5,2\n": "appears twice",
        "G,T,broker-a,-1,5,1\n": "queue_id >= 0",
    }
    for body, msg in cases.items():
        csv_.write_text("group,topic,broker,queue_id,current,target\n" + body)
        with pytest.raises(UsageError, match=msg):
            read_plan_file(str(csv_), "G", "T")
    csv_.write_text("group,topic,queue_id\nG,T,0\n")
    with pytest.raises(UsageError, match="missing column"):
        read_plan_file(str(csv_), "G", "T")
    with pytest.raises(UsageError, match="not found"):
        read_plan_file(str(tmp_path / "nope.csv"), "G", "T")


def test_rollback_file_validation(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"schema": "other"}))
    with pytest.raises(UsageError, match="not an mqctl rollback file"):
        read_rollback(str(p))
    p.write_text(json.dumps({"schema": "mqctl.rollback/1", "group": "G", "topic": "T",
                             "queues": [{"broker": "b", "queue_id": 0, "offset": 3},
                                        {"broker": "b", "queue_id": 1, "offset": None}]}))
    group, topic, target, notes = read_rollback(str(p))
    assert (group, topic) == ("G", "T")
    assert target.plan == {MessageQueue("T", "b", 0): 3} and "had no committed offset" in notes[0]


def plan(path: Path_, online: bool, target: Target, reachable: bool = True, pop=False) -> Plan:
    b = BrokerPlan("broker-a", "x:1", path, "test", reachable=reachable,
                   error=None if reachable else "refused")
    st = ConsumerState(online, ["c@1"] if online else [], False, pop, "CONSUME_PASSIVELY",
                       "CLUSTERING")
    return Plan("G", "T", target, 0, "ns", [QueuePlan(MQ, 0, 10, 5, 3)], {"broker-a": b}, st)


def test_preflight_paths_and_refusals():
    p = plan(Path_.SERVER_SIDE, True, Target("offset", 3))
    preflight(p, force=False, scoped=False)
    assert p.refusals == []
    p = plan(Path_.LEGACY_PUSH, False, Target("offset", 3))
    preflight(p, force=False, scoped=False)
    assert p.brokers["broker-a"].path == Path_.LEGACY_UPDATE and p.refusals == []
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1))
    preflight(p, force=False, scoped=False)
    assert p.brokers["broker-a"].path == Path_.LEGACY_PUSH and not p.refusals
    assert any("10 s pause" in w for w in p.warnings)
    p = plan(Path_.LEGACY_PUSH, True, Target("offset", 3))
    preflight(p, force=False, scoped=False)
    assert p.refusals and "live consumers overwrite within seconds" in p.refusals[0]
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1))
    preflight(p, force=False, scoped=True)  # a subset of queues cannot go by time
    assert p.refusals
    p = plan(Path_.LEGACY_PUSH, True, Target("offset", 3))
    preflight(p, force=True, scoped=False)
    assert p.brokers["broker-a"].path == Path_.LEGACY_UPDATE and not p.refusals
    assert any("--force" in w for w in p.warnings)
    p = plan(Path_.SERVER_SIDE, True, Target("offset", 3), reachable=False)
    preflight(p, force=True, scoped=False)
    assert "not reachable" in p.refusals[0]
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1), pop=True)
    preflight(p, force=False, scoped=False)
    assert any("pop/gRPC" in r for r in p.refusals)


@pytest.mark.parametrize("current, target, now, ok", [
    (500, 300, 300, True),   # exact
    (500, 300, 420, True),   # rewound, consumers re-consuming
    (500, 300, 505, False),  # back at/after the old position: overwritten
    (500, 300, 200, False),
    (300, 500, 500, True),
    (300, 500, 650, True),   # forward, consumers moved on
    (300, 500, 310, False),  # overwritten by the old position
    (None, 40, 40, True),
    (100, 100, None, False),
])
def test_took(current, target, now, ok):
    assert took(QueuePlan(MQ, 0, 1000, current, target), now) is ok

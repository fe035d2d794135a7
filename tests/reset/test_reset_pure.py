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
    default_wait,
    export_format,
    format_queue_scope,
    free_path,
    parse_queue_scope,
    preflight,
    read_plan_file,
    read_rollback,
    target_from_options,
    target_time,
    took,
    write_rollback,
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
    assert parse_queue_scope(["broker-a:0-2,5", "broker-b:0"]) == {
        ("broker-a", 0), ("broker-a", 1), ("broker-a", 2), ("broker-a", 5), ("broker-b", 0)}
    assert parse_queue_scope([]) is None
    for bad in ("0,1", "broker-a:x", "broker-a:", "broker-a:3-1", "broker-a:-1", ":0"):
        with pytest.raises(UsageError, match="bad queue"):
            parse_queue_scope([bad])
    mqs = [MessageQueue("T", "broker-b", 3), MessageQueue("T", "broker-a", 1), MQ]
    assert format_queue_scope(mqs) == "broker-a:0,1,broker-b:3"
    # what the failure hint prints selects exactly the same queues again
    assert parse_queue_scope([format_queue_scope(mqs)]) == {
        (m.broker_name, m.queue_id) for m in mqs}


@pytest.mark.parametrize("lo, hi, tgt, kind, exact, text", [
    (100, 1000, 100, "earliest", 5_000, "2024-06-01T00:00:05.000Z"),
    (100, 1000, 1000, "latest", None, "after 2024-06-01T01:00:00.000Z"),
    (100, 1000, 400, "time", None, ">= 2024-06-01T00:30:00.000Z"),
    (100, 1000, 400, "offset", None, ""),
    (100, 100, 100, "earliest", None, "(empty queue)"),
])
def test_target_time(lo, hi, tgt, kind, exact, text):
    base = 1_717_200_000_000
    q = QueuePlan(MQ, lo, hi, 500, tgt)
    t = Target(kind, base + 1_800_000 if kind == "time" else tgt)
    ts, txt = target_time(q, t, base + 5_000, base + 3_600_000)
    assert ts == (None if exact is None else base + exact) and txt == text
    # a broker without useServerSideResetOffset searches for the nearest message: '~'
    _, near = target_time(q, t, base + 5_000, base + 3_600_000, nearest=True)
    assert near == (text.replace(">=", "~") if text.startswith(">=") else text)


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
        "G,T,broker-a,0,5,x\n": r"row 1: target must be a whole number \(got x\)",
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


def plan(path: Path_, online: bool, target: Target, reachable: bool = True, pop=False,
         *, current: int | None = 5, known: bool = True, model: str = "CLUSTERING",
         consume_type: str = "CONSUME_PASSIVELY", group_known: bool | None = None,
         orderly: bool = False, min_version: int | None = 479) -> Plan:
    b = BrokerPlan("broker-a", "x:1", path, "test", reachable=reachable,
                   error=None if reachable else "refused", group_known=group_known)
    st = ConsumerState(online, ["c@1"] if online else [], orderly, pop, consume_type, model,
                       known=known, error=None if known else "timeout",
                       min_version=min_version if online else None)
    return Plan("G", "T", target, 0, "ns", [QueuePlan(MQ, 0, 10, current, 3)],
                {"broker-a": b}, st)


def test_preflight_paths_and_refusals():
    p = plan(Path_.SERVER_SIDE, True, Target("offset", 3))
    p = preflight(p, force=False, scoped=False)
    assert p.refusals == []
    p = plan(Path_.LEGACY_PUSH, False, Target("offset", 3))
    p = preflight(p, force=False, scoped=False)
    assert p.brokers["broker-a"].path == Path_.LEGACY_UPDATE and p.refusals == []
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1))
    p = preflight(p, force=False, scoped=False)
    assert p.brokers["broker-a"].path == Path_.LEGACY_PUSH and not p.refusals
    assert any("10 s pause" in w for w in p.warnings)
    p = plan(Path_.LEGACY_PUSH, True, Target("offset", 3))
    p = preflight(p, force=False, scoped=False)
    assert p.refusals and "live consumers overwrite within seconds" in p.refusals[0]
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1))
    p = preflight(p, force=False, scoped=True)  # a subset of queues cannot go by time
    assert p.refusals
    p = plan(Path_.LEGACY_PUSH, True, Target("offset", 3))
    p = preflight(p, force=True, scoped=False)
    assert p.brokers["broker-a"].path == Path_.LEGACY_UPDATE and not p.refusals
    assert any("--force" in w for w in p.warnings)
    p = plan(Path_.SERVER_SIDE, True, Target("offset", 3), reachable=False)
    p = preflight(p, force=True, scoped=False)
    assert "not reachable" in p.refusals[0]
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1), pop=True)
    p = preflight(p, force=False, scoped=False)
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


def test_preflight_more_refusals():
    # membership unknown: the path cannot be chosen safely, whatever --force says
    p = plan(Path_.LEGACY_PUSH, False, Target("offset", 3), known=False)
    p = preflight(p, force=True, scoped=False)
    assert any("cannot tell whether group G is online" in r for r in p.refusals)
    assert p.brokers["broker-a"].path == Path_.LEGACY_PUSH  # never the offline fallback
    # broadcasting: offsets live on the clients
    p = plan(Path_.SERVER_SIDE, True, Target("time", 1), model="BROADCASTING")
    p = preflight(p, force=False, scoped=False)
    assert any("BROADCASTING" in r for r in p.refusals)
    p = plan(Path_.SERVER_SIDE, True, Target("time", 1), model="BROADCASTING")
    p = preflight(p, force=True, scoped=False)
    assert not p.refusals and any("BROADCASTING" in w for w in p.warnings)
    # legacy push needs a committed offset on every queue (Broker2Client.resetOffset)
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1), current=None)
    p = preflight(p, force=False, scoped=False)
    assert any("THe consumer group <G> not exist" in r for r in p.refusals)
    # pull consumers ignore a pushed reset
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1), consume_type="CONSUME_ACTIVELY")
    p = preflight(p, force=False, scoped=False)
    assert any("pull/lite-pull" in r for r in p.refusals)
    # the broker does not know the group: refused even with --force (it would answer 26)
    p = plan(Path_.SERVER_SIDE, False, Target("offset", 3), current=None, group_known=False)
    p = preflight(p, force=True, scoped=False)
    assert any("SUBSCRIPTION_GROUP_NOT_EXIST" in r for r in p.refusals)
    # known group, never consumed: allowed, with a warning
    p = plan(Path_.SERVER_SIDE, False, Target("offset", 3), current=None, group_known=True)
    p = preflight(p, force=False, scoped=False)
    assert not p.refusals and any("creates them" in w for w in p.warnings)
    # could not check: refused unless --force
    p = plan(Path_.SERVER_SIDE, False, Target("offset", 3), current=None, group_known=None)
    p = preflight(p, force=False, scoped=False)
    assert any("could not be checked" in r for r in p.refusals)
    p = plan(Path_.SERVER_SIDE, False, Target("offset", 3), current=None, group_known=None)
    p = preflight(p, force=True, scoped=False)
    assert not p.refusals
    # server-side: the pending offset is announced; orderly consumers are warned about
    p = plan(Path_.SERVER_SIDE, True, Target("offset", 3), orderly=True)
    p = preflight(p, force=False, scoped=False)
    assert any("pending offset" in n for n in p.notes)
    assert any("orderly" in w for w in p.warnings)


def test_default_wait_by_path():
    cases = [
        (Path_.LEGACY_PUSH, True, Target("time", 1), False, 15.0),
        (Path_.LEGACY_PUSH, True, Target("offset", 3), True, 10.0),  # forced write, online
        (Path_.LEGACY_PUSH, False, Target("offset", 3), False, 0.0),  # offline: update
        (Path_.SERVER_SIDE, True, Target("offset", 3), False, 1.0),
        (Path_.SERVER_SIDE, False, Target("offset", 3), False, 0.0),
    ]
    for path, online, target, force, wait in cases:
        p = plan(path, online, target)
        p = preflight(p, force=force, scoped=False)
        assert default_wait(p) == wait, (path, online, target, force)
    # server-side, a client before 5.2.0 (V4_9_8 = 409) or of unknown version: it applies the
    # reset 10 s after its next pull, which first re-commits its old offset
    for v in (409, None):
        p = plan(Path_.SERVER_SIDE, True, Target("offset", 3), min_version=v)
        p = preflight(p, force=False, scoped=False)
        assert default_wait(p) == 15.0
    # legacy push over two brokers: a client applies one broker's push after the other
    p = plan(Path_.LEGACY_PUSH, True, Target("time", 1))
    p.brokers["broker-b"] = BrokerPlan("broker-b", "x:2", Path_.LEGACY_PUSH, "test")
    p.queues.append(QueuePlan(MessageQueue("T", "broker-b", 0), 0, 10, 5, 3))
    p = preflight(p, force=False, scoped=False)
    assert default_wait(p) == 25.0


def test_export_format_and_free_path(tmp_path):
    assert export_format("p.CSV") == "csv" and export_format("dir/p.json") == "json"
    for bad in ("p.txt", "plan", "p.csv.bak"):
        with pytest.raises(UsageError, match=r"must end in \.csv or \.json"):
            export_format(bad)
    first = tmp_path / "rb.json"
    assert free_path(first) == first
    first.write_text("{}")
    assert free_path(first) == tmp_path / "rb.2.json"
    (tmp_path / "rb.2.json").write_text("{}")
    assert free_path(first) == tmp_path / "rb.3.json"


def test_rollback_round_trip_and_other_namesrv(tmp_path):
    p = plan(Path_.SERVER_SIDE, False, Target("offset", 3))
    p.queues.append(QueuePlan(MessageQueue("T", "broker-b", 0), 0, 10, None, 0))
    path = tmp_path / "sub" / "rb.json"
    write_rollback(p, path)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert [f.name for f in path.parent.iterdir()] == ["rb.json"]  # no temp file left
    group, topic, target, notes = read_rollback(str(path), namesrv="ns")
    assert (group, topic, target.plan) == ("G", "T", {MQ: 5})
    assert any("broker-b:0 had no committed offset" in n for n in notes)
    assert not any("name server" in n for n in notes)
    _, _, _, notes = read_rollback(str(path), namesrv="10.0.0.9:9876")
    assert any("written against name server ns" in n for n in notes)
    doc = json.loads(path.read_text())
    doc["queues"][0]["offset"] = -4
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match=r"entry 1: offset must be an offset .* \(got -4\)"):
        read_rollback(str(path))


def test_rollback_write_error_is_a_usage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UsageError, match="cannot write rollback file"):
        write_rollback(plan(Path_.SERVER_SIDE, False, Target("offset", 3)),
                       blocker / "rb.json")


def test_plan_file_more_validation(tmp_path):
    js = tmp_path / "p.json"
    js.write_text(json.dumps({"group": "G", "topic": "T", "queues": [
        {"broker": "broker-a", "queue_id": 1, "target": 4.5}]}))
    with pytest.raises(UsageError, match=r"row 1: target must be a whole number \(got 4.5\)"):
        read_plan_file(str(js), "G", "T")
    js.write_text(json.dumps({"group": "G", "topic": "T", "queues": []}))
    with pytest.raises(UsageError, match="has no rows"):
        read_plan_file(str(js), "G", "T")
    js.write_text(json.dumps({"group": "H", "topic": "T", "queues": [
        {"broker": "broker-a", "queue_id": 1, "target": 4}]}))
    with pytest.raises(UsageError, match="is for group 'H'"):
        read_plan_file(str(js), "G", "T")
    csv_ = tmp_path / "p.csv"
    # a spreadsheet's BOM and padded cells are accepted
    csv_.write_text("\ufeffbroker, queue_id ,target\nbroker-a, 0 , 7 \n", encoding="utf-8")
    assert read_plan_file(str(csv_), "G", "T").plan == {MQ: 7}
    csv_.write_text("broker,queue_id,target\n")
    with pytest.raises(UsageError, match="has no rows"):
        read_plan_file(str(csv_), "G", "T")


def test_took_against_what_the_broker_computed():
    q = QueuePlan(MQ, 0, 1000, 500, 300)
    assert took(q, 320, goal=320) and not took(q, 310, goal=320)


def test_rerun_hint_never_resets_the_queues_that_took_twice():
    from mqctl.reset import QueueResult, Status
    from mqctl.reset.outcome import rerun_hint

    def hint(target, online, current=5, scoped=True):
        p = plan(Path_.SERVER_SIDE, online, target, current=current)
        bad = [QueueResult(p.queues[0], Status.NOT_TAKEN, "x")]
        return rerun_hint(p, bad, "rb.json", scoped)

    h = hint(Target("shift", -2), True)
    assert "do not re-run --shift-by" in h and "check `mqctl offsets show` first" in h
    h = hint(Target("time", 1717200000000, "-30m"), False)
    assert "--to-time 2024-06-01T00:00:00.000Z --queues broker-a:0" in h
    h = hint(Target("earliest"), True, current=2)  # target 3 > current 2: not a rewind
    assert "add --queues broker-a:0 (live consumers" in h and "offsets show" not in h
    h = hint(Target("earliest"), False)
    assert "re-running the same command completes the rest" in h
    assert "rollback file rb.json" in hint(Target("rollback"), True, scoped=False)


def test_legacy_push_warns_about_read_queues_beyond_the_write_queues():
    """A topic shrunk to fewer write than read queues: Broker2Client.resetOffset resets
    queues 0..writeQueueNums-1 only, so the readable queues above are named in a warning."""
    def legacy(write: int | None) -> Plan:
        p = plan(Path_.LEGACY_PUSH, True, Target("time", 1))
        p.queues = [QueuePlan(MessageQueue("T", "broker-a", i), 0, 10, 5, 3) for i in range(8)]
        p.brokers["broker-a"].write_queues = write
        p = preflight(p, force=False, scoped=False)
        return p

    p = legacy(6)
    assert not p.refusals
    got = [w for w in p.warnings if "more read than write queues" in w]
    assert len(got) == 1 and "queues 0..5 only" in got[0]
    assert "broker-a:6, broker-a:7 (2 queue(s))" in got[0]
    for write in (8, 16, None):
        assert not any("more read than write" in w for w in legacy(write).warnings)
    # server-side resets take any queue id: no warning
    p = plan(Path_.SERVER_SIDE, True, Target("time", 1))
    p.queues = [QueuePlan(MessageQueue("T", "broker-a", i), 0, 10, 5, 3) for i in range(8)]
    p.brokers["broker-a"].write_queues = 2
    p = preflight(p, force=False, scoped=False)
    assert not any("more read than write" in w for w in p.warnings)


@pytest.mark.parametrize("config, path, nearest", [
    ({}, Path_.LEGACY_PUSH, True),  # no useServerSideResetOffset: a 4.x broker
    ({"useServerSideResetOffset": "false"}, Path_.LEGACY_PUSH, False),
    ({"useServerSideResetOffset": "true"}, Path_.SERVER_SIDE, False),
])
def test_a_broker_older_than_5x_is_announced_as_searching_for_the_nearest_message(
        config, path, nearest):
    import asyncio

    from mqctl.models import BrokerData
    from mqctl.reset.plan import broker_path

    class Admin:
        async def broker_config(self, addr):
            return dict(config)

    b = BrokerData("C", "broker-a", {0: "10.0.0.1:10911"})
    bp = asyncio.run(broker_path(Admin(), b))
    assert (bp.path, bp.nearest_search) == (path, nearest)
    for target, warned in ((Target("time", 1_717_200_000_000), nearest),
                           (Target("earliest"), False), (Target("offset", 3), False)):
        p = plan(Path_.SERVER_SIDE, False, target)
        p.brokers = {"broker-a": bp}
        p = preflight(p, force=False, scoped=False)
        got = [w for w in p.warnings if "nearest the time" in w]
        assert bool(got) is warned
        if warned:
            assert got[0].startswith("broker(s) broker-a older than 5.1.1")
            assert "2024-06-01T00:00:00.000Z" in got[0]

"""Resets against what real RocketMQ 4.9.3 and 5.3.3 answered (the recorded corpus beside
the checkout, ../shared/samples/real), and the same states in the simulated cluster:
never-committed queues, more read than write queues, a rewind the
client already replayed before verify read it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import REAL_CORPUS

from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode
from mqctl.views.offsets import committed_queue_ids

MQ = MessageQueue
ALL_OFFSETS = RequestCode.GET_ALL_CONSUMER_OFFSET
UPDATE = RequestCode.UPDATE_CONSUMER_OFFSET


def recorded(version: str, name: str) -> Path:
    """The one file of that name among the version's scenarios (never-committed/, reset/, ...)."""
    found = sorted((REAL_CORPUS / version).glob(f"*/{name}"))
    assert len(found) == 1, (version, name, found)
    return found[0]


def exchange(version: str, name: str) -> dict:
    return json.loads(recorded(version, name).read_text())


def body(version: str, name: str):
    return fastjson.loads(exchange(version, name)["response"]["body_text"])


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def writes(sim):
    return [r for r in sim.request_log
            if r.code in (UPDATE, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET)]


# ------------------------------------------------------------ never-committed queues

@pytest.mark.parametrize("version", ["4.9.3", "5.3.3"])
def test_the_brokers_offset_table_lists_only_committed_queues(version):
    b = body(version, "43_getAllConsumerOffset.broker-a.json")
    assert committed_queue_ids(b, "NC_T", "NC_ONE") == {0}
    assert committed_queue_ids(b, "NC_T", "NC_NEVER") == set()
    assert committed_queue_ids(b, "RW_T", "RW_G") == {0, 1, 2, 3}


def test_4x_answers_0_for_a_queue_never_committed_and_5x_not_found():
    """Why QUERY_CONSUMER_OFFSET alone cannot tell on 4.9.3: the same answer as a commit of 0."""
    old = exchange("4.9.3", "14_queryConsumerOffset_NC_NEVER_broker-a_q0.json")["response"]
    assert old["code"] == 0 and old["extFields"]["offset"] == "0"
    new = exchange("5.3.3", "14_queryConsumerOffset_NC_NEVER_broker-a_q0.json")["response"]
    assert new["code"] == 22


def _never_committed(version: str) -> dict:
    """One broker of ``version``; G_NEW exists (subscription group) and committed queue 0 only,
    with offset 0 (a real commit of 0, as CL_T@CL_G in the corpus); queue 1 never."""
    return {"name": "nc-" + version, "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a", "version": version}],
            "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "10m"}],
            "groups": [{"name": "G_NEW", "topics": []}]}


@pytest.mark.parametrize("version, asks_table", [("V4_9_3", True), ("V5_3_3", False)])
def test_never_committed_queue_is_none_in_plan_and_rollback_and_left_alone(
        cli, sim_factory, tmp_path, version, asks_table):
    s = sim_factory(_never_committed(version))
    s.call(lambda c: c.brokers["broker-a"].commit("G_NEW", "T", 0, 0))
    q1 = MQ("T", "broker-a", 1)
    assert s.call(lambda c: c.brokers["broker-a"].min_offset("T", 1)) == 0  # message 0 kept
    r = run(cli, s, "offsets", "reset", "-g", "G_NEW", "-t", "T", "--to-offset", "5")
    assert r.exit_code == 0, r.stderr
    row = {int(ln.split()[1]): ln.split() for ln in r.stdout.splitlines()
           if ln.startswith("broker-a ")}
    assert row[0][4] == "0" and row[1][4] == "none"  # CURRENT
    assert any(x.code == ALL_OFFSETS for x in s.request_log) is asks_table
    s.clear_request_log()
    rb = tmp_path / "rb.json"
    r = run(cli, s, "offsets", "reset", "-g", "G_NEW", "-t", "T", "--to-offset", "5",
            "--execute", "--rollback-file", str(rb))
    assert r.exit_code == 0, r.stderr
    result = r.stdout[r.stdout.index("# result"):].splitlines()
    assert [ln.split()[:4] for ln in result if ln.startswith("broker-a ")] == [
        ["broker-a", "0", "0", "5"], ["broker-a", "1", "none", "5"]]  # PREVIOUS
    saved = {q["queue_id"]: q["offset"] for q in json.loads(rb.read_text())["queues"]}
    assert saved == {0: 0, 1: "none"}
    assert s.call(lambda c: c.committed_offset("G_NEW", q1)) == 5
    s.clear_request_log()
    r = run(cli, s, "offsets", "rollback", str(rb), "--execute")
    assert r.exit_code == 0, r.stderr
    sent = [(x.ext_fields["queueId"], x.ext_fields.get("commitOffset", x.ext_fields.get(
        "offset"))) for x in writes(s)]
    assert sent == [("0", "0")]  # never an offset for the queue that had none
    assert ("broker-a:1 had no committed offset before: left as is (it keeps the offset "
            "the reset wrote)") in r.stdout
    assert s.call(lambda c: c.committed_offset("G_NEW", q1)) == 5


def test_rollback_files_of_earlier_versions_still_read(tmp_path):
    """``"offset": null`` (what earlier versions wrote for a missing offset) reads as none."""
    from mqctl.reset import read_rollback

    p = tmp_path / "old.json"
    p.write_text(json.dumps({"schema": "mqctl.rollback/1", "group": "G", "topic": "T",
                             "queues": [{"broker": "b", "queue_id": 0, "offset": None},
                                        {"broker": "b", "queue_id": 1, "offset": "none"},
                                        {"broker": "b", "queue_id": 2, "offset": 7}]}))
    _, _, target, notes = read_rollback(str(p))
    assert target.plan == {MQ("T", "b", 2): 7}
    assert sum("had no committed offset before" in n for n in notes) == 2
    p.write_text(p.read_text().replace('"none"', '"nothing"'))
    with pytest.raises(Exception, match="entry 2: offset must be an offset .* or none "
                                        r'\(got "nothing"\)'):
        read_rollback(str(p))


# ------------------------------------------------------- more read than write queues

def test_4x_topic_stats_cover_the_write_queues_and_consume_stats_the_read_queues():
    """Corpus read-gt-write (RW_T 4 read / 2 write per broker): what mqctl must plan around."""
    from mqctl.models import ConsumeStats, TopicRoute, TopicStats

    route = TopicRoute.from_body("RW_T", body("4.9.3", "105_getRouteInfoByTopic_RW_T.namesrv.json"))
    assert {(q.read_queue_nums, q.write_queue_nums) for q in route.queues} == {(4, 2)}
    for version, stats_queues in (("4.9.3", {0, 1}), ("5.3.3", {0, 1, 2, 3})):
        ts = TopicStats.from_body(body(version, "202_getTopicStatsInfo_RW_T.broker-a.json"))
        assert {m.queue_id for m in ts.offsets} == stats_queues
        cs = ConsumeStats.from_body(body(version, "208_getConsumeStats_RW_G.broker-a.json"))
        assert {m.queue_id for m in cs.offsets} == {0, 1, 2, 3}


def _read_gt_write(version: str, online: bool = False) -> dict:
    group: dict = {"name": "G", "topics": ["T"], "initial_lag": 10}
    if online:
        group["consumers"] = [{"id": "10.9.0.1@1", "behaviour": "stuck"}]
    return {"name": "rw-" + version, "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a", "version": version}],
            "topics": [{"name": "T", "queues": 4, "read_queues": 4, "write_queues": 2,
                        "rate": 1, "history": "10m"}],
            "groups": [group]}


def committed(sim, group="G", topic="T", queues=4):
    return {q: sim.call(lambda c, q=q: c.committed_offset(group, MQ(topic, "broker-a", q)))
            for q in range(queues)}


@pytest.mark.parametrize("version, path", [("V4_9_3", "legacy-update"),
                                           ("V5_2_0", "server-side"),
                                           ("V5_3_3", "server-side")])
def test_every_readable_queue_is_planned_reset_and_verified(cli, sim_factory, version, path):
    """The sim's brokers before 5.3.0 answer GET_TOPIC_STATS_INFO over writeQueueNums, as
    AdminBrokerProcessor.getTopicStatsInfo did until apache/rocketmq#7951 (corpus
    4.9.3/read-gt-write/202_*): the NOTE says where the bounds came from per queue."""
    s = sim_factory(_read_gt_write(version))
    r = run(cli, s, "offsets", "reset", "-g", "G", "-t", "T", "--to-offset", "5", "--execute",
            "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [q["queue_id"] for q in r.json["queues"]] == [0, 1, 2, 3]
    assert {b["path"] for b in r.json["brokers"]} == {path}
    assert r.json["summary"] == {"verified": 4}
    assert committed(s) == {0: 5, 1: 5, 2: 5, 3: 5}
    beyond = {q["queue_id"]: q for q in r.json["queues"] if q["queue_id"] >= 2}
    assert all(q["max"] == 600 and q["min"] == 0 for q in beyond.values())
    assert all(("GET_MIN_OFFSET/GET_MAX_OFFSET" in q["note"]) is (version != "V5_3_3")
               for q in beyond.values())
    # only the queues beyond the write queues
    r = run(cli, s, "offsets", "reset", "-g", "G", "-t", "T", "--to-offset", "7",
            "--queues", "broker-a:2-3", "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json["summary"] == {"verified": 2}
    assert committed(s) == {0: 5, 1: 5, 2: 7, 3: 7}


def test_offsets_show_has_the_bounds_of_every_readable_queue(cli, sim_factory):
    s = sim_factory(_read_gt_write("V4_9_3"))
    r = run(cli, s, "offsets", "show", "-g", "G", "-t", "T", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {x["queue_id"]: (x["min"], x["max"], x["current"]) for x in r.json["queues"]} == {
        q: (0, 600, 590) for q in range(4)}
    reads = [x for x in s.request_log if x.code in (RequestCode.GET_MIN_OFFSET,
                                                    RequestCode.GET_MAX_OFFSET)]
    assert sorted(x.ext_fields["queueId"] for x in reads) == ["2", "3"]  # only where needed
    assert not [x for x in s.request_log if x.code in (UPDATE, ALL_OFFSETS)]


# ------------------------------------------ a rewind the clients replayed before verify

class CorpusStats:
    """GET_CONSUME_STATS as recorded after the real ``mqadmin resetOffsetByTime`` of RS_G
    (every queue 50 -> 0): each read answers the latest recording sent before the clock."""

    concurrency = 4

    def __init__(self, version: str, clock: list[int]):
        from mqctl.models import ConsumeStats

        self.clock = clock
        self.reads: dict[str, list[tuple[int, object]]] = {}
        for f in sorted((REAL_CORPUS / version / "reset").glob("208_*.broker-*.json")):
            d = json.loads(f.read_text())
            cs = ConsumeStats.from_body(fastjson.loads(d["response"]["body_text"]))
            broker = f.name.rsplit(".", 2)[1]
            self.reads.setdefault(broker, []).append((d["request"]["_sent_at_ms"], cs))
        for v in self.reads.values():
            v.sort(key=lambda x: x[0])

    async def consume_stats(self, group, addr, topic):
        return [cs for at, cs in self.reads[addr] if at <= self.clock[0]][-1]


def _rs_plan(path):
    from mqctl.reset import BrokerPlan, ConsumerState, Plan, QueuePlan, Target

    queues = [QueuePlan(MQ("RS_T", b, q), 0, 50, 50, 0) for b in ("broker-a", "broker-b")
              for q in range(4)]
    st = ConsumerState(True, ["127.0.1.71@rs1"], False, False, "CONSUME_PASSIVELY",
                       "CLUSTERING", min_version=399)
    return Plan("RS_G", "RS_T", Target("earliest"), 0, "ns", queues,
                {b: BrokerPlan(b, b, path, "test") for b in ("broker-a", "broker-b")}, st)


def _verify_recording(version: str, path, returned: str, wait: float, only_before=False):
    """verify of the RS_G reset against the recorded reads, on a clock that starts when
    mqadmin returned (actions.txt) and that verify's waits advance."""
    import asyncio

    from mqctl.reset import QueueResult, Status, default_wait, verify
    from mqctl.timeparse import parse_time, set_clock

    clock = [parse_time(returned)]
    set_clock(lambda: clock[0])
    try:
        plan = _rs_plan(path)
        if version == "5.3.3":
            plan.consumers = replace(plan.consumers, min_version=479)
        assert default_wait(plan) == wait
        results = [QueueResult(q, Status.APPLIED, "sent") for q in plan.queues]
        stats = CorpusStats(version, clock)
        if only_before:  # a reset that never reached the clients
            stats.reads = {b: v[:1] for b, v in stats.reads.items()}

        async def advance(sec: float) -> None:
            clock[0] += int(sec * 1000)

        # the recording has no running info of the client: no owner evidence
        return asyncio.run(verify(stats, plan, results, wait_s=wait, waiter=advance,
                                  owners=None))
    finally:
        set_clock(None)


def test_verify_tells_a_replayed_rewind_from_one_not_taken_with_the_4x_recording():
    """4.9.3 legacy push: the client applied broker-b's push 10 s after it (broker-b read 0 at
    +12 s) and broker-a's 10 s later; by then it had re-consumed broker-b's 50 messages and
    committed 50 again (+25 s), while broker-a read 32-33. All 8 queues took."""
    from mqctl.reset import Path_, Status

    res = _verify_recording("4.9.3", Path_.LEGACY_PUSH, "2026-11-23T20:59:31.782Z", 25.0)
    by = {r.plan.mq.broker_name: r for r in res if r.plan.mq.queue_id == 0}
    assert {r.status for r in res} == {Status.VERIFIED}
    b = by["broker-b"]
    assert (b.now, b.lowest) == (50, 0)
    assert b.detail.startswith("taken (re-consumed to 50): read 0 ")
    a = by["broker-a"]
    assert (a.now, a.lowest) == (32, 32)
    assert a.detail == "sent; the group's online consumers have moved on to 32"
    assert 21_000 <= a.taken_after_ms <= 23_000  # verify stopped as soon as all had taken
    assert 8_000 <= b.taken_after_ms <= 10_000
    # the same queues, had the reset never reached the client: 50 throughout. Nothing read
    # tells that from a rewind replayed between two reads, and without the owner's
    # running info there is no other evidence: unknown, never not-taken
    res = _verify_recording("4.9.3", Path_.LEGACY_PUSH, "2026-11-23T20:59:31.782Z", 25.0,
                            only_before=True)
    assert {r.status for r in res} == {Status.UNKNOWN}
    assert {(r.now, r.lowest, r.taken_after_ms) for r in res} == {(50, 50, None)}
    assert all("does not say whether it took" in r.detail for r in res)


def test_verify_of_the_5x_server_side_recording_reads_it_taken_at_once():
    """5.3.3 server-side with 5.3.3 clients: 0 on every queue at the first read (+1 s)."""
    from mqctl.reset import Path_, Status

    res = _verify_recording("5.3.3", Path_.SERVER_SIDE, "2026-11-23T20:59:50.420Z", 1.0)
    assert {(r.status, r.now, r.lowest) for r in res} == {(Status.VERIFIED, 0, 0)}


def test_a_5x_server_side_reset_read_only_after_the_replay_is_applied_by_the_broker():
    """The same 5.3.3 recording, read only once the client had re-consumed everything (the
    +25 s read: 50 on every queue, as the issue's 20 msg/s group was within a second): never
    read at 0, yet the broker answered the reset, wrote it before answering and ignores
    commits until the next pull takes it, and the 5.3.3 client writes it at once: verified,
    'applied by the broker', not `not-taken (offset is 50, expected 0)`."""
    from mqctl.reset import Path_, Status

    res = _verify_recording("5.3.3", Path_.SERVER_SIDE, "2026-11-23T21:00:11.000Z", 1.0)
    assert {(r.status, r.now, r.lowest) for r in res} == {(Status.VERIFIED, 50, 50)}
    assert all(r.detail == "applied by the broker (it wrote 0 before answering and ignores "
               "the clients' commits until their next pull takes it); the group has "
               "re-consumed to 50" for r in res), res[0].detail


REPLAY = {"name": "replay", "clock": {"mode": "manual"},
          "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                      {"name": "broker-b", "version": "V4_9_3"}],
          "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "20s"}],
          "groups": [{"name": "G", "topics": ["T"], "initial_lag": 0,
                      "consumers": [{"id": "10.9.0.1@1", "version": "V4_9_3"}]}]}


def test_a_small_rewind_replayed_within_the_wait_is_taken_end_to_end(sim_factory):
    """A fast 4.9.3 consumer and a small backlog (under one 32-message pull batch) on two legacy
    brokers: the client applies the pushes one after another, 10 s each, and the first pull of
    the re-added queues runs before the second push pauses it (real 4.9.3 client log: broker-b
    persisted at 32 while paused); by the time the second broker's queues read 0 the first
    broker's were re-consumed and committed at their old position again."""
    import asyncio

    from mqctl.admin import Admin
    from mqctl.remoting.client import ClientOptions, RemotingClient
    from mqctl.reset import Status, Target, apply_plan, default_wait, make_plan, verify

    s = sim_factory(REPLAY)
    s.advance(6)  # the consumer is up, has consumed everything and committed
    mqs = [MQ("T", b, q) for b in ("broker-a", "broker-b") for q in range(2)]

    def read():
        return {m: s.call(lambda c, m=m: c.committed_offset("G", m)) for m in mqs}

    before = read()
    assert all(v > 0 for v in before.values())
    seen = []

    async def go():
        async with RemotingClient(ClientOptions(timeout=5)) as client:
            admin = Admin(client, s.namesrv_addr)
            plan = await make_plan(admin, "G", "T", Target("earliest"))
            assert not plan.refusals and default_wait(plan) == 25.0
            results = await apply_plan(admin, plan)

            async def advance(sec: float) -> None:
                await asyncio.to_thread(s.advance, sec)
                seen.append(read())

            return await verify(admin, plan, results, wait_s=25.0, waiter=advance)

    res = asyncio.run(go())
    # the recording's shape: some queues read 0 while others were already back
    assert any(o[m] == 0 and o[n] >= before[n] for o in seen for m in mqs for n in mqs)
    assert {r.status for r in res} == {Status.VERIFIED}
    replayed = [r for r in res if r.detail.startswith("taken (re-consumed to")]
    assert replayed and all(r.lowest == 0 and r.now >= r.plan.current for r in replayed)


# ------------------------------------------------- the mqadmin comparison, per version

def test_the_mqadmin_comparison_quotes_the_recordings():
    """docs/reset.md: 4.9.3's resetOffsetByTime has no per-queue options and reset all 8 queues
    to 0 (no offset-0 skip); the quoted output is the recorded one."""
    import re

    doc = (Path(__file__).parents[2] / "docs" / "reset.md").read_text()
    section = doc[doc.index("## Compared with mqadmin `resetOffsetByTime`"):]
    for version in ("4.9.3", "5.3.3"):
        rec = recorded(version, "mqadmin_resetOffsetByTime.txt").read_text().splitlines()
        rows = [ln.split() for ln in rec if ln.startswith("broker-")]
        assert len(rows) == 8 and {r[2] for r in rows} == {"0"}  # every queue went to 0
        assert version in section
    quoted = section[section.index("```text") + 8:].split("```", 1)[0].splitlines()
    rec = recorded("4.9.3", "mqadmin_resetOffsetByTime.txt").read_text().splitlines()
    norm = [" ".join(re.sub(r"\s+# \d{4}-\S+Z$", "", ln).split()) for ln in rec]  # time note
    for ln in quoted:
        if ln != "...":
            assert " ".join(ln.split()) in norm, ln
    assert "ResetOffsetByTimeOldCommand" in section and "if (resetOffset > 0)" in section
    assert "**4.9.3** has only `-g -t -s [-f] [-c]`: no per-queue option" in section

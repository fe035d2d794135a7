"""Views: ``group progress`` and ``snapshot`` over the answers
real 4.9.3 / 5.3.3 brokers and clients gave (../shared/samples/real)."""

from __future__ import annotations

import asyncio
import copy

import pytest
from corpus_views import VERSIONS, CorpusAdmin, body, sent_at

from mqctl.models import MessageQueue
from mqctl.snapshot import rows_of
from mqctl.timeparse import set_clock
from mqctl.views.progress_capture import capture_progress
from mqctl.views.progress_rows import progress_result

MQ = MessageQueue


@pytest.fixture
def clock():
    def install(ts: int) -> None:
        set_clock(lambda: ts)
    yield install
    set_clock(None)


# ------------------------------------------------------------------- never committed

def _nc_one(version, clock):
    stats = body(version, "never-committed/208_getConsumeStats_NC_ONE.broker-a.json")
    spans = body(version, "never-committed/303_queryConsumeTimeSpan_NC_ONE.broker-a.json")
    clock(sent_at(version, "never-committed/303_queryConsumeTimeSpan_NC_ONE.broker-a.json"))
    admin = CorpusAdmin(version, brokers=("broker-a",), stats={"broker-a": stats},
                        spans={"broker-a": spans},
                        tstats={"broker-a": _mq_table_stats(version)},
                        routes={"NC_T": body(version, "other-requests/105_getRouteInfoByTopic_"
                                                      "NC_T.namesrv.json")})
    return asyncio.run(capture_progress(admin, "NC_ONE", "NC_T", running=False))


def _mq_table_stats(version):
    stats = body(version, "never-committed/208_getConsumeStats_NC_ONE.broker-a.json")
    spans = body(version, "never-committed/303_queryConsumeTimeSpan_NC_ONE.broker-a.json")
    last = {s["messageQueue"]["queueId"]: s["maxTimeStamp"] for s in spans["consumeTimeSpanSet"]}
    from mqctl.remoting.fastjson import mq_map

    return {"offsetTable": {
        MQ.from_dict(mq.to_dict()): {"minOffset": 0, "maxOffset": w["brokerOffset"],
                                     "lastUpdateTimestamp": last[mq.queue_id]}
        for mq, w in mq_map(stats["offsetTable"]).items()}}


@pytest.mark.parametrize("version", VERSIONS)
def test_never_committed_queues_have_unknown_time_lag(version, clock):
    """Both versions answer delayTime = now - 0 for NC_ONE's queues 1-3 (only queue 0 was
    consumed); mqctl showed 20780d20h. Now: unknown, reason never-committed."""
    p = _nc_one(version, clock)
    by_q = {q.mq.queue_id: q for q in p.queues}
    assert sorted(by_q) == [0, 1, 2, 3]
    assert by_q[0].delay_ms == 0 and by_q[0].committed is True
    assert by_q[0].delay_reason is None
    for qid in (1, 2, 3):
        q = by_q[qid]
        assert q.delay_ms is None, q
        assert q.delay_reason == "never-committed"
        assert q.committed is False
        assert q.consumer_offset == 0 and q.lag == 25  # as mqadmin's Diff shows it
    res = progress_result(p)
    rows = {r["queue_id"]: r for r in res.data["queues"]}
    assert rows[1]["time_lag"] == "-" and rows[1]["time_lag_s"] is None
    assert rows[1]["time_lag_unknown"] == "never-committed"
    assert rows[1]["committed"] is False
    assert "d" not in rows[1]["time_lag"]
    # totals: the maximum is over the known values; the unknown ones are counted
    assert res.data["total"]["max_time_lag_s"] == 0
    assert res.data["total"]["time_lag_unknown"] == 3
    assert any("3 queue(s) have no committed offset" in n for n in res.notes)
    # snapshot: null, with the state for the lag report
    snap = {r["queue_id"]: r for r in rows_of(p, capture_ts=p.capture_ts, cluster="c",
                                              namesrv="n")}
    assert snap[2]["delay_ms"] is None and snap[2]["committed"] is False
    assert snap[2]["delay_unknown"] == "never-committed"
    assert snap[0]["delay_ms"] == 0 and snap[0]["committed"] is True


@pytest.mark.parametrize("version", VERSIONS)
def test_sort_by_time_lag_puts_unknown_last(version, clock):
    p = _nc_one(version, clock)
    from mqctl.views.progress_rows import SortKey

    rows = progress_result(p, sort=SortKey.time_lag).data["queues"]
    assert [r["queue_id"] for r in rows] == [0, 1, 2, 3]
    assert rows[0]["time_lag_s"] == 0


# ------------------------------------------------------------------------- inflight

def _ri_g_admin(version):
    """RI_G (concurrent, one client) with the client's recorded running info (307) and
    connection (203); its 208 is not recorded, so it is built from the 307's commitOffset
    per queue in the broker's shape of that version (4.9.3: no pullOffset) with the 50
    messages per queue the scenario produced (400 over 8 queues)."""
    run = body(version, "running-info/307_getConsumerRunningInfo_concurrent.json")
    conn = body(version, "running-info/203_getConsumerConnectionList_RI_G.json")
    from mqctl.models import ConsumerRunningInfo

    info = ConsumerRunningInfo.from_body(run)
    stats: dict[str, dict] = {"broker-a": {"consumeTps": 0.0, "offsetTable": {}},
                              "broker-b": {"consumeTps": 0.0, "offsetTable": {}}}
    for mq, pq in info.mq_table.items():
        if mq.topic != "RI_T":
            continue
        w = {"brokerOffset": 50, "consumerOffset": pq.commit_offset, "lastTimestamp": 0}
        if version == "5.3.3":
            w["pullOffset"] = pq.cached_msg_max_offset + 1 if pq.cached_msg_count else \
                pq.commit_offset
        stats[mq.broker_name]["offsetTable"][mq] = w
    route = body(version, "read-gt-write/105_getRouteInfoByTopic_RW_T.namesrv.json")
    route = copy.deepcopy(route)
    for q in route["queueDatas"]:
        q["writeQueueNums"] = 4
    cid = next(iter(conn["connectionSet"]))["clientId"]
    return CorpusAdmin(version, stats={b: _wire(s) for b, s in stats.items()},
                       spans={}, tstats={}, connection=conn, running={cid: run},
                       routes={"RI_T": route, "%RETRY%RI_G": route}), cid


def _wire(stats):
    return {"consumeTps": stats["consumeTps"],
            "offsetTable": [[mq.to_dict(), w] for mq, w in stats["offsetTable"].items()]}


def test_inflight_on_4_9_3_comes_from_the_client_not_zero(clock):
    """4.9.3's 208 has no pullOffset: mqctl showed INFLIGHT 0 while the client held
    cachedMsgCount 50/36/18 messages (307 mqTable). Now the owner's count, marked client."""
    admin, _cid = _ri_g_admin("4.9.3")
    clock(sent_at("4.9.3", "running-info/307_getConsumerRunningInfo_concurrent.json"))
    p = asyncio.run(capture_progress(admin, "RI_G", "RI_T", topic_stats=False))
    by = {q.mq.short: q for q in p.queues}
    assert by["broker-a:0"].pull_offset is None
    assert by["broker-a:0"].inflight == 50 and by["broker-a:0"].inflight_source == "client"
    assert by["broker-a:2"].inflight == 36 and by["broker-a:2"].cached_msg_max_offset == 49
    assert by["broker-b:2"].inflight == 18
    assert by["broker-a:3"].inflight == 0 and by["broker-a:3"].cached_msg_max_offset is None
    rows = {(r["broker"], r["queue_id"]): r for r in progress_result(p).data["queues"]}
    assert rows[("broker-a", 2)]["inflight"] == 36
    assert rows[("broker-a", 2)]["inflight_source"] == "client"
    assert rows[("broker-a", 2)]["inflight_cell"] == "36 (client)"
    snap = {(r["broker"], r["queue_id"]): r for r in rows_of(p, capture_ts=1, cluster="c",
                                                           namesrv="n")}
    assert snap[("broker-a", 0)]["pull_offset"] is None
    assert snap[("broker-a", 0)]["inflight"] == 50
    assert snap[("broker-a", 0)]["inflight_source"] == "client"


def test_inflight_without_owner_on_4_9_3_is_unknown(clock):
    """Offline NC_ONE on 4.9.3: no pullOffset and no owner: null / '-', never 0."""
    p = _nc_one("4.9.3", clock)
    assert all(q.inflight is None and q.inflight_source is None for q in p.queues)
    rows = progress_result(p).data["queues"]
    assert all(r["inflight"] is None and r["inflight_cell"] == "-" for r in rows)
    snap = rows_of(p, capture_ts=1, cluster="c", namesrv="n")
    assert all(r["inflight"] is None and r["pull_offset"] is None for r in snap)


def test_inflight_on_5_3_3_comes_from_the_broker(clock):
    p = _nc_one("5.3.3", clock)
    by = {q.mq.queue_id: q for q in p.queues}
    assert by[0].pull_offset == 25 and by[0].inflight == 0
    assert by[0].inflight_source == "broker"
    admin, _ = _ri_g_admin("5.3.3")
    p = asyncio.run(capture_progress(admin, "RI_G", "RI_T", topic_stats=False))
    q = {x.mq.short: x for x in p.queues}["broker-a:2"]
    assert q.inflight_source == "broker" and q.inflight == 50 - q.consumer_offset


# ------------------------------------------------------------------- read > write

def _rw(version, clock, *, consumer_offset_q2=None):
    stats = {b: body(version, f"read-gt-write/208_getConsumeStats_RW_G.{b}.json")
             for b in ("broker-a", "broker-b")}
    if consumer_offset_q2 is not None:  # the same queues, queue 2 of broker-a behind
        from mqctl.remoting.fastjson import mq_map

        t = mq_map(stats["broker-a"]["offsetTable"])
        t[MQ("RW_T", "broker-a", 2)] = dict(t[MQ("RW_T", "broker-a", 2)],
                                            consumerOffset=consumer_offset_q2)
        stats["broker-a"] = {"consumeTps": 0.0,
                             "offsetTable": [[m.to_dict(), w] for m, w in t.items()]}
    spans = body(version, "read-gt-write/303_queryConsumeTimeSpan_RW_G.broker-a.json")
    tstats = body(version, "read-gt-write/202_getTopicStatsInfo_RW_T.broker-a.json")
    clock(sent_at(version, "read-gt-write/303_queryConsumeTimeSpan_RW_G.broker-a.json"))
    admin = CorpusAdmin(version, brokers=("broker-a",), stats={"broker-a": stats["broker-a"]},
                        spans={"broker-a": spans}, tstats={"broker-a": tstats},
                        min_offsets={MQ("RW_T", "broker-a", q): 0 for q in range(4)},
                        routes={"RW_T": body(version, "read-gt-write/105_getRouteInfoByTopic_"
                                                      "RW_T.namesrv.json")})
    return admin, asyncio.run(capture_progress(admin, "RW_G", "RW_T", running=False))


def test_read_gt_write_4_9_3_every_readable_queue_with_bounds(clock):
    """4.9.3's 202 and 303 cover write queues 0-1 only; 208 covers read queues 0-3. Every
    readable queue is shown; queues 2-3 get their min offset from GET_MIN_OFFSET (two
    requests, not one per queue of the topic) and a time lag of 0 (caught up: exact)."""
    admin, p = _rw("4.9.3", clock)
    assert [q.mq.queue_id for q in p.queues] == [0, 1, 2, 3]
    by = {q.mq.queue_id: q for q in p.queues}
    assert by[2].min_offset == 0 and by[2].min_offset_source == "min-offset"
    assert by[0].min_offset_source == "topic-stats"
    assert [c for c in admin.calls if c[0] == "min_offset"] == [
        ("min_offset", MQ("RW_T", "broker-a", 2)), ("min_offset", MQ("RW_T", "broker-a", 3))]
    assert by[2].delay_ms == 0 and by[3].delay_ms == 0  # lag 0: caught up
    assert by[2].max_timestamp is None  # not reported: unknown, not 0


def test_read_gt_write_4_9_3_lagging_read_only_queue_is_unknown_with_reason(clock):
    _, p = _rw("4.9.3", clock, consumer_offset_q2=20)
    q = {q.mq.queue_id: q for q in p.queues}[2]
    assert q.lag == 5 and q.delay_ms is None and q.delay_reason == "not-reported"
    res = progress_result(p)
    row = {r["queue_id"]: r for r in res.data["queues"]}[2]
    assert row["time_lag"] == "-" and row["time_lag_unknown"] == "not-reported"
    assert any("write queues only" in n for n in res.notes)


def test_read_gt_write_5_3_3_needs_no_extra_request(clock):
    admin, p = _rw("5.3.3", clock)
    assert [q.mq.queue_id for q in p.queues] == [0, 1, 2, 3]
    assert not [c for c in admin.calls if c[0] == "min_offset"]
    assert all(q.min_offset_source == "topic-stats" for q in p.queues)


def test_failed_topic_stats_are_not_retried_per_queue(clock):
    """A broker whose GET_TOPIC_STATS_INFO failed is one failure, not one GET_MIN_OFFSET per
    queue; the bounds stay unknown."""
    admin, _ = _rw("4.9.3", clock)
    admin.tstats = {}
    admin.calls.clear()
    p = asyncio.run(capture_progress(admin, "RW_G", "RW_T", running=False))
    assert not [c for c in admin.calls if c[0] == "min_offset"]
    assert all(q.min_offset is None and q.min_offset_source is None for q in p.queues)
    assert [f.broker for f in p.failures] == ["broker-a"]


# ---------------------------------------------------- the views

@pytest.mark.parametrize("version", VERSIONS)
def test_never_committed_reads_none_by_the_reset_plans_rule(version, clock):
    """NC_ONE committed broker-a/0 only. 4.9.3 answers QUERY_CONSUMER_OFFSET 0 for
    queues 1-3 (and its offset table lists queue 0 only), 5.3.3 QUERY_NOT_FOUND: none, in
    `group progress` (CONSUMER OFFSET) and the snapshot (consumer_offset null)."""
    p = _nc_one(version, clock)
    by_q = {q.mq.queue_id: q for q in p.queues}
    assert by_q[0].current == 25 and by_q[0].committed is True
    assert [by_q[q].current for q in (1, 2, 3)] == [None] * 3
    res = progress_result(p)
    rows = {r["queue_id"]: r for r in res.data["queues"]}
    assert rows[0]["consumer_offset"] == 25 and rows[0]["consumer_offset_cell"] == "25"
    assert [rows[q]["consumer_offset_cell"] for q in (1, 2, 3)] == ["none"] * 3
    assert [rows[q]["consumer_offset"] for q in (1, 2, 3)] == [None] * 3
    assert [rows[q]["lag"] for q in (1, 2, 3)] == [25] * 3  # mqadmin's Diff, with the caveat
    assert res.data["total"]["no_offset_queues"] == 3
    assert any("consumeFromWhere" in n and "3 queue(s) have no committed offset" in n
               for n in res.notes)
    snap = {r["queue_id"]: r for r in rows_of(p, capture_ts=1, cluster="c", namesrv="n")}
    assert snap[1]["consumer_offset"] is None and snap[1]["committed"] is False
    assert snap[0]["consumer_offset"] == 25


def test_the_rule_asks_the_offset_table_only_where_the_broker_cannot_say(clock):
    admin = _nc_one_admin("4.9.3", clock)
    asyncio.run(capture_progress(admin, "NC_ONE", "NC_T", running=False))
    assert ("all_consumer_offset", "broker-a") in admin.calls  # 4.9.3 answered 0
    admin = _nc_one_admin("5.3.3", clock)
    asyncio.run(capture_progress(admin, "NC_ONE", "NC_T", running=False))
    assert not [c for c in admin.calls if c[0] == "all_consumer_offset"]  # 22 says it


def _nc_one_admin(version, clock, **kw):
    stats = body(version, "never-committed/208_getConsumeStats_NC_ONE.broker-a.json")
    spans = body(version, "never-committed/303_queryConsumeTimeSpan_NC_ONE.broker-a.json")
    clock(sent_at(version, "never-committed/303_queryConsumeTimeSpan_NC_ONE.broker-a.json"))
    return CorpusAdmin(version, brokers=("broker-a",), stats={"broker-a": stats},
                       spans={"broker-a": spans},
                       tstats={"broker-a": _mq_table_stats(version)},
                       routes={"NC_T": body(version, "other-requests/105_getRouteInfoByTopic_"
                                                     "NC_T.namesrv.json")}, **kw)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_broker_without_the_groups_offsets_is_covered(version, clock):
    """NC_ONE is offline with offsets on broker-a only. Asked without a topic, a broker
    that holds no offset of the group answers an empty table (the real answer for NC_NEVER,
    208_getConsumeStats_NC_NEVER_no_topic); broker-a's answer without a topic lists NC_T, as
    with it (the recorded 208 with the topic stands in). The view asks broker-b with the
    topic (its recorded 208) and shows its 4 queues as none: 8 queues, complete."""
    stats = {b: body(version, f"never-committed/208_getConsumeStats_NC_ONE.{b}.json")
             for b in ("broker-a", "broker-b")}
    empty = body(version, "never-committed/208_getConsumeStats_NC_NEVER_no_topic.broker-a.json")
    assert empty == {"consumeTps": 0.0, "offsetTable": {}}
    clock(sent_at(version, "never-committed/303_queryConsumeTimeSpan_NC_ONE.broker-a.json"))
    admin = CorpusAdmin(version, stats=stats,
                        no_topic={"broker-a": stats["broker-a"], "broker-b": empty},
                        spans={"broker-a": body(version, "never-committed/303_queryConsume"
                                                         "TimeSpan_NC_ONE.broker-a.json")},
                        routes={"NC_T": body(version, "other-requests/105_getRouteInfoByTopic_"
                                                      "NC_T.namesrv.json")})
    p = asyncio.run(capture_progress(admin, "NC_ONE", topic_stats=False))
    assert ("consume_stats", "broker-b", "NC_T") in admin.calls
    assert sorted((q.mq.broker_name, q.mq.queue_id) for q in p.queues) == [
        (b, q) for b in ("broker-a", "broker-b") for q in range(4)]
    none = [q.mq.short for q in p.queues if q.current is None]
    assert none == ["broker-a:1", "broker-a:2", "broker-a:3"] + [f"broker-b:{q}"
                                                                  for q in range(4)]
    res = progress_result(p)
    assert res.data["total"]["queues"] == 8 and res.data["total"]["complete"] is True
    assert res.data["total"]["brokers_not_included"] == []
    assert res.data["total"]["lag"] == 7 * 25  # 200 messages, 25 consumed
    # 4.9.3: broker-b's zeros checked against its offset table (the persisted one)
    if version == "4.9.3":
        assert ("all_consumer_offset", "broker-b") in admin.calls


def test_inflight_of_queues_no_client_holds_is_0_on_5_3_3(clock):
    """RI_G's client holds every RI_T queue (307). Without its broker-b queues in the
    client's mqTable (as after a rebalance that left them to a client that quit), the
    broker's pullOffset there is not in flight: 0, no owner; broker-a's stay the broker's."""
    admin, cid = _ri_g_admin("5.3.3")
    run = copy.deepcopy(admin.running[cid])
    from mqctl.remoting.fastjson import mq_map

    table = mq_map(run["mqTable"])
    run["mqTable"] = [[mq.to_dict(), v] for mq, v in table.items()
                      if mq.broker_name != "broker-b"]
    admin.running[cid] = run
    for _mq, w in admin.stats["broker-b"]["offsetTable"]:  # the departed owner pulled it all
        w["pullOffset"] = 50
    p = asyncio.run(capture_progress(admin, "RI_G", "RI_T", topic_stats=False))
    by = {q.mq.short: q for q in p.queues}
    for q in range(4):
        b = by[f"broker-b:{q}"]
        assert b.owners == () and b.inflight == 0 and b.inflight_source == "no-owner"
    a = by["broker-a:2"]
    assert a.inflight_source == "broker" and a.inflight == 50 - a.consumer_offset
    rows = {r["broker"]: r for r in progress_result(p).data["queues"] if r["queue_id"] == 0}
    assert rows["broker-b"]["inflight_cell"] == "0 (no owner)"


def test_pop_inflight_is_per_broker_as_the_5_3_3_client_keys_it(clock):
    """a 5.3.3 pop client's running info keys its pop table by broker with queue id
    -1 (QueryAssignmentProcessor.allocate4Pop: MessageQueue(topic, broker, -1)); the issue's
    slow client held waitAckCount 97 (broker-a) + 96 (broker-b). The recorded RI_G 307 (a
    push client, empty mqPopTable) is turned into that pop client in plain sight."""
    admin, cid = _ri_g_admin("5.3.3")
    run = copy.deepcopy(admin.running[cid])
    run["mqTable"] = []
    run["mqPopTable"] = [[{"topic": "RI_T", "brokerName": b, "queueId": -1},
                          {"waitAckCount": n, "droped": False, "lastPopTimestamp": 1}]
                         for b, n in (("broker-a", 97), ("broker-b", 96))]
    admin.running[cid] = run
    admin.connection = dict(admin.connection, consumeType="CONSUME_POP")
    p = asyncio.run(capture_progress(admin, "RI_G", "RI_T", topic_stats=False))
    assert p.pop and p.pop_inflight == {("RI_T", "broker-a"): 97, ("RI_T", "broker-b"): 96}
    assert all(q.inflight is None for q in p.queues)  # never 0 per queue
    res = progress_result(p)
    assert res.data["total"]["pop_inflight"] == 193
    assert res.data["topics"][0]["pop_inflight"] == 193
    assert any("193 in all (broker-a 97, broker-b 96)" in n for n in res.notes)
    assert all(r["inflight_cell"] == "-" for r in res.data["queues"])

"""Parsers of store files, mqadmin captures and logs (pure Python; values by hand)."""

from __future__ import annotations

from datetime import UTC, timedelta, timezone

import pytest

from mqctl.lagjob import parsers as P
from mqctl.lagjob.inputs import Kind, PathMeta

from .builders import (
    SAMPLES,
    T0,
    broker_consume_stats,
    consumer_offset_json,
    consumer_progress_51,
    consumer_progress_493,
    consumer_progress_groups,
    mq,
    result_line4,
    result_line5,
    topic_status,
)

OBS_IDX = {n: i for i, (n, _) in enumerate(P.OBS_FIELDS)}
BAD_IDX = {n: i for i, (n, _) in enumerate(P.BAD_FIELDS)}
LOG_IDX = {n: i for i, (n, _) in enumerate(P.LOG_FIELDS)}


def obs(recs):
    return [{k: r[1][i] for k, i in OBS_IDX.items()} for r in recs if r[0] == P.OBS]


def bads(recs):
    return [{k: r[1][i] for k, i in BAD_IDX.items()} for r in recs if r[0] == P.BAD]


def parse(kind, text, meta=PathMeta(capture_ts=T0), tz=UTC):
    recs = list(P.parse_file(kind.value, "/src", text, meta, None, tz))
    assert all(len(r[1]) == len(dict(
        {P.OBS: P.OBS_FIELDS, P.POINT: P.POINT_FIELDS, P.MEMBER: P.MEMBER_FIELDS,
         P.TOPIC_CFG: P.TOPIC_CFG_FIELDS, P.GROUP_CFG: P.GROUP_CFG_FIELDS,
         P.BAD: P.BAD_FIELDS})[r[0]]) for r in recs)
    return recs


# ---- mqadmin consumerProgress: every layout ------------------------------------------------

def test_consumer_progress_48_sample():
    text = (SAMPLES / "mqadmin/consumerProgress.4.8.blog-capture.txt").read_text()
    rows = obs(parse(Kind.CONSUMER_PROGRESS, text, PathMeta(capture_ts=T0, group="go")))
    assert len(rows) == 6  # the two RocketMQLog:WARN lines, the footer and the blank are skipped
    r = next(r for r in rows if r["topic"] == "TestTopic-6" and r["broker"] == "RaftNode00"
             and r["queue_id"] == 0)
    assert (r["broker_offset"], r["consumer_offset"], r["group"]) == (6006, 6005, "go")
    assert r["owner"] is None  # "N/A" client IP
    # "2021-02-13 06:26:29" in the capturing machine's zone (given as UTC here)
    assert r["last_timestamp"] == 1613197589000
    never = next(r for r in rows if r["topic"] == "TestTopic-6" and r["queue_id"] == 1)
    assert never["last_timestamp"] is None  # N/A


def test_consumer_progress_48_sample_other_zone():
    text = (SAMPLES / "mqadmin/consumerProgress.4.8.blog-capture.txt").read_text()
    rows = obs(parse(Kind.CONSUMER_PROGRESS, text, PathMeta(capture_ts=T0, group="go"),
                     tz=timezone(timedelta(hours=8))))
    assert {r["last_timestamp"] for r in rows if r["last_timestamp"]} == \
        {1613197589000 - 8 * 3_600_000}


def test_consumer_progress_51_with_inflight_and_client_ip():
    text = consumer_progress_51([("TopicA", "broker-a", 0, 1520, 1498, 12, "2024-06-01 10:00:00"),
                                 ("TopicA", "broker-a", 1, 7, 7, 0, "N/A")], client_ip=True)
    rows = obs(parse(Kind.CONSUMER_PROGRESS, text, PathMeta(capture_ts=T0, group="G")))
    assert [(r["queue_id"], r["broker_offset"], r["consumer_offset"], r["pull_offset"],
             r["owner"]) for r in rows] == [(0, 1520, 1498, 1510, "10.0.0.9"),
                                            (1, 7, 7, 7, "10.0.0.9")]
    assert rows[0]["last_timestamp"] == T0


def test_consumer_progress_51_without_client_ip_and_493():
    a = obs(parse(Kind.CONSUMER_PROGRESS,
                  consumer_progress_51([("T", "b", 3, 10, 4, 2, "N/A")]),
                  PathMeta(capture_ts=T0, group="G")))
    assert (a[0]["queue_id"], a[0]["broker_offset"], a[0]["consumer_offset"],
            a[0]["pull_offset"]) == (3, 10, 4, 6)
    b = obs(parse(Kind.CONSUMER_PROGRESS,
                  consumer_progress_493([("T", "b", 2, 10, 4, "2024-06-01 10:00:00")]),
                  PathMeta(capture_ts=T0, group="G")))
    assert (b[0]["queue_id"], b[0]["broker_offset"], b[0]["consumer_offset"],
            b[0]["pull_offset"], b[0]["last_timestamp"]) == (2, 10, 4, None, T0)


def test_consumer_progress_all_groups_layout():
    text = consumer_progress_groups([("GID_A", 2, "V5_3_2", "PUSH", "CLUSTERING", 12, 40),
                                     ("GID_OFF", 0, "OFFLINE", "", "", 0, 7)])
    recs = parse(Kind.CONSUMER_PROGRESS, text)  # no group needed for the group list
    members = [r[1] for r in recs if r[0] == P.MEMBER]
    assert [(m[2], m[3], m[4], m[5]) for m in members] == [("GID_A", 2, True, 40),
                                                          ("GID_OFF", 0, False, 7)]


def test_consumer_progress_needs_a_group_and_reports_bad_rows():
    text = consumer_progress_51([("T", "b", 0, 10, 4, 2, "N/A")])
    assert bads(parse(Kind.CONSUMER_PROGRESS, text))[0]["reason"] == "group unknown"
    broken = text.replace("  0     10", "  x     10", 1)
    b = bads(parse(Kind.CONSUMER_PROGRESS, broken, PathMeta(capture_ts=T0, group="G")))
    assert [(x["reason"], x["line"]) for x in b] == [("malformed row", 4)]
    err = "org.apache.rocketmq.tools.command.SubCommandException: CODE: 206 not online\n"
    assert bads(parse(Kind.CONSUMER_PROGRESS, err, PathMeta(capture_ts=T0, group="G")))[0][
        "reason"] == "no table header"


# ---- brokerConsumeStats / topicStatus -------------------------------------------------------

def test_broker_consume_stats():
    text = broker_consume_stats([("T", "GID_A", "broker-a", 0, 100, 90, "2024-06-01 10:00:00"),
                                 ("T", "GID_B", "broker-a", 1, 50, 50, "2024-06-01 09:59:00")])
    rows = obs(parse(Kind.BROKER_CONSUME_STATS, text))
    assert [(r["group"], r["queue_id"], r["broker_offset"], r["consumer_offset"],
             r["last_timestamp"]) for r in rows] == [("GID_A", 0, 100, 90, T0),
                                                     ("GID_B", 1, 50, 50, T0 - 60_000)]
    bad_text = text.replace("100                   90", "100                   ninety")
    assert bads(parse(Kind.BROKER_CONSUME_STATS, bad_text))[0]["reason"] == "malformed row"


def test_topic_status_sample_and_topic_from_path():
    text = (SAMPLES / "mqadmin/topicStatus.4.8.blog-capture.txt").read_text()
    recs = parse(Kind.TOPIC_STATUS, text, PathMeta(capture_ts=T0, topic="TestTopic-6"))
    points = [r[1] for r in recs if r[0] == P.POINT]
    assert [(p[2], p[3], p[4], p[5], p[6]) for p in points] == [
        ("TestTopic-6", "RaftNode00", 0, 6311, 0), ("TestTopic-6", "RaftNode01", 0, 6311, 0)]
    assert bads(parse(Kind.TOPIC_STATUS, text))[0]["reason"] == "topic unknown"
    empty_last = topic_status([("b", 3, 1, 9, "")])
    p = [r[1] for r in parse(Kind.TOPIC_STATUS, empty_last, PathMeta(capture_ts=T0, topic="X"))]
    assert (p[0][4], p[0][5], p[0][6]) == (3, 9, 1)


# ---- store files -----------------------------------------------------------------------------

def test_consumer_offset_synthetic_and_blog_samples():
    meta = PathMeta(capture_ts=T0, broker="broker-a")
    rows = obs(parse(Kind.CONSUMER_OFFSET,
                     (SAMPLES / "synthetic/store/consumerOffset.json").read_text(), meta))
    got = {(r["group"], r["topic"], r["queue_id"]): r["consumer_offset"] for r in rows}
    assert got[("GID_ORDER", "TopicOrder", 1)] == 1498
    assert got[("GID_ORDER", "%RETRY%GID_ORDER", 0)] == 0
    assert got[("GID_BCAST@broadcast", "TopicOrder", 1)] == 1520  # kept apart from clustering
    assert all(r["broker"] == "broker-a" and r["broker_offset"] is None for r in rows)
    blog = obs(parse(Kind.CONSUMER_OFFSET,
                     (SAMPLES / "store/consumerOffset.json.5x.blog-sample").read_text(), meta))
    assert len(blog) == 17
    assert {(r["group"], r["queue_id"], r["consumer_offset"]) for r in blog
            if r["topic"] == "test" and r["group"] == "push_test"} == {
        ("push_test", 0, 165243), ("push_test", 1, 165245), ("push_test", 2, 165243),
        ("push_test", 3, 165242)}


def test_consumer_offset_bad_inputs():
    meta = PathMeta(capture_ts=T0, broker="b")
    text = consumer_offset_json({"T@G": {0: 5}, "no-at-sign": {0: 1}})
    recs = parse(Kind.CONSUMER_OFFSET, text, meta)
    assert [(r["group"], r["consumer_offset"]) for r in obs(recs)] == [("G", 5)]
    assert [(b["reason"], b["line"]) for b in bads(recs)] == [("bad offsetTable key", 5)]
    truncated = '{\n\t"offsetTable":{\n\t\t"T@G":{0:'
    b = bads(parse(Kind.CONSUMER_OFFSET, truncated, meta))
    assert b[0]["reason"] == "malformed store JSON" and b[0]["line"] == 3
    assert bads(parse(Kind.CONSUMER_OFFSET, text, PathMeta(capture_ts=T0)))[0]["reason"] == \
        "broker unknown"
    assert bads(parse(Kind.CONSUMER_OFFSET, "", meta))[0]["reason"] == "empty file"
    assert bads(parse(Kind.CONSUMER_OFFSET, '{"offsetTable":{"T@G":{0:"x"}}}', meta))[0][
        "reason"] == "bad offset entry"


def test_topics_and_subscription_group_samples():
    meta = PathMeta(capture_ts=T0, broker="broker-a")
    t = [r[1] for r in parse(Kind.TOPICS, (SAMPLES / "synthetic/store/topics.json").read_text(),
                             meta) if r[0] == P.TOPIC_CFG]
    order = {x[3]: x for x in t}
    assert order["TopicOrder"][4:8] == (4, 4, 6, True)  # read, write, perm, FIFO -> orderly
    assert order["%RETRY%GID_ORDER"][7] is False
    g = [r[1] for r in parse(Kind.SUBSCRIPTION_GROUP,
                             (SAMPLES / "synthetic/store/subscriptionGroup.json").read_text(),
                             meta) if r[0] == P.GROUP_CFG]
    assert [(x[3], x[4], x[5], x[6]) for x in g] == [("GID_ORDER", True, True, True)]


def test_no_capture_time_is_quarantined():
    recs = list(P.parse_file("topic-status", "/x", "#Broker Name #QID", PathMeta(), None, UTC))
    assert recs[0][0] == P.BAD and recs[0][1][BAD_IDX["reason"]] == "no capture time"


# ---- client logs ---------------------------------------------------------------------------

def ev(result):
    assert result is not None and result[0] == "log", result
    return {k: result[1][i] for k, i in LOG_IDX.items()}


def test_client_log_5x_result_line_in_gmt8():
    line = result_line5("2024-06-01 18:00:00.123", "GID", "T", "10.0.0.5@1",
                        [("T", "broker-a", 0), ("T", "broker-b", 3)])
    e = ev(P.parse_client_log_line(line, log_tz=UTC))  # log_tz is for 4.x lines only
    assert e["ts"] == T0 + 123
    assert (e["event"], e["group"], e["topic"], e["client"], e["strategy"], e["cid_all"]) == (
        "result", "GID", "T", "10.0.0.5@1", "AVG", 2)
    assert e["mqs"] == [("T", "broker-a", 0), ("T", "broker-b", 3)]


def test_client_log_4x_result_line_in_host_zone_with_crlf():
    line = result_line4("2024-06-01 12:00:00,500", "GID", "T", "c@2", [("T", "b", 1)]) + "\r\n"
    e = ev(P.parse_client_log_line(line, log_tz=timezone(timedelta(hours=2))))
    assert e["ts"] == T0 + 500 and e["client"] == "c@2" and e["mqs"] == [("T", "b", 1)]


def test_client_log_add_remove_lock_and_notify_lines():
    pre = "2024-06-01 18:00:00.000 INFO  [1] [RebalanceService] [x#y:1] - "
    add = ev(P.parse_client_log_line(pre + "doRebalance, G, add a new mq, " + mq("T", "b", 2),
                                     None))
    rm = ev(P.parse_client_log_line(pre + "[BUG]doRebalance, G, try remove unnecessary mq, "
                                    + mq("T", "b", 3) + ", because pull is pause, so try to "
                                    "fixed it", None))
    lock = ev(P.parse_client_log_line(pre + "the message queue locked Failed, Group: G "
                                      + mq("T", "b", 4), None))
    note = ev(P.parse_client_log_line(pre + "receive broker's notification[10.0.0.1:10911], "
                                      "the consumer group: G changed, rebalance immediately",
                                      None))
    assert (add["event"], add["mqs"], add["topic"]) == ("add", [("T", "b", 2)], "T")
    assert (rm["event"], rm["mqs"]) == ("remove", [("T", "b", 3)])
    assert (lock["event"], lock["group"]) == ("client_lock_failed", "G")
    assert (note["event"], note["detail"]) == ("notify", "10.0.0.1:10911")
    assert P.parse_client_log_line(pre + "doRebalance, G, mq already exists, " + mq("T", "b", 2),
                                   None) is None
    assert P.parse_client_log_line("2024-06-01 18:00:00.000 INFO unrelated line", None) is None


@pytest.mark.parametrize("line,reason", [
    (result_line5("2024-06-01 18:00:00.000", "G", "T", "c", [("T", "b", 0)], size=2),
     "truncated result set"),
    (result_line5("2024-06-01 18:00:00.000", "G", "T", "c", [("T", "b", 0)])[:-60],
     "unparsed rebalance line"),
    ("garbage " + result_line5("", "G", "T", "c", [("T", "b", 0)]).strip(), "no timestamp"),
])
def test_client_log_bad_lines(line, reason):
    r = P.parse_client_log_line(line, None)
    assert r is not None and r[0] == "bad" and r[1][0] == reason
    # the line's own time is kept when it can be read (its quarantine row is dated by it)
    assert r[1][2] == (None if reason == "no timestamp" else T0)  # 18:00 GMT+8


# ---- broker lock.log -------------------------------------------------------------------------

L5 = "2024-06-01 18:00:00 WARN AdminBrokerThread_1 - RebalanceLockManager#"
L4 = "2024-06-01 18:00:00 WARN AdminBrokerThread_1 - "


@pytest.mark.parametrize("line,event,client,prev,mqs", [
    (L5 + "tryLockBatch: lock a message which has not been locked yet, group=G, clientId=A@1, "
     "mq=" + mq("T", "b", 1), "acquire", "A@1", None, [("T", "b", 1)]),
    (L5 + "tryLock: lock a message queue which has not been locked yet, group=G, clientId=A@1, "
     "mq=" + mq("T", "b", 1), "acquire", "A@1", None, [("T", "b", 1)]),
    (L5 + "tryLockBatch: try to lock a expired message queue, group=G, mq=" + mq("T", "b", 1)
     + ", old client id=A@1, new client id=B@2", "takeover", "B@2", "A@1", [("T", "b", 1)]),
    (L5 + "tryLockBatch: message queue has been locked by other client, group=G, mq="
     + mq("T", "b", 1) + ", locked client id=A@1, current client id=B@2", "conflict", "B@2",
     "A@1", [("T", "b", 1)]),
    (L5 + "unlockBatch: unlock mq, group=G, clientId=A@1, mqs=[" + mq("T", "b", 1) + ", "
     + mq("T", "b", 2) + "]", "unlock", "A@1", None, [("T", "b", 1), ("T", "b", 2)]),
    (L5 + "unlockBatch: mq locked by other client, group=G, locked clientId=A@1, current "
     "clientId=B@2, mqs=[" + mq("T", "b", 1) + "]", "unlock_conflict", "B@2", "A@1",
     [("T", "b", 1)]),
    (L5 + "unlockBatch: mq not locked, group=G, clientId=A@1, mq=" + mq("T", "b", 1),
     "unlock_not_locked", "A@1", None, [("T", "b", 1)]),
    (L4 + "tryLockBatch, message queue not locked, I got it. Group: G NewClientId: A@1 "
     + mq("T", "b", 1), "acquire", "A@1", None, [("T", "b", 1)]),
    (L4 + "tryLock, message queue lock expired, I got it. Group: G OldClientId: A@1 "
     "NewClientId: B@2 " + mq("T", "b", 1), "takeover", "B@2", "A@1", [("T", "b", 1)]),
    (L4 + "tryLockBatch, message queue locked by other client. Group: G OtherClientId: A@1 "
     "NewClientId: B@2 " + mq("T", "b", 1), "conflict", "B@2", "A@1", [("T", "b", 1)]),
    (L4 + "unlockBatch, Group: G " + mq("T", "b", 1) + " A@1", "unlock", "A@1", None,
     [("T", "b", 1)]),
    (L4 + "unlockBatch, but mq locked by other client: A@1, Group: G " + mq("T", "b", 1)
     + " B@2", "unlock_conflict", "B@2", "A@1", [("T", "b", 1)]),
    (L4 + "unlockBatch, but mq not locked, Group: G " + mq("T", "b", 1) + " A@1",
     "unlock_not_locked", "A@1", None, [("T", "b", 1)]),
])
def test_lock_log_templates_4x_and_5x(line, event, client, prev, mqs):
    e = ev(P.parse_lock_log_line(line))
    assert (e["event"], e["group"], e["client"], e["prev_client"], e["mqs"]) == (
        event, "G", client, prev, mqs)
    assert e["ts"] == T0  # "yyyy-MM-dd HH:mm:ss" pinned to GMT+8


def test_lock_log_bad_and_irrelevant_lines():
    r = P.parse_lock_log_line(L5 + "tryLockBatch: something new in 6.0")
    assert r is not None and r[0] == "bad" and r[1][0] == "unparsed lock line"
    assert P.parse_lock_log_line("2024-06-01 18:00:00 INFO t - unrelated") is None
    r = P.parse_lock_log_line("xx " + (L5 + "unlockBatch: mq not locked, group=G, clientId=A, mq="
                                       + mq("T", "b", 1)))
    assert r is not None and r[1][0] == "no timestamp"


def test_log_line_times_are_exact_per_zone_and_second():
    """A log line's second is converted once per zone (parsers.logs._second_ms keeps the
    answers): lines of one second and different milliseconds, the same text in three zones,
    and local times inside a DST gap and a DST fold all give what the wall clock says."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from mqctl.lagjob.parsers.logs import line_time

    def expect(text: str, ms: int, tz) -> int:
        dt = datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=tz)
        return int(dt.timestamp()) * 1000 + ms

    zones = [timezone(timedelta(hours=8)), UTC, ZoneInfo("America/New_York")]
    seconds = ["2026-11-27 10:00:05", "2025-03-09 02:30:00",  # (a gap in New York)
               "2025-11-02 01:30:00", "2025-11-02 01:30:01"]  # (a fold in New York)
    for tz in zones:
        for text in seconds:
            for frac, ms in ((",000", 0), (",5", 500), (".123", 123), (",999", 999)):
                got = line_time(f"{text}{frac} INFO RebalanceService - x", tz, tz)
                assert got == expect(text, ms, tz), (tz, text, frac)
    # the same text in two zones: 8 hours apart, whatever was converted before
    a = line_time("2026-11-27 10:00:05,250 x", UTC, UTC)
    b = line_time("2026-11-27 10:00:05,250 x", zones[0], zones[0])
    assert a is not None and b is not None and a - b == 8 * 3600 * 1000
    assert line_time("2026-13-27 10:00:05,250 x", UTC, UTC) is None  # (no 13th month)


def test_a_client_line_is_parsed_the_same_whatever_keywords_it_also_holds():
    """The client parser searches a pattern only in a line holding its keyword; a line with
    an offset commit and another keyword elsewhere, or only the keyword, parses as before."""
    from mqctl.lagjob.parsers.logs import parse_client_log_line

    tz = timezone(timedelta(hours=8))
    mq = "MessageQueue [topic=T, brokerName=b0, queueId=3]"
    persist = (f"2026-11-27 10:00:05,250 INFO - [persistAll] Group: G ClientId: 10.0.0.1@1 "
               f"updateConsumeOffsetToBroker {mq} 42")
    tag, rec = parse_client_log_line(persist, tz)
    assert tag == "log" and rec[1] == "persist" and rec[2] == "G" and rec[4] == "10.0.0.1@1"
    add = f"2026-11-27 10:00:05,250 INFO - doRebalance, G, add a new mq, {mq}"
    tag, rec = parse_client_log_line(add, tz)
    assert tag == "log" and rec[1] == "add" and rec[6] == [("T", "b0", 3)]
    lock = f"2026-11-27 10:00:05,250 INFO - the message queue locked OK, Group: G {mq}"
    assert parse_client_log_line(lock, tz)[1][1] == "client_lock_ok"
    unlock = f"2026-11-27 10:00:05,250 INFO - the message queue unlock OK, Group: G {mq}"
    assert parse_client_log_line(unlock, tz)[1][1] == "client_unlock"
    # a keyword without its template: nothing (not an error)
    assert parse_client_log_line("2026-11-27 10:00:05,250 INFO - doRebalance, G", tz) is None

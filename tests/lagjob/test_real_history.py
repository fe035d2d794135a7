"""The lag report's rebalance history and time lag on the recorded real RocketMQ 4.9.3 / 5.3.3
corpus (``../shared/samples/real``).

The history of the recorded client logs (client-logs/cl-c1 + cl-c2) must equal the ownership
the test consumers printed themselves (client-logs/truth.txt, merged from their ``ASSIGNED``
lines, sampled about 1 s after each change), queue by queue."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import REAL_CORPUS, needs_corpus

pytest.importorskip("pyspark")

from mqctl.lagjob import parsers as P
from mqctl.lagjob import transforms as X

from .kernel_frames import group_topic_frame, lag_frame, owner_frames

REAL = REAL_CORPUS
VERSIONS = ("4.9.3", "5.3.3")
S = 1000
TOL_MS = 2 * S  # the consumers print ASSIGNED about 1 s after a change
PERSIST_MS = 5 * S  # RemoteBrokerOffsetStore#persistAll runs every 5 s (MQClientInstance)

pytestmark = needs_corpus(REAL)

LOG_SCHEMA = ("ts long, seq struct<block:long,rid:long>, source string, client_key string, "
              "cluster string, source_kind string, event string, `group` string, topic string, "
              "client string, prev_client string, "
              "mqs array<struct<topic:string,broker:string,queue_id:int>>, strategy string, "
              "mq_all int, cid_all int, detail string")


def corpus_logs(spark, files: list[Path], cluster: str = ""):
    """The parsed lines of client logs, as the job's ``logs`` frame (4.x client logs in UTC,
    5.x pinned to GMT+8: README "Time zones")."""
    rows = []
    for block, f in enumerate(files):
        for i, line in enumerate(f.read_text(errors="replace").splitlines()):
            r = P.parse_client_log_line(line, UTC)
            if r is None or r[0] != "log":
                continue
            ts, event, group, topic, client, prev, mqs, strategy, mq_all, cid_all, detail = r[1]
            rows.append((ts, (block, i), str(f), None, cluster, "client-log", event, group, topic,
                         client, prev, mqs, strategy, mq_all, cid_all, detail))
    return spark.createDataFrame(rows, LOG_SCHEMA)


def utc_ms(text: str) -> int:
    text = text.replace("T", " ").rstrip("Z")
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC)
               .timestamp() * 1000)


def truth_intervals(path: Path) -> dict[tuple[str, str], list[tuple[str, int, int | None]]]:
    """(topic, "broker:qid") -> [(client, start, end)] from truth.txt: a client owns a set from
    its ``owns`` line until its next one, or until the driver killed / stopped / restarted it."""
    text = path.read_text()
    names = dict(re.findall(r"start (cl-c\d) \(client id (\S+?)[,)]", text))
    ends: list[tuple[int, str]] = []  # (time, client) where a process ended
    for ts, _what, name in re.findall(
            r"#\s+(\S+Z) (kill -9|graceful stop \(SIGTERM\)|graceful stop) (cl-c\d)", text):
        ends.append((utc_ms(ts), names[name]))
    owns: list[tuple[int, str, set[str]]] = []
    for ts, client, items in re.findall(r"^(\S+ \S+) (\S+) owns \[(.*)\]$", text, re.M):
        owns.append((utc_ms(ts), client, set(filter(None, items.split(",")))))
    timeline = sorted([(t, c, s) for t, c, s in owns] + [(t, c, None) for t, c in ends],
                      key=lambda x: x[0])
    held: dict[str, tuple[int, set[str]]] = {}
    out: dict[tuple[str, str], list[tuple[str, int, int | None]]] = {}

    def close(client: str, t: int, keep: set[str]) -> None:
        since, items = held.get(client, (t, set()))
        for item in items - keep:
            topic, broker, q = item.rsplit("/", 2)
            out.setdefault((topic, f"{broker}:{q}"), []).append((client, since, t))

    starts: dict[tuple[str, str], int] = {}
    for t, client, items in timeline:
        cur = held.get(client, (t, set()))[1]
        new = items if items is not None else set()
        for item in cur - new:
            topic, broker, q = item.rsplit("/", 2)
            out.setdefault((topic, f"{broker}:{q}"), []).append(
                (client, starts.pop((client, item)), t))
        for item in new - cur:
            starts[(client, item)] = t
        held[client] = (t, new)
    for (client, item), t in starts.items():
        topic, broker, q = item.rsplit("/", 2)
        out.setdefault((topic, f"{broker}:{q}"), []).append((client, t, None))
    return {k: sorted(v, key=lambda x: x[1]) for k, v in out.items()}


def report_intervals(events: list) -> dict[tuple[str, str], list[tuple[str, int, int | None, str]]]:
    """(topic, "broker:qid") -> [(client, start, end, cause of the end)] from the report's
    rebalance events (gained opens, lost closes)."""
    out: dict[tuple[str, str], list] = {}
    open_: dict[tuple[str, str, str], int] = {}
    for e in sorted(events, key=lambda e: (e["ts"], len(e["gained"]))):
        for q in e["lost"]:
            key = (e["topic"], q, e["client"])
            if key in open_:
                out.setdefault((e["topic"], q), []).append(
                    (e["client"], open_.pop(key), e["ts"], e["cause"]))
        for q in e["gained"]:
            open_.setdefault((e["topic"], q, e["client"]), e["ts"])
    for (topic, q, client), t in open_.items():
        out.setdefault((topic, q), []).append((client, t, None, ""))
    return {k: sorted(v, key=lambda x: x[1]) for k, v in out.items()}


@pytest.mark.parametrize("version", VERSIONS)
def test_history_of_real_client_logs_equals_truth(spark, version):
    """c2 was killed (-9) and restarted with the same client id; its first set after
    the restart equals its last one before the kill, and must count as a new gain."""
    d = REAL / version / "client-logs"
    logs = corpus_logs(spark, [d / "cl-c1_rocketmq_client.log", d / "cl-c2_rocketmq_client.log"])
    events = [r.asDict() for r in X.rebalance_events(X.log_changes(logs)).collect()]
    got = report_intervals(events)
    want = truth_intervals(d / "truth.txt")
    assert sorted(got) == sorted(want)  # the same 10 queues (8 CL_T + 2 retry)
    assert len(want) == 10
    for key, truth in want.items():
        mine = got[key]
        assert [c for c, *_ in mine] == [c for c, *_ in truth], (key, mine, truth)
        for (c, s0, e0, cause), (_, s1, e1) in zip(mine, truth, strict=True):
            assert abs(s1 - s0) <= TOL_MS, (key, c, "start", s0, s1)
            assert (e0 is None) == (e1 is None), (key, c, "end", e0, e1)
            if e0 is None or e1 is None:
                continue
            if cause == "crash":  # died between its last offset commit line and +5 s
                assert e0 - TOL_MS <= e1 <= e0 + PERSIST_MS + TOL_MS, (key, c, e0, e1)
            else:
                assert abs(e1 - e0) <= TOL_MS, (key, c, "end", cause, e0, e1)


@pytest.mark.parametrize("version", VERSIONS)
def test_restart_is_a_crash_then_a_gain_not_an_open_unowned_interval(spark, version):
    d = REAL / version / "client-logs"
    logs = corpus_logs(spark, [d / "cl-c1_rocketmq_client.log", d / "cl-c2_rocketmq_client.log"])
    changes = X.log_changes(logs)
    c2 = "127.0.1.82@c2" if version == "4.9.3" else "127.0.2.82@c2"
    ev = [r.asDict() for r in X.rebalance_events(changes).filter(f"client = '{c2}'")
          .orderBy("ts").collect()]
    causes = [(e["topic"], e["cause"], len(e["gained"]), len(e["lost"])) for e in ev]
    # run 1: gains 4 + 1; killed: loses them (crash); run 2: gains the same 4 + 1 again;
    # c1 stops: gains 4 + 1 more; its own graceful stop: loses all 8 + 2
    assert ("CL_T", "crash", 0, 4) in causes and ("%RETRY%CL_G", "crash", 0, 1) in causes
    assert sorted(c for c in causes if c[1] == "stop") == [("%RETRY%CL_G", "stop", 0, 2),
                                                        ("CL_T", "stop", 0, 8)]
    gains = [e for e in ev if e["topic"] == "CL_T" and e["gained"]]
    assert [len(e["gained"]) for e in gains] == [4, 4, 4]
    # the only intervals left open start at c2's final graceful stop (the end of the logs)
    final_stop = max(e["ts"] for e in ev if e["cause"] == "stop")
    un = X.unowned_from_logs(changes).collect()
    assert un and all(r.start_ts == final_stop for r in un if r.open)
    assert len([r for r in un if r.open]) == 10


# ---- a reset is not a rebalance --------------------------------------------------------

@pytest.mark.parametrize(("version", "client", "when", "n_queues"), [
    # 4.9.3: "invoke reset offset operation from broker" once per broker (20:59:28.682, .706 UTC)
    ("4.9.3", "127.0.1.71@rs1", "2026-11-23 20:59:28.682", 0),
    # 5.3.3: "Fix Offset, RS_G, remove unnecessary mq" per queue, from 05:00:00.553 GMT+8
    ("5.3.3", "127.0.2.71@rs1", "2026-11-23 21:00:00.553", 8),
])
def test_real_reset_is_a_reset_event_not_a_rebalance(spark, version, client, when, n_queues):
    logs = corpus_logs(spark, [REAL / version / "reset" / "client_log_after_reset.log"])
    resets = [r.asDict() for r in X.reset_events(logs).collect()]
    assert [(r["group"], r["topic"], r["client"], r["cause"], r["ts"], len(r["queues"]))
            for r in resets] == [("RS_G", "RS_T", client, "reset", utc_ms(when), n_queues)]
    changes = X.log_changes(logs)
    # the re-added set after the reset is the reset's, not a rebalance
    causes = {(r.topic, r.cause) for r in changes.collect()}
    assert ("RS_T", "rebalance") not in causes and ("RS_T", "reset") in causes
    events = X.rebalance_events(changes).unionByName(X.reset_events(logs))
    assert X.rebalance_rounds(events, 20 * S).count() == 0


def test_legacy_reset_drop_and_readd_is_no_loss_and_no_unowned_interval(spark):
    """The 4.x push reset without a result line (add/remove lines only): the client drops its
    queues and re-adds them 10 s later (ClientRemotingProcessor#resetOffset)."""
    rows = [
        (0, "reset", None, None, "T"),
        (1 * S, "remove", None, [("T", "b", 0), ("T", "b", 1)], "T"),
        (11 * S, "add", None, [("T", "b", 0), ("T", "b", 1)], "T"),
        (200 * S, "remove", None, [("T", "b", 1)], "T"),  # a real loss, long after
    ]
    data = [(ts, (0, i), "f", "hostA", "", "client-log", ev, "G", topic, client, None, mqs, None,
             None, None, None) for i, (ts, ev, client, mqs, topic) in
            enumerate((r[0], r[1], r[2], r[3] or [], r[4]) for r in rows)]
    logs = spark.createDataFrame(data, LOG_SCHEMA)
    changes = X.log_changes(logs)
    got = sorted((r.ts // S, r.queue_id, r.change, r.cause) for r in changes.collect())
    assert got == [(1, 0, "lost", "reset"), (1, 1, "lost", "reset"), (11, 0, "gained", "reset"),
                   (11, 1, "gained", "reset"), (200, 1, "lost", "rebalance")]
    un = [(r.queue_id, r.start_ts // S, r.open) for r in X.unowned_from_logs(changes).collect()]
    assert un == [(1, 200, True)]
    assert X.queue_moves(changes, 300 * S).count() == 0
    ev = X.rebalance_events(changes).unionByName(X.reset_events(logs))
    assert sorted((r.ts // S, r.cause) for r in ev.collect()) == [
        (0, "reset"), (1, "reset"), (11, "reset"), (200, "rebalance")]
    rounds = X.rebalance_rounds(ev, 20 * S).collect()
    assert [(r.start_ts // S, r.events) for r in rounds] == [(200, 1)]


def test_offsets_going_back_with_the_same_owner_is_a_reset_event(spark):
    """Snapshots: the 5.x server-side reset sets the committed offsets back at once while the
    allocation stays (corpus 5.3.3/reset/208_before vs 208_after_1s: 50 -> 0, same client)."""
    from .test_transforms import obs_df

    rows = []
    for q, offs in {0: [50, 0, 20], 1: [50, 50, 50]}.items():
        for i, off in enumerate(offs):
            rows.append({"queue_id": q, "capture_ts": i * 60 * S, "broker_offset": 50,
                         "consumer_offset": off, "owner": "E", "online": True})
    rows.append({"queue_id": 2, "capture_ts": 0, "broker_offset": 50, "consumer_offset": 50,
                 "owner": "E", "online": True})
    rows.append({"queue_id": 2, "capture_ts": 60 * S, "broker_offset": 50, "consumer_offset": 0,
                 "owner": "F", "online": True})  # another owner: a rebalance, not a reset
    ev = [r.asDict() for r in owner_frames(obs_df(spark, rows))["resets"].collect()]
    assert [(e["ts"], e["window_start_ts"], e["client"], e["queues"], e["cause"],
             e["source_kind"]) for e in ev] == [(60 * S, 0, "E", ["b:0"], "reset", "snapshot")]


# ---- one event per real change ---------------------------------------------------------

def test_log_and_snapshot_describe_one_change_once(spark):
    """Snapshots (cluster "c") at 0, 60, 120 s see queue 0 move from E to F; E's and F's logs
    (no cluster given) say it happened at 90 s. Without the merge: the group's history is split
    over clusters "" and "c", and with --cluster the move counts twice."""
    from .test_transforms import obs_df

    o = obs_df(spark, [{"queue_id": 0, "capture_ts": t * S, "broker_offset": 10,
                        "consumer_offset": 10, "owner": own, "online": True}
                       for t, own in ((0, "E"), (60, "E"), (120, "F"))])
    rows = [(0, "E", [0], "fe"), (90 * S, "E", [], "fe"), (90 * S + 40, "F", [0], "ff")]
    data = [(ts, (0, i), src, None, "", "client-log", "result", "G", "T", c, None,
             [("T", "b", q) for q in qs], "AVG", 1, 2, None)
            for i, (ts, c, qs, src) in enumerate(rows)]
    logs = X.infer_log_cluster(spark.createDataFrame(data, LOG_SCHEMA), o)
    assert {r.cluster for r in logs.collect()} == {"c"}
    changes = X.merge_changes(owner_frames(o)["changes"], X.log_changes(logs), 10 * S)
    ev = sorted((r.cluster, r.ts // S, r.client, r.gained, r.lost, r.source_kind)
                for r in X.rebalance_events(changes).collect())
    assert ev == [("c", 0, "E", ["b:0"], [], "client-log"),
                  ("c", 90, "E", [], ["b:0"], "client-log+snapshot"),
                  ("c", 90, "F", ["b:0"], [], "client-log+snapshot")]


def test_cluster_of_logs_is_not_guessed_when_the_group_is_in_two_clusters(spark):
    from .test_transforms import obs_df

    o = obs_df(spark, [{"cluster": c, "queue_id": 0, "capture_ts": 0, "broker_offset": 1,
                        "consumer_offset": 1} for c in ("c1", "c2")])
    data = [(0, (0, 0), "f", None, "", "client-log", "result", "G", "T", "E", None,
             [("T", "b", 0)], "AVG", 1, 1, None),
            (0, (0, 1), "f", None, "", "client-log", "result", "H", "T", "E", None,
             [("T", "b", 0)], "AVG", 1, 1, None)]
    logs = X.infer_log_cluster(spark.createDataFrame(data, LOG_SCHEMA), o)
    assert sorted((r.group, r.cluster) for r in logs.collect()) == [("G", ""), ("H", "")]


# ---- the time lag of never-committed queues ---------------------------------------------

def never_committed_rows(version: str, group: str) -> list[dict]:
    """Snapshot rows as a snapshot writer that copies the broker's answers would make them:
    GET_CONSUME_STATS (208) for the offsets, QUERY_CONSUME_TIME_SPAN (303) for delay_ms."""
    import json

    from mqctl.remoting import fastjson

    d = REAL / version / "never-committed"
    rows = []
    for broker in ("a", "b"):
        stats = json.loads((d / f"208_getConsumeStats_{group}.broker-{broker}.json").read_text())
        at = stats["request"]["_sent_at_ms"]
        table = fastjson.loads(stats["response"]["body_text"])["offsetTable"]
        delays: dict[int, int] = {}
        span = d / f"303_queryConsumeTimeSpan_{group}.broker-{broker}.json"
        if span.exists():
            body = json.loads(json.loads(span.read_text())["response"]["body_text"])
            delays = {s["messageQueue"]["queueId"]: s["delayTime"]
                      for s in body["consumeTimeSpanSet"]}
        for mq_, v in table.items():
            rows.append({"group": group, "topic": mq_.topic, "broker": mq_.broker_name,
                         "queue_id": mq_.queue_id, "capture_ts": at,
                         "broker_offset": v["brokerOffset"], "consumer_offset": v["consumerOffset"],
                         "last_timestamp": v["lastTimestamp"],
                         "delay_ms": delays.get(mq_.queue_id), "online": False})
    return rows


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("group", ["NC_ONE", "NC_NEVER"])
def test_never_committed_delay_is_unknown_not_an_epoch(spark, version, group):
    from mqctl.lagjob.thresholds import evaluate, parse_thresholds

    from .test_transforms import obs_df

    rows = never_committed_rows(version, group)
    # the broker's answer as recorded: delayTime = now - 0 for the unconsumed queues
    assert any(r["delay_ms"] and r["delay_ms"] > 1_700_000_000_000 for r in rows)
    queues = lag_frame(obs_df(spark, rows))
    timed = {(r.broker, r.queue_id): r for r in queues.collect()}
    assert len(timed) == 8
    for (broker, q), r in timed.items():
        if group == "NC_ONE" and (broker, q) == ("broker-a", 0):  # committed 25 of 25
            assert (r.lag, r.lag_seconds, r.lag_seconds_source) == (0, 0.0, "exact")
            continue
        assert r.lag == 25 and r.consumer_offset == 0
        assert r.lag_seconds is None and r.lag_seconds_source == "unknown", (broker, q, r)
        assert r.delay_ms is None
    gt = group_topic_frame(queues)
    # one capture per broker (the two 208 requests were sent apart): broker-a's NC_ONE queue 0
    # is caught up (0 s), everything else is unknown, never an epoch
    got = sorted((r.capture_ts, r.lag_seconds) for r in gt.collect())
    assert [v for _, v in got] == ([0.0, None] if group == "NC_ONE" else [None, None])
    latest = X.latest_status(gt)
    assert evaluate(parse_thresholds(["lag_seconds>3600"]), latest, {}) == []


def test_report_counts_one_group_history_with_and_without_cluster(spark, tmp_path):
    """One event per real change, end to end: snapshots of cluster c1 and the two clients' logs of
    the same group.
    The logs move queue 1 from A to B at 50 s and queue 0 at 100 s; the captures (0, 60, 120 s)
    see the same two moves. 5 events: A's first set, A's two losses, B's two gains - with or
    without --cluster (before: 4 without, the logs' "" cluster split off; 9 with)."""
    from datetime import UTC, datetime

    from mqctl.lagjob import run_report

    from .builders import T0, result_line4, snap_row, write, write_snapshot

    owners = {0: ["A@1", "A@1", "B@1"], 1: ["A@1", "B@1", "B@1"]}
    for i in range(3):
        write_snapshot(tmp_path / "in", "c1", T0 + i * 60 * S, [
            snap_row(T0 + i * 60 * S, "GM", "T", q, 100, 100, owner=owners[q][i],
                     members=["A@1", "B@1"]) for q in (0, 1)])

    def at(ms: int) -> str:
        dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
        return dt.strftime("%Y-%m-%d %H:%M:%S,") + f"{ms % 1000:03d}"

    def sets(*qs: int) -> list[tuple[str, str, int]]:
        return [("T", "broker-a", q) for q in qs]

    write(tmp_path / "in" / "logs" / "A" / "rocketmq_client.log", "\n".join([
        result_line4(at(T0 - 10 * S), "GM", "T", "A@1", sets(0, 1)),
        result_line4(at(T0 + 50 * S), "GM", "T", "A@1", sets(0)),
        result_line4(at(T0 + 100 * S), "GM", "T", "A@1", sets())]) + "\n")
    write(tmp_path / "in" / "logs" / "B" / "rocketmq_client.log", "\n".join([
        result_line4(at(T0 + 50 * S + 100), "GM", "T", "B@1", sets(1)),
        result_line4(at(T0 + 100 * S + 100), "GM", "T", "B@1", sets(0, 1))]) + "\n")
    for cluster in ("", "c1"):
        res = run_report([str(tmp_path / "in")], str(tmp_path / f"out{cluster}"), spark=spark,
                         tz="UTC", log_tz="UTC", cluster=cluster)
        rows = [(r["cluster"], r["group"], r["rebalances"]) for r in res.summary]
        assert rows == [("c1", "GM", 5)], cluster
        assert res.counts["rebalance_events"] == 5 and res.counts["queue_moves"] == 2


@pytest.mark.parametrize(("version", "unrecognised", "ignored"), [("4.9.3", 121, 2),
                                                                   ("5.3.3", 119, 4)])
def test_report_over_the_whole_real_corpus(spark, tmp_path, version, unrecognised, ignored):
    """``mqctl lag report <corpus>/<version>``: every file is read, ignored or quarantined by
    name; the history per group and cause is what the scenarios did (README): CL_G's 14
    rebalance events, c2's crash (2 topics), 2 graceful stops x 2 topics; LC_G's takeovers;
    RS_G's reset (the reset lines, then the re-added set) and no rebalance."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import run_report

    res = run_report([str(REAL / version)], str(tmp_path / "out"), spark=spark, tz="UTC",
                     log_tz="UTC")
    assert res.inputs == {"broker-consume-stats": 1, "client-log": 6, "consumer-offset": 2,
                          "consumer-progress": 9, "lock-log": 3, "subscription-group": 2,
                          "topic-status": 2, "topics": 2, "unrecognised": unrecognised,
                          "ignored": ignored}
    # the JSON exchanges, ground truth, pcaps, other mqadmin commands, empty lock logs
    assert res.quarantine == {"no table header": 1, "unrecognised input": unrecognised}
    assert (res.counts["rebalance_events"], res.counts["reset_events"]) == (25, 2)
    ev = spark.read.parquet(str(tmp_path / "out" / "rebalance" / "events"))
    got = {(r["group"], r["cause"]): r["n"] for r in
           ev.groupBy("group", "cause").agg(F.count(F.lit(1)).alias("n")).collect()}
    assert got == {("CL_G", "rebalance"): 14, ("CL_G", "stop"): 4, ("CL_G", "crash"): 2,
                   ("LC_G", "rebalance"): 5, ("RS_G", "reset"): 2}
    rebalances = {(r["group"], r["topic"]): r["rebalances"] for r in res.summary}
    assert rebalances[("CL_G", "CL_T")] == 20 and rebalances[("RS_G", "RS_T")] == 0


@pytest.mark.parametrize(("version", "reset_at"), [("4.9.3", "25s"), ("5.3.3", "1s")])
def test_real_reset_offsets_back_in_consume_stats(spark, version, reset_at):
    """GET_CONSUME_STATS around the real mqadmin resetOffsetByTime (reset/208_*.broker-a.json):
    4.9.3's legacy push reset shows the offsets going back only at +25 s (the client re-consumed
    and committed 32-33 after its 10 s pause); 5.3.3's server-side reset at once (0 at +4.4 s).
    The owner (the one consumer, rs1) stays: one reset event, at that capture."""
    import json

    from mqctl.remoting import fastjson

    from .test_transforms import obs_df

    rows = []
    for label in ("before", "after_1s", "after_5s", "after_12s", "after_25s"):
        d = json.loads((REAL / version / "reset" / f"208_{label}.broker-a.json").read_text())
        at = d["request"]["_sent_at_ms"]
        for mq_, v in fastjson.loads(d["response"]["body_text"])["offsetTable"].items():
            rows.append({"group": "RS_G", "topic": mq_.topic, "broker": mq_.broker_name,
                         "queue_id": mq_.queue_id, "capture_ts": at,
                         "broker_offset": v["brokerOffset"],
                         "consumer_offset": v["consumerOffset"], "owner": "rs1", "online": True})
    ev = [r.asDict() for r in owner_frames(obs_df(spark, rows))["resets"].collect()]
    at = json.loads((REAL / version / "reset" / f"208_after_{reset_at}.broker-a.json")
                    .read_text())["request"]["_sent_at_ms"]
    assert [(e["ts"], e["client"], e["queues"]) for e in ev] == [
        (at, "rs1", ["broker-a:0", "broker-a:1", "broker-a:2", "broker-a:3"])]


def test_legacy_reset_owner_dropout_in_snapshots_is_a_reset(spark):
    """4.x legacy reset seen by snapshots: the client's running info has no process queue for
    10 s (ClientRemotingProcessor#resetOffset drops them), so a capture can show the queue
    without owner between two captures with the same owner, whose offset went back."""
    from .test_transforms import obs_df

    rows = [{"queue_id": 0, "capture_ts": t * S, "broker_offset": 50, "consumer_offset": off,
             "owner": own, "online": True}
            for t, own, off in ((0, "E", 50), (60, "E", 50), (70, None, 50), (80, "E", 20))]
    # queue 1 is another member's all along (so ownership is known at every capture)
    rows += [{"queue_id": 1, "capture_ts": t * S, "broker_offset": 50, "consumer_offset": 50,
              "owner": "F", "online": True} for t in (0, 60, 70, 80)]
    owners = owner_frames(obs_df(spark, rows))
    resets = owners["resets"]
    assert [(r.ts // S, r.window_start_ts // S) for r in resets.collect()] == [(80, 60)]
    changes = X.mark_resets(owners["changes"], resets)
    assert sorted((r.ts // S, r.change, r.cause) for r in changes.collect()) == [
        (70, "lost", "reset"), (80, "gained", "reset")]
    assert X.drop_reset_gaps(owners["unowned"], changes).count() == 0
    assert owners["unowned"].count() == 1  # what it was before
    assert X.queue_moves(changes, 300 * S).count() == 0


# ---- a queue gained before its old owner logs the loss is not unowned ----------

C1, C2, C3 = "127.0.1.101@c1", "127.0.1.102@c2", "127.0.1.103@c3"
_ALL8 = [("broker-a", 1), ("broker-b", 2), ("broker-a", 2), ("broker-b", 3), ("broker-b", 0),
         ("broker-a", 0), ("broker-b", 1), ("broker-a", 3)]  # a HashSet order, as logged


def _line493(at: str, text: str) -> str:
    """One line of a 4.9.3 ``rocketmq_client.log`` (ClientLogger: local time, here UTC)."""
    return f"2026-11-24 01:17:{at} INFO RocketmqClient - {text}"


def _result493(at: str, topic: str, client: str, cid_all: int, mq_all: int,
               queues: list[tuple[str, int]]) -> str:
    """RebalanceImpl#rebalanceByTopic's line, exactly as cl-c1_rocketmq_client.log prints it."""
    mqs = ", ".join(f"MessageQueue [topic={topic}, brokerName={b}, queueId={q}]"
                    for b, q in queues)
    return _line493(at, "rebalanced result changed. allocateMessageQueueStrategyName="
                    f"AVG_BY_CIRCLE, group=TS_G, topic={topic}, clientId={client}, "
                    f"mqAllSize={mq_all}, cidAllSize={cid_all}, rebalanceResultSize="
                    f"{len(queues)}, rebalanceResultSet=[{mqs}]")


def _persist493(at: str, client: str, topic: str, queues: list[tuple[str, int]]) -> list[str]:
    return [_line493(at, f"[persistAll] Group: TS_G ClientId: {client} "
                     f"updateConsumeOffsetToBroker MessageQueue [topic={topic}, brokerName={b}, "
                     f"queueId={q}] 0") for b, q in queues]


def three_consumer_startup_logs(root: Path) -> list[Path]:
    """Three 4.9.3 consumers of TS_G (AVG_BY_CIRCLE, 4 queues on each of two brokers, and the
    two %RETRY%TS_G queues) starting together, as real 4.9.3 clients did: c1 holds every queue at
    first (cidAll 1); c3 sees two members (c1, c3) and takes every second queue; c2 sees all
    three at 01:17:28.491 and takes broker-a:1 (and keeps it to the end); c3 re-balances to
    three; c1 logs the loss of broker-a:1 last, at 01:17:28.889. Every queue always has a
    holder. The lines are in the real format (start line, result lines, persistAll lines, CRLF
    line ends) of 4.9.3/client-logs/cl-c1_rocketmq_client.log."""
    retry = "%RETRY%TS_G"
    r_all = [("broker-b", 0), ("broker-a", 0)]
    start = "the consumer [TS_G] start beginning. messageModel=CLUSTERING, isUnitMode=false"
    lines = {
        C1: [_line493("27,402", start),
             _result493("27,950", "TS_T", C1, 1, 8, _ALL8),
             _result493("27,990", retry, C1, 1, 2, r_all),
             _result493("28,889", "TS_T", C1, 3, 8,
                        [("broker-b", 2), ("broker-a", 0), ("broker-a", 3)]),
             _result493("28,902", retry, C1, 3, 2, [("broker-a", 0)]),
             *_persist493("32,951", C1, "TS_T",
                          [("broker-b", 2), ("broker-a", 0), ("broker-a", 3)])],
        C3: [_line493("27,610", start),
             _result493("28,120", "TS_T", C3, 2, 8,
                        [("broker-a", 1), ("broker-b", 3), ("broker-b", 1), ("broker-a", 3)]),
             _result493("28,131", retry, C3, 2, 2, [("broker-b", 0)]),
             _result493("28,640", "TS_T", C3, 3, 8, [("broker-b", 1), ("broker-a", 2)]),
             _result493("28,655", retry, C3, 3, 2, []),
             *_persist493("33,120", C3, "TS_T", [("broker-b", 1), ("broker-a", 2)])],
        C2: [_line493("27,705", start),
             _result493("28,491", "TS_T", C2, 3, 8,
                        [("broker-a", 1), ("broker-b", 3), ("broker-b", 0)]),
             _result493("28,503", retry, C2, 3, 2, [("broker-b", 0)]),
             *_persist493("33,491", C2, "TS_T",
                          [("broker-a", 1), ("broker-b", 3), ("broker-b", 0)])],
    }
    out = []
    for client, ls in lines.items():
        p = root / client.split("@")[1] / "rocketmq_client.log"
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="") as fh:
            fh.write("\r\n".join(ls) + "\r\n")
        out.append(p)
    return out


def test_queue_gained_before_the_old_owner_logs_the_loss_is_never_unowned(spark, tmp_path):
    """ownership overlaps during a rebalance (each client re-balances on its own), so a
    queue is unowned only while no client holds it. Before: broker-a:1 (and %RETRY%TS_G
    broker-b:0, the same pattern) was reported unowned and open from c1's loss at 28.889,
    although c2 had held it since 28.491 (c3's loss in between hid c2's gain)."""
    files = three_consumer_startup_logs(tmp_path)
    # the lines parse as the real ones do (the format is the corpus's)
    logs = corpus_logs(spark, files)
    assert logs.filter("event = 'result'").count() == 10
    changes = X.log_changes(logs)
    un = X.unowned_from_logs(changes).collect()
    assert [(r.topic, r.broker, r.queue_id, r.start_ts, r.open) for r in un] == []
    # who holds what at the end of the logs: the allocation of three members
    events = [r.asDict() for r in X.rebalance_events(changes).collect()]
    held = {(t, q): sorted(c for c, _s, e, _ in ivs if e is None)
            for (t, q), ivs in report_intervals(events).items()}
    assert held == {
        ("TS_T", "broker-a:0"): [C1], ("TS_T", "broker-a:1"): [C2],
        ("TS_T", "broker-a:2"): [C3], ("TS_T", "broker-a:3"): [C1],
        ("TS_T", "broker-b:0"): [C2], ("TS_T", "broker-b:1"): [C3],
        ("TS_T", "broker-b:2"): [C1], ("TS_T", "broker-b:3"): [C2],
        ("%RETRY%TS_G", "broker-a:0"): [C1], ("%RETRY%TS_G", "broker-b:0"): [C2]}
    # a real gap is still one: c2 alone stops (its unregister line); nobody takes its queues
    stop = _line493("40,001", "unregister client[Producer: null Consumer: TS_G] from "
                    "broker[broker-a 0 127.0.0.1:20911] success")
    with open(files[2], "a", encoding="utf-8", newline="") as fh:
        fh.write(stop + "\r\n")
    un = X.unowned_from_logs(X.log_changes(corpus_logs(spark, files))).collect()
    assert sorted((r.topic, r.broker, r.queue_id, r.start_ts, r.open) for r in un) == [
        ("%RETRY%TS_G", "broker-b", 0, utc_ms("2026-11-24 01:17:40.001"), True),
        ("TS_T", "broker-a", 1, utc_ms("2026-11-24 01:17:40.001"), True),
        ("TS_T", "broker-b", 0, utc_ms("2026-11-24 01:17:40.001"), True),
        ("TS_T", "broker-b", 3, utc_ms("2026-11-24 01:17:40.001"), True)]

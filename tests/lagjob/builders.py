# ruff: noqa: UP031 - the mqadmin captures are built with Java's printf formats, verbatim
"""Input files for the lag job tests, built by hand so every expected value can be worked out on
paper (the expected numbers live in the tests, next to their arithmetic)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

T0 = 1717236000000  # 2024-06-01T10:00:00Z
MIN = 60_000


def iso_name(ts: int) -> str:
    from datetime import UTC, datetime

    dt = datetime.fromtimestamp(ts / 1000, tz=UTC)
    return dt.strftime("%Y%m%dT%H%M%S.") + f"{ts % 1000:03d}Z"


def snap_row(ts: int, group: str, topic: str, queue_id: int, broker_offset: int,
             consumer_offset: int, *, broker: str = "broker-a", cluster: str = "c1",
             owner: str | None = None, members: list[str] | None = None,
             online: bool | None = None, delay_ms: int | None = None,
             last_timestamp: int | None = None) -> dict[str, Any]:
    members = members if members is not None else ([owner] if owner else [])
    return {
        "schema": "mqctl.snapshot/1", "capture_ts": ts, "capture_time": "", "cluster": cluster,
        "namesrv": "127.0.0.1:9876", "group": group, "topic": topic, "broker": broker,
        "queue_id": queue_id, "broker_offset": broker_offset, "min_offset": 0,
        "consumer_offset": consumer_offset, "pull_offset": None,
        "lag": broker_offset - consumer_offset, "inflight": None,
        "last_timestamp": last_timestamp, "max_timestamp": None, "delay_ms": delay_ms,
        "owner": owner, "owners": [owner] if owner else [], "locked": None,
        "last_lock_ts": None, "members": sorted(members),
        "online": bool(members) if online is None else online,
        "consume_type": "CONSUME_PASSIVELY", "message_model": "CLUSTERING", "orderly": False,
    }


def write_snapshot(root: Path, cluster: str, ts: int, rows: list[dict[str, Any]],
                   extra_lines: list[str] | None = None) -> Path:
    """``root/<date>/mqctl-snapshot-<cluster>-<stamp>.jsonl`` like ``mqctl snapshot``."""
    from datetime import UTC, datetime

    day = datetime.fromtimestamp(ts / 1000, tz=UTC).strftime("%Y-%m-%d")
    path = root / day / f"mqctl-snapshot-{cluster}-{iso_name(ts)}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, separators=(",", ":")) for r in rows] + list(extra_lines or [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write(path: Path, text: str, newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text.replace("\n", newline))
    return path


# --- mqadmin layouts (printf formats of ConsumerProgressSubCommand & co, protocol notes 8.x) ---

def consumer_progress_51(rows: list[tuple[str, str, int, int, int, int, str]],
                         client_ip: bool = False) -> str:
    """5.1+ ``consumerProgress -g`` (rows: topic, broker, qid, broker off, consumer off,
    inflight, lastTime)."""
    out = ["RocketMQLog:WARN No appenders could be found for logger (io.netty.util.internal."
           "PlatformDependent0).", "RocketMQLog:WARN Please initialize the logger system properly."]
    if client_ip:
        out.append("%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s %-20s%s" % (
            "#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset",
            "#Client IP", "#Diff", "#Inflight", "#LastTime"))
    else:
        out.append("%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s%s" % (
            "#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff",
            "#Inflight", "#LastTime"))
    diff_total = 0
    for topic, broker, qid, bo, co, inflight, last in rows:
        diff_total += bo - co
        if client_ip:
            out.append("%-64s  %-32s  %-4d  %-20d  %-20d  %-20s %-20d %-20d %s" % (
                topic, broker, qid, bo, co, "10.0.0.9", bo - co, inflight, last))
        else:
            out.append("%-64s  %-32s  %-4d  %-20d  %-20d  %-20d %-20d %s" % (
                topic, broker, qid, bo, co, bo - co, inflight, last))
    out += ["", "Consume TPS: 0.00", f"Consume Diff Total: {diff_total}",
            "Consume Inflight Total: 0"]
    return "\n".join(out) + "\n"


def consumer_progress_493(rows: list[tuple[str, str, int, int, int, str]]) -> str:
    """4.9.3 - 5.0.x ``consumerProgress -g`` without ``-s`` (no #Inflight, no #Client IP)."""
    out = ["%-64s  %-32s  %-4s  %-20s  %-20s  %-20s  %s" % (
        "#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Diff",
        "#LastTime")]
    for topic, broker, qid, bo, co, last in rows:
        out.append("%-64s  %-32s  %-4d  %-20d  %-20d  %-20d  %s" % (
            topic, broker, qid, bo, co, bo - co, last))
    out += ["", "Consume TPS: 0.00", "Diff Total: 0"]
    return "\n".join(out) + "\n"


def consumer_progress_groups(rows: list[tuple[str, int, str, str, str, int, int]]) -> str:
    """``consumerProgress`` without ``-g``: group, count, version, type, model, tps, diff."""
    out = ["%-64s  %-6s  %-24s %-5s  %-14s  %-7s  %s" % (
        "#Group", "#Count", "#Version", "#Type", "#Model", "#TPS", "#Diff Total")]
    for g, count, ver, typ, model, tps, diff in rows:
        out.append("%-64s  %-6d  %-24s %-5s  %-14s  %-7d  %d" % (g, count, ver, typ, model,
                                                                 tps, diff))
    return "\n".join(out) + "\n"


def broker_consume_stats(rows: list[tuple[str, str, str, int, int, int, str]]) -> str:
    """5.x ``brokerConsumeStats`` (topic, group, broker, qid, broker off, consumer off,
    lastTime)."""
    out = ["%-64s  %-64s  %-32s  %-4s  %-20s  %-20s  %-20s  %s" % (
        "#Topic", "#Group", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset",
        "#Diff", "#LastTime")]
    total = 0
    for topic, group, broker, qid, bo, co, last in rows:
        total += bo - co
        out.append("%-64s  %-64s  %-32s  %-4d  %-20d  %-20d  %-20d  %s" % (
            topic, group, broker, qid, bo, co, bo - co, last))
    out += ["", f"Diff Total: {total}"]
    return "\n".join(out) + "\n"


def topic_status(rows: list[tuple[str, int, int, int, str]]) -> str:
    out = ["%-32s  %-4s  %-20s  %-20s    %s" % ("#Broker Name", "#QID", "#Min Offset",
                                                "#Max Offset", "#Last Updated")]
    for broker, qid, mn, mx, last in rows:
        out.append("%-32s  %-4d  %-20d  %-20d    %s" % (broker, qid, mn, mx, last))
    out += ["", "Topic Put TPS: 0.0"]
    return "\n".join(out) + "\n"


def consumer_offset_json(table: dict[str, dict[int, int]]) -> str:
    """Pretty fastjson like ConsumerOffsetManager.encode(true): tabs, bare int keys."""
    parts = []
    for key, offs in table.items():
        inner = ",".join(f"{q}:{o}" for q, o in offs.items())
        parts.append(f'\t\t"{key}":{{{inner}\n\t\t}}')
    return "{\n\t\"offsetTable\":{\n" + ",\n".join(parts) + "\n\t}\n}"


MQ = "MessageQueue [topic={t}, brokerName={b}, queueId={q}]"


def mq(t: str, b: str, q: int) -> str:
    return MQ.format(t=t, b=b, q=q)


def result_line5(ts: str, group: str, topic: str, client: str, mqs: list[tuple[str, str, int]],
                 size: int | None = None) -> str:
    return (f"{ts} INFO  [1] [RebalanceService] [o.a.r.c.i.c.RebalanceImpl#rebalanceByTopic:330]"
            f" - client rebalanced result changed. allocateMessageQueueStrategyName=AVG, "
            f"group={group}, topic={topic}, clientId={client}, mqAllSize=2, cidAllSize=2, "
            f"rebalanceResultSize={len(mqs) if size is None else size}, rebalanceResultSet=["
            + ", ".join(mq(*m) for m in mqs) + "]")


def result_line4(ts: str, group: str, topic: str, client: str,
                 mqs: list[tuple[str, str, int]]) -> str:
    return (f"{ts} INFO RocketmqClient - rebalanced result changed. "
            f"allocateMessageQueueStrategyName=AVG, group={group}, topic={topic}, "
            f"clientId={client}, mqAllSize=2, cidAllSize=2, rebalanceResultSize={len(mqs)}, "
            "rebalanceResultSet=[" + ", ".join(mq(*m) for m in mqs) + "]")


def copy_sample(rel: str, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLES / rel, dest)
    return dest


# ---- the end-to-end scenario -------------------------------------------------------------------

SNAP_GROUPS = ("G_EXACT", "G_INTERP", "G_STALL", "G_STOP", "G_REWIND")


def scenario_rows(i: int) -> list[dict[str, Any]]:
    """Capture i (0..4) at T0 + i minutes; topic T on broker-a queue 0 has max offset
    1000 + 100 i (every group reads the same queue)."""
    ts = T0 + i * MIN
    b = 1000 + 100 * i
    rows = [
        snap_row(ts, "G_EXACT", "T", 0, b, b - 50, owner="A@1", delay_ms=3000),
        snap_row(ts, "G_INTERP", "T", 0, b, [1000, 1050, 1150, 1250, 1350][i], owner="B@1"),
        snap_row(ts, "G_STALL", "T", 0, b, 900, owner="C@1"),
        snap_row(ts, "G_STOP", "T", 0, b, 950, members=[]),
        snap_row(ts, "G_REWIND", "T", 0, b, [990, 1080, 1150, 1020, 1100][i], owner="D@1"),
    ]
    owners = {0: ["E@1", "E@1", "E@1", "E@1", "F@1"], 1: ["E@1", "E@1", None, "F@1", "F@1"]}
    for q in (0, 1):
        rows.append(snap_row(ts, "G_MOVE", "T2", q, 500 + 10 * i, 500 + 10 * i,
                             owner=owners[q][i], members=["E@1", "F@1"]))
    return rows


BAD_SNAPSHOT_LINES = [
    "{bad json",
    json.dumps({**snap_row(T0, "G_X", "T", 0, 1, 1), "schema": "other/2"}),
    json.dumps({k: v for k, v in snap_row(T0, "G_X", "T", 0, 1, 1).items()
                if k != "consumer_offset"}),
    json.dumps(snap_row(T0, "G_X", "T", -1, 1, 1)),
    "",
    json.dumps({**snap_row(T0, "G_X", "T", 0, 1, 1), "queue_id": "x"}),
]


def build_scenario(root: Path) -> dict[str, Path]:
    """Every input kind, with known answers (see test_job.py)."""
    paths: dict[str, Path] = {}
    snap = root / "snap"
    for i in range(5):
        extra = BAD_SNAPSHOT_LINES if i == 4 else None
        paths[f"snap{i}"] = write_snapshot(snap, "c1", T0 + i * MIN, scenario_rows(i), extra)
    dup = root / "snap-copy" / "dup.jsonl"  # capture 0 given twice: merged, counted
    dup.parent.mkdir(parents=True)
    shutil.copyfile(paths["snap0"], dup)
    # store files of broker-b + topicStatus captures of topic TS
    store = root / "store" / "broker-b"
    for stamp, off in (("2024-06-01T10-00-00", 100), ("2024-06-01T10-02-00", 100),
                       ("2024-06-01T10-04-00", 130)):
        write(store / stamp / "consumerOffset.json", consumer_offset_json({"TS@G_STORE": {0: off}}))
    first = store / "2024-06-01T10-00-00"
    write(first / "topics.json", json.dumps({"topicConfigTable": {"TS": {
        "order": False, "perm": 6, "readQueueNums": 1, "writeQueueNums": 1, "topicName": "TS",
        "attributes": {"message.type": "NORMAL"}}}}, indent="\t"))
    write(first / "subscriptionGroup.json", json.dumps({"subscriptionGroupTable": {"G_STORE": {
        "groupName": "G_STORE", "consumeEnable": True, "consumeMessageOrderly": True,
        "consumeBroadcastEnable": True}}}, indent="\t"))
    copy_sample("synthetic/store/delayOffset.json", first / "delayOffset.json")
    paths["bad_store"] = write(store / "2024-06-01T10-06-00" / "consumerOffset.json",
                               '{\n\t"offsetTable":{\n\t\t"TS@G_STORE":{0:')
    mq_dir = root / "mqadmin"
    for stamp, mx in (("2024-06-01T10-00-00", 100), ("2024-06-01T10-02-00", 160),
                      ("2024-06-01T10-04-00", 200)):
        write(mq_dir / f"topicStatus.TS.{stamp}.txt",
              topic_status([("broker-b", 0, 0, mx, "2024-06-01 10:00:00,000")]))
    write(mq_dir / "consumerProgress-all.2024-06-01T10-04-00.txt",
          consumer_progress_groups([("G_STORE", 0, "OFFLINE", "", "", 0, 70)]))
    copy_sample("mqadmin/consumerProgress.4.8.blog-capture.txt",
                mq_dir / "consumerProgress.go_client_dev.2021-02-13T06-30-00.txt")
    copy_sample("mqadmin/topicStatus.4.8.blog-capture.txt",
                mq_dir / "topicStatus.TestTopic-6.2021-02-13T06-30-00.txt")
    write(mq_dir / "consumerProgress.G_CP.2024-06-01T10-00-00.txt",
          consumer_progress_51([("TP", "broker-a", 0, 500, 480, 5, "2024-06-01 09:59:00")],
                               client_ip=True))
    bcs = broker_consume_stats([("TB", "G_BCS", "broker-a", 0, 300, 290, "2024-06-01 09:59:30"),
                                ("TB", "G_BCS", "broker-a", 1, 300, 200, "2024-06-01 09:59:30")])
    bcs = bcs.replace("300                   200", "300                   2oo")  # broken row
    paths["bcs"] = write(mq_dir / "brokerConsumeStats.broker-a.2024-06-01T10-00-00.txt", bcs)
    write(mq_dir / "topicStatus.txt", topic_status([("broker-b", 0, 0, 1, "")]))  # no topic
    paths["unknown"] = write(mq_dir / "notes.txt", "nothing to see here\n")
    # client logs (5.x GMT+8; 4.x host zone, CRLF) and broker lock logs (5.x and 4.x)
    logs = root / "logs"
    c = ("TL", "broker-c")
    pre5 = "[1] [RebalanceService] [o.a.r.c.i.c.RebalanceImpl#updateProcessQueueTable:485] - "
    write(logs / "10.0.0.5" / "rocketmq_client.log", "\n".join([
        f"2024-06-01 18:00:00.100 INFO  {pre5}doRebalance, GID_LOG, add a new mq, {mq(*c, 0)}",
        f"2024-06-01 18:00:00.101 INFO  {pre5}doRebalance, GID_LOG, add a new mq, {mq(*c, 1)}",
        result_line5("2024-06-01 18:00:00.102", "GID_LOG", "TL", "10.0.0.5@1",
                     [(*c, 0), (*c, 1)]),
        f"2024-06-01 18:01:00.000 INFO  {pre5}doRebalance, GID_LOG, remove unnecessary mq, "
        f"{mq(*c, 1)}",
        result_line5("2024-06-01 18:01:00.001", "GID_LOG", "TL", "10.0.0.5@1", [(*c, 0)]),
        result_line5("2024-06-01 18:01:10.000", "GID_LOG", "TL", "10.0.0.5@1", [(*c, 0)]),
        result_line5("2024-06-01 18:01:30.000", "GID_LOG", "TL", "10.0.0.5@1", [(*c, 0)],
                     size=2),  # truncated: quarantined (line 7)
    ]) + "\n")
    write(logs / "10.0.0.6" / "rocketmq_client.log", "\n".join([
        f"2024-06-01 10:01:05,000 INFO RocketmqClient - doRebalance, GID_LOG, add a new mq, "
        f"{mq(*c, 1)}",
        result_line4("2024-06-01 10:01:05,001", "GID_LOG", "TL", "10.0.0.6@2", [(*c, 1)]),
    ]) + "\n", newline="\r\n")
    write(logs / "10.0.0.7" / "rocketmq_client.log", "\n".join([
        f"2024-06-01 18:02:00.005 INFO  {pre5}doRebalance, GID_FB, add a new mq, "
        f"{mq('TF', 'broker-c', 0)}",
        f"2024-06-01 18:02:00.009 INFO  {pre5}doRebalance, GID_FB, add a new mq, "
        f"{mq('TF', 'broker-c', 1)}",
    ]) + "\n")
    lk = "RebalanceLockManager#tryLockBatch: "
    write(logs / "broker-c" / "lock.log", "\n".join([
        f"2024-06-01 18:00:01 INFO AdminBrokerThread_1 - {lk}lock a message which has not been "
        f"locked yet, group=GID_LOG, clientId=10.0.0.5@1, mq={mq(*c, 1)}",
        f"2024-06-01 18:02:00 WARN AdminBrokerThread_2 - {lk}try to lock a expired message "
        f"queue, group=GID_LOG, mq={mq(*c, 1)}, old client id=10.0.0.5@1, new client "
        "id=10.0.0.6@2",
        f"2024-06-01 18:02:30 WARN AdminBrokerThread_2 - {lk}a template from the future",
    ]) + "\n")
    write(logs / "broker-c" / "lock.log.1", (
        "2024-06-01 18:03:00 WARN AdminBrokerThread_3 - tryLockBatch, message queue lock "
        "expired, I got it. Group: GID_LOG OldClientId: 10.0.0.6@2 NewClientId: 10.0.0.5@1 "
        f"{mq(*c, 1)}\n"))
    return paths

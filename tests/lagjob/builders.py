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

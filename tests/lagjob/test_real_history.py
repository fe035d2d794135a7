"""The lag report's rebalance history and time lag on the recorded real RocketMQ 4.9.3 / 5.3.3
corpus (``../shared/samples/real``; issue 14 items 2, 9, 10, 11).

The history of the recorded client logs (client-logs/cl-c1 + cl-c2) must equal the ownership
the test consumers printed themselves (client-logs/truth.txt, merged from their ``ASSIGNED``
lines, sampled about 1 s after each change), queue by queue."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from mqctl.lagjob import parsers as P
from mqctl.lagjob import transforms as X

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "samples" / "real"
VERSIONS = ("4.9.3", "5.3.3")
S = 1000
TOL_MS = 2 * S  # the consumers print ASSIGNED about 1 s after a change
PERSIST_MS = 5 * S  # RemoteBrokerOffsetStore#persistAll runs every 5 s (MQClientInstance)

pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="the real corpus is not present")

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
    """Item 9: c2 was killed (-9) and restarted with the same client id; its first set after
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

"""The lag report's parsers on EVERY recorded log, store file and mqadmin output of the real
RocketMQ 4.9.3 / 5.3.3 corpus (``../shared/samples/real``).

Pure Python: each file is classified the way ``mqctl lag report`` classifies it
(:func:`mqctl.lagjob.readers.list_local`: name, then content) and parsed with the report's
parsers. Every input file of the corpus is either in ``EXPECTED`` (kind + record counts, plus
named values below) or in ``EXCLUDED`` with the reason the report does not read it. Ground truth
(``workload_*.out``, ``truth.txt``, ``actions.txt``, ``produce*.out``), the request/response
exchanges (``NNN_*.json``, replayed against the sim elsewhere) and ``pcap-text/`` (``wire
decode``'s) are not lag report inputs.
"""

from __future__ import annotations

import collections
from datetime import UTC, datetime

import pytest
from conftest import REAL_CORPUS, needs_corpus

from mqctl.lagjob import parsers as P
from mqctl.lagjob.inputs import InputSpec, Kind, path_meta
from mqctl.lagjob.readers import list_local

REAL = REAL_CORPUS
pytestmark = needs_corpus(REAL)
STORE_COPIED_MS = 1795467780000  # README: store files copied at 21:03 UTC (their mtime)
OBS_IDX = {n: i for i, (n, _) in enumerate(P.OBS_FIELDS)}


def utc(text: str) -> int:
    fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in text else "%Y-%m-%d %H:%M:%S"
    return int(datetime.strptime(text, fmt).replace(tzinfo=UTC).timestamp() * 1000)


# (kind, {record tag or log event: count}); "bad:<reason>" = quarantined with that reason
EXPECTED: dict[str, tuple[str, dict[str, int]]] = {
    "4.9.3/client-logs/cl-c1_rocketmq_client.log":
        ("client-log", {
            "add": 15, "notify": 8, "persist": 220, "remove": 10, "result": 8, "start": 1,
            "stop": 3}),
    "4.9.3/client-logs/cl-c2_rocketmq_client.log":
        ("client-log", {"add": 15, "notify": 6, "persist": 130, "result": 6, "start": 2,
            "stop": 3}),
    "4.9.3/lock-crash/kill_broker-a_lock.log":
        ("lock-log", {"acquire": 5}),
    "4.9.3/lock-crash/kill_broker-b_lock.log":
        ("lock-log", {"acquire": 5, "conflict": 20, "takeover": 5}),
    "4.9.3/lock-crash/kill_survivor_o1_client.log":
        ("client-log", {
            "add": 5, "add_lock_failed": 20, "client_lock_failed": 20, "client_lock_ok": 11,
            "notify": 2, "persist": 145, "result": 2}),
    "4.9.3/lock-crash/mqadmin_consumerProgress_90s_after_kill.txt":
        ("consumer-progress", {"obs": 10}),
    "4.9.3/lock-crash/pause_broker-b_lock.log":
        ("lock-log", {"acquire": 9, "conflict": 15, "takeover": 5, "unlock": 9}),
    "4.9.3/lock-crash/pause_other_o1_client.log":
        ("client-log", {
            "add": 5, "client_lock_ok": 10, "client_unlock": 5, "notify": 3, "persist": 241,
            "remove": 5, "result": 4}),
    "4.9.3/lock-crash/pause_paused_o2_client.log":
        ("client-log", {
            "add": 4, "client_lock_failed": 11, "client_lock_ok": 9, "client_unlock": 4, "notify":
            2, "persist": 174, "remove": 4, "result": 2}),
    "4.9.3/mqadmin-outputs/brokerConsumeStats_broker-a.txt":
        ("broker-consume-stats", {"obs": 70}),
    "4.9.3/mqadmin-outputs/consumerProgress_-g_CL_G.txt":
        ("consumer-progress", {"obs": 10}),
    "4.9.3/mqadmin-outputs/consumerProgress_-g_CL_G_-s_true.txt":
        ("consumer-progress", {"obs": 10}),
    "4.9.3/mqadmin-outputs/consumerProgress_no_g.txt":
        ("consumer-progress", {"member": 27}),
    "4.9.3/mqadmin-outputs/topicStatus_CL_T.txt":
        ("topic-status", {"point": 8}),
    "4.9.3/never-committed/mqadmin_consumerProgress_NC_NEVER.txt":
        ("consumer-progress", {"bad:no table header": 1}),
    "4.9.3/never-committed/mqadmin_consumerProgress_NC_ONE.txt":
        ("consumer-progress", {"obs": 4}),
    "4.9.3/never-committed/mqadmin_consumerProgress_all_-s.txt":
        ("consumer-progress", {"member": 24}),
    "4.9.3/read-gt-write/mqadmin_consumerProgress_RW_G_-s.txt":
        ("consumer-progress", {"obs": 9}),
    "4.9.3/read-gt-write/mqadmin_topicStatus_RW_T.txt":
        ("topic-status", {"point": 4}),
    "4.9.3/reset/client_log_after_reset.log":
        ("client-log", {"add": 8, "persist": 68, "reset": 2, "result": 2}),
    "4.9.3/running-info/mqadmin_consumerProgress_RI_OG_-s.txt":
        ("consumer-progress", {"obs": 10}),
    "4.9.3/store-files/broker-a_consumerOffset.json":
        ("consumer-offset", {"obs": 126}),
    "4.9.3/store-files/broker-a_subscriptionGroup.json":
        ("subscription-group", {"group_cfg": 38}),
    "4.9.3/store-files/broker-a_topics.json":
        ("topics", {"topic_cfg": 49}),
    "4.9.3/store-files/broker-b_consumerOffset.json":
        ("consumer-offset", {"obs": 128}),
    "4.9.3/store-files/broker-b_subscriptionGroup.json":
        ("subscription-group", {"group_cfg": 37}),
    "4.9.3/store-files/broker-b_topics.json":
        ("topics", {"topic_cfg": 49}),
    "5.3.3/client-logs/cl-c1_rocketmq_client.log":
        ("client-log", {
            "add": 15, "notify": 8, "persist": 185, "remove": 10, "result": 8, "start": 1,
            "stop": 3}),
    "5.3.3/client-logs/cl-c2_rocketmq_client.log":
        ("client-log", {"add": 15, "notify": 6, "persist": 130, "result": 6, "start": 2,
            "stop": 3}),
    "5.3.3/lock-crash/kill_broker-a_filter.log":
        ("lock-log", {"acquire": 5, "unlock": 5}),
    "5.3.3/lock-crash/kill_broker-b_filter.log":
        ("lock-log", {"acquire": 5, "conflict": 280, "takeover": 5, "unlock": 5}),
    "5.3.3/lock-crash/kill_survivor_o1_client.log":
        ("client-log", {
            "add": 5, "add_lock_failed": 280, "client_lock_failed": 280, "client_lock_ok": 5,
            "notify": 2, "persist": 148, "result": 2}),
    "5.3.3/lock-crash/mqadmin_consumerProgress_90s_after_kill.txt":
        ("consumer-progress", {"obs": 10}),
    "5.3.3/lock-crash/pause_broker-b_filter.log":
        ("lock-log", {"acquire": 5, "conflict": 12, "takeover": 5, "unlock": 5,
            "unlock_conflict": 4}),
    "5.3.3/lock-crash/pause_other_o1_client.log":
        ("client-log", {
            "add": 5, "client_lock_ok": 5, "client_unlock": 5, "notify": 3, "persist": 251,
            "remove": 5, "result": 4}),
    "5.3.3/lock-crash/pause_paused_o2_client.log":
        ("client-log", {
            "add": 4, "client_lock_failed": 12, "client_lock_ok": 9, "client_unlock": 4, "notify":
            2, "persist": 128, "remove": 4, "result": 2}),
    "5.3.3/mqadmin-outputs/brokerConsumeStats_broker-a.txt":
        ("broker-consume-stats", {"obs": 23}),
    "5.3.3/mqadmin-outputs/consumerProgress_-g_CL_G.txt":
        ("consumer-progress", {"obs": 10}),
    "5.3.3/mqadmin-outputs/consumerProgress_-g_CL_G_-s_true.txt":
        ("consumer-progress", {"obs": 10}),
    "5.3.3/mqadmin-outputs/consumerProgress_no_g.txt":
        ("consumer-progress", {"member": 9}),
    "5.3.3/mqadmin-outputs/topicStatus_CL_T.txt":
        ("topic-status", {"point": 8}),
    "5.3.3/never-committed/mqadmin_consumerProgress_NC_NEVER.txt":
        ("consumer-progress", {"bad:no table header": 1}),
    "5.3.3/never-committed/mqadmin_consumerProgress_NC_ONE.txt":
        ("consumer-progress", {"obs": 4}),
    "5.3.3/never-committed/mqadmin_consumerProgress_all_-s.txt":
        ("consumer-progress", {"member": 3}),
    "5.3.3/read-gt-write/mqadmin_consumerProgress_RW_G_-s.txt":
        ("consumer-progress", {"obs": 8}),
    "5.3.3/read-gt-write/mqadmin_topicStatus_RW_T.txt":
        ("topic-status", {"point": 8}),
    "5.3.3/reset/client_log_after_reset.log":
        ("client-log", {"add": 8, "persist": 66, "reset": 8, "result": 2}),
    "5.3.3/running-info/mqadmin_consumerProgress_RI_OG_-s.txt":
        ("consumer-progress", {"obs": 10}),
    "5.3.3/store-files/broker-a_consumerOffset.json":
        ("consumer-offset", {"obs": 41}),
    "5.3.3/store-files/broker-a_subscriptionGroup.json":
        ("subscription-group", {"group_cfg": 19}),
    "5.3.3/store-files/broker-a_topics.json":
        ("topics", {"topic_cfg": 31}),
    "5.3.3/store-files/broker-b_consumerOffset.json":
        ("consumer-offset", {"obs": 40}),
    "5.3.3/store-files/broker-b_subscriptionGroup.json":
        ("subscription-group", {"group_cfg": 19}),
    "5.3.3/store-files/broker-b_topics.json":
        ("topics", {"topic_cfg": 31}),
}

_NOT_READ = "mqadmin {} output: no queue offsets (the lag report reads consumerProgress, " \
            "brokerConsumeStats and topicStatus)"
_DUMP = "ConsumerRunningInfo dump written by consumerStatus: no broker offsets"
_BROKER_LOG = "broker.log grep: the lag report has no broker.log input (membership and reset " \
              "lines; rebalances come from client logs and lock.log)"
EXCLUDED: dict[str, str] = {}
for _v in ("4.9.3", "5.3.3"):
    for _rel, _why in {
        "client-logs/mqadmin_updateTopic_CL_T.txt": _NOT_READ.format("updateTopic"),
        "lock-crash/mqadmin_updateTopic_LC_T.txt": _NOT_READ.format("updateTopic"),
        "lock-crash/mqadmin_consumerConnection_75s_into_pause.txt":
            _NOT_READ.format("consumerConnection"),
        "lock-crash/mqadmin_consumerStatus_40s_after_resume.txt":
            _NOT_READ.format("consumerStatus"),
        "lock-crash/mqadmin_consumerStatus_90s_after_kill.txt":
            _NOT_READ.format("consumerStatus"),
        "lock-crash/mqadmin_consumerStatus_before_kill.txt": _NOT_READ.format("consumerStatus"),
        "lock-crash/kill_broker-a_broker_log_grep.log": _BROKER_LOG,
        "lock-crash/pause_broker-a_broker_log_grep.log": _BROKER_LOG,
        "reset/broker-a_broker_log_after_reset.log": _BROKER_LOG,
        "reset/broker-b_broker_log_after_reset.log": _BROKER_LOG,
        "mqadmin-outputs/clusterList.txt": _NOT_READ.format("clusterList"),
        "mqadmin-outputs/consumerConnection_CL_G.txt": _NOT_READ.format("consumerConnection"),
        "mqadmin-outputs/consumerStatus_LC_G.txt": _NOT_READ.format("consumerStatus"),
        "mqadmin-outputs/topicRoute_CL_T.txt": _NOT_READ.format("topicRoute"),
        "never-committed/mqadmin_updateSubGroup.txt": _NOT_READ.format("updateSubGroup"),
        "never-committed/mqadmin_updateTopic.txt": _NOT_READ.format("updateTopic"),
        "read-gt-write/mqadmin_topicRoute_RW_T.txt": _NOT_READ.format("topicRoute"),
        "read-gt-write/mqadmin_updateTopic_4_4.txt": _NOT_READ.format("updateTopic"),
        "read-gt-write/mqadmin_updateTopic_r4_w2.txt": _NOT_READ.format("updateTopic"),
        "reset/mqadmin_resetOffsetByTime.txt": _NOT_READ.format("resetOffsetByTime"),
        "reset/mqadmin_updateTopic_RS_T.txt": _NOT_READ.format("updateTopic"),
        "running-info/mqadmin_consumerConnection_RI_OG.txt":
            _NOT_READ.format("consumerConnection"),
        "running-info/mqadmin_consumerStatus_RI_OG.txt": _NOT_READ.format("consumerStatus"),
        "running-info/mqadmin_updateTopic_RI_OT.txt": _NOT_READ.format("updateTopic"),
        "running-info/mqadmin_updateTopic_RI_T.txt": _NOT_READ.format("updateTopic"),
        "store-files/broker-a_config_dir_listing.txt": "a directory listing, not a store file",
        "store-files/broker-b_config_dir_listing.txt": "a directory listing, not a store file",
        "store-files/broker-a_delayOffset.json": "ignored: store file without lag data",
        "store-files/broker-b_delayOffset.json": "ignored: store file without lag data",
    }.items():
        EXCLUDED[f"{_v}/{_rel}"] = _why
EXCLUDED["4.9.3/lock-crash/pause_broker-a_lock.log"] = "empty file (broker-a logged no lock " \
    "line during the pause)"
EXCLUDED["5.3.3/lock-crash/pause_broker-a_filter.log"] = "empty file (broker-a logged no lock " \
    "line during the pause)"
for _b in ("a", "b"):
    EXCLUDED[f"5.3.3/store-files/broker-{_b}_consumerOrderInfo.json"] = \
        "ignored: store file without lag data"
for _dump in sorted((REAL / "4.9.3" / "mqadmin-outputs" / "consumerStatus_dump_files").rglob("*")
                    ) + sorted((REAL / "5.3.3" / "mqadmin-outputs" /
                                "consumerStatus_dump_files").rglob("*")):
    if _dump.is_file():
        EXCLUDED[str(_dump.relative_to(REAL))] = _DUMP


def corpus_inputs() -> list[str]:
    """Every file of the corpus that is a log, a store file or an mqadmin output."""
    out = []
    for f in sorted(REAL.glob("*/**/*")):
        rel = f.relative_to(REAL)
        name = f.name
        if not f.is_file() or rel.parts[1] in ("pcap-text", "other-requests"):
            continue
        if name.startswith(("workload_", "produce")) or name in ("truth.txt", "actions.txt"):
            continue  # ground truth
        if name.endswith(".json") and rel.parts[1] != "store-files":
            continue  # request/response exchanges
        out.append(str(rel))
    return out


def classify(rel: str):
    listing = list_local([InputSpec(str(REAL / rel))])
    (f,) = listing.files
    return f


def parse(rel: str):
    """(kind, records or log events) as the report parses the file."""
    f = classify(rel)
    text = (REAL / rel).read_text(errors="replace")
    if f.kind in (Kind.CLIENT_LOG, Kind.LOCK_LOG):
        out = []
        for line in text.splitlines():
            # 4.9.3 client logs are in the host's zone (UTC); 5.3.3 client and broker logs
            # are pinned to GMT+8 by their logback pattern
            r = (P.parse_client_log_line(line, UTC) if f.kind == Kind.CLIENT_LOG
                 else P.parse_lock_log_line(line))
            if r is not None:
                out.append(r)
        return f.kind, out
    meta = path_meta(str(REAL / rel), UTC, f.kind)
    return f.kind, list(P.parse_file(f.kind.value, str(REAL / rel), text, meta,
                                     STORE_COPIED_MS, UTC))


def counts(kind, recs) -> dict[str, int]:
    c: collections.Counter[str] = collections.Counter()
    for tag, rec in recs:
        if kind in (Kind.CLIENT_LOG, Kind.LOCK_LOG):
            c[rec[1] if tag == "log" else "bad"] += 1
        else:
            c[tag if tag != P.BAD else f"bad:{rec[3]}"] += 1
    return dict(sorted(c.items()))


def test_every_corpus_input_is_expected_or_excluded():
    files = corpus_inputs()
    assert len(files) > 100
    unlisted = [f for f in files if f not in EXPECTED and f not in EXCLUDED]
    assert unlisted == []
    assert not set(EXPECTED) & set(EXCLUDED)
    assert sorted(set(EXPECTED) | set(EXCLUDED)) == sorted(files)  # no stale entries


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_corpus_file_parses(rel):
    kind, recs = parse(rel)
    want_kind, want = EXPECTED[rel]
    assert kind.value == want_kind
    assert counts(kind, recs) == want


@pytest.mark.parametrize("rel", sorted(EXCLUDED))
def test_corpus_file_is_not_read(rel):
    f = classify(rel)
    if EXCLUDED[rel].startswith("ignored"):
        assert f.ignored is not None
    else:
        assert f.kind is None and f.ignored is None  # reported as unrecognised input


def obs_of(rel: str) -> list[dict]:
    _, recs = parse(rel)
    return [{k: r[1][i] for k, i in OBS_IDX.items()} for r in recs if r[0] == P.OBS]


@pytest.mark.parametrize("version", ["4.9.3", "5.3.3"])
def test_consumer_progress_never_committed_values(version):
    """NC_ONE consumed broker-a/0 only: the other queues show Consumer Offset 0 and LastTime
    N/A (mqadmin's own unknown); group and capture time come from the recorded command line."""
    rows = {r["queue_id"]: r for r in
            obs_of(f"{version}/never-committed/mqadmin_consumerProgress_NC_ONE.txt")}
    assert sorted(rows) == [0, 1, 2, 3]
    assert {r["group"] for r in rows.values()} == {"NC_ONE"}
    when = "2026-11-23 20:56:25.643" if version == "4.9.3" else "2026-11-23 20:56:33.640"
    assert {r["observed_ts"] for r in rows.values()} == {utc(when)}
    q0 = rows[0]
    assert (q0["broker"], q0["broker_offset"], q0["consumer_offset"]) == ("broker-a", 25, 25)
    # "#LastTime" is local time = UTC here (README "Time zones")
    assert q0["last_timestamp"] == utc("2026-11-23 20:55:43" if version == "4.9.3"
                                       else "2026-11-23 20:55:51")
    for q in (1, 2, 3):
        assert (rows[q]["broker_offset"], rows[q]["consumer_offset"],
                rows[q]["last_timestamp"]) == (25, 0, None)
        # 5.3.3 prints #Inflight 0: pull offset = consumer offset + inflight
        assert rows[q]["pull_offset"] == (0 if version == "5.3.3" else None)


@pytest.mark.parametrize("version", ["4.9.3", "5.3.3"])
def test_store_files_values(version):
    offs = {(r["group"], r["topic"], r["queue_id"]): r["consumer_offset"]
            for r in obs_of(f"{version}/store-files/broker-a_consumerOffset.json")}
    assert {k: v for k, v in offs.items() if k[0] == "NC_ONE"} == {("NC_ONE", "NC_T", 0): 25}
    rw = {k[2]: v for k, v in offs.items() if k[:2] == ("RW_G", "RW_T")}
    assert rw == {0: 50, 1: 50, 2: 25, 3: 25}  # 4 read queues, 2 of them written twice
    b = obs_of(f"{version}/store-files/broker-b_consumerOffset.json")
    assert {r["broker"] for r in b} == {"broker-b"}  # from the file name prefix
    _, recs = parse(f"{version}/store-files/broker-a_topics.json")
    topics = {r[1][3]: r[1] for r in recs if r[0] == P.TOPIC_CFG}
    assert topics["RW_T"][4:6] == (4, 2)  # readQueueNums, writeQueueNums
    _, recs = parse(f"{version}/store-files/broker-a_subscriptionGroup.json")
    assert "NC_NEVER" in {r[1][3] for r in recs if r[0] == P.GROUP_CFG}


@pytest.mark.parametrize(("version", "queues"), [("4.9.3", [0, 1]), ("5.3.3", [0, 1, 2, 3])])
def test_topic_status_read_gt_write(version, queues):
    """4.9.3's GET_TOPIC_STATS_INFO iterates the write queues only (2 of 4)."""
    _, recs = parse(f"{version}/read-gt-write/mqadmin_topicStatus_RW_T.txt")
    pts = [r[1] for r in recs if r[0] == P.POINT]
    assert {p[2] for p in pts} == {"RW_T"}  # topic from the recorded command line
    assert sorted({p[4] for p in pts}) == queues
    assert {(p[4], p[5]) for p in pts if p[3] == "broker-a"} == \
        {(q, 50 if q < 2 else 25) for q in queues}


@pytest.mark.parametrize(("rel", "first_result_utc"), [
    # 4.9.3 client log: "2026-11-23 20:56:16,643" in the host's zone (UTC)
    ("4.9.3/client-logs/cl-c1_rocketmq_client.log", "2026-11-23 20:56:16.643"),
    # 5.3.3 client log: "2026-11-24 04:56:47.509" pinned to GMT+8
    ("5.3.3/client-logs/cl-c1_rocketmq_client.log", "2026-11-23 20:56:47.509"),
])
def test_client_log_time_zones(rel, first_result_utc):
    _, recs = parse(rel)
    first = next(r[1] for r in recs if r[0] == "log" and r[1][1] == "result")
    assert first[0] == utc(first_result_utc)
    assert first[2] == "CL_G" and first[8] == 8  # group, mqAllSize


@pytest.mark.parametrize(("rel", "first", "holder"), [
    # broker lock.log / filter.log: GMT+8 (04:57:04 = 20:57:04 UTC, the kill at 20:57:04.4)
    ("4.9.3/lock-crash/kill_broker-b_lock.log", "2026-11-23 20:57:04", "127.0.1.92@o2"),
    ("5.3.3/lock-crash/kill_broker-b_filter.log", "2026-11-23 20:57:30", "127.0.2.92@o2"),
])
def test_lock_log_time_zones(rel, first, holder):
    _, recs = parse(rel)
    conflicts = [r[1] for r in recs if r[0] == "log" and r[1][1] == "conflict"]
    assert conflicts[0][0] == utc(first)
    assert {c[5] for c in conflicts} == {holder}  # refused: still held by the killed client
    takeovers = [r[1] for r in recs if r[0] == "log" and r[1][1] == "takeover"]
    assert {t[5] for t in takeovers} == {holder} and len(takeovers) == 5


@pytest.mark.parametrize("version", ["4.9.3", "5.3.3"])
def test_never_consumed_group_capture_is_quarantined_with_its_error(version):
    """consumerProgress -g NC_NEVER fails on both versions (no %RETRY% route): the report
    quarantines the capture with the error line, it invents no rows."""
    _, recs = parse(f"{version}/never-committed/mqadmin_consumerProgress_NC_NEVER.txt")
    (rec,) = recs
    assert rec[0] == P.BAD and rec[1][3] == "no table header"
    assert rec[1][5] == ("org.apache.rocketmq.tools.command.SubCommandException: "
                         "ConsumerProgressSubCommand command failed")
    # the capture time is the recorded command line's, not the file's modification time
    assert rec[1][6] == utc("2026-11-23 20:56:19.338" if version == "4.9.3"
                            else "2026-11-23 20:56:26.614")


def test_reader_keeps_one_offset_commit_line_per_client_and_second():
    """cl-c2 (4.9.3) commits its queues' offsets every 5 s: 130 lines in 18 bursts (10 of 5
    queues, 8 of 10 after it took c1's); the reader keeps each burst's first line (the last
    alive time before the kill -9 included)."""
    from mqctl.lagjob.readers import _log_records

    path = REAL / "4.9.3" / "client-logs" / "cl-c2_rocketmq_client.log"
    rows = [{"source": f"file:{path}", "kind": "client-log", "block": 0, "rid": i, "value": ln}
            for i, ln in enumerate(path.read_text().splitlines())]
    out = list(_log_records(rows, UTC, P.GMT8, ""))
    persist = [r[7][0] for r in out if r[7] is not None and r[7][1] == "persist"]
    assert len(persist) == 18 and len(set(persist)) == 18
    assert utc("2026-11-23 20:57:17.966") in persist  # the last commit before the kill
    assert sum(1 for r in out if r[7] is not None and r[7][1] == "result") == 6


def test_corpus_readme_is_not_a_store_file():
    """The README quotes consumerOffset.json (``"offsetTable":{"topic@group":…}``) in prose: a
    store file is a JSON object, so the README is not taken for one."""
    from mqctl.lagjob.inputs import STORE_KINDS

    assert classify("README.md").kind not in STORE_KINDS

"""route, topics, cluster, consumers, group progress and snapshot against the simulated cluster."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest
import yaml
from readonly import assert_read_only

from mqctl.models import MessageQueue
from mqctl.remoting.codes import is_mutating

FORMATS = ["table", "plain", "json", "yaml", "csv"]
MQ = MessageQueue


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


@pytest.mark.parametrize("fmt", FORMATS)
def test_route_all_formats(cli, sim, fmt):
    r = run(cli, sim, "route", "TopicPay", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    a = sim.cluster.broker_addr("broker-a")
    assert a in r.stdout and sim.cluster.broker_addr("broker-a", slave=True) in r.stdout
    if fmt == "json":
        d = r.json
        assert d["subscribeQueues"] == 8 and d["totals"]["brokers"] == 2
        assert {(b["broker"], b["role"]) for b in d["brokers"]} == {
            ("broker-a", "master"), ("broker-a", "slave"), ("broker-b", "master")}
        assert d["brokers"][0]["perm_flags"] == "RW-"
    if fmt == "yaml":
        assert yaml.safe_load(r.stdout)["topic"] == "TopicPay"
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        assert [x["role"] for x in rows] == ["master", "slave", "master"]
    assert_read_only(sim)


def test_route_unknown_topic(cli, sim):
    r = run(cli, sim, "route", "NoSuchTopic")
    assert r.exit_code == 2 and "topic 'NoSuchTopic' has no route" in r.stderr
    assert "hint: check the name with `mqctl topics`" in r.stderr


def test_topics_and_cluster(cli, sim):
    names = [x["topic"] for x in run(cli, sim, "topics", "-o", "json").json["topics"]]
    assert names == ["TopicAudit", "TopicMixed", "TopicNews", "TopicOrder", "TopicPay"]
    kinds = {x["topic"]: x["kind"] for x in run(cli, sim, "topics", "--kind", "all", "-o",
                                                  "json").json["topics"]}
    assert kinds["%RETRY%GID_PAY"] == "retry" and set(names) <= set(kinds)
    # --kind all keeps every name (cluster/broker-name topics too, see
    # tests/views/test_system_topics.py for the real name servers' lists)
    assert all(k in {"normal", "retry", "dlq", "system", "cluster", "broker"}
               for k in kinds.values())
    rows = run(cli, sim, "cluster", "-o", "json").json["brokers"]
    assert {(x["cluster"], x["broker"], x["role"]) for x in rows} == {
        ("DefaultCluster", "broker-a", "master"), ("DefaultCluster", "broker-a", "slave"),
        ("DefaultCluster", "broker-b", "master")}
    assert_read_only(sim)


def checks(cli, sim, group, code=0):
    r = run(cli, sim, "consumers", group, "-o", "json")
    assert r.exit_code == code, r.stderr
    return r.json, {f["check"] for f in r.json["findings"]}


def test_consistency_check_finds_every_planted_problem(cli, sim):
    sim.advance(25)
    healthy, found = checks(cli, sim, "GID_PAY")
    assert found == set() and len(healthy["clients"]) == 3
    assert healthy["clients"][0]["version"] == "V5_3_3"
    assert healthy["clients"][0]["strategy"] == "AVG"
    _, found = checks(cli, sim, "GID_MIXED")
    assert found == {"membership", "subscription", "strategy", "idle"}
    d, found = checks(cli, sim, "GID_DUP")
    assert found == {"duplicate-id"}
    dup = next(c for c in d["clients"] if c["client_id"] == "172.17.0.2@1")
    assert dup["connections"] == 2 and dup["addr"] == "10.0.5.51:50001,10.0.5.52:50002"
    _, found = checks(cli, sim, "GID_POP")
    assert found == {"pop"}
    _, found = checks(cli, sim, "GID_NEWS")
    assert found == {"broadcasting"}
    d, found = checks(cli, sim, "GID_REPLAY")
    assert found == {"offline"} and d["online"] is False
    assert_read_only(sim)


@pytest.mark.parametrize("fmt", FORMATS)
def test_consumers_all_formats(cli, sim, fmt):
    r = run(cli, sim, "consumers", "GID_MIXED", "-o", fmt)
    assert r.exit_code == 0 and "10.0.4.40@4400#demo14" in r.stdout
    if fmt in ("table", "plain"):
        assert "broker broker-b does not list 10.0.4.40@4400#demo14" in r.stdout


def test_crashed_member_reported_without_running_info(cli, sim):
    sim.call(lambda c: c.consumer("10.0.1.13@4103#demo03").hang())
    # a member that does not answer leaves the output partial: exit 8
    d, found = checks(cli, sim, "GID_PAY", code=8)
    assert found == {"no-running-info"}
    c = next(x for x in d["clients"] if x["client_id"] == "10.0.1.13@4103#demo03")
    assert "CONSUME_MSG_TIMEOUT" in c["running_info"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_group_progress_all_formats(cli, sim, fmt):
    sim.advance(20)
    r = run(cli, sim, "group", "progress", "GID_AUDIT", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    assert "10.0.2.21@4201#demo05" in r.stdout
    assert_read_only(sim)


def test_group_progress_values_are_exact(cli, sim):
    sim.advance(30)
    d = run(cli, sim, "group", "progress", "GID_AUDIT", "-o", "json").json
    rows = [q for q in d["queues"] if q["topic"] == "TopicAudit"]
    assert len(rows) == 8
    now = sim.clock.now_ms()
    for q in rows:
        mq = MQ("TopicAudit", q["broker"], q["queue_id"])
        co = sim.call(lambda c, mq=mq: c.committed_offset("GID_AUDIT", mq))
        mx = sim.call(lambda c, mq=mq: c.max_offset(mq))
        assert (q["consumer_offset"], q["broker_offset"], q["lag"]) == (co, mx, mx - co)
        b = sim.cluster.brokers[q["broker"]]
        assert q["time_lag_s"] == (now - b.store_ts("TopicAudit", q["queue_id"], co)) / 1000
        assert q["owner"] == ("10.0.2.21@4201#demo05" if q["broker"] == "broker-a"
                              else "10.0.2.22@4202#demo06")
    topic = next(t for t in d["topics"] if t["topic"] == "TopicAudit")
    assert topic["lag"] == sum(q["lag"] for q in rows)
    assert d["total"]["lag"] == sum(q["lag"] for q in d["queues"])


def test_group_progress_options(cli, sim):
    sim.advance(10)
    lagging = run(cli, sim, "group", "progress", "GID_REPLAY", "--only-lagging", "--sort",
                  "lag", "-o", "json").json["queues"]
    assert lagging and all(q["lag"] > 0 for q in lagging)
    assert [q["lag"] for q in lagging] == sorted((q["lag"] for q in lagging), reverse=True)
    one = run(cli, sim, "group", "progress", "GID_ORDER", "-t", "TopicOrder", "-o",
              "json").json["queues"]
    assert {q["topic"] for q in one} == {"TopicOrder"}
    w = run(cli, sim, "group", "progress", "GID_PAY", "--watch", "0.1", "--count", "2", "-o",
            "plain")
    assert w.exit_code == 0 and w.stdout.count("# progress of GID_PAY") == 2
    # the value is optional, as for locks show: the default interval, the group after it
    w = run(cli, sim, "group", "progress", "--watch", "GID_PAY", "--count", "1", "-o", "plain")
    assert w.exit_code == 0, w.stderr
    assert w.stdout.count("# progress of GID_PAY") == 1



def test_group_progress_csv_has_seconds_and_utc_times(cli, sim):
    sim.advance(10)
    r = run(cli, sim, "group", "progress", "GID_REPLAY", "-o", "csv")
    assert r.exit_code == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout.split("\n\n")[0])))
    assert rows and "time_lag" not in rows[0] and "last_consume" not in rows[0]
    j = {(q["broker"], q["queue_id"]): q
         for q in run(cli, sim, "group", "progress", "GID_REPLAY", "-o", "json").json["queues"]}
    lagging = [x for x in rows if int(x["lag"]) > 0]
    assert lagging
    for x in lagging:
        assert float(x["time_lag_s"]) > 0
        q = j[(x["broker"], int(x["queue_id"]))]
        assert x["last_consume_time"] == (q["last_consume_time"] or "")
        assert x["last_consume_time"] == "" or x["last_consume_time"].endswith("Z")


def test_group_progress_of_a_broadcasting_group_says_why_it_is_empty(cli, sim):
    r = run(cli, sim, "group", "progress", "GID_NEWS")
    assert r.exit_code == 0, r.stderr
    assert "group GID_NEWS is BROADCASTING: each client keeps its own offsets in a local file" \
        in r.stderr + r.stdout


def test_group_progress_of_an_unknown_group_is_an_error(cli, sim):
    from mqctl.sim.broker import GroupConf

    r = run(cli, sim, "group", "progress", "GID_TYPO")
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert "group 'GID_TYPO' is not known to any broker (no member, no committed offset, no " \
        "subscription group)" in r.stderr and "hint: check the name" in r.stderr
    # the same check where other read-only commands find nothing
    for args in (["consumers", "GID_TYPO"], ["offsets", "show", "-g", "GID_TYPO"]):
        r = run(cli, sim, *args)
        assert r.exit_code == 2 and "'GID_TYPO' is not known to any broker" in r.stderr
    assert run(cli, sim, "consumers", "GID_REPLAY").exit_code == 0  # known, offline
    # a group the broker knows (created, never consumed) is shown empty, not an error
    sim.cluster.brokers["broker-b"].groups["GID_NEW"] = GroupConf("GID_NEW")
    r = run(cli, sim, "group", "progress", "GID_NEW", "-o", "json")
    assert r.exit_code == 0, r.stderr
    # nothing was read that makes its lag 0: unknown, not 0
    assert r.json["queues"] == [] and r.json["total"]["lag"] is None
    assert r.json["total"]["max_time_lag_s"] is None
    assert_read_only(sim)


def test_broker_down_is_a_partial_failure(cli, sim):
    sim.call(lambda c: c.faults.broker_down("broker-b"))
    sim.advance(0.1)
    r = run(cli, sim, "--timeout", "1", "group", "progress", "GID_REPLAY", "-o", "json")
    assert r.exit_code == 8, r.stderr
    assert "broker-b" in r.stderr and "Traceback" not in r.stderr
    d = json.loads(r.stdout)
    assert {q["broker"] for q in d["queues"]} == {"broker-a"}
    assert d["failures"] and d["failures"][0]["broker"] == "broker-b"


# ---------------------------------------------------------------------------- snapshot

def read_rows(path):
    from mqctl.snapshot import read_rows as rows_of_file  # .jsonl.gz by default

    return rows_of_file(path)


def test_snapshot_writes_canonical_rows(cli, sim, tmp_path):
    sim.advance(150)  # GID_ORDER's demo09 crashed at 2m
    r = run(cli, sim, "snapshot", "--out", str(tmp_path), "--all-groups", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    files = list(tmp_path.rglob("*.jsonl.gz"))
    assert [str(f) for f in files] == [d["file"]]
    assert not [p for p in tmp_path.rglob(".*") if p.name.endswith(".tmp")]
    rows = read_rows(files[0])
    assert len(rows) == d["rows"] and len({r["capture_ts"] for r in rows}) == 1
    groups = {r["group"] for r in rows}
    assert {"GID_PAY", "GID_AUDIT", "GID_ORDER", "GID_REPLAY", "GID_MIXED"} <= groups
    order = [r for r in rows if r["group"] == "GID_ORDER" and r["topic"] == "TopicOrder"]
    assert len(order) == 8 and all(r["orderly"] for r in order)
    assert all(r["members"] == ["10.0.3.31@4301#demo07", "10.0.3.32@4302#demo08"]
               for r in order)
    audit = [r for r in rows if r["group"] == "GID_AUDIT" and r["topic"] == "TopicAudit"]
    for row in audit:
        mq = MQ(row["topic"], row["broker"], row["queue_id"])
        assert row["lag"] == row["broker_offset"] - row["consumer_offset"] > 0
        assert row["consumer_offset"] == sim.call(lambda c, mq=mq: c.committed_offset(
            "GID_AUDIT", mq))
        assert row["delay_ms"] > 0 and row["max_timestamp"] > 0 and row["min_offset"] == 0
    replay = [r for r in rows if r["group"] == "GID_REPLAY"]
    assert replay and not any(r["online"] for r in replay) and all(
        r["owner"] is None for r in replay)
    assert_read_only(sim)


def test_snapshot_needs_groups_and_refuses_overlap(cli, sim, tmp_path):
    r = run(cli, sim, "snapshot", "--out", str(tmp_path))
    assert r.exit_code == 2 and "say which groups" in r.stderr
    import fcntl

    tmp_path.mkdir(exist_ok=True)
    with open(tmp_path / ".mqctl-snapshot.lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        r = run(cli, sim, "snapshot", "--out", str(tmp_path), "-g", "GID_PAY")
    assert r.exit_code == 6 and "still writing" in r.stderr
    r = run(cli, sim, "snapshot", "--out", str(tmp_path), "-g", "GID_PAY", "-g", "GID_AUDIT")
    assert r.exit_code == 0
    assert len(list(tmp_path.rglob("*.jsonl.gz"))) == 1


def test_snapshot_of_a_misspelt_group_is_bad_input_after_the_rest(cli, sim, tmp_path):
    # an unknown group exits 2 as `group progress GID_TYPO` does (was 8)
    from mqctl.sim.broker import GroupConf

    sim.cluster.brokers["broker-a"].groups["GID_NEW"] = GroupConf("GID_NEW")  # never consumed
    r = run(cli, sim, "snapshot", "--out", str(tmp_path), "-g", "GID_PAY", "-g", "GID_PAYY",
            "-g", "GID_NEW", "-o", "json")
    assert r.exit_code == 2 and "not known to any broker" in r.stderr
    assert "GID_PAYY" in r.stderr and "holds the rest of the capture" in r.stderr
    status = {g["group"]: (g["rows"], g["status"]) for g in r.json["groups"]}
    # never consumed: no queue of it to read, its lag unknown (not a capture of 0 rows)
    assert status["GID_PAYY"] == (0, "not found") and status["GID_NEW"] == (0, "no queue")
    assert status["GID_PAY"][0] > 0 and status["GID_PAY"][1] == "ok"
    assert read_rows(next(tmp_path.rglob("*.jsonl.gz")))  # the rest is written
    assert_read_only(sim)


def test_snapshot_with_a_broker_down_keeps_the_rest(cli, sim, tmp_path):
    sim.call(lambda c: c.faults.broker_down("broker-a"))
    sim.advance(0.1)
    r = run(cli, sim, "--timeout", "1", "snapshot", "--out", str(tmp_path), "-g", "GID_REPLAY",
            "-o", "json")
    assert r.exit_code == 8 and "broker-a" in r.stderr
    rows = read_rows(next(tmp_path.rglob("*.jsonl.gz")))
    assert rows and {r["broker"] for r in rows} == {"broker-b"}
    assert os.path.getsize(next(tmp_path.rglob("*.jsonl.gz"))) > 0


# every new read-only view, checked against the request log
ISSUE18_VIEWS = [
    ("topic", "status", "TopicPay"),
    ("topic", "consumers", "TopicPay", "--include-system"),
    ("group", "config", "GID_PAY"),
    ("message", "show", "-t", "TopicPay", "-b", "broker-a", "-q", "0", "--offset", "5"),
    # mqctl groups, group progress's retry/DLQ section and --no-clients
    ("groups", "--include-system"),
    ("group", "progress", "GID_POP", "--no-clients"),
    # offsets rollbacks --check reads the live offsets (a saved rollback file of
    # GID_REPLAY); the guards change nothing new; completion: tests/cli/test_cluster_completion.py
    ("offsets", "rollbacks", "--check", "--dir",
     os.path.join(os.path.dirname(__file__), "..", "reset", "rollbacks")),
]


@pytest.mark.parametrize("args", ISSUE18_VIEWS, ids=lambda a: " ".join(a[:2]))
def test_issue18_views_are_read_only(cli, sim, args):
    sim.advance(5)
    before = sim.call(lambda c: {k: dict(v) for k, v in c.brokers["broker-a"].offsets.items()})
    sim.clear_request_log()
    r = run(cli, sim, *args, "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert_read_only(sim)
    after = sim.call(lambda c: {k: dict(v) for k, v in c.brokers["broker-a"].offsets.items()})
    # the offline group's offsets (nobody else commits them) did not move, and the tools
    # group has none
    assert {k: v for k, v in after.items() if k[1] == "GID_REPLAY"} == {
        k: v for k, v in before.items() if k[1] == "GID_REPLAY"}
    assert not any(g == "TOOLS_CONSUMER" for (_t, g) in after)


def test_read_only_check_catches_a_committing_pull():
    from mqctl.remoting.codes import RequestCode

    assert not is_mutating(RequestCode.PULL_MESSAGE, {"sysFlag": "4"})
    assert is_mutating(RequestCode.PULL_MESSAGE, {"sysFlag": "5"})
    assert is_mutating(RequestCode.PULL_MESSAGE, {"sysFlag": "x"})
    assert is_mutating(RequestCode.HEART_BEAT, None)
    assert not is_mutating(RequestCode.GET_TOPIC_STATS_INFO, {"topic": "T"})

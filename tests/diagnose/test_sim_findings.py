"""`mqctl diagnose` on the bundled `diagnose` scenario (one group per way to break): each
finding on the group that produces it, checked against the simulated cluster's own state, and
none of them on the healthy group (issue 31)."""

from __future__ import annotations

import pytest

from diagnose.helpers import check, codes, diagnose, finding, queues, started
from mqctl.diagnose import CODES
from mqctl.models import DLQ_PREFIX, RETRY_PREFIX, MessageQueue

AT = 150  # simulated seconds after the start: every case has shown itself by then


@pytest.fixture(scope="module")
def dsim():
    with started("diagnose", AT) as s:
        yield s


@pytest.fixture
def fresh(sim_factory):
    """A diagnose cluster of its own (for --sample, which moves the clock)."""
    s = sim_factory("diagnose")
    s.advance(AT)
    return s


def sim_lag(sim, group, mqs):
    return sim.call(lambda c: sum(c.max_offset(mq) - (c.committed_offset(group, mq) or 0)
                                  for mq in mqs))


def pqs(sim, group):
    """{client: {mq: ProcessQueueInfo as the client reports it}} from the simulated clients."""
    def go(c):
        return {cs.client_id: {mq: cs._pq_info(mq, pq) for mq, pq in cs.pqs.items()}
                for cs in c.consumers(group)}
    return sim.call(go)


# the exact findings of each group after AT seconds, single read (nothing else: no false one)
EXPECTED = {
    "GID_OK": [],
    "GID_SLOW": ["flow-control", "flow-control", "lag-growing", "threads-saturated",
                 "threads-saturated"],
    "GID_FAIL": ["consume-failing", "retry-backlog", "dlq"],
    "GID_DISABLED": ["consume-disabled", "lag-growing"],
    "GID_NOREAD": ["topic-not-readable", "lag-growing"],
    "GID_COMMIT": [],  # a held commit shows over two reads only (test below)
    "GID_HOT": ["flow-control", "lag-growing", "threads-saturated", "hot-queue"],
    "GID_SKEW": ["flow-control", "lag-growing", "threads-saturated", "broker-skew"],
    "GID_BLOCKED": ["consume-blocked", "lag-growing"],
    "GID_BUSY": ["broker-pull-busy", "broker-page-cache-busy", "slave-behind"],
    "GID_POPSLOW": ["consume-failing", "lag-growing", "pop-flow-control", "pop-retry"],
    # hung at 1m: broker-a (heartbeats only) dropped it 120 s after its last heartbeat, broker-b
    # still lists it; its queues on broker-b wait
    "GID_HANG": ["membership-split", "client-silent", "broker-skew"],
    "GID_FLAP": [],  # crashed at 2m: the survivor took its queues at once
    # orderly, hung at 1m, never seen answering by `locks show` (no state file): the same as
    # GID_HANG (its queues read `unknown`: mqctl has no record of what it held)
    "GID_OHANG": ["membership-split", "client-silent", "broker-skew"],
}
PARTIAL = {"GID_HANG", "GID_OHANG"}


@pytest.mark.parametrize("group", sorted(EXPECTED))
def test_each_group_gets_exactly_its_findings(dsim, group):
    code, d, err = diagnose(dsim, group)
    assert codes(d) == EXPECTED[group], d["findings"]
    if group in PARTIAL:
        assert code == 8 and d["complete"] is False, err
    else:
        assert code == (9 if EXPECTED[group] else 0), err
        assert d["complete"] is True and d["unread"] == {}
    assert d["verdict"] == ("problems" if EXPECTED[group] else "ok")


def test_slow_consumer_at_the_flow_control_threshold(dsim):
    _, d, _ = diagnose(dsim, "GID_SLOW")
    cached = pqs(dsim, "GID_SLOW")
    fc = [f for f in d["findings"] if f["code"] == "flow-control"]
    assert {f["clients"][0] for f in fc} == set(cached)
    for f in fc:
        cid = f["clients"][0]
        over = {(mq.topic, mq.broker_name, mq.queue_id) for mq, i in cached[cid].items()
                if i["cachedMsgCount"] > 1000}
        assert queues(f) == over and len(over) == 4
        assert f["values"]["pullThresholdForQueue"] == 1000
        assert f["values"]["lag"] == sim_lag(dsim, "GID_SLOW", [MessageQueue(*q) for q in over])
    sat = [f for f in d["findings"] if f["code"] == "threads-saturated"]
    for f in sat:  # 4 threads, 250 ms a message: 16 messages a second keep all 4 busy
        rt = dsim.call(lambda c, cid=f["clients"][0]: c.consumer(cid).status("TopicSlow"))
        assert f["values"]["busy_threads"] == pytest.approx(rt["consumeOKTPS"] * 0.25, abs=0.01)
        assert f["values"]["pool"] == 4 and f["values"]["busy_threads"] >= 0.9 * 4
    lag = finding(d, "lag-growing")["values"]
    assert lag["produce_tps"] == pytest.approx(160) and lag["consume_tps"] == pytest.approx(32)


def test_consumption_disabled_on_one_broker(dsim):
    _, d, _ = diagnose(dsim, "GID_DISABLED")
    f = finding(d, "consume-disabled")
    assert f["brokers"] == ["broker-b"] and f["severity"] == "error"
    mqs = [MessageQueue("TopicOff", "broker-b", q) for q in range(4)]
    assert queues(f) == {(m.topic, m.broker_name, m.queue_id) for m in mqs}
    assert f["values"]["lag"] == sim_lag(dsim, "GID_DISABLED", mqs) > 0
    assert "updateSubGroup -b" in f["next"] and "-s true" in f["next"]
    assert "broker-a" not in {b for f in d["findings"] for b in f["brokers"]}


def test_topic_not_readable_on_one_broker(dsim):
    _, d, _ = diagnose(dsim, "GID_NOREAD")
    f = finding(d, "topic-not-readable")
    assert (f["brokers"], f["topics"], f["values"]["perm"]) == (["broker-b"], ["TopicNoRead"], 2)
    mqs = [MessageQueue("TopicNoRead", "broker-b", q) for q in range(4)]
    assert f["values"]["lag"] == sim_lag(dsim, "GID_NOREAD", mqs) > 0
    assert "updateTopicPerm" in f["next"]


def test_failing_consumption_feeds_retry_and_dlq(dsim):
    _, d, _ = diagnose(dsim, "GID_FAIL")
    f = finding(d, "consume-failing")
    failed = dsim.call(lambda c: sum(cs.status(t)["consumeFailedTPS"]
                                     for cs in c.consumers("GID_FAIL") for t in cs.topics()))
    assert f["values"]["failed_tps"] == pytest.approx(failed, abs=0.01) and failed > 0
    dlq = dsim.call(lambda c: sum(b.max_offset(DLQ_PREFIX + "GID_FAIL", 0)
                                  for b in c.brokers.values()))
    assert finding(d, "dlq")["values"]["messages"] == dlq > 0
    retry = [MessageQueue(RETRY_PREFIX + "GID_FAIL", b, 0) for b in ("broker-a", "broker-b")]
    assert finding(d, "retry-backlog")["values"]["backlog"] == sim_lag(dsim, "GID_FAIL", retry)


def test_hot_queue(dsim):
    _, d, _ = diagnose(dsim, "GID_HOT")
    f = finding(d, "hot-queue")
    assert queues(f) == {("TopicHot", "broker-a", 0)}
    assert f["values"]["queues_behind"] == 1 and f["values"]["queues"] == 8


def test_lag_on_one_broker(dsim):
    _, d, _ = diagnose(dsim, "GID_SKEW")
    f = finding(d, "broker-skew")
    assert f["brokers"] == ["broker-b"]
    assert queues(f) == {("TopicSkew", "broker-b", q) for q in range(4)}


def test_blocked_listener(dsim):
    _, d, _ = diagnose(dsim, "GID_BLOCKED")
    f = finding(d, "consume-blocked")
    held = pqs(dsim, "GID_BLOCKED")["10.1.8.1@1801#block1"]
    assert queues(f) == {(m.topic, m.broker_name, m.queue_id) for m, i in held.items()
                         if i["cachedMsgCount"] > 0 and not m.topic.startswith(RETRY_PREFIX)}
    assert f["values"]["idle_ms"] > 60_000


def test_busy_broker_and_slave_behind(dsim):
    _, d, _ = diagnose(dsim, "GID_BUSY")
    spec = dsim.call(lambda c: next(b for b in c.scenario.brokers if b.name == "broker-c"))
    pull = finding(d, "broker-pull-busy")["values"]
    assert pull["pullThreadPoolQueueHeadWaitTimeMills"] == float(
        spec.runtime["pullThreadPoolQueueHeadWaitTimeMills"])
    assert pull["waitTimeMillsInPullQueue"] == 5000  # not in the sim's config: the default
    page = finding(d, "broker-page-cache-busy")["values"]
    assert page["pageCacheLockTimeMills"] == 1500 and page["osPageCacheBusyTimeOutMills"] == 1000
    slave = finding(d, "slave-behind")["values"]
    assert slave["behind_bytes"] == float(spec.runtime["commitLogMaxOffset"]) - float(
        spec.slave_runtime["commitLogMaxOffset"])
    assert slave["limit"] == 256 * 1024 * 1024


def test_slow_pop_consumer(dsim):
    _, d, _ = diagnose(dsim, "GID_POPSLOW")
    f = finding(d, "pop-flow-control")
    # one PopProcessQueue per broker (queue -1): what its queues popped and did not ack
    wait: dict = {}
    for (t, b, _), n in dsim.call(lambda c: {(mq.topic, mq.broker_name, mq.queue_id):
                                             pq.last_batch for cs in c.consumers("GID_POPSLOW")
                                             for mq, pq in cs.pqs.items()}).items():
        wait[(t, b, -1)] = wait.get((t, b, -1), 0) + n
    assert queues(f) == {q for q, w in wait.items() if w > 96} and queues(f)
    assert max(wait.values()) <= 96 + 32  # popThresholdForQueue + a pop batch
    r = finding(d, "pop-retry")
    revived = dsim.call(lambda c: sum(b.max_offset("%RETRY%GID_POPSLOW_TopicPop", 0)
                                      for b in c.brokers.values()
                                      if "%RETRY%GID_POPSLOW_TopicPop" in b.topics))
    assert r["values"]["messages"] == revived > 0


def test_json_finding_has_code_severity_evidence_and_values(dsim):
    _, d, _ = diagnose(dsim, "GID_DISABLED")
    for f in d["findings"]:
        assert {"code", "severity", "title", "why", "next", "evidence", "values",
                "rocketmq"} <= set(f)
        assert f["evidence"] and all(e["source"] and e["at_ts"] for e in f["evidence"])
        assert f["rocketmq"]
    assert [f["rank"] for f in d["findings"]] == list(range(1, len(d["findings"]) + 1))


# ------------------------------------------------------------------ two reads (--sample)


def test_stuck_offset_commit_over_the_sample(fresh):
    code, d, _ = diagnose(fresh, "GID_COMMIT", "--sample", "10")
    assert code == 9 and d["sample_s"] == 10
    f = finding(d, "offset-not-committed")
    held = fresh.call(lambda c: {(mq.topic, mq.broker_name, mq.queue_id): pq.position
                                 for cs in c.consumers("GID_COMMIT")
                                 for mq, pq in cs.pqs.items() if pq.head is not None})
    assert queues(f) == set(held)
    assert f["values"]["offsets"] == {f"{t} {b}:{q}": off for (t, b, q), off in held.items()}
    assert "mqctl message show -t TopicCommit" in f["next"]


def test_retry_and_dlq_growth_over_the_sample(fresh):
    def stored(c):
        return {t: sum(b.max_offset(t, 0) for b in c.brokers.values() if t in b.topics)
                for t in (RETRY_PREFIX + "GID_FAIL", DLQ_PREFIX + "GID_FAIL")}

    before = fresh.call(stored)
    _, d, _ = diagnose(fresh, "GID_FAIL", "--sample", "10")
    after = fresh.call(stored)
    r = finding(d, "retry-backlog")
    assert r["severity"] == "error"
    assert r["values"]["sent_back"] == after[RETRY_PREFIX + "GID_FAIL"] - before[
        RETRY_PREFIX + "GID_FAIL"] > 0
    q = finding(d, "dlq")
    assert q["severity"] == "error"
    assert q["values"]["new"] == after[DLQ_PREFIX + "GID_FAIL"] - before[DLQ_PREFIX + "GID_FAIL"]


def test_hot_queue_names_what_each_queue_received(fresh):
    _, d, _ = diagnose(fresh, "GID_HOT", "--sample", "10")
    f = finding(d, "hot-queue")
    assert "60.0/s produced during the sample" in f["evidence"][0]["text"]


def test_hung_client(dsim):
    _, d, _ = diagnose(dsim, "GID_HANG")
    assert finding(d, "client-silent")["clients"] == ["10.1.11.2@2102#hang2"]
    members = dsim.call(lambda c: {b.name: b.consumer_ids("GID_HANG")
                                   for b in c.brokers.values() if b.name != "broker-c"})
    split = finding(d, "membership-split")
    missing = [b for b, ids in members.items() if "10.1.11.2@2102#hang2" not in ids]
    assert missing == ["broker-a"] and f"broker {missing[0]} does not list" in split["title"]
    skew = finding(d, "broker-skew")
    assert "owner unknown (a client did not answer)" in skew["evidence"][0]["text"]


def test_crash_and_restart_during_the_sample(sim_factory):
    s = sim_factory("diagnose")
    s.advance(115)  # flap2 crashes at 120 s
    _, d, _ = diagnose(s, "GID_FLAP", "--sample", "10")
    f = finding(d, "rebalanced")
    assert f["values"]["left"] == ["10.1.12.2@2202#flap2"] and f["values"]["joined"] == []
    took = s.call(lambda c: {(mq.topic, mq.broker_name, mq.queue_id)
                             for mq in c.consumer("10.1.12.1@2201#flap1").pqs})
    assert queues(f) <= took and len(queues(f)) == f["values"]["moved"] > 0


def test_rebalance_during_the_sample(sim_factory):
    sc = {"name": "rb", "clock": {"mode": "manual"}, "brokers": [{"name": "broker-a"}],
          "topics": [{"name": "T", "queues": 4, "rate": 1, "history": "10m"}],
          "groups": [{"name": "G", "topics": ["T"], "consumers": [
              {"id": "10.2.0.1@1"}, {"id": "10.2.0.2@2", "join_at": "65s"}]}]}
    s = sim_factory(sc)
    s.advance(60)
    _, d, _ = diagnose(s, "G", "--sample", "10")
    f = finding(d, "rebalanced")
    assert f["values"]["joined"] == ["10.2.0.2@2"] and f["values"]["left"] == []
    owned = s.call(lambda c: {(mq.topic, mq.broker_name, mq.queue_id)
                              for mq in c.consumer("10.2.0.2@2").pqs if mq.topic == "T"})
    assert queues(f) == owned and len(owned) == 2


# ------------------------------------------------------------------ the healthy group


@pytest.fixture(scope="module")
def healthy(dsim):
    return diagnose(dsim, "GID_OK")


@pytest.fixture(scope="module")
def healthy_sampled():
    with started("diagnose", AT) as s:
        yield diagnose(s, "GID_OK", "--sample", "10")


@pytest.mark.parametrize("code", CODES)
def test_no_finding_on_the_healthy_group(healthy, healthy_sampled, code):
    for exit_code, d, _ in (healthy, healthy_sampled):
        assert code not in codes(d)
        assert exit_code == 0 and d["verdict"] == "ok"


def test_healthy_group_says_why_nothing_is_wrong(dsim, healthy, healthy_sampled):
    _, d, _ = healthy
    assert {c["status"] for c in d["checks"]} <= {"ok", "n/a", "needs --sample"}
    t = d["summary"]["topics"]["TopicOk"]
    assert t["produce_tps"] == pytest.approx(40) and t["consume_tps"] == pytest.approx(40)
    assert d["summary"]["max_time_lag_ms"] <= 10_000
    _, d2, _ = healthy_sampled
    assert {c["status"] for c in d2["checks"]} <= {"ok", "n/a"}
    assert check(d2, "offset-not-committed")["status"] == "ok"
    assert "lag_change" in d2["summary"]["topics"]["TopicOk"]


def test_saturated_but_keeping_up_is_a_note_not_a_problem(sim_factory):
    """2 threads x 100 ms: at most 20 messages a second; 18 produced: 90% busy, caught up."""
    sc = {"name": "busy", "clock": {"mode": "manual"}, "brokers": [{"name": "broker-a"}],
          "topics": [{"name": "T", "queues": 2, "rate": 9, "history": "10m"}],
          "groups": [{"name": "G", "topics": ["T"], "consumers": [
              {"id": "10.4.0.1@1", "consume_rt": "100ms", "threads": 2}]}]}
    s = sim_factory(sc)
    s.advance(90)
    code, d, _ = diagnose(s, "G")
    f = finding(d, "threads-saturated")
    assert f["severity"] == "info" and f["values"]["busy_threads"] == pytest.approx(1.8)
    assert code == 0 and d["verdict"] == "ok"


def test_old_dead_letters_are_a_note(sim_factory):
    """Dead letters stored more than an hour ago (consumeFailedMsgs' window): info, exit 0;
    one stored within the hour: a warning."""
    sc = {"name": "dlq", "clock": {"mode": "manual"}, "brokers": [{"name": "broker-a"}],
          "topics": [{"name": "T", "queues": 1, "rate": 1, "history": "10m"},
                     {"name": "%DLQ%G", "queues": 1, "rate": 0,
                      "per_queue": [{"queue": 0, "store_times": ["-3h", "-2h"]}]},
                     {"name": "%DLQ%H", "queues": 1, "rate": 0,
                      "per_queue": [{"queue": 0, "store_times": ["-3h", "-20m"]}]}],
          "groups": [{"name": "G", "topics": ["T"], "consumers": [{"id": "10.5.0.1@1"}]},
                     {"name": "H", "topics": ["T"], "consumers": [{"id": "10.5.0.2@1"}]}]}
    s = sim_factory(sc)
    s.advance(30)
    code, d, _ = diagnose(s, "G")
    f = finding(d, "dlq")
    assert (f["severity"], f["values"]["messages"], code) == ("info", 2, 0)
    code, d, _ = diagnose(s, "H")
    assert (finding(d, "dlq")["severity"], code) == ("warning", 9)

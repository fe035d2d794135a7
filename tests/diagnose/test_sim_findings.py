"""`mqctl diagnose` on the bundled `diagnose` scenario (one group per way to break): each
finding on the group that produces it, checked against the simulated cluster's own state, and
none of them on the healthy group."""

from __future__ import annotations

import shlex

import pytest
from conftest import run_cli

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


# the exact findings of each group after AT seconds, single read (nothing else: no false
# one), in their ranked order: a cause before the findings it explains
EXPECTED = {
    "GID_OK": [],
    # 4 threads x 250 ms: the saturated threads are why each client's cache is full
    "GID_SLOW": ["threads-saturated", "flow-control", "threads-saturated", "flow-control",
                 "lag-growing"],
    "GID_FAIL": ["consume-failing", "retry-backlog", "dlq"],
    "GID_DISABLED": ["consume-disabled", "lag-growing"],
    "GID_NOREAD": ["topic-not-readable", "lag-growing"],
    # a held commit shows over two reads only: one read says a second one is needed
    "GID_COMMIT": ["needs-second-read"],
    # the load on one queue / one broker saturates its owner and puts it at flow control
    "GID_HOT": ["hot-queue", "threads-saturated", "flow-control", "lag-growing"],
    "GID_SKEW": ["broker-skew", "threads-saturated", "flow-control", "lag-growing"],
    "GID_BLOCKED": ["consume-blocked", "lag-growing"],
    "GID_BUSY": ["broker-pull-busy", "broker-page-cache-busy", "slave-behind"],
    # two causes: failing consumption (its revived messages) and popping faster than it
    # processes (the lag)
    "GID_POPSLOW": ["consume-failing", "pop-flow-control", "lag-growing", "pop-retry"],
    # hung at 1m: broker-a (heartbeats only) dropped it 120 s after its last heartbeat, broker-b
    # still lists it; its queues on broker-b wait: the member that does not answer is why
    "GID_HANG": ["client-silent", "membership-split", "broker-skew"],
    "GID_FLAP": [],  # crashed at 2m: the survivor took its queues at once
    # orderly, hung at 1m, never seen answering by `locks show` (no state file): the same as
    # GID_HANG (its queues read `unknown`: mqctl has no record of what it held)
    "GID_OHANG": ["client-silent", "membership-split", "broker-skew"],
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


# what each group's trouble is (docs/diagnose.md "The simulated cluster breaks each way"):
# the first finding, the one the headline names
CAUSE = {
    "GID_SLOW": "threads-saturated", "GID_FAIL": "consume-failing",
    "GID_DISABLED": "consume-disabled", "GID_NOREAD": "topic-not-readable",
    "GID_COMMIT": "needs-second-read", "GID_HOT": "hot-queue", "GID_SKEW": "broker-skew",
    "GID_BLOCKED": "consume-blocked", "GID_BUSY": "broker-pull-busy",
    "GID_POPSLOW": "consume-failing", "GID_HANG": "client-silent",
    "GID_OHANG": "client-silent",
}


@pytest.mark.parametrize("group", sorted(EXPECTED))
def test_the_cause_comes_first_and_the_headline_names_it(dsim, group):
    _, d, _ = diagnose(dsim, group)
    if group not in CAUSE:
        assert d["findings"] == [] and d["headline"] == "nothing wrong found"
        return
    first = d["findings"][0]
    assert first["code"] == CAUSE[group] and first["explained_by"] == []
    assert f"{first['code']}: {first['title']}" in d["headline"] or (
        first["code"] == "needs-second-read"
        and f"needs a second read: {first['title']}" in d["headline"])
    # the headline is the verdict line of the human output, which pagers show
    r = run_cli(["-n", dsim.namesrv_addr, "diagnose", group])
    last = [ln for ln in r.stdout.splitlines() if ln.startswith(f"{group} (")]
    assert len(last) == 1 and d["headline"] in last[0]


# the symptoms each cause explains: (finding, the finding it is explained by, all of it)
CONSEQUENCES = {
    "GID_HOT": [("threads-saturated", "hot-queue", True), ("flow-control", "hot-queue", True),
                ("lag-growing", "hot-queue", True)],
    "GID_SKEW": [("threads-saturated", "broker-skew", True),
                 ("flow-control", "broker-skew", True), ("lag-growing", "broker-skew", True)],
    "GID_HANG": [("membership-split", "client-silent", True),
                 ("broker-skew", "client-silent", True)],
    "GID_OHANG": [("membership-split", "client-silent", True),
                  ("broker-skew", "client-silent", True)],
    "GID_SLOW": [("flow-control", "threads-saturated", True)],
    "GID_FAIL": [("retry-backlog", "consume-failing", True), ("dlq", "consume-failing", True)],
    "GID_DISABLED": [("lag-growing", "consume-disabled", True)],
    "GID_BLOCKED": [("lag-growing", "consume-blocked", True)],
}


@pytest.mark.parametrize("group", sorted(CONSEQUENCES))
def test_a_symptom_is_shown_as_the_consequence_of_its_cause(dsim, group):
    _, d, _ = diagnose(dsim, group)
    fs = d["findings"]
    for code, by, full in CONSEQUENCES[group]:
        f = finding(d, code)
        cause = finding(d, by)
        assert cause["rank"] in f["explained_by"] and cause["rank"] < f["rank"]
        assert f["rank"] in cause["explains"]
        assert f["explanation"] == ("full" if full else "partial")
        # a cause is as severe as what it explains
        sev = ("error", "warning", "info")
        assert sev.index(cause["severity"]) <= sev.index(f["severity"])
    r = run_cli(["-n", dsim.namesrv_addr, "diagnose", group, "--table", "findings"])
    for code, by, _ in CONSEQUENCES[group]:
        f, cause = finding(d, code), finding(d, by)
        row = next(ln for ln in r.stdout.splitlines() if f["title"][:40] in ln
                   and f"  {code}  " in ln)
        assert f"explained by #{cause['rank']} {by}" in row, row
    assert [f["rank"] for f in fs] == list(range(1, len(fs) + 1))


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
    assert "mqctl group resume GID_DISABLED --brokers broker-b" in f["next"]
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
    # failing now (the evidence): the pause lever is suggested, with its undo
    assert "`mqctl group pause GID_FAIL`" in f["next"] and "group resume GID_FAIL" in f["next"]
    dlq = dsim.call(lambda c: sum(b.max_offset(DLQ_PREFIX + "GID_FAIL", 0)
                                  for b in c.brokers.values()))
    assert finding(d, "dlq")["values"]["messages"] == dlq > 0
    retry = [MessageQueue(RETRY_PREFIX + "GID_FAIL", b, 0) for b in ("broker-a", "broker-b")]
    assert finding(d, "retry-backlog")["values"]["backlog"] == sim_lag(dsim, "GID_FAIL", retry)
    # both point at the command that lists the dead letters by original topic
    assert "`mqctl group dlq GID_FAIL`" in finding(d, "dlq")["next"]
    assert "`mqctl group dlq GID_FAIL`" in finding(d, "retry-backlog")["next"]
    # and at the resend, once the cause is fixed
    assert "`mqctl group dlq resend GID_FAIL --all`" in finding(d, "dlq")["next"]


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


def test_stuck_offset_commit_needs_a_second_read(dsim):
    """One read: queues behind while their consumer consumes past the committed offset, a
    stuck commit or not: the check says so, names the command, and the result is a problem
    (exit 9), not a generic lag finding and not "nothing wrong"."""
    code, d, _ = diagnose(dsim, "GID_COMMIT")
    assert code == 9 and d["verdict"] == "problems"
    f = finding(d, "needs-second-read")
    cmd = "mqctl diagnose GID_COMMIT --sample 10"
    assert f["severity"] == "warning" and f["title"].startswith("stuck commit? ")
    assert f["values"]["command"] == cmd and f["values"]["needs"] == "offset-not-committed"
    assert d["headline"].startswith("1 problem(s) found; needs a second read: stuck commit? ")
    assert f"`{cmd}`" in d["headline"]
    c = check(d, "offset-not-committed")
    assert c["status"] == "needs --sample" and cmd in c["detail"]
    # the queues are those whose committed offset the hung message holds, read from the sim
    held = dsim.call(lambda c: {(mq.topic, mq.broker_name, mq.queue_id): pq.position
                                for cs in c.consumers("GID_COMMIT")
                                for mq, pq in cs.pqs.items() if pq.head is not None})
    assert queues(f) == set(held) and held
    r = run_cli(["-n", dsim.namesrv_addr, "diagnose", "GID_COMMIT"])
    assert f"needs a second read: offset-not-committed is suspected on {len(held)} queue(s): " \
           f"`{cmd}`" in r.stdout
    # the command keeps the topic asked for
    _, d, _ = diagnose(dsim, "GID_COMMIT", "-t", "TopicCommit")
    assert finding(d, "needs-second-read")["values"]["command"] == (
        "mqctl diagnose GID_COMMIT -t TopicCommit --sample 10")


def test_the_offered_second_read_finds_the_stuck_commit(fresh):
    _, d, _ = diagnose(fresh, "GID_COMMIT")
    cmd = shlex.split(finding(d, "needs-second-read")["values"]["command"])
    assert cmd[:3] == ["mqctl", "diagnose", "GID_COMMIT"]
    code, d2, _ = diagnose(fresh, *cmd[2:])
    assert code == 9 and codes(d2)[0] == "offset-not-committed"
    assert "needs-second-read" not in codes(d2)
    assert queues(finding(d2, "offset-not-committed")) == queues(
        finding(d, "needs-second-read"))
    assert finding(d2, "lag-growing")["explained_by"] == [1]


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


def test_a_slower_owner_explains_the_skew_not_the_other_way(sim_factory):
    """Even production, one client slower than the other: the lag concentrates on its
    broker's queues because it is slow, so its saturation comes first and the broker skew is
    its consequence (GID_SKEW is the other direction: the load concentrates, the owner is as
    fast as the others)."""
    sc = {"name": "slowowner", "clock": {"mode": "manual"},
          "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
          "topics": [{"name": "T", "queues": 2, "rate": 3, "history": "10m",
                      "brokers": ["broker-a", "broker-b"]}],
          "groups": [{"name": "G", "topics": ["T"], "consumers": [
              {"id": "10.6.0.1@1", "consume_rt": "500ms", "threads": 2},
              {"id": "10.6.0.2@2"}]}]}
    s = sim_factory(sc)
    s.advance(120)
    _, d, _ = diagnose(s, "G")
    first = d["findings"][0]
    assert (first["code"], first["clients"]) == ("threads-saturated", ["10.6.0.1@1"])
    skew = finding(d, "broker-skew")
    assert skew["brokers"] == ["broker-a"] and skew["explained_by"] == [1]
    assert "slower than they are" in first["evidence"][-1]["text"]
    assert "threads-saturated" in d["headline"].split(";")[1]


def test_a_hung_orderly_member_explains_its_stuck_locks(sim_factory, tmp_path):
    """An orderly member that stops answering while it still holds its queues: the member
    that does not answer comes first, and the lock finding about its queues is its
    consequence (a release frees nobody while it is a member)."""
    sc = {"name": "ordhang", "clock": {"mode": "manual"}, "running_info_timeout": "1s",
          "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
          "topics": [{"name": "T", "queues": 2, "rate": 2, "history": "10m",
                      "brokers": ["broker-a", "broker-b"]}],
          "groups": [{"name": "G", "topics": ["T"], "orderly": True, "consumers": [
              {"id": "10.7.0.1@1"}, {"id": "10.7.0.2@2", "hang_at": "60s"}]}]}
    s = sim_factory(sc)
    s.advance(50)
    state = str(tmp_path / "locks")
    assert run_cli(["-n", s.namesrv_addr, "locks", "show", "G", "--state-dir", state]
                   ).exit_code == 0
    s.advance(30)
    code, d, _ = diagnose(s, "G", "--state-dir", state)
    assert code == 8  # its running info was not read
    first = d["findings"][0]
    assert (first["code"], first["clients"]) == ("client-silent", ["10.7.0.2@2"])
    locks = [f for f in d["findings"] if f["code"].startswith("lock")]
    held = s.call(lambda c: {(mq.topic, mq.broker_name, mq.queue_id)
                             for mq in c.consumer("10.7.0.2@2").pqs if mq.topic == "T"})
    assert locks and all(f["explained_by"] == [1] and f["explanation"] == "full"
                         for f in locks)
    assert set().union(*(queues(f) for f in locks)) == held
    assert d["headline"].startswith(f"{len(d['findings'])} problem(s) found; cause: "
                                    "client-silent: ")

"""`mqctl diagnose` on the demo cluster (`mqctl sim up`'s default scenario, docs/scenario.md):
it names the real problem of each demo group and nothing false for the healthy ones; the
membership, lock and offline findings."""

from __future__ import annotations

import pytest
from conftest import run_cli

from diagnose.helpers import codes, diagnose, finding, queues, started

AT = 150  # as tests/test_docs_examples.py: the demo's crash (2 min) has happened
D9 = "10.0.3.33@4303#demo09"

# what each demo group's problem is (docs/scenario.md "The bundled demo"), exactly, in
# their ranked order (a cause before the findings it explains)
DEMO = {
    "GID_PAY": [],
    # each client's saturated threads are why its cache is at the flow-control threshold
    "GID_AUDIT": ["threads-saturated", "flow-control", "threads-saturated", "flow-control",
                  "lag-growing"],
    "GID_ORDER": ["lock-failed", "lag-growing"],
    "GID_MIXED": ["mixed-strategies", "membership-split", "subscription-mismatch",
                  "unowned-queues", "idle-consumers"],
    "GID_DUP": ["duplicate-client-id", "unowned-queues", "lag-growing"],
    "GID_NEWS": [],
    "GID_POP": [],
    "GID_REPLAY": ["offline"],
}


@pytest.fixture(scope="module")
def demo():
    with started("demo", AT) as s:
        yield s


@pytest.mark.parametrize("group", sorted(DEMO))
def test_demo_groups(demo, group):
    code, d, _ = diagnose(demo, group)
    assert codes(d) == DEMO[group], [f["title"] for f in d["findings"]]
    assert code == (9 if DEMO[group] else 0)
    assert d["complete"] is True


def test_healthy_demo_groups_say_why(demo):
    for g in ("GID_PAY", "GID_NEWS", "GID_POP"):
        code, d, _ = diagnose(demo, g)
        assert code == 0 and d["verdict"] == "ok" and d["findings"] == []
    _, d, _ = diagnose(demo, "GID_PAY")
    t = d["summary"]["topics"]["TopicPay"]
    assert t["consume_tps"] >= t["produce_tps"] > 0


def test_lagging_group(demo):
    _, d, _ = diagnose(demo, "GID_AUDIT")
    f = finding(d, "lag-growing")
    rates = demo.call(lambda c: (sum(cs.status("TopicAudit")["consumeOKTPS"]
                                     for cs in c.consumers("GID_AUDIT")),
                                 c.scenario.topic("TopicAudit").rate * 8))
    assert f["values"]["consume_tps"] == pytest.approx(rates[0])
    assert f["values"]["produce_tps"] == pytest.approx(rates[1])
    assert rates[0] < rates[1]


def test_crash_window_lock(demo):
    """demo09 crashed at 2 min: its broker leases run 60 s from its last renewal, so the
    survivors cannot lock its queues (the broker's lock table says who holds them)."""
    _, d, _ = diagnose(demo, "GID_ORDER")
    f = finding(d, "lock-failed")
    held = demo.call(lambda c: {(mq.topic, mq.broker_name, mq.queue_id)
                                for b in c.brokers.values()
                                for mq, e in b.locks.get("GID_ORDER", {}).items()
                                if e.client_id == D9
                                and c.clock.now_ms() - e.last_update <= 60_000})
    assert queues(f) == held and held
    assert f["severity"] == "error" and f["values"]["lag"] > 0


def test_stale_lock_with_what_locks_show_saw(sim_factory):
    """`locks show` saw demo09 holding its queues before the crash: diagnose reads that state
    file (never writes it) and says stale, with when the lease ends."""
    s = sim_factory("demo")
    s.advance(115)
    r = run_cli(["-n", s.namesrv_addr, "locks", "show", "GID_ORDER", "-o", "json"])
    assert r.exit_code in (0, 9), r.stderr
    s.advance(15)
    _, d, _ = diagnose(s, "GID_ORDER")
    f = finding(d, "lock-stale")
    assert f["severity"] == "error" and D9 in f["clients"]
    last = s.call(lambda c: max(e.last_update for b in c.brokers.values()
                                for e in b.locks.get("GID_ORDER", {}).values()
                                if e.client_id == D9))
    assert f["values"]["frees_at_ts"] == last + 60_000
    assert "mqctl locks release" in f["next"]


def test_offline_group(demo):
    _, d, _ = diagnose(demo, "GID_REPLAY")
    f = finding(d, "offline")
    lag = demo.call(lambda c: sum(c.max_offset(mq) - c.committed_offset("GID_REPLAY", mq)
                                  for mq in c.subscribe_queues("TopicPay")))
    assert f["values"]["lag"] == lag > 0 and f["brokers"] == ["broker-a", "broker-b"]
    assert {c["check"]: c["status"] for c in d["checks"]}["unowned-queues"] == "n/a"


def test_duplicate_id_and_the_queues_nobody_owns(demo):
    _, d, _ = diagnose(demo, "GID_DUP")
    f = finding(d, "duplicate-client-id")
    assert f["clients"] == ["172.17.0.2@1"] and f["values"]["connections"] == {
        "172.17.0.2@1": 2}
    u = finding(d, "unowned-queues")
    owned = demo.call(lambda c: {mq for cs in c.consumers("GID_DUP") for mq in cs.pqs})
    expect = demo.call(lambda c: {(mq.topic, mq.broker_name, mq.queue_id)
                                  for mq in c.subscribe_queues("TopicAudit")
                                  if mq not in owned and c.max_offset(mq) > (
                                      c.committed_offset("GID_DUP", mq) or 0)})
    assert queues(u) == expect and len(expect) == 3


def test_inconsistent_group(demo):
    _, d, _ = diagnose(demo, "GID_MIXED")
    mixed = finding(d, "mixed-strategies")
    assert "AVG: 10.0.4.41@4401#demo10, 10.0.4.42@4402#demo11" in mixed["title"]
    assert "AVG_BY_CIRCLE: 10.0.4.40@4400#demo14" in mixed["title"]
    split = finding(d, "membership-split")
    assert split["clients"] == ["10.0.4.40@4400#demo14"] and "broker-b" in split["title"]
    sub = finding(d, "subscription-mismatch")
    held = demo.call(lambda c: {b.name: b.group_info["GID_MIXED"].subs["TopicMixed"][
        "subString"] for b in c.brokers.values() if "GID_MIXED" in b.group_info})
    for b, expr in held.items():  # what each broker filters with, as the broker holds it
        assert any(f"{b} filters TopicMixed with '{expr}'" in e["text"]
                   for e in sub["evidence"]), (b, expr)
    idle = finding(d, "idle-consumers")
    assert "3 consumers for 2 queues of TopicMixed" in idle["title"]
    assert idle["severity"] == "warning"


def test_a_hung_client_is_named_and_the_result_is_partial(sim_factory):
    sc = {"name": "hang", "clock": {"mode": "manual"}, "running_info_timeout": 0.3,
          "brokers": [{"name": "broker-a"}],
          "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "10m"}],
          "groups": [{"name": "G", "topics": ["T"], "consumers": [
              {"id": "10.3.0.1@1"}, {"id": "10.3.0.2@2", "hang_at": "30s"}]}]}
    s = sim_factory(sc)
    s.advance(60)
    code, d, err = diagnose(s, "G")
    f = finding(d, "client-silent")
    assert f["clients"] == ["10.3.0.2@2"]
    assert code == 8 and "part of the data could not be read" in err
    assert "running info of 10.3.0.2@2" in d["unread"] and d["complete"] is False
    # the checks that need every client's running info are not made
    status = {c["check"]: c["status"] for c in d["checks"]}
    assert status["unowned-queues"] == "not-checked"
    assert not {"unowned-queues", "lag-growing"} & set(codes(d))


def test_no_such_group(demo):
    r = run_cli(["-n", demo.namesrv_addr, "diagnose", "GID_TYPO"])
    assert r.exit_code == 2 and "group 'GID_TYPO' is not known to any broker" in r.stderr


@pytest.mark.parametrize("fmt", ["table", "plain", "yaml", "csv", "wide"])
def test_every_format(demo, fmt):
    r = run_cli(["-n", demo.namesrv_addr, "diagnose", "GID_AUDIT", "-o", fmt])
    assert r.exit_code == 9, r.stderr
    if fmt == "csv":
        head, *rows = r.stdout.strip().splitlines()
        assert head == "rank,severity,code,finding" and rows[0].startswith("1,error,")
    elif fmt == "yaml":
        import yaml

        assert yaml.safe_load(r.stdout)["findings"][0]["code"] == "threads-saturated"
    else:
        assert "flow-control" in r.stdout and "why:" in r.stdout and "next:" in r.stdout
        assert "GID_AUDIT (concurrent, read " in r.stdout and "): 5 problem(s) found" in r.stdout


def test_topic_option(demo):
    code, d, _ = diagnose(demo, "GID_AUDIT", "-t", "TopicAudit")
    assert d["topic"] == "TopicAudit" and code == 9
    r = run_cli(["-n", demo.namesrv_addr, "diagnose", "GID_AUDIT", "-t", "NoSuchTopic"])
    assert r.exit_code == 2 and "topic 'NoSuchTopic' has no route" in r.stderr


def test_the_lock_view_is_the_same_as_locks_show(demo):
    """diagnose reuses the lock classification of `mqctl locks show` (same states)."""
    r = run_cli(["-n", demo.namesrv_addr, "locks", "show", "GID_ORDER", "--no-state", "-o",
                 "json"])
    failed = {(q["topic"], q["broker"], q["queue_id"]) for q in r.json["queues"]
              if q["state"] == "lock-failed"}
    _, d, _ = diagnose(demo, "GID_ORDER")
    assert queues(finding(d, "lock-failed")) == failed and failed


def test_a_topic_the_group_does_not_consume(demo):
    r = run_cli(["-n", demo.namesrv_addr, "diagnose", "GID_AUDIT", "-t", "TopicPay"])
    assert r.exit_code == 2
    assert "group GID_AUDIT neither subscribes to TopicPay nor has offsets on it" in r.stderr
    assert "hint: its topics: TopicAudit" in r.stderr

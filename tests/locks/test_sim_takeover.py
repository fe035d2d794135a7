"""Lock takeovers against the simulated cluster (manual clock): a hung orderly client is
dropped by the brokers as the real 4.9.3/5.3.3 brokers did (lock-crash/pause_*), the survivor
takes its queues, and the new owner's ProcessQueues behave per client version
(lock-crash/kill_survivor_o1_client.log).
"""

from __future__ import annotations

import pytest

from locks.helpers import lock_crash_scenario
from mqctl.models import MessageQueue
from mqctl.versions import V4_9_3, V5_3_3

G, T = "LC_G", "LC_T"
O1, O2 = "127.0.1.91@o1", "127.0.1.92@o2"
LEASE = 60_000
HANG_S = 61
B_QS = [MessageQueue(T, "broker-b", i) for i in range(4)]


scenario = lock_crash_scenario


def show(cli, sim, state_dir):
    r = cli(["--timeout", "3", "locks", "show", "-n", sim.namesrv_addr, "--group", G,
             "--state-dir", str(state_dir), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    return {q["queue"]: q for q in r.json["queues"]}


def members(sim, broker: str) -> list[str]:
    return sim.call(lambda c: c.brokers[broker].consumer_ids(G))


def holder(sim, mq: MessageQueue):
    def get(c):
        e = c.brokers[mq.broker_name].lock_holder(G, mq)
        return None if e is None else (e.client_id, e.last_update)
    return sim.call(get)


def log_text(sim, cid: str) -> str:
    return sim.call(lambda c: c.consumer(cid).log.path.read_text())


@pytest.mark.parametrize("version", [V4_9_3, V5_3_3], ids=["4.9.3", "5.3.3"])
def test_hung_client_is_dropped_and_the_survivor_takes_over_at_once(cli, sim_factory,
                                                                    tmp_path, version):
    sim = sim_factory(scenario(version, hang_at=f"{HANG_S}s"), log_dir=str(tmp_path / "logs"))
    start = sim.clock.now_ms()
    sim.advance(HANG_S - 1)
    # AVG over two clients: o1 broker-a's queues, o2 broker-b's (as in the corpus)
    assert all(holder(sim, mq)[0] == O2 for mq in B_QS)
    show(cli, sim, tmp_path)                          # o2 answers: its last observation
    last_hb_a = sim.call(lambda c: next(ch.last_update for ch in c.brokers["broker-a"]
                                        .members(G) if ch.client_id == O2))
    o2_lock = max(holder(sim, mq)[1] for mq in B_QS)
    lease_end = o2_lock + LEASE
    removed_a = None
    seen: list[tuple[int, dict]] = []
    while sim.clock.now_ms() < start + (HANG_S + 200) * 1000:
        sim.advance(1)
        now = sim.clock.now_ms()
        if removed_a is None and O2 not in members(sim, "broker-a"):
            removed_a = now
            # broker-a only got heartbeats from o2: it drops o2 120 s after the last one
            # and notifies o1, which locks o2's queues at once (lock.log "I got it")
            assert now - last_hb_a == 120_000
            for mq in B_QS:
                assert holder(sim, mq) == (O1, now)
        if (now - start) % 20_000 == 0:
            seen.append((now, show(cli, sim, tmp_path)))
    assert removed_a is not None
    assert 90_000 <= removed_a - (start + HANG_S * 1000) <= 120_000
    assert O2 not in members(sim, "broker-b")
    assert any(lease_end < at < removed_a for at, _ in seen)
    for at, rows in seen:
        for mq in B_QS:
            row = rows[mq.short]
            if at < removed_a:
                # still a member and still assigned them: hung (its lease, running or
                # lapsed, blocks nobody), and the drop window holds the real drop
                assert (row["state"], row["owner"]) == ("hung", O2), (at - start, row["reason"])
                assert "--execute" not in row["hint"]
                h = row["hung"]
                assert h["dropped_earliest_ts"] <= removed_a <= h["dropped_latest_ts"]
                assert row["frees_at_ts"] <= removed_a
            else:
                assert row["state"] not in ("stale", "hung"), (at - start, row["reason"])
                assert row["frees_at_ts"] is None
                assert "locks release" not in (row["hint"] or "")
            if at >= removed_a + 21_000:
                assert (row["state"], row["owner"]) == ("held", O1)
    assert any(at > removed_a for at, _ in seen)
    text = log_text(sim, O1)
    ok = "the message queue lock OK" if version < V5_3_3 else "message queue lock OK"
    assert f"{ok}, {G} MessageQueue [topic={T}, brokerName=broker-b, queueId=0]" in text
    assert "receive broker's notification" in text


def pq_state(sim, cid: str) -> dict[MessageQueue, tuple[bool, int]]:
    return sim.call(lambda c: {mq: (pq.locked, pq.last_lock_ts)
                               for mq, pq in c.consumer(cid).pqs.items() if mq.topic == T})


@pytest.mark.parametrize("version", [V4_9_3, V5_3_3], ids=["4.9.3", "5.3.3"])
def test_after_a_crash_the_survivor_locks_when_the_lease_ends_and_marks_it_per_version(
        cli, sim_factory, tmp_path, version):
    """kill -9 of o2: o1 rebalances at once but the broker refuses o2's queues until the 60 s
    lease ends (`lock Failed` / `add a new mq failed ... because lock failed`); then `lock OK`.
    4.9.3: the new ProcessQueue reads locked=false and is not pulled (`pull message later
    because not locked in broker`) until the next lockAll (`locked OK, Group:`); 5.3.3: it is
    locked at creation and refused locks are retried about every second."""
    sim = sim_factory(scenario(version, crash_at="61s"), log_dir=str(tmp_path / "logs"))
    start = sim.clock.now_ms()
    sim.advance(60)
    o2_lock = max(holder(sim, mq)[1] for mq in B_QS)
    sim.advance(2)
    assert O2 not in members(sim, "broker-a")          # TCP close: dropped at once
    assert all(holder(sim, mq)[0] == O2 for mq in B_QS)
    granted = None
    window_rows = None
    while sim.clock.now_ms() < start + 200_000:
        sim.advance(0.5)
        now = sim.clock.now_ms()
        st = pq_state(sim, O1)
        if granted is None and all(mq in st for mq in B_QS):
            granted = now
            assert all(holder(sim, mq)[0] == O1 for mq in B_QS)
            assert now > o2_lock + LEASE                 # not before the lease ended
            if version < V5_3_3:
                assert not any(st[mq][0] for mq in B_QS)     # granted, not marked
                window_rows = show(cli, sim, tmp_path)
            else:
                assert all(st[mq][0] for mq in B_QS)
                assert now - (o2_lock + LEASE) <= 1_500       # retried every second
        if granted is not None and all(st[mq][0] for mq in B_QS):
            marked = now
            break
    assert granted is not None
    text = log_text(sim, O1)
    mq0 = f"MessageQueue [topic={T}, brokerName=broker-b, queueId=0]"
    failed = text.count(f"lock Failed, {G} {mq0}")
    assert f"add a new mq failed, {mq0}, because lock failed" in text
    if version < V5_3_3:
        assert f"the message queue lock Failed, {G} {mq0}" in text
        assert f"the message queue lock OK, {G} {mq0}" in text
        assert f"the message queue locked OK, Group: {G} {mq0}" in text
        assert ("pull message later because not locked in broker, PullRequest "
                f"[consumerGroup={G}, messageQueue={mq0}") in text
        assert 0 < marked - granted <= 20_000             # at the next lockAll
        assert 2 <= failed <= 4                           # every 20 s for ~60 s
        assert window_rows is not None
        row = window_rows[B_QS[0].short]
        assert (row["state"], row["owner"], row["locked"]) == ("lock-failed", O1, False)
        assert "granted" in row["hint"] and "refused" not in row["hint"]
    else:
        assert f"message queue lock OK, {G} {mq0}" in text
        assert "the message queue lock" not in text
        assert "pull message later because not locked" not in text
        assert marked == granted
        assert failed >= 40                               # about once a second

"""Restarts with the same client id and graceful stops against the simulated cluster (manual
clock).

4d: a graceful stop of an orderly holder. DefaultMQPushConsumerImpl.shutdown (4.9.3 and 5.3.3)
runs ConsumeMessageOrderlyService.shutdown -> RebalanceImpl.unlockAll (UNLOCK_BATCH_MQ: the
broker removes the entries, RebalanceLockManager.unlockBatch), then persistConsumerOffset and
unregisterConsumer (the broker notifies the others, ConsumerManager.unregisterConsumer). The
survivor rebalances at once and the broker grants it the lock; a 4.9.3 client marks its new
ProcessQueue locked only at its next lockAll. Real 4.9.3: mqctl called the queues `stale`
("blocked until ...") for 8 s and offered `locks release --execute`.

4c: kill -9 of an orderly consumer and its restart with the same client id, then a SIGSTOP.
What mqctl recorded of the killed process must not be applied to the new one (real 5.3.3:
"does not answer (last seen 02:11:46; its lease lapsed at 02:12:33)" about a process that had
locked its queues at 02:12:59 and renewed them until it was stopped).
"""

from __future__ import annotations

import pytest

from locks.helpers import lock_crash_scenario, lock_crash_show, rows_by_queue
from mqctl.models import MessageQueue
from mqctl.remoting.codes import RequestCode
from mqctl.versions import V4_9_3, V5_3_3

G, T = "LC_G", "LC_T"
O1, O2 = "127.0.1.91@o1", "127.0.1.92@o2"
LEASE = 60_000
B_QS = [MessageQueue(T, "broker-b", i) for i in range(4)]
VERSIONS = pytest.mark.parametrize("version", [V4_9_3, V5_3_3], ids=["4.9.3", "5.3.3"])


scenario = lock_crash_scenario


show, rows = lock_crash_show, rows_by_queue


def holder(sim, mq: MessageQueue) -> tuple[str, int] | None:
    def get(c):
        e = c.brokers[mq.broker_name].lock_holder(G, mq)
        return None if e is None else (e.client_id, e.last_update)
    return sim.call(get)


def pqs(sim, cid: str) -> dict[MessageQueue, tuple[bool, int]]:
    return sim.call(lambda c: {mq: (pq.locked, pq.last_lock_ts)
                               for mq, pq in c.consumer(cid).pqs.items()
                               if mq.topic == T and not pq.dropped})


def members(sim) -> list[str]:
    return sim.call(lambda c: sorted(c.brokers["broker-a"].consumer_ids(G)))


# ------------------------------------------------------------------ 4d: graceful stop


@VERSIONS
def test_graceful_stop_hands_the_queues_to_the_survivor_never_stale(cli, sim_factory, tmp_path,
                                                                    version):
    # both start at 0 s and lockAll at 1 s, 21 s, 41 s, 61 s, 81 s: o2 stops at 62 s, o1 marks
    # the queues it was granted at 62 s (4.9.3) at its lockAll of 81 s
    sim = sim_factory(scenario(version, leave_at="62s"), log_dir=str(tmp_path / "logs"))
    start = sim.clock.now_ms()
    sim.advance(55)
    before = rows(show(cli, sim, tmp_path))                 # o2 answers: mqctl records it
    assert all((before[mq.short]["state"], before[mq.short]["owner"]) == ("held", O2)
               for mq in B_QS)
    sim.advance(7.5)                                        # 62.5 s: o2 stopped at 62 s
    stop = start + 62_000
    assert O2 not in members(sim)
    granted = pqs(sim, O1)
    for mq in B_QS:
        # ground truth: o2 unlocked on shutdown, the broker granted o1 the lock at once
        assert holder(sim, mq) == (O1, stop)
        assert granted[mq] == (version >= V5_3_3, stop)
    d = show(cli, sim, tmp_path)
    now = rows(d)
    for mq in B_QS:
        row = now[mq.short]
        assert row["state"] != "stale", row["reason"]
        assert row["owner"] == O1
        assert row["frees_at_ts"] is None
        assert "locks release" not in (row["hint"] or "")
        if version < V5_3_3:
            assert row["state"] == "lock-failed" and row["locked"] is False
            assert "lock granted" in row["reason"] and "next lock cycle" in row["hint"]
        else:
            assert row["state"] == "held"
        o2_claim = next(c for c in row["claims"] if c["client_id"] == O2)
        assert o2_claim["superseded_by"] == O1              # its record stays visible
    assert not any("locks release" in h for h in d["hints"])
    assert any(n.startswith(f"{O2}'s last known claim on broker-b:0, broker-b:1, broker-b:2, "
                            f"broker-b:3 is superseded: the broker granted {O1} the lock")
               for n in d["notes"])
    # the release is refused: o1 already has the lock (4.9.3: granted, not marked yet; 5.3.3:
    # locked, so o1 is the holder and it renews), the broker would ignore o2's release
    r = cli(["--timeout", "3", "locks", "release", "-n", sim.namesrv_addr, "--group", G,
             "--queue", "broker-b:0", "--state-dir", str(tmp_path)])
    assert r.exit_code == 6, r.stdout + r.stderr
    if version < V5_3_3:
        assert f"{O1} already claims broker-b:0" in r.stderr
        assert f"so {O2} no longer holds it" in r.stderr
    else:
        assert f"{O1} is alive and renewing its lock on broker-b:0" in r.stderr
    assert RequestCode.UNLOCK_BATCH_MQ not in {x.code for x in sim.request_log}
    # after o1's next lockAll: held by o1
    sim.advance(20)
    after = rows(show(cli, sim, tmp_path))
    assert all((after[mq.short]["state"], after[mq.short]["owner"]) == ("held", O1)
               for mq in B_QS)


# ------------------------------------------------------------------ 4c: restart, same id


def _restart_case(cli, sim_factory, tmp_path, version, *, look_while_gone: bool):
    # o2 renews at 1/21/41 s, is killed at 50 s (lease until 101 s), restarts at 80 s with the
    # same id (the broker grants it its old entries: same clientId, RebalanceLockManager
    # .tryLockBatch), renews at 81 s (lease until 141 s) and hangs at 95 s
    sim = sim_factory(scenario(version, crash_at="50s", restart_at="80s", hang_at="95s"),
                      log_dir=str(tmp_path / "logs"))
    start = sim.clock.now_ms()
    sim.advance(45)
    first = show(cli, sim, tmp_path)
    old_addr = sim.call(lambda c: c.consumer(O2).addr)
    assert all(rows(first)[mq.short]["owner"] == O2 for mq in B_QS)
    if look_while_gone:
        sim.advance(10)                                     # 55 s: o2 killed, gone
        gone = show(cli, sim, tmp_path)
        assert all(rows(gone)[mq.short]["state"] == "stale" for mq in B_QS)
    sim.advance((start + 100_000 - sim.clock.now_ms()) / 1000)   # 100 s
    assert O2 in members(sim)
    assert sim.call(lambda c: (c.consumer(O2).state, c.consumer(O2).runs)) == ("hung", 2)
    # a new process has new connections: the member list shows another clientAddr
    assert sim.call(lambda c: c.consumer(O2).addr) != old_addr
    entries = [holder(sim, mq) for mq in B_QS]
    assert all(e is not None and e[0] == O2 for e in entries)
    assert min(e[1] for e in entries if e is not None) >= start + 80_000   # the new process's
    seen = []
    for _ in range(3):                                      # 100 s, 115 s, 130 s
        d = show(cli, sim, tmp_path)
        seen.append(d)
        for mq in B_QS:
            row = rows(d)[mq.short]
            # nothing of the killed process: no lease end, no lock age, no release advice
            assert row["state"] == "unknown", row["reason"]
            assert row["owner"] == O2
            assert row["claims"] == []
            assert row["lock_age_ms"] is None and row["lease_end_ts"] is None
            assert row["frees_at_ts"] is None
            assert "lapsed" not in row["hint"] and "last seen" not in row["hint"]
            assert "locks release" not in row["hint"]
        sim.advance(15)
    c2 = next(c for c in seen[0]["clients"] if c["client_id"] == O2)
    assert c2["member"] is True and c2["answered"] is False
    assert c2["last_seen_ts"] is None and c2["claimed"] == 0
    assert "connected anew" in c2["reconnected"]
    assert any(O2 in n and "connected anew" in n for n in seen[0]["notes"])
    assert any("connected anew" in (rows(seen[0])[mq.short]["hint"]) for mq in B_QS)


@VERSIONS
def test_restart_with_the_same_id_seen_gone_in_between(cli, sim_factory, tmp_path, version):
    _restart_case(cli, sim_factory, tmp_path, version, look_while_gone=True)


@VERSIONS
def test_restart_with_the_same_id_told_by_its_new_connection(cli, sim_factory, tmp_path,
                                                             version):
    _restart_case(cli, sim_factory, tmp_path, version, look_while_gone=False)


def test_a_restart_that_answers_shows_only_the_new_process(cli, sim_factory, tmp_path):
    """The new process answers: its claims replace the record (LOCK AGE from its own
    renewals), and the view says it restarted (PROP_CONSUMER_START_TIMESTAMP changed)."""
    sim = sim_factory(scenario(V5_3_3, crash_at="50s", restart_at="80s"),
                      log_dir=str(tmp_path / "logs"))
    start = sim.clock.now_ms()
    sim.advance(45)
    show(cli, sim, tmp_path)
    sim.advance(45.5)                                       # 90.5 s
    d = show(cli, sim, tmp_path)
    for mq in B_QS:
        row = rows(d)[mq.short]
        assert (row["state"], row["owner"]) == ("held", O2)
        assert row["last_lock_ts"] >= start + 80_000
    c2 = next(c for c in d["clients"] if c["client_id"] == O2)
    assert c2["start_ts"] == start + 80_000
    assert "restarted" in c2["reconnected"]

"""A SIGSTOP-like hang of an orderly consumer and its resume, on the simulated cluster (manual
clock), as the real 4.9.3 and 5.3.3 clusters behaved (../shared/samples/real/<v>/lock-crash,
pause_*; and the 5.3.3 run where the resumed client consumed 712 messages again):

* the hung client stays in the consumer table (it stops heartbeating) until a broker drops it
  120 s after its last heartbeat (ConsumerManager.scanNotActiveChannel, every 10 s; an idle
  connection is closed at the same time), and its locks expire at 60 s while nobody asks;
* the survivor then rebalances and locks the queues within a lock cycle;
* resumed before the drop, the client re-locks its own expired entries ("lock expired, I got
  it", its id as old and new holder) and goes on from its in-memory offset;
* resumed after its queues moved, it keeps them, locks them once the survivor released them,
  and consumes again from its in-memory offset what the survivor consumed meanwhile.

mqctl says `hung` (no release) while it is listed, and duplicates expected after the resume.
"""

from __future__ import annotations

import pytest

from locks.helpers import lock_crash_scenario, lock_crash_show, rows_by_queue
from mqctl.models import MessageQueue
from mqctl.versions import V4_9_3, V5_3_3, version_name

G, T = "LC_G", "LC_T"
O1, O2 = "127.0.1.91@o1", "127.0.1.92@o2"
B_QS = [MessageQueue(T, "broker-b", i) for i in range(4)]
HANG_S = 61
VERSIONS = pytest.mark.parametrize("version", [V4_9_3, V5_3_3], ids=["4.9.3", "5.3.3"])


def scenario(version: int, **o2: object) -> dict:
    """The lock-crash setup with brokers of the clients' release."""
    sc = lock_crash_scenario(version, **o2)
    sc["brokers"] = [{"name": b, "version": version_name(version)}
                     for b in ("broker-a", "broker-b")]
    return sc


show, rows = lock_crash_show, rows_by_queue


def facts(sim):
    """Ground truth: members per broker, o2's channel heartbeat times, lock holders, both
    clients' in-memory positions of broker-b's queues."""
    def get(c):
        o1, o2 = c.consumer(O1), c.consumer(O2)
        return {
            "members": {n: b.consumer_ids(G) for n, b in c.brokers.items()},
            "o2_hb": {n: next((ch.last_update for ch in b.members(G) if ch.client_id == O2),
                              None) for n, b in c.brokers.items()},
            "holder": {mq: (e.client_id, e.last_update) if (e := c.brokers["broker-b"]
                                                            .lock_holder(G, mq)) else None
                       for mq in B_QS},
            "o1": {mq: o1.pqs[mq].position for mq in B_QS if mq in o1.pqs},
            "o2": {mq: (o2.pqs[mq].position, o2.pqs[mq].locked) for mq in B_QS
                   if mq in o2.pqs},
            "now": c.clock.now_ms()}
    return sim.call(get)


def lock_lines(sim) -> list[str]:
    text = sim.call(lambda c: c.brokers["broker-b"].lock_log.path.read_text())
    return [ln.split(" - ", 1)[1] for ln in text.splitlines()
            if f"topic={T}, brokerName=broker-b, queueId=0" in ln]


@VERSIONS
def test_resumed_before_the_drop_relocks_its_own_expired_locks(cli, sim_factory, tmp_path,
                                                                version):
    resume_s = HANG_S + 100                      # before the 120 s channel expiry
    sim = sim_factory(scenario(version, hang_at=f"{HANG_S}s", resume_at=f"{resume_s}s"),
                      log_dir=str(tmp_path / "logs"))
    sim.advance(HANG_S - 1)
    show(cli, sim, tmp_path)                      # o2 answers: mqctl remembers it
    sim.advance(2)
    at_hang = facts(sim)
    before = len(lock_lines(sim))
    seen = []
    while sim.clock.elapsed_s() + 20 < resume_s:
        sim.advance(20)
        f = facts(sim)
        # still a member everywhere, heartbeats stopped
        assert all(O2 in m for m in f["members"].values())
        assert f["o2_hb"] == at_hang["o2_hb"]
        seen.append((f, rows(show(cli, sim, tmp_path))))
    # its locks expired at 60 s and nobody asked for them: still o2's entries, untouched
    last, last_rows = seen[-1]
    for mq in B_QS:
        held_by, since = last["holder"][mq]
        assert held_by == O2 and last["now"] - since > 60_000
        row = last_rows[mq.short]
        assert (row["state"], row["owner"]) == ("hung", O2)
        assert "--execute" not in row["hint"]
    assert lock_lines(sim)[before:] == []       # o1 never asked, nobody locked anything
    sim.advance(resume_s + 3 - sim.clock.elapsed_s())
    after = facts(sim)
    lines = lock_lines(sim)
    if version < V5_3_3:
        assert (f"tryLockBatch, message queue lock expired, I got it. Group: {G} OldClientId: "
                f"{O2} NewClientId: {O2}") in lines[-1]
    else:
        assert f"old client id={O2}, new client id={O2}" in lines[-1]
    for mq in B_QS:
        assert after["holder"][mq][0] == O2
        # it went on from its in-memory offset: nothing was consumed twice (nobody else did)
        assert after["o2"][mq][0] >= at_hang["o2"][mq][0]
    d = rows(show(cli, sim, tmp_path))
    assert all((d[mq.short]["state"], d[mq.short]["owner"]) == ("held", O2) for mq in B_QS)


@VERSIONS
def test_dropped_at_its_channel_expiry_then_resumed_consumes_again(cli, sim_factory, tmp_path,
                                                                   version):
    resume_s = HANG_S + 190                      # after the drop and the survivor's takeover
    sim = sim_factory(scenario(version, hang_at=f"{HANG_S}s", resume_at=f"{resume_s}s"),
                      log_dir=str(tmp_path / "logs"))
    sim.advance(HANG_S - 1)
    show(cli, sim, tmp_path)
    sim.advance(2)
    at_hang = facts(sim)
    dropped: dict[str, int] = {}
    o1_locked = None
    last_o1: dict = {}
    while sim.clock.elapsed_s() < resume_s - 1:
        sim.advance(1)
        f = facts(sim)
        for b, ids in f["members"].items():
            if O2 not in ids and b not in dropped:
                dropped[b] = f["now"]
        if o1_locked is None and all(f["holder"][mq][0] == O1 for mq in B_QS):
            o1_locked = f["now"]
        if int(sim.clock.elapsed_s()) % 20 == 0:
            d = rows(show(cli, sim, tmp_path))
            if O2 in f["members"]["broker-a"] and O2 in f["members"]["broker-b"]:
                assert all(d[mq.short]["state"] == "hung" for mq in B_QS)
        last_o1 = f["o1"]
    # dropped by each broker 120 s after its last heartbeat there (the scan runs every 10 s)
    for b, t in dropped.items():
        assert 120_000 <= t - at_hang["o2_hb"][b] <= 130_000, b
    assert set(dropped) == {"broker-a", "broker-b"}
    # the survivor locked them at once when notified, within a lock cycle at the latest
    assert o1_locked is not None and o1_locked - min(dropped.values()) <= 20_000
    progressed = {mq: last_o1[mq] - at_hang["o2"][mq][0] for mq in B_QS}
    assert all(n > 0 for n in progressed.values())          # o1 consumed o2's queues
    sim.advance(resume_s + 0.5 - sim.clock.elapsed_s())
    resumed = facts(sim)
    for mq in B_QS:
        assert resumed["o2"][mq][0] == at_hang["o2"][mq][0]  # its in-memory offset
    d = show(cli, sim, tmp_path)
    total = sum(r["redelivery"]["expected"] for r in d["queues"] if r["redelivery"])
    note = next(n for n in d["notes"] if n.startswith("duplicates expected"))
    assert O2 in note and O1 in note and f"about {total:,}" in note
    # what mqctl last saw o1 commit (its last run 1-20 s before the resume) against o2's
    # offset at its last answer: o1's progress meanwhile, up to the last run
    for mq in B_QS:
        r = rows(d)[mq.short]["redelivery"]
        assert r["client_id"] == O2 and r["survivor"] == O1
        assert r["from_offset"] == at_hang["o2"][mq][0]
        assert 0 < r["expected"] <= progressed[mq] + 1
        assert r["expected"] >= progressed[mq] - 25          # one production window short
    sim.advance(5)
    after = facts(sim)
    again = {mq: after["o2"][mq][0] - at_hang["o2"][mq][0] for mq in B_QS}
    # it consumed again what o1 had consumed (duplicates), and more
    assert all(again[mq] >= progressed[mq] for mq in B_QS)
    lines = lock_lines(sim)
    assert any(O2 in ln and ("not locked, I got it" in ln or "has not been locked yet" in ln)
               for ln in lines)
    # re-delivered: the note is gone once it passed o1's offset
    d2 = show(cli, sim, tmp_path)
    assert not any(n.startswith("duplicates expected") for n in d2["notes"])
    assert all(r["redelivery"] is None for r in d2["queues"])


def test_diagnose_ranks_the_hung_client_first_and_names_the_duplicates(cli, sim_factory,
                                                                        tmp_path):
    resume_s = HANG_S + 190
    sim = sim_factory(scenario(V5_3_3, hang_at=f"{HANG_S}s", resume_at=f"{resume_s}s"),
                      log_dir=str(tmp_path / "logs"))
    sim.advance(HANG_S - 1)
    show(cli, sim, tmp_path)
    sim.advance(40)

    def diagnose():
        r = cli(["--timeout", "3", "-n", sim.namesrv_addr, "diagnose", G, "--state-dir",
                 str(tmp_path), "-o", "json"])
        assert r.exit_code in (8, 9), r.stderr
        return r.json

    d = diagnose()
    codes = [f["code"] for f in d["findings"]]
    assert codes[0] == "client-silent" and "lock-hung" in codes
    assert "lock-stale" not in codes
    first = d["findings"][0]
    assert first["severity"] == "error" and "hung" in first["title"]
    assert "release frees nobody" in first["next"] and "--execute" not in first["next"]
    hung = next(f for f in d["findings"] if f["code"] == "lock-hung")
    assert O2 in hung["title"] and "--execute" not in hung["next"]
    while sim.clock.elapsed_s() + 20 < resume_s:
        sim.advance(20)
        show(cli, sim, tmp_path)
    sim.advance(resume_s + 0.5 - sim.clock.elapsed_s())
    r = cli(["--timeout", "3", "-n", sim.namesrv_addr, "diagnose", G, "--state-dir",
             str(tmp_path), "-o", "json"])
    assert r.exit_code == 9, r.stderr           # every client answers: a finding, not partial
    dup = next(f for f in r.json["findings"] if f["code"] == "duplicates-expected")
    assert dup["severity"] == "warning" and O2 in dup["title"]
    assert dup["values"]["messages"] > 0

"""``mqctl locks`` against the simulated cluster (mqctl.sim, manual clock).

Ground truth comes from the simulation itself: the broker's lock table
(``SimBroker.lock_holder``) and the consumers' process queues (``SimConsumer.pqs``).
"""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml
from readonly import assert_read_only

from mqctl.allocate import allocate_group
from mqctl.models import MessageQueue
from mqctl.remoting.codes import RequestCode

G, T = "GID_ORDER", "TopicOrder"
D7, D8, D9 = "10.0.3.31@4301#demo07", "10.0.3.32@4302#demo08", "10.0.3.33@4303#demo09"
A, B, C = "10.1.0.1@101#a", "10.1.0.2@102#b", "10.1.0.3@103#c"
LEASE = 60_000


def scenario(consumers: list[dict], **group: object) -> dict:
    return {"name": "locks", "running_info_timeout": 0.3,
            "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
            "topics": [{"name": T, "queues": 4, "rate": 1, "history": "10m"}],
            "groups": [{"name": G, "orderly": True, "topics": [T], "consumers": consumers,
                        **group}]}


def show(cli, sim, state_dir, *extra: str, group: str = G, fmt: str = "json"):
    return cli(["--timeout", "3", "locks", "show", "-n", sim.namesrv_addr, "--group", group,
                "--state-dir", str(state_dir), "-o", fmt, *extra])


def rows(d: dict) -> dict[str, dict]:
    return {q["queue"]: q for q in d["queues"]}


def holder(sim, mq: MessageQueue) -> tuple[str, int] | None:
    """The broker's lock entry for mq, if its lease still runs."""
    def get(c):
        e = c.brokers[mq.broker_name].lock_holder(G, mq)
        if e is None or c.clock.now_ms() - e.last_update > LEASE:
            return None
        return e.client_id, e.last_update
    return sim.call(get)


def pqs(sim, cid: str) -> dict[MessageQueue, tuple[bool, int]]:
    return sim.call(lambda c: {mq: (pq.locked, pq.last_lock_ts)
                               for mq, pq in c.consumer(cid).pqs.items()
                               if mq.topic == T and not pq.dropped})


# ------------------------------------------------------------------ the demo's orderly group


def test_demo_crash_stale_with_free_up_time_then_new_owner(cli, sim, tmp_path):
    sim.advance(110)                                   # demo09 crashes at 2 m
    sim.clear_request_log()
    r = show(cli, sim, tmp_path)
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["summary"]["held"] == 8 and d["kind"] == "orderly"
    for cid in (D7, D8, D9):
        for mq, (locked, ts) in pqs(sim, cid).items():
            row = rows(d)[mq.short]
            assert (row["owner"], row["locked"], row["last_lock_ts"]) == (cid, locked, ts)
            assert holder(sim, mq) == (cid, ts)        # the broker agrees with the client
    lost = sorted(pqs(sim, D9))
    assert_read_only(sim)

    sim.advance(15)                                    # crashed at 120 s
    sim.clear_request_log()
    d = show(cli, sim, tmp_path).json
    predicted = allocate_group("AVG", sim.cluster.subscribe_queues(T), [D7, D8])
    for mq in lost:
        row = rows(d)[mq.short]
        entry = holder(sim, mq)
        assert entry is not None and entry[0] == D9    # the broker still holds it for D9
        assert row["state"] == "stale" and row["owner"] == D9
        assert row["frees_at_ts"] == entry[1] + LEASE
        assert row["predicted"] == [c for c in (D7, D8) if mq in predicted[c]]
        assert mq not in pqs(sim, row["predicted"][0])  # its lock attempts failed
    assert d["summary"]["stale"] == len(lost)
    assert [c["client_id"] for c in d["unanswered"]] == [D9]
    assert any(f"because {D9} stopped renewing" in h for h in d["hints"])
    assert_read_only(sim)

    frees = max(rows(d)[mq.short]["frees_at_ts"] for mq in lost)
    sim.advance((frees - sim.clock.now_ms()) / 1000 + 21)   # lease over + one rebalance
    d = show(cli, sim, tmp_path).json
    for mq in lost:
        row = rows(d)[mq.short]
        assert row["state"] == "held" and row["owner"] == row["predicted"][0]
        assert pqs(sim, row["owner"])[mq][0] is True
    assert d["unanswered"] == []


def test_crash_long_after_the_last_look_is_stale_until_the_real_lease_end(cli, sim, tmp_path):
    """The last run saw demo09 35 s before it crashed; it renewed since. The next run comes
    more than 60 s after that observation, yet the broker still holds demo09's locks: mqctl
    must not forget it (it may have renewed every 20 s until it left) and must name it."""
    sim.advance(85)
    show(cli, sim, tmp_path)
    seen = pqs(sim, D9)
    lost = sorted(seen)
    sim.advance(65)                                    # crashed at 120 s; now 150 s
    now = sim.clock.now_ms()
    d = show(cli, sim, tmp_path).json
    for mq in lost:
        row = rows(d)[mq.short]
        entry = holder(sim, mq)
        assert entry is not None and entry[0] == D9    # the broker still blocks the queue
        assert seen[mq][1] + LEASE < now                # the naive estimate has lapsed
        assert (row["state"], row["owner"]) == ("stale", D9)
        # the earliest lease end consistent with renewals every 20 s, and the real one
        assert row["frees_at_ts"] == entry[1] + LEASE
        assert row["frees_at_ts"] >= now
    assert any(f"because {D9} stopped renewing" in h for h in d["hints"])
    # so `locks release` finds the holder by itself
    q = rows(d)[lost[0].short]
    r = cli(["locks", "release", "-n", sim.namesrv_addr, "-g", G, "--queue", q["queue"],
             "--state-dir", str(tmp_path), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["plan"]["holder"] == D9


def test_release_frees_the_stale_lock_and_the_new_owner_takes_it(cli, sim, tmp_path):
    sim.advance(110)
    show(cli, sim, tmp_path)
    sim.advance(15)
    d = show(cli, sim, tmp_path).json
    stale = [q for q in d["queues"] if q["state"] == "stale"]
    assert stale
    q0 = stale[0]
    mq = MessageQueue(T, q0["broker"], q0["queue_id"])
    new_owner = q0["predicted"][0]
    base = ["locks", "release", "-n", sim.namesrv_addr, "-g", G, "--queue", q0["queue"],
            "--state-dir", str(tmp_path), "-o", "json"]
    sim.clear_request_log()
    r = cli(base)                                       # the plan: nothing sent
    assert r.exit_code == 0, r.stderr
    assert r.json["executed"] is False and r.json["plan"]["holder"] == D9
    assert_read_only(sim)
    assert holder(sim, mq)[0] == D9

    r = cli([*base, "--execute"])
    assert r.exit_code == 0, r.stderr
    unlocks = [x for x in sim.request_log if x.code == RequestCode.UNLOCK_BATCH_MQ]
    assert len(unlocks) == 1
    assert unlocks[0].server == mq.broker_name
    assert unlocks[0].addr == sim.cluster.broker_addr(mq.broker_name)
    assert json.loads(unlocks[0].body) == {"consumerGroup": G, "clientId": D9,
                                           "mqSet": [mq.to_dict()], "onlyThisBroker": False}
    assert holder(sim, mq) is None                      # the broker removed D9's entry
    assert r.json["after"]["state"] == "lock-failed"    # nobody re-locked it yet
    assert r.json["after"]["owner"] == new_owner

    sim.advance(20)                                     # the new owner's next rebalance
    assert pqs(sim, new_owner)[mq][0] is True
    assert holder(sim, mq)[0] == new_owner
    row = rows(show(cli, sim, tmp_path).json)[mq.short]
    assert (row["state"], row["owner"], row["locked"]) == ("held", new_owner, True)
    # the other stale queues still wait for the lease
    others = [q for q in stale if q["queue"] != q0["queue"]]
    for q in others:
        assert holder(sim, MessageQueue(T, q["broker"], q["queue_id"]))[0] == D9


def test_release_refuses_a_live_renewing_holder(cli, sim, tmp_path):
    sim.advance(30)
    mq = sorted(pqs(sim, D7))[0]
    base = ["locks", "release", "-n", sim.namesrv_addr, "-g", G, "--queue", mq.short,
            "--state-dir", str(tmp_path)]
    sim.clear_request_log()
    r = cli([*base, "--execute"])
    assert r.exit_code == 6
    assert r.stderr.splitlines()[0].startswith(f"mqctl: error: {D7} is alive and renewing")
    assert_read_only(sim)
    assert holder(sim, mq)[0] == D7
    r = cli([*base, "--execute", "--force"])
    assert r.exit_code == 0, r.stderr
    assert holder(sim, mq) is None
    sim.advance(20)                                     # lockAll takes it back
    assert holder(sim, mq)[0] == D7


@pytest.mark.parametrize("fmt", ["table", "plain", "json", "yaml", "csv"])
def test_every_format_reports_the_stale_queues(cli, sim, tmp_path, fmt):
    sim.advance(110)
    show(cli, sim, tmp_path)
    lost = sorted(pqs(sim, D9))
    sim.advance(15)
    r = show(cli, sim, tmp_path, fmt=fmt)
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    for mq in lost:
        frees = holder(sim, mq)[1] + LEASE
        if fmt == "json":
            row = rows(json.loads(out))[mq.short]
            assert (row["state"], row["frees_at_ts"]) == ("stale", frees)
        elif fmt == "yaml":
            row = rows(yaml.safe_load(out))[mq.short]
            assert (row["state"], row["frees_at_ts"]) == ("stale", frees)
        elif fmt == "csv":
            table = list(csv.DictReader(io.StringIO(out.split("\n\n")[0])))
            row = next(x for x in table if x["queue"] == mq.short)
            assert (row["state"], row["owner"]) == ("stale", D9)
            assert float(row["lease_left_s"]) == round((frees - sim.clock.now_ms()) / 1000, 1)
        else:
            line = next(x for x in out.splitlines() if mq.short in x and "stale" in x)
            assert D9 in line
    if fmt in ("table", "plain"):
        assert f"stale: {len(lost)} queue(s)" in out
        assert f"because {D9} stopped renewing" in out


def test_groups_that_do_not_lock_offline_and_unknown(cli, sim, tmp_path):
    sim.advance(5)
    sim.clear_request_log()
    for group, word in (("GID_PAY", "consumes concurrently"), ("GID_NEWS", "BROADCASTING"),
                        ("GID_POP", "pop consumption"), ("GID_DUP", "consumes concurrently")):
        r = show(cli, sim, tmp_path, group=group)
        assert r.exit_code == 6, (group, r.stderr)
        assert word in r.stderr.splitlines()[0]
    r = show(cli, sim, tmp_path, group="GID_NOPE")
    assert r.exit_code == 2
    assert r.stderr.splitlines()[0].startswith(
        "mqctl: error: group 'GID_NOPE' is not known to any broker")
    r = show(cli, sim, tmp_path, group="GID_REPLAY")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert (d["online"], d["kind"], d["topics"]) == (False, "offline", ["TopicPay"])
    assert d["summary"]["unowned"] == len(d["queues"]) == 8
    assert any("offline" in n for n in d["notes"])
    assert_read_only(sim)


# ------------------------------------------------------------------ custom scenarios


def test_hang_is_hung_not_stale_while_it_stays_a_member(cli, sim_factory, tmp_path):
    """B hangs: still a member and still assigned its queues, so A never asks for them; its
    lease, running or lapsed, blocks nobody: hung (not stale, no release), until the brokers
    drop it at the earliest 90 s after its last answer (its last heartbeat + 120 s)."""
    sim = sim_factory(scenario([{"id": A}, {"id": B}]))
    sim.advance(5)
    seen = sim.clock.now_ms()
    show(cli, sim, tmp_path)
    mine = pqs(sim, B)
    sim.call(lambda c: c.consumer(B).hang())
    sim.advance(25)                                     # B missed its renewal at 21 s
    sim.clear_request_log()
    d = show(cli, sim, tmp_path).json
    for mq, (_, ts) in mine.items():
        row = rows(d)[mq.short]
        assert (row["state"], row["owner"]) == ("hung", B)
        assert "does not answer" in row["reason"] and "--execute" not in row["hint"]
        assert row["lease_end_ts"] == ts + LEASE == holder(sim, mq)[1] + LEASE
        assert row["frees_at_ts"] == max(seen - 30_000 + 120_000, ts + LEASE)
        assert row["hung"]["last_answer_ts"] == seen
    [silent] = d["unanswered"]
    assert silent["client_id"] == B and silent["member"] is True
    assert silent["answered"] is False and silent["error"]
    assert_read_only(sim)
    sim.advance(40)                                     # B's leases have lapsed
    d = show(cli, sim, tmp_path).json
    assert {rows(d)[mq.short]["state"] for mq in mine} == {"hung"}
    assert all(holder(sim, mq) is None for mq in mine)  # lapsed, and nobody asked
    assert {rows(d)[mq.short]["state"] for mq in pqs(sim, A)} == {"held"}


def test_stalled_renewal_expiring_then_lapsed(cli, sim_factory, tmp_path):
    sim = sim_factory(scenario([{"id": A}]))
    sim.advance(2)

    def stall(c):                                       # stop lockAll only: still answers
        cons = c.consumer(A)
        stalled = [t for t in cons.timers if t.fn == cons.lock_all]
        assert len(stalled) == 1
        stalled[0].cancel()
    sim.call(stall)
    sim.advance(35)                                     # last renewal at 1 s: 36 s ago
    d = show(cli, sim, tmp_path).json
    assert d["summary"]["expiring"] == 8, d["summary"]
    row = d["queues"][0]
    assert row["trusted"] is False and row["lock_age_ms"] == 36_000
    assert row["lease_left_ms"] == LEASE - 36_000
    sim.advance(30)                                     # 66 s: beyond the broker lease
    d = show(cli, sim, tmp_path).json
    assert d["summary"]["lock-failed"] == 8


def test_crash_without_state_is_lock_failed(cli, sim_factory, tmp_path):
    sim = sim_factory(scenario([{"id": A}, {"id": B, "crash_at": 10}]))
    sim.advance(5)
    lost = pqs(sim, B)
    sim.advance(10)
    r = cli(["locks", "show", "-n", sim.namesrv_addr, "-g", G, "--no-state", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    for mq in lost:
        row = rows(r.json)[mq.short]
        assert (row["state"], row["owner"]) == ("lock-failed", A)
        assert holder(sim, mq)[0] == B


def test_split_strategies_contested_and_unowned(cli, sim_factory, tmp_path):
    sim = sim_factory(scenario([{"id": A}, {"id": B, "strategy": "AVG_BY_CIRCLE"}]))
    sim.advance(5)
    d = show(cli, sim, tmp_path).json
    mq_all = sim.cluster.subscribe_queues(T)
    avg = set(allocate_group("AVG", mq_all, [A, B])[A])
    circle = set(allocate_group("AVG_BY_CIRCLE", mq_all, [A, B])[B])
    assert avg & circle and set(mq_all) - avg - circle
    for mq in avg & circle:
        row = rows(d)[mq.short]
        assert row["state"] == "contested"
        assert row["owner"] == holder(sim, mq)[0]
        assert set(row["predicted"]) == {A, B}
    for mq in set(mq_all) - avg - circle:
        assert rows(d)[mq.short]["state"] == "unowned"
    assert d["summary"]["contested"] == len(avg & circle)
    assert d["summary"]["unowned"] == len(set(mq_all) - avg - circle)
    assert any("allocation views differ" in h for h in d["hints"])


def test_duplicate_client_id_is_contested(cli, sim_factory, tmp_path):
    sim = sim_factory(scenario([{"id": A, "addr": "10.1.0.1:50001"},
                                {"id": A, "addr": "10.1.0.9:50002"}, {"id": B}]))
    sim.advance(5)
    d = show(cli, sim, tmp_path).json
    a_rows = [q for q in d["queues"] if q["owner"] == A]
    assert a_rows and {q["state"] for q in a_rows} == {"contested"}
    assert {q["state"] for q in d["queues"] if q["owner"] == B} == {"held"}
    assert "2 processes" in a_rows[0]["hint"]


def test_watch_count(cli, sim, tmp_path):
    sim.advance(5)
    r = show(cli, sim, tmp_path, "--watch", "0.1", "--count", "2", fmt="plain")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.count("# locks of GID_ORDER") == 2
    assert_read_only(sim)

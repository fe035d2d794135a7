"""The whole-group view: predicted owners, remembered claims, the state file (pure + files)."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from locks.helpers import AVG, CIRCLE, NOW, capture, mq, pq, queues, running
from mqctl.allocate import allocate_group
from mqctl.errors import RefusedError
from mqctl.locks import (
    BROKER_LEASE_MS,
    RENEW_INTERVAL_MS,
    LockState,
    LockStore,
    StoredClient,
    build_view,
    default_state_dir,
    ensure_lockable,
    group_kind,
    merge_state,
    namesrv_hash,
    predict_owners,
)

QS = queues(4)  # broker-a:0..3, broker-b:0..3


def healthy_tables(now: int = NOW, age: int = 2000) -> dict[str, dict]:
    share = allocate_group("AVG", QS, ["a@1", "b@2"])
    return {cid: {q: pq(True, age, now=now) for q in qs} for cid, qs in share.items()}


def view_of(clients, *, now=NOW, previous=None, **kw):
    m = capture(clients, **kw)
    return build_view(m, now=now, queues_by_topic={"T": QS}, previous=previous)


def test_healthy_group_all_held_with_predicted_owner_equal_to_claimer():
    t = healthy_tables()
    view, state = view_of({"a@1": running(t["a@1"]), "b@2": running(t["b@2"])})
    assert view.kind == "orderly" and view.online
    assert view.summary()["held"] == 8
    assert sum(view.summary().values()) == 8
    for q in view.queues:
        assert q.predicted == (q.owner,)
    assert view.hints() == []
    assert set(state) == {"a@1", "b@2"}
    assert all(st.observed_ts == NOW for st in state.values())
    a = next(c for c in view.clients if c.client_id == "a@1")
    assert (a.claimed, a.locked, a.answered, a.strategy) == (4, 4, True, "AVG")


def test_split_strategies_give_contested_and_lock_failed_queues():
    # a@1 allocates with AVG, b@2 with AVG_BY_CIRCLE: their shares overlap and leave gaps
    avg = allocate_group("AVG", QS, ["a@1", "b@2"])["a@1"]
    circle = allocate_group("AVG_BY_CIRCLE", QS, ["a@1", "b@2"])["b@2"]
    both = set(avg) & set(circle)
    neither = set(QS) - set(avg) - set(circle)
    assert both and neither  # the scenario really splits
    ta = {q: pq(True, 1000) for q in avg}
    tb = {q: pq(q not in both, 1000) for q in circle}  # b fails the overlapping ones
    view, _ = view_of({"a@1": running(ta, strategy=AVG), "b@2": running(tb, strategy=CIRCLE)})
    by = {q.mq: q for q in view.queues}
    for q in both:
        assert by[q].state is LockState.CONTESTED
        assert set(by[q].predicted) == {"a@1", "b@2"}
    for q in neither:
        assert by[q].state is LockState.UNOWNED
        assert by[q].predicted == ()
    assert view.summary()["contested"] == len(both)
    assert view.summary()["unowned"] == len(neither)


def test_unanswered_client_is_listed_and_its_assignment_unknown():
    t = healthy_tables()
    view, state = view_of({"a@1": running(t["a@1"]), "b@2": "timeout after 5.0s"})
    assert [c.client_id for c in view.unanswered] == ["b@2"]
    assert view.unanswered[0].error == "timeout after 5.0s"
    by = {q.mq: q for q in view.queues}
    for q in t["b@2"]:
        assert by[q].state is LockState.UNKNOWN
        assert by[q].owner == "b@2"
    assert "b@2" not in state  # nothing known about it yet


def test_client_that_stops_answering_keeps_its_claims_hung_then_unknown():
    """b@2 hangs: still a member, still assigned its queues, so nobody else asks for them
    (hung, not stale: its lease blocks nobody). It would be dropped between 90 s after its last
    answer and 130 s after the first unanswered request; still listed after that, it heartbeats
    and is not frozen: unknown."""
    t = healthy_tables(age=1000)
    v1, s1 = view_of({"a@1": running(t["a@1"]), "b@2": running(t["b@2"])})
    assert v1.summary()["held"] == 8
    # 10 s later b@2 hangs: still a member, does not answer
    now2 = NOW + 10_000
    v2, s2 = view_of({"a@1": running(healthy_tables(now2)["a@1"]), "b@2": "timeout"},
                     now=now2, previous=s1)
    by = {q.mq: q for q in v2.queues}
    for q in t["b@2"]:
        assert (by[q].state, by[q].owner) == (LockState.HUNG, "b@2")
        assert by[q].frees_at == NOW - 30_000 + 120_000         # the earliest drop
        assert by[q].to_dict()["frees_at_latest_ts"] == now2 + 130_000 + 40_000
        assert by[q].to_dict()["source"] == "unknown"
    assert s2["b@2"].observed_ts == NOW and s2["b@2"].silent_ts == now2
    # 2 minutes later: lease lapsed, b@2 still a member, within the drop window: still hung
    now3 = NOW + 120_000
    v3, s3 = view_of({"a@1": running(healthy_tables(now3)["a@1"]), "b@2": "timeout"},
                     now=now3, previous=s2)
    for q in t["b@2"]:
        assert {x.mq: x for x in v3.queues}[q].state is LockState.HUNG
    assert "b@2" in s3
    assert any("state file" in n for n in v3.notes)
    # past the latest drop (now2 + 130 s) and still listed: not frozen -> unknown
    now4 = now2 + 130_001
    v4, _ = view_of({"a@1": running(healthy_tables(now4)["a@1"]), "b@2": "timeout"},
                    now=now4, previous=s3)
    for q in t["b@2"]:
        assert {x.mq: x for x in v4.queues}[q].state is LockState.UNKNOWN


def test_crashed_client_that_left_the_group_makes_its_queues_stale_then_is_pruned():
    t = healthy_tables(age=5000)
    _, s1 = view_of({"a@1": running(t["a@1"]), "b@2": running(t["b@2"])})
    # b@2 crashed: the broker dropped it at once, a@1 is now assigned everything but the
    # locks of b@2's queues still run on the broker: a@1 cannot lock them
    now2 = NOW + 20_000
    share = allocate_group("AVG", QS, ["a@1"])["a@1"]
    ta = {q: pq(True, 1000, now=now2) for q in share if q in t["a@1"]}
    v2, s2 = view_of({"a@1": running(ta)}, now=now2, previous=s1)
    by = {q.mq: q for q in v2.queues}
    for q in t["b@2"]:
        assert by[q].state is LockState.STALE
        assert by[q].owner == "b@2"
        assert by[q].frees_at == NOW - 5000 + BROKER_LEASE_MS
        assert by[q].predicted == ("a@1",)
    gone = next(c for c in v2.clients if c.client_id == "b@2")
    assert (gone.member, gone.answered) == (False, False)
    assert "b@2" in s2 and s2["b@2"].gone_ts == now2
    # 60 s after its last reported renewal: b@2 was alive at NOW and first found gone at
    # now2, so it may have renewed once more (every 20 s: at NOW + 15 s) before it left
    later = NOW - 5000 + RENEW_INTERVAL_MS + BROKER_LEASE_MS
    now3 = NOW - 5000 + BROKER_LEASE_MS + 1
    v3, s3 = view_of({"a@1": running(ta)}, now=now3, previous=s2)
    for q in t["b@2"]:
        x = {x.mq: x for x in v3.queues}[q]
        assert (x.state, x.frees_at, x.lease_end) == (LockState.STALE, later, later)
    assert s3["b@2"].gone_ts == now2          # the first time it was found gone is kept
    # after the latest possible lease end: b@2 is forgotten; a@1 has not locked yet
    now3 = later + 1
    v3, s3 = view_of({"a@1": running(ta)}, now=now3, previous=s3)
    assert "b@2" not in s3
    for q in t["b@2"]:
        assert {x.mq: x for x in v3.queues}[q].state is LockState.LOCK_FAILED
    assert all(c.client_id != "b@2" for c in v3.clients)


def test_duplicate_client_id_contests_all_its_queues():
    t = allocate_group("AVG", QS, ["a@1", "a@1", "b@2"])
    tables = {cid: {q: pq() for q in qs} for cid, qs in t.items()}
    view, _ = view_of({"a@1": running(tables["a@1"]), "b@2": running(tables["b@2"])},
                      members=["a@1", "b@2"], connections={"a@1": 2})
    states = {q.mq: q.state for q in view.queues}
    assert {states[q] for q in tables["a@1"]} == {LockState.CONTESTED}
    assert {states[q] for q in tables["b@2"]} == {LockState.HELD}
    # cidAll keeps the duplicate: b@2 gets the third share (8 queues / 3 = 3, 3, 2), as in Java
    assert sorted(tables["b@2"]) == [mq("broker-b:2"), mq("broker-b:3")]
    assert {q.predicted for q in view.queues if q.mq in tables["b@2"]} == {("b@2",)}


def test_predict_owners_skips_unsubscribed_topics_and_reports_unreplayable_strategies():
    qs2 = queues(2, topic="U")
    pred, notes = predict_owners({"T": QS, "U": qs2}, ["a@1", "b@2"],
                                 {"a@1": "AVG", "b@2": "CONFIG"},
                                 {"a@1": {"T"}, "b@2": None})
    assert all(mq_.topic == "T" for mq_ in pred)  # a@1 not subscribed to U, b@2 unreplayable
    assert {c for cs in pred.values() for c in cs} == {"a@1"}
    assert len(notes) == 1 and "CONFIG" in notes[0]


def test_group_kinds_and_refusals():
    t = healthy_tables()
    assert group_kind(capture({})) == "offline"
    conc = capture({"a@1": running({}, orderly=False)})
    assert group_kind(conc) == "concurrent"
    bc = capture({"a@1": running({}, orderly=True)}, model="BROADCASTING")
    assert group_kind(bc) == "broadcasting"
    pop = capture({"a@1": running({}, orderly=False)}, consume_type="CONSUME_POP")
    assert group_kind(pop) == "pop"
    assert group_kind(capture({"a@1": "timeout"})) == "unknown"
    assert group_kind(capture({"a@1": running(t["a@1"])})) == "orderly"
    for m, word in ((conc, "concurrently"), (bc, "BROADCASTING"), (pop, "pop")):
        view, _ = build_view(m, now=NOW, queues_by_topic={"T": QS})
        with pytest.raises(RefusedError) as ei:
            ensure_lockable(view)
        assert word in ei.value.message
        assert ei.value.exit_code == 6
    view, _ = build_view(capture({"a@1": running(t["a@1"])}), now=NOW,
                         queues_by_topic={"T": QS})
    ensure_lockable(view)  # orderly: no error


def test_offline_group_says_so_and_keeps_stale_claims():
    t = healthy_tables(age=1000)
    _, s1 = view_of({"a@1": running(t["a@1"]), "b@2": running(t["b@2"])})
    view, _ = build_view(capture({}), now=NOW + 5000, queues_by_topic={"T": QS}, previous=s1)
    assert view.kind == "offline" and not view.online
    assert any("offline" in n for n in view.notes)
    assert view.summary()["stale"] == 8


def test_unread_member_list_is_not_offline():
    """A broker whose member list was not read may list a client: the group is not
    'offline' (no false offline), its kind and online state are unknown."""
    from dataclasses import replace

    from mqctl.admin import BrokerFailure
    from mqctl.errors import BrokerError

    m = capture({})
    failure = BrokerFailure("broker-b", "127.0.0.1:10921", BrokerError(16, "no permission"))
    m = replace(m, members={"broker-a": [], "broker-b": failure}, failures=[failure])
    assert group_kind(m) == "unknown"
    view, _ = build_view(m, now=NOW, queues_by_topic={"T": QS})
    assert view.online is None and view.kind == "unknown"
    assert not any("is offline" in n for n in view.notes)
    assert view.to_dict()["online"] is None


# ------------------------------------------------------------------ state file


def test_merge_state_rules():
    q = mq("broker-a:0")
    from mqctl.locks import Claim

    def st(cid, ts, age):
        return StoredClient(cid, ts, (Claim(cid, q, True, NOW - age, live=False,
                                            observed_ts=ts),))

    prev = {"keep-member": st("keep-member", NOW - 999_999, 500_000),
            "lease-runs": st("lease-runs", NOW - 1000, 30_000),
            "gone": st("gone", NOW - 1000, 61_000),
            "fresh": st("fresh", NOW - 1000, 1000)}
    new = {"fresh": st("fresh", NOW, 0)}
    out = merge_state(prev, new, members={"keep-member", "fresh"}, now=NOW)
    assert set(out) == {"keep-member", "lease-runs", "fresh"}
    assert out["fresh"].observed_ts == NOW
    week = 8 * 24 * 3600 * 1000
    old = {"keep-member": st("keep-member", NOW - week, 1000)}
    assert merge_state(old, {}, members={"keep-member"}, now=NOW) == {}


def test_store_round_trip_atomic_and_per_namesrv(tmp_path):
    t = healthy_tables()
    _, state = view_of({"a@1": running(t["a@1"]), "b@2": running(t["b@2"])})
    store = LockStore(tmp_path, ["127.0.0.1:9876", "127.0.0.2:9876"])
    assert store.dir == tmp_path / namesrv_hash("127.0.0.2:9876;127.0.0.1:9876")
    store.save("GID_ORDER", state, NOW)
    assert os.listdir(store.dir) == ["GID_ORDER.json"]  # no temp file left behind
    doc = json.loads(store.path("GID_ORDER").read_text())
    assert doc["version"] == 1 and doc["group"] == "GID_ORDER"
    assert set(doc["clients"]) == {"a@1", "b@2"}
    back = store.load("GID_ORDER")
    assert set(back) == {"a@1", "b@2"}
    for cid in back:
        assert [c.mq for c in back[cid].claims] == [c.mq for c in state[cid].claims]
        assert [c.last_lock_ts for c in back[cid].claims] == \
               [c.last_lock_ts for c in state[cid].claims]
        assert all(not c.live for c in back[cid].claims)
    other = LockStore(tmp_path, "10.9.9.9:9876")
    assert other.load("GID_ORDER") == {}
    assert store.problems == []


def test_store_ignores_a_corrupt_file_with_a_note(tmp_path):
    store = LockStore(tmp_path, "127.0.0.1:9876")
    store.path("G").parent.mkdir(parents=True)
    store.path("G").write_text("{not json")
    assert store.load("G") == {}
    assert len(store.problems) == 1 and "unreadable" in store.problems[0]


def test_store_file_names_are_safe(tmp_path):
    store = LockStore(tmp_path, "127.0.0.1:9876")
    assert store.path("%RETRY%G|x").name == "%RETRY%G|x.json"
    p = store.path("../evil/G")
    assert p.parent == store.dir and "/" not in p.name and not p.name.startswith(".")


def test_mark_released_unlocks_the_remembered_claim(tmp_path):
    t = healthy_tables()
    _, state = view_of({"a@1": running(t["a@1"]), "b@2": running(t["b@2"])})
    store = LockStore(tmp_path, "127.0.0.1:9876")
    store.save("G", state, NOW)
    target = sorted(t["b@2"])[0]
    store.mark_released("G", "b@2", target, NOW + 1)
    back = store.load("G")
    assert {c.mq: c.locked for c in back["b@2"].claims}[target] is False
    assert sum(c.locked for c in back["b@2"].claims) == len(t["b@2"]) - 1


def test_default_state_dir_honours_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_state_dir() == tmp_path / "mqctl" / "locks"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert str(default_state_dir()).endswith(os.path.join(".cache", "mqctl", "locks"))


# ------------------------------------------------------------------ restarts
# A record is about one process: the member behind a client id now may be a new one (kill -9
# and a restart with the same id), which mqctl tells by its connections (203: clientAddr) or,
# when it answers, by PROP_CONSUMER_START_TIMESTAMP.

A1, A2 = "10.0.0.2:40001", "10.0.0.2:51234"


def _before_kill(age: int = 1000):
    t = healthy_tables(age=age)
    _, s1 = view_of({"a@1": running(t["a@1"], start_ts=NOW - 600_000),
                     "b@2": running(t["b@2"], start_ts=NOW - 500_000)},
                    addrs={"a@1": "10.0.0.1:40000", "b@2": A1})
    return t, s1


def _assert_fresh(v, t_b, why: str):
    by = {q.mq: q for q in v.queues}
    for q in t_b:
        x = by[q]
        assert (x.state, x.owner) == (LockState.UNKNOWN, "b@2"), x.reason
        assert x.claims == () and x.lock_age_ms is None and x.lease_end is None
        assert "lapsed" not in x.hint and "last seen" not in x.hint
        assert why in x.hint
    b = next(c for c in v.clients if c.client_id == "b@2")
    assert (b.member, b.answered, b.claimed, b.last_seen_ts) == (True, False, 0, None)
    assert why in (b.reconnected or "")
    assert any(n.startswith("b@2 ") and why in n for n in v.notes)


def test_restarted_member_with_a_new_connection_gets_none_of_the_old_process_claims():
    t, s1 = _before_kill()
    # killed, restarted with the same id (new connection), then hung: it does not answer
    now = NOW + 150_000
    v, s2 = view_of({"a@1": running(healthy_tables(now)["a@1"]), "b@2": "timeout"}, now=now,
                    previous=s1, addrs={"a@1": "10.0.0.1:40000", "b@2": A2})
    _assert_fresh(v, t["b@2"], "has connected anew since")
    why = next(c for c in v.clients if c.client_id == "b@2").reconnected or ""
    assert f"its connection {A1} is no longer listed (now {A2})" in why
    assert "since mqctl last saw it answer at" in why
    assert "b@2" not in s2                       # the old process's record is dropped
    # the next run: nothing of it comes back
    v3, _ = view_of({"a@1": running(healthy_tables(now + 20_000)["a@1"]), "b@2": "timeout"},
                    now=now + 20_000, previous=s2, addrs={"b@2": A2})
    assert all(q.claims == () for q in v3.queues if q.owner == "b@2")


def test_a_restart_while_its_old_lease_runs_is_not_stale_either():
    # restarted 20 s after the kill: the old record's lease (NOW - 1 s + 60 s) still runs,
    # but the broker gives it to the new process (same client id: tryLockBatch isLocked)
    t, s1 = _before_kill()
    now = NOW + 30_000
    v, _ = view_of({"a@1": running(healthy_tables(now)["a@1"]), "b@2": "timeout"}, now=now,
                   previous=s1, addrs={"b@2": A2})
    _assert_fresh(v, t["b@2"], "has connected anew since")
    assert v.summary()["stale"] == 0


def test_a_member_found_gone_before_is_a_new_connection_when_it_is_back():
    t, s1 = _before_kill()
    now2 = NOW + 30_000                         # killed: gone
    _, s2 = view_of({"a@1": running(healthy_tables(now2)["a@1"])}, now=now2, previous=s1)
    assert s2["b@2"].gone_ts == now2
    now3 = NOW + 150_000                        # restarted and hung; no clientAddr read
    v, s3 = view_of({"a@1": running(healthy_tables(now3)["a@1"]), "b@2": "timeout"},
                    now=now3, previous=s2)
    _assert_fresh(v, t["b@2"], "left the group")
    assert "b@2" not in s3


@pytest.mark.parametrize("addrs", [A1, f"{A1},10.0.0.2:40555", "", None])
def test_the_same_connection_or_no_evidence_keeps_the_record(addrs):
    # still listed on a recorded connection (another broker's may be new), or no clientAddr
    # read, or a state file written before clientAddrs existed: the hung client's claims stay
    t, s1 = _before_kill()
    if addrs is None:   # a state file written before clientAddrs existed
        s1 = {cid: replace(st, addrs=()) if st.addrs else st for cid, st in s1.items()}
        addrs = A2
    now = NOW + 10_000
    v, s2 = view_of({"a@1": running(healthy_tables(now)["a@1"]), "b@2": "timeout"}, now=now,
                    previous=s1, addrs={"b@2": addrs})
    for q in t["b@2"]:
        x = {x.mq: x for x in v.queues}[q]
        assert (x.state, x.owner) == (LockState.HUNG, "b@2")
        assert x.subject is not None and x.subject.last_lock_ts > 0   # its recorded claim
    assert next(c for c in v.clients if c.client_id == "b@2").reconnected is None
    assert s2["b@2"].observed_ts == NOW


def test_a_restart_that_answers_is_named_by_its_new_start_time():
    t, s1 = _before_kill()
    now = NOW + 150_000
    tb = {q: pq(True, 2000, now=now) for q in t["b@2"]}
    v, s2 = view_of({"a@1": running(healthy_tables(now)["a@1"], start_ts=NOW - 600_000),
                     "b@2": running(tb, start_ts=now - 5_000)}, now=now, previous=s1,
                    addrs={"b@2": A2})
    b = next(c for c in v.clients if c.client_id == "b@2")
    assert b.start_ts == now - 5_000 and b.answered
    assert "restarted at" in b.reconnected and "PROP_CONSUMER_START_TIMESTAMP" in b.reconnected
    assert next(c for c in v.clients if c.client_id == "a@1").reconnected is None
    for q in t["b@2"]:
        x = {x.mq: x for x in v.queues}[q]
        assert (x.state, x.lock_age_ms) == (LockState.HELD, 2000)   # the new process's
    assert s2["b@2"].start_ts == now - 5_000 and s2["b@2"].addrs == (A2,)


def test_store_round_trip_keeps_the_process_identity(tmp_path):
    _, s1 = _before_kill()
    assert s1["b@2"].addrs == (A1,) and s1["b@2"].start_ts == NOW - 500_000
    store = LockStore(tmp_path, "127.0.0.1:9876")
    store.save("G", s1, NOW)
    doc = json.loads(store.path("G").read_text())
    assert doc["clients"]["b@2"]["clientAddrs"] == [A1]
    assert doc["clients"]["b@2"]["startTs"] == NOW - 500_000
    back = store.load("G")
    assert (back["b@2"].addrs, back["b@2"].start_ts) == ((A1,), NOW - 500_000)

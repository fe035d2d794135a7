"""Every queue state and the precedence between them, from hand-built claims (pure)."""

from __future__ import annotations

import pytest

from locks.helpers import NOW, mq
from mqctl.locks import (
    BROKER_LEASE_MS,
    CLIENT_TRUST_MS,
    PRECEDENCE,
    RENEW_INTERVAL_MS,
    RENEW_SLACK_MS,
    Claim,
    LockState,
    classify_queue,
)

Q = mq("broker-a:3")


def claim(cid: str, *, locked: bool = True, age: int | None = 1000, live: bool = True,
          member: bool = True, dropped: bool = False, tries: int = 0,
          orderly: bool | None = True, observed_age: int = 0) -> Claim:
    return Claim(cid, Q, locked, (NOW - age) if age is not None else 0, tries, dropped, live,
                 NOW - observed_age, member, orderly)


def classify(claims, predicted=(), answered=None, connections=None):
    if answered is None:
        answered = {c.client_id for c in claims if c.live} | set(predicted)
    return classify_queue(Q, claims, predicted, now=NOW, answered=answered,
                          connections=connections, group="G")


def test_precedence_order_is_documented_order():
    assert [s.value for s in PRECEDENCE] == ["contested", "hung", "stale", "lock-failed",
                                            "expiring", "held", "unknown", "unowned"]


def test_held_fresh_lock():
    q = classify([claim("a@1", age=3000)], predicted=["a@1"])
    assert q.state is LockState.HELD
    assert q.owner == "a@1"
    assert q.locked is True and q.trusted is True
    assert q.lock_age_ms == 3000
    assert q.lease_end == NOW - 3000 + BROKER_LEASE_MS
    assert q.lease_left_ms == BROKER_LEASE_MS - 3000
    assert q.hint is None


@pytest.mark.parametrize("age,state", [
    (RENEW_INTERVAL_MS, LockState.HELD),
    (RENEW_INTERVAL_MS + RENEW_SLACK_MS, LockState.HELD),          # exactly at the slack edge
    (RENEW_INTERVAL_MS + RENEW_SLACK_MS + 1, LockState.EXPIRING),  # renewal overdue
    (CLIENT_TRUST_MS, LockState.EXPIRING),
    (CLIENT_TRUST_MS + 1, LockState.EXPIRING),                     # not trusted, lease runs
    (BROKER_LEASE_MS, LockState.EXPIRING),                         # lease: now - ts > 60000
    (BROKER_LEASE_MS + 1, LockState.LOCK_FAILED),                  # lease lapsed
])
def test_live_lock_age_edges(age, state):
    q = classify([claim("a@1", age=age)], predicted=["a@1"])
    assert q.state is state, q.reason
    assert q.lock_age_ms == age


@pytest.mark.parametrize("age,trusted", [(CLIENT_TRUST_MS - 1, True), (CLIENT_TRUST_MS, True),
                                         (CLIENT_TRUST_MS + 1, False)])
def test_client_trust_edge_is_exactly_30s(age, trusted):
    # ProcessQueue.isLockExpired(): now - lastLockTimestamp > 30000
    assert claim("a@1", age=age).trusted(NOW) is trusted


@pytest.mark.parametrize("age,runs", [(BROKER_LEASE_MS - 1, True), (BROKER_LEASE_MS, True),
                                      (BROKER_LEASE_MS + 1, False)])
def test_broker_lease_edge_is_exactly_60s(age, runs):
    # RebalanceLockManager.LockEntry.isExpired(): now - lastUpdateTimestamp > 60000
    assert claim("a@1", age=age).lease_runs(NOW) is runs


def test_expiring_hint_names_untrusted_and_lease_end():
    q = classify([claim("a@1", age=40_000)], predicted=["a@1"])
    assert q.state is LockState.EXPIRING
    assert q.trusted is False
    assert "no longer trusts" in q.hint
    assert q.lease_left_ms == 20_000


def test_stale_crashed_owner_with_free_up_time():
    gone = claim("dead@7", age=15_000, live=False, member=False, observed_age=10_000)
    q = classify([gone], predicted=["b@2"], answered={"b@2"})
    assert q.state is LockState.STALE
    assert q.owner == "dead@7"
    assert q.frees_at == NOW - 15_000 + BROKER_LEASE_MS
    assert "blocked until" in q.hint and "dead@7 stopped renewing" in q.hint
    assert "no longer a member" in q.hint
    assert "mqctl locks release --group G --queue broker-a:3 --topic T --execute" in q.hint
    assert "then b@2 can lock it" in q.hint
    assert q.to_dict()["source"] == "unknown"


@pytest.mark.parametrize("age,state", [(BROKER_LEASE_MS, LockState.STALE),
                                       (BROKER_LEASE_MS + 1, LockState.LOCK_FAILED)])
def test_stale_until_exactly_60s_then_the_assigned_client_is_lock_failed(age, state):
    gone = claim("dead@7", age=age, live=False, member=False)
    q = classify([gone], predicted=["b@2"], answered={"b@2"})
    assert q.state is state


def test_hung_member_that_is_the_predicted_owner_is_hung_not_stale():
    """A member that answered before (its claim is remembered) and does not answer now, still
    assigned the queue: nobody else asks for the lock, so its running lease blocks nobody and a
    release frees nobody (real 4.9.3/5.3.3 lock-crash/pause_*). It moves when the brokers drop
    the member: 120 s after its last heartbeat, which came at most 30 s before its last answer
    and no later than the first unanswered request (here: this run)."""
    hung = claim("hung@3", age=30_000, live=False, member=True, observed_age=25_000)
    q = classify([hung], predicted=["hung@3"], answered=set())
    assert (q.state, q.owner) == (LockState.HUNG, "hung@3")
    assert "does not answer" in q.reason and "nobody else asks" in q.reason
    last_answer = NOW - 25_000
    assert q.hung is not None
    assert q.hung.last_heartbeat == (last_answer - 30_000, NOW)
    assert q.hung.dropped == (last_answer - 30_000 + 120_000, NOW + 130_000)
    # FREES AT: the earliest drop (its lease, NOW + 30 s, ends before that), not the lease end
    assert q.frees_at == last_answer + 90_000
    assert q.to_dict()["frees_at_latest_ts"] == NOW + 130_000 + 40_000
    assert "--execute" not in q.hint and "frees nobody" in q.hint
    assert "re-locks it when it resumes" in q.hint
    note = q.hung.text(1)
    assert "lock expired, I got it" in note and "heartbeats every 30 s" in note
    # LEASE LEFT is its own lease (30 s), not the time to the drop
    assert q.lease_left_ms == 30_000


def test_hung_member_keeps_the_queue_after_its_lease_lapsed():
    hung = claim("hung@3", age=90_000, live=False, member=True, observed_age=80_000)
    q = classify([hung], predicted=["hung@3"], answered=set())
    assert (q.state, q.owner) == (LockState.HUNG, "hung@3")
    assert q.lease_left_ms == 0 and "lapsed at" in q.hint
    assert q.frees_at == NOW - 80_000 + 90_000


def test_member_still_listed_after_the_latest_drop_heartbeats_so_it_is_unknown_not_hung():
    """Silent for 150 s and still a member: a frozen client would have been dropped (at the
    latest 130 s after the first unanswered request): it heartbeats, its answers do not come
    back (the 4.9.3 client stalled ~40 s whose 307 timed out kept its queues)."""
    hung = claim("hung@3", age=160_000, live=False, member=True, observed_age=160_000)
    hung = Claim(**{**{f: getattr(hung, f) for f in hung.__slots__}, "silent_ts": NOW - 150_000})
    q = classify([hung], predicted=["hung@3"], answered=set())
    assert (q.state, q.owner) == (LockState.UNKNOWN, "hung@3")
    assert "heartbeats" in q.reason and "not hung" in q.reason


def test_silent_member_blocks_an_answering_assigned_client_stale():
    """The allocation gives the queue to an answering client, which asks for the lock: a
    running lease of the silent member that held it is stale (a release lets b@2 lock it)."""
    hung = claim("hung@3", age=30_000, live=False, member=True, observed_age=25_000)
    q = classify([hung], predicted=["b@2"], answered={"b@2"})
    assert (q.state, q.owner) == (LockState.STALE, "hung@3")
    assert "--execute" in q.hint and q.frees_at == NOW + 30_000


def test_unknown_when_the_assigned_member_never_answered():
    q = classify([], predicted=["old@9"], answered=set())
    assert q.state is LockState.UNKNOWN
    assert q.owner == "old@9"


def test_contested_two_claimers():
    q = classify([claim("a@1", age=2000), claim("b@2", locked=False, age=5000)],
                 predicted=["a@1", "b@2"])
    assert q.state is LockState.CONTESTED
    assert q.owner == "a@1"  # the one whose lease runs
    assert set(q.to_dict()["claimants"]) == {"a@1", "b@2"}
    assert "claimed by 2 clients" in q.hint


def test_contested_duplicate_client_id():
    q = classify([claim("a@1")], predicted=["a@1"], connections={"a@1": 2})
    assert q.state is LockState.CONTESTED
    assert "2 processes" in q.hint


def test_lock_failed_claimed_not_locked():
    q = classify([claim("a@1", locked=False, age=70_000)], predicted=["a@1"])
    assert q.state is LockState.LOCK_FAILED
    assert q.locked is False
    assert "not locked" in q.hint


def test_lock_failed_assigned_but_not_claimed():
    q = classify([], predicted=["b@2"], answered={"b@2"})
    assert q.state is LockState.LOCK_FAILED
    assert q.owner == "b@2"


def test_lock_failed_names_a_releasing_holder():
    old = claim("a@1", age=4000, dropped=True, tries=3)
    q = classify([old, claim("b@2", locked=False)], predicted=["b@2"])
    assert q.state is LockState.LOCK_FAILED
    assert "a@1 still holds it while releasing it (unlock tried 3x)" in q.hint


def test_lock_failed_concurrent_claimer_in_orderly_group():
    q = classify([claim("c@1", locked=False, orderly=False)], predicted=["c@1"])
    assert q.state is LockState.LOCK_FAILED
    assert "concurrently" in q.reason


def test_unowned():
    q = classify([], predicted=[], answered={"a@1"})
    assert q.state is LockState.UNOWNED
    assert q.owner is None and q.locked is None


# ------------------------------------------------------------------ precedence between states


def test_contested_beats_stale():
    gone = claim("dead@7", age=10_000, live=False, member=False)
    q = classify([gone, claim("a@1", locked=False), claim("b@2", locked=False)],
                 predicted=["a@1"])
    assert q.state is LockState.CONTESTED


def test_stale_beats_lock_failed():
    # b@2 last had the lock 30 s ago; dead@7 renewed after that (10 s ago): b@2's renewals
    # are refused while dead@7's lease runs (was b@2 not locked 1 s ago, i.e. a
    # lock granted 1 s ago, which is not refused but later than the departed holder's: 4d)
    gone = claim("dead@7", age=10_000, live=False, member=False)
    q = classify([gone, claim("b@2", locked=False, age=30_000)], predicted=["b@2"])
    assert q.state is LockState.STALE
    assert q.owner == "dead@7"


def test_live_lease_supersedes_remembered_claims():
    gone = claim("dead@7", age=10_000, live=False, member=False)
    q = classify([gone, claim("b@2", age=2000)], predicted=["b@2"])
    assert q.state is LockState.HELD
    assert q.owner == "b@2"


def test_lock_failed_beats_expiring_and_unknown():
    silent = claim("hung@3", age=120_000, live=False, member=True)
    q = classify([silent], predicted=["b@2", "hung@3"], answered={"b@2"})
    assert q.state is LockState.LOCK_FAILED


def test_held_beats_unknown():
    silent = claim("hung@3", age=120_000, live=False, member=True)
    q = classify([silent, claim("b@2", age=1000)], predicted=["b@2"])
    assert q.state is LockState.HELD


def test_expiring_beats_held_is_per_claimer_and_dropped_claims_do_not_count():
    q = classify([claim("a@1", age=26_000), claim("b@2", age=1000, dropped=True)],
                 predicted=["a@1"])
    assert q.state is LockState.EXPIRING
    assert q.owner == "a@1"


def test_future_timestamp_clamps_age_to_zero():
    q = classify([claim("a@1", age=-5000)], predicted=["a@1"])
    assert q.state is LockState.HELD
    assert q.lock_age_ms == 0


def test_contested_split_views_one_holds_the_other_is_assigned():
    q = classify([claim("a@1", age=2000)], predicted=["a@1", "b@2"], answered={"a@1", "b@2"})
    assert q.state is LockState.CONTESTED
    assert q.owner == "a@1"
    assert "b@2 (assigned, not holding it)" in q.reason


def test_handover_in_progress_is_not_contested():
    # the allocation moved the queue to b@2, a@1 still holds it until its next rebalance
    q = classify([claim("a@1", age=2000)], predicted=["b@2"], answered={"a@1", "b@2"})
    assert q.state is LockState.HELD
    assert "now assigns it to b@2" in q.reason


# ------------------------------------------------------------------ evidence
# A later grant outranks an earlier claim, whatever its source: the broker grants a lock only
# when it is free, expired or the requester's (RebalanceLockManager.tryLockBatch), and a
# graceful stop frees it at once (ConsumeMessageOrderlyService.shutdown -> unlockAll).


def test_graceful_stop_the_survivors_grant_outranks_the_departed_holders_claim():
    # real 4.9.3: the holder renewed at 02:02:50 and stopped; the broker gave the survivor its
    # queues at 02:03:00 (lock.log); mqctl said stale "blocked until 02:03:50" for 8 s
    gone = claim("stopped@1", age=12_000, live=False, member=False, observed_age=15_000)
    survivor = claim("b@2", locked=False, age=2_000)     # 4.x: granted, marked at next lockAll
    q = classify([gone, survivor], predicted=["b@2"])
    assert q.state is LockState.LOCK_FAILED, q.reason
    assert q.owner == "b@2"
    assert q.frees_at is None
    assert "lock granted" in q.reason and "next lock cycle" in q.hint
    assert "locks release" not in q.hint
    by = {c["client_id"]: c for c in q.to_dict()["claims"]}
    assert by["stopped@1"]["superseded_by"] == "b@2"     # still shown, and why it does not count
    assert by["b@2"]["superseded_by"] is None


def test_graceful_stop_on_5x_the_survivor_holds_it_at_once():
    gone = claim("stopped@1", age=12_000, live=False, member=False)
    q = classify([gone, claim("b@2", age=2_000)], predicted=["b@2"])
    assert (q.state, q.owner) == (LockState.HELD, "b@2")


def test_a_grant_at_the_same_moment_is_not_later():
    gone = claim("dead@7", age=5_000, live=False, member=False)
    q = classify([gone, claim("b@2", locked=False, age=5_000)], predicted=["b@2"])
    assert (q.state, q.owner) == (LockState.STALE, "dead@7")


def test_a_hung_members_claim_is_not_stale_once_another_client_was_granted_the_lock():
    # the hung client renewed 25 s ago; the other client was granted the lock 3 s ago (the
    # brokers dropped the hung one and notified it): the hung client's lease ended by then
    hung = claim("hung@3", age=25_000, live=False, member=True, observed_age=24_000)
    q = classify([hung, claim("b@2", locked=False, age=3_000)], predicted=["b@2"],
                 answered={"b@2"})
    assert q.state is LockState.LOCK_FAILED and q.owner == "b@2"
    assert "locks release" not in q.hint


def test_a_remembered_claim_superseded_by_another_remembered_one_is_not_the_owner():
    old = claim("old@1", age=50_000, live=False, member=False, observed_age=45_000)
    new = claim("new@2", age=8_000, live=False, member=False, observed_age=5_000)
    q = classify([old, new], predicted=["b@2"], answered={"b@2"})
    assert (q.state, q.owner) == (LockState.STALE, "new@2")
    assert q.frees_at == NOW - 8_000 + BROKER_LEASE_MS


def test_a_concurrent_clients_locked_flag_is_no_grant():
    # 5.x creates every ProcessQueue with setLocked(true), also a concurrent consumer's: no
    # evidence that the broker took the departed holder's lock away
    gone = claim("dead@7", age=10_000, live=False, member=False)
    conc = claim("c@1", locked=True, age=2_000, orderly=False)
    q = classify([gone, conc], predicted=["c@1"])
    # ... and a concurrent consumer consumes without any lock: nothing blocks it
    assert (q.state, q.owner) == (LockState.LOCK_FAILED, "c@1")
    assert "concurrently" in q.reason
    assert conc.granted_ts is None
    assert q.to_dict()["claims"][1]["superseded_by"] is None


def test_a_4x_concurrent_claimer_is_not_blocked_by_a_departed_holder_either():
    gone = claim("dead@7", age=10_000, live=False, member=False)
    q = classify([gone, claim("c@1", locked=False, age=2_000, orderly=False)],
                 predicted=["c@1"])
    assert (q.state, q.owner) == (LockState.LOCK_FAILED, "c@1")
    assert "concurrently" in q.reason and "locks release" not in q.hint


def test_contested_owner_is_the_claimer_granted_last():
    # a@1 still reads locked (renewed 40 s ago); the broker granted b@2 the lock 2 s ago (4.x:
    # not marked yet): b@2 holds it, a@1's next lockAll fails
    q = classify([claim("a@1", age=40_000), claim("b@2", locked=False, age=2_000)],
                 predicted=["a@1", "b@2"])
    assert q.state is LockState.CONTESTED
    assert q.owner == "b@2"

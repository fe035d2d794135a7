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
    assert [s.value for s in PRECEDENCE] == ["contested", "stale", "lock-failed", "expiring",
                                            "held", "unknown", "unowned"]


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


def test_stale_hung_member_that_does_not_answer():
    hung = claim("hung@3", age=30_000, live=False, member=True, observed_age=25_000)
    q = classify([hung], predicted=["hung@3"], answered=set())
    assert q.state is LockState.STALE
    assert "does not answer" in q.reason
    assert q.frees_at == NOW + 30_000


def test_unknown_after_the_hung_members_lease_lapsed():
    hung = claim("hung@3", age=90_000, live=False, member=True, observed_age=80_000)
    q = classify([hung], predicted=["hung@3"], answered=set())
    assert q.state is LockState.UNKNOWN
    assert q.owner == "hung@3"
    assert "does not answer" in q.hint


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
    gone = claim("dead@7", age=10_000, live=False, member=False)
    q = classify([gone, claim("b@2", locked=False)], predicted=["b@2"])
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

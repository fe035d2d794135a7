"""Issue 14 item 4 (pure): a SIGSTOPped orderly client, replayed from the timeline the real
4.9.3 cluster recorded (../shared/samples/real/4.9.3/lock-crash).

Real timeline (all UTC): o2 (127.0.1.92@o2) renewed its locks every 20 s from 20:58:45.898 (its
lastLockTimestamp in the consumerStatus dump taken at 20:58:55), so its last renewal before the
SIGSTOP at 20:59:24.443 was 20:59:05.898; the broker expired that lock at 21:00:05.898. The
broker's idle check removed o2 from the group at 21:01:15.910 (o1 log: "receive broker's
notification") and o1 locked o2's queues at once (lock.log: "lock expired, I got it"), its
ProcessQueues being marked locked at its next lockAll (21:01:16.529).
mqctl ran every 20 s during the pause. Once o2 left, it must not find o2's lock "stale" again:
o2 answered nothing after its last answer, so it renewed nothing after it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from conftest import REAL_CORPUS

from locks.helpers import capture, pq, running
from mqctl.locks import (
    BROKER_LEASE_MS,
    RENEW_INTERVAL_MS,
    LockState,
    StoredClient,
    build_view,
    clock_text,
)
from mqctl.models import MessageQueue

REAL = REAL_CORPUS
LC = REAL / "4.9.3" / "lock-crash"
O1, O2 = "127.0.1.91@o1", "127.0.1.92@o2"
QS = [MessageQueue("LC_T", b, i) for b in ("broker-a", "broker-b") for i in range(4)]
A_QS, B_QS = QS[:4], QS[4:]

pytestmark = pytest.mark.skipif(not LC.is_dir(), reason="real corpus not available")


def _utc(text: str) -> int:
    text = text.replace(",", ".")
    dt = datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def timeline() -> dict[str, int]:
    """The moments of the corpus, read from its files."""
    acts = (LC / "actions.txt").read_text()
    stop = re.search(r"^(\S+)Z SIGSTOP lc-o2", acts, re.M)
    assert stop
    dump = (REAL / "4.9.3" / "mqadmin-outputs" / "consumerStatus_dump_files" / "1795467535243"
            / O2).read_text()
    lock0 = re.search(r"LC_T\s+broker-b\s+0\s+ProcessQueueInfo .*lastLockTimestamp=(\d{17})",
                      dump)
    assert lock0
    s = lock0.group(1)
    first_lock = _utc(f"{s[:4]}-{s[4:6]}-{s[6:8]} {s[8:10]}:{s[10:12]}:{s[12:14]}.{s[14:]}")
    log = (LC / "pause_other_o1_client.log").read_text()
    removed = re.search(r"^(\S+ \S+) INFO RocketmqClient - receive broker's notification", log,
                        re.M)
    assert removed
    locked = re.search(r"^(\S+ \S+) INFO RocketmqClient - the message queue locked OK, Group: "
                       r"LC_G MessageQueue \[topic=LC_T, brokerName=broker-b", log, re.M)
    assert locked
    t = {"stop": _utc(stop.group(1).replace("T", " ")), "first_lock": first_lock,
         "removed": _utc(removed.group(1)), "o1_locked": _utc(locked.group(1))}
    # lockAll every 20 s: o2's last renewal before the stop
    t["o2_last_lock"] = t["first_lock"] + (t["stop"] - t["first_lock"]) // 20_000 * 20_000
    return t


def test_the_corpus_timeline_is_what_the_docstring_says():
    t = timeline()
    assert t["o2_last_lock"] == _utc("2026-11-23 20:59:05.898")
    assert 110_000 < t["removed"] - t["stop"] < 112_000        # "about 111 s after SIGSTOP"
    assert t["o1_locked"] - t["removed"] < 1_000


def run(now: int, previous, *, o2: str, o1_b: dict | None = None, o1_lock: int):
    """One `mqctl locks show`: o1 always answers (broker-a queues, plus o2's once it left);
    o2 answers ("alive"), times out ("silent") or is no longer a member ("gone")."""
    t1 = {q: pq(True, now - o1_lock, now=now) for q in A_QS} | (o1_b or {})
    clients: dict = {O1: running(t1, topics=("LC_T",))}
    if o2 == "alive":
        clients[O2] = running({q: pq(True, now - timeline()["o2_last_lock"], now=now)
                               for q in B_QS}, topics=("LC_T",))
    elif o2 == "silent":
        clients[O2] = "timeout"
    m = capture(clients, group="LC_G", topics=("LC_T",))
    return build_view(m, now=now, queues_by_topic={"LC_T": QS}, previous=previous)


@pytest.mark.parametrize("takeover_s", [0, 20], ids=["notified", "next-rebalance"])
def test_hung_client_is_not_stale_again_after_the_broker_removed_it(takeover_s):
    """takeover_s: when o1 rebalances after o2 left. 0: at once (broker-a notified it, so it
    took LC_T's broker-b queues at 21:01:15.915); 20: at its next periodic rebalance (o1 took
    %RETRY%LC_G broker-b only at 21:01:35.925: broker-b had not notified it)."""
    t = timeline()
    lease_end = t["o2_last_lock"] + BROKER_LEASE_MS
    took = t["removed"] + takeover_s * 1000
    marked_at = t["o1_locked"] + takeover_s * 1000
    state: dict[str, StoredClient] = {}
    seen: list[tuple[int, dict]] = []
    # mqctl every 20 s from 1 s before the stop until o2 left, then often around the takeover
    runs = list(range(t["stop"] - 1_000, t["removed"], 20_000))
    runs += [t["removed"] + d for d in (300, 5_000, 10_000, 15_000, 19_500, 20_300, 40_000,
                                         60_000, 80_000)]
    for now in runs:
        if now < t["stop"]:
            o2, o1_b = "alive", None
        elif now < t["removed"]:
            o2, o1_b = "silent", None
        else:
            # o1 takes o2's queues; on 4.9.3 its ProcessQueues read locked=false until its
            # next lockAll
            o2 = "gone"
            marked = now >= marked_at
            o1_b = ({q: pq(marked, now - (marked_at if marked else took), now=now)
                     for q in B_QS} if now >= took else None)
        view, state = run(now, state, o2=o2, o1_b=o1_b, o1_lock=now - 3_000)
        seen.append((now, {q.mq: q for q in view.queues}))
    for at, by in seen:
        for q in B_QS:
            x = by[q]
            if at < t["stop"]:
                assert x.state is LockState.HELD and x.owner == O2
            elif at <= lease_end:
                # a silent member whose broker lease still runs blocks its queues
                assert (x.state, x.owner, x.frees_at) == (LockState.STALE, O2, lease_end)
            else:
                # the lease lapsed at lease_end and cannot have been renewed since: never
                # stale again, no FREES AT, no `locks release` advice
                assert x.state is not LockState.STALE, (at - t["stop"], x.reason)
                assert x.frees_at is None
                assert not (x.hint or "").count("locks release")
                if at >= t["removed"]:
                    assert x.owner == O1
        if at >= t["removed"]:
            assert O2 not in state or not state[O2].lease_may_run(at)
    # the runs did cover the window that used to go wrong
    assert any(at > t["removed"] for at, _ in seen)
    assert any(t["stop"] + BROKER_LEASE_MS < at < t["removed"] for at, _ in seen)


def test_crashed_client_seen_alive_then_gone_still_gets_the_renewals_it_may_have_made():
    """The other case must keep working: a client that answered, then crashed before the next
    run (never seen silent) may have renewed every 20 s until it left."""
    t = timeline()
    _, s1 = run(t["stop"] - 1_000, {}, o2="alive", o1_lock=t["stop"] - 4_000)
    now = t["stop"] + 60_000
    view, _ = run(now, s1, o2="gone", o1_lock=now - 3_000)
    x = {q.mq: q for q in view.queues}[B_QS[0]]
    assert x.state is LockState.STALE and x.owner == O2
    assert x.frees_at is not None and x.frees_at > t["o2_last_lock"] + BROKER_LEASE_MS


# ------------------------------------------------------------------ item 5: after a takeover


def test_takeover_on_4x_names_the_pending_lock_cycle_not_a_refusal():
    """4.9.3 creates the new owner's ProcessQueue only after lock() succeeded, so it reads
    locked=false (lastLockTimestamp = its creation) until the next lockAll: o1 logged `lock OK`
    at 21:01:15.915 and `locked OK` at 21:01:16.529 (pause_other_o1_client.log)."""
    t = timeline()
    now = t["removed"] + 300
    state: dict[str, StoredClient] = {}
    _, state = run(t["stop"] - 1_000, state, o2="alive", o1_lock=t["stop"] - 4_000)
    _, state = run(t["stop"] + 19_000, state, o2="silent", o1_lock=t["stop"] + 16_000)
    created = t["removed"] + 5
    view, _ = run(now, state, o2="gone", o1_lock=now - 3_000,
                  o1_b={q: pq(False, now - created, now=now) for q in B_QS})
    x = {q.mq: q for q in view.queues}[B_QS[0]]
    assert (x.state, x.owner) == (LockState.LOCK_FAILED, O1)
    assert "refused" not in x.hint
    assert "granted" in x.hint and "next lock cycle" in x.hint
    assert clock_text(created + RENEW_INTERVAL_MS) in x.hint      # marked by then
    assert "lock granted" in x.reason


def test_an_old_unlocked_claim_is_still_a_refused_renewal():
    t = timeline()
    now = t["removed"] + 300
    view, _ = run(now, {}, o2="gone", o1_lock=now - 3_000,
                  o1_b={q: pq(False, 45_000, now=now) for q in B_QS})
    x = {q.mq: q for q in view.queues}[B_QS[0]]
    assert x.state is LockState.LOCK_FAILED
    assert "refused" in x.hint and "granted" not in x.hint


def test_stale_hint_says_consumption_resumes_after_frees_at_not_at_it():
    """A crashed holder (kill -9: it left the group at once) blocks its queues until its lease
    ends; o1 then locks them at its next rebalance and, on 4.x, consumes after its next lockAll
    (4.9.3 kill: lock OK 20:58:04.5, locked OK 20:58:16.5)."""
    t = timeline()
    _, s1 = run(t["stop"] - 1_000, {}, o2="alive", o1_lock=t["stop"] - 4_000)
    view, _ = run(t["stop"] + 10_000, s1, o2="gone", o1_lock=t["stop"] + 7_000)
    x = {q.mq: q for q in view.queues}[B_QS[0]]
    assert (x.state, x.owner) == (LockState.STALE, O2)
    assert f"then {O1} can lock it" in x.hint
    assert "consumption resumes up to one rebalance and one lock cycle" in x.hint
    assert "not at it" in x.hint

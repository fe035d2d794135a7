"""A SIGSTOPped orderly client (pure), replayed from the timelines the real 4.9.3 and 5.3.3
clusters recorded (../shared/samples/real/<v>/lock-crash, README "SIGSTOP").

Real timeline (UTC), read from the files by :func:`timeline`:

* 4.9.3: o2 (127.0.1.92@o2) renewed its locks every 20 s from 20:58:45.898 (lastLockTimestamp
  in the consumerStatus dump taken at 20:58:55), so its last renewal before the SIGSTOP at
  20:59:24.443 was 20:59:05.898; its last heartbeat reached broker-a at 20:59:15.906
  (``lastUpdateTimestamp`` of the channel broker-a removed). The broker dropped o2 at
  21:01:15.9, 120 s after that heartbeat (o1 log: "receive broker's notification"), and o1
  locked o2's queues at once ("lock expired, I got it" in broker-b's lock.log), its
  ProcessQueues being marked locked at its next lockAll (21:01:16.529).
* 5.3.3: last renewal 20:59:34.756 (dump), SIGSTOP 20:59:53.073, last heartbeat
  20:59:44.772, dropped at 21:01:44.776 (120 s later), o1 locked at once (5.x creates the
  queue locked).

o2 stayed a member and the allocation kept its queues on it: o1 never asked for them while it
was listed (no lock attempt by o1 on broker-b until the drop), so this is a hung client, not
a stale lock: its lease (ending 60 s after its last renewal) blocked nobody, a release would
have freed nobody, and the queues moved 120 s after its last heartbeat. mqctl ran every 20 s
during the pause.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from conftest import REAL_CORPUS, needs_corpus

from locks.helpers import capture, pq, running
from mqctl.errors import RefusedError
from mqctl.locks import (
    BROKER_LEASE_MS,
    RENEW_INTERVAL_MS,
    LockState,
    StoredClient,
    build_view,
    clock_text,
    plan_release,
)
from mqctl.models import MessageQueue

REAL = REAL_CORPUS
QS = [MessageQueue("LC_T", b, i) for b in ("broker-a", "broker-b") for i in range(4)]
A_QS, B_QS = QS[:4], QS[4:]
IP = {"4.9.3": "127.0.1", "5.3.3": "127.0.2"}
RESTART_DUMP = {"4.9.3": "1795467535243", "5.3.3": "1795467583607"}
GMT8 = 8 * 3600 * 1000

pytestmark = needs_corpus(REAL / "4.9.3" / "lock-crash")
VERSIONS = pytest.mark.parametrize("v", ["4.9.3", "5.3.3"])


def ids(v: str) -> tuple[str, str]:
    return f"{IP[v]}.91@o1", f"{IP[v]}.92@o2"


def _utc(text: str) -> int:
    text = text.replace(",", ".")
    dt = datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def _client_ts(v: str, text: str) -> int:
    """A client log's time: 4.9.3 writes UTC, 5.3.3 GMT+8 (README, time zones)."""
    return _utc(text) - (GMT8 if v == "5.3.3" else 0)


def timeline(v: str) -> dict[str, int]:
    """The moments of the corpus, read from its files."""
    lc = REAL / v / "lock-crash"
    o2 = ids(v)[1]
    stop = re.search(r"^(\S+)Z SIGSTOP lc-o2", (lc / "actions.txt").read_text(), re.M)
    assert stop
    dump = (REAL / v / "mqadmin-outputs" / "consumerStatus_dump_files" / RESTART_DUMP[v]
            / o2).read_text()
    lock0 = re.search(r"LC_T\s+broker-b\s+0\s+ProcessQueueInfo .*lastLockTimestamp=(\d{17})",
                      dump)
    assert lock0
    s = lock0.group(1)
    first_lock = _utc(f"{s[:4]}-{s[4:6]}-{s[6:8]} {s[8:10]}:{s[10:12]}:{s[12:14]}.{s[14:]}")
    broker = (lc / "pause_broker-a_broker_log_grep.log").read_text()
    hb = re.search(rf"remove not active channel\[.*clientId={re.escape(o2)}, .*"
                   r"lastUpdateTimestamp=(\d+)\]", broker)
    assert hb
    log = (lc / "pause_other_o1_client.log").read_text()
    removed = re.search(r"^(\S+ \S+) INFO .*receive broker's notification", log, re.M)
    assert removed
    marked = (r"the message queue locked OK, Group: LC_G" if v == "4.9.3"
              else r"message queue lock OK, LC_G")
    locked = re.search(rf"^(\S+ \S+) INFO .*{marked} MessageQueue \[topic=LC_T, "
                       r"brokerName=broker-b", log, re.M)
    assert locked
    t = {"stop": _utc(stop.group(1).replace("T", " ")), "first_lock": first_lock,
         "last_hb": int(hb.group(1)), "removed": _client_ts(v, removed.group(1)),
         "o1_locked": _client_ts(v, locked.group(1))}
    # lockAll every 20 s: o2's last renewal before the stop
    t["o2_last_lock"] = t["first_lock"] + (t["stop"] - t["first_lock"]) // 20_000 * 20_000
    return t


@VERSIONS
def test_the_corpus_timeline_is_what_the_docstring_says(v):
    t = timeline(v)
    last = {"4.9.3": "2026-11-23 20:59:05.898", "5.3.3": "2026-11-23 20:59:34.756"}[v]
    assert t["o2_last_lock"] == _utc(last)
    assert 110_000 < t["removed"] - t["stop"] < 112_000        # "about 111 s after SIGSTOP"
    # dropped 120 s after its last heartbeat (ConsumerManager / the idle close), not at the
    # lease end (60 s after its last renewal): the lease blocked nobody
    assert 120_000 <= t["removed"] - t["last_hb"] < 121_000
    assert t["removed"] - (t["o2_last_lock"] + BROKER_LEASE_MS) > 50_000
    assert 0 <= t["o1_locked"] - t["removed"] < 1_000
    # o1 never asked for o2's queues while o2 was listed: the only lock lines of LC_G on
    # broker-b during the pause come with the drop (o1 "I got it" of o2's expired lock)
    name = "pause_broker-b_lock.log" if v == "4.9.3" else "pause_broker-b_filter.log"
    lines = [x for x in (REAL / v / "lock-crash" / name).read_text().splitlines()
             if "LC_G" in x]
    first = _utc(lines[0][:19] + ".000") - GMT8
    assert abs(first - t["removed"]) < 1_000
    assert "expired" in lines[0] and ids(v)[1] in lines[0]


def run(v: str, now: int, previous, *, o2: str, o1_b: dict | None = None, o1_lock: int):
    """One `mqctl locks show`: o1 always answers (broker-a queues, plus o2's once it left);
    o2 answers ("alive"), times out ("silent") or is no longer a member ("gone")."""
    o1, o2_id = ids(v)
    t1 = {q: pq(True, now - o1_lock, now=now) for q in A_QS} | (o1_b or {})
    clients: dict = {o1: running(t1, topics=("LC_T",))}
    if o2 == "alive":
        clients[o2_id] = running({q: pq(True, now - timeline(v)["o2_last_lock"], now=now)
                                  for q in B_QS}, topics=("LC_T",))
    elif o2 == "silent":
        clients[o2_id] = "timeout"
    m = capture(clients, group="LC_G", topics=("LC_T",))
    return build_view(m, now=now, queues_by_topic={"LC_T": QS}, previous=previous)


def pause_runs(v: str, takeover_s: int = 0) -> list[tuple[int, dict, object]]:
    """mqctl every 20 s from 1 s before the stop until o2 left, then often around the
    takeover; o1 takes o2's queues ``takeover_s`` after the drop (4.9.3: its ProcessQueues
    read locked=false until its next lockAll)."""
    t = timeline(v)
    took = t["removed"] + takeover_s * 1000
    marked_at = t["o1_locked"] + takeover_s * 1000
    state: dict[str, StoredClient] = {}
    seen = []
    runs = list(range(t["stop"] - 1_000, t["removed"], 20_000))
    runs += [t["removed"] + d for d in (300, 5_000, 10_000, 15_000, 19_500, 20_300, 40_000,
                                         60_000, 80_000)]
    for now in runs:
        if now < t["stop"]:
            o2, o1_b = "alive", None
        elif now < t["removed"]:
            o2, o1_b = "silent", None
        else:
            o2 = "gone"
            marked = now >= marked_at
            # marked at its lockAll, renewed every 20 s since
            renewed = marked_at + (now - marked_at) // RENEW_INTERVAL_MS * RENEW_INTERVAL_MS
            o1_b = ({q: pq(marked, now - (renewed if marked else took), now=now)
                     for q in B_QS} if now >= took else None)
        view, state = run(v, now, state, o2=o2, o1_b=o1_b, o1_lock=now - 3_000)
        seen.append((now, {q.mq: q for q in view.queues}, view))
    return seen


@VERSIONS
def test_the_paused_client_is_hung_not_stale_until_the_brokers_drop_it(v):
    """From its first unanswered request until the drop, o2's queues are `hung` (owner o2):
    no release advice, and the time they move is the drop estimate (its last heartbeat + 120
    s), whose window holds the real drop; the unblock bound holds the real lock time. The old
    verdict (`stale`, "blocked until <last renewal + 60 s>, `locks release` frees it now") was
    a minute early and pointed at a release that frees nobody."""
    t = timeline(v)
    o1, o2 = ids(v)
    seen = pause_runs(v)
    during = [(at, by, view) for at, by, view in seen if t["stop"] < at < t["removed"]]
    assert len(during) >= 5 and any(at > t["o2_last_lock"] + BROKER_LEASE_MS
                                    for at, _, _ in during)
    for at, by, view in during:
        for q in B_QS:
            x = by[q]
            assert (x.state, x.owner) == (LockState.HUNG, o2), (at - t["stop"], x.reason)
            assert "--execute" not in x.hint and "frees nobody" in x.hint
            h = x.hung
            assert h is not None
            lo, hi = h.last_heartbeat
            assert lo <= t["last_hb"] <= hi
            d_lo, d_hi = h.dropped
            assert d_lo <= t["removed"] <= d_hi
            assert x.frees_at <= t["o1_locked"] <= h.resumes_by
            assert x.to_dict()["frees_at_latest_ts"] == h.resumes_by
            assert clock_text(d_hi) in x.hint and o1 in x.hint   # who takes it, by when
            # a release is refused: it would free nobody
            with pytest.raises(RefusedError, match="frees nobody"):
                plan_release(view, q, "127.0.0.1:10911")
        assert view.summary()["stale"] == 0 and view.summary()["hung"] == 4
    # the first run after the stop saw o2 alive one run before: the window is one run wide
    first = during[0][1][B_QS[0]].hung
    assert first.silent_ts - first.last_answer_ts == 20_000


@pytest.mark.parametrize("takeover_s", [0, 20], ids=["notified", "next-rebalance"])
@VERSIONS
def test_hung_client_is_never_stale_once_the_broker_removed_it(v, takeover_s):
    """takeover_s: when o1 rebalances after o2 left. 0: at once (broker-a notified it, so it
    took LC_T's broker-b queues at 21:01:15.915 on 4.9.3); 20: at its next periodic rebalance
    (o1 took %RETRY%LC_G broker-b only at 21:01:35.925: broker-b had not notified it)."""
    t = timeline(v)
    o1 = ids(v)[0]
    for at, by, _view in pause_runs(v, takeover_s):
        if at < t["removed"]:
            continue
        for q in B_QS:
            x = by[q]
            # o2 left: nothing of it blocks any more; o1 owns the queues
            assert x.state not in (LockState.STALE, LockState.HUNG), (at - t["stop"],
                                                                       x.reason)
            assert x.frees_at is None
            assert "--execute" not in (x.hint or "")
            assert x.owner == o1
    _, _, last = pause_runs(v, takeover_s)[-1]
    assert last.summary()["held"] == 8


def test_crashed_client_seen_alive_then_gone_still_gets_the_renewals_it_may_have_made():
    """The other case must keep working: a client that answered, then crashed before the next
    run (never seen silent) may have renewed every 20 s until it left."""
    v = "4.9.3"
    t = timeline(v)
    _, s1 = run(v, t["stop"] - 1_000, {}, o2="alive", o1_lock=t["stop"] - 4_000)
    now = t["stop"] + 60_000
    view, _ = run(v, now, s1, o2="gone", o1_lock=now - 3_000)
    x = {q.mq: q for q in view.queues}[B_QS[0]]
    assert x.state is LockState.STALE and x.owner == ids(v)[1]
    assert x.frees_at is not None and x.frees_at > t["o2_last_lock"] + BROKER_LEASE_MS


# ------------------------------------------------------------------ after a takeover


def test_takeover_on_4x_names_the_pending_lock_cycle_not_a_refusal():
    """4.9.3 creates the new owner's ProcessQueue only after lock() succeeded, so it reads
    locked=false (lastLockTimestamp = its creation) until the next lockAll: o1 logged `lock OK`
    at 21:01:15.915 and `locked OK` at 21:01:16.529 (pause_other_o1_client.log)."""
    v = "4.9.3"
    t = timeline(v)
    o1, _ = ids(v)
    now = t["removed"] + 300
    state: dict[str, StoredClient] = {}
    _, state = run(v, t["stop"] - 1_000, state, o2="alive", o1_lock=t["stop"] - 4_000)
    _, state = run(v, t["stop"] + 19_000, state, o2="silent", o1_lock=t["stop"] + 16_000)
    created = t["removed"] + 5
    view, _ = run(v, now, state, o2="gone", o1_lock=now - 3_000,
                  o1_b={q: pq(False, now - created, now=now) for q in B_QS})
    x = {q.mq: q for q in view.queues}[B_QS[0]]
    assert (x.state, x.owner) == (LockState.LOCK_FAILED, o1)
    assert "refused" not in x.hint
    assert "granted" in x.hint and "next lock cycle" in x.hint
    assert clock_text(created + RENEW_INTERVAL_MS) in x.hint      # marked by then
    assert "lock granted" in x.reason


def test_an_old_unlocked_claim_is_still_a_refused_renewal():
    v = "4.9.3"
    t = timeline(v)
    now = t["removed"] + 300
    view, _ = run(v, now, {}, o2="gone", o1_lock=now - 3_000,
                  o1_b={q: pq(False, 45_000, now=now) for q in B_QS})
    x = {q.mq: q for q in view.queues}[B_QS[0]]
    assert x.state is LockState.LOCK_FAILED
    assert "refused" in x.hint and "granted" not in x.hint


def test_stale_hint_says_consumption_resumes_after_frees_at_not_at_it():
    """A crashed holder (kill -9: it left the group at once) blocks its queues until its lease
    ends; o1 then locks them at its next rebalance and, on 4.x, consumes after its next lockAll
    (4.9.3 kill: lock OK 20:58:04.5, locked OK 20:58:16.5)."""
    v = "4.9.3"
    t = timeline(v)
    o1, o2 = ids(v)
    _, s1 = run(v, t["stop"] - 1_000, {}, o2="alive", o1_lock=t["stop"] - 4_000)
    view, _ = run(v, t["stop"] + 10_000, s1, o2="gone", o1_lock=t["stop"] + 7_000)
    x = {q.mq: q for q in view.queues}[B_QS[0]]
    assert (x.state, x.owner) == (LockState.STALE, o2)
    assert f"then {o1} can lock it" in x.hint
    assert "consumption resumes up to one rebalance and one lock cycle" in x.hint
    assert "not at it" in x.hint

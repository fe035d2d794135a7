"""A legacy online reset across two brokers, as real 4.9.3 applies it: each client takes the
brokers' pushes one at a time (``MQClientInstance.resetOffset`` is synchronized and pauses 10 s),
so the first broker's queues are applied about 10 s after the push and the second's about 20 s;
a pushed reset holds one of the client's callback threads meanwhile, and the running info is
served by the same threads, so on a small client host the owners cannot be read right after
the push. Fast consumers replay each rewind before a poll sees it. Verify must still prove every
queue from what it read, and never call a queue the client ignored ``verified``."""

from __future__ import annotations

import asyncio

import pytest
from sim_reset import offsets, reset_on_manual_clock

from mqctl.admin import Admin
from mqctl.models import MessageQueue
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.codes import RequestCode
from mqctl.reset import Status, Target, apply_plan, default_wait, make_plan, verify

MQ = MessageQueue


def scenario(*, consumers: int = 3, callback_threads: int = 4, rate: float = 2.5,
             consumer_rate: float | None = None, initial_lag: int = 0,
             ignoring: tuple[int, ...] = ()) -> dict:
    """Two 4.9.3 masters (the legacy push path), T with 4 queues each written at ``rate``
    msg/s per queue, group G with ``consumers`` 4.9.3 push consumers."""
    cons = [{"id": f"10.9.0.{i + 1}@c{i + 1}", "version": "V4_9_3",
             "callback_threads": callback_threads,
             **({"rate": consumer_rate} if consumer_rate is not None else {}),
             **({"ignore_reset_push": True} if i in ignoring else {})}
            for i in range(consumers)]
    return {"name": "legacy-steps", "clock": {"mode": "manual"},
            # the broker's forward of a running-info request to a busy client gives up after
            # this much real time (the simulated clock does not move while it waits)
            "running_info_timeout": "1s",
            "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                        {"name": "broker-b", "version": "V4_9_3"}],
            "topics": [{"name": "T", "queues": 4, "rate": rate, "history": "10m"}],
            "groups": [{"name": "G", "topics": ["T"], "initial_lag": initial_lag,
                        "consumers": cons}]}


def owners_of(s) -> dict[MessageQueue, str]:
    return s.call(lambda c: {mq: x.client_id for x in c.consumers("G") for mq in x.pqs
                             if mq.topic == "T"})


def reset(s, target: Target, reads: list | None = None):
    """Plan, apply and verify with the default wait, verify's waits advancing the simulated
    clock; returns the plan, the results and the broker's offsets after each wait (and, in
    ``reads``, what verify read of the owners, with the first push's time first)."""
    from mqctl.reset.evidence import read_owners

    async def owners(admin, plan):
        got = await read_owners(admin, plan)
        if reads is not None:
            reads.append(got)
        return got

    def applied(results) -> None:
        if reads is not None:
            reads.append(min(r.sent_ms for r in results if r.sent_ms is not None))

    return reset_on_manual_clock(s, target, applied=applied, owners=owners)


def test_two_brokers_three_fast_consumers_on_small_hosts_are_verified_on_every_queue(
        sim_factory):
    """Three fast consumers, two brokers, two callback threads per client: the read right
    after the pushes finds every client busy (both pushes hold its threads), broker-a's queues
    are applied at +10 s, broker-b's at +20 s and replayed before any poll sees them. Each
    queue is proven by what was read: broker-b's dropped at the read after the first step and
    new after the second, broker-a's offsets back below where the group was. Real 4.9.3:
    `verified` 6, `unknown` 2, exit 8, although every queue replayed."""
    s = sim_factory(scenario(callback_threads=2))
    s.advance(6)
    before = offsets(s)
    reads: list = []
    plan, res, seen = reset(s, Target("time", s.clock.now_ms() - 30_000, text="-30s"), reads)
    assert {b.path.value for b in plan.brokers.values()} == {"legacy-push"}
    assert all(q.replay > 0 for q in plan.queues)
    # the pushes went one broker after the other, broker-a first
    pushes = [r for r in s.request_log if r.code == RequestCode.INVOKE_BROKER_TO_RESET_OFFSET]
    assert [p.server for p in pushes] == ["broker-a", "broker-b"]
    # the clients were too busy to answer right after the pushes: the first read's answers
    # came when their first push was applied, or not at all (the broker's forward timed out)
    first_push, first = reads[0], reads[1]
    assert set(first.members) == {"10.9.0.1@c1", "10.9.0.2@c2", "10.9.0.3@c3"}
    assert all(c in first.failed or first.answered[c] >= first_push + 10_000
               for c in first.members), (first.answered, first.failed, first_push)
    # broker-b's rewind was never read by a poll: replayed at once after the second step
    b_queues = [q.mq for q in plan.queues if q.mq.broker_name == "broker-b"]
    assert all(o[mq] >= before[mq] for o in seen for mq in b_queues), seen
    assert [r.status for r in res] == [Status.VERIFIED] * 8, [(r.plan.mq.short, r.detail)
                                                               for r in res]
    for r in res:
        if r.plan.mq.broker_name == "broker-b":
            assert r.detail.startswith("applied by the clients: 10.9.0."), r.detail
            assert "process queue was dropped at +1" in r.detail, r.detail
            assert "and a new one was held at +2" in r.detail, r.detail
            assert r.detail.endswith(f"the group has re-consumed to {r.now}")
            assert r.now >= r.plan.current


def test_the_plan_says_when_each_brokers_queues_are_applied_and_the_wait_covers_both(
        sim_factory):
    s = sim_factory(scenario())
    s.advance(6)

    async def go():
        async with RemotingClient(ClientOptions(timeout=5)) as client:
            return await make_plan(Admin(client, s.namesrv_addr), "G", "T",
                                   Target("time", s.clock.now_ms() - 30_000, text="-30s"))

    plan = asyncio.run(go())
    text = "\n".join(plan.warnings)
    assert "which apply them after a 10 s pause" not in text
    assert ("broker broker-a: legacy path: the broker computes the offsets from the time and "
            "pushes them to the online consumers, which apply one broker's push at a time, each "
            "after a 10 s pause (MQClientInstance.resetOffset is synchronized); pushed 1st of "
            "2, its queues are applied about 10 s after the push;") in text
    assert "broker broker-b: legacy path:" in text
    assert "pushed 2nd of 2, its queues are applied about 20 s after the push;" in text
    # the default wait runs past the second step and the read 2 s after it
    assert default_wait(plan) > 22


@pytest.mark.parametrize("direction", ["rewind", "forward"])
def test_a_consumer_that_ignores_the_push_is_never_verified(sim_factory, direction):
    """c2 never applies the pushed reset: its queues keep the process queues they had, and
    its offsets move on from where they were. On a rewind they stay at or past the old offset;
    on a forward target (the group ~36 s behind, reset to 30 s ago) c2 consumes past the
    target by itself within the wait, which is no evidence: `not-taken` from its process
    queues, never `verified`. c1's queues took."""
    if direction == "rewind":
        sc = scenario(consumers=2, ignoring=(1,))
        back = 30_000
    else:  # the consumers lag (4 msg/s per queue against 2.5 produced) and catch up slowly
        sc = scenario(consumers=2, ignoring=(1,), consumer_rate=16, initial_lag=100)
        back = 30_000
    s = sim_factory(sc)
    s.advance(6)
    owner = owners_of(s)
    plan, res, _seen = reset(s, Target("time", s.clock.now_ms() - back, text="-30s"))
    if direction == "forward":
        assert all(q.target > q.current for q in plan.queues), plan.queues
    ignored = [r for r in res if owner[r.plan.mq] == "10.9.0.2@c2"]
    took = [r for r in res if owner[r.plan.mq] == "10.9.0.1@c1"]
    assert ignored and took
    if direction == "forward":  # it did pass the target on its own
        assert all(r.now is not None and r.now >= r.goal for r in ignored), ignored
    for r in ignored:
        assert r.status == Status.NOT_TAKEN, (r.plan.mq.short, r.status, r.detail)
        assert "not applied: 10.9.0.2@c2 still has the process queue it had before the push" \
            in r.detail
    assert {r.status for r in took} == {Status.VERIFIED}, [r.detail for r in took]


# ------------------------------------------------------------ the rule, read by read

A0 = MQ("T", "broker-a", 0)
B0 = MQ("T", "broker-b", 0)


def _sched():
    from mqctl.reset.evidence import PushSchedule

    return PushSchedule((("broker-a", 0), ("broker-b", 5)))


def _read(at, queues, members=("c@1",), failed=None):
    """A read whose every answer arrived at ``at``: ``queues`` maps a queue to
    (created, dropped, commit offset) of c@1's process queue."""
    from mqctl.reset.evidence import OwnerRead, SeenQueue

    return OwnerRead(at, {mq: [SeenQueue("c@1", "s1", False, created, drop, commit, None, at)]
                          for mq, (created, drop, commit) in queues.items()},
                     members=members, failed=dict(failed or {}),
                     answered={c: at for c in members if c not in (failed or {})})


def test_the_schedule_of_two_pushes():
    sched = _sched()
    assert sched.steps() == [10_000, 20_000]
    assert sched.read_moments() == [12_000, 22_000]
    assert sched.expected("broker-a") == (10_000, 10_000)
    assert sched.expected("broker-b") == (20_000, 20_000)
    assert sched.all_applied_ms() == 22_000
    from mqctl.reset.evidence import PushSchedule, apply_text

    three = PushSchedule((("a", 0), ("b", 0), ("c", 0)))
    assert three.expected("c") == (20_000, 30_000)
    assert [apply_text(k, 3) for k in (1, 2, 3)] == ["about 10 s", "20-30 s", "20-30 s"]
    # a push sent after the step before it ended starts its own 10 s then
    assert PushSchedule((("a", 0), ("b", 15_000))).steps() == [10_000, 25_000]


def test_dropped_then_new_proves_it_without_a_read_before_the_push():
    """The read right after the push came late (a busy client): it already shows broker-b's
    queue dropped; a read after the second step shows it held again: a new process queue."""
    from mqctl.reset.evidence import legacy_verdict

    reads = [_read(10_100, {B0: (1000, True, 1512)}), _read(22_100, {B0: (1000, False, 1575)})]
    got, why = legacy_verdict(B0, reads, _sched(), target=1440, current=1512)
    assert got == "applied", why
    assert why.startswith("c@1's process queue was dropped at +10 s") and "+22 s" in why
    # a member joined in between: the queue may have moved and come back, so it proves nothing
    reads[1] = _read(22_100, {B0: (1000, False, 1575)}, members=("c@1", "c@2"))
    got, why = legacy_verdict(B0, reads, _sched(), target=1440, current=1512)
    assert got == "unknown", why


def test_a_clients_own_offset_back_below_where_the_group_was_proves_a_rewind():
    from mqctl.reset.evidence import legacy_verdict

    reads = [_read(10_100, {A0: (9_000, False, 1472)})]  # first pull of 32 from 1440
    got, why = legacy_verdict(A0, reads, _sched(), target=1440, current=1512,
                              members=["c@1"])
    assert got == "applied" and "(commitOffset) read 1472 at +10 s" in why, why
    # not with another member list than at the plan (a queue changing hands)
    got, _why = legacy_verdict(A0, reads, _sched(), target=1440, current=1512,
                               members=["c@1", "c@2"])
    assert got == "unknown"
    # a forward target: an offset of the client says nothing
    got, _why = legacy_verdict(A0, reads, _sched(), target=1600, current=1400,
                               members=["c@1"])
    assert got == "unknown"


def test_not_applied_only_once_every_push_had_its_turn():
    """The same process queue before the push and 12 s after it: broker-a's push is due at
    10 s, but a client may get broker-b's first: not yet `not-applied`; at 22 s it is."""
    from mqctl.reset.evidence import legacy_verdict

    pre = _read(100, {A0: (1000, False, 1512)})
    got, why = legacy_verdict(A0, [pre, _read(12_100, {A0: (1000, False, 1530)})], _sched(),
                              target=1440, current=1512)
    assert got == "unknown" and "had not applied it yet when read 12 s after" in why, why
    got, why = legacy_verdict(A0, [pre, _read(22_100, {A0: (1000, False, 1560)})], _sched(),
                              target=1440, current=1512)
    assert got == "not-applied", why
    assert "still has the process queue it had before the push" in why and "2 push(es)" in why
    # a first read that came after a client could apply: no baseline, nothing concluded
    got, why = legacy_verdict(A0, [_read(9_000, {A0: (1000, False, 1512)}),
                                   _read(22_100, {A0: (1000, False, 1560)})], _sched(),
                              target=1440, current=1512)
    assert got == "unknown" and "read too late" in why, why


def test_unknown_says_what_was_read():
    from mqctl.reset.evidence import legacy_verdict

    reads = [_read(100, {}, members=("c@1",), failed={"c@1": "timed out"}),
             _read(12_100, {B0: (1000, True, 1512)})]
    got, why = legacy_verdict(B0, reads, _sched(), target=1440, current=1512)
    assert got == "unknown"
    assert "c@1 is still applying it" in why and "c@1 read +12 s dropped" in why, why
    assert "running info not read: c@1 (timed out)" in why


# ------------------------------------------------------------ apply and verify

def test_the_pushes_go_one_broker_after_the_other():
    """Each push is sent once the one before it answered, so every client gets broker-a's
    first; the results carry the order."""
    from types import SimpleNamespace
    from typing import Any

    from mqctl.reset import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan

    events: list[str] = []

    class Client:
        async def invoke(self, addr, code, ext, **kw):
            events.append(f"send {addr}")
            await asyncio.sleep(0.05)
            events.append(f"answer {addr}")
            return SimpleNamespace(body=b"", remark="")

    qs = [QueuePlan(MQ("T", b, 0), 0, 500, 300, 100) for b in ("broker-a", "broker-b")]
    plan = Plan("G", "T", Target("time", 1, "-2m"), 0, "ns", qs,
                {b: BrokerPlan(b, b, Path_.LEGACY_PUSH, "t") for b in ("broker-a", "broker-b")},
                ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY", "CLUSTERING"))
    admin: Any = SimpleNamespace(client=Client())
    res = asyncio.run(apply_plan(admin, plan))
    assert events == ["send broker-a", "answer broker-a", "send broker-b", "answer broker-b"]
    assert [r.push_position for r in res] == [1, 2]


def test_a_wait_shorter_than_the_second_step_says_so(sim_factory):
    """--verify-wait 15 with two brokers: broker-b's queues are still in their pause when
    verify ends: unknown, and the detail says the wait ended before their turn."""
    s = sim_factory(scenario(consumers=2))
    s.advance(6)

    async def go():
        async with RemotingClient(ClientOptions(timeout=5)) as client:
            admin = Admin(client, s.namesrv_addr)
            plan = await make_plan(admin, "G", "T",
                                   Target("time", s.clock.now_ms() - 30_000, text="-30s"))
            results = await apply_plan(admin, plan)

            async def advance(sec: float) -> None:
                await asyncio.to_thread(s.advance, sec)

            return await verify(admin, plan, results, wait_s=15, waiter=advance)

    res = asyncio.run(go())
    a = [r for r in res if r.plan.mq.broker_name == "broker-a"]
    b = [r for r in res if r.plan.mq.broker_name == "broker-b"]
    assert {r.status for r in a} == {Status.VERIFIED}, [r.detail for r in a]
    assert {r.status for r in b} == {Status.UNKNOWN}, [r.detail for r in b]
    for r in b:
        assert "is still applying it" in r.detail, r.detail
        assert ("the wait (15 s) ended before the clients' turn for this push (about 20 s "
                "after it; every push of the 2 by 22 s)") in r.detail, r.detail


def test_an_interrupted_verify_leaves_no_read_behind():
    """verify cancelled (Ctrl-C) while an owners' read is in flight: the read is cancelled
    with it, nothing runs on."""
    from types import SimpleNamespace
    from typing import Any

    from mqctl.reset import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, QueueResult

    started, cancelled = [], []

    async def slow_owners(admin, plan):
        started.append(1)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(1)
            raise

    class FakeAdmin:
        concurrency = 1

        async def consume_stats(self, group, addr, topic):
            return SimpleNamespace(offsets={q.mq: SimpleNamespace(consumer_offset=300)})

    q = QueuePlan(A0, 0, 500, 300, 100)
    plan = Plan("G", "T", Target("time", 1, "-2m"), 0, "ns", [q],
                {"broker-a": BrokerPlan("broker-a", "a:1", Path_.LEGACY_PUSH, "t")},
                ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY", "CLUSTERING"))
    r = QueueResult(q, Status.APPLIED, "pushed to the clients", sent_ms=0, push_position=1)
    admin: Any = FakeAdmin()

    async def go():
        task = asyncio.ensure_future(verify(admin, plan, [r], wait_s=20, poll_s=0.05,
                                            owners=slow_owners))
        await asyncio.sleep(0.2)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        await asyncio.sleep(0)
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    left = asyncio.run(go())
    assert started and cancelled and not left


def test_the_schedule_matches_the_real_4_9_3_client():
    """Real 4.9.3 (reset/client_log_after_reset.log): the client logged broker-b's push (port
    21911) at 20:59:28.682 and broker-a's (20911) at 28.706, wrote broker-b's queues at 38.69
    and added them again by 38.707, wrote broker-a's at 48.72 and added them by 48.727. The
    schedule's moments fall where they did, and each read moment after a step comes after
    that step's queues were added again and, for the first, inside the next push's pause."""
    import re
    from datetime import datetime

    from conftest import CORPUS_ABSENT, REAL_CORPUS

    from mqctl.reset.evidence import APPLY_MARGIN_MS, PushSchedule

    log = REAL_CORPUS / "4.9.3" / "reset" / "client_log_after_reset.log"
    if not log.is_file():
        pytest.skip(f"{CORPUS_ABSENT} ({REAL_CORPUS})")

    def ms(stamp: str) -> int:
        return int(datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000)

    lines = log.read_text().splitlines()
    stamp = re.compile(r"^(\S+ \S+) INFO RocketmqClient - (.*)$")
    pushes, written, added = [], {}, {}
    for line in lines:
        m = stamp.match(line)
        if not m:
            continue
        t, msg = ms(m[1]), m[2]
        if msg.startswith("invoke reset offset operation from broker"):
            port = re.search(r"brokerAddr=[\d.]+:(\d+)", msg)[1]
            pushes.append(({"21911": "broker-b", "20911": "broker-a"}[port], t))
        b = re.search(r"brokerName=(broker-\w)", msg)
        if b and msg.startswith("[persist] ") and msg.endswith("] 0"):
            written.setdefault(b[1], t)
        if b and msg.startswith("doRebalance, RS_G, add a new pull request"):
            added[b[1]] = t
    assert [p[0] for p in pushes] == ["broker-b", "broker-a"]
    sched = PushSchedule(tuple(pushes))
    for broker in ("broker-b", "broker-a"):
        early, late = sched.expected(broker)
        assert early == late and abs(written[broker] - early) < APPLY_MARGIN_MS, (
            broker, written[broker] - early)
    first, second = sched.read_moments()
    assert added["broker-b"] < first < written["broker-a"]  # broker-a still in its pause
    assert added["broker-a"] < second

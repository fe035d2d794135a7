"""apply_plan / verify / clock_sleep without a network: a scripted client and admin record
every request and answer what each test needs."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from mqctl.errors import BrokerError, ConnectError
from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode
from mqctl.reset import (
    BrokerPlan,
    ConsumerState,
    Path_,
    Plan,
    QueuePlan,
    Status,
    Target,
    apply_plan,
    clock_sleep,
    verify,
)
from mqctl.timeparse import set_clock


def mq(b: str, q: int) -> MessageQueue:
    return MessageQueue("T", b, q)


class FakeClient:
    """Answers INVOKE_BROKER_TO_RESET_OFFSET / UPDATE_CONSUMER_OFFSET; ``fail`` maps
    (broker addr, queue id) -> exception; ``store`` is what the 'broker' holds."""

    def __init__(self, store: dict[MessageQueue, int], fail=None, names=None, remark=None):
        self.store = store
        self.fail = fail or {}
        self.names = names or {}
        self.remark = remark
        self.sent: list[tuple[str, int, dict]] = []

    async def invoke(self, addr, code, ext=None, body=b"", **kw):
        assert kw.get("idempotent", False) is False  # state changes are never re-sent
        self.sent.append((addr, code, dict(ext or {})))
        name = self.names[addr]
        qid = int(ext.get("queueId", -1))
        exc = self.fail.get((addr, qid))
        if exc is not None:
            if isinstance(exc, tuple):  # applied, then the answer is lost
                self.store[mq(name, qid)] = int(ext["offset"])
                exc = exc[0]
            raise exc
        if code == RequestCode.UPDATE_CONSUMER_OFFSET:
            if self.remark is None:
                self.store[mq(name, qid)] = int(ext["commitOffset"])
            return SimpleNamespace(body=b"", remark=self.remark)
        if qid >= 0:
            self.store[mq(name, qid)] = int(ext["offset"])
            table = {mq(name, qid): int(ext["offset"])}
        else:  # legacy: the broker computes (here: 0 for every queue) and pushes
            table = {m: 0 for m in self.store if m.broker_name == name}
        body = fastjson.dumps_fastjson({"offsetTable": table}).encode()
        return SimpleNamespace(body=body, remark=None)


class FakeAdmin:
    concurrency = 4

    def __init__(self, client: FakeClient, down=()):
        self.client = client
        self.down = set(down)
        self.reads = 0

    async def consume_stats(self, group, addr, topic):
        self.reads += 1
        name = self.client.names[addr]
        if name in self.down:
            raise ConnectError(f"connect to {addr} refused")
        return SimpleNamespace(offsets={m: SimpleNamespace(consumer_offset=v)
                                        for m, v in self.client.store.items()
                                        if m.broker_name == name})


def make_plan(paths: dict[str, Path_], queues: list[QueuePlan], online=False,
              target=Target("offset", 0)) -> Plan:
    brokers = {n: BrokerPlan(n, f"{n}:10911", p, "test") for n, p in paths.items()}
    st = ConsumerState(online, ["c@1"] if online else [], False, False, "CONSUME_PASSIVELY",
                       "CLUSTERING")
    return Plan("G", "T", target, 0, "ns", queues, brokers, st)


def setup(paths, spec, **kw):
    """spec: [(broker, qid, current, target)]"""
    queues = [QueuePlan(mq(b, q), 0, 1000, cur, tgt) for b, q, cur, tgt in spec]
    store = {q.mq: q.current for q in queues if q.current is not None}
    client = FakeClient(store, names={f"{n}:10911": n for n in paths}, **kw)
    return make_plan(paths, queues), client, FakeAdmin(client)


def run(coro):
    return asyncio.run(coro)


def test_server_side_explicit_offsets_queue_zero_offset_zero():
    plan, client, admin = setup({"a": Path_.SERVER_SIDE},
                                [("a", 0, 7, 0), ("a", 1, 5, 5), ("a", 2, 9, 3)])
    res = run(verify(admin, plan, run(apply_plan(admin, plan))))
    assert [r.status for r in res] == [Status.VERIFIED, Status.ALREADY, Status.VERIFIED]
    # queue 0 to offset 0 was sent (mqadmin's `if (resetOffset > 0)` skips it); queue 1 was not
    assert [(c, e["queueId"], e["offset"], e["isForce"]) for _, c, e in client.sent] == [
        (RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, 0, 0, True),
        (RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, 2, 3, True)]
    assert client.store[mq("a", 0)] == 0 and res[0].now == 0


def test_a_failure_stops_that_broker_only_and_verify_tells_what_changed():
    fail = {("a:10911", 1): BrokerError(1, "disk full"),
            ("b:10911", 1): (ConnectError("connection reset"),)}  # applied, answer lost
    plan, client, admin = setup(
        {"a": Path_.SERVER_SIDE, "b": Path_.SERVER_SIDE},
        [("a", 0, 10, 1), ("a", 1, 10, 1), ("a", 2, 10, 1),
         ("b", 0, 10, 1), ("b", 1, 10, 1), ("b", 2, 10, 1)], fail=fail)
    res = run(verify(admin, plan, run(apply_plan(admin, plan))))
    st = {(r.plan.mq.broker_name, r.plan.mq.queue_id): r for r in res}
    assert st["a", 0].status == Status.VERIFIED
    assert st["a", 1].status == Status.FAILED and "disk full" in st["a", 1].detail
    assert "unchanged (10)" in st["a", 1].detail
    assert st["a", 2].status == Status.NOT_SENT and st["a", 2].now is None
    # the lost answer: the offset is there, so it is verified (with the story in the detail)
    assert st["b", 1].status == Status.VERIFIED and "although the request failed" in \
        st["b", 1].detail
    assert st["b", 2].status == Status.NOT_SENT
    assert client.store[mq("a", 2)] == 10 and client.store[mq("b", 2)] == 10
    sent = [(a, e["queueId"]) for a, _, e in client.sent]
    assert ("a:10911", 2) not in sent and ("b:10911", 2) not in sent  # never attempted


def test_broker_unreadable_after_apply_is_unverified():
    plan, _client, admin = setup({"a": Path_.SERVER_SIDE}, [("a", 0, 10, 1)])
    results = run(apply_plan(admin, plan))
    admin.down.add("a")
    res = run(verify(admin, plan, results))
    assert res[0].status == Status.UNVERIFIED and "re-read failed" in res[0].detail


def test_legacy_update_ignored_while_a_server_side_reset_is_pending():
    plan, client, admin = setup({"a": Path_.LEGACY_UPDATE}, [("a", 0, 10, 1), ("a", 1, 10, 1)],
                                remark="Offset has been previously reset")
    res = run(verify(admin, plan, run(apply_plan(admin, plan))))
    assert res[0].status == Status.FAILED and "pending" in res[0].detail
    assert res[1].status == Status.NOT_SENT
    assert [e["commitOffset"] for _, c, e in client.sent] == [1]


def test_legacy_push_uses_what_the_broker_computed_and_polls_until_it_took():
    plan, client, admin = setup({"a": Path_.LEGACY_PUSH}, [("a", 0, 10, 2), ("a", 1, 10, 0)])
    plan.consumers = ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY",
                                   "CLUSTERING")
    results = run(apply_plan(admin, plan))
    assert [(c, e.get("queueId"), e["timestamp"]) for _, c, e in client.sent] == [
        (RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, None, -1)]
    assert results[0].expected == 0 and "computed 0 (plan: 2)" in results[0].detail
    client.store.update({mq("a", 0): 10, mq("a", 1): 10})  # the clients have not applied yet
    waited: list[float] = []

    async def waiter(s: float) -> None:  # the "clients" apply after three polls
        waited.append(s)
        if len(waited) == 3:
            client.store.update({mq("a", 0): 0, mq("a", 1): 0})

    clock = [1_000_000]
    set_clock(lambda: clock[0])
    try:
        async def advance(s: float) -> None:
            clock[0] += int(s * 1000)
            await waiter(s)
        res = run(verify(admin, plan, results, wait_s=15, waiter=advance, poll_s=1,
                         owners=None))  # the fake has no running info
    finally:
        set_clock(None)
    assert [r.status for r in res] == [Status.VERIFIED, Status.VERIFIED]
    assert waited == [1, 1, 1] and admin.reads == 3  # stopped polling once every queue took


def test_forced_update_of_an_online_group_waits_the_whole_time():
    plan, client, admin = setup({"a": Path_.LEGACY_UPDATE}, [("a", 0, 500, 100)])
    plan.consumers = ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY",
                                   "CLUSTERING")
    results = run(apply_plan(admin, plan))
    waited: list[float] = []

    async def waiter(s: float) -> None:  # the live consumer commits its own offset back
        waited.append(s)
        client.store[mq("a", 0)] = 505

    res = run(verify(admin, plan, results, wait_s=10, waiter=waiter))
    assert waited == [10]
    assert res[0].status == Status.NOT_TAKEN and "overwritten" in res[0].detail


def test_clock_sleep_follows_the_mqctl_clock():
    async def go(step: int) -> float:
        clock = [0]

        def fake() -> int:
            clock[0] += step  # every read of the clock moves it on
            return clock[0]

        set_clock(fake)
        try:
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            await clock_sleep(2.0, tick=0.005)
            return loop.time() - t0
        finally:
            set_clock(None)

    fast = run(go(500))  # 0.5 s of simulated time per read: done after a few ticks
    assert fast < 1.0
    frozen = run(go(0))  # a clock nobody advances: bounded by real time
    assert frozen >= 1.9


@pytest.mark.parametrize("status", [Status.ALREADY, Status.NOT_SENT])
def test_verify_reads_nothing_when_nothing_was_sent(status):
    plan, _client, admin = setup({"a": Path_.SERVER_SIDE}, [("a", 0, 10, 1)])
    from mqctl.reset import QueueResult

    res = run(verify(admin, plan, [QueueResult(plan.queues[0], status)], wait_s=5))
    assert admin.reads == 0 and res[0].status == status

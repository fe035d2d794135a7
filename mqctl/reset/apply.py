"""Applying a plan (the only state-changing part) and verifying it.

Every state-changing request is sent once (``idempotent=False``: never re-sent blindly). A
broker's queues go one at a time; the first failure stops that broker (the remaining queues are
reported ``not-sent``), other brokers carry on. Verify re-reads every queue a request was sent
for -- also those whose request failed, since a lost answer does not mean nothing changed -- so
the output says exactly which queues changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mqctl.admin import Admin
from mqctl.errors import ConnectError, MqctlError, RequestTimeout
from mqctl.interrupt import INTERRUPT_GRACE_S, Stop
from mqctl.models import MessageQueue, queue_map
from mqctl.remoting import fastjson
from mqctl.remoting.client import fan_out
from mqctl.remoting.codes import RequestCode
from mqctl.reset.evidence import (
    OwnerRead,
    OwnerReader,
    PushSchedule,
    apply_text,
    legacy_verdict,
    read_owners,
)
from mqctl.reset.types import Path_, Plan, QueuePlan
from mqctl.timeparse import now_ms
from mqctl.versions import V5_2_0

PREVIOUSLY_RESET = "Offset has been previously reset"
# The pull that takes a pending server-side offset commits the client's OLD position
# (5.x PullMessageProcessor: queryThenEraseResetOffset, then the pull's commitOffset is stored)
# and the client then writes the reset offset itself (DefaultMQPushConsumerImpl, OFFSET_ILLEGAL:
# offsetStore.updateOffset + persist): at once from 5.2.0 on (apache/rocketmq#7635), after a
# 10 s executeTaskLater before. A read in between shows the group where it was: below a
# forward target, and not another writer. Verify keeps reading such a queue this long after its
# wait (a round trip, bounded by one 5 s persist interval; the 10 s pause plus margin) ...
OWN_PULL_SETTLE_S = 5.0
OWN_PULL_SETTLE_OLD_CLIENT_S = 12.0
# ... every this many seconds
OWN_PULL_POLL_S = 0.25


class Status(StrEnum):
    ALREADY = "already"  # at the target before apply: nothing sent
    APPLIED = "applied"  # the broker accepted it (before verify)
    VERIFIED = "verified"  # re-read: it took
    NOT_TAKEN = "not-taken"  # re-read: it did not take (e.g. live consumers overwrote it)
    UNVERIFIED = "unverified"  # the broker accepted it, but the re-read failed
    FAILED = "failed"  # the request failed (verify re-reads whether anything changed)
    NOT_SENT = "not-sent"  # an earlier request to the same broker failed, or an interrupt
    # sent, no answer before mqctl stopped (interrupt): may have changed; or, after verify,
    # accepted but nothing read proves whether it took (a fast consumer replays a rewind
    # between two reads)
    UNKNOWN = "unknown"
    # re-read: it reached the target, then something other than the group's own online
    # consumers moved it (another reset from another machine, an mqadmin): this run's change
    # no longer stands
    MOVED = "moved"


BAD = frozenset({Status.NOT_TAKEN, Status.UNVERIFIED, Status.FAILED, Status.NOT_SENT,
                 Status.UNKNOWN, Status.MOVED})
@dataclass(slots=True)
class QueueResult:
    plan: QueuePlan
    status: Status
    detail: str = ""
    now: int | None = None
    expected: int | None = None  # what the broker said it set, when it differs from the plan
    # while verify polled: the lowest offset read and when (ms after the first read began)
    lowest: int | None = None
    lowest_after_ms: int | None = None
    taken_after_ms: int | None = None  # the first read at which the queue had taken
    reached_after_ms: int | None = None  # the first read exactly at the target
    sent_ms: int | None = None  # mqctl clock when its request was sent (the legacy push)
    push_position: int | None = None  # the legacy push: 1 for the broker pushed first, ...
    # read in the group's own pull-with-commit window when verify ended: for this many
    # seconds of reads after its wait (server-side, forward target: _own_pull_window); None:
    # verify had no wait (--verify-wait 0)
    settled_s: float | None = None

    @property
    def goal(self) -> int:
        return self.plan.target if self.expected is None else self.expected

    def row(self) -> dict[str, Any]:
        return {"broker": self.plan.mq.broker_name, "queue_id": self.plan.mq.queue_id,
                "previous": self.plan.current, "target": self.plan.target,
                "expected": self.goal, "now": self.now, "lowest": self.lowest,
                "status": self.status.value, "detail": self.detail}


def _table(body: bytes) -> dict[MessageQueue, Any]:
    """ResetOffsetBody ``offsetTable`` (any of the map forms); empty when absent."""
    if not body:
        return {}
    doc = fastjson.loads(body)
    return queue_map(doc.get("offsetTable")) if isinstance(doc, dict) else {}


def _failure_detail(exc: MqctlError) -> str:
    if isinstance(exc, ConnectError | RequestTimeout):
        return (f"no answer ({exc.message}): it may or may not have changed; verify re-reads "
                "it")
    return exc.message


async def apply_plan(admin: Admin, plan: Plan, *, concurrency: int = 16,
                     on_broker_done: Callable[[str], None] | None = None,
                     stop: Stop | None = None, grace_s: float = INTERRUPT_GRACE_S
                     ) -> list[QueueResult]:
    """Send the changes, broker by broker (concurrently, bounded). Never re-sends.

    ``stop`` (an interrupt): no new request is sent (those queues are ``not-sent``), the ones
    in flight are waited for up to ``grace_s`` and are ``unknown`` if still unanswered."""
    client = admin.client
    by_broker: dict[str, list[QueuePlan]] = {}
    results: dict[MessageQueue, QueueResult] = {}
    inflight: dict[MessageQueue, QueuePlan] = {}

    def stopped() -> bool:
        return stop is not None and stop.stopped

    def not_sent(name: str) -> str:
        return (f"not sent: interrupted ({stop.reason})" if stop is not None and stop.stopped
                else f"not sent: an earlier request to {name} failed")
    for q in plan.queues:
        if q.current is not None and q.current == q.target:
            results[q.mq] = QueueResult(q, Status.ALREADY, "already at target: nothing sent",
                                        now=q.current)
        else:
            by_broker.setdefault(q.mq.broker_name, []).append(q)

    async def server_side(addr: str, q: QueuePlan) -> QueueResult:
        # AdminBrokerProcessor.resetOffsetInner: queueId >= 0 and an explicit offset (checked
        # against [min, max+1]); isForce is ignored on this path
        resp = await client.invoke(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
            "topic": plan.topic, "group": plan.group, "queueId": q.mq.queue_id,
            "offset": q.target, "timestamp": -1, "isForce": True})
        got = _table(resp.body).get(q.mq)
        if got is None or got == q.target:
            return QueueResult(q, Status.APPLIED, "server-side reset")
        return QueueResult(q, Status.APPLIED, f"the broker set {got}, not {q.target}",
                           expected=int(got))

    async def update(addr: str, q: QueuePlan) -> QueueResult:
        resp = await client.invoke(addr, RequestCode.UPDATE_CONSUMER_OFFSET, {
            "consumerGroup": plan.group, "topic": plan.topic, "queueId": q.mq.queue_id,
            "commitOffset": q.target})
        if (resp.remark or "").strip() == PREVIOUSLY_RESET:
            return QueueResult(q, Status.FAILED, "the broker ignored the write: a server-side "
                               f"reset of this queue is pending ('{PREVIOUSLY_RESET}')")
        return QueueResult(q, Status.APPLIED, "offset written (UPDATE_CONSUMER_OFFSET)")

    async def one_broker(name: str, position: int | None = None) -> None:
        bp = plan.brokers[name]
        addr = bp.addr or ""
        qs = by_broker[name]
        pushed: int | None = None
        try:
            if stopped():
                return
            if bp.path == Path_.LEGACY_PUSH:
                # Broker2Client.resetOffset: the whole topic by time; the broker computes each
                # queue's offset and pushes it to the online push consumers
                inflight.update((q.mq, q) for q in qs)
                pushed = now_ms()
                resp = await client.invoke(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
                    "topic": plan.topic, "group": plan.group,
                    "timestamp": plan.target.timestamp, "isForce": True})
                for q in qs:
                    inflight.pop(q.mq, None)
                table = _table(resp.body)
                for q in qs:
                    got = table.get(q.mq)
                    if got is None:
                        results[q.mq] = QueueResult(q, Status.APPLIED, "pushed to the clients; "
                                                    "the broker did not list this queue")
                    elif int(got) == q.target:
                        results[q.mq] = QueueResult(q, Status.APPLIED, "pushed to the clients")
                    else:
                        results[q.mq] = QueueResult(
                            q, Status.APPLIED, f"pushed to the clients; the broker computed "
                            f"{got} (plan: {q.target})", expected=int(got))
                    results[q.mq].sent_ms = pushed
                    results[q.mq].push_position = position
                return
            send = server_side if bp.path == Path_.SERVER_SIDE else update
            for q in qs:
                if stopped():
                    break
                inflight[q.mq] = q
                try:
                    r = await send(addr, q)
                except MqctlError as exc:
                    inflight.pop(q.mq, None)
                    results[q.mq] = QueueResult(q, Status.FAILED, _failure_detail(exc))
                    raise
                inflight.pop(q.mq, None)
                results[q.mq] = r
                if r.status == Status.FAILED:
                    break
        except MqctlError as exc:
            for q in qs:
                results.setdefault(q.mq, QueueResult(
                    q, Status.FAILED if bp.path == Path_.LEGACY_PUSH else Status.NOT_SENT,
                    _failure_detail(exc) if bp.path == Path_.LEGACY_PUSH else not_sent(name)))
                if pushed is not None and isinstance(exc, ConnectError | RequestTimeout):
                    # no answer: the broker may have pushed it (verify reads the owners)
                    results[q.mq].sent_ms = pushed
                    results[q.mq].push_position = position
        finally:
            for q in qs:
                if q.mq in inflight:  # cancelled while waiting for the answer
                    results.setdefault(q.mq, QueueResult(
                        q, Status.UNKNOWN, f"sent, no answer before mqctl stopped "
                        f"({stop.reason if stop else 'cancelled'}): it may or may not have "
                        "changed; `mqctl offsets show` reads it"))
                results.setdefault(q.mq, QueueResult(q, Status.NOT_SENT, not_sent(name)))
            if on_broker_done is not None:
                on_broker_done(name)

    sem = asyncio.Semaphore(max(1, concurrency))

    async def bounded(name: str) -> None:
        async with sem:
            await one_broker(name)

    # the legacy pushes go one broker after another, each once the one before it answered
    # (the broker pushes to the clients before it answers: Broker2Client.resetOffset,
    # invokeOneway): every client then gets them in this order, and as it applies them one at
    # a time, 10 s each (MQClientInstance.resetOffset is synchronized), the first broker's
    # queues are applied about 10 s after the push, the second's about 20 s (verify reads the
    # owners after each step: mqctl.reset.evidence.PushSchedule)
    pushes = [n for n in sorted(by_broker) if plan.brokers[n].path == Path_.LEGACY_PUSH]

    async def pushed_in_turn() -> None:
        async with sem:
            for i, n in enumerate(pushes, 1):
                await one_broker(n, i)

    task = asyncio.ensure_future(asyncio.gather(
        *([pushed_in_turn()] if pushes else []),
        *(bounded(n) for n in sorted(by_broker) if n not in pushes)))
    if stop is None:
        await task
    else:
        await stop.race(task, grace_s)
    # a broker still waiting for its turn when the apply was cancelled sent nothing
    return [results.get(q.mq) or QueueResult(q, Status.NOT_SENT, not_sent(q.mq.broker_name))
            for q in plan.queues]


# ------------------------------------------------------------------------------ verify

def took(q: QueuePlan, now: int | None, goal: int | None = None) -> bool:
    """Did the reset take? Exact, or moved on from the target the way consumers do."""
    target = q.target if goal is None else goal
    if now is None:
        return False
    if now == target:
        return True
    if q.current is None:
        return now >= target
    if target < q.current:  # rewind: consumers re-consume from the target
        return target <= now < q.current
    return now >= target  # forward: nothing before the target can have been consumed


async def clock_sleep(seconds: float, *, tick: float = 0.02) -> None:
    """Wait ``seconds`` on the mqctl clock (:func:`mqctl.timeparse.now_ms`), and never longer
    than ``seconds`` of real time: with the real clock this is a plain sleep; with the simulated
    cluster's accelerated clock (or a manual clock another thread advances) it ends as soon as
    the simulated time has passed."""
    if seconds <= 0:
        return
    loop = asyncio.get_running_loop()
    deadline = now_ms() + seconds * 1000
    real_end = loop.time() + seconds
    while True:
        left_real = real_end - loop.time()
        left_clock = (deadline - now_ms()) / 1000
        if left_real <= 0 or left_clock <= 0:
            return
        await asyncio.sleep(min(left_real, left_clock, tick))


Waiter = Callable[[float], Awaitable[None]]


async def _read_offsets(admin: Admin, plan: Plan, names: Iterable[str]
                        ) -> tuple[dict[MessageQueue, int], dict[str, str]]:
    async def read(name: str) -> dict[MessageQueue, Any]:
        return (await admin.consume_stats(plan.group, plan.brokers[name].addr or "",
                                          plan.topic)).offsets

    now: dict[MessageQueue, int] = {}
    failed: dict[str, str] = {}
    for o in await fan_out(sorted(set(names)), read, concurrency=admin.concurrency):
        if o.ok and o.value is not None:
            now.update({mq: w.consumer_offset for mq, w in o.value.items()})
        else:
            failed[o.item] = o.error.message if o.error else "failed"
    return now, failed


async def _polls(admin: Admin, plan: Plan, names: list[str], wait: Waiter, seconds: float,
                 every: float) -> AsyncIterator[tuple[dict[MessageQueue, int], dict[str, str]]]:
    """Read the offsets every ``every`` seconds for ``seconds`` (on the mqctl clock and never
    longer in real time); the caller stops early by leaving the loop."""
    deadline = now_ms() + seconds * 1000
    loop = asyncio.get_running_loop()
    real_end = loop.time() + seconds
    while True:
        left = min((deadline - now_ms()) / 1000, real_end - loop.time())
        if left <= 0:
            return
        await wait(min(every, left))
        yield await _read_offsets(admin, plan, names)


def _own_pull_window(plan: Plan, r: QueueResult, v: int | None) -> bool:
    """Read where the group's own pull that takes a server-side reset puts it until its client
    writes the target (OWN_PULL_SETTLE_S): a forward target, read below it and at or past the
    group's offset at the plan (a pull consumer's position never falls below its committed
    offset). Pop consumers have no such window: the pop commits the reset offset itself
    (PopMessageProcessor.getPopOffset -> resetPopOffset)."""
    cur, st = r.plan.current, plan.consumers
    return (v is not None and cur is not None and cur <= v < r.goal and st.online
            and not st.pop and _path(plan, r) == Path_.SERVER_SIDE)


def _own_pull_settle_s(plan: Plan) -> float:
    v = plan.consumers.min_version
    return (OWN_PULL_SETTLE_S if v is not None and v >= V5_2_0
            else OWN_PULL_SETTLE_OLD_CLIENT_S)


class _OwnerReads:
    """The owners' running info, read in the background at the moments a legacy push's
    schedule gives (right after the pushes, after each client step: PushSchedule.read_moments)
    while verify polls the offsets: a client busy with a push may take seconds to answer, and
    the offsets must be polled meanwhile."""

    def __init__(self, admin: Admin, plan: Plan, reader: OwnerReader, moments: list[int]):
        self.admin, self.plan, self.reader = admin, plan, reader
        self.moments = sorted(moments)
        self.tasks: list[asyncio.Future[OwnerRead]] = []
        self.last_start: int | None = None

    async def _one(self) -> OwnerRead:
        try:
            return await self.reader(self.admin, self.plan)
        except MqctlError as exc:
            return OwnerRead(now_ms(), error=exc.message)

    def start(self) -> None:
        self.last_start = now_ms()
        self.tasks.append(asyncio.ensure_future(self._one()))

    def tick(self) -> None:
        """Start a read if a moment has come (one read for several that passed at once)."""
        t = now_ms()
        due = [m for m in self.moments if m <= t]
        if due:
            self.moments = [m for m in self.moments if m > t]
            self.start()

    def done(self) -> list[OwnerRead]:
        return [x.result() for x in self.tasks if x.done() and not x.cancelled()]

    async def drain(self) -> None:
        if self.tasks:
            await asyncio.wait(self.tasks)

    def cancel(self) -> None:
        self.moments = []
        for x in self.tasks:
            x.cancel()


def _push_schedule(results: Iterable[QueueResult]) -> PushSchedule | None:
    """The run's legacy pushes in the order sent (a push without an answer may have reached
    the clients: it counts)."""
    sent: dict[str, tuple[int, int]] = {}
    for r in results:
        if r.sent_ms is not None:
            sent.setdefault(r.plan.mq.broker_name, (r.push_position or 0, r.sent_ms))
    if not sent:
        return None
    order = sorted(sent.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[0]))
    return PushSchedule(tuple((name, ms) for name, (_pos, ms) in order))


async def verify(admin: Admin, plan: Plan, results: list[QueueResult], *,
                 wait_s: float = 0.0, waiter: Waiter | None = None,
                 poll_s: float = 1.0, owners: OwnerReader | None = read_owners
                 ) -> list[QueueResult]:
    """Re-read the offsets after ``wait_s`` (on the mqctl clock; ``waiter`` replaces the wait in
    tests) and mark each queue a request was sent for: verified, not-taken, unknown,
    unverified.

    On the legacy push path each client applies the brokers' pushes one after another, 10 s
    each (the first broker pushed about 10 s after the push, the second about 20 s); on the
    server-side path older clients apply it 10 s after their next pull: the offsets are polled
    every ``poll_s`` and verify ends as soon as every queue is decided. A forced
    UPDATE_CONSUMER_OFFSET of an online group is judged only after the whole wait, since live
    consumers overwrite it at their next commit.

    A fast consumer re-consumes a rewind between two polls, so a queue never read at its target
    is not taken on that ground alone: on the server-side path the broker's success answer is
    the proof (it wrote the offset before answering and ignores the clients' commits until
    their next pull takes it); on the legacy push path the owners' running info (``owners``,
    read right after the pushes and after each client's step: :mod:`mqctl.reset.evidence`)
    tells whether the clients re-created their process queues; an offset that moved forward
    proves nothing there (a consumer that never got the push moves forward too). Where nothing
    proves it either way the status is ``unknown``."""
    sent = [r for r in results if r.status in (Status.APPLIED, Status.FAILED)]
    if not sent:
        return results
    wait = waiter or clock_sleep
    names = sorted({r.plan.mq.broker_name for r in sent})
    pending = [r for r in sent if r.status == Status.APPLIED]
    st = plan.consumers
    legacy = [r for r in sent if _path(plan, r) == Path_.LEGACY_PUSH and r.sent_ms is not None
              and st.online and not _beyond_write_queues(plan, r)]
    sched = _push_schedule(legacy)
    start = now_ms()
    reads: _OwnerReads | None = None
    if sched is not None and owners is not None:
        end = start + max(0.0, wait_s) * 1000
        reads = _OwnerReads(admin, plan, owners, [m for m in sched.read_moments() if m <= end])
        reads.start()  # right after the pushes
    try:
        return await _verify(admin, plan, results, sent, pending, legacy, sched, reads,
                             names, wait, wait_s, poll_s, owners, start)
    finally:
        if reads is not None:
            reads.cancel()


def _legacy_decided(plan: Plan, r: QueueResult, reads: _OwnerReads | None,
                    sched: PushSchedule | None) -> bool:
    """A legacy push's queue needs no more reads: its offsets or its owners prove it."""
    if _legacy_offsets_proof(r, r.lowest) is not None:
        return True
    if reads is None or sched is None:
        return False
    verdict, _why = legacy_verdict(r.plan.mq, reads.done(), sched, target=r.goal,
                                   current=r.plan.current, members=plan.consumers.members)
    return verdict != "unknown"


async def _verify(admin: Admin, plan: Plan, results: list[QueueResult],
                  sent: list[QueueResult], pending: list[QueueResult],
                  legacy: list[QueueResult], sched: PushSchedule | None,
                  reads: _OwnerReads | None, names: list[str], wait: Waiter, wait_s: float,
                  poll_s: float, owners: OwnerReader | None, start: int) -> list[QueueResult]:
    # poll where the change arrives by itself (clients after their pause, consumers taking a
    # pending server-side offset); a forced UPDATE_CONSUMER_OFFSET is judged at the end only
    early = bool(pending) and all(_path(plan, r) in (Path_.LEGACY_PUSH, Path_.SERVER_SIDE)
                                  for r in pending)
    now: dict[MessageQueue, int] = {}
    failed: dict[str, str] = {}
    read = False
    is_legacy = {id(r) for r in legacy}
    others = [r for r in pending if id(r) not in is_legacy]
    if early and wait_s > 0:
        async for now, failed in _polls(admin, plan, names, wait, wait_s, poll_s):
            read = True
            _record(pending, now, now_ms() - start)
            if reads is not None:
                reads.tick()
            # a queue that took stays taken: on a small queue the clients may re-consume the
            # whole rewind and commit the old offset again before the other queues take; a
            # legacy push's queue is decided by its offsets on a rewind or by its owners
            if (not failed and all(r.taken_after_ms is not None for r in others)
                    and all(_legacy_decided(plan, r, reads, sched) for r in legacy)):
                break
    elif wait_s > 0:
        if reads is None:
            await wait(wait_s)
        else:  # wait, reading the owners at their moments
            end = now_ms() + wait_s * 1000
            while (left := (end - now_ms()) / 1000) > 0:
                await wait(min(poll_s, left))
                reads.tick()
    if not read:
        now, failed = await _read_offsets(admin, plan, names)

    def in_window() -> list[QueueResult]:
        return [r for r in pending if _own_pull_window(plan, r, now.get(r.plan.mq))]

    settle_from = now_ms()
    if wait_s > 0 and not failed and in_window():
        # read while the group's own pull-with-commit shows where it was: until the client's
        # write lands (or the bound), so the verdict never rests on a read taken in between
        async for now, failed in _polls(admin, plan, names, wait, _own_pull_settle_s(plan),
                                        OWN_PULL_POLL_S):
            _record(pending, now, now_ms() - start)
            if failed or not in_window():
                break
    for r in in_window():  # (how long it was read so after the wait: what the detail says)
        r.settled_s = (now_ms() - settle_from) / 1000 if wait_s > 0 else None

    if reads is not None:
        for r in legacy:
            r.now = now.get(r.plan.mq)
        if any(not _legacy_decided(plan, r, reads, sched) for r in legacy):
            reads.moments = []
            last = reads.last_start
            if last is None or now_ms() - last >= 1000 or all(x.done() for x in reads.tasks):
                reads.start()  # once more at the end, for the queues still undecided
            await reads.drain()
    done = reads.done() if reads is not None else []
    st = plan.consumers
    for r in sent:
        broker = r.plan.mq.broker_name
        if broker in failed:
            if r.status == Status.APPLIED:
                r.status = Status.UNVERIFIED
                r.detail = (f"{r.detail}; accepted by the broker, but the re-read failed: "
                            f"{failed[broker]}")
            else:
                r.detail = f"{r.detail}; re-read failed too ({failed[broker]}): unknown"
            continue
        r.now = now.get(r.plan.mq)
        # verified: at the target when verify ends, or (only for an online group) moved on
        # from it the way the group's own consumers move it (issue 26 item 2)
        exact = r.now is not None and r.now == r.goal
        ok = exact or (took(r.plan, r.now, r.goal) and st.online)
        if id(r) in is_legacy:
            _legacy_push_verdict(plan, r, done, sched, wait_s)
        elif r.status == Status.APPLIED:
            if exact:
                r.status = Status.VERIFIED
            elif st.known and not st.online:
                _moved(r, f"the broker accepted {r.goal}"
                       + (f" (read at it {r.reached_after_ms / 1000:.0f} s into the wait)"
                          if r.reached_after_ms is not None else "")
                       + "; the group has no online consumer to move it")
            elif not st.known:
                r.status = Status.UNKNOWN
                r.detail = (f"offset is {r.now}, not the target {r.goal}: whether the group's "
                            f"own consumers moved it is not known (its members could not be "
                            f"read: {st.error})")
            elif ok:
                r.status = Status.VERIFIED
                r.detail = f"{r.detail}; the group's online consumers have moved on to {r.now}"
            elif _re_consumed(r):
                r.status = Status.VERIFIED
                r.detail = (f"taken (re-consumed to {r.now}): read {r.lowest} "
                            f"{(r.lowest_after_ms or 0) / 1000:.0f} s into the wait, then the "
                            "consumers replayed the rewind and committed again")
            elif _path(plan, r) == Path_.SERVER_SIDE:
                _server_side_verdict(plan, r)
            elif _path(plan, r) == Path_.LEGACY_PUSH and not _beyond_write_queues(plan, r):
                # a push whose time was not recorded: nothing read before and after it
                _legacy_push_verdict(plan, r, [], None, wait_s)
            else:
                _not_taken(plan, r)
        elif ok:  # the request failed, yet the offset is there (e.g. a lost answer)
            r.status = Status.VERIFIED
            r.detail = f"the offset took, although the request failed ({r.detail})"
        elif r.now == r.plan.current:
            r.detail = f"{r.detail}; unchanged ({r.now})"
        else:
            r.detail = f"{r.detail}; offset is now {r.now}"
    moved = [r for r in results if r.status == Status.MOVED]
    if moved and not st.online and owners is not None:
        await _joined_since(admin, plan, moved)
    return results


def _moved(r: QueueResult, why: str) -> None:
    """It reached the target and something else moved it afterwards."""
    r.status = Status.MOVED
    r.detail = f"moved by another writer (now {r.now}): {why}"


async def _joined_since(admin: Admin, plan: Plan, moved: list[QueueResult]) -> None:
    """A group offline at the plan whose offsets moved: if it has members now, its own
    consumers may have moved them (a consumer started meanwhile): unknown, not "another
    writer"."""
    from mqctl.reset.plan import consumer_state

    now = await consumer_state(admin, plan.group)
    if not now.online:
        return
    for r in moved:
        r.status = Status.UNKNOWN
        r.detail = (f"offset is {r.now}, not the target {r.goal}: group {plan.group} was "
                    f"offline at the plan but has {len(now.members)} member(s) now, whose "
                    "consumption may have moved it, or another writer did: nothing read tells "
                    "which; check `mqctl offsets show` and `mqctl consumers`")


def _path(plan: Plan, r: QueueResult) -> Path_ | None:
    b = plan.brokers.get(r.plan.mq.broker_name)
    return b.path if b is not None else None


def _not_taken(plan: Plan, r: QueueResult, why: str | None = None) -> None:
    r.status = Status.NOT_TAKEN
    r.detail = (f"offset is {r.now}, expected {r.goal}"
                + (f" (lowest read during the wait: {r.lowest})"
                   if r.lowest is not None and r.lowest != r.now else "")
                + (f"; {why}" if why else _not_taken_why(plan, r)))


def _past_old(r: QueueResult) -> bool:
    """A rewind whose final read is at or past the old position: replayed, or never applied."""
    cur = r.plan.current
    return r.now is not None and cur is not None and r.goal < cur and r.now >= cur


def _below_target(r: QueueResult) -> bool:
    """Read below the target after the reset: consumers never move back, so something else
    wrote it (another reset, a rollback, an UPDATE_CONSUMER_OFFSET)."""
    return r.now is not None and r.now < r.goal


def _server_side_verdict(plan: Plan, r: QueueResult) -> None:
    """A server-side reset the broker accepted and that no read showed at its target.

    AdminBrokerProcessor.resetOffsetInner writes the offset (ConsumerOffsetManager.
    assignResetOffset: the reset table and the offset table) before it answers; from then on
    ConsumerManageProcessor.updateConsumerOffset ignores the clients' commits ("Offset has been
    previously reset") until a pull (PullMessageProcessor) or a pop (PopMessageProcessor.
    getPopOffset -> resetPopOffset) of the queue erases it and moves the consumer there. So
    with clients from 5.2.0 on (which write the new offset at once) and pop consumers (the
    broker commits it itself), a group at or past the target has consumed on from it: the
    answer is the proof. A client before 5.2.0 commits its old offset with that pull and
    writes the new one 10 s later: a read past the old position does not tell which."""
    st = plan.consumers
    cur = r.plan.current
    proven = st.pop or (st.min_version is not None and st.min_version >= V5_2_0)
    if _own_pull_window(plan, r, r.now):
        r.status = Status.UNKNOWN
        x = r.settled_s
        waited = ("read so with no wait (--verify-wait 0)" if x is None
                  else f"still read so {x:.0f} s after the wait" if x >= 0.5
                  else "still read so under a second after the wait (a re-read failed)" if x > 0
                  else "read so at the end of the wait, and not again (a re-read failed)")
        r.detail = (f"offset is {r.now}, below the target {r.goal} and at or past where the "
                    f"group was ({cur}): the pull that takes a server-side reset commits the "
                    f"client's old position, which the client replaces with {r.goal} "
                    + ("at once" if proven else "10 s later (clients before 5.2.0)")
                    + f"; {waited}: the client has not written it yet, or another writer set "
                    "it; nothing read tells; check `mqctl offsets show` and the clients' logs "
                    "(`the pull request offset illegal`)")
        return
    if _below_target(r):
        if proven:  # the broker wrote the target before answering; consumers never move back
            _moved(r, f"below the target {r.goal}, which the broker wrote before it answered, "
                      "and these consumers never move back")
        else:
            _not_taken(plan, r)
        return
    moved = ("the group has re-consumed to " if cur is not None and r.now is not None
             and r.now >= cur else "the consumers have moved on to ")
    if proven:
        r.status = Status.VERIFIED
        r.detail = (f"applied by the broker (it wrote {r.goal} before answering and ignores "
                    f"the clients' commits until their next "
                    f"{'pop' if st.pop else 'pull'} takes it); {moved}{r.now}")
        return
    r.status = Status.UNKNOWN
    r.detail = (f"applied by the broker, but a client older than 5.2.0 commits its old offset "
                f"with the pull that takes the reset and writes {r.goal} 10 s later; read "
                f"{r.now} (old offset {cur}), never {r.goal}: re-consumed or not applied, "
                "nothing read tells; check `mqctl offsets show` and the clients' logs "
                "(`the pull request offset illegal`)")


def _legacy_offsets_proof(r: QueueResult, now: int | None) -> str | None:
    """What the group's committed offsets prove of a legacy push, or None: only a rewind can be
    proven so (the clients write the target when they apply it, and nothing else moves the
    group's offset back below where it was): read at the target, or between it and where the
    group was, at the end (``now``) or at any poll (a rewind read as taken that the consumers
    replayed since). A forward offset proves nothing: a consumer that never got the push moves
    forward too."""
    cur, goal = r.plan.current, r.goal
    if cur is None or goal >= cur:
        return None
    if now is not None and now == goal:
        return ""
    if now is not None and goal <= now < cur:
        return f"the group's online consumers have moved on to {now}"
    if r.taken_after_ms is not None:
        return (f"taken (re-consumed to {r.now}): read {r.lowest} "
                f"{(r.lowest_after_ms or 0) / 1000:.0f} s into the wait, then the "
                "consumers replayed the rewind and committed again")
    return None


def _legacy_push_verdict(plan: Plan, r: QueueResult, reads: list[OwnerRead],
                         sched: PushSchedule | None, wait_s: float) -> None:
    """A legacy push's queue: its offsets (a rewind read at or below where the group was) or
    its owners' process queues (mqctl.reset.evidence.legacy_verdict) decide; else unknown."""
    cur, goal = r.plan.current, r.goal
    rewind = cur is not None and goal < cur
    failed = r.status == Status.FAILED
    if not failed and _below_target(r) and r.reached_after_ms is not None:
        _moved(r, f"read at the target {r.reached_after_ms / 1000:.0f} s into the wait, then "
                  "below it, and consumers never move back")
        return
    if not failed and _below_target(r) and rewind:
        r.status = Status.NOT_TAKEN
        r.detail = (f"offset is {r.now}, below the target {goal}: written by something else "
                    "after the push (consumers never move back)")
        return
    proof = _legacy_offsets_proof(r, r.now)
    if proof is not None:
        r.status = Status.VERIFIED
        if failed:
            r.detail = f"the offset took, although the request failed ({r.detail})"
        elif proof.startswith("taken ("):
            r.detail = proof
        elif proof:
            r.detail = f"{r.detail}; {proof}"
        return
    if sched is None:
        verdict, why = "unknown", "the push's time was not recorded"
    else:
        verdict, why = legacy_verdict(r.plan.mq, reads, sched, target=goal, current=cur,
                                      members=plan.consumers.members)
    if verdict == "applied" and not _below_target(r):
        r.status = Status.VERIFIED
        done = ("the group has re-consumed to " if _past_old(r)
                else "the consumers have moved on to ")
        r.detail = (f"the offset took, although the request failed ({r.detail}): {why}"
                    if failed else f"applied by the clients: {why}; {done}{r.now}")
        return
    if failed:
        r.detail = (f"{r.detail}; unchanged ({r.now})" if r.now == cur
                    else f"{r.detail}; offset is now {r.now}")
        return
    if verdict == "not-applied":
        r.status = Status.NOT_TAKEN
        r.detail = (f"offset is {r.now}, expected {goal}"
                    + (f" (lowest read during the wait: {r.lowest})"
                       if r.lowest is not None and r.lowest != r.now else "")
                    + f"; not applied: {why}")
        return
    r.status = Status.UNKNOWN
    if rewind:
        seen = (f"never the target {goal}: a fast consumer re-consumes a rewind between two "
                "reads, so this does not say whether it took")
    elif r.now is not None and r.now >= goal:
        seen = (f"past the target {goal}: a consumer that never applied the push moves "
                "forward too, so this does not say whether it took")
    else:
        seen = f"below the target {goal}: not applied yet, or not at all"
    short = ""
    if sched is not None and wait_s * 1000 < sched.all_applied_ms() - sched.first_ms:
        pos = sched.position(r.plan.mq.broker_name) or len(sched.pushes)
        short = (f"; the wait ({wait_s:g} s) ended before the clients' turn for this push "
                 f"({apply_text(pos, len(sched.pushes))} after it; every push of the "
                 f"{len(sched.pushes)} by {(sched.all_applied_ms() - sched.first_ms) / 1000:.0f}"
                 " s)")
    r.detail = (f"pushed to the clients; read {r.now} (old offset {cur}), {seen}; {why}{short}; "
                "check `mqctl offsets show` and the clients' logs (`invoke reset offset "
                f"operation from broker`, `[persist] ... {goal}`)")


def _record(pending: list[QueueResult], now: dict[MessageQueue, int], after_ms: int) -> None:
    """One poll of verify: the lowest offset read per queue, and the first read that took."""
    for r in pending:
        v = now.get(r.plan.mq)
        if v is None:
            continue
        if r.lowest is None or v < r.lowest:
            r.lowest, r.lowest_after_ms = v, after_ms
        if r.taken_after_ms is None and took(r.plan, v, r.goal):
            r.taken_after_ms = after_ms
        if r.reached_after_ms is None and v == r.goal:
            r.reached_after_ms = after_ms


def _re_consumed(r: QueueResult) -> bool:
    """A rewind read as taken during the wait, now at or past the old position again: the
    consumers replayed it (the real 4.9.3 client applied the push 10 s after it, committed the
    target, re-consumed and committed 50 again: corpus 4.9.3/reset/208_after_*; 5.3.3 showed 0
    at +4.4 s and 50 by +25 s). Not a failure, and a re-run would replay it once more."""
    cur, goal = r.plan.current, r.goal
    return (r.taken_after_ms is not None and r.now is not None and cur is not None
            and goal < cur and r.now >= cur)


def _beyond_write_queues(plan: Plan, r: QueueResult) -> bool:
    b = plan.brokers.get(r.plan.mq.broker_name)
    return (b is not None and b.path == Path_.LEGACY_PUSH and b.write_queues is not None
            and r.plan.mq.queue_id >= b.write_queues)


def _not_taken_why(plan: Plan, r: QueueResult) -> str:
    b = plan.brokers.get(r.plan.mq.broker_name)
    if b is not None and _beyond_write_queues(plan, r):
        return (f"; beyond the {b.write_queues} write queue(s): the legacy reset does not "
                "cover it")
    return "; live consumers may have overwritten it" if plan.consumers.online else ""


def summarize(results: Iterable[QueueResult]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in results:
        out[r.status.value] = out.get(r.status.value, 0) + 1
    return out

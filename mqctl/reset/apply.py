"""Applying a plan (the only state-changing part) and verifying it.

Every state-changing request is sent once (``idempotent=False``: never re-sent blindly). A
broker's queues go one at a time; the first failure stops that broker (the remaining queues are
reported ``not-sent``), other brokers carry on. Verify re-reads every queue a request was sent
for -- also those whose request failed, since a lost answer does not mean nothing changed -- so
the output says exactly which queues changed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mqctl.admin import Admin
from mqctl.errors import ConnectError, MqctlError, RequestTimeout
from mqctl.interrupt import INTERRUPT_GRACE_S, Stop
from mqctl.models import MessageQueue, queue_map
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode
from mqctl.reset.results import BAD, QueueResult, Status, summarize, took
from mqctl.reset.types import Path_, Plan, QueuePlan
from mqctl.reset.verify import (
    OWN_PULL_SETTLE_OLD_CLIENT_S,
    OWN_PULL_SETTLE_S,
    _server_side_verdict,
    clock_sleep,
    verify,
)
from mqctl.timeparse import now_ms

__all__ = ["BAD", "OWN_PULL_SETTLE_OLD_CLIENT_S", "OWN_PULL_SETTLE_S", "PREVIOUSLY_RESET",
           "QueueResult", "Status", "_server_side_verdict", "apply_plan", "clock_sleep",
           "summarize", "took", "verify"]

PREVIOUSLY_RESET = "Offset has been previously reset"


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
    return await _Applying(admin, plan, concurrency, on_broker_done, stop, grace_s).run()


class _Applying:
    """One apply: the queues already at their target (nothing sent), then each broker's
    requests, the legacy pushes one broker after another; a result per queue."""

    def __init__(self, admin: Admin, plan: Plan, concurrency: int,
                 on_broker_done: Callable[[str], None] | None, stop: Stop | None,
                 grace_s: float) -> None:
        self.admin, self.plan, self.concurrency = admin, plan, concurrency
        self.on_broker_done, self.stop, self.grace_s = on_broker_done, stop, grace_s
        self.by_broker: dict[str, list[QueuePlan]] = {}
        self.results: dict[MessageQueue, QueueResult] = {}
        self.inflight: dict[MessageQueue, QueuePlan] = {}
        for q in plan.queues:
            if q.current is not None and q.current == q.target:
                self.results[q.mq] = QueueResult(q, Status.ALREADY,
                                                 "already at target: nothing sent",
                                                 now=q.current)
            else:
                self.by_broker.setdefault(q.mq.broker_name, []).append(q)

    def stopped(self) -> bool:
        return self.stop is not None and self.stop.stopped

    def not_sent(self, name: str) -> str:
        return (f"not sent: interrupted ({self.stop.reason})" if self.stopped() and self.stop
                else f"not sent: an earlier request to {name} failed")

    async def run(self) -> list[QueueResult]:
        sem = asyncio.Semaphore(max(1, self.concurrency))

        async def bounded(name: str) -> None:
            async with sem:
                await self.one_broker(name)

        # the legacy pushes go one broker after another, each once the one before it answered
        # (the broker pushes to the clients before it answers: Broker2Client.resetOffset,
        # invokeOneway): every client then gets them in this order, and as it applies them one
        # at a time, 10 s each (MQClientInstance.resetOffset is synchronized), the first
        # broker's queues are applied about 10 s after the push, the second's about 20 s
        # (verify reads the owners after each step: mqctl.reset.evidence.PushSchedule)
        pushes = [n for n in sorted(self.by_broker)
                  if self.plan.brokers[n].path == Path_.LEGACY_PUSH]

        async def pushed_in_turn() -> None:
            async with sem:
                for i, n in enumerate(pushes, 1):
                    await self.one_broker(n, i)

        task = asyncio.ensure_future(asyncio.gather(
            *([pushed_in_turn()] if pushes else []),
            *(bounded(n) for n in sorted(self.by_broker) if n not in pushes)))
        if self.stop is None:
            await task
        else:
            await self.stop.race(task, self.grace_s)
        # a broker still waiting for its turn when the apply was cancelled sent nothing
        return [self.results.get(q.mq) or QueueResult(q, Status.NOT_SENT,
                                                      self.not_sent(q.mq.broker_name))
                for q in self.plan.queues]

    async def one_broker(self, name: str, position: int | None = None) -> None:
        bp = self.plan.brokers[name]
        qs = self.by_broker[name]
        pushed: int | None = None
        try:
            if self.stopped():
                return
            if bp.path == Path_.LEGACY_PUSH:
                pushed = now_ms()
                await self.push(bp.addr or "", qs, pushed, position)
                return
            await self.per_queue(bp.addr or "", bp.path, qs)
        except MqctlError as exc:
            self.broker_failed(bp.path, name, qs, exc, pushed, position)
        finally:
            self.left_over(name, qs)
            if self.on_broker_done is not None:
                self.on_broker_done(name)

    async def push(self, addr: str, qs: list[QueuePlan], pushed: int,
                   position: int | None) -> None:
        """Broker2Client.resetOffset: the whole topic by time; the broker computes each queue's
        offset and pushes it to the online push consumers."""
        plan = self.plan
        self.inflight.update((q.mq, q) for q in qs)
        resp = await self.admin.client.invoke(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
            "topic": plan.topic, "group": plan.group,
            "timestamp": plan.target.timestamp, "isForce": True})
        for q in qs:
            self.inflight.pop(q.mq, None)
        table = _table(resp.body)
        for q in qs:
            got = table.get(q.mq)
            if got is None:
                r = QueueResult(q, Status.APPLIED, "pushed to the clients; the broker did not "
                                "list this queue")
            elif int(got) == q.target:
                r = QueueResult(q, Status.APPLIED, "pushed to the clients")
            else:
                r = QueueResult(q, Status.APPLIED, f"pushed to the clients; the broker computed "
                                f"{got} (plan: {q.target})", expected=int(got))
            self.results[q.mq] = r.with_(sent_ms=pushed, push_position=position)

    async def per_queue(self, addr: str, path: Path_ | None, qs: list[QueuePlan]) -> None:
        """One request per queue, in order; the first failure stops the broker."""
        send = self.server_side if path == Path_.SERVER_SIDE else self.update
        for q in qs:
            if self.stopped():
                break
            self.inflight[q.mq] = q
            try:
                r = await send(addr, q)
            except MqctlError as exc:
                self.inflight.pop(q.mq, None)
                self.results[q.mq] = QueueResult(q, Status.FAILED, _failure_detail(exc))
                raise
            self.inflight.pop(q.mq, None)
            self.results[q.mq] = r
            if r.status == Status.FAILED:
                break

    async def server_side(self, addr: str, q: QueuePlan) -> QueueResult:
        # AdminBrokerProcessor.resetOffsetInner: queueId >= 0 and an explicit offset (checked
        # against [min, max+1]); isForce is ignored on this path
        plan = self.plan
        resp = await self.admin.client.invoke(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
            "topic": plan.topic, "group": plan.group, "queueId": q.mq.queue_id,
            "offset": q.target, "timestamp": -1, "isForce": True})
        got = _table(resp.body).get(q.mq)
        if got is None or got == q.target:
            return QueueResult(q, Status.APPLIED, "server-side reset")
        return QueueResult(q, Status.APPLIED, f"the broker set {got}, not {q.target}",
                           expected=int(got))

    async def update(self, addr: str, q: QueuePlan) -> QueueResult:
        plan = self.plan
        resp = await self.admin.client.invoke(addr, RequestCode.UPDATE_CONSUMER_OFFSET, {
            "consumerGroup": plan.group, "topic": plan.topic, "queueId": q.mq.queue_id,
            "commitOffset": q.target})
        if (resp.remark or "").strip() == PREVIOUSLY_RESET:
            return QueueResult(q, Status.FAILED, "the broker ignored the write: a server-side "
                               f"reset of this queue is pending ('{PREVIOUSLY_RESET}')")
        return QueueResult(q, Status.APPLIED, "offset written (UPDATE_CONSUMER_OFFSET)")

    def broker_failed(self, path: Path_ | None, name: str, qs: list[QueuePlan],
                      exc: MqctlError, pushed: int | None, position: int | None) -> None:
        """A failure stops the broker: a push's queues failed (verify reads them: a push
        without an answer may have reached the clients), the rest not sent."""
        legacy = path == Path_.LEGACY_PUSH
        for q in qs:
            if q.mq in self.results:
                continue
            r = QueueResult(q, Status.FAILED if legacy else Status.NOT_SENT,
                            _failure_detail(exc) if legacy else self.not_sent(name))
            if pushed is not None and isinstance(exc, ConnectError | RequestTimeout):
                r = r.with_(sent_ms=pushed, push_position=position)  # verify reads the owners
            self.results[q.mq] = r

    def left_over(self, name: str, qs: list[QueuePlan]) -> None:
        """Queues left without a result: sent and cancelled while waiting for the answer
        (unknown), or never sent."""
        for q in qs:
            if q.mq in self.inflight:
                self.results.setdefault(q.mq, QueueResult(
                    q, Status.UNKNOWN, f"sent, no answer before mqctl stopped "
                    f"({self.stop.reason if self.stop else 'cancelled'}): it may or may not "
                    "have changed; `mqctl offsets show` reads it"))
            self.results.setdefault(q.mq, QueueResult(q, Status.NOT_SENT, self.not_sent(name)))

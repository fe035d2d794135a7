"""Releasing a queue lock on behalf of its holder (``mqctl locks release``).

The plan is pure (:func:`plan_release`: whose lock, and whether releasing it is safe); the
apply step sends UNLOCK_BATCH_MQ (:func:`apply_release`, :func:`apply_releases`), the only
mutating request of the locks commands; :func:`prepare_releases` and :func:`recheck` capture the
view before and after (read-only), and :func:`record_releases` marks the state file.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from mqctl.errors import (
    ConnectError,
    ExitCode,
    MqctlError,
    PartialFailure,
    RefusedError,
    UsageError,
)
from mqctl.interrupt import INTERRUPT_GRACE_S, Stop, change_lock, guarded, taken_over
from mqctl.locks.capture import capture_locks
from mqctl.locks.model import (
    RENEW_SLACK_MS,
    LockState,
    LockView,
    QueueLock,
    classify_queue,
    latest_claim,
    superseded_by,
)
from mqctl.locks.store import LockStore
from mqctl.locks.view import ensure_lockable
from mqctl.models import RETRY_PREFIX, MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode
from mqctl.timeparse import format_duration, format_local, now_ms

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.context import Context
    from mqctl.interrupt import Stop
    from mqctl.locks.store import LockStore
    from mqctl.models import TopicRoute

_QUEUE_SPEC = re.compile(r"^(?P<broker>.+):(?P<qid>[0-9]{1,10})$")  # (a Java int)


def parse_queue_spec(text: str) -> tuple[str, int]:
    """``broker-a:3`` -> ("broker-a", 3)."""
    m = _QUEUE_SPEC.match(text.strip())
    if not m or not m.group("broker").strip():
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise UsageError(f"bad --queue {shown!r}: expected BROKER:QUEUE_ID, e.g. broker-a:3",
                         hint="see `mqctl locks show` for the queue names")
    return m.group("broker").strip(), int(m.group("qid"))


@dataclass(frozen=True, slots=True)
class ReleasePlan:
    group: str
    mq: MessageQueue
    holder: str
    broker_addr: str
    queue: QueueLock
    alive_renewing: bool
    forced: bool
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def body(self) -> dict[str, Any]:
        """UnlockBatchRequestBody (remoting/.../protocol/body/UnlockBatchRequestBody.java)."""
        return {"consumerGroup": self.group, "clientId": self.holder,
                "mqSet": [self.mq.to_dict()], "onlyThisBroker": False}

    def describe(self) -> str:
        return (f"send UNLOCK_BATCH_MQ to {self.mq.broker_name} master {self.broker_addr}: "
                f"release the lock of {self.holder} on {self.mq} for group {self.group}")

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "queue": self.mq.short, "topic": self.mq.topic,
                "broker": self.mq.broker_name, "queue_id": self.mq.queue_id,
                "holder": self.holder, "broker_addr": self.broker_addr,
                "state": self.queue.state.value, "alive_renewing": self.alive_renewing,
                "forced": self.forced, "request": "UNLOCK_BATCH_MQ", "body": self.body(),
                "action": self.describe(), "warnings": list(self.warnings)}


def resolve_queue(view: LockView, broker: str, queue_id: int, topic: str | None
                  ) -> MessageQueue:
    matches = sorted({q.mq for q in view.queues
                      if q.mq.broker_name == broker and q.mq.queue_id == queue_id
                      and (topic is None or q.mq.topic == topic)})
    if topic is not None and not matches:
        # a topic the group does not (or no longer) subscribe to: still a valid target
        return MessageQueue(topic, broker, queue_id)
    if not matches:
        known = sorted({q.mq.broker_name for q in view.queues})
        raise UsageError(f"group {view.group} has no queue {broker}:{queue_id}"
                         + (f" (brokers: {', '.join(known)})" if known else ""),
                         hint="see `mqctl locks show` for the queue names; add --topic for "
                              "a topic the group no longer subscribes to")
    if len(matches) > 1:
        raise UsageError(f"--queue {broker}:{queue_id} matches queues of {len(matches)} topics "
                         f"({', '.join(m.topic for m in matches)}): add --topic",
                         hint="e.g. --topic " + matches[0].topic)
    return matches[0]


def plan_release(view: LockView, mq: MessageQueue, broker_addr: str, *,
                 client: str | None = None, force: bool = False,
                 slack_ms: int = RENEW_SLACK_MS) -> ReleasePlan:
    """Decide on whose behalf to release ``mq`` and whether that is safe (pure).

    The broker removes an entry only when the clientId sent equals the holder
    (``RebalanceLockManager.unlockBatch``), so the holder must be known: the latest locked
    claim (live or remembered) unless ``client`` names it.
    """
    q = view.queue(mq) or classify_queue(mq, (), (), now=view.now, group=view.group)
    now = view.now
    warnings: list[str] = []
    if client is not None:
        holder = client
        other = [c for c in q.claims if c.client_id != client and c.live and c.locked
                 and not c.overdue(now, slack_ms) and c.lease_runs(now)]
        if other and not force:
            raise RefusedError(f"{other[0].client_id} holds and renews the lock of {mq.short}, "
                               f"not {client}: the broker releases a lock only for its holder "
                               "and would ignore this request",
                               hint="drop --client to act on the recorded holder, or --force")
        if not any(c.client_id == client for c in q.claims):
            warnings.append(f"{client} is not recorded as a claimer of {mq.short}: if it does "
                            "not hold the broker lock the broker ignores the request")
    else:
        locked = [c for c in q.claims if c.locked and c.last_lock_ts > 0]
        holders = list(dict.fromkeys(c.client_id for c in locked))
        if not holders:
            raise UsageError(f"no client is recorded as holding the lock of {mq.short} in group "
                             f"{view.group} (state {q.state.value})",
                             hint="pass --client ID of the holder (e.g. from the broker's "
                                  "lock.log); the broker only releases a lock for its holder")
        live_holders = [c for c in locked if c.live and not c.dropped]
        if len({c.client_id for c in live_holders}) > 1:
            raise UsageError(f"{len(holders)} clients claim the lock of {mq.short} "
                             f"({', '.join(holders)}): pass --client to pick one",
                             hint="see `mqctl locks show` for their lock ages")
        holder = latest_claim(locked).client_id
    if q.state is LockState.HUNG and holder == q.owner and not force:
        # a release frees nobody: no other member asks for the queue while the hung one is
        # listed, and the hung client re-locks it when it resumes
        raise RefusedError(
            f"{holder} is a hung member the allocation still assigns {mq.short} to: releasing "
            "its lock frees nobody (no other client asks for the queue while it is listed, "
            f"and {holder} re-locks it when it resumes); {q.hint or ''}".rstrip("; "),
            hint=f"wait until the brokers drop {holder} (FREES AT in `mqctl locks show`), or "
                 "restart it; use --force to send the release anyway")
    claim = next((c for c in q.claims if c.client_id == holder), None)
    later = superseded_by(claim, q.claims) if claim is not None else None
    if claim is not None and later is not None and later.granted_ts is not None \
            and not force:
        # never offer a release of a lock another client was granted since
        raise RefusedError(
            f"{later.client_id} already claims {mq.short}: the broker granted it the lock at "
            f"{format_local(later.granted_ts)}, after the last renewal {holder} reported "
            f"({format_local(claim.last_lock_ts)}), so {holder} no longer holds it and the "
            "broker would ignore this request (RebalanceLockManager.unlockBatch removes only "
            "the holder's own entry)",
            hint="nothing to release: see `mqctl locks show`; use --force to send it anyway")
    alive_renewing = bool(claim is not None and claim.live and claim.locked
                          and not claim.overdue(now, slack_ms) and claim.lease_runs(now))
    if alive_renewing and not force:
        age = claim.age(now) if claim is not None else None
        raise RefusedError(f"{holder} is alive and renewing its lock on {mq.short} (last "
                           f"renewal {format_duration(age or 0)} ago): releasing it would not "
                           "help, it re-locks the queue at its next renewal",
                           hint="use --force to release it anyway; to move the queue, stop or "
                                "restart that consumer")
    if alive_renewing:
        warnings.append(f"{holder} is alive and renewing: it takes the lock back at its next "
                        "renewal (within 20 s) while it is still assigned the queue")
    if claim is not None and not claim.live and claim.lease_end is not None \
            and now > claim.lease_end:
        warnings.append(f"the lease of {holder} has probably lapsed already "
                        f"({format_local(claim.lease_end)}); releasing is harmless")
    return ReleasePlan(view.group, mq, holder, broker_addr, q, alive_renewing, force,
                       tuple(warnings))


def master_addr(route: TopicRoute, broker: str) -> str:
    b = route.broker(broker)
    if b is None:
        raise UsageError(f"broker {broker} is not in the route of {route.topic}",
                         hint="brokers: " + ", ".join(x.broker_name for x in route.brokers))
    addr = b.master_addr
    if not addr:
        raise ConnectError(f"broker {broker} has no master in the route: locks live on the "
                           "master only", hint="wait for the master to come back")
    return addr


def require_queue(route: TopicRoute, mq: MessageQueue) -> None:
    """A queue the topic does not have is bad input (exit 2), as ``offsets reset --queues``
    refuses it: the readable queues of the route (the queues a consumer is allocated, locks
    and consumes: RebalanceImpl.rebalanceByTopic over topicSubscribeInfoTable), never a plan
    for a queue id that names nothing."""
    if mq not in set(route.subscribe_queues()):
        raise UsageError(f"--queue names a queue the topic {route.topic} does not have: "
                         f"{mq.short}",
                         hint=f"see `mqctl route {route.topic}` for its brokers and queues")


async def apply_release(admin: Admin, plan: ReleasePlan) -> None:
    """Send UNLOCK_BATCH_MQ (mutating) to the master of the queue's broker.

    The header (UnlockBatchMqRequestHeader) has no field of its own; ``bname`` names the target
    broker as RpcRequestHeader does. SUCCESS carries no body: the broker does not say whether an
    entry was removed (it only logs it in lock.log).
    """

    body = fastjson.dumps(plan.body()).encode()
    await admin.client.invoke(plan.broker_addr, RequestCode.UNLOCK_BATCH_MQ,
                              {"bname": plan.mq.broker_name}, body)


class ReleaseStatus(StrEnum):
    RELEASED = "released"  # SUCCESS: the broker removed the entry if the holder held it
    FAILED = "failed"  # the request failed (it may or may not have reached the broker)
    NOT_SENT = "not-sent"  # an interrupt, or an earlier request to the same broker failed
    UNKNOWN = "unknown"  # sent, no answer before mqctl stopped (interrupt): may have changed


@dataclass(frozen=True, slots=True)
class ReleaseResult:
    plan: ReleasePlan
    status: ReleaseStatus
    detail: str
    error: MqctlError | None = None

    def to_dict(self) -> dict[str, Any]:
        p = self.plan
        return {"queue": p.mq.short, "topic": p.mq.topic, "broker": p.mq.broker_name,
                "queue_id": p.mq.queue_id, "holder": p.holder, "broker_addr": p.broker_addr,
                "status": self.status.value, "detail": self.detail}


async def apply_releases(admin: Admin, plans: Sequence[ReleasePlan], *,
                         stop: Stop | None = None, grace_s: float | None = None,
                         concurrency: int | None = None) -> list[ReleaseResult]:
    """Send one UNLOCK_BATCH_MQ per queue (so each queue's outcome is known): brokers
    concurrently (bounded), a broker's queues one at a time in the given order; the first
    failure on a broker stops that broker (its remaining queues are ``not-sent``). Never
    re-sends.

    ``stop`` (SIGINT/SIGTERM, the ``offsets reset --execute`` mechanism,
    :class:`mqctl.interrupt.Stop`): no new request is sent (``not-sent``); the ones in flight
    are waited for up to ``grace_s`` (default ``INTERRUPT_GRACE_S``, 5 s; a second interrupt
    ends the wait) and are ``unknown`` if still unanswered."""


    grace = INTERRUPT_GRACE_S if grace_s is None else grace_s
    by_broker: dict[str, list[ReleasePlan]] = defaultdict(list)
    for p in plans:
        by_broker[p.mq.broker_name].append(p)
    results: dict[MessageQueue, ReleaseResult] = {}
    inflight: set[MessageQueue] = set()
    sem = asyncio.Semaphore(concurrency or admin.concurrency)

    def not_sent(name: str) -> str:
        return (f"not sent: interrupted ({stop.reason})" if stop is not None and stop.stopped
                else f"not sent: an earlier request to {name} failed")

    async def one_broker(name: str) -> None:
        async with sem:
            try:
                for p in by_broker[name]:
                    if stop is not None and stop.stopped:
                        break
                    inflight.add(p.mq)
                    try:
                        await apply_release(admin, p)
                    except MqctlError as exc:
                        inflight.discard(p.mq)
                        results[p.mq] = ReleaseResult(p, ReleaseStatus.FAILED, exc.message, exc)
                        break
                    inflight.discard(p.mq)  # (still in flight if cancelled: unknown)
                    results.setdefault(p.mq, ReleaseResult(
                        p, ReleaseStatus.RELEASED, "the broker answered SUCCESS"))
            finally:
                for p in by_broker[name]:
                    if p.mq in inflight:  # cancelled while waiting for the answer
                        results.setdefault(p.mq, ReleaseResult(
                            p, ReleaseStatus.UNKNOWN, "sent, no answer before mqctl stopped "
                            f"({stop.reason if stop else 'cancelled'}): it may or may not have "
                            "been released; sending it again is harmless"))

    task = asyncio.ensure_future(asyncio.gather(*(one_broker(n) for n in by_broker)))
    if stop is None:
        await task
    else:
        await stop.race(task, grace)
    return [results.get(p.mq) or ReleaseResult(p, ReleaseStatus.NOT_SENT,
                                                not_sent(p.mq.broker_name))
            for p in plans]


def record_releases(store: LockStore | None, results: Iterable[ReleaseResult]) -> None:
    """Mark the released queues in the state file (not the unknown ones: their holder may
    still hold them)."""
    if store is None:
        return
    for r in results:
        if r.status == ReleaseStatus.RELEASED:
            store.mark_released(r.plan.group, r.plan.holder, r.plan.mq, now_ms())


async def prepare_releases(admin: Admin, group: str, queues: Sequence[tuple[str, int]], *,
                           topic: str | None = None, client: str | None = None,
                           force: bool = False, store: LockStore | None = None,
                           slack_ms: int = RENEW_SLACK_MS
                           ) -> tuple[list[ReleasePlan], LockView]:
    """Capture the group's lock view once (read-only) and plan the release of each queue's
    lock; any queue that cannot be released safely refuses the whole command (nothing sent)."""
    view = await capture_locks(admin, group, topic=topic, store=store, slack_ms=slack_ms)
    ensure_lockable(view)
    mqs = list(dict.fromkeys(resolve_queue(view, b, q, topic) for b, q in queues))
    routes: dict[str, TopicRoute] = {}
    plans = []
    for mq in mqs:
        if mq.topic not in routes:
            routes[mq.topic] = await admin.topic_route(mq.topic)
        addr = master_addr(routes[mq.topic], mq.broker_name)
        require_queue(routes[mq.topic], mq)
        plans.append(plan_release(view, mq, addr, client=client, force=force,
                                  slack_ms=slack_ms))
    return plans, view


async def prepare_release(admin: Admin, group: str, broker: str, queue_id: int, *,
                          topic: str | None = None, client: str | None = None,
                          force: bool = False, store: LockStore | None = None,
                          slack_ms: int = RENEW_SLACK_MS) -> tuple[ReleasePlan, LockView]:
    """Capture the group's lock view (read-only) and plan the release of one queue's lock."""
    plans, view = await prepare_releases(admin, group, [(broker, queue_id)], topic=topic,
                                         client=client, force=force, store=store,
                                         slack_ms=slack_ms)
    return plans[0], view


async def recheck(admin: Admin, plans: Sequence[ReleasePlan], *,
                  store: LockStore | None = None, slack_ms: int = RENEW_SLACK_MS) -> LockView:
    """Re-capture the lock view of the released queues' topics (read-only)."""
    topics = {p.mq.topic for p in plans}
    one = next(iter(topics)) if len(topics) == 1 else None
    return await capture_locks(admin, plans[0].group, topic=one, store=store,
                               include_retry=any(t.startswith(RETRY_PREFIX) for t in topics),
                               slack_ms=slack_ms)


async def execute_release(admin: Admin, plan: ReleasePlan, *, store: LockStore | None = None,
                          slack_ms: int = RENEW_SLACK_MS) -> LockView:
    """Send the release, record it in the state file, and re-check the queue."""
    (r,) = await apply_releases(admin, [plan])
    if r.error is not None:
        raise r.error
    record_releases(store, [r])
    return await recheck(admin, [plan], store=store, slack_ms=slack_ms)


# ---------------------------------------------------------------------- the workflow
# ``locks release``: small ordered steps, each returning a frozen result (as the reset's,
# mqctl.reset.workflow): the change lock, the plan (read-only), ``ready`` (the caller shows
# it), the releases, the state file, the re-check; the words of what happened and the error
# the run ends with.

NO_UNDO = ("a release cannot be undone: a holder that is still alive re-locks its queues at its "
           "next lockAll (every 20 s) while the allocation still assigns them to it")


@dataclass(frozen=True, slots=True)
class ReleaseRequest:
    """What to release: ``queues`` as (broker, queue id), ``topic`` (needed when the group
    subscribes to several topics with that queue), ``client`` (the holder to release for;
    default the recorded one), ``execute``, ``force``, the state file (``state_dir``,
    ``no_state``)."""

    group: str
    queues: tuple[tuple[str, int], ...]
    topic: str | None = None
    client: str | None = None
    execute: bool = False
    force: bool = False
    state_dir: str | None = None
    no_state: bool = False


def release_request(group: str, queues: Sequence[str], **kw: Any) -> ReleaseRequest:
    """A request from ``--queue broker-a:3`` texts (checked before any I/O)."""
    return ReleaseRequest(group, tuple(parse_queue_spec(q) for q in queues), **kw)


@dataclass(frozen=True, slots=True)
class ReleaseInterruption:
    """What an interrupt while releasing did: its notes and data, and the error (130)."""

    notes: tuple[str, ...]
    data: dict[str, Any]
    error: MqctlError


@dataclass(frozen=True, slots=True)
class ReleaseOutcome:
    """What a release run did: the plans and the view they rest on (``before``), the view
    re-checked after (``after``), each queue's result (None: nothing sent), how far it went
    (``phase``: plan, apply, re-check, done), the commands that send what was not, the notes
    (a change lock taken over), whether the plan was shown before the change (``ready``)."""

    plans: tuple[ReleasePlan, ...]
    before: LockView
    execute: bool
    phase: str = "plan"
    after: LockView | None = None
    results: tuple[ReleaseResult, ...] | None = None
    finish: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    ready: bool = False
    interruption: ReleaseInterruption | None = None

    def error(self) -> MqctlError | None:
        """The error the run ends with (None: every release went through, or none was
        asked for)."""
        if self.interruption is not None:
            return self.interruption.error
        if self.results is None:
            return None
        return release_failure(self.results, list(self.finish))


@dataclass(slots=True)
class ReleaseRun:
    """One release from its plan to its outcome (:meth:`plan`, :meth:`apply`); holds the
    group's change lock (an --execute) until :meth:`close`."""

    admin: Admin
    namesrv: tuple[str, ...]
    request: ReleaseRequest
    plans: tuple[ReleasePlan, ...]
    before: LockView
    store: LockStore | None
    notes: tuple[str, ...]
    _locks: ExitStack

    @classmethod
    async def plan(cls, admin: Admin, namesrv: Sequence[str], request: ReleaseRequest, *,
                   context: Context | None = None, stop: Stop | None = None) -> ReleaseRun:
        """Plan it (read-only): one change of the group at a time from this machine (the
        lock is taken first, for an --execute), then the view and each queue's plan."""

        store = None if request.no_state else LockStore(request.state_dir, list(namesrv))
        locks = ExitStack()
        try:
            notes = _release_lock(locks, namesrv, request, context)
            if stop is not None:
                stop.late = "after the release was complete: the result above stands"
            work = prepare_releases(admin, request.group, request.queues, topic=request.topic,
                                    client=request.client, force=request.force, store=store)
            if stop is not None:

                plans, before = await guarded(stop, work, lambda: True)
            else:
                plans, before = await work
        except BaseException:
            locks.close()
            raise
        return cls(admin, tuple(namesrv), request, tuple(plans), before, store, notes, locks)

    def unchanged(self) -> ReleaseOutcome:
        """The outcome of a plan that is not applied (no --execute)."""
        return ReleaseOutcome(self.plans, self.before, self.request.execute, notes=self.notes)

    async def apply(self, *, on_progress: Callable[[str, int], None] | None = None,
                    stop: Stop | None = None) -> ReleaseOutcome:
        """Send the releases (one UNLOCK_BATCH_MQ per queue), mark them in the state file and
        re-check; ``on_progress(step, n)``: ``ready`` (show the plan now: ``n`` locks) before
        anything is sent. ``stop``: an interrupt (:func:`mqctl.interrupt.deferred`)."""
        if not self.request.execute:
            return self.unchanged()
        steps = _Release(self, on_progress, stop)
        if stop is None:
            return await steps.run()

        return await guarded(stop, steps.run(), lambda: steps.phase == "plan")

    def close(self) -> None:
        self._locks.close()

    def __enter__(self) -> ReleaseRun:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _release_lock(locks: ExitStack, namesrv: Sequence[str], request: ReleaseRequest,
                  context: Context | None) -> tuple[str, ...]:
    """One change of a group at a time from this machine (an offsets reset too)."""
    if not request.execute:
        return ()

    stale = locks.enter_context(change_lock(list(namesrv), request.group,
                                            f"mqctl locks release {request.group}"))
    if stale is None:
        return ()
    note = taken_over(request.group, stale)
    if context is not None:
        context.warning(note)
    return (note,)


class _Release:
    """The steps of :meth:`ReleaseRun.apply` (``phase`` for the interrupt guard)."""

    def __init__(self, run: ReleaseRun, on_progress: Callable[[str, int], None] | None,
                 stop: Stop | None) -> None:

        self.run_, self.on_progress = run, on_progress
        self.stop = stop if stop is not None else Stop()
        self.phase = "plan"
        self.ready = False

    def outcome(self, **kw: Any) -> ReleaseOutcome:
        r = self.run_
        results = kw.get("results")
        finish = tuple(finish_commands(r.namesrv, list(results or []), force=r.request.force,
                                       state_dir=r.request.state_dir,
                                       no_state=r.request.no_state))
        return ReleaseOutcome(r.plans, r.before, True, phase=self.phase, finish=finish,
                              notes=r.notes, ready=self.ready, **kw)

    async def run(self) -> ReleaseOutcome:

        r = self.run_
        self.ready = True
        if self.on_progress is not None:
            self.on_progress("ready", len(r.plans))
        self.stop.before_change()  # (a signal while planning: nothing is sent)
        self.phase = "apply"
        results = await apply_releases(r.admin, r.plans, stop=self.stop)
        record_releases(r.store, results)
        if self.stop.stopped:
            return self.interrupted(results, None)
        self.phase = "re-check"
        checked = asyncio.ensure_future(recheck(r.admin, r.plans, store=r.store))
        after = None if await self.stop.race(checked, 0.0) else checked.result()
        if after is None:
            return self.interrupted(results, None)
        self.phase = "done"  # re-checked: a signal from now on comes after it
        return self.outcome(results=tuple(results), after=after)

    def interrupted(self, results: list[ReleaseResult], after: LockView | None
                    ) -> ReleaseOutcome:
        self.stop.reported = True
        out = self.outcome(results=tuple(results), after=after)
        report = release_interruption(results, self.phase, self.stop.reason, list(out.finish))
        return replace(out, interruption=report)


def finish_commands(namesrv: Sequence[str], results: list[ReleaseResult], *, force: bool,
                     state_dir: str | None, no_state: bool) -> list[str]:
    """The commands that send what an interrupted release did not (not sent, unknown, failed):
    one per topic and holder, the holder named with --client (exact, no state file needed;
    re-sending a release the broker already did is harmless: it ignores it)."""


    left: dict[tuple[str, str], list[str]] = {}
    for r in results:
        if r.status != ReleaseStatus.RELEASED:
            left.setdefault((r.plan.mq.topic, r.plan.holder), []).append(r.plan.mq.short)
    cmds = []
    for (topic, holder), queues in left.items():
        args = ["mqctl", "-n", ";".join(namesrv), "locks", "release", "-g",
                results[0].plan.group,
                "--topic", topic]
        for q in queues:
            args += ["--queue", q]
        args += ["--client", holder, "--execute"]
        args += ["--force"] if force else []
        args += ["--no-state"] if no_state else \
            (["--state-dir", str(state_dir)] if state_dir is not None else [])
        cmds.append(shlex.join(args))
    return cmds


def release_interruption(results: list[ReleaseResult], phase: str, signame: str,
                 finish: list[str]) -> ReleaseInterruption:
    """An interrupt while releasing: the notes and data that say what was released (the
    per-queue table is the result table), the command that finishes the release, and the error
    to exit with (130). Worded as ``offsets reset --execute`` words it."""

    count = {s: sum(1 for r in results if r.status == s) for s in ReleaseStatus}
    if phase == "apply":
        what = (f"{count[ReleaseStatus.RELEASED]} released, {count[ReleaseStatus.NOT_SENT]} "
                f"not sent, {count[ReleaseStatus.UNKNOWN]} unknown"
                + (f", {count[ReleaseStatus.FAILED]} failed"
                   if count[ReleaseStatus.FAILED] else ""))
    else:
        what = (f"every request was sent, {count[ReleaseStatus.RELEASED]} released but not "
                "re-checked")
    msg = f"interrupted by {signame} during {phase}: {what}"
    fin = " && ".join(finish) or None
    notes = [f"INTERRUPTED: {msg}; nothing more was sent"
             + (f" (requests in flight were waited for up to {INTERRUPT_GRACE_S:.0f} s; "
                "'unknown' ones may or may not have been released)" if phase == "apply"
                else ""),
             f"finish the release: {fin}" if fin else
             "finish the release: nothing left to send (check with `mqctl locks show`)",
             f"undo: none ({NO_UNDO})"]
    data = {"signal": signame, "during": phase, "finish": fin, "finish_commands": finish,
            "undo": None}
    hint = (f"finish: {fin}; " if fin else "") + NO_UNDO
    return ReleaseInterruption(tuple(notes), data,
                               MqctlError(msg, hint=hint, exit_code=ExitCode.INTERRUPTED))


def release_failure(results: Sequence[ReleaseResult], finish: list[str]) -> MqctlError | None:
    """Some releases failed: the first error when none was released (its own exit code),
    else a partial failure (exit 8) with the command that sends the rest; None when every
    one went through."""

    bad = [r for r in results if r.status != ReleaseStatus.RELEASED]
    if not bad:
        return None
    first = next((r.error for r in bad if r.error is not None), None)
    if first is not None and len(bad) == len(results):
        return first
    return PartialFailure(f"{len(bad)} of {len(results)} release(s) did not go through: "
                         + "; ".join(f"{r.plan.mq.short} {r.status.value} ({r.detail})"
                                     for r in bad[:4]),
                         [(r.plan.mq.short, r.detail) for r in bad],
                         hint="send the rest: " + " && ".join(finish))

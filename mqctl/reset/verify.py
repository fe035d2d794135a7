"""Verifying a reset (read-only): re-read the offsets after the wait and judge each queue a
request was sent for, by small ordered rules that return new frozen results (verified,
not-taken, moved, unknown, unverified: :class:`mqctl.reset.results.Status`).

On the legacy push path each client applies the brokers' pushes one after another, 10 s each
(``MQClientInstance.resetOffset``); on the server-side path older clients apply it 10 s after
their next pull (apache/rocketmq#7635); the owners' running info tells a push applied from one
not applied (:mod:`mqctl.reset.evidence`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mqctl.admin import Admin
from mqctl.errors import MqctlError
from mqctl.models import MessageQueue
from mqctl.remoting.client import fan_out
from mqctl.reset.evidence import (
    OwnerRead,
    OwnerReader,
    PushSchedule,
    apply_text,
    legacy_verdict,
    read_owners,
)
from mqctl.reset.plan import consumer_state
from mqctl.reset.results import QueueResult, Status, took
from mqctl.reset.types import Path_, Plan
from mqctl.timeparse import now_ms
from mqctl.versions import V5_2_0

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

Waiter = Callable[[float], Awaitable[None]]


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

def _path(plan: Plan, r: QueueResult) -> Path_ | None:
    b = plan.brokers.get(r.plan.mq.broker_name)
    return b.path if b is not None else None

def _past_old(r: QueueResult) -> bool:
    """A rewind whose final read is at or past the old position: replayed, or never applied."""
    cur = r.plan.current
    return r.now is not None and cur is not None and r.goal < cur and r.now >= cur

def _below_target(r: QueueResult) -> bool:
    """Read below the target after the reset: consumers never move back, so something else
    wrote it (another reset, a rollback, an UPDATE_CONSUMER_OFFSET)."""
    return r.now is not None and r.now < r.goal

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



async def verify(admin: Admin, plan: Plan, results: list[QueueResult], *,
                 wait_s: float = 0.0, waiter: Waiter | None = None,
                 poll_s: float = 1.0, owners: OwnerReader | None = read_owners
                 ) -> list[QueueResult]:
    """Re-read the offsets after ``wait_s`` (on the mqctl clock; ``waiter`` replaces the wait in
    tests) and judge each queue a request was sent for: verified, not-taken, unknown,
    unverified; new results (the ones given are left as they were), in their order.

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
        return list(results)
    run = _Reading(admin, plan, sent, waiter or clock_sleep, wait_s, poll_s, owners)
    try:
        read = await run.read()
    finally:
        run.cancel()
    judged = {r.plan.mq: judge(plan, read, r) for r in read.seen.values()}
    out = [judged.get(r.plan.mq, r) for r in results]
    moved = [r for r in out if r.status == Status.MOVED]
    if moved and not plan.consumers.online and owners is not None:
        again = {r.plan.mq: r for r in await _joined_since(admin, plan, moved)}
        out = [again.get(r.plan.mq, r) for r in out]
    return out


@dataclass(frozen=True, slots=True)
class Read:
    """What verify read: the offsets when it ended (``now``), the brokers whose re-read failed,
    the owners' reads of a legacy push (``owners``) and its schedule, each queue as seen
    (``seen``: the lowest offset read, when it took or reached the target, how long the own
    pull's window was read), the legacy push's queues and the wait."""

    now: dict[MessageQueue, int]
    failed: dict[str, str]
    owners: list[OwnerRead]
    schedule: PushSchedule | None
    seen: dict[MessageQueue, QueueResult]
    legacy: frozenset[MessageQueue]
    wait_s: float


class _Reading:
    """The reads of :func:`verify`: the polls while the change arrives, the own pull's
    settling window, the owners of a legacy push."""

    def __init__(self, admin: Admin, plan: Plan, sent: list[QueueResult], wait: Waiter,
                 wait_s: float, poll_s: float, owners: OwnerReader | None) -> None:
        self.admin, self.plan, self.wait, self.wait_s, self.poll_s = (
            admin, plan, wait, wait_s, poll_s)
        self.names = sorted({r.plan.mq.broker_name for r in sent})
        self.seen = {r.plan.mq: r for r in sent}
        self.pending = [r.plan.mq for r in sent if r.status == Status.APPLIED]
        st = plan.consumers
        self.legacy = frozenset(r.plan.mq for r in sent
                                if _path(plan, r) == Path_.LEGACY_PUSH and r.sent_ms is not None
                                and st.online and not _beyond_write_queues(plan, r))
        self.sched = _push_schedule(r for r in sent if r.plan.mq in self.legacy)
        self.start = now_ms()
        self.reads: _OwnerReads | None = None
        if self.sched is not None and owners is not None:
            end = self.start + max(0.0, wait_s) * 1000
            self.reads = _OwnerReads(admin, plan, owners,
                                     [m for m in self.sched.read_moments() if m <= end])
            self.reads.start()  # right after the pushes

    def cancel(self) -> None:
        if self.reads is not None:
            self.reads.cancel()

    def record(self, now: dict[MessageQueue, int]) -> None:
        """One poll: the lowest offset read per pending queue, the first read that took and
        the first exactly at the target (new results in ``seen``)."""
        after_ms = now_ms() - self.start
        for mq in self.pending:
            self.seen[mq] = _recorded(self.seen[mq], now.get(mq), after_ms)

    def decided(self, failed: dict[str, str]) -> bool:
        """Every queue decided: those that arrive by themselves took, the legacy push's are
        proven by their offsets or their owners."""
        others = [mq for mq in self.pending if mq not in self.legacy]
        return (not failed and all(self.seen[mq].taken_after_ms is not None for mq in others)
                and all(_legacy_decided(self.plan, self.seen[mq], self.reads, self.sched)
                        for mq in self.legacy))

    async def read(self) -> Read:
        now, failed = await self.polled()
        now, failed = await self.settled(now, failed)
        if self.reads is not None:
            await self.owners_at_the_end(now)
        return Read(now, failed, self.reads.done() if self.reads is not None else [],
                    self.sched, self.seen, self.legacy, self.wait_s)

    async def polled(self) -> tuple[dict[MessageQueue, int], dict[str, str]]:
        """Poll where the change arrives by itself (clients after their pause, consumers
        taking a pending server-side offset); a forced UPDATE_CONSUMER_OFFSET is judged at the
        end only; then the offsets as they are."""
        plan, wait_s = self.plan, self.wait_s
        early = bool(self.pending) and all(
            _path(plan, self.seen[mq]) in (Path_.LEGACY_PUSH, Path_.SERVER_SIDE)
            for mq in self.pending)
        if early and wait_s > 0:
            now: dict[MessageQueue, int] = {}
            failed: dict[str, str] = {}
            read = False
            async for now, failed in _polls(self.admin, plan, self.names, self.wait, wait_s,
                                            self.poll_s):
                read = True
                self.record(now)
                if self.reads is not None:
                    self.reads.tick()
                # a queue that took stays taken: on a small queue the clients may re-consume
                # the whole rewind and commit the old offset again before the other queues
                # take; a legacy push's queue is decided by its offsets on a rewind or by its
                # owners
                if self.decided(failed):
                    break
            if read:
                return now, failed
        elif wait_s > 0:
            await self.waited()
        return await _read_offsets(self.admin, plan, self.names)

    async def waited(self) -> None:
        if self.reads is None:
            await self.wait(self.wait_s)
            return
        end = now_ms() + self.wait_s * 1000  # wait, reading the owners at their moments
        while (left := (end - now_ms()) / 1000) > 0:
            await self.wait(min(self.poll_s, left))
            self.reads.tick()

    def in_window(self, now: dict[MessageQueue, int]) -> list[MessageQueue]:
        return [mq for mq in self.pending
                if _own_pull_window(self.plan, self.seen[mq], now.get(mq))]

    async def settled(self, now: dict[MessageQueue, int], failed: dict[str, str]
                      ) -> tuple[dict[MessageQueue, int], dict[str, str]]:
        """Read while the group's own pull-with-commit shows where it was: until the client's
        write lands (or the bound), so the verdict never rests on a read taken in between;
        each such queue says how long it was read so."""
        settle_from = last_read = now_ms()  # how long: from the end of the wait to the last read
        if self.wait_s > 0 and not failed and self.in_window(now):
            async for now, failed in _polls(self.admin, self.plan, self.names, self.wait,
                                            _own_pull_settle_s(self.plan), OWN_PULL_POLL_S):
                last_read = now_ms()
                self.record(now)
                if failed or not self.in_window(now):
                    break
        for mq in self.in_window(now):
            self.seen[mq] = self.seen[mq].with_(
                settled_s=(last_read - settle_from) / 1000 if self.wait_s > 0 else None)
        return now, failed

    async def owners_at_the_end(self, now: dict[MessageQueue, int]) -> None:
        """The owners once more at the end, for the legacy push's queues still undecided."""
        reads = self.reads
        assert reads is not None
        for mq in self.legacy:
            self.seen[mq] = self.seen[mq].with_(now=now.get(mq))
        if any(not _legacy_decided(self.plan, self.seen[mq], reads, self.sched)
               for mq in self.legacy):
            reads.moments = []
            last = reads.last_start
            if last is None or now_ms() - last >= 1000 or all(x.done() for x in reads.tasks):
                reads.start()
            await reads.drain()


def _recorded(r: QueueResult, v: int | None, after_ms: int) -> QueueResult:
    if v is None:
        return r
    changes: dict[str, Any] = {}
    if r.lowest is None or v < r.lowest:
        changes.update(lowest=v, lowest_after_ms=after_ms)
    if r.taken_after_ms is None and took(r.plan, v, r.goal):
        changes["taken_after_ms"] = after_ms
    if r.reached_after_ms is None and v == r.goal:
        changes["reached_after_ms"] = after_ms
    return r.with_(**changes) if changes else r


# ------------------------------------------------------------------ the verdicts

def judge(plan: Plan, read: Read, r: QueueResult) -> QueueResult:
    """One queue's verdict: its re-read failed (unverified, or unknown for a failed request),
    a legacy push's (:func:`_legacy_push_verdict`), then the first of :data:`APPLIED_RULES`
    (a request the broker accepted) or :data:`FAILED_RULES` that decides."""
    broker = r.plan.mq.broker_name
    if broker in read.failed:
        if r.status == Status.APPLIED:
            return r.with_(status=Status.UNVERIFIED, detail=(
                f"{r.detail}; accepted by the broker, but the re-read failed: "
                f"{read.failed[broker]}"))
        return r.with_(detail=f"{r.detail}; re-read failed too ({read.failed[broker]}): unknown")
    r = r.with_(now=read.now.get(r.plan.mq))
    if r.plan.mq in read.legacy:
        return _legacy_push_verdict(plan, r, read.owners, read.schedule, read.wait_s)
    for rule in APPLIED_RULES if r.status == Status.APPLIED else FAILED_RULES:
        found = rule(plan, r, read)
        if found is not None:
            return found
    return r


def _exact(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    """At the target when verify ends."""
    return r.with_(status=Status.VERIFIED) if r.now is not None and r.now == r.goal else None


def _offline_moved(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    """Not at the target, and the group has no online consumer to move it: another writer."""
    st = plan.consumers
    if not (st.known and not st.online):
        return None
    return _moved(r, f"the broker accepted {r.goal}"
                  + (f" (read at it {r.reached_after_ms / 1000:.0f} s into the wait)"
                     if r.reached_after_ms is not None else "")
                  + "; the group has no online consumer to move it")


def _members_unknown(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    st = plan.consumers
    if st.known:
        return None
    return r.with_(status=Status.UNKNOWN, detail=(
        f"offset is {r.now}, not the target {r.goal}: whether the group's own consumers moved "
        f"it is not known (its members could not be read: {st.error})"))


def _moved_on(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    """Moved on from the target the way the group's own online consumers move it."""
    if not (took(r.plan, r.now, r.goal) and plan.consumers.online):
        return None
    return r.with_(status=Status.VERIFIED,
                   detail=f"{r.detail}; the group's online consumers have moved on to {r.now}")


def _replayed(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    if not _re_consumed(r):
        return None
    return r.with_(status=Status.VERIFIED, detail=(
        f"taken (re-consumed to {r.now}): read {r.lowest} "
        f"{(r.lowest_after_ms or 0) / 1000:.0f} s into the wait, then the consumers replayed "
        "the rewind and committed again"))


def _server_side(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    return _server_side_verdict(plan, r) if _path(plan, r) == Path_.SERVER_SIDE else None


def _unrecorded_push(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    """A push whose time was not recorded: nothing read before and after it."""
    if _path(plan, r) != Path_.LEGACY_PUSH or _beyond_write_queues(plan, r):
        return None
    return _legacy_push_verdict(plan, r, [], None, read.wait_s)


def _otherwise_not_taken(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    return _not_taken(plan, r)


def _failed_yet_taken(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    """The request failed, yet the offset is there (e.g. a lost answer)."""
    exact = r.now is not None and r.now == r.goal
    if not (exact or (took(r.plan, r.now, r.goal) and plan.consumers.online)):
        return None
    return r.with_(status=Status.VERIFIED,
                   detail=f"the offset took, although the request failed ({r.detail})")


def _failed_as_read(plan: Plan, r: QueueResult, read: Read) -> QueueResult | None:
    if r.now == r.plan.current:
        return r.with_(detail=f"{r.detail}; unchanged ({r.now})")
    return r.with_(detail=f"{r.detail}; offset is now {r.now}")


Rule = Callable[[Plan, QueueResult, Read], "QueueResult | None"]
APPLIED_RULES: tuple[Rule, ...] = (_exact, _offline_moved, _members_unknown, _moved_on,
                                   _replayed, _server_side, _unrecorded_push,
                                   _otherwise_not_taken)
FAILED_RULES: tuple[Rule, ...] = (_failed_yet_taken, _failed_as_read)


def _moved(r: QueueResult, why: str) -> QueueResult:
    """It reached the target and something else moved it afterwards."""
    return r.with_(status=Status.MOVED, detail=f"moved by another writer (now {r.now}): {why}")


def _not_taken(plan: Plan, r: QueueResult, why: str | None = None) -> QueueResult:
    return r.with_(status=Status.NOT_TAKEN, detail=(
        f"offset is {r.now}, expected {r.goal}"
        + (f" (lowest read during the wait: {r.lowest})"
           if r.lowest is not None and r.lowest != r.now else "")
        + (f"; {why}" if why else _not_taken_why(plan, r))))


async def _joined_since(admin: Admin, plan: Plan, moved: list[QueueResult]
                        ) -> list[QueueResult]:
    """A group offline at the plan whose offsets moved: if it has members now, its own
    consumers may have moved them (a consumer started meanwhile): unknown, not "another
    writer"."""

    now = await consumer_state(admin, plan.group)
    if not now.online:
        return moved
    return [r.with_(status=Status.UNKNOWN, detail=(
        f"offset is {r.now}, not the target {r.goal}: group {plan.group} was offline at the "
        f"plan but has {len(now.members)} member(s) now, whose consumption may have moved it, "
        "or another writer did: nothing read tells which; check `mqctl offsets show` and "
        "`mqctl consumers`")) for r in moved]


def _server_side_verdict(plan: Plan, r: QueueResult) -> QueueResult:
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
        x = r.settled_s
        waited = ("read so with no wait (--verify-wait 0)" if x is None
                  else f"still read so {x:.0f} s after the wait" if x >= 0.5
                  else "still read so under a second after the wait (a re-read failed)" if x > 0
                  else "read so at the end of the wait, and not again (a re-read failed)")
        return r.with_(status=Status.UNKNOWN, detail=(
            f"offset is {r.now}, below the target {r.goal} and at or past where the group was "
            f"({cur}): the pull that takes a server-side reset commits the client's old "
            f"position, which the client replaces with {r.goal} "
            + ("at once" if proven else "10 s later (clients before 5.2.0)")
            + f"; {waited}: the client has not written it yet, or another writer set it; "
            "nothing read tells; check `mqctl offsets show` and the clients' logs (`the pull "
            "request offset illegal`)"))
    if _below_target(r):
        if proven:  # the broker wrote the target before answering; consumers never move back
            return _moved(r, f"below the target {r.goal}, which the broker wrote before it "
                             "answered, and these consumers never move back")
        return _not_taken(plan, r)
    moved = ("the group has re-consumed to " if cur is not None and r.now is not None
             and r.now >= cur else "the consumers have moved on to ")
    if proven:
        return r.with_(status=Status.VERIFIED, detail=(
            f"applied by the broker (it wrote {r.goal} before answering and ignores the "
            f"clients' commits until their next {'pop' if st.pop else 'pull'} takes it); "
            f"{moved}{r.now}"))
    return r.with_(status=Status.UNKNOWN, detail=(
        f"applied by the broker, but a client older than 5.2.0 commits its old offset with the "
        f"pull that takes the reset and writes {r.goal} 10 s later; read {r.now} (old offset "
        f"{cur}), never {r.goal}: re-consumed or not applied, nothing read tells; check `mqctl "
        "offsets show` and the clients' logs (`the pull request offset illegal`)"))


def _legacy_push_verdict(plan: Plan, r: QueueResult, reads: list[OwnerRead],
                         sched: PushSchedule | None, wait_s: float) -> QueueResult:
    """A legacy push's queue: its offsets (a rewind read at or below where the group was) or
    its owners' process queues (mqctl.reset.evidence.legacy_verdict) decide; else unknown."""
    cur, goal = r.plan.current, r.goal
    rewind = cur is not None and goal < cur
    failed = r.status == Status.FAILED
    if not failed and _below_target(r) and r.reached_after_ms is not None:
        return _moved(r, f"read at the target {r.reached_after_ms / 1000:.0f} s into the wait, "
                         "then below it, and consumers never move back")
    if not failed and _below_target(r) and rewind:
        return r.with_(status=Status.NOT_TAKEN, detail=(
            f"offset is {r.now}, below the target {goal}: written by something else after the "
            "push (consumers never move back)"))
    proof = _legacy_offsets_proof(r, r.now)
    if proof is not None:
        detail = (f"the offset took, although the request failed ({r.detail})" if failed
                  else proof if proof.startswith("taken (")
                  else f"{r.detail}; {proof}" if proof else r.detail)
        return r.with_(status=Status.VERIFIED, detail=detail)
    if sched is None:
        verdict, why = "unknown", "the push's time was not recorded"
    else:
        verdict, why = legacy_verdict(r.plan.mq, reads, sched, target=goal, current=cur,
                                      members=plan.consumers.members)
    if verdict == "applied" and not _below_target(r):
        done = ("the group has re-consumed to " if _past_old(r)
                else "the consumers have moved on to ")
        return r.with_(status=Status.VERIFIED, detail=(
            f"the offset took, although the request failed ({r.detail}): {why}"
            if failed else f"applied by the clients: {why}; {done}{r.now}"))
    if failed:
        return r.with_(detail=f"{r.detail}; unchanged ({r.now})" if r.now == cur
                       else f"{r.detail}; offset is now {r.now}")
    if verdict == "not-applied":
        return r.with_(status=Status.NOT_TAKEN, detail=(
            f"offset is {r.now}, expected {goal}"
            + (f" (lowest read during the wait: {r.lowest})"
               if r.lowest is not None and r.lowest != r.now else "")
            + f"; not applied: {why}"))
    return r.with_(status=Status.UNKNOWN, detail=_push_unknown(r, why, sched, wait_s))


def _push_unknown(r: QueueResult, why: str, sched: PushSchedule | None, wait_s: float) -> str:
    """Why a legacy push's queue is unknown: what its offset says and does not say, and a wait
    that ended before the clients' turn."""
    cur, goal = r.plan.current, r.goal
    if cur is not None and goal < cur:
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
    return (f"pushed to the clients; read {r.now} (old offset {cur}), {seen}; {why}{short}; "
            "check `mqctl offsets show` and the clients' logs (`invoke reset offset "
            f"operation from broker`, `[persist] ... {goal}`)")

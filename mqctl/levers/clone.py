"""``mqctl offsets clone --from G1 --to G2 -t T``: G2's committed offsets on T made G1's, the
group migration step, as mqadmin's ``cloneGroupOffset`` does it (CloneGroupOffsetCommand:
one CLONE_GROUP_OFFSET per broker of T's route, DefaultMQAdminExtImpl.cloneGroupOffset).

The broker (AdminBrokerProcessor.cloneGroupOffset, 4.9.3 and 5.3.3) skips the topic when G1 is
online and does not subscribe it, unless ``offline``; then ConsumerOffsetManager.cloneOffset
replaces G2's whole offset table of T on that broker with a copy of G1's: a queue G1 has no
offset for loses G2's. The plan shows each queue's G1 offset, G2's before and after; the
rollback file holds G2's offsets before (the format ``mqctl offsets rollback`` reads) and is
written before the first request; the verify reads G2's offsets back (QUERY_CONSUMER_OFFSET).
G2's online consumers would overwrite the clone with their own offsets at their next commit:
refused unless ``force``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.admin.fanout import per_broker
from mqctl.errors import ExitCode, MqctlError, PartialFailure, RefusedError, UsageError
from mqctl.fsutil import atomic_write_text, check_output_file, local_path_error
from mqctl.interrupt import (
    INTERRUPT_GRACE_S,
    Stop,
    boundary,
    change_lock,
    guarded,
    state_root,
    taken_over,
)
from mqctl.levers.apply import failure_detail
from mqctl.models import MessageQueue
from mqctl.remoting.codes import RequestCode
from mqctl.timeparse import format_ms, now_ms

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from mqctl.admin import Admin

# the rollback file `mqctl offsets rollback` reads (mqctl.reset.files, ROLLBACK_SCHEMA)
ROLLBACK_SCHEMA = "mqctl.rollback/1"


@dataclass(frozen=True, slots=True)
class CloneRequest:
    src: str
    dest: str
    topic: str
    offline: bool = False
    execute: bool = False
    force: bool = False
    rollback_file: str | None = None


@dataclass(frozen=True, slots=True)
class CloneQueue:
    mq: MessageQueue
    src: int | None  # G1's committed offset (None: none)
    before: int | None  # G2's

    @property
    def after(self) -> int | None:
        """What G2 has after the clone (cloneOffset copies G1's table of the broker)."""
        return self.src


@dataclass(frozen=True, slots=True)
class ClonePlan:
    request: CloneRequest
    namesrv: str
    created_ms: int
    queues: tuple[CloneQueue, ...]
    addrs: dict[str, str]  # broker -> master address
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def brokers(self) -> list[str]:
        """The brokers to send to: those where G1 has an offset (elsewhere nothing changes)."""
        return sorted({q.mq.broker_name for q in self.queues if q.src is not None})


@dataclass(frozen=True, slots=True)
class CloneOutcome:
    plan: ClonePlan
    phase: str = "plan"
    sent: dict[str, str] | None = None  # broker -> applied | failed: ... | not-sent | unknown
    now: dict[MessageQueue, int | None] | None = None  # G2 read back
    rollback: str | None = None
    signal: str | None = None
    notes: tuple[str, ...] = ()

    def verdict(self, q: CloneQueue) -> str:
        if self.sent is None:
            return "planned" if q.src is not None else "unchanged"
        state = self.sent.get(q.mq.broker_name)
        if state is None:
            return "unchanged"
        if state != "applied" or self.now is None:
            return state.split(":")[0]
        return "verified" if self.now.get(q.mq) == q.after else "not-taken"

    def error(self) -> MqctlError | None:
        p = self.plan
        undo = f"mqctl -n {p.namesrv} offsets rollback {self.rollback} --execute"
        if self.signal is not None:
            return MqctlError(f"interrupted by {self.signal} during {self.phase}: "
                              + ", ".join(f"{b} {s}" for b, s in sorted((self.sent or {}).items()))
                              + "; nothing more was sent",
                              hint=f"finish: {finish_command(p)}; undo: {undo}",
                              exit_code=ExitCode.INTERRUPTED)
        if p.refusals:
            return RefusedError(p.refusals[0], hint="nothing was changed" + (
                "" if p.request.force else "; --force overrides where it says so"))
        bad = [q for q in p.queues if self.verdict(q) in ("failed", "not-taken", "not-sent",
                                                          "unknown")]
        if not bad:
            return None
        return PartialFailure(f"{len(bad)} of {len(p.queues)} queue(s) did not take the clone: "
                              + ", ".join(f"{q.mq.short} {self.verdict(q)}" for q in bad[:4]),
                              [(q.mq.short, self.verdict(q)) for q in bad],
                              hint=f"finish: {finish_command(p)}; undo: {undo}")


def finish_command(p: ClonePlan) -> str:
    r = p.request
    return " ".join(["mqctl", "-n", p.namesrv, "offsets", "clone", "--from", r.src, "--to",
                     r.dest, "-t", r.topic, *(["--offline"] if r.offline else []),
                     "--execute", "--yes"])


async def make_clone_plan(admin: Admin, r: CloneRequest, namesrv: str) -> ClonePlan:
    if r.src == r.dest:
        raise UsageError("--from and --to name the same group", hint="give two groups")
    route = await admin.topic_route(r.topic, cached=False)
    addrs = {b.broker_name: b.master_addr for b in route.brokers if b.master_addr}
    refusals = [f"{b.broker_name} has no master online" for b in route.brokers
                if not b.master_addr]
    queues: list[CloneQueue] = []
    for name, addr in sorted(addrs.items()):
        stats = await admin.topic_stats(r.topic, addr)
        mqs = sorted(mq for mq in stats.offsets if mq.broker_name == name)
        src = await asyncio.gather(*(admin.query_offset(r.src, mq, addr) for mq in mqs))
        dst = await asyncio.gather(*(admin.query_offset(r.dest, mq, addr) for mq in mqs))
        queues += [CloneQueue(mq, s, d) for mq, s, d in zip(mqs, src, dst, strict=True)]
    if not any(q.src is not None for q in queues):
        refusals.append(f"{r.src} has no committed offset on {r.topic}: nothing to clone")
    notes = []
    tables = await per_broker([b for b in route.brokers if b.master_addr],
                              admin.subscription_group_table, concurrency=admin.concurrency)
    absent = sorted(b for b, t in tables.items() if isinstance(t, dict) and r.dest not in t)
    if absent:
        notes.append(f"{r.dest} has no subscription group on {', '.join(absent)}: the clone "
                     "stores its offsets all the same; its consumers create the group when "
                     "they first pull (autoCreateSubscriptionGroup), and `offsets rollback` of "
                     "this clone needs it there (`mqctl group config set "
                     f"{r.dest} retryMaxTimes=16 --create` creates it)")
    lost = [q.mq.short for q in queues if q.src is None and q.before is not None]
    if lost:
        notes.append(f"{r.dest} loses its offset on {', '.join(lost[:6])} ({r.src} has none "
                     "there: cloneOffset replaces the broker's whole table of the topic)")
    for group, role in ((r.dest, "--to"), (r.src, "--from")):
        conn = await admin.consumer_connection(group, route)
        if conn is None:
            continue
        if role == "--to" and not r.force:
            refusals.append(f"{r.dest} has {len(conn.connections)} online consumer(s): they "
                            "would overwrite the clone with their own offsets at their next "
                            "commit (stop them first, or --force)")
        if role == "--from" and r.topic not in conn.subscriptions and not r.offline:
            refusals.append(f"{r.src} is online and does not subscribe {r.topic}: the broker "
                            "skips the topic (AdminBrokerProcessor.cloneGroupOffset); --offline "
                            "copies it anyway")
    return ClonePlan(r, namesrv, now_ms(), tuple(queues), addrs, tuple(refusals), tuple(notes))


def rollback_path(p: ClonePlan) -> Path:
    stamp = format_ms(p.created_ms).replace(":", "").replace("-", "")
    safe = "".join(c if c.isalnum() or c in "-_%" else "_" for c in f"{p.request.dest}-"
                   f"{p.request.topic}")
    return state_root() / "rollback" / f"{safe}-{stamp}.json"


def write_rollback(p: ClonePlan, path: Path) -> None:
    """G2's offsets before the clone, in the rollback file format of ``offsets reset``."""
    doc = {"schema": ROLLBACK_SCHEMA, "group": p.request.dest, "topic": p.request.topic,
           "namesrv": p.namesrv, "created_ts": p.created_ms, "created": format_ms(p.created_ms),
           "reason": f"offsets clone --from {p.request.src}",
           "queues": [{"broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
                       "offset": "none" if q.before is None else q.before,
                       "reset_to": q.after} for q in p.queues
                      if q.mq.broker_name in p.brokers()]}
    try:
        atomic_write_text(path, json.dumps(doc, indent=2) + "\n", mode=0o600)
    except OSError as exc:
        raise local_path_error(exc, path, "rollback file") from None


async def run_clone(admin: Admin, namesrv: Sequence[str], r: CloneRequest, *,
                    stop: Stop | None = None, warn: Callable[[str], None] | None = None
                    ) -> CloneOutcome:
    ns = ";".join(namesrv)
    if not r.execute:
        return CloneOutcome(await make_clone_plan(admin, r, ns))
    with change_lock(namesrv, r.dest, f"mqctl offsets clone {r.src} -> {r.dest}/{r.topic}"
                     ) as stale:
        notes = () if stale is None else (taken_over(r.dest, stale),)
        if notes and warn is not None:
            warn(notes[0])
        steps = _Clone(admin, r, ns, stop or Stop(), notes)
        if stop is None:
            return await steps.run()
        return await guarded(stop, steps.run(), lambda: steps.phase == "plan")


class _Clone:
    def __init__(self, admin: Admin, r: CloneRequest, ns: str, stop: Stop,
                 notes: tuple[str, ...]) -> None:
        self.admin, self.r, self.ns, self.stop, self.notes = admin, r, ns, stop, notes
        self.phase = "plan"

    async def run(self) -> CloneOutcome:
        boundary("start")
        plan = await make_clone_plan(self.admin, self.r, self.ns)
        boundary("planned")
        if plan.refusals:
            return CloneOutcome(plan, notes=self.notes)
        rb = Path(self.r.rollback_file) if self.r.rollback_file else rollback_path(plan)
        check_output_file(rb, "rollback file")
        n = 2
        base = rb
        while rb.exists():
            rb = base.with_name(f"{base.stem}.{n}{base.suffix}")
            n += 1
        self.stop.before_change()
        write_rollback(plan, rb)
        self.phase = "apply"
        boundary("applying")
        sent = await self.apply(plan)
        if self.stop.stopped:
            self.stop.reported = True
            return CloneOutcome(plan, "apply", sent, None, str(rb), self.stop.reason,
                                self.notes)
        self.phase = "verify"
        boundary("verifying")
        now = {q.mq: await self.admin.query_offset(self.r.dest, q.mq, plan.addrs[
            q.mq.broker_name]) for q in plan.queues if q.mq.broker_name in sent}
        if self.stop.stopped:  # every request was sent; the read-back is not judged
            self.stop.reported = True
            return CloneOutcome(plan, "verify", sent, None, str(rb), self.stop.reason,
                                self.notes)
        self.phase = "done"
        self.stop.late = "after the change was complete: the result above stands"
        boundary("verified")
        return CloneOutcome(plan, "done", sent, now, str(rb), None, self.notes)

    async def apply(self, plan: ClonePlan) -> dict[str, str]:
        sent: dict[str, str] = {}

        async def one(broker: str) -> None:
            if self.stop.stopped:
                return
            sent[broker] = "unknown"
            try:
                await self.admin.client.invoke(plan.addrs[broker], RequestCode.CLONE_GROUP_OFFSET,
                                               {"srcGroup": self.r.src, "destGroup": self.r.dest,
                                                "topic": self.r.topic,
                                                "offline": "true" if self.r.offline
                                                else "false"})
                sent[broker] = "applied"
            except MqctlError as exc:
                sent[broker] = f"failed: {failure_detail(exc)}"
            boundary("broker-done")

        task = asyncio.ensure_future(asyncio.gather(*(one(b) for b in plan.brokers())))
        await self.stop.race(task, INTERRUPT_GRACE_S)
        for b in plan.brokers():
            sent.setdefault(b, "not-sent")
        return sent


def clone_rows(o: CloneOutcome) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = [{"broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
             "from": "none" if q.src is None else q.src,
             "before": "none" if q.before is None else q.before,
             "after": "none" if q.after is None else q.after,
             "now": "-" if o.now is None or q.mq not in o.now else
             ("none" if o.now[q.mq] is None else o.now[q.mq]),
             "status": o.verdict(q)} for q in o.plan.queues]
    r = o.plan.request
    data = {"from": r.src, "to": r.dest, "topic": r.topic, "execute": r.execute,
            "offline": r.offline, "phase": o.phase, "queues": rows,
            "brokers": o.sent, "rollback_file": o.rollback,
            "refusals": list(o.plan.refusals), "notes": [*o.plan.notes, *o.notes],
            "interrupted": {"signal": o.signal, "during": o.phase} if o.signal else None}
    return rows, data


__all__ = ["ROLLBACK_SCHEMA", "CloneOutcome", "ClonePlan", "CloneQueue", "CloneRequest",
           "clone_rows", "finish_command", "make_clone_plan", "run_clone"]

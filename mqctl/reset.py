"""Offset resets: planned first, applied per broker, verified after, reversible.

The flow (``mqctl offsets reset``):

1. **plan** (read-only): per queue the min/max offsets (GET_TOPIC_STATS_INFO), the committed
   offset (GET_CONSUME_STATS), and the target: a time (SEARCH_OFFSET_BY_TIMESTAMP, boundary
   LOWER: the first message stored at or after it), earliest, latest, an offset, a shift, or an
   edited plan file. Targets outside ``[min, max]`` are clamped, with a warning.
2. **preflight**: the route resolves, every master is reachable, the group exists, the
   consumers' state (online, orderly, pop/gRPC), and each broker's reset path: server-side
   (``useServerSideResetOffset=true``, the 5.2+ default; works offline; explicit per-queue
   offsets) or legacy (the broker pushes the reset to online push consumers, which apply it
   after a 10 s pause; offline groups need UPDATE_CONSUMER_OFFSET per queue). Anything that
   would not take effect is refused with the reason unless ``--force``.
3. **rollback file** with every queue's previous offset, written before the first change.
4. **apply** per broker, concurrently and bounded.
5. **verify**: re-read the offsets after the wait and report per queue whether the new offset
   took; a queue that did not take is a partial failure, never a silent success.

Facts from apache/rocketmq: ``AdminBrokerProcessor.resetOffset``/``resetOffsetInner``,
``Broker2Client.resetOffset``, ``MQClientInstance.resetOffset``,
``DefaultMQAdminExtImpl.resetOffsetByTimestamp*`` (rocketmq-protocol.md section 6).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from mqctl.admin import Admin, BrokerFailure
from mqctl.errors import ConnectError, MqctlError, UsageError
from mqctl.fsutil import atomic_write_text
from mqctl.models import BrokerData, MessageQueue, TopicRoute
from mqctl.remoting import fastjson
from mqctl.remoting.client import fan_out
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.timeparse import format_ms, now_ms

PLAN_SCHEMA = "mqctl.reset-plan/1"
ROLLBACK_SCHEMA = "mqctl.rollback/1"
LEGACY_CLIENT_PAUSE_S = 15.0  # MQClientInstance.resetOffset sleeps 10 s, then a 5 s commit


class Path_(StrEnum):
    SERVER_SIDE = "server-side"
    LEGACY_PUSH = "legacy-push"  # INVOKE_BROKER_TO_RESET_OFFSET; the clients apply it
    LEGACY_UPDATE = "legacy-update"  # UPDATE_CONSUMER_OFFSET per queue (offline group)


# ------------------------------------------------------------------------------ targets

@dataclass(frozen=True)
class Target:
    kind: str  # time | earliest | latest | offset | shift | plan
    value: int = 0  # epoch ms, offset or shift
    text: str = ""
    plan: dict[MessageQueue, int] = field(default_factory=dict)

    def describe(self) -> str:
        if self.kind == "time":
            return f"to time {format_ms(self.value)} ({self.text})" if self.text else \
                f"to time {format_ms(self.value)}"
        if self.kind in ("earliest", "latest"):
            return f"to {self.kind}"
        if self.kind == "offset":
            return f"to offset {self.value}"
        if self.kind == "shift":
            return f"shift by {self.value:+d}"
        return f"from plan {self.text}"

    @property
    def by_time(self) -> bool:
        """Targets a legacy broker can compute itself (it only takes a timestamp)."""
        return self.kind in ("time", "earliest", "latest")

    @property
    def timestamp(self) -> int:
        """The ``timestamp`` header of a legacy INVOKE_BROKER_TO_RESET_OFFSET."""
        return {"time": self.value, "earliest": 0, "latest": -1}.get(self.kind, -1)


def parse_queue_scope(specs: Sequence[str]) -> set[tuple[str, int]] | None:
    """``--queues broker-a:0,1,broker-b:3`` (repeatable) -> {(broker, queue id)}."""
    if not specs:
        return None
    out: set[tuple[str, int]] = set()
    for spec in specs:
        broker: str | None = None
        for item in (p.strip() for p in spec.split(",")):
            if not item:
                continue
            if ":" in item:
                broker, _, q = item.rpartition(":")
            else:
                q = item
            if not broker or not q.isdigit():
                raise UsageError(f"bad queue {item!r} in --queues {spec!r}",
                                 hint="use broker:queueId, e.g. --queues broker-a:0,1,broker-b:3")
            out.add((broker, int(q)))
    return out


# ------------------------------------------------------------------------------ plans

@dataclass(frozen=True)
class QueuePlan:
    mq: MessageQueue
    min_offset: int
    max_offset: int
    current: int | None
    target: int
    requested: int | None = None
    clamped: bool = False
    note: str = ""

    @property
    def change(self) -> int | None:
        return None if self.current is None else self.target - self.current

    @property
    def replay(self) -> int:
        return max(0, (self.current or 0) - self.target) if self.current is not None else 0

    @property
    def skip(self) -> int:
        return max(0, self.target - self.current) if self.current is not None else 0

    def row(self) -> dict[str, Any]:
        return {"broker": self.mq.broker_name, "queue_id": self.mq.queue_id,
                "min": self.min_offset, "max": self.max_offset, "current": self.current,
                "target": self.target, "change": self.change, "replay": self.replay,
                "skip": self.skip, "clamped": self.clamped, "note": self.note}


@dataclass
class ConsumerState:
    online: bool
    members: list[str]
    orderly: bool | None
    pop: bool
    consume_type: str | None
    message_model: str | None

    def describe(self) -> str:
        if not self.online:
            return "group is offline (no member on any broker)"
        kind = "pop/gRPC" if self.pop else (self.consume_type or "?")
        order = "orderly" if self.orderly else "concurrent" if self.orderly is False else ""
        return f"{len(self.members)} member(s) online ({kind}{', ' + order if order else ''})"


@dataclass
class BrokerPlan:
    name: str
    addr: str | None
    path: Path_ | None
    path_source: str
    reachable: bool = True
    error: str | None = None


@dataclass
class Plan:
    group: str
    topic: str
    target: Target
    created_ms: int
    namesrv: str
    queues: list[QueuePlan]
    brokers: dict[str, BrokerPlan]
    consumers: ConsumerState
    warnings: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": PLAN_SCHEMA, "group": self.group, "topic": self.topic,
                "target": self.target.describe(), "created_ts": self.created_ms,
                "created": format_ms(self.created_ms), "namesrv": self.namesrv,
                "queues": [q.row() for q in self.queues],
                "brokers": [{"broker": b.name, "addr": b.addr,
                             "path": b.path.value if b.path else None,
                             "path_source": b.path_source, "reachable": b.reachable,
                             "error": b.error} for b in self.brokers.values()],
                "consumers": {"online": self.consumers.online,
                              "members": self.consumers.members,
                              "orderly": self.consumers.orderly, "pop": self.consumers.pop,
                              "consume_type": self.consumers.consume_type},
                "warnings": self.warnings, "refusals": self.refusals}


def compute_target(q: QueuePlan, target: Target, searched: int | None) -> QueuePlan:
    """Pure: the (clamped) target of one queue."""
    if target.kind == "time":
        requested = searched if searched is not None else q.max_offset
    elif target.kind == "earliest":
        requested = q.min_offset
    elif target.kind == "latest":
        requested = q.max_offset
    elif target.kind == "offset":
        requested = target.value
    elif target.kind == "shift":
        if q.current is None:
            return replace(q, target=q.min_offset, requested=None, clamped=False,
                           note="no committed offset to shift: kept at min")
        requested = q.current + target.value
    else:
        requested = target.plan[q.mq]
    clamped = min(max(requested, q.min_offset), q.max_offset)
    return replace(q, target=clamped, requested=requested, clamped=clamped != requested,
                   note=(f"clamped from {requested} to [{q.min_offset}, {q.max_offset}]"
                         if clamped != requested else q.note))


async def _state(admin: Admin, group: str, route: TopicRoute) -> ConsumerState:
    from mqctl.inspect import capture_members

    m = await capture_members(admin, group, every_broker=False)
    conn = m.connection
    orderly_flags = [cv.running.orderly for cv in m.clients.values() if cv.running]
    pop = bool(conn and conn.consume_type == "CONSUME_POP") or any(
        cv.running is not None and (cv.running.consume_type == "CONSUME_POP"
                                    or bool(cv.running.mq_pop_table))
        for cv in m.clients.values())
    return ConsumerState(m.online, sorted(m.clients), any(orderly_flags) if orderly_flags
                         else None, pop, conn.consume_type if conn else None,
                         conn.message_model if conn else None)


async def _broker_path(admin: Admin, b: BrokerData) -> BrokerPlan:
    addr = b.master_addr
    if addr is None:
        return BrokerPlan(b.broker_name, None, None, "no master", reachable=False,
                          error="no master (brokerId 0) in the route: resets need the master")
    try:
        cfg = await admin.broker_config(addr)
    except ConnectError as exc:
        return BrokerPlan(b.broker_name, addr, None, "unreachable", reachable=False,
                          error=exc.message)
    except MqctlError as exc:
        # cannot read the config: a 5.2+ broker resets server-side by default
        return BrokerPlan(b.broker_name, addr, Path_.SERVER_SIDE,
                          f"assumed (GET_BROKER_CONFIG failed: {exc.message})")
    v = cfg.get("useServerSideResetOffset")
    if v is None:
        return BrokerPlan(b.broker_name, addr, Path_.LEGACY_PUSH,
                          "assumed legacy (no useServerSideResetOffset: a 4.x broker)")
    server = v.strip().lower() == "true"
    return BrokerPlan(b.broker_name, addr, Path_.SERVER_SIDE if server else Path_.LEGACY_PUSH,
                      f"useServerSideResetOffset={v.strip()}")


async def make_plan(admin: Admin, group: str, topic: str, target: Target, *,
                    scope: set[tuple[str, int]] | None = None,
                    force: bool = False) -> Plan:
    """Everything read-only: queues, offsets, targets, broker paths, consumer state."""
    route = await admin.topic_route(topic)
    brokers = {b.broker_name: b for b in route.brokers}
    mqs = route.subscribe_queues()
    if target.kind == "plan":
        unknown = [mq for mq in target.plan if mq.broker_name not in brokers
                   or mq not in set(mqs)]
        if unknown:
            raise UsageError(f"plan file names queues the route of {topic} does not have: "
                             + ", ".join(m.short for m in unknown[:5]),
                             hint=f"see `mqctl route {topic}` for its brokers and queues")
        mqs = sorted(target.plan)
    if scope is not None:
        wanted = {(b, q) for b, q in scope}
        missing = sorted(wanted - {(m.broker_name, m.queue_id) for m in mqs})
        if missing:
            raise UsageError("--queues names queues the topic does not have: "
                             + ", ".join(f"{b}:{q}" for b, q in missing[:5]),
                             hint=f"see `mqctl route {topic}` for its brokers and queues")
        mqs = [m for m in mqs if (m.broker_name, m.queue_id) in wanted]
    if not mqs:
        raise UsageError(f"topic {topic} has no readable queue to reset",
                         hint="its route has no queue with read permission")

    involved = sorted({m.broker_name for m in mqs})
    bplans = {p.name: p for p in await asyncio.gather(
        *(_broker_path(admin, brokers[n]) for n in involved))}
    state = await _state(admin, group, route)

    async def read(name: str) -> dict[MessageQueue, Any]:
        return (await admin.topic_stats(topic, bplans[name].addr or "")).offsets

    bounds: dict[MessageQueue, Any] = {}
    for o in await fan_out([n for n in involved if bplans[n].reachable], read,
                           concurrency=admin.concurrency):
        if o.ok and o.value is not None:
            bounds.update(o.value)
        else:
            bp = bplans[o.item]
            bp.reachable = False
            bp.error = o.error.message if o.error else "failed"

    # QUERY_CONSUMER_OFFSET per queue (setZeroIfNotFound=false): GET_CONSUME_STATS would show a
    # missing offset as 0, which hides "this group never consumed here"
    async def current(mq: MessageQueue) -> int | None:
        return await admin.query_offset(group, mq, bplans[mq.broker_name].addr or "")

    committed: dict[MessageQueue, int | None] = {}
    for co in await fan_out([m for m in mqs if bplans[m.broker_name].reachable], current,
                            concurrency=admin.concurrency):
        if co.ok:
            committed[co.item] = co.value
        else:
            bp = bplans[co.item.broker_name]
            bp.reachable = False
            bp.error = co.error.message if co.error else "failed"
    searched: dict[MessageQueue, int] = {}
    if target.kind == "time":
        async def search(mq: MessageQueue) -> int:
            return await admin.search_offset(mq, target.value, bplans[mq.broker_name].addr or "")
        for so in await fan_out([m for m in mqs if bplans[m.broker_name].reachable], search,
                                concurrency=admin.concurrency):
            if so.ok and so.value is not None:
                searched[so.item] = so.value
    queues: list[QueuePlan] = []
    warnings: list[str] = []
    for mq in mqs:
        if not bplans[mq.broker_name].reachable or mq not in bounds:
            continue
        b = bounds[mq]
        base = QueuePlan(mq, b.min_offset, b.max_offset, committed.get(mq), 0)
        qp = compute_target(base, target, searched.get(mq))
        if qp.clamped:
            warnings.append(f"{mq.short}: target {qp.requested} is outside [{qp.min_offset}, "
                            f"{qp.max_offset}]: clamped to {qp.target}")
        queues.append(qp)

    plan = Plan(group, topic, target, now_ms(), ";".join(admin.namesrv), queues, bplans, state,
                warnings)
    preflight(plan, force=force, scoped=scope is not None)
    return plan


def preflight(plan: Plan, *, force: bool, scoped: bool) -> None:
    """Decide each broker's path and collect refusals (pure)."""
    st = plan.consumers
    for b in plan.brokers.values():
        if not b.reachable:
            plan.refusals.append(f"broker {b.name} ({b.addr or 'no master'}) is not reachable: "
                                 f"{b.error}; fix it or leave its queues out with --queues")
            continue
        if b.path == Path_.SERVER_SIDE:
            continue
        # legacy broker: what can take effect?
        if not st.online:
            b.path = Path_.LEGACY_UPDATE
            b.path_source += "; group offline: UPDATE_CONSUMER_OFFSET per queue"
            continue
        if st.pop and not force:
            plan.refusals.append(f"broker {b.name} resets through the clients (legacy path), "
                                 "and pop/gRPC consumers ignore a pushed reset "
                                 "(apache/rocketmq#5613); stop them, or --force")
        if not plan.target.by_time or scoped:
            if force:
                b.path = Path_.LEGACY_UPDATE
                plan.warnings.append(
                    f"broker {b.name}: writing offsets of an online group with "
                    "UPDATE_CONSUMER_OFFSET (--force): live consumers overwrite them within "
                    "seconds unless they are stopped")
            else:
                plan.refusals.append(
                    f"broker {b.name} uses the legacy reset path and the group is online: "
                    "explicit per-queue offsets would be written with UPDATE_CONSUMER_OFFSET, "
                    "which live consumers overwrite within seconds; stop the consumers, reset "
                    "by time for the whole topic, or --force")
        else:
            plan.warnings.append(
                f"broker {b.name}: legacy path: the broker pushes the reset to the online "
                "consumers, which apply it after a 10 s pause; queues no online consumer owns "
                "are not reset (verify reports them)")
    if st.pop:
        plan.warnings.append("pop/gRPC consumers: a server-side reset does not reach FIFO pop "
                             "consumers (apache/rocketmq#10229); verify the result")
    if st.online and st.orderly:
        plan.warnings.append("orderly consumers: queues are re-locked after the reset; expect "
                             "a short pause in consumption")
    if not st.online and all(q.current is None for q in plan.queues) and not force:
        plan.refusals.append(f"group {plan.group} has no committed offset for {plan.topic} and "
                             "no member: check the group name (or --force to create offsets)")


# ------------------------------------------------------------------------------ plan files

def export_plan(plan: Plan, path: str) -> str:
    """Write the plan as CSV (by ``.csv``) or JSON; returns the format written."""
    rows = [{"group": plan.group, "topic": plan.topic, "broker": q.mq.broker_name,
             "queue_id": q.mq.queue_id, "current": q.current, "target": q.target,
             "min": q.min_offset, "max": q.max_offset} for q in plan.queues]
    if path.endswith(".csv"):
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else
                           ["group", "topic", "broker", "queue_id", "current", "target", "min",
                            "max"], lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if v is None else v for k, v in r.items()})
        atomic_write_text(path, buf.getvalue())
        return "csv"
    atomic_write_text(path, json.dumps({"schema": PLAN_SCHEMA, "group": plan.group,
                                        "topic": plan.topic, "target": plan.target.describe(),
                                        "created": format_ms(plan.created_ms),
                                        "queues": rows}, indent=2) + "\n")
    return "json"


PLAN_HINT = ("a plan file is what --export writes: CSV columns group,topic,broker,queue_id,"
             "target (others ignored), or its JSON form")
ROLLBACK_HINT = "pass a file written by `mqctl offsets reset --execute` (see --rollback-file)"


def read_plan_file(path: str, group: str, topic: str) -> Target:
    """Read an edited plan (CSV or JSON) into a per-queue target; validates everything."""
    try:
        return _read_plan_file(path, group, topic)
    except UsageError as exc:
        exc.hint = exc.hint or PLAN_HINT
        raise


def _read_plan_file(path: str, group: str, topic: str) -> Target:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"plan file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read plan file {path}: {exc}") from None
    rows: list[dict[str, Any]]
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"plan file {path} is not valid JSON: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("queues"), list):
            raise UsageError(f"plan file {path} has no 'queues' list")
        rows = [dict(r, group=r.get("group", doc.get("group")),
                     topic=r.get("topic", doc.get("topic"))) if isinstance(r, dict) else r
                for r in doc["queues"]]
    else:
        rows = list(csv.DictReader(io.StringIO(text)))
        if not rows:
            raise UsageError(f"plan file {path} has no rows")
        need = {"broker", "target"}
        have = set(rows[0])
        if not need <= have or not ({"queue_id", "queue"} & have):
            raise UsageError(f"plan file {path}: missing column(s) "
                             f"{', '.join(sorted((need | {'queue_id'}) - have))}",
                             hint="columns: group,topic,broker,queue_id,target (others ignored)")
    plan: dict[MessageQueue, int] = {}
    for i, r in enumerate(rows, 1):
        if not isinstance(r, dict):
            raise UsageError(f"plan file {path}: row {i} is not an object")
        if r.get("group") not in (None, "", group):
            raise UsageError(f"plan file {path}: row {i} is for group {r.get('group')!r}, "
                             f"not {group!r}")
        if r.get("topic") not in (None, "", topic):
            raise UsageError(f"plan file {path}: row {i} is for topic {r.get('topic')!r}, "
                             f"not {topic!r}")
        broker = str(r.get("broker") or "")
        q = r.get("queue_id", r.get("queue"))
        t = r.get("target")
        try:
            qid = int(str(q))
            tgt = int(str(t))
        except (TypeError, ValueError):
            raise UsageError(f"plan file {path}: row {i}: queue_id and target must be "
                             f"integers (got {q!r}, {t!r})") from None
        if not broker or qid < 0 or tgt < 0:
            raise UsageError(f"plan file {path}: row {i}: needs a broker, a queue_id >= 0 and a "
                             "target >= 0")
        mq = MessageQueue(topic, broker, qid)
        if mq in plan:
            raise UsageError(f"plan file {path}: {mq.short} appears twice")
        plan[mq] = tgt
    return Target("plan", text=path, plan=plan)


def rollback_path(group: str, topic: str, ts: int, base: str | None = None) -> Path:
    root = Path(base) if base else Path(
        os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "mqctl" / \
        "rollback"
    stamp = format_ms(ts).replace(":", "").replace("-", "")
    safe = "".join(c if c.isalnum() or c in "-_%" else "_" for c in f"{group}-{topic}")
    return root / f"{safe}-{stamp}.json"


def write_rollback(plan: Plan, path: Path) -> None:
    doc = {"schema": ROLLBACK_SCHEMA, "group": plan.group, "topic": plan.topic,
           "namesrv": plan.namesrv, "created_ts": plan.created_ms,
           "created": format_ms(plan.created_ms), "reason": plan.target.describe(),
           "queues": [{"broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
                       "offset": q.current} for q in plan.queues]}
    atomic_write_text(path, json.dumps(doc, indent=2) + "\n", mode=0o600)


def read_rollback(path: str) -> tuple[str, str, Target, list[str]]:
    """(group, topic, per-queue target, notes) from a rollback file."""
    try:
        return _read_rollback(path)
    except UsageError as exc:
        exc.hint = exc.hint or ROLLBACK_HINT
        raise


def _read_rollback(path: str) -> tuple[str, str, Target, list[str]]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"rollback file not found: {path}") from None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"rollback file {path} cannot be read: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != ROLLBACK_SCHEMA:
        raise UsageError(f"{path} is not an mqctl rollback file (schema {ROLLBACK_SCHEMA})")
    group, topic = doc.get("group"), doc.get("topic")
    if not isinstance(group, str) or not isinstance(topic, str):
        raise UsageError(f"rollback file {path} has no group/topic")
    plan: dict[MessageQueue, int] = {}
    notes: list[str] = []
    for i, q in enumerate(doc.get("queues") or [], 1):
        try:
            mq = MessageQueue(topic, str(q["broker"]), int(q["queue_id"]))
        except (KeyError, TypeError, ValueError):
            raise UsageError(f"rollback file {path}: entry {i} is malformed") from None
        if q.get("offset") is None:
            notes.append(f"{mq.short} had no committed offset before: left as is")
            continue
        plan[mq] = int(q["offset"])
    if not plan:
        raise UsageError(f"rollback file {path} has no offsets to restore")
    return group, topic, Target("plan", text=path, plan=plan), notes


# ------------------------------------------------------------------------------ apply

class Status(StrEnum):
    ALREADY = "already"  # current == target before apply: nothing sent
    APPLIED = "applied"  # the broker accepted it (not yet verified)
    VERIFIED = "verified"
    NOT_TAKEN = "not-taken"
    FAILED = "failed"


@dataclass
class QueueResult:
    plan: QueuePlan
    status: Status
    detail: str = ""
    now: int | None = None

    def row(self) -> dict[str, Any]:
        return {"broker": self.plan.mq.broker_name, "queue_id": self.plan.mq.queue_id,
                "previous": self.plan.current, "target": self.plan.target, "now": self.now,
                "status": self.status.value, "detail": self.detail}


async def apply_plan(admin: Admin, plan: Plan, *, concurrency: int = 16,
                     on_broker_done: Callable[[str], None] | None = None
                     ) -> list[QueueResult]:
    """Send the changes, broker by broker (concurrently, bounded). Never re-sends."""
    client = admin.client
    by_broker: dict[str, list[QueuePlan]] = {}
    results: dict[MessageQueue, QueueResult] = {}
    for q in plan.queues:
        if q.current is not None and q.current == q.target:
            results[q.mq] = QueueResult(q, Status.ALREADY, "already at target")
        else:
            by_broker.setdefault(q.mq.broker_name, []).append(q)

    async def one_broker(name: str) -> None:
        bp = plan.brokers[name]
        addr = bp.addr or ""
        qs = by_broker[name]
        try:
            if bp.path == Path_.SERVER_SIDE:
                for q in qs:
                    resp = await client.invoke(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
                        "topic": plan.topic, "group": plan.group, "queueId": q.mq.queue_id,
                        "offset": q.target, "timestamp": -1, "isForce": True})
                    table = fastjson.mq_map(fastjson.loads(resp.body).get("offsetTable")
                                            if resp.body else {})
                    got = table.get(q.mq)
                    results[q.mq] = QueueResult(
                        q, Status.APPLIED, "server-side reset" if got in (None, q.target)
                        else f"broker set {got}")
            elif bp.path == Path_.LEGACY_UPDATE:
                for q in qs:
                    await client.invoke(addr, RequestCode.UPDATE_CONSUMER_OFFSET, {
                        "consumerGroup": plan.group, "topic": plan.topic,
                        "queueId": q.mq.queue_id, "commitOffset": q.target})
                    results[q.mq] = QueueResult(q, Status.APPLIED, "offset written")
            else:
                resp = await client.invoke(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
                    "topic": plan.topic, "group": plan.group, "timestamp":
                    plan.target.timestamp, "isForce": True, "queueId": -1})
                table = fastjson.mq_map(fastjson.loads(resp.body).get("offsetTable")
                                        if resp.body else {})
                for q in qs:
                    got = table.get(q.mq)
                    results[q.mq] = QueueResult(q, Status.APPLIED,
                                                f"pushed to the clients (broker computed {got})")
        except MqctlError as exc:
            for q in qs:
                results.setdefault(q.mq, QueueResult(q, Status.FAILED, exc.message))
        finally:
            if on_broker_done is not None:
                on_broker_done(name)

    sem = asyncio.Semaphore(max(1, concurrency))

    async def bounded(name: str) -> None:
        async with sem:
            await one_broker(name)

    await asyncio.gather(*(bounded(n) for n in sorted(by_broker)))
    return [results[q.mq] for q in plan.queues]


def took(q: QueuePlan, now: int | None) -> bool:
    """Did the reset take? Exact, or moved on from the target the way consumers do."""
    if now is None:
        return False
    if now == q.target:
        return True
    if q.current is None:
        return now >= q.target
    if q.target < q.current:  # rewind: consumers re-consume from the target
        return q.target <= now < q.current
    return now >= q.target  # forward: nothing before the target can have been consumed


async def verify(admin: Admin, plan: Plan, results: list[QueueResult], *,
                 wait_s: float = 0.0,
                 waiter: Callable[[float], Awaitable[None]] | None = None) -> list[QueueResult]:
    """Re-read the offsets after ``wait_s`` and mark each applied queue verified or not."""
    pending = [r for r in results if r.status == Status.APPLIED]
    if not pending:
        return results
    if wait_s > 0:
        await (waiter or asyncio.sleep)(wait_s)
    names = sorted({r.plan.mq.broker_name for r in pending})

    async def read(name: str) -> dict[MessageQueue, Any]:
        return (await admin.consume_stats(plan.group, plan.brokers[name].addr or "",
                                          plan.topic)).offsets

    now: dict[MessageQueue, int] = {}
    failed: dict[str, str] = {}
    for o in await fan_out(names, read, concurrency=admin.concurrency):
        if o.ok and o.value is not None:
            now.update({mq: w.consumer_offset for mq, w in o.value.items()})
        else:
            failed[o.item] = o.error.message if o.error else "failed"
    for r in pending:
        if r.plan.mq.broker_name in failed:
            r.detail = f"cannot verify: {failed[r.plan.mq.broker_name]}"
            r.status = Status.NOT_TAKEN
            continue
        r.now = now.get(r.plan.mq)
        if took(r.plan, r.now):
            r.status = Status.VERIFIED
        else:
            r.status = Status.NOT_TAKEN
            r.detail = (f"offset is {r.now}, expected {r.plan.target}"
                        + ("; live consumers may have overwritten it" if plan.consumers.online
                           else ""))
    return results


def default_wait(plan: Plan) -> float:
    if any(b.path == Path_.LEGACY_PUSH for b in plan.brokers.values()):
        return LEGACY_CLIENT_PAUSE_S
    return 0.0


def summarize(results: Iterable[QueueResult]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in results:
        out[r.status.value] = out.get(r.status.value, 0) + 1
    return out


def target_from_options(*, to_time: str | None, by_duration: str | None, to_earliest: bool,
                        to_latest: bool, to_offset: int | None, shift_by: int | None,
                        from_file: str | None, group: str, topic: str) -> Target:
    from mqctl.timeparse import parse_duration_ms, parse_time

    chosen = [n for n, v in (("--to-time", to_time), ("--by-duration", by_duration),
                             ("--to-earliest", to_earliest), ("--to-latest", to_latest),
                             ("--to-offset", to_offset), ("--shift-by", shift_by),
                             ("--from-file", from_file))
              if v is not None and v is not False]  # 0 is a real offset/shift
    if len(chosen) != 1:
        raise UsageError("give exactly one target" + (f" (got {', '.join(chosen)})"
                                                      if chosen else ""),
                         hint="--to-time, --by-duration, --to-earliest, --to-latest, "
                              "--to-offset, --shift-by or --from-file")
    if to_time is not None:
        return Target("time", parse_time(to_time), text=to_time)
    if by_duration is not None:
        d = parse_duration_ms(by_duration, default_sign=-1)
        return Target("time", now_ms() + d, text=by_duration)
    if to_earliest:
        return Target("earliest")
    if to_latest:
        return Target("latest")
    if to_offset is not None:
        if to_offset < 0:
            raise UsageError("--to-offset must be >= 0", hint="offsets start at 0; use "
                             "--shift-by for relative moves")
        return Target("offset", to_offset)
    if shift_by is not None:
        return Target("shift", shift_by)
    assert from_file is not None
    return read_plan_file(from_file, group, topic)


__all__ = ["BrokerFailure", "BrokerPlan", "ConsumerState", "Path_", "Plan", "QueuePlan",
           "QueueResult", "ResponseCode", "Status", "Target", "apply_plan", "compute_target",
           "default_wait", "export_plan", "make_plan", "parse_queue_scope", "preflight",
           "read_plan_file", "read_rollback", "rollback_path", "summarize", "target_from_options",
           "took", "verify", "write_rollback"]

"""Planning a reset (read-only): targets, clamping, target times, consumer state, broker paths,
preflight refusals.

Facts from apache/rocketmq (rocketmq-protocol.md section 6): ``AdminBrokerProcessor.resetOffset``
/ ``resetOffsetInner`` (server-side path, explicit offsets checked against ``[min, max+1]``),
``Broker2Client.resetOffset`` (legacy path: needs online consumers, fails when a queue has no
committed offset), ``MQClientInstance.resetOffset`` (the client's 10 s pause),
``ConsumerOffsetManager.queryThenEraseResetOffset`` (a pending server-side reset is taken by the
first pull of the queue), ``ConsumerManageProcessor.updateConsumerOffset``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from mqctl.admin import Admin
from mqctl.errors import ConnectError, MqctlError, UsageError
from mqctl.models import BrokerData, MessageQueue, TopicOffset, TopicRoute
from mqctl.remoting.client import fan_out
from mqctl.reset.files import read_plan_file
from mqctl.reset.preflight import FAR_BEYOND_MAX, legacy_push_order, preflight
from mqctl.reset.types import MAX_OFFSET, BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, Target
from mqctl.timeparse import format_ms, now_ms, parse_offset_from_now_ms, parse_time
from mqctl.versions import V5_1_1, V5_2_0
from mqctl.views.members import capture_members
from mqctl.views.offsets import committed_offsets

# MQClientInstance.resetOffset is synchronized and sleeps 10 s, then writes the offsets
# (RebalancePushImpl.removeUnnecessaryMessageQueue persists them); the brokers' pushes reach a
# client one after another, so with N brokers the last one applies after about N x 10 s
LEGACY_CLIENT_PAUSE_S = 10.0
LEGACY_MARGIN_S = 5.0
# live consumers commit their in-memory offsets every 5 s: wait two rounds before judging
# whether an UPDATE_CONSUMER_OFFSET write of an online group survived
LEGACY_COMMIT_WAIT_S = 10.0
# server-side: the pending offset is visible at once; a short wait lets live consumers pull
# and move on from it, which verify accepts
SERVER_SIDE_WAIT_S = 1.0
# ... but the pull that takes the pending offset also commits the client's old one
# (PullMessageProcessor: queryThenEraseResetOffset, then tryCommitOffset), and Java clients
# before 5.2.0 (apache/rocketmq#7635) apply the OFFSET_ILLEGAL answer after a 10 s delay
# (executeTaskLater): until then the broker shows the old offset
SERVER_SIDE_OLD_CLIENT_WAIT_S = 15.0
# --queues ranges: queue ids 0..65535, the same 65,536-per-broker cap as `allocate --queues`
# (mqctl.allocate.inputs.MAX_QUEUES_PER_BROKER); checked before a range is expanded
MAX_QUEUE_ID = 65_535


_QUEUE = re.compile(r"^([0-9]{1,10})(?:-([0-9]{1,10}))?$")  # (ASCII; a Java int at most)


def _cut(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def parse_queue_scope(specs: Sequence[str]) -> set[tuple[str, int]] | None:
    """``--queues broker-a:0,1,broker-b:3`` or ``broker-a:0-3`` (repeatable) ->
    {(broker, queue id)}. A bare id belongs to the broker named last."""
    if not specs:
        return None
    out: set[tuple[str, int]] = set()
    for spec in specs:
        if not spec.replace(",", "").strip():  # `--queues ''` is no scope, not "no queue"
            raise UsageError(f"--queues {spec!r} names no queue",
                             hint="give broker:queueId, e.g. --queues broker-a:0,1, or leave "
                                  "--queues out for every queue of the topic")
        broker: str | None = None
        for item in (p.strip() for p in spec.split(",")):
            if not item:
                continue
            if ":" in item:
                broker, _, q = item.rpartition(":")
                broker = broker.strip()
            else:
                q = item
            m = _QUEUE.match(q.strip())
            if not broker or m is None or (m.group(2) and int(m.group(2)) < int(m.group(1))):
                raise UsageError(f"bad queue {_cut(item)!r} in --queues {_cut(spec)!r}",
                                 hint="use broker:queueId, e.g. --queues broker-a:0,1,broker-b:3 "
                                      "or broker-a:0-3")
            lo = int(m.group(1))
            hi = int(m.group(2)) if m.group(2) else lo
            if hi > MAX_QUEUE_ID:  # before range() builds a set of a billion ids
                raise UsageError(f"--queues {spec!r}: queue id {hi} is beyond {MAX_QUEUE_ID}",
                                 hint=f"queue ids are 0 to {MAX_QUEUE_ID} (at most "
                                      f"{MAX_QUEUE_ID + 1} queues per broker, as `allocate "
                                      "--queues`)")
            out.update((broker, q_) for q_ in range(lo, hi + 1))
    return out


def format_queue_scope(mqs: Sequence[MessageQueue]) -> str:
    """The ``--queues`` argument that selects exactly these queues."""
    by_broker: dict[str, list[int]] = {}
    for mq in sorted(mqs):
        by_broker.setdefault(mq.broker_name, []).append(mq.queue_id)
    return ",".join(f"{b}:{','.join(str(q) for q in qs)}" for b, qs in by_broker.items())


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
    if requested > q.max_offset + FAR_BEYOND_MAX:
        return replace(q, target=q.max_offset, requested=requested, clamped=False,
                       far_beyond=True, note=f"refused: {requested} is far beyond the max")
    clamped = min(max(requested, q.min_offset), q.max_offset)
    return replace(q, target=clamped, requested=requested, clamped=clamped != requested,
                   note=(f"clamped from {requested} to [{q.min_offset}, {q.max_offset}]"
                         if clamped != requested else q.note))


def target_time(q: QueuePlan, target: Target, min_ts: int | None,
                last_ts: int | None, *, nearest: bool = False) -> tuple[int | None, str]:
    """Pure: (exact store time of the message at the target or None, text for people).

    ``min_ts``: store time of the earliest message (QUERY_CONSUME_TIME_SPAN minTimeStamp);
    ``last_ts``: store time of message max-1 (maxTimeStamp / lastUpdateTimestamp). The store
    time of an arbitrary offset is not known without pulling the message, which mqctl does not
    do (a pull would take a pending server-side reset)."""
    if q.max_offset <= q.min_offset:
        return None, "(empty queue)"
    if q.target >= q.max_offset:
        return None, f"after {format_ms(last_ts)}" if last_ts else "new messages only"
    if q.target == q.min_offset and min_ts:
        return min_ts, format_ms(min_ts)
    if target.kind == "time":
        return None, f"{'~' if nearest else '>='} {format_ms(target.value, zero_unknown=False)}"
    return None, ""


# ------------------------------------------------------------------------------ reading

async def consumer_state(admin: Admin, group: str) -> ConsumerState:
    """Members, consume type, message model and orderliness (via running info)."""

    try:
        m = await capture_members(admin, group, every_broker=False)
    except MqctlError as exc:
        return ConsumerState(False, [], None, False, None, None, known=False, error=exc.message)
    if not m.members:  # nobody answered: we cannot tell online from offline
        err = "; ".join(f.message for f in m.failures[:2]) or "no broker of the group"
        return ConsumerState(False, [], None, False, None, None, known=False, error=err)
    conn = m.connection
    orderly_flags = [cv.running.orderly for cv in m.clients.values() if cv.running]
    pop = bool(conn and conn.consume_type == "CONSUME_POP") or any(
        cv.running is not None and (cv.running.consume_type == "CONSUME_POP"
                                    or bool(cv.running.mq_pop_table))
        for cv in m.clients.values())
    return ConsumerState(m.online, sorted(m.clients),
                         any(orderly_flags) if orderly_flags else None, pop,
                         conn.consume_type if conn else None,
                         conn.message_model if conn else None,
                         topics=tuple(sorted(conn.subscriptions)) if conn else (),
                         min_version=min((c.version for c in conn.connections), default=None)
                         if conn else None)


async def broker_path(admin: Admin, b: BrokerData) -> BrokerPlan:
    """The broker's reset path from GET_BROKER_CONFIG ``useServerSideResetOffset``."""
    addr = b.master_addr
    if addr is None:
        return BrokerPlan(b.broker_name, None, None, "no master", reachable=False,
                          error="no master (brokerId 0) in the route, only slaves: resets need "
                                "the master")
    try:
        cfg = await admin.broker_config(addr)
    except ConnectError as exc:
        return BrokerPlan(b.broker_name, addr, None, "unreachable", reachable=False,
                          error=exc.message)
    except MqctlError as exc:
        # never guessed: AdminBrokerProcessor.resetOffset reads a per-queue request (queueId,
        # offset, timestamp -1) as "the whole topic to its max offset" when the broker does not
        # reset server-side (4.x, or useServerSideResetOffset=false): every message skipped
        return BrokerPlan(b.broker_name, addr, None, "unknown (GET_BROKER_CONFIG failed)",
                          error=exc.message)
    v = cfg.get("useServerSideResetOffset")
    if v is None:
        return BrokerPlan(b.broker_name, addr, Path_.LEGACY_PUSH,
                          "no useServerSideResetOffset in the config: a broker older than "
                          "5.1.0", nearest_search=True)
    server = v.strip().lower() == "true"
    return BrokerPlan(b.broker_name, addr, Path_.SERVER_SIDE if server else Path_.LEGACY_PUSH,
                      f"useServerSideResetOffset={v.strip()}")


async def _search_kind(admin: Admin, bp: BrokerPlan) -> BrokerPlan:
    """Ask the broker's version: before 5.1.1 the search by time returns the nearest message.
    Best effort: without an answer the config's hint stands."""
    if not bp.reachable or not bp.addr or bp.nearest_search:
        return bp
    try:
        version = await admin.broker_version(bp.addr)
    except MqctlError:
        return bp
    return replace(bp, nearest_search=True) if version is not None and version < V5_1_1 else bp


PER_QUEUE_BOUNDS = "beyond the write queues: bounds from GET_MIN_OFFSET/GET_MAX_OFFSET"

# what a read step could not read: (broker, "REQUEST: why"), in the order found
Failed = tuple[tuple[str, str], ...]


def _why(what: str, exc: MqctlError | None) -> str:
    return f"{what}: {exc.message if exc else 'failed'}"


def _down(brokers: dict[str, BrokerPlan], failed: Failed) -> dict[str, BrokerPlan]:
    """The brokers with those that failed a read marked unreachable, each with its first
    failure (its queues are refused in preflight: a plan never drops a queue quietly)."""
    out = dict(brokers)
    for name, why in failed:
        if out[name].reachable:
            out[name] = replace(out[name], reachable=False, error=why)
    return out


async def _bounds_per_queue(admin: Admin, missing: list[MessageQueue],
                            brokers: dict[str, BrokerPlan]
                            ) -> tuple[dict[MessageQueue, Any], Failed]:
    """Bounds of the readable queues GET_TOPIC_STATS_INFO left out: a broker before 5.3.0
    answers it over writeQueueNums (AdminBrokerProcessor.getTopicStatsInfo, until
    apache/rocketmq#7951 made it max(write, read); corpus 4.9.3/read-gt-write/202_*: queues 0-1
    of a 4-read/2-write topic, 5.3.3 all 4), while consumers read all readQueueNums.
    GET_MIN_OFFSET/GET_MAX_OFFSET answer for any queue id; a broker that cannot answer fails
    (its queues are refused, never dropped)."""
    async def one(mq: MessageQueue) -> TopicOffset:
        addr = brokers[mq.broker_name].addr or ""
        return TopicOffset(await admin.min_offset(mq, addr), await admin.max_offset(mq, addr), 0)

    got: dict[MessageQueue, Any] = {}
    failed: list[tuple[str, str]] = []
    for o in await fan_out(missing, one, concurrency=admin.concurrency):
        if o.ok and o.value is not None:
            got[o.item] = o.value
        else:
            failed.append((o.item.broker_name, _why(
                f"GET_MIN_OFFSET/GET_MAX_OFFSET of {o.item.short}", o.error)))
    return got, tuple(failed)


def _scope_queues(route: TopicRoute, topic: str, target: Target,
                  scope: set[tuple[str, int]] | None) -> list[MessageQueue]:
    mqs = route.subscribe_queues()
    if target.per_queue:
        have = set(mqs)
        unknown = [mq for mq in target.plan if mq not in have]
        if unknown:
            raise UsageError(f"{'plan' if target.kind == 'plan' else 'rollback'} file names "
                             f"queues the route of {topic} does not have: "
                             + ", ".join(m.short for m in sorted(unknown)[:5]),
                             hint=f"see `mqctl route {topic}` for its brokers and queues")
        mqs = sorted(target.plan)
    if scope is not None:
        missing = sorted(scope - {(m.broker_name, m.queue_id) for m in mqs})
        if missing:
            raise UsageError("--queues names queues the "
                             + ("plan file" if target.per_queue else "topic")
                             + " does not have: " + ", ".join(f"{b}:{q}" for b, q in missing[:5]),
                             hint=f"see `mqctl route {topic}` for its brokers and queues")
        mqs = [m for m in mqs if (m.broker_name, m.queue_id) in scope]
    if not mqs:
        raise UsageError(f"topic {topic} has no readable queue to reset",
                         hint="its route has no queue with read permission")
    return mqs


async def make_plan(admin: Admin, group: str, topic: str, target: Target, *,
                    scope: set[tuple[str, int]] | None = None,
                    force: bool = False) -> Plan:
    """Everything read-only, in order: the route and the queues in scope, each broker's reset
    path, the consumers, the queues' bounds, the committed offsets, the time search, the
    store times, each queue's target, then :func:`mqctl.reset.preflight.preflight`."""
    route = await admin.topic_route(topic)
    mqs = _scope_queues(route, topic, target, scope)
    brokers = await _broker_plans(admin, route, mqs, target)
    state = await consumer_state(admin, group)
    bounds, brokers = await _read_bounds(admin, topic, mqs, brokers)
    committed, brokers = await _read_committed(admin, group, topic, mqs, brokers)
    searched, brokers = await _search_targets(admin, target, mqs, brokers)
    times = await _store_times(admin, group, topic, brokers)
    queues, warnings = _queue_plans(mqs, brokers, bounds, committed.offsets, searched, times,
                                    target)
    warnings = [*committed.warnings, *warnings, *_time_warnings(target, brokers, queues, times)]
    brokers = await _group_known(admin, group, state, brokers, queues)
    plan = Plan(group, topic, target, now_ms(), ";".join(admin.namesrv), queues, brokers, state,
                warnings, notes=list(bounds.notes), offsets_read=committed.read)
    return preflight(plan, force=force, scoped=scope is not None)


async def _broker_plans(admin: Admin, route: TopicRoute, mqs: list[MessageQueue],
                        target: Target) -> dict[str, BrokerPlan]:
    """The reset path of each broker in scope (its config), the topic's write queues there
    (the route), and for a time target how the broker searches by time (its version)."""
    involved = sorted({m.broker_name for m in mqs})
    by_name = {b.broker_name: b for b in route.brokers}
    plans = await asyncio.gather(*(broker_path(admin, by_name[n]) for n in involved))
    writes = {qd.broker_name: qd.write_queue_nums for qd in route.queues}
    plans = [replace(p, write_queues=writes[p.name]) if p.name in writes else p for p in plans]
    if target.kind == "time":
        plans = await asyncio.gather(*(_search_kind(admin, p) for p in plans))
    return {p.name: p for p in plans}


def _up(brokers: dict[str, BrokerPlan]) -> list[str]:
    return [n for n in sorted(brokers) if brokers[n].reachable]


@dataclass(frozen=True, slots=True)
class _Bounds:
    """Each queue's min and max offsets, those read one by one (GET_MIN_OFFSET/GET_MAX_OFFSET:
    beyond the write queues of a broker before 5.3.0), and the note that says so."""

    offsets: dict[MessageQueue, Any]
    per_queue: frozenset[MessageQueue]
    notes: tuple[str, ...]


async def _read_bounds(admin: Admin, topic: str, mqs: list[MessageQueue],
                       brokers: dict[str, BrokerPlan]
                       ) -> tuple[_Bounds, dict[str, BrokerPlan]]:
    """Each queue's min and max offsets (GET_TOPIC_STATS_INFO per broker; the queues it
    leaves out one by one), and the brokers that failed."""
    async def read(name: str) -> dict[MessageQueue, Any]:
        return (await admin.topic_stats(topic, brokers[name].addr or "")).offsets

    bounds: dict[MessageQueue, Any] = {}
    failed: list[tuple[str, str]] = []
    for o in await fan_out(_up(brokers), read, concurrency=admin.concurrency):
        if o.ok and o.value is not None:
            bounds.update(o.value)
        else:
            failed.append((o.item, _why("GET_TOPIC_STATS_INFO", o.error)))
    brokers = _down(brokers, tuple(failed))
    missing = [m for m in mqs if brokers[m.broker_name].reachable and m not in bounds]
    more, failed_more = await _bounds_per_queue(admin, missing, brokers)
    notes = [f"{len(more)} readable queue(s) beyond the write queues "
             f"({format_queue_scope(list(more))}) are not in GET_TOPIC_STATS_INFO (a broker "
             "before 5.3.0 lists writeQueueNums only): their bounds come from "
             "GET_MIN_OFFSET/GET_MAX_OFFSET"] if more else []
    bounds.update(more)
    return _Bounds(bounds, frozenset(more), tuple(notes)), _down(brokers, failed_more)


@dataclass(frozen=True, slots=True)
class _Committed:
    """The committed offsets (None: no offset there), the mqctl clock when they were read
    (first request, last answer: what "before" is as of), and the brokers whose answer cannot
    tell 0 from nothing."""

    offsets: dict[MessageQueue, int | None]
    read: tuple[int, int]
    warnings: tuple[str, ...]


async def _read_committed(admin: Admin, group: str, topic: str, mqs: list[MessageQueue],
                          brokers: dict[str, BrokerPlan]
                          ) -> tuple[_Committed, dict[str, BrokerPlan]]:
    """Committed offsets, "none" where the group has no offset: the one rule of every view
    (mqctl.views.offsets.committed_offsets: GET_CONSUME_STATS, then QUERY_CONSUMER_OFFSET with
    setZeroIfNotFound=false, then the offset table of a broker before 5.0.0)."""
    async def read_stats(name: str) -> dict[MessageQueue, Any]:
        return (await admin.consume_stats(group, brokers[name].addr or "", topic)).offsets

    read_from = now_ms()
    reported: dict[MessageQueue, int] = {}
    for cs in await fan_out(_up(brokers), read_stats, concurrency=admin.concurrency):
        if cs.ok and cs.value is not None:
            reported.update({mq: w.consumer_offset for mq, w in cs.value.items()})
    got = await committed_offsets(admin, group, [m for m in mqs
                                                 if brokers[m.broker_name].reachable],
                                  reported, {n: bp.addr for n, bp in brokers.items()})
    brokers = _down(brokers, tuple((n, _why("QUERY_CONSUMER_OFFSET", e))
                                   for n, e in got.failed.items()))
    warnings = tuple(
        f"broker {name}: cannot tell whether {group} committed offset 0 or nothing on "
        f"{len(zs)} queue(s) (a broker before 5.0.0 answers 0 for both; "
        f"GET_ALL_CONSUMER_OFFSET failed: {exc.message}): they are taken as 0, and a rollback "
        "would write 0 there" for name, (exc, zs) in sorted(got.unchecked.items()))
    return _Committed(got.offsets, (read_from, now_ms()), warnings), brokers


async def _search_targets(admin: Admin, target: Target, mqs: list[MessageQueue],
                          brokers: dict[str, BrokerPlan]
                          ) -> tuple[dict[MessageQueue, int], dict[str, BrokerPlan]]:
    """A time target's offset per queue (SEARCH_OFFSET_BY_TIMESTAMP); never guessed: a search
    that failed fails its broker, it does not become "max"."""
    if target.kind != "time":
        return {}, brokers

    async def search(mq: MessageQueue) -> int:
        return await admin.search_offset(mq, target.value, brokers[mq.broker_name].addr or "")

    searched: dict[MessageQueue, int] = {}
    failed: list[tuple[str, str]] = []
    for so in await fan_out([m for m in mqs if brokers[m.broker_name].reachable], search,
                            concurrency=admin.concurrency):
        if so.ok and so.value is not None:
            searched[so.item] = so.value
        else:
            failed.append((so.item.broker_name, _why("SEARCH_OFFSET_BY_TIMESTAMP", so.error)))
    return searched, _down(brokers, tuple(failed))


async def _store_times(admin: Admin, group: str, topic: str, brokers: dict[str, BrokerPlan]
                       ) -> dict[MessageQueue, tuple[int, int]]:
    """Store times of each queue's first and last message (best effort: only for the TARGET
    TIME column and the retention warning)."""
    async def spans(name: str) -> list[Any]:
        return await admin.time_spans(topic, group, brokers[name].addr or "")

    times: dict[MessageQueue, tuple[int, int]] = {}
    for sp in await fan_out(_up(brokers), spans, concurrency=admin.concurrency):
        for s in (sp.value or []) if sp.ok else []:
            times[s.mq] = (s.min_timestamp, s.max_timestamp)
    return times


def _queue_plans(mqs: list[MessageQueue], brokers: dict[str, BrokerPlan],
                 bounds: _Bounds, committed: dict[MessageQueue, int | None],
                 searched: dict[MessageQueue, int], times: dict[MessageQueue, tuple[int, int]],
                 target: Target) -> tuple[list[QueuePlan], list[str]]:
    """Each queue's plan (its target clamped to its bounds, with a warning) and target time;
    the queues of a broker that failed are left to preflight, which refuses it."""
    queues: list[QueuePlan] = []
    warnings: list[str] = []
    for mq in mqs:
        if not brokers[mq.broker_name].reachable:
            continue  # its broker is refused in preflight: the plan never drops a queue quietly
        b = bounds.offsets[mq]
        qp = compute_target(QueuePlan(mq, b.min_offset, b.max_offset, committed.get(mq), 0,
                                      note=PER_QUEUE_BOUNDS if mq in bounds.per_queue else ""),
                            target, searched.get(mq))
        min_ts, last_ts = times.get(mq, (0, b.last_update_timestamp))
        ts, text = target_time(qp, target, min_ts or None, last_ts or b.last_update_timestamp
                               or None, nearest=brokers[mq.broker_name].nearest_search)
        qp = replace(qp, target_ts=ts, target_time=text)
        if qp.clamped:
            warnings.append(f"{mq.short}: target {qp.requested} is outside [{qp.min_offset}, "
                            f"{qp.max_offset}]: clamped to {qp.target}")
        queues.append(qp)
    return queues, warnings


def _time_warnings(target: Target, brokers: dict[str, BrokerPlan], queues: list[QueuePlan],
                   times: dict[MessageQueue, tuple[int, int]]) -> list[str]:
    """A time in the future (every queue to its max offset; older brokers answer with their
    last message), and queues whose retention keeps nothing that old."""
    if target.kind != "time":
        return []
    out = []
    at = format_ms(target.value, zero_unknown=False)  # user-given: epoch 0 is 1970
    if target.value > now_ms():
        older = sorted(n for n, bp in brokers.items() if bp.nearest_search)
        out.append(f"{at} is in the future: every queue goes to its max offset (only new "
                   "messages are consumed)"
                   + (f"; broker(s) {', '.join(older)} (older than 5.1.1) answer with their "
                      "last message instead, which is consumed again" if older else ""))
    old = [q for q in queues if q.target == q.min_offset and q.max_offset > q.min_offset
           and times.get(q.mq, (0, 0))[0] > target.value]
    if old:
        out.append(f"{len(old)} queue(s) keep no message as old as {at} (retention): they go "
                   "to their earliest message")
    return out


async def _group_known(admin: Admin, group: str, state: ConsumerState,
                       brokers: dict[str, BrokerPlan], queues: list[QueuePlan]
                       ) -> dict[str, BrokerPlan]:
    """A group with no committed offset anywhere and no member: does the broker know it (its
    subscription groups)? None where that could not be read."""
    if not (state.known and not state.online):
        return brokers
    out = dict(brokers)
    for name, bp in brokers.items():
        mine = [q for q in queues if q.mq.broker_name == name]
        if bp.reachable and mine and all(q.current is None for q in mine):
            try:
                known: bool | None = group in await admin.subscription_groups(bp.addr or "")
            except MqctlError:
                known = None
            out[name] = replace(bp, group_known=known)
    return out


def default_wait(plan: Plan) -> float:
    """Seconds to wait before verifying, by the slowest path in the plan."""
    used = [b.path for b in plan.brokers.values()
            if any(q.mq.broker_name == b.name for q in plan.queues)]
    paths = set(used)
    if Path_.LEGACY_PUSH in paths:
        # each client applies the brokers' pushes one at a time, 10 s each: the last one
        # N x 10 s after the first push (verify reads the owners 2 s after each step)
        pushes = len(legacy_push_order(plan)) or used.count(Path_.LEGACY_PUSH)
        return LEGACY_CLIENT_PAUSE_S * pushes + LEGACY_MARGIN_S
    if Path_.LEGACY_UPDATE in paths and plan.consumers.online:
        return LEGACY_COMMIT_WAIT_S
    if Path_.SERVER_SIDE in paths and plan.consumers.online:
        v = plan.consumers.min_version
        return SERVER_SIDE_OLD_CLIENT_WAIT_S if v is None or v < V5_2_0 else SERVER_SIDE_WAIT_S
    return 0.0


def target_from_options(*, to_time: str | None, by_duration: str | None, to_earliest: bool,
                        to_latest: bool, to_offset: int | None, shift_by: int | None,
                        from_file: str | None, group: str, topic: str) -> Target:

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
        d = parse_offset_from_now_ms(by_duration)  # unsigned: the past, with a warning
        return Target("time", now_ms() + d, text=by_duration)
    if to_earliest:
        return Target("earliest")
    if to_latest:
        return Target("latest")
    if to_offset is not None:
        if to_offset < 0:
            raise UsageError("--to-offset must be >= 0", hint="offsets start at 0; use "
                             "--shift-by for relative moves")
        if to_offset > MAX_OFFSET:
            raise UsageError(f"--to-offset {to_offset} is beyond {MAX_OFFSET} (the largest "
                             "offset)", hint="use --to-latest to skip the backlog")
        return Target("offset", to_offset)
    if shift_by is not None:
        if abs(shift_by) > MAX_OFFSET:
            raise UsageError(f"--shift-by {shift_by} is beyond {MAX_OFFSET} (the largest "
                             "offset)", hint="e.g. --shift-by -1000 replays 1000 messages")
        return Target("shift", shift_by)
    assert from_file is not None
    return read_plan_file(from_file, group, topic)

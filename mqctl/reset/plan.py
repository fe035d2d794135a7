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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from mqctl.admin import Admin
from mqctl.errors import ConnectError, MqctlError, UsageError
from mqctl.models import RETRY_PREFIX, BrokerData, MessageQueue, TopicOffset, TopicRoute
from mqctl.remoting.client import fan_out
from mqctl.reset.evidence import apply_text
from mqctl.reset.files import read_plan_file
from mqctl.reset.types import MAX_OFFSET, BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, Target
from mqctl.timeparse import format_ms, now_ms
from mqctl.versions import V5_1_1, V5_2_0
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
# a target more than this many messages beyond a queue's max offset is a typo or a placeholder
# (e.g. Long.MAX_VALUE), not a position: refused, where a target a little beyond is clamped
FAR_BEYOND_MAX = 1_000_000
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
    from mqctl.views.members import capture_members

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


async def _search_kind(admin: Admin, bp: BrokerPlan) -> None:
    """Ask the broker's version: before 5.1.1 the search by time returns the nearest message.
    Best effort: without an answer the config's hint stands."""
    if not bp.reachable or not bp.addr or bp.nearest_search:
        return
    try:
        version = await admin.broker_version(bp.addr)
    except MqctlError:
        return
    if version is not None and version < V5_1_1:
        bp.nearest_search = True


PER_QUEUE_BOUNDS = "beyond the write queues: bounds from GET_MIN_OFFSET/GET_MAX_OFFSET"


async def _bounds_per_queue(admin: Admin, missing: list[MessageQueue],
                            bplans: dict[str, BrokerPlan], bounds: dict[MessageQueue, Any],
                            fail: Callable[[str, str, MqctlError | None], None]
                            ) -> list[MessageQueue]:
    """Bounds of the readable queues GET_TOPIC_STATS_INFO left out: a broker before 5.3.0
    answers it over writeQueueNums (AdminBrokerProcessor.getTopicStatsInfo, until
    apache/rocketmq#7951 made it max(write, read); corpus 4.9.3/read-gt-write/202_*: queues 0-1
    of a 4-read/2-write topic, 5.3.3 all 4), while consumers read all readQueueNums.
    GET_MIN_OFFSET/GET_MAX_OFFSET answer for any queue id. Adds them to ``bounds``; a broker
    that cannot answer fails (its queues are refused, never dropped)."""
    async def one(mq: MessageQueue) -> TopicOffset:
        addr = bplans[mq.broker_name].addr or ""
        return TopicOffset(await admin.min_offset(mq, addr), await admin.max_offset(mq, addr), 0)

    done: list[MessageQueue] = []
    for o in await fan_out(missing, one, concurrency=admin.concurrency):
        if o.ok and o.value is not None:
            bounds[o.item] = o.value
            done.append(o.item)
        else:
            fail(o.item.broker_name, f"GET_MIN_OFFSET/GET_MAX_OFFSET of {o.item.short}",
                 o.error)
    return done


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
    """Everything read-only: queues, offsets, targets, broker paths, consumer state."""
    route = await admin.topic_route(topic)
    brokers = {b.broker_name: b for b in route.brokers}
    mqs = _scope_queues(route, topic, target, scope)
    involved = sorted({m.broker_name for m in mqs})
    bplans = {p.name: p for p in await asyncio.gather(
        *(broker_path(admin, brokers[n]) for n in involved))}
    for qd in route.queues:
        if qd.broker_name in bplans:
            bplans[qd.broker_name].write_queues = qd.write_queue_nums
    if target.kind == "time":  # how will the broker search by time?
        await asyncio.gather(*(_search_kind(admin, bp) for bp in bplans.values()))
    state = await consumer_state(admin, group)

    def fail(name: str, what: str, exc: MqctlError | None) -> None:
        bp = bplans[name]
        if bp.reachable:
            bp.reachable = False
            bp.error = f"{what}: {exc.message if exc else 'failed'}"

    def up(name: str) -> bool:
        return bplans[name].reachable

    async def read_bounds(name: str) -> dict[MessageQueue, Any]:
        return (await admin.topic_stats(topic, bplans[name].addr or "")).offsets

    bounds: dict[MessageQueue, Any] = {}
    for o in await fan_out([n for n in involved if up(n)], read_bounds,
                           concurrency=admin.concurrency):
        if o.ok and o.value is not None:
            bounds.update(o.value)
        else:
            fail(o.item, "GET_TOPIC_STATS_INFO", o.error)
    notes: list[str] = []
    per_queue = await _bounds_per_queue(admin, [m for m in mqs if up(m.broker_name)
                                                and m not in bounds], bplans, bounds, fail)
    if per_queue:
        notes.append(f"{len(per_queue)} readable queue(s) beyond the write queues "
                     f"({format_queue_scope(per_queue)}) are not in GET_TOPIC_STATS_INFO (a "
                     "broker before 5.3.0 lists writeQueueNums only): their bounds come from "
                     "GET_MIN_OFFSET/GET_MAX_OFFSET")

    # committed offsets, "none" where the group has no offset: the one rule of every view
    # (mqctl.views.offsets.committed_offsets: GET_CONSUME_STATS, then QUERY_CONSUMER_OFFSET with
    # setZeroIfNotFound=false, then the offset table of a broker before 5.0.0)
    async def read_stats(name: str) -> dict[MessageQueue, Any]:
        return (await admin.consume_stats(group, bplans[name].addr or "", topic)).offsets

    read_from = now_ms()
    reported: dict[MessageQueue, int] = {}
    for cs in await fan_out([n for n in involved if up(n)], read_stats,
                            concurrency=admin.concurrency):
        if cs.ok and cs.value is not None:
            reported.update({mq: w.consumer_offset for mq, w in cs.value.items()})
    got = await committed_offsets(admin, group, [m for m in mqs if up(m.broker_name)], reported,
                                  {n: bp.addr for n, bp in bplans.items()})
    for name, exc in got.failed.items():
        fail(name, "QUERY_CONSUMER_OFFSET", exc)
    committed = got.offsets
    warnings: list[str] = [
        f"broker {name}: cannot tell whether {group} committed offset 0 or nothing on "
        f"{len(zs)} queue(s) (a broker before 5.0.0 answers 0 for both; "
        f"GET_ALL_CONSUMER_OFFSET failed: {exc.message}): they are taken as 0, and a rollback "
        "would write 0 there" for name, (exc, zs) in sorted(got.unchecked.items())]
    read_until = now_ms()

    searched: dict[MessageQueue, int] = {}
    if target.kind == "time":
        async def search(mq: MessageQueue) -> int:
            return await admin.search_offset(mq, target.value, bplans[mq.broker_name].addr or "")

        for so in await fan_out([m for m in mqs if up(m.broker_name)], search,
                                concurrency=admin.concurrency):
            if so.ok and so.value is not None:
                searched[so.item] = so.value
            else:  # never guess a time target: a missing search must not become "max"
                fail(so.item.broker_name, "SEARCH_OFFSET_BY_TIMESTAMP", so.error)

    # store times of the first and last message (best effort: only for the TARGET TIME column)
    async def spans(name: str) -> list[Any]:
        return await admin.time_spans(topic, group, bplans[name].addr or "")

    times: dict[MessageQueue, tuple[int, int]] = {}
    for sp in await fan_out([n for n in involved if up(n)], spans,
                            concurrency=admin.concurrency):
        for s in (sp.value or []) if sp.ok else []:
            times[s.mq] = (s.min_timestamp, s.max_timestamp)

    queues: list[QueuePlan] = []
    for mq in mqs:
        if not up(mq.broker_name):
            continue  # its broker is refused in preflight: the plan never drops a queue quietly
        b = bounds[mq]
        qp = compute_target(QueuePlan(mq, b.min_offset, b.max_offset, committed.get(mq), 0,
                                      note=PER_QUEUE_BOUNDS if mq in per_queue else ""),
                            target, searched.get(mq))
        min_ts, last_ts = times.get(mq, (0, b.last_update_timestamp))
        ts, text = target_time(qp, target, min_ts or None, last_ts or b.last_update_timestamp
                               or None, nearest=bplans[mq.broker_name].nearest_search)
        qp = replace(qp, target_ts=ts, target_time=text)
        if qp.clamped:
            warnings.append(f"{mq.short}: target {qp.requested} is outside [{qp.min_offset}, "
                            f"{qp.max_offset}]: clamped to {qp.target}")
        queues.append(qp)
    if target.kind == "time":
        now = now_ms()
        at = format_ms(target.value, zero_unknown=False)  # user-given: epoch 0 is 1970
        if target.value > now:
            older = sorted(n for n, bp in bplans.items() if bp.nearest_search)
            warnings.append(f"{at} is in the future: every queue goes to "
                            "its max offset (only new messages are consumed)"
                            + (f"; broker(s) {', '.join(older)} (older than 5.1.1) answer with "
                               "their last message instead, which is consumed again"
                               if older else ""))
        old = [q for q in queues if q.target == q.min_offset and q.max_offset > q.min_offset
               and times.get(q.mq, (0, 0))[0] > target.value]
        if old:
            warnings.append(f"{len(old)} queue(s) keep no message as old as "
                            f"{at} (retention): they go to their earliest "
                            "message")

    # a group with no committed offset anywhere and no member: does the broker know it?
    if state.known and not state.online:
        for name, bp in bplans.items():
            mine = [q for q in queues if q.mq.broker_name == name]
            if bp.reachable and mine and all(q.current is None for q in mine):
                try:
                    bp.group_known = group in await admin.subscription_groups(bp.addr or "")
                except MqctlError:
                    bp.group_known = None

    plan = Plan(group, topic, target, now_ms(), ";".join(admin.namesrv), queues, bplans, state,
                warnings, notes=notes, offsets_read=(read_from, read_until))
    preflight(plan, force=force, scoped=scope is not None)
    return plan


# ------------------------------------------------------------------------------ preflight

def _far_beyond(plan: Plan) -> None:
    far = [q for q in plan.queues if q.far_beyond]
    if far:  # not overridable: --force would turn a typo into "skip every message"
        q = far[0]
        plan.refusals.append(
            f"{q.mq.short}: target {q.requested} is far beyond the max offset {q.max_offset} "
            f"(more than {FAR_BEYOND_MAX} messages; {len(far)} queue(s)): a typo or a "
            "placeholder is not clamped; use --to-latest to skip the backlog")


def _listed(xs: list[str]) -> str:
    return "; ".join(xs[:6]) + (f"; ... {len(xs) - 6} more" if len(xs) > 6 else "")


def _drifts(plan: Plan) -> Iterator[tuple[QueuePlan, int | None, int | None, int, str]]:
    """The queues of a per-queue file not at the offset the file expects: (queue, expected,
    committed now, the file's target, the drift as text)."""
    t = plan.target
    for q in plan.queues:
        if q.mq not in t.expected or q.far_beyond:
            continue
        exp, now = t.expected[q.mq], q.current
        if exp == now:
            continue
        want = t.plan.get(q.mq, q.target)
        if exp is None or now is None:
            text = (f"{q.mq.short} {'none' if exp is None else exp} -> now "
                    f"{'none' if now is None else now}")
        else:
            text = (f"{q.mq.short} {exp} -> now {now} (drift {now - exp:+d}, plan change "
                    f"{want - exp:+d})")
        yield q, exp, now, want, text


def _drift(plan: Plan, force: bool) -> None:
    """A per-queue file (plan or rollback) checked against the live offsets: the offset it
    expects (the plan's CURRENT, the rollback's reset_to) vs the committed one now. Any drift
    warns per queue; a drift larger than the file's own change (target - expected) is refused
    unless --force: the file was made for another state (stale) or another group."""
    t = plan.target
    if not t.per_queue or not t.expected:
        return
    if t.kind == "rollback":
        _rollback_drift(plan, force)
        return
    moved: list[str] = []
    big: list[str] = []
    for _q, exp, now, want, text in _drifts(plan):
        moved.append(text)
        if exp is None or now is None or abs(now - exp) > abs(want - exp):
            big.append(text)
    if moved:
        plan.warnings.append(f"stale plan: {len(moved)} queue(s) moved since the plan was "
                             f"made (its CURRENT -> live): {_listed(moved)}")
    if big and not force:
        plan.refusals.append(f"stale plan {t.text}: {len(big)} queue(s) moved more than "
                             f"the plan's own change ({_listed(big)}); export a new plan, "
                             "or --force to apply its targets anyway")


def _rollback_drift(plan: Plan, force: bool) -> None:
    """A rollback file against the live offsets, per queue: ``wrote`` (the file's reset_to,
    what the reset wrote), ``saved`` (what the rollback restores), ``now``.

    Consumers only move forward from what the reset wrote, so a queue at or past ``wrote``
    is this reset's own story: after a rewind (``wrote < saved``) the group is replaying it
    (``now < saved``: the rollback skips the rest) or has replayed it and moved on (``now >=
    saved``: the saved offsets are behind the group, a rollback would replay again); after a
    forward move it consumed on. A queue behind ``wrote`` was moved back by something else:
    another reset or rollback, another group's file, an older reset's. A file written against
    another name server, or with later changes of the group and topic beside it, is named as
    such (``Target.elsewhere``)."""
    t = plan.target
    replaying: list[tuple[str, int, int]] = []  # (queue, replayed, rewind)
    replayed: list[tuple[str, int, int]] = []  # (queue, saved, now)
    consumed: list[tuple[str, int]] = []  # forward reset: (queue text, consumed since)
    moved: list[str] = []
    big: list[str] = []
    for q, wrote, now, saved, text in _drifts(plan):
        if now == saved:
            continue  # already at the saved offset (restored, or never moved): nothing to send
        moved.append(text)
        if wrote is None or now is None:
            big.append(text)
            continue
        drift, change = now - wrote, saved - wrote
        if now < wrote or t.elsewhere:  # not consumers (or a file that may not be this one)
            if abs(drift) > abs(change):
                big.append(text)
        elif wrote < saved and now < saved:
            replaying.append((q.mq.short, now - wrote, saved - wrote))
        elif wrote < saved:
            replayed.append((q.mq.short, saved, now))
        elif abs(drift) > abs(change):
            consumed.append((text, drift))

    if moved:
        plan.warnings.append(f"rollback file {t.text}: {len(moved)} queue(s) are not at the "
                             f"offset the reset wrote (reset_to -> live): {_listed(moved)}")
    if replaying:
        left = sum(rw - done for _, done, rw in replaying)
        plan.warnings.append(
            f"rollback file {t.text}: the group is replaying this reset's rewind on "
            f"{len(replaying)} queue(s) ("
            + _listed([f"{name} replayed {done} of {rw}" for name, done, rw in replaying])
            + f"): the rollback puts them back at the saved offsets and skips the {left} "
            "message(s) not replayed yet")
    if replayed:
        again = sum(now - saved for _, saved, now in replayed)
        text = (f"rollback file {t.text}: group {plan.group} has replayed this reset's rewind "
                f"and consumed past the saved offsets on {len(replayed)} queue(s) ("
                + _listed([f"{name} saved {saved}, now {now}" for name, saved, now in replayed])
                + ")" + (f", and is still replaying on {len(replaying)} more" if replaying
                         else "")
                + f": the replay is complete there, so the saved offsets are behind the group "
                f"and a rollback would rewind it again, replaying {again} message(s)")
        if force:
            plan.warnings.append(text + " (--force)")
        else:
            plan.refusals.append(text + "; nothing to undo there; --force to rewind to the "
                                 "saved offsets anyway (a file of another group or cluster, "
                                 "or of an older reset, reads the same way: check it first)")
    if consumed:
        more = sum(d for _, d in consumed)
        text = (f"rollback file {t.text}: group {plan.group} consumed on from the offsets this "
                f"reset wrote on {len(consumed)} queue(s), more than the reset moved "
                f"({_listed([x for x, _ in consumed])}): restoring the saved offsets replays "
                f"those {more} message(s) too")
        if force:
            plan.warnings.append(text + " (--force)")
        else:
            plan.refusals.append(text + "; --force to restore them anyway")
    if big and not force:
        why = ("; ".join(t.elsewhere) + ": ") if t.elsewhere else ""
        plan.refusals.append(f"rollback file {t.text} does not match group {plan.group}'s "
                             f"offsets: {why}{len(big)} queue(s) moved more than the rollback's "
                             f"own change ({_listed(big)}); is it another group's or an older "
                             "reset's file? check it, or --force")


def preflight(plan: Plan, *, force: bool, scoped: bool) -> None:
    """Decide each broker's path and collect refusals and warnings (pure)."""
    st = plan.consumers
    _far_beyond(plan)
    _drift(plan, force)
    if not st.known:
        plan.refusals.append(f"cannot tell whether group {plan.group} is online ({st.error}): "
                             "the reset path depends on it; retry when the brokers answer")
    broadcasting = st.online and st.message_model == "BROADCASTING"
    if broadcasting and not force:
        plan.refusals.append(
            f"group {plan.group} is BROADCASTING: each client keeps its own offsets in a local "
            "file (LocalFileOffsetStore) and commits none to the broker, so a broker reset "
            "reaches at most one client per queue (server-side) and cannot be verified; stop "
            "the clients and edit their offsets.json, or --force")
    pushing: list[str] = []  # brokers on the legacy push path
    for b in plan.brokers.values():
        mine = [q for q in plan.queues if q.mq.broker_name == b.name]
        if not b.reachable:
            plan.refusals.append(f"broker {b.name} ({b.addr or 'no master'}) is not reachable or "
                                 "did not answer: "
                                 f"{b.error}; fix it or leave its queues out with --queues")
            continue
        if b.group_known is False:
            plan.refusals.append(
                f"group {plan.group} does not exist on broker {b.name} (not in its "
                "subscription groups, no committed offset): the broker would answer "
                "SUBSCRIPTION_GROUP_NOT_EXIST; check the group name or create it first "
                "(mqadmin updateSubGroup)")
            continue
        if b.path is None:
            plan.refusals.append(
                f"cannot tell broker {b.name}'s reset path: GET_BROKER_CONFIG failed ({b.error}); "
                "a broker that does not reset server-side reads a per-queue request as 'every "
                "queue of the topic to its max offset', so mqctl does not guess; let the "
                "credentials read the broker config, or leave its queues out with --queues")
            continue
        if b.path == Path_.SERVER_SIDE:
            continue
        # legacy broker: what can take effect?
        if st.known and not st.online:
            b.path = Path_.LEGACY_UPDATE
            b.path_source += ("; group offline: UPDATE_CONSUMER_OFFSET per queue, since the "
                              "legacy INVOKE_BROKER_TO_RESET_OFFSET needs online consumers")
            continue
        if not st.online:
            continue  # unknown state: already refused
        if not plan.target.by_time or scoped:
            why = ("explicit per-queue offsets" if not plan.target.by_time
                   else "a subset of the topic's queues (--queues)")
            if force:
                b.path = Path_.LEGACY_UPDATE
                b.path_source += "; group online: UPDATE_CONSUMER_OFFSET per queue (--force)"
                plan.warnings.append(
                    f"broker {b.name}: writing offsets of an online group with "
                    "UPDATE_CONSUMER_OFFSET (--force): live consumers overwrite them within "
                    "seconds unless they are stopped (verify waits and checks)")
            else:
                plan.refusals.append(
                    f"broker {b.name} uses the legacy reset path and the group is online: "
                    f"{why} would be written with UPDATE_CONSUMER_OFFSET, which live consumers "
                    "overwrite within seconds; stop the consumers, reset the whole topic by "
                    "time, or --force")
            continue
        # the legacy broker resets the whole topic by time through the clients
        if st.pop and not force:
            plan.refusals.append(f"broker {b.name} resets through the clients (legacy path), "
                                 "and pop/gRPC consumers ignore a pushed reset "
                                 "(apache/rocketmq#5613); stop them, or --force")
        if st.consume_type == "CONSUME_ACTIVELY" and not force:
            plan.refusals.append(f"broker {b.name} resets through the clients (legacy path), "
                                 "and pull/lite-pull consumers ignore a pushed reset "
                                 "(MQClientInstance.resetOffset handles push consumers "
                                 "only); stop them, or --force")
        unborn = [q.mq.short for q in mine if q.current is None]
        if unborn:
            plan.refusals.append(
                f"broker {b.name} (legacy path) refuses a reset while a queue has no committed "
                f"offset ({', '.join(unborn[:4])}): it answers 'THe consumer group <"
                f"{plan.group}> not exist'; let the consumers commit first or stop them")
        wq = b.write_queues
        beyond = [q.mq.short for q in mine if wq is not None and q.mq.queue_id >= wq]
        if beyond and wq is not None:
            plan.warnings.append(
                f"broker {b.name}: {plan.topic} has more read than write queues there "
                f"({wq} write): the legacy reset covers queues 0..{wq - 1} "
                f"only (Broker2Client.resetOffset iterates writeQueueNums), so "
                f"{', '.join(beyond[:4])}{' ...' if len(beyond) > 4 else ''} ({len(beyond)} "
                "queue(s)) keep their offsets and verify reports them not taken; stop the "
                "consumers and reset those with --queues")
        pushing.append(b.name)
    order = legacy_push_order(plan)
    for name in pushing:
        if name not in order or len(order) == 1:
            plan.warnings.append(
                f"broker {name}: legacy path: the broker computes the offsets from the time "
                "and pushes them to the online consumers, which apply them after a 10 s pause; "
                "queues no online consumer owns are not reset (verify reports them)")
            continue
        k = order.index(name) + 1
        plan.warnings.append(
            f"broker {name}: legacy path: the broker computes the offsets from the time and "
            "pushes them to the online consumers, which apply one broker's push at a time, "
            "each after a 10 s pause (MQClientInstance.resetOffset is synchronized); pushed "
            f"{_ordinal(k)} of {len(order)}, its queues are applied {apply_text(k, len(order))} "
            "after the push" + ("" if k == 1 or len(order) == 2 else
                                " (a client takes the waiting pushes in no fixed order)")
            + "; queues no online consumer owns are not reset (verify reports them)")
    nearest = sorted(b.name for b in plan.brokers.values() if b.nearest_search and b.reachable)
    if plan.target.kind == "time" and nearest:
        plan.warnings.append(
            f"broker(s) {', '.join(nearest)} older than 5.1.1: "
            "the search by time returns the "
            "message nearest the time (TARGET TIME '~'), which may be the one stored just "
            f"before it, so a queue may replay one message older than "
            f"{format_ms(plan.target.value, zero_unknown=False)}")
    if any(b.path == Path_.SERVER_SIDE and b.reachable for b in plan.brokers.values()):
        plan.notes.append("server-side reset: until a consumer pulls the queue, "
                          "QUERY_CONSUMER_OFFSET and GET_CONSUME_STATS show the pending offset "
                          "(and UPDATE_CONSUMER_OFFSET commits are ignored); consumers take it "
                          "on their next pull (Java clients before 5.2.0 apply it 10 s later)")
    user_topics = [t for t in st.topics if not t.startswith(RETRY_PREFIX)]
    if st.online and user_topics and plan.topic not in st.topics:
        plan.warnings.append(f"the online consumers of {plan.group} do not subscribe to "
                             f"{plan.topic} (they subscribe to {', '.join(user_topics)}): the "
                             "reset writes offsets no consumer reads; check --topic")
    if st.pop:
        plan.warnings.append("pop/gRPC consumers: a server-side reset does not reach FIFO pop "
                             "consumers (apache/rocketmq#10229); verify the result")
    if st.online and st.orderly:
        plan.warnings.append("orderly consumers: queues are dropped and re-locked after the "
                             "reset; expect a short pause in consumption")
    if broadcasting and force:
        plan.warnings.append("BROADCASTING group (--force): verify reads the broker's offsets, "
                             "not the clients' local ones")
    if st.known and not st.online and plan.queues and all(q.current is None
                                                          for q in plan.queues):
        known = [b.group_known for b in plan.brokers.values() if b.reachable]
        if known and all(k is True for k in known):
            plan.warnings.append(f"group {plan.group} has no committed offset for "
                                 f"{plan.topic} yet: the reset creates them (the brokers know "
                                 "the group)")
        elif not force and not any(k is False for k in known):
            plan.refusals.append(f"group {plan.group} has no committed offset for {plan.topic} "
                                 "and no member, and its subscription group could not be "
                                 "checked: check the group name (or --force to create offsets)")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def legacy_push_order(plan: Plan) -> list[str]:
    """The brokers apply sends a legacy push to, in its order (by name, one after another: a
    broker whose queues are all at their target gets none)."""
    return sorted(b.name for b in plan.brokers.values()
                  if b.path == Path_.LEGACY_PUSH and b.reachable
                  and any(q.mq.broker_name == b.name
                          and (q.current is None or q.current != q.target)
                          for q in plan.queues))


def legacy_apply_times(plan: Plan) -> str | None:
    """``broker-a's about 10 s after the push, broker-b's about 20 s``: when the clients apply
    each broker's push (MQClientInstance.resetOffset is synchronized: one push at a time, each
    after its 10 s pause); None with fewer than two pushes."""
    order = legacy_push_order(plan)
    if len(order) < 2:
        return None
    parts = [f"{order[0]}'s about 10 s after the push"]
    if len(order) == 2:
        parts.append(f"{order[1]}'s about 20 s")
    else:
        parts.append(f"{', '.join(order[1:])}'s {apply_text(2, len(order))} (in no fixed "
                     "order after the first)")
    return ", ".join(parts)


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
    from mqctl.timeparse import parse_offset_from_now_ms, parse_time

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

"""Preflight (pure): each broker's reset path, and what refuses or warns about a plan, as small
ordered rules, each returning a frozen :class:`Checks` (as ``mqctl.locks.model.classify_queue``
classifies a queue). :func:`preflight` returns a new plan; the one given is left as it was.

Facts from apache/rocketmq (rocketmq-protocol.md section 6): ``AdminBrokerProcessor.
resetOffset`` (server-side), ``Broker2Client.resetOffset`` (legacy: needs online consumers,
fails on a queue without a committed offset, iterates writeQueueNums), ``MQClientInstance.
resetOffset`` (the client's synchronized 10 s pause; push consumers only),
``ConsumerManageProcessor.updateConsumerOffset`` (live consumers overwrite explicit offsets).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from mqctl.models import RETRY_PREFIX
from mqctl.reset.evidence import apply_text
from mqctl.reset.types import BrokerPlan, Path_, Plan, QueuePlan
from mqctl.timeparse import format_ms

# a target more than this many messages beyond a queue's max offset is a typo or a placeholder
# (e.g. Long.MAX_VALUE), not a position: refused, where a target a little beyond is clamped
FAR_BEYOND_MAX = 1_000_000


@dataclass(frozen=True, slots=True)
class Checks:
    """What rules found: refusals (nothing may be executed), warnings, notes, in order."""

    refusals: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __add__(self, other: Checks) -> Checks:
        return Checks(self.refusals + other.refusals, self.warnings + other.warnings,
                      self.notes + other.notes)


NONE = Checks()


def refuse(*texts: str) -> Checks:
    return Checks(refusals=texts)


def warn(*texts: str) -> Checks:
    return Checks(warnings=texts)


@dataclass(frozen=True, slots=True)
class Facts:
    """What the rules read: the plan, ``force``, ``scoped`` (--queues), and once every
    broker's path is decided, the brokers that reset through the clients (``pushing``)."""

    plan: Plan
    force: bool
    scoped: bool
    pushing: tuple[str, ...] = ()

    @property
    def broadcasting(self) -> bool:
        st = self.plan.consumers
        return st.online and st.message_model == "BROADCASTING"

    def queues_of(self, broker: str) -> list[QueuePlan]:
        return [q for q in self.plan.queues if q.mq.broker_name == broker]


def preflight(plan: Plan, *, force: bool, scoped: bool) -> Plan:
    """The plan with each broker's path decided and its refusals, warnings and notes added:
    the plan-wide rules, each broker's path (the first broker rule that applies decides), then
    the rules that read the decided paths."""
    f = Facts(plan, force, scoped)
    checks = sum((rule(f) for rule in PLAN_RULES), NONE)
    decided = [decide_path(f, b) for b in plan.brokers.values()]
    checks = sum((d.checks for d in decided), checks)
    f = Facts(replace(plan, brokers={d.broker.name: d.broker for d in decided}), force, scoped,
              tuple(d.broker.name for d in decided if d.pushing))
    checks = sum((rule(f) for rule in DECIDED_RULES), checks)
    return replace(f.plan, refusals=[*plan.refusals, *checks.refusals],
                   warnings=[*plan.warnings, *checks.warnings],
                   notes=[*plan.notes, *checks.notes])


# ------------------------------------------------------------------ the plan-wide rules

def far_beyond(f: Facts) -> Checks:
    """Not overridable: --force would turn a typo into "skip every message"."""
    far = [q for q in f.plan.queues if q.far_beyond]
    if not far:
        return NONE
    q = far[0]
    return refuse(f"{q.mq.short}: target {q.requested} is far beyond the max offset "
                  f"{q.max_offset} (more than {FAR_BEYOND_MAX} messages; {len(far)} queue(s)): "
                  "a typo or a placeholder is not clamped; use --to-latest to skip the backlog")


def _listed(xs: list[str]) -> str:
    return "; ".join(xs[:6]) + (f"; ... {len(xs) - 6} more" if len(xs) > 6 else "")


def drifts(plan: Plan) -> Iterator[tuple[QueuePlan, int | None, int | None, int, str]]:
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


def plan_drift(f: Facts) -> Checks:
    """A plan file checked against the live offsets: the offset it expects (its CURRENT) vs
    the committed one now. Any drift warns per queue; a drift larger than the file's own
    change (target - expected) is refused unless --force: the file was made for another state
    (stale) or another group. (A rollback file: :func:`rollback_drift`.)"""
    t = f.plan.target
    if not t.per_queue or not t.expected or t.kind == "rollback":
        return NONE
    moved: list[str] = []
    big: list[str] = []
    for _q, exp, now, want, text in drifts(f.plan):
        moved.append(text)
        if exp is None or now is None or abs(now - exp) > abs(want - exp):
            big.append(text)
    out = warn(f"stale plan: {len(moved)} queue(s) moved since the plan was made (its CURRENT "
               f"-> live): {_listed(moved)}") if moved else NONE
    if big and not f.force:
        out += refuse(f"stale plan {t.text}: {len(big)} queue(s) moved more than the plan's "
                      f"own change ({_listed(big)}); export a new plan, or --force to apply "
                      "its targets anyway")
    return out


@dataclass(frozen=True, slots=True)
class _RollbackDrift:
    """A rollback file's queues against the live offsets, sorted by what moved them."""

    replaying: tuple[tuple[str, int, int], ...]  # (queue, replayed, rewind)
    replayed: tuple[tuple[str, int, int], ...]  # (queue, saved, now)
    consumed: tuple[tuple[str, int], ...]  # forward reset: (queue text, consumed since)
    moved: tuple[str, ...]
    big: tuple[str, ...]

    @classmethod
    def of(cls, plan: Plan) -> _RollbackDrift:
        t = plan.target
        replaying, replayed, consumed, moved, big = [], [], [], [], []
        for q, wrote, now, saved, text in drifts(plan):
            if now == saved:
                continue  # already at the saved offset (restored, or never moved)
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
        return cls(tuple(replaying), tuple(replayed), tuple(consumed), tuple(moved), tuple(big))


def rollback_drift(f: Facts) -> Checks:
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
    plan, t = f.plan, f.plan.target
    if not t.per_queue or not t.expected or t.kind != "rollback":
        return NONE
    d = _RollbackDrift.of(plan)
    out = NONE
    if d.moved:
        out += warn(f"rollback file {t.text}: {len(d.moved)} queue(s) are not at the offset the "
                    f"reset wrote (reset_to -> live): {_listed(list(d.moved))}")
    if d.replaying:
        left = sum(rw - done for _, done, rw in d.replaying)
        out += warn(f"rollback file {t.text}: the group is replaying this reset's rewind on "
                    f"{len(d.replaying)} queue(s) ("
                    + _listed([f"{name} replayed {done} of {rw}"
                               for name, done, rw in d.replaying])
                    + f"): the rollback puts them back at the saved offsets and skips the "
                      f"{left} message(s) not replayed yet")
    return out + _replayed_past(f, d) + _consumed_on(f, d) + _not_this_group(f, d)


def _replayed_past(f: Facts, d: _RollbackDrift) -> Checks:
    if not d.replayed:
        return NONE
    plan, t = f.plan, f.plan.target
    again = sum(now - saved for _, saved, now in d.replayed)
    text = (f"rollback file {t.text}: group {plan.group} has replayed this reset's rewind "
            f"and consumed past the saved offsets on {len(d.replayed)} queue(s) ("
            + _listed([f"{name} saved {saved}, now {now}" for name, saved, now in d.replayed])
            + ")" + (f", and is still replaying on {len(d.replaying)} more" if d.replaying
                     else "")
            + f": the replay is complete there, so the saved offsets are behind the group "
            f"and a rollback would rewind it again, replaying {again} message(s)")
    if f.force:
        return warn(text + " (--force)")
    return refuse(text + "; nothing to undo there; --force to rewind to the saved offsets "
                  "anyway (a file of another group or cluster, or of an older reset, reads the "
                  "same way: check it first)")


def _consumed_on(f: Facts, d: _RollbackDrift) -> Checks:
    if not d.consumed:
        return NONE
    plan, t = f.plan, f.plan.target
    more = sum(n for _, n in d.consumed)
    text = (f"rollback file {t.text}: group {plan.group} consumed on from the offsets this "
            f"reset wrote on {len(d.consumed)} queue(s), more than the reset moved "
            f"({_listed([x for x, _ in d.consumed])}): restoring the saved offsets replays "
            f"those {more} message(s) too")
    return warn(text + " (--force)") if f.force else refuse(
        text + "; --force to restore them anyway")


def _not_this_group(f: Facts, d: _RollbackDrift) -> Checks:
    if not d.big or f.force:
        return NONE
    plan, t = f.plan, f.plan.target
    why = ("; ".join(t.elsewhere) + ": ") if t.elsewhere else ""
    return refuse(f"rollback file {t.text} does not match group {plan.group}'s offsets: "
                  f"{why}{len(d.big)} queue(s) moved more than the rollback's own change "
                  f"({_listed(list(d.big))}); is it another group's or an older reset's file? "
                  "check it, or --force")


def membership_unknown(f: Facts) -> Checks:
    st = f.plan.consumers
    if st.known:
        return NONE
    return refuse(f"cannot tell whether group {f.plan.group} is online ({st.error}): the reset "
                  "path depends on it; retry when the brokers answer")


def broadcasting(f: Facts) -> Checks:
    if not f.broadcasting or f.force:
        return NONE
    return refuse(f"group {f.plan.group} is BROADCASTING: each client keeps its own offsets in a "
                  "local file (LocalFileOffsetStore) and commits none to the broker, so a broker "
                  "reset reaches at most one client per queue (server-side) and cannot be "
                  "verified; stop the clients and edit their offsets.json, or --force")


PLAN_RULES: tuple[Callable[[Facts], Checks], ...] = (
    far_beyond, plan_drift, rollback_drift, membership_unknown, broadcasting)


# ------------------------------------------------------------------ each broker's path

@dataclass(frozen=True, slots=True)
class BrokerVerdict:
    """A broker's decided plan (its path), what it refuses or warns, and whether it resets
    through the clients (a legacy push by time)."""

    broker: BrokerPlan
    checks: Checks = NONE
    pushing: bool = False


BrokerRule = Callable[[Facts, BrokerPlan], "BrokerVerdict | None"]


def decide_path(f: Facts, b: BrokerPlan) -> BrokerVerdict:
    """The first of :data:`BROKER_RULES` that applies decides the broker."""
    for rule in BROKER_RULES:
        found = rule(f, b)
        if found is not None:
            return found
    return BrokerVerdict(b)  # (unreachable: push_through_clients always decides)


def unreachable(f: Facts, b: BrokerPlan) -> BrokerVerdict | None:
    if b.reachable:
        return None
    return BrokerVerdict(b, refuse(
        f"broker {b.name} ({b.addr or 'no master'}) is not reachable or did not answer: "
        f"{b.error}; fix it or leave its queues out with --queues"))


def group_unknown_there(f: Facts, b: BrokerPlan) -> BrokerVerdict | None:
    if b.group_known is not False:
        return None
    return BrokerVerdict(b, refuse(
        f"group {f.plan.group} does not exist on broker {b.name} (not in its subscription "
        "groups, no committed offset): the broker would answer SUBSCRIPTION_GROUP_NOT_EXIST; "
        "check the group name or create it first (mqadmin updateSubGroup)"))


def path_unknown(f: Facts, b: BrokerPlan) -> BrokerVerdict | None:
    if b.path is not None:
        return None
    return BrokerVerdict(b, refuse(
        f"cannot tell broker {b.name}'s reset path: GET_BROKER_CONFIG failed ({b.error}); a "
        "broker that does not reset server-side reads a per-queue request as 'every queue of "
        "the topic to its max offset', so mqctl does not guess; let the credentials read the "
        "broker config, or leave its queues out with --queues"))


def server_side(f: Facts, b: BrokerPlan) -> BrokerVerdict | None:
    return BrokerVerdict(b) if b.path == Path_.SERVER_SIDE else None


def legacy_offline(f: Facts, b: BrokerPlan) -> BrokerVerdict | None:
    """An offline group on a legacy broker: UPDATE_CONSUMER_OFFSET per queue (the legacy
    INVOKE_BROKER_TO_RESET_OFFSET needs online consumers)."""
    st = f.plan.consumers
    if not (st.known and not st.online):
        return None
    return BrokerVerdict(replace(b, path=Path_.LEGACY_UPDATE, path_source=b.path_source + (
        "; group offline: UPDATE_CONSUMER_OFFSET per queue, since the legacy "
        "INVOKE_BROKER_TO_RESET_OFFSET needs online consumers")))


def legacy_state_unknown(f: Facts, b: BrokerPlan) -> BrokerVerdict | None:
    """Membership unknown: refused by :func:`membership_unknown` already."""
    return BrokerVerdict(b) if not f.plan.consumers.online else None


def legacy_explicit_online(f: Facts, b: BrokerPlan) -> BrokerVerdict | None:
    """Explicit per-queue offsets, or a subset of the queues, of an online group on a legacy
    broker: UPDATE_CONSUMER_OFFSET, which live consumers overwrite (only with --force)."""
    if f.plan.target.by_time and not f.scoped:
        return None
    why = ("explicit per-queue offsets" if not f.plan.target.by_time
           else "a subset of the topic's queues (--queues)")
    if not f.force:
        return BrokerVerdict(b, refuse(
            f"broker {b.name} uses the legacy reset path and the group is online: {why} would "
            "be written with UPDATE_CONSUMER_OFFSET, which live consumers overwrite within "
            "seconds; stop the consumers, reset the whole topic by time, or --force"))
    return BrokerVerdict(
        replace(b, path=Path_.LEGACY_UPDATE, path_source=b.path_source
                + "; group online: UPDATE_CONSUMER_OFFSET per queue (--force)"),
        warn(f"broker {b.name}: writing offsets of an online group with UPDATE_CONSUMER_OFFSET "
             "(--force): live consumers overwrite them within seconds unless they are stopped "
             "(verify waits and checks)"))


def push_through_clients(f: Facts, b: BrokerPlan) -> BrokerVerdict:
    """The legacy broker resets the whole topic by time through the online push consumers."""
    st, mine = f.plan.consumers, f.queues_of(b.name)
    out = NONE
    if st.pop and not f.force:
        out += refuse(f"broker {b.name} resets through the clients (legacy path), and pop/gRPC "
                      "consumers ignore a pushed reset (apache/rocketmq#5613); stop them, or "
                      "--force")
    if st.consume_type == "CONSUME_ACTIVELY" and not f.force:
        out += refuse(f"broker {b.name} resets through the clients (legacy path), and "
                      "pull/lite-pull consumers ignore a pushed reset (MQClientInstance."
                      "resetOffset handles push consumers only); stop them, or --force")
    unborn = [q.mq.short for q in mine if q.current is None]
    if unborn:
        out += refuse(f"broker {b.name} (legacy path) refuses a reset while a queue has no "
                      f"committed offset ({', '.join(unborn[:4])}): it answers 'THe consumer "
                      f"group <{f.plan.group}> not exist'; let the consumers commit first or "
                      "stop them")
    wq = b.write_queues
    beyond = [q.mq.short for q in mine if wq is not None and q.mq.queue_id >= wq]
    if beyond and wq is not None:
        out += warn(f"broker {b.name}: {f.plan.topic} has more read than write queues there "
                    f"({wq} write): the legacy reset covers queues 0..{wq - 1} only "
                    f"(Broker2Client.resetOffset iterates writeQueueNums), so "
                    f"{', '.join(beyond[:4])}{' ...' if len(beyond) > 4 else ''} "
                    f"({len(beyond)} queue(s)) keep their offsets and verify reports them not "
                    "taken; stop the consumers and reset those with --queues")
    return BrokerVerdict(b, out, pushing=True)


BROKER_RULES: tuple[BrokerRule, ...] = (
    unreachable, group_unknown_there, path_unknown, server_side, legacy_offline,
    legacy_state_unknown, legacy_explicit_online, push_through_clients)


# ------------------------------------------------------------------ with the paths decided

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


def push_order(f: Facts) -> Checks:
    """When each pushing broker's queues are applied: the clients take one push at a time."""
    order = legacy_push_order(f.plan)
    out = NONE
    for name in f.pushing:
        if name not in order or len(order) == 1:
            out += warn(f"broker {name}: legacy path: the broker computes the offsets from the "
                        "time and pushes them to the online consumers, which apply them after a "
                        "10 s pause; queues no online consumer owns are not reset (verify "
                        "reports them)")
            continue
        k = order.index(name) + 1
        out += warn(
            f"broker {name}: legacy path: the broker computes the offsets from the time and "
            "pushes them to the online consumers, which apply one broker's push at a time, "
            "each after a 10 s pause (MQClientInstance.resetOffset is synchronized); pushed "
            f"{_ordinal(k)} of {len(order)}, its queues are applied {apply_text(k, len(order))} "
            "after the push" + ("" if k == 1 or len(order) == 2 else
                                " (a client takes the waiting pushes in no fixed order)")
            + "; queues no online consumer owns are not reset (verify reports them)")
    return out


def nearest_search(f: Facts) -> Checks:
    nearest = sorted(b.name for b in f.plan.brokers.values()
                     if b.nearest_search and b.reachable)
    if f.plan.target.kind != "time" or not nearest:
        return NONE
    return warn(f"broker(s) {', '.join(nearest)} older than 5.1.1: the search by time returns "
                "the message nearest the time (TARGET TIME '~'), which may be the one stored "
                "just before it, so a queue may replay one message older than "
                f"{format_ms(f.plan.target.value, zero_unknown=False)}")


def server_side_pending(f: Facts) -> Checks:
    if not any(b.path == Path_.SERVER_SIDE and b.reachable for b in f.plan.brokers.values()):
        return NONE
    return Checks(notes=("server-side reset: until a consumer pulls the queue, "
                         "QUERY_CONSUMER_OFFSET and GET_CONSUME_STATS show the pending offset "
                         "(and UPDATE_CONSUMER_OFFSET commits are ignored); consumers take it "
                         "on their next pull (Java clients before 5.2.0 apply it 10 s later)",))


def not_subscribed(f: Facts) -> Checks:
    st, plan = f.plan.consumers, f.plan
    user_topics = [t for t in st.topics if not t.startswith(RETRY_PREFIX)]
    if not (st.online and user_topics and plan.topic not in st.topics):
        return NONE
    return warn(f"the online consumers of {plan.group} do not subscribe to {plan.topic} (they "
                f"subscribe to {', '.join(user_topics)}): the reset writes offsets no consumer "
                "reads; check --topic")


def pop_consumers(f: Facts) -> Checks:
    if not f.plan.consumers.pop:
        return NONE
    return warn("pop/gRPC consumers: a server-side reset does not reach FIFO pop consumers "
                "(apache/rocketmq#10229); verify the result")


def orderly_consumers(f: Facts) -> Checks:
    st = f.plan.consumers
    if not (st.online and st.orderly):
        return NONE
    return warn("orderly consumers: queues are dropped and re-locked after the reset; expect a "
                "short pause in consumption")


def broadcasting_forced(f: Facts) -> Checks:
    if not (f.broadcasting and f.force):
        return NONE
    return warn("BROADCASTING group (--force): verify reads the broker's offsets, not the "
                "clients' local ones")


def no_offsets_yet(f: Facts) -> Checks:
    """An offline group with no committed offset on the topic: the reset creates them when
    the brokers know the group; refused when that could not be checked (a typo?)."""
    plan, st = f.plan, f.plan.consumers
    if not (st.known and not st.online and plan.queues
            and all(q.current is None for q in plan.queues)):
        return NONE
    known = [b.group_known for b in plan.brokers.values() if b.reachable]
    if known and all(k is True for k in known):
        return warn(f"group {plan.group} has no committed offset for {plan.topic} yet: the "
                    "reset creates them (the brokers know the group)")
    if not f.force and not any(k is False for k in known):
        return refuse(f"group {plan.group} has no committed offset for {plan.topic} and no "
                      "member, and its subscription group could not be checked: check the "
                      "group name (or --force to create offsets)")
    return NONE


DECIDED_RULES: tuple[Callable[[Facts], Checks], ...] = (
    push_order, nearest_search, server_side_pending, not_subscribed, pop_consumers,
    orderly_consumers, broadcasting_forced, no_offsets_yet)

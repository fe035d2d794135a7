"""The finding rules of ``mqctl diagnose`` (pure: readings in, findings out).

Each rule looks at what was read (:class:`mqctl.diagnose.types.Reading`; with ``--sample`` the
first and the second read) and returns its findings and one :class:`Check`: found, ok (with
the numbers that say so), not checked (the data it needs could not be read: no finding is
made from a guess), n/a, or needs --sample. The thresholds are RocketMQ's own, read from the
client's running info or the broker's config where they are there, else the defaults of the
RocketMQ class named next to them; docs/diagnose.md explains every finding.

Each finding also declares the facts it shows and the facts its cause explains
(:mod:`mqctl.diagnose.explain`), which rank it: a cause before the findings it explains.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqctl.admin import dedupe
from mqctl.diagnose import explain as x
from mqctl.diagnose.capture import is_main_topic
from mqctl.diagnose.explain import qfact, qfacts
from mqctl.diagnose.types import (
    ERROR,
    FOUND,
    INFO,
    NEEDS_SAMPLE,
    NOT_APPLICABLE,
    NOT_CHECKED,
    OK,
    SECOND_READ,
    WARNING,
    Check,
    Diagnosis,
    Evidence,
    Fact,
    Finding,
    Reading,
)
from mqctl.locks.view import group_kind
from mqctl.models import RETRY_PREFIX, MessageQueue, ProcessQueueInfo, decode_perm
from mqctl.timeparse import format_duration, format_local
from mqctl.views.members import check_members
from mqctl.views.progress import NO_QUEUE_READ, known_total, no_queue_reason

if TYPE_CHECKING:
    from mqctl.locks.model import LockView, QueueLock
    from mqctl.models import ConsumerRunningInfo
    from mqctl.views.members import ClientView
    from mqctl.views.progress import QueueProgress

# ClientConfig.persistConsumerOffsetInterval (5 s): the committed offset trails what was
# consumed by up to one interval, so a queue whose next message was stored no more than two
# intervals ago is caught up
PERSIST_INTERVAL_MS = 5_000
CAUGHT_UP_MS = 2 * PERSIST_INTERVAL_MS
# ConsumerRunningInfo.analyzeProcessQueue: "can't consume for a while, maybe blocked"
BLOCKED_MS = 60_000
# a pool whose estimated busy threads reach this share of its size is saturated
SATURATED = 0.9
# DefaultMQPushConsumer defaults (the running info's properties win when present)
PULL_THRESHOLD_FOR_QUEUE = 1000
PULL_THRESHOLD_SIZE_MIB = 100
CONSUME_CONCURRENTLY_MAX_SPAN = 2000
POP_THRESHOLD_FOR_QUEUE = 96
MAX_RECONSUME_TIMES = 16  # DefaultMQPushConsumerImpl.getMaxReconsumeTimes for -1
# broker defaults (GET_BROKER_CONFIG wins when present)
WAIT_PULL_QUEUE_MS = 5_000  # BrokerConfig.waitTimeMillsInPullQueue
OS_PAGE_CACHE_BUSY_MS = 1_000  # MessageStoreConfig.osPageCacheBusyTimeOutMills
HA_MAX_GAP = 256 * 1024 * 1024  # MessageStoreConfig.haSlaveFallbehindMax / haMaxGapNotInSync
LISTED = 6  # queues named in a finding's title before "and N more"
# ConsumerStatsManager keeps consumeFailedMsgs over the last hour (statsHour)
RECENT_MS = 3_600_000
# a client whose consume capacity is below this share of the other clients' (median) is
# slower than they are: it explains lag that concentrates on its queues, instead of the
# lag's concentration explaining its saturation
SLOWER = 0.9


def _lag(q: QueueProgress) -> int:
    """A queue's lag where a rule uses it: the rules that add or compare lags do not apply to
    a group whose lag is unknown (BROADCASTING: the offsets are the clients'), and an unknown
    lag never makes a finding (it counts as none)."""
    return q.lag if q.lag is not None else 0


def _total_lag(qs: Iterable[QueueProgress]) -> int | None:
    """The lag of ``qs``, or None when any of it is unknown or no queue was read (never 0 for
    unknown: mqctl.views.progress.known_total)."""
    return known_total(q.lag for q in qs)


def _lag_facts(mqs: Iterable[MessageQueue]) -> frozenset[Fact]:
    """What a cause of lag on these queues explains: each one behind, and the lag
    concentrating there."""
    ms = list(mqs)
    return qfacts(x.BEHIND, ms) | qfacts(x.CONCENTRATED, ms)


def _commit_explains(held: Iterable[tuple[MessageQueue, str]]) -> frozenset[Fact]:
    """What a committed offset held by one message explains: the queue's lag (the committed
    offset is where the lag and the time lag are measured from) and the owner's span flow
    control on it (consumeConcurrentlyMaxSpan)."""
    out: set[Fact] = set()
    for mq, cid in held:
        out |= _lag_facts([mq]) | {qfact(x.SPAN, mq, cid)}
    return frozenset(out)


def n_(v: float | int | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.1f}"


def tps(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}/s"


def q_(mq: MessageQueue) -> str:
    if mq.queue_id < 0:  # a pop client's process queue of a whole broker (allocate4Pop: -1)
        return f"{mq.topic} {mq.broker_name} (pop: every queue)"
    return f"{mq.topic} {mq.short}"


def qlist(mqs: Iterable[MessageQueue]) -> str:
    ms = sorted(mqs)
    text = ", ".join(q_(m) for m in ms[:LISTED])
    return text + (f" and {len(ms) - LISTED} more" if len(ms) > LISTED else "")


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _prop(info: ConsumerRunningInfo, key: str, default: float | None) -> tuple[float | None, str]:
    """A client property as a number, and where it came from."""
    v = _num(info.properties.get(key))
    if v is not None:
        return v, "running info"
    return default, "DefaultMQPushConsumer default"


class Ctx:
    """What the rules share: the latest reading, the first one (``--sample``), and views of
    it (owners per queue, the queues of the topics asked for, ...)."""

    def __init__(self, first: Reading, second: Reading | None, topic: str | None):
        self.now = second or first
        self.first = first if second is not None else None
        self.topic = topic
        self.group = first.group
        r = self.now
        self.members = r.members
        self.kind = group_kind(r.members) if r.members is not None else "unknown"
        self.online = r.members.online_state if r.members is not None else None
        self.clients: dict[str, ClientView] = dict(r.members.clients) if r.members else {}
        self.infos = {c: cv.running for c, cv in self.clients.items() if cv.running is not None}
        self.all_answered = bool(self.clients) and len(self.infos) == len(self.clients)
        self.progress = r.progress
        self.queues = self.queues_of(r)
        self.retry_queues = ([q for q in r.progress.queues
                              if q.mq.topic == RETRY_PREFIX + self.group]
                             if r.progress else [])
        self.owners = self.owners_of(r)
        subs: set[str] = set()
        if r.members is not None and r.members.connection is not None:
            subs |= set(r.members.connection.subscriptions)
        for cv in self.clients.values():
            subs |= set(cv.subscriptions or {})
        self.subscribed = {t for t in subs if is_main_topic(t)}
        if topic is not None:
            self.subscribed &= {topic}
        self.disabled = self._disabled()
        self.unreadable = self._unreadable()
        self.explained: set[MessageQueue] = set()  # queues an earlier finding explains

    def queues_of(self, r: Reading) -> list[QueueProgress]:
        if r.progress is None:
            return []
        return [q for q in r.progress.queues if is_main_topic(q.mq.topic)
                and (self.topic is None or q.mq.topic == self.topic)]

    @staticmethod
    def owners_of(r: Reading) -> dict[MessageQueue, list[tuple[str, ProcessQueueInfo]]]:
        out: dict[MessageQueue, list[tuple[str, ProcessQueueInfo]]] = defaultdict(list)
        if r.members is None:
            return out
        for cid, cv in r.members.clients.items():
            if cv.running is not None:
                for mq, pq in cv.running.mq_table.items():
                    if not pq.dropped:
                        out[mq].append((cid, pq))
        return out

    def _disabled(self) -> dict[str, Any]:
        cfg = self.now.config
        if cfg is None:
            return {}
        return {b: c for b, c in cfg.configs.items()
                if c is not None and c.get("consumeEnable") is False}

    def _unreadable(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for t, rt in self.now.routes.items():
            if not is_main_topic(t) or (self.topic is not None and t != self.topic):
                continue
            for qd in rt.queues:
                if not qd.readable:
                    out.setdefault(t, {})[qd.broker_name] = qd.perm
        return out

    def lag_of(self, mqs: Iterable[MessageQueue]) -> int:
        want = set(mqs)
        return sum(_lag(q) for q in self.queues if q.mq in want)

    def addr(self, broker: str) -> str:
        for rt in self.now.routes.values():
            b = rt.broker(broker)
            if b is not None and b.master_addr:
                return b.master_addr
        for bd in (self.members.brokers if self.members else []):
            if bd.broker_name == broker and bd.master_addr:
                return bd.master_addr
        return "<broker-addr>"

    def client_tps(self, topic: str) -> float | None:
        """The clients' consumeOKTPS for the topic (ConsumeStatus, last minute), summed;
        None unless every member answered."""
        if not self.all_answered:
            return None
        return sum(_num((i.status_table.get(topic) or {}).get("consumeOKTPS")) or 0.0
                   for i in self.infos.values())

    def src(self, request: str, where: str = "") -> str:
        return f"{request} {where}" if where else request

    def capacity(self, cid: str) -> float | None:
        """Messages a second the client's consume threads can do: threads (an orderly client:
        at most one per queue it holds) x consumeMessageBatchMaxSize x 1000 / consumeRT (ms a
        call, weighted by each topic's rate); None when its running info or consumeRT is not
        known."""
        info = self.infos.get(cid)
        if info is None:
            return None
        pool = _pool(info)
        if pool is None or pool <= 0:
            return None
        if info.orderly:
            held = sum(1 for pq in info.mq_table.values() if not pq.dropped)
            pool = min(pool, held) if held else pool
        batch = _num(info.properties.get("consumeMessageBatchMaxSize")) or 1.0
        rts = []
        for s in info.status_table.values():
            if isinstance(s, dict) and (rt := _num(s.get("consumeRT")) or 0.0) > 0:
                rate = (_num(s.get("consumeOKTPS")) or 0.0) + (_num(s.get("consumeFailedTPS"))
                                                               or 0.0)
                rts.append((rate, rt))
        if not rts:
            return None
        total = sum(r for r, _ in rts)
        rt = (sum(r * t for r, t in rts) / total if total > 0
              else sum(t for _, t in rts) / len(rts))
        return pool * batch * 1000 / rt

    def speeds(self, cid: str) -> tuple[float | None, float | None]:
        """The client's capacity and the median of the group's other clients' (None: not
        known)."""
        others = sorted(c for o in self.infos if o != cid
                        if (c := self.capacity(o)) is not None)
        return self.capacity(cid), (others[len(others) // 2] if others else None)

    def slower(self, cid: str) -> bool | None:
        """Whether the client consumes slower than the group's other clients (its capacity
        below SLOWER x their median); None when it cannot be compared."""
        mine, others = self.speeds(cid)
        if mine is None or others is None:
            return None
        return mine < SLOWER * others

    def speed_evidence(self, cids: Iterable[str]) -> tuple[Evidence, ...]:
        """How fast each client can consume against the others (what says whether it is
        slower than they are)."""
        out = []
        for cid in sorted(set(cids)):
            mine, others = self.speeds(cid)
            if mine is None or others is None:
                continue
            verdict = "slower than" if self.slower(cid) else "no slower than"
            out.append(Evidence(
                f"{cid} can consume about {mine:.1f}/s (consume threads x batch x 1000 / "
                f"consumeRT), the group's other clients {others:.1f}/s (median): {verdict} "
                "they are", self.src("GET_CONSUMER_RUNNING_INFO statusTable and properties",
                                     cid), self.now.ts))
        return tuple(out)

    def silent_explains(self, cids: Iterable[str]) -> frozenset[Fact]:
        """What members that do not answer (hung, overloaded, gone without closing their
        connection) explain: a broker that no longer lists them (they stopped heartbeating:
        ConsumerManager drops a client 120 s after its last heartbeat there), their running
        info not read, the orderly queues they hold, claimed or are assigned (their locks are
        neither renewed nor released, RebalanceLockManager), and the lagging queues that no
        member that answered holds (their share, or nobody's because of them)."""
        silent = set(cids)
        out: set[Fact] = set()
        for c in silent:
            out |= {(x.SILENT, c), (x.UNREAD, c), (x.NOT_LISTED, c)}
        view = self.now.locks
        for ql in (view.queues if view is not None else ()):
            if (ql.owner in silent or any(p in silent for p in ql.predicted)
                    or any(cl.client_id in silent for cl in ql.claims)):
                out.add(qfact(x.LOCK, ql.mq))
        if silent:
            for q in self.queues + self.retry_queues:
                if _lag(q) > 0 and not self.owners.get(q.mq):
                    out |= {qfact(x.BEHIND, q.mq), qfact(x.CONCENTRATED, q.mq)}
        return frozenset(out)


# a rule gets the reading(s) and its own code (the one it is registered under)
Rule = Callable[[Ctx, str], tuple[list[Finding], Check]]
RULES: list[tuple[str, Rule]] = []


def rule(code: str) -> Callable[[Rule], Rule]:
    """Register a rule under ``code``: :func:`diagnose` calls it with the code, so the rule
    names its findings and check by the same code it is listed (and ordered) by."""
    def deco(fn: Rule) -> Rule:
        RULES.append((code, fn))
        return fn
    return deco


def _online_needed(ctx: Ctx, code: str, not_for: tuple[str, ...] = (), why: str = ""
                   ) -> Check | None:
    """The check for a rule about live consumers when there are none (or unknown), or when
    the group is of a kind (``not_for``: pop, orderly, broadcasting) it does not apply to."""
    if ctx.online is None:
        return Check(code, NOT_CHECKED, "the member list was not read")
    if not ctx.online:
        return Check(code, NOT_APPLICABLE, "no consumer is online")
    if ctx.kind in not_for:
        return Check(code, NOT_APPLICABLE, f"{ctx.kind} group{why}")
    return None


def _outcome(code: str, out: list[Finding], ok: str, found: str | None = None, *,
             status: str = OK) -> tuple[list[Finding], Check]:
    """A rule's result: its findings and the check, ``found`` (default: their codes) when
    there are findings, else ``status`` (ok) with the numbers in ``ok``."""
    if not out:
        return [], Check(code, status, ok)
    return out, Check(code, FOUND, found if found is not None else
                      ", ".join(f.code for f in out))


# ---------------------------------------------------------------- nobody consumes


@rule("offline")
def offline(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.online is None:
        return [], Check(code, NOT_CHECKED, ctx.now.unread.get("members", "member list unread"))
    m = ctx.members
    assert m is not None
    if ctx.online:
        return [], Check(code, OK, f"{len(ctx.clients)} client(s) online on "
                                   f"{len([b for b, v in m.members.items() if v])} broker(s)")
    ts = ctx.now.ts
    ev = [Evidence(f"{b}: no member", ctx.src("GET_CONSUMER_LIST_BY_GROUP", b), ts)
          for b in sorted(m.members)]
    lag = _total_lag(ctx.queues) if ctx.progress else None
    last = max((q.last_timestamp for q in ctx.queues), default=0)
    # no queue read at all (every broker answered): nothing says which queues the group would
    # read (created by updateSubGroup and never consumed: corpus */never-committed/ NC_NEVER);
    # its lag is unknown, as `groups` (EMPTY, LAG -) and `group progress` say, not 0
    nothing = ctx.progress is not None and not ctx.queues and ctx.progress.complete
    if lag is not None:
        # the queues read, with what they are of: a broker that did not answer leaves its
        # queues (and their lag) out, so the sum is then the lag of those read only
        missing = ctx.progress.not_included if ctx.progress else []
        ev.append(Evidence(f"lag {n_(lag)} message(s) on {len(ctx.queues)} queue(s)"
                           + (f" read (not included: {', '.join(missing)})" if missing else "")
                           + (f"; the last message consumed was stored {format_duration(ts - last)}"
                              " ago" if last else ""),
                           "GET_CONSUME_STATS", ts))
    elif nothing:
        ev.append(Evidence(f"lag unknown: {NO_QUEUE_READ}: "
                           + no_queue_reason(ctx.subscribed, None), "GET_CONSUME_STATS", ts))
    sev = WARNING if nothing or lag == 0 else ERROR
    return [Finding(
        code, sev, f"nobody consumes: group {ctx.group} has no member on any broker"
        + (f"; lag {n_(lag)}" if lag else "; no queue was read: lag unknown" if nothing
           else ""),
        why="with no consumer online no queue is pulled: the lag grows with every message "
            "produced",
        next=f"start the group's consumers (`mqctl consumers {ctx.group}` shows who is "
             "connected)", evidence=tuple(ev),
        values={"lag": lag, "last_consumed_ts": last or None},
        brokers=tuple(sorted(m.members)),
        rocketmq="ConsumerManager (GET_CONSUMER_LIST_BY_GROUP)",
        shows=frozenset({(x.OFFLINE,)}), explains=frozenset({(x.BEHIND,), (x.CONCENTRATED,)}))
    ], Check(code, FOUND, "offline")


@rule("consume-disabled")
def consume_disabled(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    cfg = ctx.now.config
    if cfg is None:
        if ctx.now.config_missing:
            return [], Check(code, OK, "no broker holds a subscription group for it (every "
                                       "broker that auto-creates it consumes: consumeEnable "
                                       "true by default)")
        return [], Check(code, NOT_CHECKED, ctx.now.unread.get("group config", "not read"))
    unread = ctx.now.unread.get("group config")
    if not ctx.disabled:
        held = [b for b in cfg.holders]
        return [], Check(code, NOT_CHECKED if unread else OK,
                         (unread + "; " if unread else "")
                         + f"consumeEnable true on {', '.join(held) or 'no broker'}")
    out = []
    ts = ctx.now.ts
    for b in sorted(ctx.disabled):
        qs = [q for q in ctx.queues if q.mq.broker_name == b]
        ctx.explained |= {q.mq for q in qs}
        lag = sum(_lag(q) for q in qs)
        ev = [Evidence(f"consumeEnable=false in {ctx.group}'s subscription group on {b}",
                       ctx.src("GET_ALL_SUBSCRIPTIONGROUP_CONFIG", b), ts)]
        if ctx.progress is not None:
            ev.append(Evidence(f"{len(qs)} queue(s) on {b}: lag {n_(lag)}",
                               ctx.src("GET_CONSUME_STATS", b), ts))
        out.append(Finding(
            code, ERROR, f"consumption disabled on {b}: consumeEnable=false"
            + (f"; lag {n_(lag)} on its {len(qs)} queue(s)" if qs else ""),
            why=f"{b} refuses every pull of {ctx.group} (PullMessageProcessor: NO_PERMISSION "
                f"'subscription group no permission, {ctx.group}'): its queues are allocated "
                "to consumers that get nothing from them",
            next=f"`mqctl group config {ctx.group}` shows every field; re-enable with `mqadmin "
                 f"updateSubGroup -b {ctx.addr(b)} -g {ctx.group} -s true` and every other "
                 "field as it is (updateSubGroup replaces the whole config)",
            evidence=tuple(ev), values={"broker": b, "consumeEnable": False, "lag": lag},
            brokers=(b,), queues=tuple(q.mq for q in qs),
            rocketmq="SubscriptionGroupConfig.consumeEnable, PullMessageProcessor",
            shows=frozenset({(x.BROKER, "consume-disabled", b)}),
            explains=_lag_facts(q.mq for q in qs)))
    return out, Check(code, FOUND, ", ".join(sorted(ctx.disabled)))


@rule("topic-not-readable")
def topic_not_readable(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    routes = {t: rt for t, rt in ctx.now.routes.items()
              if is_main_topic(t) and (ctx.topic is None or t == ctx.topic)}
    if not routes:
        return [], Check(code, NOT_CHECKED if ctx.queues else NOT_APPLICABLE,
                         "no route of the group's topics was read")
    if not ctx.unreadable:
        return [], Check(code, OK, "readable on every broker: " + "; ".join(
            f"{t} perm " + ", ".join(f"{q.broker_name} {decode_perm(q.perm)}" for q in rt.queues)
            for t, rt in sorted(routes.items())))
    out = []
    ts = ctx.now.ts
    for t, bs in sorted(ctx.unreadable.items()):
        for b, perm in sorted(bs.items()):
            qs = [q for q in ctx.queues if q.mq.topic == t and q.mq.broker_name == b]
            ctx.explained |= {q.mq for q in qs}
            lag = sum(_lag(q) for q in qs)
            ev = [Evidence(f"{t} on {b}: perm {perm} ({decode_perm(perm)}): not readable",
                           ctx.src("GET_ROUTEINFO_BY_TOPIC", "name server"), ts)]
            if qs:
                ev.append(Evidence(f"{len(qs)} queue(s) of {t} on {b}: lag {n_(lag)}",
                                   ctx.src("GET_CONSUME_STATS", b), ts))
            writable = bool(perm & 2)
            out.append(Finding(
                code, ERROR if lag > 0 or writable else WARNING,
                f"{t} is not readable on {b} (perm {decode_perm(perm)})"
                + (f": lag {n_(lag)} there" if qs else ""),
                why="clients leave queues that are not readable out of their allocation "
                    "(MQClientInstance.topicRouteData2TopicSubscribeInfo) and the broker "
                    f"refuses their pulls ('the topic[{t}] pulling message is forbidden')"
                    + (": what producers still write there is never consumed" if writable
                       else ""),
                next=f"`mqadmin updateTopicPerm -b {ctx.addr(b)} -t {t} -p 6` (read and write)",
                evidence=tuple(ev), values={"topic": t, "broker": b, "perm": perm, "lag": lag},
                brokers=(b,), topics=(t,), queues=tuple(q.mq for q in qs),
                rocketmq="PermName, QueueData.perm, PullMessageProcessor",
                shows=frozenset({(x.BROKER, "not-readable", t, b)}),
                explains=_lag_facts(q.mq for q in qs) | qfacts(x.UNOWNED, (q.mq for q in qs))))
    return out, Check(code, FOUND, "; ".join(f"{t}: {', '.join(sorted(bs))}"
                                             for t, bs in sorted(ctx.unreadable.items())))


# ---------------------------------------------------------------- clients


@rule("client-silent")
def client_silent(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := _online_needed(ctx, code)) is not None:
        return [], c
    # the error without the broker's address and the Java stack the remark carries
    silent = {c: re.sub(r" from [\w.\-]+:[0-9]+", "", cv.running_error or "no answer"
                        ).split(": org.apache.")[0]
              for c, cv in ctx.clients.items() if cv.running is None}
    if not silent:
        return [], Check(code, OK, f"all {len(ctx.clients)} client(s) answered "
                                   "GET_CONSUMER_RUNNING_INFO")
    ts = ctx.now.ts
    hung = _hung_holders(ctx)
    evidence = [Evidence(f"{c}: {why}", ctx.src("GET_CONSUMER_RUNNING_INFO", c), ts)
                for c, why in sorted(silent.items())]
    title = (f"{len(silent)} client(s) do not answer GET_CONSUMER_RUNNING_INFO: "
             + ", ".join(sorted(silent)))
    nxt = ("a thread dump of the client (jstack); a hung client is dropped by the brokers "
           f"about 120 s after its last heartbeat; `mqctl consumers {ctx.group}`")
    if hung:
        # a hung member the allocation still gives orderly queues: nobody else consumes them
        # until the brokers drop it (mqctl.locks: state hung), the cause of their lag
        title += (f" (hung, holding {sum(len(qs) for qs in hung.values())} orderly queue(s) "
                  "that nobody else consumes until the brokers drop it)")
        for cid, qs in sorted(hung.items()):
            h = qs[0].hung
            assert h is not None
            lo, hi = h.dropped
            evidence.append(Evidence(
                f"{cid}: a member that last answered at {format_local(h.last_answer_ts)} and "
                f"does not since {format_local(h.silent_ts)}; the allocation still assigns it "
                f"{qlist(q.mq for q in qs)}; the brokers drop it between {format_local(lo)} "
                f"and {format_local(hi)} (120 s after its last heartbeat), its queues are "
                f"consumed again by {format_local(h.resumes_by)} at the latest",
                ctx.src("GET_CONSUMER_LIST_BY_GROUP + mqctl locks show's state file"), ts))
        nxt = (f"restart {', '.join(sorted(hung))} (a frozen process: its connections close and "
               "the others take its queues at once) or wait until the brokers drop it; a lock "
               f"release frees nobody; `mqctl locks show {ctx.group}` says until when")
    return [Finding(
        code, ERROR if hung else WARNING, title,
        why="the broker forwards the request over the client's own connection: a member that "
            "does not answer is hung, overloaded or gone without closing its connection, and "
            "its queues stay allocated to it; the checks that need its running info are not "
            "made",
        next=nxt, evidence=tuple(evidence),
        values={"clients": sorted(silent), "hung": sorted(hung)},
        clients=tuple(sorted(silent)),
        queues=tuple(q.mq for qs in hung.values() for q in qs),
        rocketmq="AdminBrokerProcessor.getConsumerRunningInfo, Broker2Client, "
                 "ConsumerManager.scanNotActiveChannel",
        shows=frozenset((x.SILENT, c) for c in silent),
        explains=ctx.silent_explains(silent))], \
        Check(code, FOUND, ", ".join(sorted(silent)))


def _hung_holders(ctx: Ctx) -> dict[str, list[QueueLock]]:
    """Per hung member (mqctl.locks state ``hung``), the orderly queues it blocks."""
    out: dict[str, list[QueueLock]] = defaultdict(list)
    view = ctx.now.locks
    if ctx.kind != "orderly" or view is None:
        return out
    for q in view.queues:
        if q.state.value == "hung" and q.owner and q.hung is not None \
                and (ctx.topic is None or q.mq.topic == ctx.topic):
            out[q.owner].append(q)
    return out


# the checks of `mqctl consumers` (mqctl.views.members.check_members) and what each explains
MEMBER_CHECKS = {
    "duplicate-id": ("duplicate-client-id", ERROR,
                     "the clients with one id compute the same allocation and take the same "
                     "queues, while the queues that id's other share would get are consumed "
                     "by nobody (RebalanceImpl allocates over the sorted id list)",
                     "give every process a unique instanceName (or clientIP): "
                     "ClientConfig.buildMQClientId is ip@instanceName"),
    "strategy": ("mixed-strategies", ERROR,
                 "each client allocates with its own AllocateMessageQueueStrategy over the same "
                 "queue and member lists: the shares overlap (two clients on one queue) and "
                 "leave gaps (queues nobody takes)",
                 "give every client of the group the same allocateMessageQueueStrategy"),
    "membership": ("membership-split", ERROR,
                   "a client asks ONE broker of the route for the member list "
                   "(MQClientInstance.findConsumerIdList): clients that ask different brokers "
                   "compute different allocations, and a client a broker does not list gets "
                   "nothing from those that ask it",
                   "find why the client does not heartbeat to every broker (network, ACL, "
                   "its route); `mqctl consumers {g}` shows who each broker lists"),
    "subscription": ("subscription-mismatch", ERROR,
                     "a broker keeps ONE subscription per topic for the group (the one with "
                     "the newest subVersion, ConsumerGroupInfo.updateSubscription) and filters "
                     "every member's pulls with it (PullMessageProcessor): messages a client "
                     "wants and the broker's expression excludes never reach it, and messages "
                     "it does not want are dropped by its own tag filter with their offsets "
                     "committed",
                     "give every client of the group the same subscriptions (one group per "
                     "subscription)"),
    "idle": ("idle-consumers", WARNING,
             "a queue is consumed by one client at a time: the clients beyond the number of "
             "queues get none and add no capacity",
             "fewer consumers, or more queues (`mqadmin updateTopic -r/-w`)"),
}


@rule("members")
def member_checks(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := _online_needed(ctx, code)) is not None:
        return [], c

    assert ctx.members is not None
    ts = ctx.now.ts
    out: list[Finding] = []
    found = []
    for f in check_members(ctx.members):
        spec = MEMBER_CHECKS.get(f.check)
        if spec is None:
            continue
        fcode, sev, why, nxt = spec
        found.append(fcode)
        src = ("GET_CONSUMER_LIST_BY_GROUP on every broker"
               if f.check in ("duplicate-id", "membership", "idle")
               else "GET_CONSUMER_RUNNING_INFO of every client")
        ev = [Evidence(f.message, src, ts)]
        values: dict[str, Any] = {"clients": list(f.clients)}
        if f.check == "subscription":
            ev += _subscription_effect(ctx)
        if f.check == "duplicate-id":
            values["connections"] = {c: ctx.clients[c].connections for c in f.clients
                                     if c in ctx.clients}
        title = f.message
        if f.check != "idle":  # the message up to its explanation
            title = (f.message.split("): ")[0] + ")" if "): " in f.message
                     else f.message.split(": ")[0])
        shows = frozenset((x.NOT_LISTED, c) if f.check == "membership"
                          else (x.MEMBERSHIP, f.check, c) for c in f.clients)
        # an allocation computed from different member lists, strategies or duplicate ids
        # leaves queues to nobody (RebalanceImpl.rebalanceByTopic)
        explains = (frozenset({(x.UNOWNED,)})
                    if f.check in ("membership", "strategy", "duplicate-id") else frozenset())
        out.append(Finding(fcode, sev, title, why=why, next=nxt.format(g=ctx.group),
                           evidence=tuple(ev), values=values, clients=f.clients,
                           rocketmq=_MEMBER_SOURCES[f.check], shows=shows,
                           explains=explains))
    return _outcome(code, out, f"{len(ctx.clients)} client(s): unique ids, one strategy, one "
                    "subscription, the same member list on every broker", ", ".join(found))


_MEMBER_SOURCES = {
    "duplicate-id": "ClientConfig.buildMQClientId, ConsumerManager, RebalanceImpl",
    "strategy": "AllocateMessageQueueStrategy, RebalanceImpl.rebalanceByTopic",
    "membership": "MQClientInstance.findConsumerIdList, RebalanceImpl.rebalanceByTopic",
    "subscription": "ConsumerGroupInfo.updateSubscription, PullMessageProcessor, "
                    "ConsumerRunningInfo.analyzeSubscription",
    "idle": "AllocateMessageQueueAveragely (and every built-in strategy)",
}


def _subscription_effect(ctx: Ctx) -> list[Evidence]:
    """What each broker filters with (its group-level subscription) against what each client
    subscribed, and the clients whose subVersion is newer than the broker's: their pulls are
    answered SUBSCRIPTION_NOT_LATEST until their next heartbeat reaches that broker."""
    out = []
    ts = ctx.now.ts
    for b, conn in sorted(ctx.now.connections.items()):
        if conn is None:
            continue
        for t, sub in sorted(conn.subscriptions.items()):
            if not is_main_topic(t):
                continue
            differ, newer = [], []
            for cid, info in sorted(ctx.infos.items()):
                mine = next((s for s in info.subscriptions if s.topic == t), None)
                if mine is None:
                    continue
                if mine.expression != sub.expression:
                    differ.append(f"{cid} ({mine.expression})")
                if mine.sub_version > sub.sub_version:
                    newer.append(cid)
            if differ:
                out.append(Evidence(f"{b} filters {t} with '{sub.expression}' (subVersion "
                                    f"{sub.sub_version}), not what {', '.join(differ)} "
                                    "subscribed", ctx.src("GET_CONSUMER_CONNECTION_LIST", b), ts))
            if newer:
                out.append(Evidence(f"{b}'s subscription of {t} is older than that of "
                                    f"{', '.join(newer)}: their pulls from {b} get "
                                    "SUBSCRIPTION_NOT_LATEST ('the consumer's subscription not "
                                    "latest') until their heartbeat reaches it",
                                    ctx.src("GET_CONSUMER_CONNECTION_LIST", b), ts))
    return out


@rule("unowned-queues")
def unowned(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := _online_needed(ctx, code, ("broadcasting", "pop"), ": no queue owners")):
        return [], c
    if not ctx.all_answered:
        return [], Check(code, NOT_CHECKED, "not every client answered its running info")
    if ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read")
    want = set(ctx.subscribed)
    cand = [q for q in ctx.queues + ctx.retry_queues
            if (q.mq.topic in want or q.mq.topic.startswith(RETRY_PREFIX))
            and q.mq not in ctx.explained and _lag(q) > 0 and not ctx.owners.get(q.mq)
            and q.mq.broker_name not in ctx.disabled
            and q.mq.broker_name not in ctx.unreadable.get(q.mq.topic, {})]
    blocked: dict[str, list[MessageQueue]] = defaultdict(list)
    if ctx.kind == "orderly" and ctx.now.locks is not None:
        # an orderly queue's owner is what the lock classification of `locks show` says (one
        # classification for every view): a queue claimed or assigned but not held is named by
        # the locks check, not unowned
        states = {q.mq: q.state.value for q in ctx.now.locks.queues}
        for q in cand:
            st = states.get(q.mq)
            if st is not None and st != "unowned":
                blocked[st].append(q.mq)
        cand = [q for q in cand if states.get(q.mq, "unowned") == "unowned"]
    if not cand:
        held = (f"every lagging queue of {', '.join(sorted(want)) or '-'} has an owner")
        if blocked:
            return [], Check(code, OK, held + " in the lock classification; not held by it: "
                             + "; ".join(f"{len(ms)} {st} ({qlist(ms)})"
                                         for st, ms in sorted(blocked.items()))
                             + " (see locks)")
        return [], Check(code, OK, held + " (mqTable of the clients' running info)")
    ts = ctx.now.ts
    lag = sum(_lag(q) for q in cand)
    ctx.explained |= {q.mq for q in cand}
    return [Finding(
        code, ERROR, f"{len(cand)} queue(s) with lag {n_(lag)} have no owner: "
        + qlist(q.mq for q in cand),
        why="no client holds them in its mqTable: nobody pulls them and their messages wait "
            "(see the membership findings above for why the allocation leaves them out)",
        next=f"`mqctl allocate -g {ctx.group} -t {cand[0].mq.topic}` compares what each "
             f"client should own with what it owns; `mqctl consumers {ctx.group}`",
        evidence=tuple(Evidence(f"{q_(q.mq)}: lag {n_(q.lag)}, no client's mqTable holds it",
                                ctx.src("GET_CONSUME_STATS + GET_CONSUMER_RUNNING_INFO"), ts)
                       for q in cand[:LISTED]),
        values={"lag": lag, "queues": len(cand)}, queues=tuple(q.mq for q in cand),
        rocketmq="RebalanceImpl.updateProcessQueueTableInRebalance (ProcessQueueInfo)",
        shows=qfacts(x.UNOWNED, (q.mq for q in cand)),
        explains=_lag_facts(q.mq for q in cand))], \
        Check(code, FOUND, f"{len(cand)} queue(s)")


# ---------------------------------------------------------------- orderly


@rule("locks")
def locks(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.kind != "orderly":
        return [], Check(code, NOT_APPLICABLE, f"{ctx.kind} group: locks apply to orderly "
                                               "consumers")
    view = ctx.now.locks
    if view is None:
        return [], Check(code, NOT_CHECKED, "no lock view")
    lag = {q.mq: _lag(q) for q in ctx.queues}
    ts = ctx.now.ts
    out = []
    for state, fcode in (("hung", "lock-hung"), ("stale", "lock-stale"),
                         ("lock-failed", "lock-failed")):
        # a 4.x queue granted at its creation is marked locked at the next lock cycle: not
        # stuck (mqctl.locks.model.classify_queue says so in its reason)
        qs = [q for q in view.queues if q.state.value == state
              and "not yet marked locked" not in q.reason
              and (ctx.topic is None or q.mq.topic == ctx.topic)]
        if not qs:
            continue
        ctx.explained |= {q.mq for q in qs}
        total = sum(lag.get(q.mq, 0) for q in qs)
        sev = ERROR if total > 0 or state in ("stale", "hung") else WARNING
        title = (f"{len(qs)} orderly queue(s) blocked by a stale lock" if state == "stale" else
                 f"{len(qs)} orderly queue(s) blocked by the hung client(s) "
                 f"{', '.join(sorted({q.owner for q in qs if q.owner}))}"
                 if state == "hung" else
                 f"{len(qs)} orderly queue(s) not locked by their consumer")
        out.append(Finding(
            fcode, sev, f"{title} (lag {n_(total)}): {qlist(q.mq for q in qs)}",
            why="an orderly consumer consumes a queue only while the broker's lock is its own "
                "(ConsumeMessageOrderlyService; RebalanceLockManager: a 60 s lease from the "
                "last renewal): until it gets the lock the queue's messages wait",
            next=(qs[0].hint or f"`mqctl locks show {ctx.group}`")
            + (f"; `mqctl locks show {ctx.group}` shows every queue" if len(qs) > 1 else ""),
            evidence=tuple(Evidence(f"{q_(q.mq)}: {q.reason}; lag {n_(lag.get(q.mq))}",
                                    ctx.src("GET_CONSUMER_RUNNING_INFO (mqTable locked, "
                                            "lastLockTimestamp)") + (
                                        "; mqctl locks show's state file"
                                        if ctx.now.locks_remembered else ""), ts)
                           for q in qs[:LISTED]),
            values={"state": state, "lag": total,
                    "frees_at_ts": max((q.frees_at for q in qs if q.frees_at), default=None)},
            queues=tuple(q.mq for q in qs), clients=tuple(sorted({q.owner for q in qs
                                                                    if q.owner})),
            rocketmq="RebalanceLockManager, ProcessQueue (lock timing), "
                     "mqctl.locks classification",
            shows=qfacts(x.LOCK, (q.mq for q in qs)), explains=_lag_facts(q.mq for q in qs)))
    out += _redelivery(ctx, view)
    if not out:
        states = view.summary()
        return [], Check(code, OK, ", ".join(f"{k} {v}" for k, v in states.items() if v)
                         or "no queue")
    return out, Check(code, FOUND, ", ".join(f.code for f in out))


def _redelivery(ctx: Ctx, view: LockView) -> list[Finding]:
    """A hung orderly holder resumed after its queues had moved: RocketMQ delivers again,
    from its in-memory offset, what the other client consumed meanwhile (mqctl.locks
    Redelivery, from what ``locks show`` remembered of both)."""
    qs = [q for q in view.queues if q.redelivery is not None
          and (ctx.topic is None or q.mq.topic == ctx.topic)]
    if not qs:
        return []
    total = sum(q.redelivery.expected for q in qs if q.redelivery is not None)
    left = sum(q.redelivery.remaining for q in qs if q.redelivery is not None)
    who = sorted({q.redelivery.client_id for q in qs if q.redelivery is not None})
    return [Finding(
        "duplicates-expected", WARNING,
        f"{', '.join(who)} resumed after its orderly queue(s) had moved: about {n_(total)} "
        f"message(s) delivered twice ({n_(left)} still to come): {qlist(q.mq for q in qs)}",
        why="a frozen client keeps its ProcessQueues and in-memory offsets; when it resumes and "
            "still finds itself in the member list it keeps its queues, re-locks them once the "
            "client that took them over releases them, and pulls from where it stopped: what "
            "that client consumed meanwhile is delivered again, in order",
        next="make the listener idempotent (deduplicate by message key or offset); to avoid "
             "it, restart a hung consumer instead of resuming it (a new process reads the "
             "committed offsets)",
        evidence=tuple(Evidence(q.redelivery.text(q_(q.mq)),
                                ctx.src("GET_CONSUMER_RUNNING_INFO (mqTable commitOffset); "
                                        "mqctl locks show's state file"), ctx.now.ts)
                       for q in qs[:LISTED] if q.redelivery is not None),
        values={"messages": total, "remaining": left, "clients": who},
        queues=tuple(q.mq for q in qs), clients=tuple(who),
        rocketmq="RebalanceImpl.updateProcessQueueTableInRebalance, ProcessQueue, "
                 "RemoteBrokerOffsetStore (in-memory offsets)")]


# ---------------------------------------------------------------- the consumer


def _pool(info: ConsumerRunningInfo) -> float | None:
    v = _num(info.properties.get("PROP_THREADPOOL_CORE_SIZE"))
    return v if v is not None else _num(info.properties.get("consumeThreadMin"))


@rule("consume-blocked")
def blocked(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := _online_needed(ctx, code, ("pop", "orderly"), " (orderly queues: see locks)")):
        return [], c
    now = ctx.now.ts
    hits: dict[str, list[tuple[MessageQueue, ProcessQueueInfo]]] = defaultdict(list)
    for cid, info in ctx.infos.items():
        if info.orderly or info.consume_type not in (None, "CONSUME_PASSIVELY"):
            continue
        for mq, pq in info.mq_table.items():
            if (not pq.dropped and pq.cached_msg_count > 0 and pq.last_consume_timestamp > 0
                    and now - pq.last_consume_timestamp > BLOCKED_MS
                    and (ctx.topic is None or mq.topic in (ctx.topic,
                                                           RETRY_PREFIX + ctx.group))):
                hits[cid].append((mq, pq))
    if not hits:
        return [], Check(code, NOT_CHECKED if not ctx.all_answered else OK,
                         "every queue with cached messages consumed one in the last "
                         f"{BLOCKED_MS // 1000} s")
    out = []
    for cid, qs in sorted(hits.items()):
        ctx.explained |= {mq for mq, _ in qs}
        oldest = min(pq.last_consume_timestamp for _, pq in qs)
        out.append(Finding(
            code, ERROR, f"{cid}: {len(qs)} queue(s) hold cached messages but consumed none for "
            f"{format_duration(now - oldest)}: {qlist(mq for mq, _ in qs)}",
            why="messages are pulled into the client's cache but none is consumed: the listener "
                "is blocked (a call that never returns, a lock, an exhausted pool); mqadmin "
                "consumerStatus reports it as 'can't consume for a while, maybe blocked'",
            next=f"a thread dump of {cid} (jstack, or `mqadmin consumerStatus -g {ctx.group} -i "
                 f"{cid} -s`)",
            evidence=tuple(Evidence(f"{q_(mq)}: cachedMsgCount {pq.cached_msg_count}, "
                                    "lastConsumeTimestamp "
                                    f"{format_duration(now - pq.last_consume_timestamp)} ago",
                                    ctx.src("GET_CONSUMER_RUNNING_INFO", cid), now)
                           for mq, pq in sorted(qs)[:LISTED]),
            values={"client": cid, "queues": len(qs), "idle_ms": now - oldest},
            clients=(cid,), queues=tuple(mq for mq, _ in qs),
            rocketmq="ConsumerRunningInfo.analyzeProcessQueue, ProcessQueue.lastConsumeTimestamp",
            # a listener that consumes nothing: its cache fills (flow control), its threads
            # wait, and the commit stays at the oldest message it holds
            shows=frozenset({(x.BLOCKED, cid)}),
            explains=_lag_facts(mq for mq, _ in qs) | frozenset(
                {(x.FLOW, cid), (x.SPAN, cid), (x.SATURATED, cid)})
            | qfacts(x.COMMIT, (mq for mq, _ in qs)) | qfacts(
                x.SUSPECT, (mq for mq, _ in qs), "offset-not-committed")))
    return out, Check(code, FOUND, ", ".join(sorted(hits)))


@rule("flow-control")
def flow_control(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := _online_needed(ctx, code, ("pop",), ": see pop-flow-control")):
        return [], c
    ts = ctx.now.ts
    out = []
    checked = []
    for cid, info in sorted(ctx.infos.items()):
        count_thr, count_src = _prop(info, "pullThresholdForQueue", PULL_THRESHOLD_FOR_QUEUE)
        size_thr, _ = _prop(info, "pullThresholdSizeForQueue", PULL_THRESHOLD_SIZE_MIB)
        span_thr, _ = _prop(info, "consumeConcurrentlyMaxSpan", CONSUME_CONCURRENTLY_MAX_SPAN)
        over: list[tuple[MessageQueue, str]] = []
        for mq, pq in sorted(info.mq_table.items()):
            if pq.dropped or (ctx.topic is not None and mq.topic not in (
                    ctx.topic, RETRY_PREFIX + ctx.group)):
                continue
            why = []
            if count_thr is not None and pq.cached_msg_count > count_thr:
                why.append(f"cachedMsgCount {pq.cached_msg_count} > pullThresholdForQueue "
                           f"{count_thr:g}")
            if (size_thr is not None and pq.cached_msg_size_mib is not None
                    and pq.cached_msg_size_mib > size_thr):
                why.append(f"cachedMsgSizeInMiB {pq.cached_msg_size_mib} > "
                           f"pullThresholdSizeForQueue {size_thr:g}")
            span = pq.cached_msg_max_offset - pq.cached_msg_min_offset
            if (not info.orderly and span_thr is not None and pq.cached_msg_count > 0
                    and span > span_thr):
                why.append(f"span {span} (cachedMsgMaxOffset {pq.cached_msg_max_offset} - "
                           f"cachedMsgMinOffset {pq.cached_msg_min_offset}) > "
                           f"consumeConcurrentlyMaxSpan {span_thr:g}")
            if why:
                over.append((mq, "; ".join(why)))
        checked.append(f"{cid}: pullThresholdForQueue {n_(count_thr)} ({count_src})")
        if not over:
            continue
        status = {t: s for t, s in info.status_table.items() if isinstance(s, dict)}
        rt = [f"{t}: consumeRT {n_(_num(s.get('consumeRT')))} ms, consumeOKTPS "
              f"{tps(_num(s.get('consumeOKTPS')))}" for t, s in sorted(status.items())
              if (_num(s.get("consumeOKTPS")) or 0) > 0]
        spans = [mq for mq, w in over if w.startswith("span") or "; span" in w]
        lag = ctx.lag_of(mq for mq, _ in over)
        ev = [Evidence(f"{q_(mq)}: {w}", ctx.src("GET_CONSUMER_RUNNING_INFO", cid), ts)
              for mq, w in over[:LISTED]]
        if rt:
            ev.append(Evidence("; ".join(rt), ctx.src("GET_CONSUMER_RUNNING_INFO statusTable",
                                                      cid), ts))
        first_span = next((x for x in over if x[0] in spans), None)
        nxt = ("make the listener faster or add consumers (up to the number of queues); if "
               "the consume threads are saturated (threads-saturated) raise consumeThreadMin; "
               "a larger pullThresholdForQueue only caches more, it does not consume faster")
        if first_span is not None:
            pq0 = info.mq_table[first_span[0]]
            nxt = (f"the oldest cached message does not finish: `mqctl message show -t "
                   f"{first_span[0].topic} -b {first_span[0].broker_name} -q "
                   f"{first_span[0].queue_id} --offset {pq0.cached_msg_min_offset}` and a thread "
                   f"dump of {cid}; " + nxt)
        out.append(Finding(
            code, ERROR, f"{cid} is at its flow-control threshold on {len(over)} queue(s): "
            + qlist(mq for mq, _ in over) + (f" (lag {n_(lag)})" if lag else ""),
            why="DefaultMQPushConsumerImpl.pullMessage pulls a queue again only when its "
                "ProcessQueue holds at most pullThresholdForQueue messages and "
                "pullThresholdSizeForQueue MiB (a concurrent consumer: offsets spanning at most "
                "consumeConcurrentlyMaxSpan); above that it waits: the client cannot process "
                "what it already has, so the consumer, not the broker, limits the rate",
            next=nxt, evidence=tuple(ev),
            values={"client": cid, "queues": len(over), "lag": lag,
                    "pullThresholdForQueue": count_thr, "pullThresholdSizeForQueue": size_thr,
                    "consumeConcurrentlyMaxSpan": span_thr,
                    "span_queues": len(spans)},
            clients=(cid,), queues=tuple(mq for mq, _ in over),
            rocketmq="DefaultMQPushConsumer.pullThresholdForQueue / pullThresholdSizeForQueue / "
                     "consumeConcurrentlyMaxSpan, DefaultMQPushConsumerImpl.pullMessage, "
                     "ProcessQueueInfo",
            # over its count or size threshold (what slow consumption explains), or over the
            # span only (what one message that does not finish explains)
            shows=frozenset(qfact(x.FLOW, mq, cid) for mq, w in over if not w.startswith("span"))
            | frozenset(qfact(x.SPAN, mq, cid) for mq in spans),
            explains=qfacts(x.BEHIND, (mq for mq, _ in over))))
    if not out:
        return [], Check(code, NOT_CHECKED if not ctx.all_answered else OK,
                         "no queue above its threshold; " + "; ".join(checked[:3])
                         + (" ..." if len(checked) > 3 else ""))
    return out, Check(code, FOUND, ", ".join(f.clients[0] for f in out))


@rule("threads-saturated")
def saturated(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := _online_needed(ctx, code)) is not None:
        return [], c
    ts = ctx.now.ts
    out = []
    seen = []
    for cid, info in sorted(ctx.infos.items()):
        pool = _pool(info)
        batch = _num(info.properties.get("consumeMessageBatchMaxSize")) or 1.0
        busy = 0.0
        parts = []
        for t, s in sorted(info.status_table.items()):
            if not isinstance(s, dict):
                continue
            rate = (_num(s.get("consumeOKTPS")) or 0.0) + (_num(s.get("consumeFailedTPS")) or 0.0)
            rt = _num(s.get("consumeRT")) or 0.0
            if rate > 0 and rt > 0:
                b = rate / batch * rt / 1000
                busy += b
                parts.append(f"{t}: ({tps(rate)} / batch {batch:g}) x consumeRT {rt:.1f} ms = "
                             f"{b:.2f}")
        if pool is None or pool <= 0:
            continue
        cap = pool
        if info.orderly:
            # ConsumeMessageOrderlyService consumes a queue on one thread at a time: at most
            # as many threads as it holds queues (cachedMsgCount cannot tell which queues have
            # messages: ProcessQueue.takeMessages moves the ones being consumed out of it)
            held = sum(1 for pq in info.mq_table.values() if not pq.dropped)
            cap = min(pool, held) if held else pool
        seen.append(f"{cid} {busy:.1f}/{cap:g}")
        if busy < SATURATED * cap or busy <= 0:
            continue
        # saturated but keeping up (none of its queues behind): no headroom, not a problem
        mine = [q for q in ctx.queues if any(c == cid for c, _ in ctx.owners.get(q.mq, []))]
        keeping_up = (ctx.progress is not None and bool(mine)
                      and not any(_behind(q) for q in mine))
        # all its threads busy: its cache fills (flow control by count or size) and its
        # queues fall behind; when it is slower than the group's other clients, it is why the
        # lag concentrates on its queues (else the concentration explains its saturation)
        behind = [q.mq for q in mine if _behind(q)]
        explains = frozenset({(x.FLOW, cid)}) | qfacts(x.BEHIND, behind)
        if ctx.slower(cid):
            explains |= qfacts(x.CONCENTRATED, behind)
        out.append(Finding(
            code, INFO if keeping_up else WARNING,
            f"{cid}: its consume threads are saturated: about {busy:.1f} of "
            f"{cap:g} busy ({min(100.0, 100 * busy / cap):.0f}%)",
            why=("ConsumeMessageConcurrentlyService runs consumeThreadMin threads (its pool's "
                 "queue is unbounded, so consumeThreadMax never adds one)" if not info.orderly
                 else "ConsumeMessageOrderlyService consumes each queue on one thread at a time")
            + ": every thread is busy (messages per second x consumeRT = busy threads), so the "
              "client consumes no faster however many messages wait",
            next="make the listener faster (lower consumeRT), or raise consumeThreadMin "
                 "(consumeThreadMax alone changes nothing), or add consumers up to the number "
                 "of queues",
            evidence=(Evidence("; ".join(parts) + f"; pool {pool:g} (PROP_THREADPOOL_CORE_SIZE)",
                               ctx.src("GET_CONSUMER_RUNNING_INFO statusTable", cid), ts),
                      ) + (ctx.speed_evidence([cid]) if ctx.slower(cid) else ()),
            values={"client": cid, "busy_threads": round(busy, 2), "pool": pool,
                    "capacity": cap, "batch": batch},
            clients=(cid,),
            rocketmq="ConsumeStatus.consumeRT / consumeOKTPS (ConsumerStatsManager), "
                     "ConsumerRunningInfo.PROP_THREADPOOL_CORE_SIZE, "
                     "ConsumeMessageConcurrentlyService",
            shows=frozenset({(x.SATURATED, cid)}), explains=explains))
    return _outcome(code, out, "busy/pool: " + (", ".join(seen[:4]) or "no consumption "
                                                 "reported"),
                    ", ".join(f.clients[0] for f in out),
                    status=NOT_CHECKED if not ctx.all_answered else OK)


# ---------------------------------------------------------------- failures


@rule("consume-failing")
def failing(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := _online_needed(ctx, code)) is not None:
        return [], c
    ts = ctx.now.ts
    rows = []
    for cid, info in sorted(ctx.infos.items()):
        for t, s in sorted(info.status_table.items()):
            if not isinstance(s, dict) or (ctx.topic is not None and t not in (
                    ctx.topic, RETRY_PREFIX + ctx.group)):
                continue
            f_tps = _num(s.get("consumeFailedTPS")) or 0.0
            f_hour = _num(s.get("consumeFailedMsgs")) or 0.0
            if f_tps > 0 or f_hour > 0:
                rows.append((cid, t, f_tps, f_hour, _num(s.get("consumeOKTPS")) or 0.0))
    if not rows:
        return [], Check(code, NOT_CHECKED if not ctx.all_answered else OK,
                         "consumeFailedTPS 0 and consumeFailedMsgs 0 on every client")
    now_failing = any(r[2] > 0 for r in rows)
    total = sum(r[2] for r in rows)
    infos = [ctx.infos[r[0]] for r in rows]
    mrt = {_num(i.properties.get("maxReconsumeTimes")) for i in infos}
    mrt_text = ", ".join(str(int(v)) if v is not None and v >= 0 else
                         f"{MAX_RECONSUME_TIMES} (-1: the default)" for v in sorted(
                             mrt, key=lambda x: -2 if x is None else x))
    return [Finding(
        code, ERROR if now_failing else WARNING,
        (f"consumption is failing: {tps(total)} failed" if now_failing else
         "consumption failed in the last hour")
        + f" ({len({r[0] for r in rows})} client(s))",
        why=(f"a popped message that fails is not acked: after popInvisibleTime it is revived "
             f"into the pop retry topic ({RETRY_PREFIX}{ctx.group}_<topic>) and delivered "
             f"again, until maxReconsumeTimes ({mrt_text}); then it goes to %DLQ%{ctx.group}"
             if ctx.kind == "pop" else
             "a message whose consumption fails (RECONSUME_LATER or an exception) is sent back "
             f"to {RETRY_PREFIX}{ctx.group} and redelivered after a growing delay (delay level "
             "3 + reconsumeTimes: 10 s, 30 s, 1 m, ...); after maxReconsumeTimes "
             f"({mrt_text}) it goes to %DLQ%{ctx.group} and is not delivered again"),
        next="the client's log shows why the listener fails; the retry and dead-letter "
             f"backlog: `mqctl group progress {ctx.group}`",
        evidence=tuple(Evidence(f"{cid} {t}: consumeFailedTPS {f:.2f}/s, consumeFailedMsgs "
                                f"{n_(h)} in the last hour, consumeOKTPS {ok:.2f}/s",
                                ctx.src("GET_CONSUMER_RUNNING_INFO statusTable", cid), ts)
                       for cid, t, f, h, ok in rows[:LISTED]),
        values={"failed_tps": round(total, 3),
                "failed_last_hour": sum(r[3] for r in rows)},
        clients=tuple(sorted({r[0] for r in rows})),
        rocketmq="ConsumeStatus.consumeFailedTPS / consumeFailedMsgs (ConsumerStatsManager), "
                 "ConsumeMessageConcurrentlyService.processConsumeResult, "
                 "AbstractSendMessageProcessor.consumerSendMsgBack",
        # what fails is sent back (the retry topic, a pop retry topic) and, after
        # maxReconsumeTimes, to the DLQ
        shows=frozenset((x.FAILING, r[0]) for r in rows),
        explains=frozenset({(x.RETRY,), (x.DLQ,)}))], \
        Check(code, FOUND, f"{tps(total)} failed")


def _growth(ctx: Ctx, f: Callable[[Reading], int | None]) -> tuple[int | None, float | None]:
    """(change, per second) of a number between the two reads of --sample."""
    if ctx.first is None:
        return None, None
    a, b = f(ctx.first), f(ctx.now)
    if a is None or b is None:
        return None, None
    dt = max(1, ctx.now.ts - ctx.first.ts) / 1000
    return b - a, (b - a) / dt


@rule("retry-backlog")
def retry_backlog(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read")
    rq = ctx.retry_queues
    if not rq:
        return [], Check(code, OK if ctx.kind != "pop" else NOT_APPLICABLE,
                         f"no {RETRY_PREFIX}{ctx.group} topic: nothing waits for redelivery"
                         if ctx.progress.retry_topic is False else
                         f"no {RETRY_PREFIX}{ctx.group} queue was read: no retry backlog seen")
    backlog = sum(_lag(q) for q in rq)

    def sent(r: Reading) -> int | None:
        if r.progress is None:
            return None
        return sum(q.broker_offset for q in r.progress.queues
                   if q.mq.topic == RETRY_PREFIX + ctx.group)

    grew, rate = _growth(ctx, sent)
    if backlog <= 0 and not grew:
        return [], Check(code, OK, f"{RETRY_PREFIX}{ctx.group}: backlog 0"
                         + (", nothing sent back during the sample" if grew == 0 else ""))
    ts = ctx.now.ts
    ev = [Evidence(f"{RETRY_PREFIX}{ctx.group}: backlog {n_(backlog)} (max offset - committed "
                   f"offset over {len(rq)} queue(s))", ctx.src("GET_CONSUME_STATS"), ts)]
    if grew is not None:
        ev.append(Evidence(f"{n_(grew)} message(s) sent back for retry during the "
                           f"{format_duration(ctx.now.ts - (ctx.first.ts if ctx.first else 0))} "
                           f"sample ({tps(rate)})", ctx.src("GET_CONSUME_STATS, two reads"), ts))
    return [Finding(
        code, ERROR if grew else WARNING,
        f"{n_(backlog)} message(s) wait for redelivery in {RETRY_PREFIX}{ctx.group}"
        + (f"; {tps(rate)} sent back during the sample" if grew else ""),
        why="only messages whose consumption failed are sent to the retry topic: a backlog "
            "there is consumption that failed and will be tried again"
            + ("; it grows, so consumption keeps failing" if grew else ""),
        next="see consume-failing for the clients that fail; the failed messages: `mqctl "
             f"group progress {ctx.group}` (retry section)",
        evidence=tuple(ev), values={"backlog": backlog, "sent_back": grew,
                                    "sent_back_tps": rate},
        topics=(RETRY_PREFIX + ctx.group,), queues=tuple(q.mq for q in rq),
        rocketmq="MixAll.getRetryTopic, AbstractSendMessageProcessor.consumerSendMsgBack",
        shows=frozenset({(x.RETRY, RETRY_PREFIX + ctx.group)}))], \
        Check(code, FOUND, f"backlog {n_(backlog)}")


@rule("dlq")
def dlq(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    p = ctx.progress
    if p is None or p.dlq is None:
        return [], Check(code, NOT_CHECKED, "the %DLQ% topic was not read")
    msgs = sum(d.messages for d in p.dlq)
    if msgs == 0:
        return [], Check(code, OK, f"%DLQ%{ctx.group}: " + (
            "no such topic (no message ever failed maxReconsumeTimes times)" if not p.dlq
            else "empty"))

    def stored(r: Reading) -> int | None:
        if r.progress is None or r.progress.dlq is None:
            return None
        return sum(d.max_offset for d in r.progress.dlq)

    grew, rate = _growth(ctx, stored)
    ts = ctx.now.ts
    last = max(d.last_update_timestamp for d in p.dlq)
    ev = [Evidence(f"{d.mq.topic} {d.mq.short}: {n_(d.messages)} message(s) (min offset "
                   f"{d.min_offset}, max offset {d.max_offset})",
                   ctx.src("GET_TOPIC_STATS_INFO", d.mq.broker_name), ts) for d in p.dlq]
    if last:
        ev.append(Evidence(f"the last dead letter was stored {format_duration(ts - last)} ago",
                           ctx.src("GET_TOPIC_STATS_INFO lastUpdateTimestamp"), ts))
    if grew is not None:
        ev.append(Evidence(f"{n_(grew)} new dead letter(s) during the sample",
                           ctx.src("GET_TOPIC_STATS_INFO, two reads"), ts))
    # a dead letter stored within the last hour (the window of the clients'
    # consumeFailedMsgs) is a current problem; older ones are reported, not alarmed on
    recent = bool(last) and ts - last <= RECENT_MS
    return [Finding(
        code, ERROR if grew else WARNING if recent or not last else INFO,
        f"{n_(msgs)} message(s) in %DLQ%{ctx.group}"
        + (f", {tps(rate)} arriving" if grew else
           f" (the last {format_duration(ts - last)} ago)" if last else ""),
        why="a message that failed maxReconsumeTimes times goes to the dead-letter topic and "
            "is not delivered to the group again: it is not consumed",
        next=f"read one: `mqctl message show -t %DLQ%{ctx.group} -b {p.dlq[0].mq.broker_name} "
             f"-q {p.dlq[0].mq.queue_id} --offset "
             f"{max(p.dlq[0].min_offset, p.dlq[0].max_offset - 1)}`; fix the cause "
             "(consume-failing), then send them again",
        evidence=tuple(ev), values={"messages": msgs, "new": grew, "last_ts": last or None},
        topics=(f"%DLQ%{ctx.group}",), queues=tuple(d.mq for d in p.dlq),
        rocketmq="MixAll.getDLQTopic, AbstractSendMessageProcessor (DLQ_NUMS_PER_GROUP)",
        shows=frozenset({(x.DLQ, f"%DLQ%{ctx.group}")}))], \
        Check(code, FOUND, f"{n_(msgs)} message(s)")


# ---------------------------------------------------------------- commits and trend


@dataclass(frozen=True, slots=True)
class _Stuck:
    q: QueueProgress  # the second read
    client: str
    before: ProcessQueueInfo
    after: ProcessQueueInfo


@rule("offset-not-committed")
def not_committed(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.first is None:
        return _commit_suspects(ctx, code)
    if (c := _online_needed(ctx, code, ("pop", "broadcasting"))):
        return [], c
    if ctx.first.progress is None or ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read twice")
    sample = ctx.now.ts - ctx.first.ts
    before = {q.mq: q for q in ctx.queues_of(ctx.first)}
    owners0 = Ctx.owners_of(ctx.first)
    hits = []
    short = []
    for q in ctx.queues:
        q0 = before.get(q.mq)
        o1, o0 = ctx.owners.get(q.mq, []), owners0.get(q.mq, [])
        if q0 is None or len(o1) != 1 or len(o0) != 1 or o1[0][0] != o0[0][0]:
            continue
        cid, pq1 = o1[0]
        pq0 = o0[0][1]
        info = ctx.infos.get(cid)
        interval = _num(info.properties.get("persistConsumerOffsetInterval")) if info else None
        interval = interval or PERSIST_INTERVAL_MS
        if sample <= interval + 1000:
            short.append(q.mq)
            continue
        if (pq1.last_consume_timestamp > pq0.last_consume_timestamp
                and q.consumer_offset == q0.consumer_offset and _lag(q) > 0):
            hits.append(_Stuck(q, cid, pq0, pq1))
    if not hits:
        if short:
            return [], Check(code, NOT_CHECKED, f"the sample ({format_duration(sample)}) is not "
                                                "longer than the clients' persist interval")
        return [], Check(code, OK, "every queue consumed during the sample had its committed "
                                   "offset move")
    ts = ctx.now.ts
    out = []
    ctx.explained |= {h.q.mq for h in hits}
    h0 = hits[0]
    q, cid, pq1 = h0.q, h0.client, h0.after
    store_moved = [h for h in hits if h.after.commit_offset > h.q.consumer_offset
                   and h.after.commit_offset != h.before.commit_offset]
    ev = []
    for h in hits[:LISTED]:
        moved = h.after.last_consume_timestamp - h.before.last_consume_timestamp
        ev.append(Evidence(
            f"{q_(h.q.mq)}: committed offset {h.q.consumer_offset} at both reads "
            f"{format_duration(sample)} apart; {h.client} consumed it (lastConsumeTimestamp "
            f"moved {format_duration(moved)}); oldest cached offset "
            f"{h.after.cached_msg_min_offset}, client offset store {h.after.commit_offset}; "
            f"lag {n_(h.q.lag)}",
            ctx.src("GET_CONSUME_STATS + GET_CONSUMER_RUNNING_INFO, two reads"), ts))
    if store_moved:
        why = ("the client's offset store moved but the broker's committed offset did not: "
               "its commits (UPDATE_CONSUMER_OFFSET, the pulls' commitOffset) are not taken, "
               "e.g. a broker that refuses them after a server-side reset ('Update consumer "
               "offset is rejected because of previous offset-reset')")
        nxt = ("the broker's log for refused offset updates; the client's log for "
               "updateConsumeOffsetToBroker errors")
    else:
        why = ("the client consumes the queue but the offset it commits stays: a concurrent "
               "consumer commits the smallest offset it still holds "
               "(ProcessQueue.removeMessage), so one message that does not finish holds the "
               "committed offset; a restart or rebalance consumes everything after it again, "
               "and once its cache spans more than consumeConcurrentlyMaxSpan offsets each "
               "pull waits for the batch before it (span flow control)")
        nxt = (f"the message that holds it: `mqctl message show -t {q.mq.topic} -b "
               f"{q.mq.broker_name} -q {q.mq.queue_id} --offset {pq1.cached_msg_min_offset}`; a "
               f"thread dump of {cid} shows where its listener waits (consumeTimeout, 15 min, "
               "sends a message back once it has waited that long)")
    out.append(Finding(
        code, ERROR, f"committed offsets do not move on {len(hits)} queue(s) while their "
        f"consumers consume: {qlist(h.q.mq for h in hits)}",
        why=why, next=nxt, evidence=tuple(ev),
        values={"queues": len(hits), "sample_ms": sample,
                "offsets": {f"{h.q.mq.topic} {h.q.mq.short}": h.q.consumer_offset
                            for h in hits}},
        clients=tuple(sorted({h.client for h in hits})), queues=tuple(h.q.mq for h in hits),
        rocketmq="ProcessQueue.removeMessage, RemoteBrokerOffsetStore "
                 "(persistConsumerOffsetInterval), ConsumerOffsetManager",
        shows=qfacts(x.COMMIT, (h.q.mq for h in hits)),
        explains=_commit_explains((h.q.mq, h.client) for h in hits)))
    return out, Check(code, FOUND, f"{len(hits)} queue(s)")


def second_read_command(ctx: Ctx, seconds: int) -> str:
    """The command that makes the second read: this diagnosis again with --sample."""
    return (f"mqctl diagnose {shlex.quote(ctx.group)}"
            + (f" -t {shlex.quote(ctx.topic)}" if ctx.topic is not None else "")
            + f" --sample {seconds}")


def _commit_suspects(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    """One read: the queues whose evidence is what a held commit looks like, so that only a
    second read can say whether it is one. A concurrent consumer commits the smallest offset
    it still holds (ProcessQueue.removeMessage; a consumed message leaves its cache): a queue
    behind (time lag above CAUGHT_UP_MS) whose one owner consumed it within CAUGHT_UP_MS,
    holds fewer messages than the queue's lag, below its count and size flow-control
    thresholds (so its own speed does not hold the lag), and whose committed offset is the
    oldest message the owner holds (cachedMsgMinOffset): the rest of the lag was consumed
    past the committed offset, or was not pulled yet. One read cannot tell which, nor whether
    the committed offset moves."""
    plain = Check(code, NEEDS_SAMPLE, "needs two reads: --sample SECONDS")
    if (ctx.online is not True or ctx.kind in ("pop", "broadcasting", "orderly")
            or ctx.progress is None):
        return [], plain
    ts = ctx.now.ts
    hits = []
    interval = PERSIST_INTERVAL_MS
    for q in ctx.queues:
        owners = ctx.owners.get(q.mq, [])
        if len(owners) != 1 or not _behind(q) or _lag(q) <= 0 or q.consumer_offset is None:
            continue
        cid, pq = owners[0]
        info = ctx.infos[cid]
        if info.orderly or pq.cached_msg_count <= 0 or pq.last_consume_timestamp <= 0:
            continue
        count_thr, _ = _prop(info, "pullThresholdForQueue", PULL_THRESHOLD_FOR_QUEUE)
        size_thr, _ = _prop(info, "pullThresholdSizeForQueue", PULL_THRESHOLD_SIZE_MIB)
        if ((count_thr is not None and pq.cached_msg_count > count_thr)
                or (size_thr is not None and pq.cached_msg_size_mib is not None
                    and pq.cached_msg_size_mib > size_thr)):
            continue  # at its flow-control threshold: the consumer's speed holds the lag
        after = _lag(q) - pq.cached_msg_count  # past the committed offset and not held
        if (ts - pq.last_consume_timestamp <= CAUGHT_UP_MS
                and pq.cached_msg_min_offset == q.consumer_offset and after > 0):
            hits.append((q, cid, pq, after))
            interval = max(interval, int(_num(info.properties.get(
                "persistConsumerOffsetInterval")) or PERSIST_INTERVAL_MS))
    if not hits:
        return [], plain
    # the sample must be longer than the clients' persist interval (see the check below)
    seconds = max(10, 2 * -(-interval // 1000))
    cmd = second_read_command(ctx, seconds)
    clients = sorted({cid for _, cid, _, _ in hits})
    tl = max(q.delay_ms or 0 for q, _, _, _ in hits)
    ev = tuple(Evidence(
        f"{q_(q.mq)}: committed offset {q.consumer_offset}, the oldest message {cid} holds "
        f"(cachedMsgMinOffset); it holds {n_(pq.cached_msg_count)} of the {n_(q.lag)} "
        f"message(s) from there to the queue's end: the other {n_(after)} were consumed past "
        f"the committed offset or not pulled yet; it consumed the queue "
        f"{format_duration(ts - pq.last_consume_timestamp) or '0ms'} ago; time lag "
        f"{format_duration(q.delay_ms)}",
        ctx.src("GET_CONSUME_STATS + QUERY_CONSUME_TIME_SPAN + GET_CONSUMER_RUNNING_INFO", cid),
        ts) for q, cid, pq, after in hits[:LISTED])
    mqs = [q.mq for q, _, _, _ in hits]
    return [Finding(
        SECOND_READ, WARNING,
        f"stuck commit? {len(hits)} queue(s) behind (time lag up to {format_duration(tl)}) "
        f"while their consumer consumes past the committed offset: {qlist(mqs)}; `{cmd}` "
        "tells",
        why="a concurrent consumer commits the smallest offset it still holds "
            "(ProcessQueue.removeMessage), so one message that does not finish holds the "
            "commit while the ones after it are consumed, and the lag and the time lag, "
            "measured from the committed offset, grow; one read cannot tell that from "
            "messages not pulled yet, nor whether the committed offset moves: two reads can "
            "(offset-not-committed)",
        next=f"`{cmd}`: two reads {seconds} s apart say whether the committed offsets move "
             "(longer than the clients' persistConsumerOffsetInterval)",
        evidence=ev,
        values={"needs": "offset-not-committed", "command": cmd, "sample_s": seconds,
                "queues": len(hits), "max_time_lag_ms": tl},
        clients=tuple(clients), queues=tuple(mqs),
        rocketmq="ProcessQueue.removeMessage (cachedMsgMinOffset), RemoteBrokerOffsetStore",
        shows=qfacts(x.SUSPECT, mqs, "offset-not-committed"),
        explains=_commit_explains((q.mq, cid) for q, cid, _, _ in hits))], Check(
            code, NEEDS_SAMPLE, f"suspected on {len(hits)} queue(s) ({SECOND_READ}): `{cmd}`")


# ---------------------------------------------------------------- brokers


def _broker_num(ctx: Ctx, broker: str, key: str, default: float) -> tuple[float, str]:
    """A threshold from the broker's config (GET_BROKER_CONFIG), else RocketMQ's default."""
    src = ctx.now.broker_config.get(broker) or {}
    v = _num(src.get(key))
    if v is not None:
        return v, f"{key} {n_(v)} (GET_BROKER_CONFIG)"
    return default, f"{key} {n_(default)} (RocketMQ's default; not in the broker's config)"


@rule("broker")
def brokers(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    rt = ctx.now.runtime
    if not rt:
        return [], Check(code, NOT_CHECKED if ctx.now.routes else NOT_APPLICABLE,
                         "no broker runtime info was read")
    ts = ctx.now.ts
    out = []
    okays = []
    for b, table in sorted(rt.items()):
        head = _num(table.get("pullThreadPoolQueueHeadWaitTimeMills"))
        size = _num(table.get("pullThreadPoolQueueSize"))
        capn = _num(table.get("pullThreadPoolQueueCapacity"))
        wait, wait_src = _broker_num(ctx, b, "waitTimeMillsInPullQueue", WAIT_PULL_QUEUE_MS)
        busy = []
        if head is not None and head > wait:
            busy.append(f"pullThreadPoolQueueHeadWaitTimeMills {head:g} > {wait_src}")
        if size is not None and capn is not None and capn > 0 and size >= capn:
            busy.append(f"pullThreadPoolQueueSize {size:g} >= pullThreadPoolQueueCapacity "
                        f"{capn:g}")
        if busy:
            out.append(Finding(
                "broker-pull-busy", ERROR, f"{b} is too busy to serve pulls: "
                + "; ".join(busy),
                why="BrokerFastFailure answers pull requests that waited in the pull thread "
                    "pool's queue longer than waitTimeMillsInPullQueue with SYSTEM_BUSY "
                    "('[TIMEOUT_CLEAN_QUEUE]broker busy') and a full queue rejects them: "
                    f"consumers of {b} get nothing for a while and pull again later",
                next=f"the broker: its pull threads (pullMessageThreadPoolNums), disk and page "
                     f"cache; `mqadmin brokerStatus -b {ctx.addr(b)}`",
                evidence=(Evidence("; ".join(busy), ctx.src("GET_BROKER_RUNTIME_INFO", b), ts),),
                values={"broker": b, "pullThreadPoolQueueHeadWaitTimeMills": head,
                        "pullThreadPoolQueueSize": size, "waitTimeMillsInPullQueue": wait},
                brokers=(b,), rocketmq="BrokerFastFailure, BrokerConfig.waitTimeMillsInPullQueue, "
                                       "AdminBrokerProcessor.prepareRuntimeInfo",
                # pulls answered late or SYSTEM_BUSY: the queues of this broker fall behind
                shows=frozenset({(x.BROKER, "pull-busy", b)}),
                explains=_lag_facts(q.mq for q in ctx.queues if q.mq.broker_name == b)))
        lock = _num(table.get("pageCacheLockTimeMills"))
        busy_ms, busy_src = _broker_num(ctx, b, "osPageCacheBusyTimeOutMills",
                                        OS_PAGE_CACHE_BUSY_MS)
        if lock is not None and lock > busy_ms:
            out.append(Finding(
                "broker-page-cache-busy", WARNING, f"{b}'s page cache is busy: "
                f"pageCacheLockTimeMills {lock:g} > {busy_src}",
                why="the commit log's write lock is held longer than osPageCacheBusyTimeOutMills: "
                    "the broker refuses sends ('[PC_SYNCHRONIZED]broker busy' / "
                    "'[PCBUSY_CLEAN_QUEUE]'), so producers fail or go elsewhere; its disk is "
                    "overloaded, which also slows the pulls it reads from disk",
                next=f"the broker's disk (iostat) and memory; `mqadmin brokerStatus -b "
                     f"{ctx.addr(b)}`",
                evidence=(Evidence(f"pageCacheLockTimeMills {lock:g}; {busy_src}",
                                   ctx.src("GET_BROKER_RUNTIME_INFO", b), ts),),
                values={"broker": b, "pageCacheLockTimeMills": lock,
                        "osPageCacheBusyTimeOutMills": busy_ms},
                brokers=(b,), rocketmq="DefaultMessageStore.isOSPageCacheBusy, "
                                       "MessageStoreConfig.osPageCacheBusyTimeOutMills",
                shows=frozenset({(x.BROKER, "page-cache-busy", b)})))
        slave = ctx.now.slave_runtime.get(b)
        m_off = _num(table.get("commitLogMaxOffset"))
        s_off = _num((slave or {}).get("commitLogMaxOffset"))
        if slave is not None and m_off is not None and s_off is not None:
            cfg = ctx.now.broker_config.get(b) or {}
            key = "haMaxGapNotInSync" if "haMaxGapNotInSync" in cfg else "haSlaveFallbehindMax"
            gap, gap_src = _broker_num(ctx, b, key, HA_MAX_GAP)
            behind = m_off - s_off
            if behind > gap:
                sre = cfg.get("slaveReadEnable")
                out.append(Finding(
                    "slave-behind", WARNING, f"{b}'s slave is {n_(behind)} bytes behind its "
                    "master",
                    why="consumers read from the slave when the master is down, or when "
                        "slaveReadEnable is true and the master suggests it for a consumer far "
                        f"behind (slaveReadEnable: {sre or 'unknown'}): then they see only "
                        "what the slave has and wait for the rest",
                    next="the replication link (network, the slave's disk); `mqadmin "
                         "brokerStatus` on both",
                    evidence=(Evidence(f"commitLogMaxOffset master {n_(m_off)}, slave "
                                       f"{n_(s_off)}; "
                                       f"{gap_src}", ctx.src("GET_BROKER_RUNTIME_INFO",
                                                             f"{b} master and slave"), ts),),
                    values={"broker": b, "behind_bytes": behind, "limit": gap},
                    brokers=(b,), rocketmq="HAService, MessageStoreConfig.haSlaveFallbehindMax "
                                           "(4.x) / haMaxGapNotInSync (5.x)",
                    shows=frozenset({(x.BROKER, "slave-behind", b)})))
        reported = [k for k in ("pullThreadPoolQueueHeadWaitTimeMills", "pageCacheLockTimeMills",
                                "commitLogMaxOffset") if k in table]
        if reported:
            okays.append(f"{b}: " + ", ".join(f"{k} {table[k]}" for k in reported)
                         + ("" if slave is None or s_off is not None else
                            "; its slave's commitLogMaxOffset not reported"))
    return _outcome(code, out, "; ".join(okays) or "no broker reports the entries checked",
                    ", ".join(f"{f.code} {f.brokers[0]}" for f in out),
                    status=OK if okays else NOT_CHECKED)


# ---------------------------------------------------------------- pop


@rule("pop")
def pop(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.kind != "pop":
        return [], Check(code, NOT_APPLICABLE, "not a pop group")
    ts = ctx.now.ts
    out = []
    over = []
    for cid, info in sorted(ctx.infos.items()):
        thr, _ = _prop(info, "popThresholdForQueue", POP_THRESHOLD_FOR_QUEUE)
        for mq, v in sorted(info.mq_pop_table.items()):
            wait = _num((v or {}).get("waitAckCount")) if isinstance(v, dict) else None
            if wait is not None and thr is not None and wait > thr:
                over.append((cid, mq, wait, thr))
    if over:
        out.append(Finding(
            "pop-flow-control", WARNING, f"{len(over)} pop process queue(s) at the pop "
            f"flow-control threshold: {qlist(mq for _, mq, _, _ in over)}",
            why="DefaultMQPushConsumerImpl.popMessage pops a queue again only when at most "
                "popThresholdForQueue popped messages wait for their ack: the client processes "
                "slower than it pops",
            next="make the listener faster, raise consumeThreadMin, or add pop consumers",
            evidence=tuple(Evidence(f"{cid} {q_(mq)}: waitAckCount {w:g} > popThresholdForQueue "
                                    f"{t:g}", ctx.src("GET_CONSUMER_RUNNING_INFO mqPopTable", cid),
                                    ts) for cid, mq, w, t in over[:LISTED]),
            values={"queues": len(over)}, clients=tuple(sorted({c for c, _, _, _ in over})),
            queues=tuple(mq for _, mq, _, _ in over),
            rocketmq="PopProcessQueueInfo.waitAckCount, DefaultMQPushConsumer."
                     "popThresholdForQueue, DefaultMQPushConsumerImpl.popMessage",
            # a pop process queue stands for every queue of its broker (allocate4Pop: -1)
            shows=frozenset((x.POP_FLOW, c, mq.topic, mq.broker_name) for c, mq, _, _ in over),
            explains=frozenset((x.BEHIND, mq.topic, mq.broker_name) for _, mq, _, _ in over)))
    pr = ctx.now.pop_retry
    if pr is None:
        return out, Check(code, FOUND if out else NOT_CHECKED,
                          "the pop retry topics were not read")
    for t, rt in sorted(pr.items()):
        if rt.messages <= 0:
            continue

        def total(r: Reading, t: str = t) -> int | None:
            x = (r.pop_retry or {}).get(t)
            return x.max_offsets if x is not None else None

        grew, rate = _growth(ctx, total)
        ev = [Evidence(f"{rt.topic}: {n_(rt.messages)} message(s) revived"
                       + (f", the last {format_duration(ts - rt.last_ts)} ago" if rt.last_ts
                          else ""),
                       ctx.src("GET_TOPIC_STATS_INFO", rt.topic), ts)]
        if grew is not None:
            ev.append(Evidence(f"{n_(grew)} revived during the sample",
                               ctx.src("GET_TOPIC_STATS_INFO, two reads"), ts))
        out.append(Finding(
            "pop-retry", ERROR if grew else WARNING,
            f"{n_(rt.messages)} message(s) of {t} came back through {rt.topic}"
            + (f" ({tps(rate)} during the sample)" if grew else ""),
            why="a popped message that is not acked within its invisible time "
                "(popInvisibleTime) is revived into the pop retry topic and delivered again "
                "(PopReviveService): its consumption failed or took longer than the invisible "
                "time",
            next="raise popInvisibleTime if consumption is slow, or fix what fails "
                 "(consume-failing)",
            evidence=tuple(ev), values={"topic": rt.topic, "messages": rt.messages,
                                        "revived": grew},
            topics=(rt.topic,),
            rocketmq="KeyBuilder.buildPopRetryTopic, PopReviveService, "
                     "DefaultMQPushConsumer.popInvisibleTime",
            shows=frozenset({(x.RETRY, rt.topic)})))
    return _outcome(code, out, "waitAckCount within popThresholdForQueue; no revived message")


# ---------------------------------------------------------------- sample: rebalances


@rule("rebalanced")
def rebalanced(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.first is None:
        return [], Check(code, NEEDS_SAMPLE, "needs two reads: --sample SECONDS")
    m0, m1 = ctx.first.members, ctx.members
    if m0 is None or m1 is None or m0.online_state is None or m1.online_state is None:
        return [], Check(code, NOT_CHECKED, "the member list was not read twice")
    c0, c1 = set(m0.clients), set(m1.clients)
    joined, left = sorted(c1 - c0), sorted(c0 - c1)
    o0, o1 = Ctx.owners_of(ctx.first), ctx.owners
    moved = sorted(mq for mq in set(o0) & set(o1)
                   if {c for c, _ in o0[mq]} != {c for c, _ in o1[mq]}
                   and (ctx.topic is None or mq.topic == ctx.topic))
    if not (joined or left or moved):
        return [], Check(code, OK, f"the same {len(c1)} member(s) and queue owners at both "
                                   "reads")
    ts = ctx.now.ts
    ev = []
    if joined:
        ev.append(Evidence("joined: " + ", ".join(joined), "GET_CONSUMER_LIST_BY_GROUP, two "
                                                           "reads", ts))
    if left:
        ev.append(Evidence("left: " + ", ".join(left), "GET_CONSUMER_LIST_BY_GROUP, two reads",
                           ts))
    for mq in moved[:LISTED]:
        ev.append(Evidence(f"{q_(mq)}: {', '.join(c for c, _ in o0[mq])} -> "
                           f"{', '.join(c for c, _ in o1[mq])}",
                           "GET_CONSUMER_RUNNING_INFO mqTable, two reads", ts))
    return [Finding(
        code, WARNING, f"the group rebalanced during the sample: {len(joined)} joined, "
        f"{len(left)} left, {len(moved)} queue(s) moved",
        why="a queue that moves is dropped by one client and added by another: what was "
            "consumed and not yet committed is consumed again, and an orderly queue waits for "
            "its lock; members that come and go (restarts, lost heartbeats) keep the group "
            "rebalancing",
        next=f"`mqctl consumers {ctx.group}`; look for restarting or flapping clients",
        evidence=tuple(ev), values={"joined": joined, "left": left, "moved": len(moved)},
        clients=tuple(joined + left), queues=tuple(moved),
        rocketmq="RebalanceImpl.rebalanceByTopic, ConsumerManager "
                 "(NOTIFY_CONSUMER_IDS_CHANGED)",
        # a moved orderly queue waits for its lock (the one who left may hold it)
        shows=frozenset({(x.REBALANCE,)}), explains=qfacts(x.LOCK, moved))], \
        Check(code, FOUND, f"{len(moved)} queue(s) moved")


# ---------------------------------------------------------------- where the lag is


def _behind(q: QueueProgress) -> bool | None:
    """Behind: the next message to consume was stored more than CAUGHT_UP_MS ago; None when the
    time lag is unknown and there is lag."""
    if q.lag == 0:
        return False
    if q.delay_ms is None:
        return None
    return q.delay_ms > CAUGHT_UP_MS


@rule("skew")
def skew(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read")
    if ctx.kind in ("offline", "broadcasting"):
        return [], Check(code, NOT_APPLICABLE, f"{ctx.kind} group")
    ts = ctx.now.ts
    out = []
    notes = []
    by_topic: dict[str, list[QueueProgress]] = defaultdict(list)
    for q in ctx.queues:
        by_topic[q.mq.topic].append(q)
    first = {q.mq: q for q in ctx.queues_of(ctx.first)} if ctx.first is not None else {}
    dt = (ctx.now.ts - ctx.first.ts) / 1000 if ctx.first is not None else 0
    for t, qs in sorted(by_topic.items()):
        if len(qs) < 2:
            continue
        states = {q.mq: _behind(q) for q in qs}
        behind = [q for q in qs if states[q.mq]]
        if any(v is None for v in states.values()) or not behind:
            notes.append(f"{t}: " + ("time lag unknown on some queue" if any(
                v is None for v in states.values()) else "no queue behind"))
            continue
        if any(q.mq in ctx.explained for q in behind):
            notes.append(f"{t}: the lagging queues are explained above")
            continue
        brokers = {q.mq.broker_name for q in behind}
        on_broker = [q for q in qs if q.mq.broker_name in brokers]
        all_brokers = {q.mq.broker_name for q in qs}
        rates = {q.mq: (q.broker_offset - first[q.mq].broker_offset) / dt
                 for q in qs if q.mq in first and dt > 0}
        owners = {q.mq: ", ".join(c for c, _ in ctx.owners.get(q.mq, [])) or (
            "no owner" if ctx.all_answered else "unknown (a client did not answer)")
            for q in qs}
        caught = [q for q in qs if not states[q.mq]]
        tl = max((q.delay_ms or 0) for q in caught) if caught else 0
        lag = sum(_lag(q) for q in behind)
        where = next(iter(brokers)) if len(brokers) == 1 else ""
        # the lag concentrates on these queues: it explains their lag, and the saturation and
        # flow control of their owners when those are no slower than the group's other
        # clients (a slower owner explains the concentration instead: threads-saturated)
        shows = qfacts(x.CONCENTRATED, (q.mq for q in behind))
        explains = set(_lag_facts(q.mq for q in behind))
        owned = {cid for q in behind for cid, _ in ctx.owners.get(q.mq, [])}
        for q in behind:
            for cid, _ in ctx.owners.get(q.mq, []):
                if not ctx.slower(cid):
                    explains |= {(x.SATURATED, cid), qfact(x.FLOW, q.mq, cid)}
        # each queue behind (its lag, time lag, owner, what it received), then the others
        ev = tuple(Evidence(
            f"{q_(q.mq)}: lag {n_(q.lag)}, time lag {format_duration(q.delay_ms)}, owner "
            f"{owners[q.mq]}" + (f", {tps(rates[q.mq])} produced during the sample"
                                 if q.mq in rates else ""),
            ctx.src("GET_CONSUME_STATS + QUERY_CONSUME_TIME_SPAN", where), ts)
            for q in behind[:LISTED]) + (Evidence(
                f"the other {len(caught)} queue(s): time lag at most "
                f"{format_duration(tl) or '0'}", ctx.src("QUERY_CONSUME_TIME_SPAN"), ts),
                ) + ctx.speed_evidence(owned)
        source = "QueueTimeSpan.delayTime (AdminBrokerProcessor.queryConsumeTimeSpan)"
        if (len(brokers) == 1 and len(all_brokers) > 1 and len(behind) * 2 >= len(on_broker)
                and len(behind) > 1):
            out.append(Finding(
                "broker-skew", WARNING, f"{t}: the lag is on {where} ({len(behind)} of its "
                f"{len(on_broker)} queue(s), lag {n_(lag)}); the other brokers' queues are "
                "caught up",
                why=f"the consumers of {where}'s queues are slower than its production, or "
                    f"{where} serves pulls slowly, or more is produced there",
                next=f"`mqctl group progress {ctx.group} --sort lag`; the owners and the broker "
                     "findings above; `mqctl topic status " + t + "`",
                evidence=ev,
                values={"topic": t, "broker": where, "lag": lag, "queues_behind": len(behind)},
                brokers=(where,), topics=(t,), queues=tuple(q.mq for q in behind),
                rocketmq=source, shows=shows, explains=frozenset(explains)))
        elif len(behind) * 2 < len(qs):
            hot = [q for q in behind if rates.get(q.mq) is not None]
            others = sorted(r for mq, r in rates.items() if mq not in {q.mq for q in behind})
            med = others[len(others) // 2] if others else None
            out.append(Finding(
                "hot-queue", WARNING, f"{t}: the lag is on {len(behind)} of {len(qs)} queue(s) "
                f"({qlist(q.mq for q in behind)}, lag {n_(lag)}); the others are caught up",
                why="the lag sits on a few queues: a hot sharding key (a MessageQueueSelector "
                    "sends all of a key's messages to one queue, consumed by one client) or a "
                    "slow owner"
                    + (f"; during the sample they received more than the others (median "
                       f"{tps(med)})" if hot and med is not None else ""),
                next=f"`mqctl group progress {ctx.group} --sort lag`; the producer's keys; the "
                     "owners' findings above",
                evidence=ev,
                values={"topic": t, "lag": lag, "queues_behind": len(behind),
                        "queues": len(qs)},
                topics=(t,), queues=tuple(q.mq for q in behind), rocketmq=source,
                shows=shows, explains=frozenset(explains)))
        else:
            notes.append(f"{t}: {len(behind)} of {len(qs)} queue(s) behind (not concentrated)")
    return _outcome(code, out, "; ".join(notes) or "no topic with two queues")


@rule("lag-growing")
def lag_growing(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read")
    if ctx.kind in ("offline", "broadcasting"):
        return [], Check(code, NOT_APPLICABLE, f"{ctx.kind} group"
                         + (" (see offline)" if ctx.kind == "offline" else ""))
    ts = ctx.now.ts
    out = []
    notes = []
    by_topic: dict[str, list[QueueProgress]] = defaultdict(list)
    for q in ctx.queues:
        by_topic[q.mq.topic].append(q)
    for t, qs in sorted(by_topic.items()):
        lag = sum(_lag(q) for q in qs)
        tl = [q.delay_ms for q in qs if q.delay_ms is not None]
        behind = [q for q in qs if _behind(q)]
        produce = ctx.progress.produce_tps.get(t)
        consume = ctx.client_tps(t)

        def topic_lag(r: Reading, t: str = t) -> int | None:
            if r.progress is None:
                return None
            return sum(_lag(q) for q in ctx.queues_of(r) if q.mq.topic == t)

        grew, rate = _growth(ctx, topic_lag)
        ev_tps = (f"produced {tps(produce)} (the brokers' topicPutTps / TOPIC_PUT_NUMS), "
                  f"consumed {tps(consume)} (the clients' consumeOKTPS)")
        if not behind:
            notes.append(f"{t}: lag {n_(lag)}, time lag at most "
                         f"{format_duration(max(tl, default=0)) or '0'}; {ev_tps}"
                         + (f"; {tps(rate)} over the sample" if rate is not None else ""))
            continue
        slower = produce is not None and consume is not None and consume < produce
        if grew is not None:
            growing = grew > 0
        else:
            growing = slower
        if not growing:
            notes.append(f"{t}: behind (lag {n_(lag)}) but not growing: {ev_tps}"
                         + (f"; {tps(rate)} over the sample" if rate is not None else ""))
            continue
        ev = [Evidence(f"{t}: lag {n_(lag)} on {len(qs)} queue(s), {len(behind)} behind, time "
                       f"lag up to {format_duration(max(tl, default=0))}",
                       ctx.src("GET_CONSUME_STATS + QUERY_CONSUME_TIME_SPAN"), ts),
              Evidence(ev_tps, ctx.src("GET_TOPIC_STATS_INFO / VIEW_BROKER_STATS_DATA + "
                                       "GET_CONSUMER_RUNNING_INFO statusTable"), ts)]
        if grew is not None:
            ev.append(Evidence(f"lag {'+' if grew >= 0 else ''}{n_(grew)} during the "
                               f"{format_duration(ts - (ctx.first.ts if ctx.first else ts))} "
                               f"sample ({tps(rate)})", ctx.src("GET_CONSUME_STATS, two reads"),
                               ts))
        out.append(Finding(
            code, ERROR, f"{t}: lag {n_(lag)} and growing"
            + (f": consumed {tps(consume)}, produced {tps(produce)}" if slower else
               f" by {tps(rate)}" if rate is not None else ""),
            why="the group consumes slower than the topic is produced: the lag and the time "
                "lag keep growing until production slows down or consumption speeds up; the "
                "findings above say why the consumers are slow",
            next="act on the findings above; else add consumers (up to the number of queues) "
                 "or make consumption faster",
            evidence=tuple(ev),
            values={"topic": t, "lag": lag, "produce_tps": produce, "consume_tps": consume,
                    "lag_change": grew, "lag_change_tps": rate,
                    "max_time_lag_ms": max(tl, default=None)},
            topics=(t,),
            rocketmq="ConsumeStatus.consumeOKTPS, BrokerStatsManager (TOPIC_PUT_NUMS / "
                     "topicPutTps), QueueTimeSpan.delayTime",
            shows=qfacts(x.BEHIND, (q.mq for q in behind))))
    return _outcome(code, out, "; ".join(notes) or "no offsets",
                    ", ".join(f.topics[0] for f in out))


# ---------------------------------------------------------------- the diagnosis


# the tie-break among findings none of which explains another (mqctl.diagnose.explain ranks
# by explanation first): within a severity, causes before their effects
ORDER = ("offline", "consume-disabled", "topic-not-readable", "client-silent",
         "duplicate-client-id", "mixed-strategies", "membership-split", "subscription-mismatch",
         "unowned-queues", "lock-hung", "lock-stale", "lock-failed", "duplicates-expected",
         "consume-blocked", "flow-control",
         "threads-saturated", "consume-failing", "retry-backlog", "dlq",
         "offset-not-committed", SECOND_READ, "broker-pull-busy", "broker-page-cache-busy",
         "slave-behind", "pop-flow-control", "pop-retry", "rebalanced", "hot-queue", "broker-skew",
         "idle-consumers", "lag-growing")
CODES = ORDER


# what each check reads (prefixes of Reading.unread keys): a check that found nothing while a
# part it reads was not read is "not checked", not "ok"
NEEDS: dict[str, tuple[str, ...]] = {
    "offline": ("members",),
    "topic-not-readable": ("route of",),
    "client-silent": ("members",),
    "members": ("members", "running info of", "consumer connection on"),
    "unowned-queues": ("members", "offsets", "running info of"),
    "locks": ("members", "running info of"),
    "consume-blocked": ("running info of",),
    "flow-control": ("running info of",),
    "threads-saturated": ("running info of",),
    "consume-failing": ("running info of",),
    "retry-backlog": ("offsets",),
    "offset-not-committed": ("offsets", "running info of"),
    "broker": ("runtime info of", "slave runtime info of", "broker config of"),
    "pop": ("running info of", "stats of"),
    "rebalanced": ("members", "running info of"),
    "skew": ("offsets",),
    "lag-growing": ("offsets", "running info of"),
}


def _partial(check: Check, unread: dict[str, str]) -> Check:
    if check.status != OK:
        return check
    missing = sorted(k for k in unread for p in NEEDS.get(check.code, ()) if k.startswith(p))
    if not missing:
        return check
    return Check(check.code, NOT_CHECKED, "not read: " + "; ".join(missing)
                 + f" (in what was read: {check.detail})")


def summary(ctx: Ctx) -> dict[str, Any]:
    qs = ctx.queues
    tl = [q.delay_ms for q in qs if q.delay_ms is not None]
    topics: dict[str, Any] = {}
    for t in sorted({q.mq.topic for q in qs}):
        tq = [q for q in qs if q.mq.topic == t]
        produce = ctx.progress.produce_tps.get(t) if ctx.progress else None
        topics[t] = {"lag": sum(_lag(q) for q in tq), "queues": len(tq),
                     "max_time_lag_ms": max((q.delay_ms for q in tq if q.delay_ms is not None),
                                            default=None),
                     "produce_tps": None if produce is None else round(produce, 3),
                     "consume_tps": (None if (c := ctx.client_tps(t)) is None
                                     else round(c, 3))}
        if ctx.first is not None:
            before = sum(_lag(q) for q in ctx.queues_of(ctx.first) if q.mq.topic == t)
            dt = max(1, ctx.now.ts - ctx.first.ts) / 1000
            topics[t]["lag_change"] = topics[t]["lag"] - before
            topics[t]["lag_change_tps"] = round((topics[t]["lag"] - before) / dt, 3)
    # the group's lag is known only where every broker's offsets were read; else the sum
    # over the queues read is a lower bound (`groups`: `>=N`)
    complete = ctx.progress is not None and ctx.progress.complete
    read = _total_lag(qs) if ctx.progress else None
    return {"kind": ctx.kind, "online": ctx.online, "clients": len(ctx.clients),
            "lag": read if complete else None,
            "lag_at_least": read if not complete and read else None,
            "max_time_lag_ms": max(tl) if tl else None,
            "time_lag_unknown_queues": sum(1 for q in qs if q.delay_ms is None and _lag(q) > 0),
            "consume_tps_brokers": (round(ctx.progress.consume_tps, 3)
                                    if ctx.progress and ctx.progress.consume_tps is not None
                                    else None),
            # a backlog over no %RETRY% queue read is unknown, not 0, unless the retry topic
            # does not exist (nothing waits)
            "retry_backlog": (None if ctx.progress is None else 0 if not ctx.retry_queues
                              and ctx.progress.retry_topic is False
                              else _total_lag(ctx.retry_queues)),
            "topics": topics}


def diagnose(first: Reading, second: Reading | None = None, *,
             topic: str | None = None) -> Diagnosis:
    """Every rule over the reading(s): the ranked findings and the checks."""
    ctx = Ctx(first, second, topic)
    findings: list[Finding] = []
    checks: list[Check] = []
    for code, fn in RULES:
        fs, check = fn(ctx, code)
        findings.extend(fs)
        checks.append(check)
    # a finding whose cause explains another's evidence comes first; then severity and ORDER
    findings = x.rank_findings(findings, ORDER)
    r = ctx.now
    unread = dict(first.unread) if second is None else {**first.unread, **second.unread}
    checks = [_partial(c, unread) for c in checks]

    uniq = dedupe(list(r.failures) if second is None else [*first.failures,
                                                               *second.failures])
    return Diagnosis(ctx.group, topic, r.ts, findings, checks, summary(ctx), uniq, unread,
                     sample_ms=(r.ts - first.ts) if second is not None else None)


__all__ = ["CAUGHT_UP_MS", "CODES", "ORDER", "RULES", "diagnose", "summary"]

"""What the rules of ``mqctl diagnose`` share (pure): RocketMQ's thresholds, the context of one
diagnosis (:class:`Ctx`: the readings and the views of them every rule asks for), and the
helpers that count lag and word numbers and queues."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from mqctl.diagnose import explain as x
from mqctl.diagnose.capture import is_main_topic
from mqctl.diagnose.explain import qfact, qfacts
from mqctl.diagnose.types import (
    FOUND,
    NOT_APPLICABLE,
    NOT_CHECKED,
    OK,
    Check,
    Evidence,
    Fact,
    Finding,
    Reading,
)
from mqctl.locks.view import group_kind
from mqctl.models import RETRY_PREFIX, MessageQueue, ProcessQueueInfo
from mqctl.views.progress import known_total

if TYPE_CHECKING:
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


def queue_lag(q: QueueProgress) -> int:
    """A queue's lag where a rule uses it: the rules that add or compare lags do not apply to
    a group whose lag is unknown (BROADCASTING: the offsets are the clients'), and an unknown
    lag never makes a finding (it counts as none)."""
    return q.lag if q.lag is not None else 0


def total_lag(qs: Iterable[QueueProgress]) -> int | None:
    """The lag of ``qs``, or None when any of it is unknown or no queue was read (never 0 for
    unknown: mqctl.views.progress.known_total)."""
    return known_total(q.lag for q in qs)


def lag_facts(mqs: Iterable[MessageQueue]) -> frozenset[Fact]:
    """What a cause of lag on these queues explains: each one behind, and the lag
    concentrating there."""
    ms = list(mqs)
    return qfacts(x.BEHIND, ms) | qfacts(x.CONCENTRATED, ms)


def commit_explains(held: Iterable[tuple[MessageQueue, str]]) -> frozenset[Fact]:
    """What a committed offset held by one message explains: the queue's lag (the committed
    offset is where the lag and the time lag are measured from) and the owner's span flow
    control on it (consumeConcurrentlyMaxSpan)."""
    out: set[Fact] = set()
    for mq, cid in held:
        out |= lag_facts([mq]) | {qfact(x.SPAN, mq, cid)}
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


def num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def prop(info: ConsumerRunningInfo, key: str, default: float | None) -> tuple[float | None, str]:
    """A client property as a number, and where it came from."""
    v = num(info.properties.get(key))
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
        return sum(queue_lag(q) for q in self.queues if q.mq in want)

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
        return sum(num((i.status_table.get(topic) or {}).get("consumeOKTPS")) or 0.0
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
        pool = consume_threads(info)
        if pool is None or pool <= 0:
            return None
        if info.orderly:
            held = sum(1 for pq in info.mq_table.values() if not pq.dropped)
            pool = min(pool, held) if held else pool
        batch = num(info.properties.get("consumeMessageBatchMaxSize")) or 1.0
        rts = []
        for s in info.status_table.values():
            if isinstance(s, dict) and (rt := num(s.get("consumeRT")) or 0.0) > 0:
                rate = (num(s.get("consumeOKTPS")) or 0.0) + (num(s.get("consumeFailedTPS"))
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
                if queue_lag(q) > 0 and not self.owners.get(q.mq):
                    out |= {qfact(x.BEHIND, q.mq), qfact(x.CONCENTRATED, q.mq)}
        return frozenset(out)


# a rule gets the reading(s) and its own code (the one it is registered under)
Rule = Callable[[Ctx, str], tuple[list[Finding], Check]]


def online_needed(ctx: Ctx, code: str, not_for: tuple[str, ...] = (), why: str = ""
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


def outcome(code: str, out: list[Finding], ok: str, found: str | None = None, *,
            status: str = OK) -> tuple[list[Finding], Check]:
    """A rule's result: its findings and the check, ``found`` (default: their codes) when
    there are findings, else ``status`` (ok) with the numbers in ``ok``."""
    if not out:
        return [], Check(code, status, ok)
    return out, Check(code, FOUND, found if found is not None else
                      ", ".join(f.code for f in out))


def consume_threads(info: ConsumerRunningInfo) -> float | None:
    v = num(info.properties.get("PROP_THREADPOOL_CORE_SIZE"))
    return v if v is not None else num(info.properties.get("consumeThreadMin"))


def growth(ctx: Ctx, f: Callable[[Reading], int | None]) -> tuple[int | None, float | None]:
    """(change, per second) of a number between the two reads of --sample."""
    if ctx.first is None:
        return None, None
    a, b = f(ctx.first), f(ctx.now)
    if a is None or b is None:
        return None, None
    dt = max(1, ctx.now.ts - ctx.first.ts) / 1000
    return b - a, (b - a) / dt


def is_behind(q: QueueProgress) -> bool | None:
    """Behind: the next message to consume was stored more than CAUGHT_UP_MS ago; None when the
    time lag is unknown and there is lag."""
    if q.lag == 0:
        return False
    if q.delay_ms is None:
        return None
    return q.delay_ms > CAUGHT_UP_MS

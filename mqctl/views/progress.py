"""The per-queue progress of a group (``mqctl group progress``, snapshots, ``offsets show``):
its types and the pure rules over what was read (time lag, never committed, inflight).

The reads are :mod:`mqctl.views.progress_capture`; the rows and notes of the command are
:mod:`mqctl.views.progress_rows`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mqctl.admin import (
    BrokerFailure,
)
from mqctl.models import (
    RETRY_PREFIX,
    MessageQueue,
    OffsetWrapper,
    QueueTimeSpan,
)
from mqctl.views.dlq import DlqQueue
from mqctl.views.members import GroupMembers

if TYPE_CHECKING:
    from mqctl.locks.types import LockView

# why a queue's time lag is unknown (QueueProgress.delay_reason)
NEVER_COMMITTED = "never-committed"
NO_STORE_TIME = "no-store-time"
NOT_REPORTED = "not-reported"
SPAN_FAILED = "failed"
# why a queue's lag (and committed offset, time lag, inflight) is unknown: a BROADCASTING
# group's clients keep their offsets in a local file (LocalFileOffsetStore) and commit none to
# the brokers, so what a broker holds for the group is not its progress. The one name every
# view gives it: `groups` (state UNKNOWN), `group progress`, `offsets show`, `topic
# consumers` and the snapshot rows (``lag_unknown``)
BROADCASTING_LAG = "broadcasting"
# what every view says next to a queue without a committed offset (``none``)
NO_OFFSET_LAG_CAVEAT = ("LAG counts such a queue whole (max offset - 0, as mqadmin's Diff); "
                        "where a new consumer would start there depends on its "
                        "consumeFromWhere (FIRST_OFFSET: the oldest message held; LAST_OFFSET: "
                        "the newest, except that a broker answers 0 for a queue whose message "
                        "0 is still in memory; TIMESTAMP: the first message at that time)")
# what every view says of a group's lag (and of any sum over its queues) when no queue of it
# was read: a sum of nothing is unknown, never 0 (``groups`` LAG `-`, ``group progress``,
# ``offsets show``, ``diagnose``, ``topic consumers``, ``snapshot``)
NO_QUEUE_READ = "no queue was read"


def known_total(values: Iterable[int | None]) -> int | None:
    """The total of ``values`` when it is known: None (unknown) when nothing was read or a
    part is unknown, never 0 for nothing (the one rule of every lag, backlog and count total
    over a group's queues)."""
    vs = list(values)
    if not vs or any(v is None for v in vs):
        return None
    return sum(v for v in vs if v is not None)


def no_queue_reason(subscribed: Iterable[str], online: bool | None) -> str:
    """Why no queue of a group was read, when none was: the group names no topic (created by
    ``updateSubGroup`` and never consumed, corpus */never-committed/ NC_NEVER), or it names
    topics on which no broker reports its offsets."""
    subs = sorted(t for t in subscribed if not t.startswith(RETRY_PREFIX))
    if subs:
        return (f"it subscribes to {', '.join(subs)}, and a broker reports no offsets of an "
                "online group on a topic it does not subscribe to "
                "(AdminBrokerProcessor.getConsumeStats)")
    return ("no broker holds a committed offset of it and no member names a topic, so "
            "nothing says which queues it would read"
            + (" (the group is offline)" if online is False else ""))


DELAY_REASONS = {
    NEVER_COMMITTED: "the group has no committed offset for the queue (the broker's "
                     "QUERY_CONSUME_TIME_SPAN delayTime is now - 0)",
    NO_STORE_TIME: "the broker has no store time for the next message (committed offset "
                   "below the oldest retained message)",
    NOT_REPORTED: "the broker's QUERY_CONSUME_TIME_SPAN does not cover the queue (it iterates "
                  "the write queues only: a read-only queue, corpus */read-gt-write/303_*)",
    SPAN_FAILED: "QUERY_CONSUME_TIME_SPAN failed",
    BROADCASTING_LAG: "the group is BROADCASTING: each client keeps its own offsets in a local "
                      "file (LocalFileOffsetStore) and commits none to the brokers",
}


@dataclass(frozen=True, slots=True)
class QueueProgress:
    mq: MessageQueue
    broker_offset: int
    consumer_offset: int
    pull_offset: int | None
    last_timestamp: int
    min_offset: int | None = None
    max_timestamp: int | None = None
    delay_ms: int | None = None
    owners: tuple[str, ...] = ()
    locked: bool | None = None
    last_lock_ts: int | None = None
    # False: the group has no committed offset for the queue (``none``: the rule of
    # mqctl.views.offsets.committed_offsets, shared with the reset plans); None: cannot tell
    committed: bool | None = None
    delay_reason: str | None = None  # a DELAY_REASONS key when delay_ms is None
    # True: known that no client holds the queue (the group has no member, or every member
    # answered its running info and none lists it); False: held or unknown
    no_holder: bool = False
    cached_msg_count: int | None = None  # the owner's ProcessQueueInfo.cachedMsgCount
    cached_msg_max_offset: int | None = None  # ... and cachedMsgMaxOffset (None when empty)
    min_offset_source: str | None = None  # "topic-stats" | "min-offset" (GET_MIN_OFFSET)
    # pop (5.x): the broker hands any queue's messages to whoever pops; no owner. The
    # clients' PopProcessQueueInfo.waitAckCount (popped, not yet acked: invisible) summed,
    # None when not every pop client reported it
    pop: bool = False
    pop_wait_ack: int | None = None
    # a BROADCASTING group's queue: its offsets live in the clients (BROADCASTING_LAG), so
    # the committed offset, the lag, the time lag and the inflight are unknown
    offsets_in_clients: bool = False
    # no answering member claims the queue while a member did not answer its running info:
    # the owner is unknown (``owners`` stays empty), not absent
    owner_unknown: bool = False
    # an orderly group's queue: its state and owner in the lock classification of `mqctl
    # locks show` (mqctl.locks.view.queue_locks), the one every view names; None otherwise
    lock_state: str | None = None
    lock_owner: str | None = None

    @property
    def lag(self) -> int | None:
        """``broker_offset - consumer_offset``, mqadmin's Diff: a queue without a committed
        offset (the broker's placeholder 0) counts whole; where a new consumer would start
        there depends on its consumeFromWhere (:data:`NO_OFFSET_LAG_CAVEAT`). None (unknown)
        where the offsets live in the clients (:attr:`lag_unknown`)."""
        if self.offsets_in_clients:
            return None
        return max(0, self.broker_offset - self.consumer_offset)

    @property
    def lag_unknown(self) -> str | None:
        """Why :attr:`lag` is None (``broadcasting``), else None."""
        return BROADCASTING_LAG if self.offsets_in_clients else None

    @property
    def current(self) -> int | None:
        """The committed offset, None where the group has none (``none``: ``committed`` is
        False) or where it is unknown (the clients keep it: ``offsets_in_clients``)."""
        if self.offsets_in_clients:
            return None
        return None if self.committed is False else self.consumer_offset

    @property
    def inflight(self) -> int | None:
        """Messages pulled and not yet committed: 0 on a queue no client holds (a pullOffset
        ahead of the committed offset there is what a departed owner pulled and never
        committed: the next owner consumes it again, nobody holds it now); else the broker's
        ``pullOffset - consumerOffset`` (5.x), else the owner's cachedMsgCount (the client
        reports it), else unknown. A pop queue: the pop clients' waitAckCount where they
        report it per queue, else unknown here (a 5.x pop client keys it per broker, queue id
        -1: :attr:`GroupProgress.pop_inflight`; a pop does not move pullOffset)."""
        if self.offsets_in_clients:
            return None
        if self.pop:
            return self.pop_wait_ack
        if self.no_holder:
            return 0
        if self.pull_offset is not None:
            return max(0, self.pull_offset - self.consumer_offset)
        return self.cached_msg_count

    @property
    def inflight_source(self) -> str | None:
        if self.offsets_in_clients:
            return None
        if self.pop:
            return "client" if self.pop_wait_ack is not None else None
        if self.no_holder:
            return "no-owner"
        if self.pull_offset is not None:
            return "broker"
        return "client" if self.cached_msg_count is not None else None

    @property
    def owner(self) -> str | None:
        return self.owners[0] if self.owners else None


def classify_span(w: OffsetWrapper, span: QueueTimeSpan | None, now: int
                  ) -> tuple[int | None, str | None, bool | None]:
    """``(delay_ms, reason when unknown, committed)`` of one queue.

    The rule for "never committed" (docs/exports.md, section 1): the broker's
    QUERY_CONSUME_TIME_SPAN delayTime implies a next-message store time before the queue's
    oldest retained message (QueueTimeSpan.delay_is_bogus: the broker looked up offset -1) AND
    GET_CONSUME_STATS shows
    consumerOffset 0 with lastTimestamp 0 (AdminBrokerProcessor.getConsumeStats turns the -1 of
    queryOffset into 0). Both versions answer so (corpus */never-committed/208_*, 303_*). A
    caught-up queue (lag 0) has time lag 0 even when the broker did not report it.
    """
    committed: bool | None = True if (w.consumer_offset > 0 or w.last_timestamp > 0) else None
    if span is None:
        if w.consumer_offset >= w.broker_offset:
            return 0, None, committed
        return None, NOT_REPORTED, committed
    if span.delay_is_bogus(now):
        if w.consumer_offset == 0 and w.last_timestamp == 0:
            return None, NEVER_COMMITTED, False
        return None, NO_STORE_TIME, committed
    if w.consumer_offset < w.broker_offset:
        committed = True  # the broker found an offset: with -1 the span would be bogus
    return span.delay_time, None, committed


@dataclass
class GroupProgress:
    group: str
    capture_ts: int
    cluster: str | None
    queues: list[QueueProgress]
    members: GroupMembers | None
    failures: list[BrokerFailure]
    # the brokers' GET_CONSUME_STATS consumeTps summed: messages they handed the group per
    # second over the last minute (BrokerStatsManager.tpsGroupGetNums; mqadmin's "Consume TPS";
    # pulled into the clients' caches or popped, not necessarily processed); None when a
    # broker did not answer (a partial sum is not the group's rate) or no queue was read
    consume_tps: float | None = 0.0
    # brokers whose GET_CONSUME_STATS failed: their queues (and lag) are not in ``queues``;
    # per topic: the failed brokers the topic's route names (all of them when no route known)
    not_included: list[str] = field(default_factory=list)
    not_included_by_topic: dict[str, list[str]] = field(default_factory=dict)
    # produce TPS per topic (sum of the brokers' topicPutTps; None
    # when a broker does not report it: 4.x, or did not answer) and the clients' consumeOKTPS
    # per topic (None without running info): each client's statusTable entry counts what THAT
    # client processed OK over the last minute (ConsumerStatsManager, keyed topic@group, fed by
    # ConsumeMessage{Concurrently,Orderly,PopConcurrently}Service.processConsumeResult), so
    # the group's rate is their sum, pop clients included; whether running info was asked; the
    # group consumes with pop; the %DLQ% topic's queues (None: not asked or unknown)
    produce_tps: dict[str, float | None] = field(default_factory=dict)
    client_tps: dict[str, float | None] = field(default_factory=dict)
    running_info: bool = True
    pop: bool = False
    dlq: list[DlqQueue] | None = None
    dlq_asked: bool = False
    # topics whose queues may be missing (their route could not be read)
    uncovered: dict[str, str] = field(default_factory=dict)
    # pop groups' inflight per (topic, broker), the clients' waitAckCount
    # summed (a 5.x pop client keys it per broker, queue id -1); None: not every client answered
    pop_inflight: dict[tuple[str, str], int] | None = None
    # members whose GET_CONSUMER_RUNNING_INFO did not answer (:func:`unanswered_members`)
    unanswered: list[str] = field(default_factory=list)
    # an orderly group's lock classification (mqctl.locks.view.queue_locks), when asked
    locks: LockView | None = None
    # where no %RETRY% queue was read: whether %RETRY%<group> exists (False: nothing waits
    # for redelivery; True: its backlog is unknown); None: not asked or not known
    retry_topic: bool | None = None
    # masters whose subscription group config has consumeEnable=false (`group pause`; None:
    # not read), and who paused it when mqctl did it from this machine
    paused_on: list[str] | None = None
    paused_by: str | None = None

    @property
    def complete(self) -> bool:
        """Every broker's offsets were read and every topic's route is known."""
        return not self.not_included and not self.uncovered

    @property
    def broadcasting(self) -> bool:
        """The online group consumes BROADCASTING (its member list says so)."""
        conn = self.members.connection if self.members is not None else None
        return conn is not None and conn.message_model == "BROADCASTING"

    @property
    def lag_unknown(self) -> str | None:
        """Why the group's lag is unknown whatever was read (``broadcasting``), else None."""
        return BROADCASTING_LAG if self.broadcasting else None

    def topics(self) -> list[str]:
        return sorted({q.mq.topic for q in self.queues})

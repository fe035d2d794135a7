"""The types of a reset plan: the target, each queue's plan, each broker's path, the consumers'
state, and the plan itself, with its file schema and the offset limit.

Plain data, no I/O: :mod:`mqctl.reset.plan` builds them, :mod:`mqctl.reset.files` writes and
reads them, :mod:`mqctl.reset.apply` carries them out. They live here so that those modules
depend on the types and not on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from mqctl.models import MessageQueue
from mqctl.timeparse import format_ms

PLAN_SCHEMA = "mqctl.reset-plan/1"

# offsets are Java longs (ConsumerOffsetManager's offsetTable: ConcurrentMap<Integer, Long>)
MAX_OFFSET = 2 ** 63 - 1


class Path_(StrEnum):
    SERVER_SIDE = "server-side"  # INVOKE_BROKER_TO_RESET_OFFSET, explicit per-queue offsets
    LEGACY_PUSH = "legacy-push"  # INVOKE_BROKER_TO_RESET_OFFSET by time; the clients apply it
    LEGACY_UPDATE = "legacy-update"  # UPDATE_CONSUMER_OFFSET per queue


# ------------------------------------------------------------------------------ targets

@dataclass(frozen=True, slots=True)
class Target:
    kind: str  # time | earliest | latest | offset | shift | plan | rollback
    value: int = 0  # epoch ms, offset or shift
    text: str = ""
    plan: dict[MessageQueue, int] = field(default_factory=dict)
    # per queue, the offset the file expects the group to be at now: a plan file's `current`
    # column, a rollback file's `reset_to` (what the reset wrote); None = "none" (no offset)
    expected: dict[MessageQueue, int | None] = field(default_factory=dict)
    # a rollback file: what says it may belong elsewhere (written against another name
    # server, later changes of the group and topic since); its queues saved as "none" (no
    # committed offset before the reset) -> what the reset wrote there
    elsewhere: tuple[str, ...] = ()
    untouched: dict[MessageQueue, int | None] = field(default_factory=dict)

    def describe(self) -> str:
        if self.kind == "time":
            # a user-given instant: epoch 0 (--to-time 1970-01-01T00:00:00Z) is a time
            at = format_ms(self.value, zero_unknown=False)
            return f"to time {at} ({self.text})" if self.text else f"to time {at}"
        if self.kind in ("earliest", "latest"):
            return f"to {self.kind}"
        if self.kind == "offset":
            return f"to offset {self.value}"
        if self.kind == "shift":
            return f"shift by {self.value:+d}"
        if self.kind == "rollback":
            return f"from rollback file {self.text}"
        return f"from plan {self.text}"

    @property
    def per_queue(self) -> bool:
        """An explicit offset per queue (an edited plan or a rollback file)."""
        return self.kind in ("plan", "rollback")

    @property
    def by_time(self) -> bool:
        """Targets a legacy broker can compute itself (it only takes a timestamp)."""
        return self.kind in ("time", "earliest", "latest")

    @property
    def timestamp(self) -> int:
        """The ``timestamp`` header of a legacy INVOKE_BROKER_TO_RESET_OFFSET (-1 = max)."""
        return {"time": self.value, "earliest": 0, "latest": -1}.get(self.kind, -1)


# ------------------------------------------------------------------------------ plans

@dataclass(frozen=True, slots=True)
class QueuePlan:
    mq: MessageQueue
    min_offset: int
    max_offset: int
    current: int | None
    target: int
    requested: int | None = None
    clamped: bool = False
    note: str = ""
    target_ts: int | None = None  # store time of the message at the target, when exact
    target_time: str = ""  # what is known about the target's time, for people
    far_beyond: bool = False  # requested > max + FAR_BEYOND_MAX: refused, never clamped

    @property
    def change(self) -> int | None:
        return None if self.current is None else self.target - self.current

    @property
    def replay(self) -> int:
        """Messages consumed again (a rewind)."""
        return max(0, self.current - self.target) if self.current is not None else 0

    @property
    def skip(self) -> int:
        """Messages never consumed (a forward move)."""
        return max(0, self.target - self.current) if self.current is not None else 0

    def row(self) -> dict[str, Any]:
        return {"broker": self.mq.broker_name, "queue_id": self.mq.queue_id,
                "min": self.min_offset, "max": self.max_offset, "current": self.current,
                # no committed offset: where its consumers would start depends on their
                # consumeFromWhere, so what it replays or skips is unknown (None), not 0
                "target": self.target, "change": self.change,
                "replay": self.replay if self.current is not None else None,
                "skip": self.skip if self.current is not None else None,
                "target_time": self.target_time,
                "target_ts": self.target_ts, "clamped": self.clamped,
                "requested": self.requested, "far_beyond": self.far_beyond, "note": self.note}


@dataclass(frozen=True, slots=True)
class ConsumerState:
    online: bool
    members: list[str]
    orderly: bool | None
    pop: bool
    consume_type: str | None
    message_model: str | None
    known: bool = True  # False: no broker answered the member query
    error: str | None = None
    topics: tuple[str, ...] = ()  # subscribed topics (GET_CONSUMER_CONNECTION_LIST), online
    min_version: int | None = None  # the oldest online client's MQVersion ordinal

    def describe(self) -> str:
        if not self.known:
            return f"unknown (no broker answered the member query: {self.error})"
        if not self.online:
            return "group is offline (no member on any broker)"
        # pop: the clients pop (a 5.x remoting push consumer in pop mode reports
        # CONSUME_PASSIVELY; nothing read tells a gRPC proxy client apart)
        kind = "pop" if self.pop else (self.consume_type or "?")
        order = "orderly" if self.orderly else "concurrent" if self.orderly is False else ""
        model = f", {self.message_model}" if self.message_model == "BROADCASTING" else ""
        return (f"{len(self.members)} member(s) online ({kind}"
                f"{', ' + order if order else ''}{model})")


@dataclass(slots=True)
class BrokerPlan:
    name: str
    addr: str | None
    path: Path_ | None
    path_source: str
    reachable: bool = True
    error: str | None = None
    group_known: bool | None = None  # from the broker's subscription groups, when asked
    # the topic's writeQueueNums on this broker (from the route): the legacy reset covers
    # queues 0..write_queues-1 only (Broker2Client.resetOffset iterates writeQueueNums)
    write_queues: int | None = None
    # a broker before 5.1.1 (known from GET_BROKER_RUNTIME_INFO, or from a config without
    # useServerSideResetOffset: 4.x or 5.0.0, as RIP-48 came in 5.1.0): its
    # SEARCH_OFFSET_BY_TIMESTAMP knows no boundaryType and returns the message *nearest* the
    # time, which may be the one stored just before it (ConsumeQueue.getOffsetInQueueByTime
    # before apache/rocketmq#6429: between the two neighbours the one with the smaller
    # |storeTime - T|; a time after the last message gives that message, not the max offset)
    nearest_search: bool = False


@dataclass(slots=True)
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
    notes: list[str] = field(default_factory=list)
    # --show-messages: the message at each target (mqctl.views.message.MessageAt, or the error)
    messages: dict[MessageQueue, Any] = field(default_factory=dict)
    # mqctl clock when the committed offsets were read (first request sent, last answer): what
    # the plan and the rollback file call "before" is as of then
    offsets_read: tuple[int, int] | None = None

    def offsets_read_text(self) -> str:
        """``2024-06-01T10:00:00.123Z`` (or ``A .. B`` when the reads took a second or more)."""
        if self.offsets_read is None:
            return ""
        a, b = self.offsets_read
        return format_ms(b) if b - a < 1000 else f"{format_ms(a)} .. {format_ms(b)}"

    def to_dict(self) -> dict[str, Any]:
        return {"schema": PLAN_SCHEMA, "group": self.group, "topic": self.topic,
                "target": self.target.describe(), "created_ts": self.created_ms,
                "created": format_ms(self.created_ms), "namesrv": self.namesrv,
                **({"offsets_read_ts": list(self.offsets_read),
                    "offsets_read": self.offsets_read_text()} if self.offsets_read else {}),
                "queues": [q.row() for q in self.queues],
                "brokers": [{"broker": b.name, "addr": b.addr,
                             "path": b.path.value if b.path else None,
                             "path_source": b.path_source, "reachable": b.reachable,
                             "error": b.error} for b in self.brokers.values()],
                "consumers": {"online": self.consumers.online, "known": self.consumers.known,
                              "members": self.consumers.members,
                              "orderly": self.consumers.orderly, "pop": self.consumers.pop,
                              "consume_type": self.consumers.consume_type,
                              "message_model": self.consumers.message_model},
                "warnings": self.warnings, "refusals": self.refusals, "notes": self.notes}

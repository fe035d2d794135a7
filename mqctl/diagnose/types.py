"""The types of a diagnosis: what was read (:class:`Reading`), what was found
(:class:`Finding` with its :class:`Evidence`), what was checked (:class:`Check`) and the
result (:class:`Diagnosis`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.timeparse import format_ms

if TYPE_CHECKING:
    from mqctl.admin import BrokerFailure
    from mqctl.locks import LockView
    from mqctl.models import ConsumerConnection, MessageQueue, TopicOffset, TopicRoute
    from mqctl.views.group_config import GroupConfigView
    from mqctl.views.members import GroupMembers
    from mqctl.views.progress import GroupProgress

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)

# the check results of the checks table
FOUND = "found"
OK = "ok"
NOT_CHECKED = "not-checked"  # the data it needs could not be read (exit 8)
NOT_APPLICABLE = "n/a"  # does not apply to this group (offline, broadcasting, pop, ...)
NEEDS_SAMPLE = "needs --sample"  # only two reads can tell


@dataclass(frozen=True, slots=True)
class Evidence:
    """One fact a finding rests on: what was read, from where, when."""

    text: str
    source: str  # the request and where it went: "GET_CONSUME_STATS broker-a", "running info of c"
    at: int | None = None  # epoch ms of the read

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "source": self.source, "at_ts": self.at,
                "at_time": format_ms(self.at) or None}


@dataclass(frozen=True, slots=True)
class Finding:
    """What is wrong, the evidence, why it explains the lag or the stop, and what to do."""

    code: str
    severity: str
    title: str
    why: str
    next: str
    evidence: tuple[Evidence, ...]
    values: dict[str, Any] = field(default_factory=dict)  # the values read, for automation
    clients: tuple[str, ...] = ()
    queues: tuple[MessageQueue, ...] = ()
    brokers: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    rocketmq: str = ""  # the RocketMQ class(es) the threshold or field comes from

    def to_dict(self, rank: int) -> dict[str, Any]:
        return {"rank": rank, "code": self.code, "severity": self.severity,
                "title": self.title, "why": self.why, "next": self.next,
                "evidence": [e.to_dict() for e in self.evidence], "values": self.values,
                "clients": list(self.clients),
                "queues": [{"topic": q.topic, "broker": q.broker_name, "queue_id": q.queue_id}
                           for q in self.queues],
                "brokers": list(self.brokers), "topics": list(self.topics),
                "rocketmq": self.rocketmq}


@dataclass(frozen=True, slots=True)
class Check:
    """One rule and what came of it: found, ok (with the numbers that say so), not checked
    (the data it needs was not read), n/a, or needs --sample."""

    code: str
    status: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.code, "status": self.status, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class RetryTopic:
    """A retry or dead-letter topic of the group as its brokers' topic stats show it (route +
    GET_TOPIC_STATS_INFO): per queue min/max offset and the last store time."""

    topic: str
    queues: dict[str, TopicOffset]  # MessageQueue.short -> offsets

    @property
    def messages(self) -> int:
        return sum(max(0, o.max_offset - o.min_offset) for o in self.queues.values())

    @property
    def max_offsets(self) -> int:
        return sum(o.max_offset for o in self.queues.values())

    @property
    def last_ts(self) -> int:
        return max((o.last_update_timestamp for o in self.queues.values()), default=0)


@dataclass
class Reading:
    """Everything one read of the cluster returned about the group (read-only requests).

    A part that could not be read is ``None`` and named in ``unread`` with the reason; the
    broker failures are in ``failures`` (they make the result partial: exit 8)."""

    group: str
    ts: int
    members: GroupMembers | None = None
    progress: GroupProgress | None = None
    config: GroupConfigView | None = None
    config_missing: bool = False  # no broker holds a subscription group for it
    routes: dict[str, TopicRoute] = field(default_factory=dict)
    # broker -> the group as that broker sees it (GET_CONSUMER_CONNECTION_LIST: its
    # group-level subscription table); None: not online there
    connections: dict[str, ConsumerConnection | None] = field(default_factory=dict)
    runtime: dict[str, dict[str, str]] = field(default_factory=dict)  # master's KV table
    slave_runtime: dict[str, dict[str, str]] = field(default_factory=dict)
    broker_config: dict[str, dict[str, str]] = field(default_factory=dict)
    locks: LockView | None = None
    locks_remembered: bool = False  # the lock view used the state file of `locks show`
    pop_retry: dict[str, RetryTopic] | None = None  # normal topic -> its pop retry topic
    failures: list[BrokerFailure] = field(default_factory=list)
    unread: dict[str, str] = field(default_factory=dict)  # part -> why it was not read


@dataclass
class Diagnosis:
    group: str
    topic: str | None
    capture_ts: int
    findings: list[Finding]
    checks: list[Check]
    summary: dict[str, Any]
    failures: list[BrokerFailure] = field(default_factory=list)
    unread: dict[str, str] = field(default_factory=dict)
    sample_ms: int | None = None

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.severity in (ERROR, WARNING)]

    @property
    def partial(self) -> bool:
        return bool(self.failures or self.unread)

    @property
    def verdict(self) -> str:
        """``problems`` (something is wrong), ``ok`` (nothing wrong found), or
        ``incomplete`` (nothing wrong found in what was read, but part was not read)."""
        if self.problems:
            return "problems"
        return "incomplete" if self.partial else "ok"

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "topic": self.topic, "capture_ts": self.capture_ts,
                "capture_time": format_ms(self.capture_ts), "sample_s": (
                    round(self.sample_ms / 1000, 3) if self.sample_ms is not None else None),
                "verdict": self.verdict, "complete": not self.partial,
                "findings": [f.to_dict(i + 1) for i, f in enumerate(self.findings)],
                "checks": [c.to_dict() for c in self.checks], "summary": self.summary,
                "unread": dict(self.unread),
                "failures": [f.to_dict() for f in self.failures]}


__all__ = ["ERROR", "FOUND", "INFO", "NEEDS_SAMPLE", "NOT_APPLICABLE", "NOT_CHECKED", "OK",
           "SEVERITIES", "WARNING", "Check", "Diagnosis", "Evidence", "Finding", "Reading",
           "RetryTopic"]

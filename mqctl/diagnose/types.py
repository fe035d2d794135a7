"""The types of a diagnosis: what was read (:class:`Reading`), what was found
(:class:`Finding` with its :class:`Evidence`), what was checked (:class:`Check`) and the
result (:class:`Diagnosis`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.timeparse import format_ms

if TYPE_CHECKING:
    from mqctl.admin import BrokerFailure
    from mqctl.locks.types import LockView
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
# the finding of a check that needs two reads when one read is consistent with what it finds
SECOND_READ = "needs-second-read"

# One fact a finding rests on or accounts for, as a key: its kind, then what it is about (a
# client id, then topic, broker, queue id), e.g. ("flow-control", "c1", "T", "broker-a", 3).
# A finding ``shows`` the facts it was made from and ``explains`` the facts its cause would
# produce; an explained fact may be a prefix, ("behind", "T") standing for every queue of T.
Fact = tuple[str | int, ...]


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
    # what it rests on and what its cause accounts for (mqctl.diagnose.explain ranks by them)
    shows: frozenset[Fact] = frozenset()
    explains: frozenset[Fact] = frozenset()
    # set by the ranking: the ranks (1-based) of the findings that explain part of this one's
    # evidence, whether they explain all of it, the ranks this one explains, and the ranks of
    # findings that explain each other with it (a cycle: none of them is the other's effect)
    explained_by: tuple[int, ...] = ()
    fully_explained: bool = False
    consequences: tuple[int, ...] = ()
    mutual: tuple[int, ...] = ()

    @property
    def explanation(self) -> str | None:
        """``full`` (its evidence is what the findings it is explained by produce),
        ``partial`` (some of it), or None (a cause of its own)."""
        if not self.explained_by:
            return None
        return "full" if self.fully_explained else "partial"

    def to_dict(self, rank: int) -> dict[str, Any]:
        return {"rank": rank, "code": self.code, "severity": self.severity,
                "explained_by": list(self.explained_by), "explanation": self.explanation,
                "explains": list(self.consequences), "explain_each_other": list(self.mutual),
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
    paused_by: str | None = None  # who paused it with `mqctl group pause` here, and when
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

    def explained(self, i: int) -> set[int]:
        """The ranks (1-based) of the findings the finding of rank ``i`` explains, directly or
        through the findings it explains."""
        out: set[int] = set()
        todo = list(self.findings[i - 1].consequences)
        while todo:
            r = todo.pop()
            if r not in out:
                out.add(r)
                todo.extend(self.findings[r - 1].consequences)
        return out

    @property
    def headline(self) -> str:
        """The verdict in one line, what a pager shows: the number of problems and the first
        cause by name (the findings it explains counted), the other causes by code; or that
        the first finding needs a second read (and the command that makes it)."""
        problems = self.problems
        infos = len(self.findings) - len(problems)
        if not problems:
            text = ("nothing wrong found" if not self.partial
                    else "nothing wrong found in what could be read")
            return text + (f" ({infos} note(s) above)" if infos else "")
        text = f"{len(problems)} problem(s) found" + (f", {infos} note(s)" if infos else "")
        first = self.findings[0]  # ranked: a cause, and a problem when there is one
        causes = [f for f in problems if not f.explained_by]
        if first.code == SECOND_READ:
            text += f"; needs a second read: {first.title}"
        else:
            text += (f"; {'cause' if len(causes) == 1 else f'first of {len(causes)} causes'}: "
                     f"{first.code}: {first.title}")
        n = len(self.explained(1))
        if n:
            text += f" (explains {n} other finding(s))"
        if first.mutual:
            text += " (explained together with " + ", ".join(
                f"#{r} {self.findings[r - 1].code}" for r in first.mutual) + ")"
        others = [f"#{i + 1} {f.code}" for i, f in enumerate(self.findings)
                  if f in causes and f is not first]
        if others:
            text += "; also " + ", ".join(others)
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "topic": self.topic, "capture_ts": self.capture_ts,
                "capture_time": format_ms(self.capture_ts), "sample_s": (
                    round(self.sample_ms / 1000, 3) if self.sample_ms is not None else None),
                "verdict": self.verdict, "headline": self.headline,
                "complete": not self.partial,
                "findings": [f.to_dict(i + 1) for i, f in enumerate(self.findings)],
                "checks": [c.to_dict() for c in self.checks], "summary": self.summary,
                "unread": dict(self.unread),
                "failures": [f.to_dict() for f in self.failures]}


__all__ = ["ERROR", "FOUND", "INFO", "NEEDS_SAMPLE", "NOT_APPLICABLE", "NOT_CHECKED", "OK",
           "SECOND_READ", "SEVERITIES", "WARNING", "Check", "Diagnosis", "Evidence", "Fact",
           "Finding", "Reading", "RetryTopic"]

"""A queue's result of a reset: its status (applied, verified, not-taken, ...) and what was read
of it; frozen (apply and verify give new ones), with the rule that says whether a reset took."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from mqctl.reset.types import QueuePlan


class Status(StrEnum):
    ALREADY = "already"  # at the target before apply: nothing sent
    APPLIED = "applied"  # the broker accepted it (before verify)
    VERIFIED = "verified"  # re-read: it took
    NOT_TAKEN = "not-taken"  # re-read: it did not take (e.g. live consumers overwrote it)
    UNVERIFIED = "unverified"  # the broker accepted it, but the re-read failed
    FAILED = "failed"  # the request failed (verify re-reads whether anything changed)
    NOT_SENT = "not-sent"  # an earlier request to the same broker failed, or an interrupt
    # sent, no answer before mqctl stopped (interrupt): may have changed; or, after verify,
    # accepted but nothing read proves whether it took (a fast consumer replays a rewind
    # between two reads)
    UNKNOWN = "unknown"
    # re-read: it reached the target, then something other than the group's own online
    # consumers moved it (another reset from another machine, an mqadmin): this run's change
    # no longer stands
    MOVED = "moved"


BAD = frozenset({Status.NOT_TAKEN, Status.UNVERIFIED, Status.FAILED, Status.NOT_SENT,
                 Status.UNKNOWN, Status.MOVED})


@dataclass(frozen=True, slots=True)
class QueueResult:
    plan: QueuePlan
    status: Status
    detail: str = ""
    now: int | None = None
    expected: int | None = None  # what the broker said it set, when it differs from the plan
    # while verify polled: the lowest offset read and when (ms after the first read began)
    lowest: int | None = None
    lowest_after_ms: int | None = None
    taken_after_ms: int | None = None  # the first read at which the queue had taken
    reached_after_ms: int | None = None  # the first read exactly at the target
    sent_ms: int | None = None  # mqctl clock when its request was sent (the legacy push)
    push_position: int | None = None  # the legacy push: 1 for the broker pushed first, ...
    # read in the group's own pull-with-commit window when verify ended: for this many
    # seconds of reads after its wait (server-side, forward target: _own_pull_window); None:
    # verify had no wait (--verify-wait 0)
    settled_s: float | None = None

    @property
    def goal(self) -> int:
        return self.plan.target if self.expected is None else self.expected

    def row(self) -> dict[str, Any]:
        return {"broker": self.plan.mq.broker_name, "queue_id": self.plan.mq.queue_id,
                "previous": self.plan.current, "target": self.plan.target,
                "expected": self.goal, "now": self.now, "lowest": self.lowest,
                "status": self.status.value, "detail": self.detail}

    def with_(self, **changes: Any) -> QueueResult:
        """A copy with ``changes`` (``r.with_(status=Status.VERIFIED)``)."""
        return replace(self, **changes)


def took(q: QueuePlan, now: int | None, goal: int | None = None) -> bool:
    """Did the reset take? Exact, or moved on from the target the way consumers do."""
    target = q.target if goal is None else goal
    if now is None:
        return False
    if now == target:
        return True
    if q.current is None:
        return now >= target
    if target < q.current:  # rewind: consumers re-consume from the target
        return target <= now < q.current
    return now >= target  # forward: nothing before the target can have been consumed


def summarize(results: Iterable[QueueResult]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in results:
        out[r.status.value] = out.get(r.status.value, 0) + 1
    return out

"""What changes: moves between two allocations, and a prediction against what clients report.

Pure functions over :class:`~mqctl.allocate.base.Allocation`; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mqctl.allocate.base import Allocation, Balance, distinct, java_key, mq_key
from mqctl.errors import UsageError
from mqctl.models import MessageQueue


@dataclass(frozen=True, slots=True)
class Move:
    """A queue changes owner. ``source`` ``None``: it had no consumer; ``target`` ``None``: it
    will have none."""

    queue: MessageQueue
    source: str | None
    target: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"queue": self.queue.to_dict(), "from": self.source, "to": self.target}


def compute_moves(before: Allocation, after: Allocation) -> list[Move]:
    """Every owner change, queue by queue in queue order.

    With one owner per queue this is one move per changed queue. When a queue has several
    owners (CONFIG, BROADCASTING), lost and gained owners are paired in id order and the rest
    become moves from or to nobody.
    """
    ob, oa = before.owners(), after.owners()
    moves: list[Move] = []
    for mq in sorted(set(ob) | set(oa), key=mq_key):
        b, a = ob.get(mq, []), oa.get(mq, [])
        if set(b) == set(a):
            continue
        lost = sorted(set(b) - set(a), key=java_key)
        gained = sorted(set(a) - set(b), key=java_key)
        for i in range(max(len(lost), len(gained), 1)):
            src = lost[i] if i < len(lost) else None
            dst = gained[i] if i < len(gained) else None
            if src is None and dst is None:
                continue
            moves.append(Move(mq, src, dst))
    return moves


@dataclass(frozen=True, slots=True)
class ConsumerDelta:
    consumer: str
    before: int | None   # None: not a member before
    after: int | None    # None: not a member after

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)

    def to_dict(self) -> dict[str, Any]:
        return {"consumer": self.consumer, "before": self.before, "after": self.after,
                "delta": self.delta}


@dataclass(frozen=True, slots=True)
class WhatIf:
    before: Allocation
    after: Allocation
    moves: tuple[Move, ...]
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def moved_queues(self) -> int:
        return len({m.queue for m in self.moves})

    def deltas(self) -> list[ConsumerDelta]:
        cb, ca = self.before.counts(), self.after.counts()
        ids = sorted(set(cb) | set(ca), key=java_key)
        return [ConsumerDelta(c, cb.get(c), ca.get(c)) for c in ids]

    def summary(self) -> dict[str, Any]:
        return {"movedQueues": self.moved_queues, "queues": len(self.after.queues),
                "before": {"strategy": self.before.strategy, **self.before.balance().to_dict(),
                           "unassigned": len(self.before.unassigned),
                           "idle": len(self.before.idle)},
                "after": {"strategy": self.after.strategy, **self.after.balance().to_dict(),
                          "unassigned": len(self.after.unassigned),
                          "idle": len(self.after.idle)},
                "added": list(self.added), "removed": list(self.removed)}


def apply_membership(consumers: Sequence[str], add: Iterable[str] = (),
                     remove: Iterable[str] = ()) -> list[str]:
    """The consumer list after ``--remove-consumer`` (every copy of the id) and
    ``--add-consumer`` (an id already present becomes a duplicate, as a pid collision would)."""
    out = list(consumers)
    for r in remove:
        if r not in out:
            members = ", ".join(distinct(sorted(out, key=java_key))) or "(none)"
            raise UsageError(f"--remove-consumer {r!r}: not a consumer of the group",
                             hint=f"members: {members}")
        out = [c for c in out if c != r]
    for a in add:
        if not a or not a.strip():
            raise UsageError("--add-consumer needs a non-empty client id",
                             hint="e.g. --add-consumer 10.0.0.9@9")
        out.append(a)
    return out


def balance_line(b: Balance) -> str:
    return f"min {b.min}, max {b.max}, spread {b.spread} over {b.consumers} consumer(s)"


# ----------------------------------------------------------------------- prediction vs live


@dataclass(frozen=True, slots=True)
class LiveDifference:
    """A queue whose predicted owner differs from the clients that report owning it."""

    queue: MessageQueue
    predicted: tuple[str, ...]
    reported: tuple[str, ...]

    @property
    def kind(self) -> str:
        if not self.reported:
            return "not owned by any client"
        if len(self.reported) > 1:
            return "owned by several clients"
        if not self.predicted:
            return "owned but predicted unassigned"
        return "owned by another client"

    def to_dict(self) -> dict[str, Any]:
        return {"queue": self.queue.to_dict(), "predicted": list(self.predicted),
                "reported": list(self.reported), "kind": self.kind}


def reported_owners(reports: Mapping[str, Iterable[MessageQueue]],
                    topics: Iterable[str]) -> dict[MessageQueue, list[str]]:
    """Queue -> clients whose running info lists it (only queues of ``topics``)."""
    wanted = set(topics)
    out: dict[MessageQueue, list[str]] = {}
    for cid in sorted(reports, key=java_key):
        for mq in reports[cid]:
            if mq.topic in wanted:
                out.setdefault(mq, []).append(cid)
    return out


def compare_with_reports(predicted: Allocation,
                         reports: Mapping[str, Iterable[MessageQueue]]) -> list[LiveDifference]:
    """Every queue where the prediction and the clients' own view disagree.

    ``reports`` maps each client that answered to the queues in its ``mqTable``; clients that
    did not answer should be left out (their queues would look unowned) and reported apart.
    """
    topics = {mq.topic for mq in predicted.queues}
    rep = reported_owners(reports, topics)
    pred = predicted.owners()
    out = []
    for mq in sorted(set(pred) | set(rep), key=mq_key):
        p = tuple(sorted(pred.get(mq, []), key=java_key))
        r = tuple(sorted(rep.get(mq, []), key=java_key))
        if set(p) != set(r):
            out.append(LiveDifference(mq, p, r))
    return out

"""The exporter's owner history: per group, what its rounds showed of its queues' owners (the
captures' half of the lag report's rebalance history), so that the rebalance, storm and
unowned series and the group health are the report's (:mod:`mqctl.laghealth`, the same rules
as ``transforms/rebalance.py`` and ``health.py``) over the rounds held.

Found round by round, as ``owner_track`` would over all the rounds: a group-topic round counts
only when some queue has an owner (or the group is offline); a queue whose owner was not read
is left out of it (its owner carried across); an owner change between two counted rounds is a
loss and a gain; a committed offset back with the same owner is a reset. Per queue only its
last known owner, its owner changes (runs without an owner are read from them) and its last
owned offset are kept; per group its changes and resets.

Bounded by time: what is older than ``horizon_ms`` before the latest round goes (twice the
storm window plus the longest round that is no storm yet: every storm that reaches into the
window, and the rounds that make it one, are held); a queue or group not seen for that long
is forgotten. The counts (``rebalances``, ``storms``) are over what is held, as the report's
are over its inputs. Until a group has two rounds held nothing can have changed hands yet:
those series are unknown (NaN), not 0.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mqctl.laghealth import (
    GAINED,
    LOST,
    RESET,
    Change,
    Event,
    GroupKey,
    GroupNow,
    HealthOptions,
    Queue,
    Verdict,
    judge_changes,
    unowned_intervals,
)

MIN_ROUNDS = 2  # a change needs two captures of the queue


@dataclass(slots=True)
class QueueOwners:
    last_ts: int = 0
    last_owner: str | None = None
    known: bool = False  # a round counted for it yet
    points: deque[tuple[int, str | None]] = field(default_factory=deque)  # owner changes
    owned: tuple[int, str] | None = None  # (committed offset, owner) of its last owned read
    seen_ts: int = 0


@dataclass(slots=True)
class GroupOwners:
    rounds: deque[int] = field(default_factory=deque)
    changes: deque[Change] = field(default_factory=deque)
    resets: deque[Event] = field(default_factory=deque)
    queues: dict[Queue, QueueOwners] = field(default_factory=dict)


class OwnerHistory:
    """``add`` each round's snapshot rows; :meth:`verdicts` for the group rows of a round."""

    def __init__(self, opts: HealthOptions | None = None, horizon_ms: int | None = None
                 ) -> None:
        self.opts = opts or HealthOptions()
        self.horizon_ms = (2 * self.opts.storm_window_ms + self.opts.storm_round_max_ms
                           if horizon_ms is None else horizon_ms)
        self.groups: dict[GroupKey, GroupOwners] = {}
        self._names: dict[str, str] = {}

    def held(self) -> int:
        """Owner changes, resets and queue points held over all groups."""
        return sum(len(g.changes) + len(g.resets) + sum(len(q.points) for q in g.queues.values())
                   for g in self.groups.values())

    def _name(self, v: Any) -> str | None:
        return None if v is None else self._names.setdefault(str(v), str(v))

    def add(self, capture_ts: int, rows: Iterable[dict[str, Any]]) -> None:
        """One round's snapshot rows (the queues read: a queue not read has no row, and its
        owner is carried across the gap as the report carries it)."""
        per: dict[tuple[Any, str, str], list[dict[str, Any]]] = {}
        for r in rows:
            per.setdefault((r.get("cluster"), str(r["group"]), str(r["topic"])), []).append(r)
        for (cluster, group, topic), rs in per.items():
            g = self.groups.setdefault((cluster, group), GroupOwners())
            if not g.rounds or g.rounds[-1] != capture_ts:
                g.rounds.append(capture_ts)
            some_owner = any(r.get("owner") is not None for r in rs)
            for r in rs:
                q: Queue = (cluster, group, topic, str(r["broker"]), int(r["queue_id"]))
                mem = g.queues.setdefault(q, QueueOwners())
                mem.seen_ts = capture_ts
                owner = self._name(r.get("owner"))
                self._reset(g, q, mem, capture_ts, owner, r.get("consumer_offset"))
                unread = owner is None and bool(r.get("owner_unknown"))
                if not unread and (some_owner or r.get("online") is False):
                    self._track(g, q, mem, capture_ts, owner)
        self._trim(capture_ts - self.horizon_ms)

    @staticmethod
    def _track(g: GroupOwners, q: Queue, mem: QueueOwners, ts: int, owner: str | None) -> None:
        """``owner_track`` then ``changes_from_track``, one counted round at a time."""
        if not mem.known:
            mem.points.append((ts, owner))
        elif owner != mem.last_owner:
            if owner is not None:
                g.changes.append(Change(ts, mem.last_ts, q, owner, GAINED))
            if mem.last_owner is not None:
                g.changes.append(Change(ts, mem.last_ts, q, mem.last_owner, LOST))
            mem.points.append((ts, owner))
        mem.known, mem.last_ts, mem.last_owner = True, ts, owner

    @staticmethod
    def _reset(g: GroupOwners, q: Queue, mem: QueueOwners, ts: int, owner: str | None,
               offset: Any) -> None:
        """``capture_resets``: the committed offset back since the last owned read, same
        owner (one event per round, group, topic and owner)."""
        if owner is None or offset is None:
            return
        if mem.owned is not None and offset < mem.owned[0] and owner == mem.owned[1]:
            ev = Event(ts, q[0], q[1], q[2], owner, RESET, 0, 0)
            if ev not in g.resets:
                g.resets.append(ev)
        mem.owned = (int(offset), owner)

    def _trim(self, cutoff: int) -> None:
        for k in list(self.groups):
            g = self.groups[k]
            while g.rounds and g.rounds[0] < cutoff:
                g.rounds.popleft()
            while g.changes and g.changes[0].ts < cutoff:
                g.changes.popleft()
            while g.resets and g.resets[0].ts < cutoff:
                g.resets.popleft()
            for q in [q for q, m in g.queues.items() if m.seen_ts < cutoff]:
                del g.queues[q]
            for m in g.queues.values():
                while len(m.points) >= 2 and m.points[1][0] < cutoff:
                    m.points.popleft()
            if not g.rounds:
                del self.groups[k]

    def verdicts(self, groups: Iterable[dict[str, Any]]) -> dict[GroupKey, Verdict | None]:
        """Per group row (``cluster, group, capture_ts, group_status_code, queues, online``)
        its verdict over the rounds held; None for a group with fewer than two."""
        out: dict[GroupKey, Verdict | None] = {}
        for row in groups:
            k = (row.get("cluster"), str(row["group"]))
            g = self.groups.get(k)
            if g is None or row.get("capture_ts") is None:
                continue
            if len(g.rounds) < MIN_ROUNDS:
                out[k] = None
                continue
            now = GroupNow(k[0], k[1], int(row["capture_ts"]), row.get("group_status_code"),
                           int(row.get("queues") or 0), row.get("online"))
            track = {q: list(m.points) for q, m in g.queues.items() if m.points}
            out[k] = judge_changes(list(g.changes), list(g.resets), unowned_intervals(track),
                                   [now], self.opts)[k]
        return out


def apply_verdicts(groups: list[dict[str, Any]], verdicts: dict[GroupKey, Verdict | None]
                   ) -> None:
    """The group rows with the report's health and its rebalance series: a group with too
    little history keeps its status's health and unknown rebalance series."""
    for g in groups:
        k = (g.get("cluster"), str(g["group"]))
        if k not in verdicts:
            continue
        v = verdicts[k]
        if v is None:
            for col in ("rebalances", "storms", "in_storm", "unowned_share"):
                g[col] = None
            continue
        g.update(rebalances=v.rebalances, storms=v.storms, in_storm=v.in_storm,
                 unowned_share=v.unowned_share, unowned_now=v.unowned_now,
                 health=v.health, health_code=v.health_code)


__all__ = ["OwnerHistory", "apply_verdicts"]

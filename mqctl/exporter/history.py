"""The exporter's owner history: per group, the owners and committed offsets of its queues in
its last rounds (the captures' half of the lag report's rebalance history), so that the
rebalance, storm and unowned series and the group health are the report's
(:mod:`mqctl.laghealth`, the same rules as ``transforms/rebalance.py`` and ``health.py``)
over the rounds held.

Bounded by time: a group keeps the rounds of the last ``horizon_ms`` before its latest one
(twice the storm window plus the longest round that is no storm yet: every storm that reaches
into the window, and the rounds that make it one, are held). The counts (``rebalances``,
``storms``) are over what is held, as the report's are over its inputs. Until a group has
two rounds held nothing can have changed hands yet: those series are unknown (NaN), not 0.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from mqctl.laghealth import GroupKey, GroupNow, HealthOptions, Obs, Verdict, judge

MIN_ROUNDS = 2  # a change needs two captures of the queue


class OwnerHistory:
    """``add`` each round's snapshot rows; :meth:`verdicts` for the group rows of a round."""

    def __init__(self, opts: HealthOptions | None = None) -> None:
        self.opts = opts or HealthOptions()
        self.horizon_ms = 2 * self.opts.storm_window_ms + self.opts.storm_round_max_ms
        self.groups: dict[GroupKey, deque[tuple[int, list[Obs]]]] = {}
        self._names: dict[str, str] = {}

    def held(self) -> int:
        """Observations held over all groups."""
        return sum(len(obs) for rounds in self.groups.values() for _, obs in rounds)

    def _name(self, v: Any) -> str | None:
        return None if v is None else self._names.setdefault(str(v), str(v))

    def add(self, capture_ts: int, rows: Iterable[dict[str, Any]]) -> None:
        """One round's snapshot rows (the queues read: a queue not read has no row, and its
        owner is carried across the gap as the report carries it)."""
        per: dict[GroupKey, list[Obs]] = {}
        for r in rows:
            o = Obs(r.get("cluster"), str(r["group"]), str(r["topic"]), str(r["broker"]),
                    int(r["queue_id"]), capture_ts, self._name(r.get("owner")),
                    bool(r.get("owner_unknown")), r.get("online"), r.get("consumer_offset"))
            per.setdefault((o.cluster, o.group), []).append(o)
        for k, obs in per.items():
            self.groups.setdefault(k, deque()).append((capture_ts, obs))
        for k in list(self.groups):
            rounds = self.groups[k]
            while rounds and rounds[0][0] < capture_ts - self.horizon_ms:
                rounds.popleft()
            if not rounds:
                del self.groups[k]

    def verdicts(self, groups: Iterable[dict[str, Any]]) -> dict[GroupKey, Verdict | None]:
        """Per group row (``cluster, group, capture_ts, group_status_code, queues, online``)
        its verdict over the rounds held; None for a group with fewer than two."""
        out: dict[GroupKey, Verdict | None] = {}
        for g in groups:
            k = (g.get("cluster"), str(g["group"]))
            rounds = self.groups.get(k)
            if not rounds or g.get("capture_ts") is None:
                continue
            now = GroupNow(k[0], k[1], int(g["capture_ts"]), g.get("group_status_code"),
                           int(g.get("queues") or 0), g.get("online"))
            obs = [o for _, part in rounds for o in part]
            v = judge(obs, [now], self.opts)[k]
            out[k] = v if len(rounds) >= MIN_ROUNDS else None
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

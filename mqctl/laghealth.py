"""The lag report's rebalance and health rules in plain Python, over owner observations held in
memory (``mqctl exporter`` keeps its last rounds): owner changes between captures, offset
resets, unowned intervals, rebalance events, rounds, storms, and the group health that counts
them with the status.

The Spark job computes the same over DataFrames: ``mqctl.lagjob.transforms.rebalance``
(``owner_track``, ``changes_from_track``, ``unowned_from_track``, ``capture_resets``,
``mark_resets``, ``drop_reset_gaps``, ``rebalance_events``, ``rebalance_rounds``,
``rebalance_storms``), ``...status.with_rebalances`` and ``...health.group_health``, from
captures (the exporter reads no client logs, so only the capture half applies).
tests/laghealth_reference.py restates those transforms row by row; tests/test_laghealth.py
checks this module against it on random histories without Spark, and
tests/lagjob/test_laghealth_spark.py the Spark transforms against the same reference.

A round groups a group's events closer than one RebalanceService interval (20 s) to each
other (``RebalanceService``, ``rocketmq.client.rebalance.waitInterval``); a storm is
``storm_rounds`` rounds starting within ``storm_window_ms`` or one round longer than
``storm_round_max_ms`` (docs/lag-rules.md). Light: no pyspark, no pyarrow.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from mqctl.lagstatus import HEALTH_CODE, STATUS_HEALTH, STATUSES

Queue = tuple[Any, str, str, str, int]  # cluster, group, topic, broker, queue id
GroupKey = tuple[Any, str]  # cluster, group
GAINED, LOST, REBALANCE, RESET = "gained", "lost", "rebalance", "reset"
RESET_WINDOW_MS = 30_000  # transforms.rebalance.RESET_WINDOW_MS


@dataclass(frozen=True, slots=True)
class HealthOptions:
    """The report's rebalance options (their defaults: ``mqctl.lagoptions.Options``)."""

    round_gap_ms: int = 20_000
    storm_rounds: int = 3
    storm_window_ms: int = 600_000
    storm_round_max_ms: int = 60_000
    unowned_max: float = 0.1
    reset_window_ms: int = RESET_WINDOW_MS


@dataclass(frozen=True, slots=True)
class Obs:
    """One queue at one capture: its owner (None: none, or not read when ``owner_unknown``),
    whether the group was online, the committed offset."""

    cluster: Any
    group: str
    topic: str
    broker: str
    queue_id: int
    ts: int
    owner: str | None
    owner_unknown: bool = False
    online: bool | None = None
    offset: int | None = None

    @property
    def queue(self) -> Queue:
        return (self.cluster, self.group, self.topic, self.broker, self.queue_id)


@dataclass(frozen=True, slots=True)
class Change:
    ts: int
    window_start_ts: int
    queue: Queue
    client: str
    change: str
    cause: str = REBALANCE


@dataclass(frozen=True, slots=True)
class Event:
    ts: int
    cluster: Any
    group: str
    topic: str
    client: str
    cause: str
    n_gained: int
    n_lost: int


@dataclass(frozen=True, slots=True)
class Interval:
    queue: Queue
    since_ts: int | None
    start_ts: int
    end_ts: int | None


@dataclass(frozen=True, slots=True)
class Round:
    start_ts: int
    end_ts: int
    events: int


@dataclass(frozen=True, slots=True)
class Storm:
    start_ts: int
    end_ts: int
    rounds: int
    events: int
    rule: str


Track = dict[Queue, list[tuple[int, str | None]]]


def owner_track(obs: Iterable[Obs]) -> Track:
    """Per queue, (capture, owner) where ownership is known (``owner_track``): a queue whose
    owner was not read is left out of that capture; a group-topic capture counts only when
    some queue has an owner there, or the group is offline."""
    kept = [o for o in obs if not (o.owner is None and o.owner_unknown)]
    owned = {(o.cluster, o.group, o.topic, o.ts) for o in kept if o.owner is not None}
    track: Track = defaultdict(list)
    for o in kept:
        if (o.cluster, o.group, o.topic, o.ts) in owned or o.online is False:
            track[o.queue].append((o.ts, o.owner))
    for pts in track.values():
        pts.sort(key=lambda p: p[0])
    return dict(track)


def capture_changes(track: Track) -> list[Change]:
    """The new owner gained the queue, the previous one lost it (``changes_from_track``)."""
    out = []
    for q, pts in track.items():
        for (pts_, before), (ts, now) in pairwise(pts):
            if now == before:
                continue
            if now is not None:
                out.append(Change(ts, pts_, q, now, GAINED))
            if before is not None:
                out.append(Change(ts, pts_, q, before, LOST))
    return out


def unowned_intervals(track: Track) -> list[Interval]:
    """Runs of consecutive known captures without an owner (``unowned_from_track``): from the
    first such capture to the capture that shows an owner again (None: still unowned)."""
    out = []
    for q, pts in track.items():
        i = 0
        while i < len(pts):
            if pts[i][1] is not None:
                i += 1
                continue
            j = i
            while j + 1 < len(pts) and pts[j + 1][1] is None:
                j += 1
            out.append(Interval(q, pts[i - 1][0] if i else None, pts[i][0],
                                pts[j + 1][0] if j + 1 < len(pts) else None))
            i = j + 1
    return out


def capture_resets(obs: Iterable[Obs]) -> list[Event]:
    """A committed offset that went back between two captures with the same owner
    (``capture_resets``): one reset event per capture, group, topic and owner."""
    per: dict[Queue, list[Obs]] = defaultdict(list)
    for o in obs:
        if o.owner is not None and o.offset is not None:
            per[o.queue].append(o)
    keys = set()
    for rows in per.values():
        rows.sort(key=lambda o: o.ts)
        for a, b in pairwise(rows):
            if b.offset < a.offset and b.owner == a.owner:  # type: ignore[operator]
                keys.add((b.ts, b.cluster, b.group, b.topic, b.owner))
    return [Event(ts, c, g, t, str(cl), RESET, 0, 0) for ts, c, g, t, cl in sorted(
        keys, key=lambda k: tuple("" if v is None else str(v) for v in k))]


def mark_resets(changes: Sequence[Change], resets: Sequence[Event],
                window_ms: int = RESET_WINDOW_MS) -> list[Change]:
    """A queue's loss and re-gain by the same client around a reset of that client (from
    ``window_ms`` before the loss's window to ``window_ms`` after the gain) is the reset's
    drop-and-re-add, cause ``reset`` (``mark_resets``)."""
    at: dict[tuple[Any, str, str], list[int]] = defaultdict(list)
    for r in resets:
        at[(r.cluster, r.group, r.client)].append(r.ts)
    per: dict[Queue, list[Change]] = defaultdict(list)
    for c in changes:
        per[c.queue].append(c)
    marks: set[tuple[Queue, str, int, str]] = set()
    for q, cs in per.items():
        cs = sorted(cs, key=lambda c: (c.ts, c.change != LOST))
        for a, b in pairwise(cs):
            if not (a.change == LOST and b.change == GAINED and a.client == b.client):
                continue
            lo, hi = a.window_start_ts - window_ms, b.ts + window_ms
            if any(lo <= t <= hi for t in at.get((q[0], q[1], a.client), ())):
                marks |= {(q, a.client, a.ts, LOST), (q, a.client, b.ts, GAINED)}
    return [Change(c.ts, c.window_start_ts, c.queue, c.client, c.change, RESET)
            if (c.queue, c.client, c.ts, c.change) in marks else c for c in changes]


def drop_reset_gaps(intervals: Sequence[Interval], changes: Sequence[Change]
                    ) -> list[Interval]:
    """Unowned intervals that start at a reset's loss of the queue are no gap."""
    gaps = {(c.queue, c.ts) for c in changes if c.cause == RESET and c.change == LOST}
    return [i for i in intervals if (i.queue, i.start_ts) not in gaps]


def rebalance_events(changes: Sequence[Change]) -> list[Event]:
    """One event per moment, group, topic, client and cause: the queues gained and lost."""
    acc: dict[tuple[int, Any, str, str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for c in changes:
        k = (c.ts, c.queue[0], c.queue[1], c.queue[2], c.client, c.cause)
        acc[k][0 if c.change == GAINED else 1] += 1
    return [Event(ts, cl, g, t, client, cause, n[0], n[1])
            for (ts, cl, g, t, client, cause), n in acc.items()]


def rebalance_rounds(events: Iterable[Event], gap_ms: int) -> dict[GroupKey, list[Round]]:
    """A group's events (resets are no rebalance) closer than ``gap_ms`` to the previous one
    are one round."""
    per: dict[GroupKey, list[int]] = defaultdict(list)
    for e in events:
        if e.cause != RESET:
            per[(e.cluster, e.group)].append(e.ts)
    out: dict[GroupKey, list[Round]] = {}
    for k, ts in per.items():
        ts.sort()
        rounds: list[list[int]] = []
        for t in ts:
            if rounds and t - rounds[-1][-1] <= gap_ms:
                rounds[-1].append(t)
            else:
                rounds.append([t])
        out[k] = [Round(r[0], r[-1], len(r)) for r in rounds]
    return out


def rebalance_storms(rounds: Sequence[Round], min_rounds: int, window_ms: int,
                     round_max_ms: int = 0) -> list[Storm]:
    """One group's storms: ``min_rounds`` rounds starting within ``window_ms`` (rule
    ``rounds``), or one round longer than ``round_max_ms`` (``long-round``; 0: off);
    overlapping periods are one storm."""
    rs = sorted(rounds, key=lambda r: r.start_ts)
    trig: list[tuple[int, int, str]] = []
    for r in rs:
        frame = [x.start_ts for x in rs if r.start_ts - window_ms <= x.start_ts <= r.start_ts]
        if len(frame) >= min_rounds:
            trig.append((min(frame), r.end_ts, "rounds"))
    if round_max_ms > 0:
        trig += [(r.start_ts, r.end_ts, "long-round") for r in rs
                 if r.end_ts - r.start_ts > round_max_ms]
    spans: list[list[Any]] = []
    for s, e, rule in sorted(trig):
        if spans and s <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], e)
            spans[-1][2].add(rule)
        else:
            spans.append([s, e, {rule}])
    out = []
    for s, e, rules in spans:
        inside = [r for r in rs if s <= r.start_ts <= e]
        out.append(Storm(s, e, len(inside), sum(r.events for r in inside),
                         "+".join(sorted(rules))))
    return out


@dataclass(frozen=True, slots=True)
class GroupNow:
    """A group at its latest capture: what ``group_health`` reads of it."""

    cluster: Any
    group: str
    capture_ts: int
    status_code: int | None
    queues: int
    online: bool | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """``health.HEALTH_COLUMNS`` (the reason apart) and the group's rebalance event count."""

    rebalances: int
    storms: int
    in_storm: bool
    storm_start_ts: int | None
    storm_end_ts: int | None
    storm_rounds: int | None
    storm_events: int | None
    storm_rule: str | None
    unowned_ms: int
    unowned_share: float | None
    unowned_now: int
    health_code: int | None
    health: str | None = field(init=False)

    def __post_init__(self) -> None:
        names = {v: k for k, v in HEALTH_CODE.items()}
        object.__setattr__(self, "health", names.get(self.health_code)
                           if self.health_code is not None else None)


def _unowned_ms(intervals: Sequence[Interval], lo: int, hi: int) -> tuple[int, int]:
    """(queue time unowned in [lo, hi], queues unowned at ``hi``): each queue's intervals
    clipped to the window, overlapping ones counted once."""
    per: dict[Queue, list[tuple[int, int]]] = defaultdict(list)
    now: set[Queue] = set()
    for i in intervals:
        end = hi if i.end_ts is None else i.end_ts
        per[i.queue].append((max(i.start_ts, lo), min(end, hi)))
        if i.start_ts <= hi and (i.end_ts is None or i.end_ts > hi):
            now.add(i.queue)
    total = 0
    for spans in per.values():
        spans.sort()
        a0, reach = spans[0]
        for a, b in spans[1:]:
            if a > reach:
                total += max(reach - a0, 0)
                a0 = a
            reach = max(reach, b)
        total += max(reach - a0, 0)
    return total, len(now)


def group_health(g: GroupNow, storms: Sequence[Storm], intervals: Sequence[Interval],
                 rebalances: int, opts: HealthOptions) -> Verdict:
    """``group_health``: ERR in a storm reaching into the last ``storm_window_ms`` before the
    group's latest capture, or (not offline) at ``unowned_max`` of its queue time unowned in
    that window; else the status's health (OK, WARN, ERR; None: not judged)."""
    window = opts.storm_window_ms
    lo = g.capture_ts - window
    rec = [s for s in storms if s.end_ts >= lo]
    unowned_ms, now = _unowned_ms(intervals, lo, g.capture_ts) if intervals else (0, 0)
    share = min(unowned_ms / (g.queues * float(max(1, window))), 1.0) if g.queues > 0 else None
    base = None if g.status_code is None else HEALTH_CODE[STATUS_HEALTH[STATUSES[
        g.status_code]]]
    bad = g.online is not False and (share or 0.0) >= opts.unowned_max and unowned_ms > 0
    rules = sorted({p for s in rec for p in s.rule.split("+")})
    return Verdict(
        rebalances=rebalances, storms=len(storms), in_storm=bool(rec),
        storm_start_ts=min((s.start_ts for s in rec), default=None),
        storm_end_ts=max((s.end_ts for s in rec), default=None),
        storm_rounds=sum(s.rounds for s in rec) if rec else None,
        storm_events=sum(s.events for s in rec) if rec else None,
        storm_rule="+".join(rules) if rec else None, unowned_ms=unowned_ms,
        unowned_share=share, unowned_now=now,
        health_code=HEALTH_CODE["ERR"] if rec or bad else base)


def judge(obs: Sequence[Obs], groups: Iterable[GroupNow], opts: HealthOptions
          ) -> dict[GroupKey, Verdict]:
    """Every group's verdict from the owner observations (the captures' half of the report's
    rebalance history, then its health)."""
    track = owner_track(obs)
    return judge_changes(capture_changes(track), capture_resets(obs), unowned_intervals(track),
                         groups, opts)


def judge_changes(changes: Sequence[Change], resets: Sequence[Event],
                  intervals: Sequence[Interval], groups: Iterable[GroupNow],
                  opts: HealthOptions) -> dict[GroupKey, Verdict]:
    """:func:`judge` from the owner changes, capture resets and unowned intervals already
    found (the exporter finds them round by round: :mod:`mqctl.exporter.history`)."""
    if resets:
        changes = mark_resets(changes, resets, opts.reset_window_ms)
        intervals = drop_reset_gaps(intervals, changes)
    events = rebalance_events(changes)
    counts: dict[GroupKey, int] = defaultdict(int)
    for e in events:
        if e.cause != RESET:
            counts[(e.cluster, e.group)] += 1
    rounds = rebalance_rounds(events, opts.round_gap_ms)
    per_group: dict[GroupKey, list[Interval]] = defaultdict(list)
    for i in intervals:
        per_group[(i.queue[0], i.queue[1])].append(i)
    out = {}
    for g in groups:
        k = (g.cluster, g.group)
        storms = rebalance_storms(rounds.get(k, []), opts.storm_rounds, opts.storm_window_ms,
                                  opts.storm_round_max_ms)
        out[k] = group_health(g, storms, per_group.get(k, []), counts.get(k, 0), opts)
    return out


__all__ = ["Change", "Event", "GroupNow", "HealthOptions", "Interval", "Obs", "Round", "Storm",
           "Verdict", "capture_changes", "capture_resets", "drop_reset_gaps", "group_health",
           "judge", "judge_changes", "mark_resets", "owner_track", "rebalance_events",
           "rebalance_rounds",
           "rebalance_storms", "unowned_intervals"]

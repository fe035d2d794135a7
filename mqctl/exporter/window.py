"""The exporter's memory: per queue, its last ``window`` judged samples (the status window of
the lag report's ``--window``) and as many (time, max offset) points for the time lag; nothing
else, so memory is bounded by queues x window. Each round's snapshot rows (the canonical rows
of ``mqctl snapshot``, :func:`mqctl.snapshot.rows_of`) go in; per-queue rows with the lag
report's columns (lag, time lag, status, complete, rates) come out.

A queue that was not read this round (its broker or its group did not answer) keeps its
window and is given as unknown (lag, time lag, status null): never its last value as fresh.
A queue that is gone from a group that answered in full (a topic deleted, a subscription
dropped) is forgotten.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mqctl.lagstatus import Sample, queue_status, time_lag

QueueKey = tuple[str, str, str, int]  # group, topic, broker, queue id


@dataclass(slots=True)
class QueueMemory:
    samples: deque[Sample]
    points: deque[tuple[int, int]]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RoundRead:
    """What a round read: the snapshot rows, the groups not read at all, and per group the
    brokers that did not answer (their queues are unknown this round)."""

    capture_ts: int
    rows: list[dict[str, Any]]
    group_errors: frozenset[str] = frozenset()
    broker_failures: dict[str, frozenset[str]] = field(default_factory=dict)


class QueueWindows:
    """Per queue: the window of judged samples and the max-offset points (both at most
    ``window`` long; the points at least 2, to interpolate between)."""

    def __init__(self, window: int, allowed_lag: int = 0, allowed_lag_seconds: float = 10.0
                 ) -> None:
        self.window = max(1, int(window))
        self.allowed_lag = allowed_lag
        self.allowed_lag_seconds = allowed_lag_seconds
        self.queues: dict[QueueKey, QueueMemory] = {}

    def __len__(self) -> int:
        return len(self.queues)

    def samples_held(self) -> int:
        return sum(len(m.samples) + len(m.points) for m in self.queues.values())

    def _memory(self, key: QueueKey) -> QueueMemory:
        m = self.queues.get(key)
        if m is None:
            m = QueueMemory(deque(maxlen=self.window), deque(maxlen=max(2, self.window)))
            self.queues[key] = m
        return m

    def update(self, read: RoundRead) -> list[dict[str, Any]]:
        """Take one round's rows in; the per-queue rows of this round (read or unknown)."""
        out: list[dict[str, Any]] = []
        seen: set[QueueKey] = set()
        for r in read.rows:
            key = (str(r["group"]), str(r["topic"]), str(r["broker"]), int(r["queue_id"]))
            seen.add(key)
            out.append(self._one(key, r, read.capture_ts))
        for key in list(self.queues):
            if key in seen:
                continue
            group, _, broker, _ = key
            if group in read.group_errors or broker in read.broker_failures.get(group, ()):
                out.append(unknown_row(key, self.queues[key].meta, read.capture_ts))
            else:
                del self.queues[key]
        return out

    def _one(self, key: QueueKey, r: dict[str, Any], ts: int) -> dict[str, Any]:
        m = self._memory(key)
        b, c, lag = r.get("broker_offset"), r.get("consumer_offset"), r.get("lag")
        if b is not None:
            m.points.append((ts, int(b)))
        tl = time_lag(lag, c, r.get("delay_ms"), ts, list(m.points))
        members = r.get("members")
        sample = Sample(ts, c, b, lag, online=r.get("online"),
                        consume_enable=r.get("consume_enable"), lag_seconds=tl.seconds,
                        lower_bound=tl.lower_bound)
        history = [*m.samples, sample]
        v = queue_status(history, self.window, self.allowed_lag, self.allowed_lag_seconds)
        if sample.judged:
            m.samples.append(sample)
        m.meta = {"cluster": r.get("cluster"), "consume_type": r.get("consume_type"),
                  "message_model": r.get("message_model")}
        return {**key_cols(key), **m.meta, "capture_ts": ts, "lag": lag,
                "committed": r.get("committed"), "lag_seconds": tl.seconds,
                "lag_seconds_source": tl.source,
                "estimated": tl.estimated if tl.seconds is not None else None,
                "status": v.status, "complete": v.complete, "window_samples": v.window_samples,
                "consume_rate": v.consume_rate, "produce_rate": v.produce_rate,
                "online": r.get("online"),
                "members": len(members) if isinstance(members, list) else None,
                "owner": r.get("owner"), "owner_unknown": bool(r.get("owner_unknown")),
                "read": True}


def key_cols(key: QueueKey) -> dict[str, Any]:
    return {"group": key[0], "topic": key[1], "broker": key[2], "queue_id": key[3]}


def unknown_row(key: QueueKey, meta: dict[str, Any], ts: int) -> dict[str, Any]:
    """A queue that was not read this round: every value unknown."""
    return {**key_cols(key), **meta, "capture_ts": ts, "lag": None, "committed": None,
            "lag_seconds": None, "lag_seconds_source": "unknown", "estimated": None,
            "status": None, "complete": None, "window_samples": None, "consume_rate": None,
            "produce_rate": None, "online": None, "members": None, "owner": None,
            "owner_unknown": True, "read": False}


def groups_of(rows: Iterable[dict[str, Any]]) -> set[str]:
    return {str(r["group"]) for r in rows}

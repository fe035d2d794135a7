"""A queue's message log, as a function of time (no messages are materialised).

Production is piecewise constant: segments ``(t0_ms, offset0, rate_per_s)``. The first
segment is the history the queue already holds at start; later ones come from rate changes.
From the segments follow the max offset at any time and the store timestamp of any offset,
which is all that offset search, time spans and time lag need
(``ConsumeQueue.getOffsetInQueueByTime`` does a binary search over store timestamps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Segment:
    t0: int
    o0: int
    rate: float  # messages per second


class QueueLog:
    def __init__(self, min_offset: int, start_ms: int, initial_max: int, history_ms: int,
                 rate: float):
        self.min_offset = min_offset
        count = max(0, initial_max - min_offset)
        self.segments: list[Segment] = []
        if count > 0:
            span = max(1, history_ms)
            # `count` messages spread evenly over [start - history, start)
            self.segments.append(Segment(start_ms - span, min_offset, count * 1000.0 / span))
        self.segments.append(Segment(start_ms, initial_max, rate))
        self._frozen_max: int | None = None

    @classmethod
    def from_rate(cls, min_offset: int, start_ms: int, history_ms: int, rate: float,
                  initial_max: int | None = None) -> QueueLog:
        mx = initial_max if initial_max is not None else min_offset + int(
            rate * history_ms / 1000)
        return cls(min_offset, start_ms, max(mx, min_offset), history_ms, rate)

    def set_rate(self, at_ms: int, rate: float) -> None:
        o = self.max_offset(at_ms)
        self.segments.append(Segment(at_ms, o, rate))

    def _segment_at(self, t: int) -> Segment:
        seg = self.segments[0]
        for s in self.segments:
            if s.t0 <= t:
                seg = s
            else:
                break
        return seg

    def max_offset(self, now: int) -> int:
        """The next offset to be written (``GET_MAX_OFFSET``)."""
        if now < self.segments[0].t0:
            return self.min_offset
        seg = self._segment_at(now)
        idx = self.segments.index(seg)
        o = seg.o0 + int(math.floor(seg.rate * (now - seg.t0) / 1000.0 + 1e-9))
        if idx + 1 < len(self.segments):
            o = min(o, self.segments[idx + 1].o0)
        return max(o, self.min_offset)

    def store_ts(self, offset: int) -> int:
        """Store time (ms) of the message at ``offset`` (must be < max offset)."""
        seg = self.segments[0]
        for i, s in enumerate(self.segments):
            nxt = self.segments[i + 1].o0 if i + 1 < len(self.segments) else None
            if s.o0 <= offset and (nxt is None or offset < nxt):
                seg = s
                break
        if seg.rate <= 0:
            return seg.t0
        return seg.t0 + int(math.ceil((offset - seg.o0) * 1000.0 / seg.rate - 1e-9))

    def earliest_ts(self, now: int) -> int:
        return self.store_ts(self.min_offset) if self.max_offset(now) > self.min_offset else 0

    def search(self, ts: int, now: int, boundary: str = "LOWER") -> int:
        """``SEARCH_OFFSET_BY_TIMESTAMP``: LOWER = first offset stored at or after ``ts``
        (all older -> max offset; all newer -> min offset); UPPER = last offset stored at or
        before ``ts`` (all newer -> 0)."""
        lo, hi = self.min_offset, self.max_offset(now)
        if hi <= lo:
            return lo if boundary != "UPPER" else 0
        if boundary == "UPPER":
            if self.store_ts(lo) > ts:
                return 0
            a, b = lo, hi - 1
            while a < b:  # last o with ts(o) <= ts
                mid = (a + b + 1) // 2
                if self.store_ts(mid) <= ts:
                    a = mid
                else:
                    b = mid - 1
            return a
        a, b = lo, hi
        while a < b:  # first o with ts(o) >= ts
            mid = (a + b) // 2
            if self.store_ts(mid) >= ts:
                b = mid
            else:
                a = mid + 1
        return a

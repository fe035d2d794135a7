"""A queue's message log, as a function of time (no messages are materialised).

A queue holds, in offset order:

* optionally, explicit messages with given store timestamps (``store_times`` in a scenario);
  each becomes visible when the simulated clock reaches its store time;
* then production that is piecewise constant: segments ``(t0_ms, offset0, rate_per_s)``. The
  first segment is usually the history the queue already holds at start; later ones come from a
  delayed start or rate changes.

From these follow the max offset at any time and the store timestamp of any offset, which is
all that offset search, time spans and time lag need (``ConsumeQueue.getOffsetInQueueByTime``
does a binary search over store timestamps; ``DefaultMessageStore.getMessageStoreTimeStamp``
answers -1 for an offset it does not hold).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Segment:
    t0: int
    o0: int
    rate: float  # messages per second


class QueueLog:
    def __init__(self, min_offset: int, start_ms: int, initial_max: int, history_ms: int,
                 rate: float, *, rate_start_ms: int | None = None,
                 store_times: Sequence[int] = ()):
        self.min_offset = min_offset
        self.explicit: list[int] = list(store_times)
        self.segments: list[Segment] = []
        if self.explicit:
            # explicit messages first; production (if any) continues after the last of them
            o0 = min_offset + len(self.explicit)
            t0 = max(self.explicit[-1], start_ms if rate_start_ms is None else rate_start_ms)
            self.segments.append(Segment(t0, o0, rate))
            return
        count = max(0, initial_max - min_offset)
        if count > 0:
            span = max(1, history_ms)
            # `count` messages spread evenly over [start - history, start)
            self.segments.append(Segment(start_ms - span, min_offset, count * 1000.0 / span))
        if rate_start_ms is not None and rate_start_ms > start_ms:
            self.segments.append(Segment(start_ms, initial_max, 0.0))  # quiet until it starts
            self.segments.append(Segment(rate_start_ms, initial_max, rate))
        else:
            self.segments.append(Segment(start_ms, initial_max, rate))

    @classmethod
    def from_rate(cls, min_offset: int, start_ms: int, history_ms: int, rate: float,
                  initial_max: int | None = None, *, rate_start_ms: int | None = None,
                  store_times: Sequence[int] = ()) -> QueueLog:
        mx = initial_max if initial_max is not None else min_offset + int(
            rate * history_ms / 1000)
        return cls(min_offset, start_ms, max(mx, min_offset), history_ms, rate,
                   rate_start_ms=rate_start_ms, store_times=store_times)

    def set_rate(self, at_ms: int, rate: float) -> None:
        at_ms = max(at_ms, self.segments[-1].t0)
        self.segments.append(Segment(at_ms, self.max_offset(at_ms), rate))

    def append(self, now: int, n: int) -> None:
        """``n`` messages stored at ``now`` (messages sent back to a retry or dead-letter
        topic): production so far stops at ``now``, the ``n`` messages follow with store time
        ``now``, and production continues after them at the same rate."""
        if n <= 0:
            return
        last = self.segments[-1]
        now = max(now, last.t0)
        if (len(self.segments) >= 2 and last.t0 == now and self.segments[-2].t0 == now
                and self.segments[-2].rate == 0.0):
            last.o0 += n  # another batch of the same instant
            return
        cur = self.max_offset(now)
        self.segments.append(Segment(now, cur, 0.0))
        self.segments.append(Segment(now, cur + n, last.rate))

    def _segment_at(self, t: int) -> int:
        """The last segment that started at or before ``t`` (the first when none did)."""
        return max(0, bisect.bisect_right(self.segments, t, key=lambda s: s.t0) - 1)

    def max_offset(self, now: int) -> int:
        """The next offset to be written (``GET_MAX_OFFSET``)."""
        first = self.segments[0]
        if now < first.t0:
            if self.explicit:
                return self.min_offset + bisect.bisect_right(self.explicit, now)
            return self.min_offset
        idx = self._segment_at(now)
        seg = self.segments[idx]
        o = seg.o0 + int(math.floor(seg.rate * (now - seg.t0) / 1000.0 + 1e-9))
        if idx + 1 < len(self.segments):
            o = min(o, self.segments[idx + 1].o0)
        return max(o, self.min_offset)

    def store_ts(self, offset: int) -> int:
        """Store time (ms) of the message at ``offset`` (must be in [min, max))."""
        k = offset - self.min_offset
        if 0 <= k < len(self.explicit):
            return self.explicit[k]
        seg = self.segments[0]
        for i, s in enumerate(self.segments):
            nxt = self.segments[i + 1].o0 if i + 1 < len(self.segments) else None
            if s.o0 <= offset and (nxt is None or offset < nxt):
                seg = s
                break
        if seg.rate <= 0:
            return seg.t0
        return seg.t0 + int(math.ceil((offset - seg.o0) * 1000.0 / seg.rate - 1e-9))

    def store_ts_or_missing(self, offset: int, now: int) -> int:
        """``getMessageStoreTimeStamp``: the store time, or -1 if the queue does not hold
        ``offset`` (below the min offset, at or beyond the max offset)."""
        if offset < self.min_offset or offset >= self.max_offset(now):
            return -1
        return self.store_ts(offset)

    def earliest_ts(self, now: int) -> int:
        """``getEarliestMessageTime``: store time of the first message, -1 if empty."""
        return self.store_ts(self.min_offset) if self.max_offset(now) > self.min_offset else -1

    def search_nearest(self, ts: int, now: int) -> int:
        """``SEARCH_OFFSET_BY_TIMESTAMP`` before 5.1.1 (4.x/5.0/5.1.0
        ``ConsumeQueue.getOffsetInQueueByTime``, no boundary): a binary search that stops at
        the first probe stored exactly at ``ts``, else takes the nearer of the two last
        neighbours (the older on a tie); all newer -> the min offset; all older -> the LAST
        message (max - 1), not the max offset; an empty queue -> 0."""
        lo, hi = self.min_offset, self.max_offset(now) - 1
        if hi < lo:
            return 0
        left = right = -1
        left_ts = right_ts = -1
        while hi >= lo:
            mid = (lo + hi) // 2
            t = self.store_ts(mid)
            if t == ts:
                return mid
            if t > ts:
                hi, right, right_ts = mid - 1, mid, t
            else:
                lo, left, left_ts = mid + 1, mid, t
        if left_ts == -1:
            return right
        if right_ts == -1:
            return left
        return right if abs(ts - left_ts) > abs(ts - right_ts) else left

    def search(self, ts: int, now: int, boundary: str = "LOWER") -> int:
        """``SEARCH_OFFSET_BY_TIMESTAMP``: LOWER = first offset stored at or after ``ts``
        (all older -> max offset; all newer -> min offset); UPPER = last offset stored at or
        before ``ts`` (all newer -> 0). Equal timestamps: LOWER the first, UPPER the last."""
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

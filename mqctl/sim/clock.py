"""Simulated time: one clock and one event scheduler per cluster.

All time-driven behaviour (production, heartbeats, rebalances, lock renewals, commits,
crashes) is a scheduled callback on simulated time. Modes:

* ``manual``: time moves only when a test calls ``advance`` (deterministic);
* ``real``: simulated time is wall time;
* ``accelerated``: simulated time runs ``speed`` times faster than wall time.

Callbacks are plain functions run in time order; they mutate cluster state directly (no I/O),
so a simulation step is atomic with respect to the request handlers on the same event loop.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(order=True)
class _Event:
    due: int
    seq: int
    fn: Callable[[], None] = field(compare=False)
    period: int | None = field(default=None, compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


# The fastest accelerated clock (``sim up --speed``, a scenario's ``clock.speed``): 1000
# simulated seconds per wall second. Faster, the periodic events (heartbeats, consume ticks)
# due in one wall millisecond outgrow what one process can run (docs/scenario.md).
MAX_SPEED = 1000.0
MIN_SPEED = 0.001
# the most events one step of the driver runs before it yields to the event loop (signals,
# requests): a clock the sim cannot keep up with slows the sim, never stops it answering
STEP_EVENTS = 2000


class SimClock:
    def __init__(self, mode: str = "manual", speed: float = 1.0, start_ms: int | None = None):
        self.mode = mode
        self.speed = speed if mode == "accelerated" else 1.0
        self.start_ms = int(time.time() * 1000) if start_ms is None else start_ms
        self._manual = self.start_ms
        self._mono0 = time.monotonic()

    def now_ms(self) -> int:
        if self.mode == "manual":
            return self._manual
        elapsed = (time.monotonic() - self._mono0) * 1000 * self.speed
        return self.start_ms + int(elapsed)

    def elapsed_s(self) -> float:
        return (self.now_ms() - self.start_ms) / 1000

    def set_manual(self, t: int) -> None:
        if t > self._manual:
            self._manual = t

    def real_delay_s(self, sim_ms: int) -> float:
        """Wall seconds until ``sim_ms`` of simulated time pass (real/accelerated modes)."""
        return max(0.0, sim_ms / 1000 / self.speed)


class Scheduler:
    def __init__(self, clock: SimClock):
        self.clock = clock
        self._heap: list[_Event] = []
        self._seq = itertools.count()

    def call_at(self, due_ms: int, fn: Callable[[], None]) -> _Event:
        ev = _Event(int(due_ms), next(self._seq), fn)
        heapq.heappush(self._heap, ev)
        return ev

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> _Event:
        return self.call_at(self.clock.now_ms() + int(delay_ms), fn)

    def call_every(self, period_ms: int, fn: Callable[[], None], *,
                   first_delay_ms: int | None = None) -> _Event:
        ev = _Event(self.clock.now_ms() + int(period_ms if first_delay_ms is None
                                              else first_delay_ms),
                    next(self._seq), fn, int(period_ms))
        heapq.heappush(self._heap, ev)
        return ev

    def next_due(self) -> int | None:
        while self._heap and self._heap[0].cancelled:
            heapq.heappop(self._heap)
        return self._heap[0].due if self._heap else None

    def run_due(self, until_ms: int, limit: int | None = None) -> int:
        """Run every event due at or before ``until_ms`` in time order (at most ``limit``:
        the rest stay due). Returns the count."""
        n = 0
        while self._heap and (limit is None or n < limit):
            ev = self._heap[0]
            if ev.cancelled:
                heapq.heappop(self._heap)
                continue
            if ev.due > until_ms:
                break
            heapq.heappop(self._heap)
            if self.clock.mode == "manual":
                self.clock.set_manual(ev.due)
            ev.fn()
            n += 1
            if ev.period is not None and not ev.cancelled:
                ev.due += ev.period
                ev.seq = next(self._seq)
                heapq.heappush(self._heap, ev)
        return n

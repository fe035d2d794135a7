"""The lag report's per-queue rules in plain Python, for a queue's samples held in memory
(``mqctl exporter`` keeps the last ``--window`` of every queue): the status (Burrow's rules
adapted to RocketMQ, docs/lag-rules.md), the window's ``complete``, the rates between two
reads, and the time lag (exact, interpolated, lower bound or unknown).

The Spark job computes the same for every queue of a partition at once (the kernel,
``mqctl.lagjob.kernel.status`` and ``time_lag``); tests/lagjob/test_transforms.py checks the
job's status against the reference this module is checked against (tests/lagstatus_reference.py)
sample by sample on random histories, and tests/test_lagstatus.py checks the rules case by
case without Spark.

Burrow: linkedin/Burrow ``core/internal/evaluator/caching.go`` (1.9),
``calculatePartitionStatus``, ``checkIfOffsetsRewind``, ``checkIfRewindRecovered``,
``checkIfRecentLagZero``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# mqctl's severity order (docs/lag-rules.md: STOP worst; REWIND below STALL)
STATUSES = ("OK", "WARN", "REWIND", "STALL", "STOP")
SEVERITY = {s: i for i, s in enumerate(STATUSES)}
# status -> health (docs/lag-rules.md "Group health": REWIND, STALL and STOP are ERR)
STATUS_HEALTH = {"OK": "OK", "WARN": "WARN", "REWIND": "ERR", "STALL": "ERR", "STOP": "ERR"}
HEALTH_CODE = {"OK": 0, "WARN": 1, "ERR": 2}
# longer than any message is kept: the broker's "now - 0" of a never-committed queue
MAX_REAL_DELAY_MS = 10 * 365 * 86_400_000


@dataclass(frozen=True, slots=True)
class Sample:
    """One read of one queue: offsets, lag, membership (``online`` None: unknown),
    ``consume_enable`` (subscriptionGroup.json; None: unknown) and the time lag with whether
    it is only a lower bound (a lower bound proves nothing about being caught up)."""

    capture_ts: int
    consumer_offset: int | None
    broker_offset: int | None
    lag: int | None
    online: bool | None = None
    consume_enable: bool | None = None
    lag_seconds: float | None = None
    lower_bound: bool = False
    observed_ts: int | None = None

    @property
    def judged(self) -> bool:
        """In a status window: a known lag and a committed offset."""
        return self.lag is not None and self.consumer_offset is not None

    @property
    def at(self) -> int:
        return self.capture_ts if self.observed_ts is None else self.observed_ts


@dataclass(frozen=True, slots=True)
class Verdict:
    """A queue's status at a sample (None: unknown), ``complete`` (samples in its window /
    window), ``window_samples``, and the messages consumed and produced per second since the
    previous judged sample (None: no previous one, or no time between them)."""

    status: str | None
    complete: float | None = None
    window_samples: int | None = None
    consume_rate: float | None = None
    produce_rate: float | None = None


def caught_up(s: Sample, allowed_lag: int = 0, allowed_lag_seconds: float = 0.0) -> bool:
    """Burrow's ``lag <= allowed-lag``, or a time lag at most ``allowed_lag_seconds`` (not a
    lower bound): RocketMQ consumers commit every 5 s, so a healthy group trails the head."""
    if s.lag is not None and s.lag <= allowed_lag:
        return True
    return (allowed_lag_seconds > 0 and s.lag_seconds is not None and not s.lower_bound
            and s.lag_seconds <= allowed_lag_seconds)


def _online(s: Sample) -> bool | None:
    return False if s.consume_enable is False else s.online


def queue_status(history: Sequence[Sample], window: int, allowed_lag: int = 0,
                 allowed_lag_seconds: float = 0.0) -> Verdict:
    """The verdict at the last sample of ``history`` (one queue's samples in capture order;
    only its judged samples, the last ``window`` of them, count), in Burrow's order, while the
    sample is not caught up: STOP (offline, or with unknown membership the offset still over a
    full window while the lag grew, unless a max offset of the window is at or below the
    offset), REWIND (a decrease never recovered), OK (caught up in the window), STALL (the
    offset never moved), WARN (the lag never fell), else OK. A sample without a committed
    offset or lag is in no window: OK when its lag is within ``allowed_lag``, STOP when
    offline, else unknown."""
    cur = history[-1]
    if not cur.judged:
        if cur.lag is None:
            return Verdict(None)
        if cur.lag <= allowed_lag:
            return Verdict("OK")
        return Verdict("STOP" if _online(cur) is False else None)
    n_win = max(1, int(window))
    judged = [s for s in history if s.judged]
    win = judged[-n_win:]
    n = len(win)
    offs = [s.consumer_offset for s in win]
    lags = [s.lag for s in win]
    status = _status(cur, win, offs, lags, n_win, allowed_lag, allowed_lag_seconds)  # type: ignore[arg-type]
    rates: tuple[float | None, float | None] = (None, None)
    if len(judged) >= 2:
        prev = judged[-2]
        dt = (cur.at - prev.at) / 1000.0
        if dt > 0:
            rates = (max(int(cur.consumer_offset) - int(prev.consumer_offset or 0), 0) / dt,  # type: ignore[arg-type]
                     _rate(prev.broker_offset, cur.broker_offset, dt))
    return Verdict(status, n / n_win, n, *rates)


def _rate(before: int | None, after: int | None, dt: float) -> float | None:
    if before is None or after is None:
        return None
    return max(after - before, 0) / dt


def _status(cur: Sample, win: list[Sample], offs: list[int], lags: list[int], n_win: int,
            allowed_lag: int, allowed_lag_seconds: float) -> str:
    n = len(win)
    if caught_up(cur, allowed_lag, allowed_lag_seconds):
        return "OK"
    same = min(offs) == max(offs)
    online = _online(cur)
    recent_zero = any(s.broker_offset is not None and s.broker_offset <= offs[-1] for s in win)
    if online is False or (online is None and n == n_win and n >= 2 and same
                           and lags[-1] > lags[0] and not recent_zero):
        return "STOP"
    decs = [i for i in range(1, n) if offs[i] < offs[i - 1]]
    if decs and max(offs[decs[0]:]) < offs[decs[0] - 1]:
        return "REWIND"
    if any(caught_up(s, allowed_lag, allowed_lag_seconds) for s in win):
        return "OK"
    if n >= 2 and same:
        return "STALL"
    if n >= 2 and all(lags[i] >= lags[i - 1] for i in range(1, n)):
        return "WARN"
    return "OK"


def worst(statuses: Sequence[str | None]) -> str | None:
    """The most severe known status (None when none is known)."""
    known = [s for s in statuses if s is not None]
    return max(known, key=SEVERITY.__getitem__) if known else None


@dataclass(frozen=True, slots=True)
class TimeLag:
    """``seconds`` (None: unknown) and ``source``: exact | interpolated | lower_bound |
    unknown (docs/lag-rules.md "Lag and time lag")."""

    seconds: float | None
    source: str

    @property
    def estimated(self) -> bool:
        return self.source in ("interpolated", "lower_bound")

    @property
    def lower_bound(self) -> bool:
        return self.source == "lower_bound"


def time_lag(lag: int | None, consumer_offset: int | None, delay_ms: int | None,
             observed_ts: int, points: Sequence[tuple[int, int]]) -> TimeLag:
    """A queue's time lag at ``observed_ts``: 0 when caught up; the broker's ``delay_ms``
    (QUERY_CONSUME_TIME_SPAN) when it is one (not the ``now - 0`` of a never-committed
    queue); else from ``points`` (the queue's (time, max offset) reads up to now, oldest
    first), the expected store time of message ``C`` = ``consumer_offset`` between the last
    point with ``B0 <= C`` and the first with ``B1 > C``; a lower bound (now - first point)
    when every point is above ``C``; unknown without a committed offset or points."""
    if lag is None:
        return TimeLag(None, "unknown")
    if lag == 0:
        return TimeLag(0.0, "exact")
    if consumer_offset is None:
        return TimeLag(None, "unknown")
    if delay_ms is not None and 0 <= delay_ms <= MAX_REAL_DELAY_MS:
        return TimeLag(delay_ms / 1000.0, "exact")
    seg = _segment([p for p in points if p[0] <= observed_ts])
    c = consumer_offset
    below = [i for i, (_, b) in enumerate(seg) if b <= c]
    if below:
        i = below[-1]
        after = next(((t, b) for t, b in seg[i + 1:] if b > c), None)
        if after is not None:
            t0, b0 = seg[i]
            t1, b1 = after
            at = t0 + (c - b0 + 1) / (b1 - b0 + 1) * (t1 - t0)
            return TimeLag(max(observed_ts - at, 0.0) / 1000.0, "interpolated")
        return TimeLag(None, "unknown")
    if seg and observed_ts - seg[0][0] > 0:
        return TimeLag((observed_ts - seg[0][0]) / 1000.0, "lower_bound")
    return TimeLag(None, "unknown")


def _segment(points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The points after the last place the max offset went backwards (a broker replaced or
    its store wiped: an older segment says nothing about this one's messages)."""
    start = 0
    for i in range(1, len(points)):
        if points[i][1] < points[i - 1][1]:
            start = i
    return points[start:]

"""Time-lag accuracy: mqctl's anchored interpolation against the references it has to beat.

    python bench/lag_accuracy.py [--captures 240] [--seed 11]

Simulates queues message by message (store time of every offset known, so the true time lag of
a consumer offset is exact), takes a capture every minute (max offset, consumer offset, last
consumed store time), and estimates the time lag at each capture with:

* mqctl: the report's kernel (``mqctl/lagjob/kernel.py``, no Spark): interpolation between the
  captured points that bracket the consumer offset, over the whole captured history, a lower bound
  before the first capture, never an extrapolation;
* kafka-lag-exporter's lookup table (seglo/kafka-lag-exporter ``LookupTable.scala``,
  ``addPoint``/``lookup``): at most 60 (offset, time) points, flat runs compressed,
  interpolation inside, extrapolation from the first and last points outside, "too few points"
  under two; re-implemented here for the comparison;
* ``now - lastTimestamp`` (rocketmq-exporter style, the store time of the last consumed
  message): an upper bound.

Prints, per scenario, the mean and p95 absolute error in seconds and how many estimates each
method could not give (mqctl's lower bounds, for offsets older than the first capture, count
there and are checked apart: do they hold, how far below the truth), plus each method's mean
error divided by mqctl's over the captures where both give an estimate. Not run in CI.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CAPTURE_MS = 60_000
T0 = 1717200000000


@dataclass
class Capture:
    ts: int
    broker_offset: int
    consumer_offset: int
    last_ts: int | None
    truth_s: float  # exact time lag: now - store time of the first unconsumed message


def simulate(kind: str, captures: int, rng: random.Random) -> list[Capture]:
    """One queue, one group. Production per second follows the scenario; the consumer reads
    at its own pace (sometimes stops)."""
    store: list[int] = []  # store time (ms) of each offset
    consumed = 0
    out: list[Capture] = []
    seconds = captures * CAPTURE_MS // 1000
    for sec in range(seconds):
        now = T0 + sec * 1000
        minute = sec // 60
        if kind == "steady":
            rate = 20
        elif kind == "bursty":  # quiet with a 5-minute spike every 40 minutes (klag #175)
            rate = 200 if minute % 40 < 5 else 5
        elif kind == "low-volume":  # a message every few minutes (klag #111, #32)
            rate = 1 if rng.random() < 1 / 180 else 0
        else:  # "long-lag": steady, the consumer far behind (older than a 60-point table)
            rate = 20
        for i in range(rate):
            store.append(now + i * 1000 // max(rate, 1))
        if kind == "long-lag":
            speed = 10 if minute > 30 else 0  # stopped for 30 minutes, then slower than rate
        elif kind == "bursty":
            speed = 30
        elif kind == "low-volume":
            speed = 1 if minute % 20 > 10 else 0
        else:
            speed = 18 if minute % 30 < 20 else 30
        consumed = min(len(store), consumed + speed)
        if (sec + 1) % 60 == 0:
            ts = now + 1000
            truth = 0.0 if consumed >= len(store) else (ts - store[consumed]) / 1000
            out.append(Capture(ts, len(store), consumed,
                               store[consumed - 1] if consumed else None, truth))
    return out


# ---- kafka-lag-exporter's lookup table (re-implemented from its documented behaviour) ---------

def klag_estimates(caps: list[Capture], size: int = 60) -> list[float | None]:
    table: list[tuple[int, int]] = []  # (offset, time)
    out: list[float | None] = []
    for c in caps:
        point = (c.broker_offset, c.ts)
        if not table or point[0] > table[-1][0]:
            table.append(point)
        elif point[0] == table[-1][0]:
            # flat run: keep its first and last points
            if len(table) >= 2 and table[-2][0] == point[0]:
                table[-1] = point
            else:
                table.append(point)
        # (out-of-order points are rejected)
        if len(table) > size:
            table.pop(0)
        o = c.consumer_offset
        if len(table) < 2:
            out.append(None)  # TooFewPoints
            continue
        if o >= table[-1][0]:
            out.append(0.0)  # LagIsZero
            continue
        left = right = None
        for i in range(1, len(table)):
            if table[i - 1][0] <= o <= table[i][0] and table[i][0] > table[i - 1][0]:
                left, right = table[i - 1], table[i]
        if left is None or right is None:  # outside the table: first and last points
            left, right = table[0], table[-1]
        dy = right[0] - left[0]
        if dy == 0:
            out.append(None)
            continue
        predicted = right[1] - (right[0] - o) * (right[1] - left[1]) / dy
        out.append(max(0.0, (c.ts - predicted) / 1000))
    return out


def upper_estimates(caps: list[Capture]) -> list[float | None]:
    return [0.0 if c.consumer_offset >= c.broker_offset else
            (None if c.last_ts is None else (c.ts - c.last_ts) / 1000) for c in caps]


def mqctl_estimates(caps: list[Capture]) -> list[tuple[float | None, str]]:
    """The report's time lag of each capture: the kernel (mqctl/lagjob/kernel.py, what the
    report runs in its mapInArrow) over the queue's captures, Arrow in, Arrow out."""
    import pyarrow as pa

    from mqctl.lagjob import kernel

    n = len(caps)
    table = pa.table({
        "_r": pa.array([1] * n, pa.int8()), "cluster": ["c"] * n, "group": ["G"] * n,
        "topic": ["T"] * n, "broker": ["b"] * n, "queue_id": pa.array([0] * n, pa.int32()),
        "capture_ts": [c.ts for c in caps], "observed_ts": [c.ts for c in caps],
        "broker_offset": [c.broker_offset for c in caps],
        "consumer_offset": [c.consumer_offset for c in caps],
        "pull_offset": [c.consumer_offset for c in caps],
        "min_offset": pa.array([0] * n, pa.int64()), "delay_ms": pa.nulls(n, pa.int64()),
        "last_timestamp": [c.last_ts for c in caps], "owner": pa.nulls(n, pa.string()),
        "online": pa.nulls(n, pa.bool_()), "consume_enable": pa.nulls(n, pa.bool_()),
        "committed": pa.nulls(n, pa.bool_()), "owner_unknown": pa.nulls(n, pa.bool_()),
        "source_kind": ["snapshot"] * n, "source": ["s"] * n})
    res = {r["capture_ts"]: (r["lag_seconds"], r["lag_seconds_source"])
           for r in kernel.lag_rows(table, kernel.Params()).to_pylist()}
    return [res[c.ts] for c in caps]


def stats(truth: list[float], est: list[float | None]) -> tuple[float, float, int]:
    errs = [abs(e - t) for t, e in zip(truth, est, strict=True) if e is not None]
    missing = sum(1 for e in est if e is None)
    if not errs:
        return math.nan, math.nan, missing
    errs.sort()
    return statistics.fmean(errs), errs[min(len(errs) - 1, int(0.95 * len(errs)))], missing


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--captures", type=int, default=240)
    p.add_argument("--seed", type=int, default=11)
    a = p.parse_args(argv)
    print(f"time-lag accuracy, {a.captures} one-minute captures per scenario "
          "(absolute error in seconds; 'n/a' = no estimate)")
    print("mean err / mqctl: the method's mean error divided by mqctl's, over the captures "
          "where both give an estimate")
    print(f"{'scenario':12s} {'method':26s} {'mean err':>9s} {'p95 err':>9s} {'n/a':>5s}"
          f" {'mean err / mqctl':>17s}")
    for kind in ("steady", "bursty", "low-volume", "long-lag"):
        caps = simulate(kind, a.captures, random.Random(a.seed))
        truth = [c.truth_s for c in caps]
        ours = mqctl_estimates(caps)
        # mqctl's lower bounds are bounds, not estimates: scored apart (do they hold?)
        point = [v if src != "lower_bound" else None for v, src in ours]
        bounds = [(v, t) for (v, src), t in zip(ours, truth, strict=True)
                  if src == "lower_bound"]
        for name, est in (("mqctl (anchored interp.)", point),
                          ("kafka-lag-exporter table", klag_estimates(caps)),
                          ("now - lastTimestamp", upper_estimates(caps))):
            mean, p95, na = stats(truth, est)
            # the ratio over the captures where both give an estimate
            both = [(e, o) for e, o in zip(est, point, strict=True)
                    if e is not None and o is not None]
            t_both = [t for t, e, o in zip(truth, est, point, strict=True)
                      if e is not None and o is not None]
            me = stats(t_both, [e for e, _ in both])[0] if both else math.nan
            mo = stats(t_both, [o for _, o in both])[0] if both else math.nan
            ratio = me / mo if mo else (1.0 if me == mo else math.inf)
            print(f"{kind:12s} {name:26s} {mean:9.2f} {p95:9.2f} {na:5d} {ratio:17.2f}",
                  flush=True)
        held = sum(1 for v, t in bounds if v is not None and v <= t + 1e-6)
        gap = statistics.fmean(t - v for v, t in bounds if v is not None) if bounds else 0
        print(f"{'':12s} mqctl lower bounds (offset older than the first capture): "
              f"{len(bounds)}, held {held}/{len(bounds)}, mean gap to the truth "
              f"{gap:.1f} s (in its n/a)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

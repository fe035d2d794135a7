"""The lag report's totals per capture, group and topic, from the kernel's lag rows of whole
topics (:func:`mqctl.lagjob.kernel.lag_rows`): Arrow in, Arrow out, segment-wise numpy as the
kernel (:func:`group_topic_rows`). The group's status over its topics is Spark's
(:func:`mqctl.lagjob.flow.group_topic_status`): a group's topics are in other batches.

Unknown stays null: a total over no known value is null, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mqctl.lagjob.kernel import (
    I64,
    I64_MAX,
    STATUSES,
    Num,
    _chunk,
    _floats,
    codes,
    dense,
    flag,
    num,
    starts,
)

GT_KEYS = ("cluster", "group", "topic", "capture_ts")


@dataclass(slots=True)
class _Segments:
    """Rows grouped by a key: ``order`` sorts them by it (stably), ``at`` is where each group
    starts in that order, ``group`` each row's group (in the table's order)."""

    order: np.ndarray
    at: np.ndarray
    group: np.ndarray

    def reduce(self, x: np.ndarray, fn: np.ufunc) -> np.ndarray:
        return fn.reduceat(x[self.order], self.at) if len(self.at) else x[:0]

    def count(self, ok: np.ndarray) -> np.ndarray:
        return self.reduce(ok.astype(I64), np.add)

    def first_by(self, rank: np.ndarray) -> np.ndarray:
        """Each group's row (an index into the table) of the highest ``rank``, the first in
        the table's order among equals (Spark's ``max_by`` over rows in that order)."""
        o = np.lexsort((np.arange(len(rank)), -rank, self.group))
        return o[starts(self.group[o])]


def _segments(key: np.ndarray) -> _Segments:
    """``key``: dense ids (:func:`kernel.dense`), so each row's group is its key."""
    order = np.argsort(key, kind="stable")
    return _Segments(order, np.nonzero(starts(key[order]))[0], key)


def _max_num(s: _Segments, x: Num) -> Num:
    ok = s.count(x.ok) > 0
    return Num(np.where(ok, s.reduce(np.where(x.ok, x.v, np.iinfo(I64).min), np.maximum), 0), ok)


def _min_num(s: _Segments, x: Num) -> Num:
    ok = s.count(x.ok) > 0
    return Num(np.where(ok, s.reduce(np.where(x.ok, x.v, I64_MAX), np.minimum), 0), ok)


def _sorted_sum(s: _Segments, x: np.ndarray) -> np.ndarray:
    """Each group's non-null doubles added in ascending order from 0.0 (as the Spark aggregate
    did: a double sum depends on its order, and full and incremental runs must agree to the
    last bit); NaN where a group has none."""
    ok = ~np.isnan(x)
    o = np.lexsort((x, ~ok, s.group))  # (per group: its values ascending, then the nulls)
    g = s.group[o]
    pos = np.arange(len(o)) - np.searchsorted(g, g, "left")
    acc = np.zeros(len(s.at))
    has = np.zeros(len(s.at), dtype=bool)
    v, okv = x[o], ok[o]
    for k in range(int(pos.max()) + 1 if len(pos) else 0):
        hit = (pos == k) & okv
        acc[g[hit]] += v[hit]
        has[g[hit]] = True
    return np.where(has, acc, np.nan)


def _exact_total(s: _Segments, lag: Num) -> Num:
    """Each group's sum of lags, null when none is known or the sum does not fit a long (as
    Spark's ``try_sum``: unknown, never a wrapped number)."""
    v = np.where(lag.ok, lag.v, 0)
    total = s.reduce(v, np.add)
    approx = s.reduce(v.astype(np.float64), np.add)
    fits = np.ones(len(total), dtype=bool)
    for gi in np.nonzero(np.abs(approx) > 2.0 ** 62)[0]:  # (rare: exactly, in Python ints)
        end = s.at[gi + 1] if gi + 1 < len(s.at) else len(s.order)
        exact = sum(int(x) for x in v[s.order[s.at[gi]:end]])
        fits[gi] = -(1 << 63) <= exact < (1 << 63)
    return Num(np.where(fits, total, 0), (s.count(lag.ok) > 0) & fits)


def _doubles(table: pa.Table, name: str) -> np.ndarray:
    a = _chunk(table.column(name)).cast(pa.float64())
    return np.asarray(pc.fill_null(a, np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)


def _text_max(table: pa.Table, s: _Segments, name: str) -> pa.Array:
    if name not in table.column_names:
        return pa.nulls(len(s.at), pa.string())
    c = codes(table, name)
    return _chunk(table.column(name)).cast(pa.string()).take(pa.array(s.first_by(c)))


def _flag_max(s: _Segments, table: pa.Table, name: str) -> pa.Array:
    t, f = flag(table, name)
    return pa.array(s.reduce(t, np.logical_or).astype(bool), pa.bool_(), mask=s.count(t | f) == 0)


def group_topic_rows(table: pa.Table) -> pa.Table:
    """Per capture, group and topic of the lag rows of whole topics in ``table``: totals,
    maxima, rates, the worst queue status (``status_code``) and how many queues have it
    (``status_queues``), the fewest captures in a queue's window, the consume type and
    message model, and the caveats of the totals (queues never committed, owners unknown).
    The group's status over its topics is Spark's to add (its topics are in other batches)."""
    s = _segments(dense(*[codes(table, c) for c in GT_KEYS]))
    first = s.order[s.at]
    sev = np.full(table.num_rows, -1, dtype=I64)
    status_col = _chunk(table.column("status")).cast(pa.string())
    for i, name in enumerate(STATUSES):
        sev[np.asarray(pc.fill_null(pc.equal(status_col, name), False).to_numpy(
            zero_copy_only=False), dtype=bool)] = i
    worst = _max_num(s, Num(sev, sev >= 0))
    at_worst = s.reduce((sev == worst.v[s.group]).astype(I64), np.add)
    lag, secs = num(table, "lag"), _doubles(table, "lag_seconds")
    secs_ok = ~np.isnan(secs)
    complete = _doubles(table, "complete")
    done_ok = ~np.isnan(complete)
    n_done = s.count(done_ok)
    samples = num(table, "window_samples")
    _, never = flag(table, "committed")
    unknown, _ = flag(table, "owner_unknown")
    src = _chunk(table.column("lag_seconds_source")).cast(pa.string())
    cols = {
        **{c: table.column(c).take(pa.array(first)) for c in GT_KEYS},
        "queues": pa.array(s.count(np.ones(table.num_rows, dtype=bool)), pa.int64()),
        "queues_known": pa.array(s.count(lag.ok), pa.int64()),
        "total_lag": _exact_total(s, lag).arrow(), "max_lag": _max_num(s, lag).arrow(),
        "lag_seconds": _floats(np.where(s.count(secs_ok) > 0, s.reduce(
            np.where(secs_ok, secs, -np.inf), np.maximum), np.nan)),
        "lag_seconds_source": src.take(pa.array(s.first_by(np.where(secs_ok, secs, -1.0)))),
        "estimated": _flag_max(s, table, "estimated"),
        "consume_rate": _floats(_sorted_sum(s, _doubles(table, "consume_rate"))),
        "produce_rate": _floats(_sorted_sum(s, _doubles(table, "produce_rate"))),
        "status_code": worst.arrow(pa.int32()),
        "status_queues": Num(at_worst, worst.ok).arrow(),
        "complete": _floats(np.where(n_done > 0, s.count(done_ok & (complete >= 1.0))
                                     / np.maximum(n_done, 1), np.nan)),
        "online": _flag_max(s, table, "online"),
        "members": _max_num(s, num(table, "members")).arrow(pa.int32()),
        "never_committed": pa.array(s.count(never), pa.int64()),
        "owner_unknown": pa.array(s.count(unknown), pa.int64()),
        "window_samples": _min_num(s, samples).arrow(pa.int32()),
        "consume_type": _text_max(table, s, "consume_type"),
        "message_model": _text_max(table, s, "message_model"),
        "observed_ts": _max_num(s, num(table, "observed_ts")).arrow()}
    return pa.table(cols)

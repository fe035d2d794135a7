"""The lag report's per-queue work as one vectorised kernel: Arrow in, Arrow out.

The report's per-queue rules (docs/lag-rules.md), computed for every queue of a batch at once
with segment-wise numpy: rows sorted by their queue, boundaries as masks, "previous row of
the same queue" as a shift that is void at a boundary, sliding windows as ``window`` shifted
passes, and ``searchsorted`` inside each queue's own history done as one
merge of the history and the queries (:func:`_search`). No Python loop over rows or queues.

* :func:`lag_rows`: observations (``_r`` 1) and broker max-offset points (``_r`` 0) of whole
  topics in, one row per queue, group and capture out: dedupe, the broker history, max offsets
  filled for observations without one, lag, time lag and the status window;
* :func:`tracked_rows`, :func:`owner_changes`, :func:`capture_resets`,
  :func:`unowned_intervals`: the lag rows of whole topics in, the owner track's rows, its
  changes, the offset resets seen in captures and the unowned intervals out;
  :func:`owner_outputs` computes them together, from the same batch as the lag rows.

A batch must hold whole topics (``cluster``, ``topic``): the owner track's "is ownership known
at this capture" and the resets are per group and topic, the history per queue across groups.
Unknown stays null: a null input never becomes 0.

Imports pyarrow and numpy: only the Spark side (:mod:`mqctl.lagjob.flow`) and the tests load it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mqctl.lagjob.inputs import DISPLAY_SOURCE

I64 = np.int64
I64_MAX = np.iinfo(I64).max
# which source wins when two describe the same queue at the same capture (as
# transforms.common.SOURCE_PRIORITY; an unknown kind ranks 9)
SOURCE_PRIORITY = {"snapshot": 0, "consumer-progress": 1, "broker-consume-stats": 2,
                   "consumer-offset": 3}
# longer than any message is kept: "now - 0" for a never-committed queue (as
# mqctl.lagstatus.MAX_REAL_DELAY_MS; AdminBrokerProcessor#queryConsumeTimeSpan)
MAX_REAL_DELAY_MS = 10 * 365 * 86_400_000
STATUSES = ("OK", "WARN", "REWIND", "STALL", "STOP")
GQUEUE = ("cluster", "group", "topic", "broker", "queue_id")
QUEUE = ("cluster", "topic", "broker", "queue_id")


@dataclass(frozen=True, slots=True)
class Params:
    """The options the kernel reads (``--window``, ``--allowed-lag``, ``--allowed-lag-seconds``,
    ``--max-skew``)."""

    window: int = 10
    allowed_lag: int = 0
    allowed_lag_seconds: float = 0.0
    max_skew_ms: int = 60_000


# ---- columns as numpy ------------------------------------------------------------------------

@dataclass(slots=True)
class Num:
    """A nullable integer column: values (0 where null) and validity."""

    v: np.ndarray
    ok: np.ndarray

    def take(self, idx: np.ndarray) -> Num:
        return Num(self.v[idx], self.ok[idx])

    def arrow(self, typ: pa.DataType = pa.int64()) -> pa.Array:
        return pa.array(self.v, type=typ, mask=~self.ok)


def _chunk(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def num(table: pa.Table, name: str) -> Num:
    a = _chunk(table.column(name))
    ok = ~np.asarray(a.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    v = np.asarray(pc.fill_null(a.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=I64)
    return Num(v, ok)


def flag(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A nullable boolean column as (is true, is false): both false where null."""
    a = _chunk(table.column(name)).cast(pa.bool_())
    t = np.asarray(pc.fill_null(a, False).to_numpy(zero_copy_only=False), dtype=bool)
    f = np.asarray(pc.fill_null(pc.invert(a), False).to_numpy(zero_copy_only=False), dtype=bool)
    return t, f


def codes(table: pa.Table, name: str) -> np.ndarray:
    """A column's values as int64 codes in the values' order (byte order for text, as Spark
    sorts), null as -1 (first, as Spark's ascending order puts nulls)."""
    a = _chunk(table.column(name))
    if pa.types.is_integer(a.type):
        return np.asarray(pc.fill_null(a.cast(pa.int64()), -1).to_numpy(zero_copy_only=False),
                          dtype=I64)
    d = pc.dictionary_encode(a.cast(pa.string()))
    rank = np.empty(len(d.dictionary), dtype=I64)
    rank[np.asarray(pc.sort_indices(d.dictionary).to_numpy(), dtype=I64)] = np.arange(
        len(d.dictionary), dtype=I64)
    idx = d.indices
    ok = ~np.asarray(idx.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    raw = np.asarray(pc.fill_null(idx, 0).to_numpy(zero_copy_only=False), dtype=I64)
    return np.where(ok, rank[raw] if len(rank) else -1, -1)


def dense(*cols: np.ndarray) -> np.ndarray:
    """Dense ids of the rows' key tuples, numbered in the tuples' order."""
    n = len(cols[0])
    if n == 0:
        return np.zeros(0, dtype=I64)
    order = np.lexsort(cols[::-1])
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for c in cols:
        s = c[order]
        new[1:] |= s[1:] != s[:-1]
    out = np.empty(n, dtype=I64)
    out[order] = np.cumsum(new) - 1
    return out


def starts(key: np.ndarray) -> np.ndarray:
    """Where a new segment begins in rows sorted by ``key``."""
    s = np.ones(len(key), dtype=bool)
    s[1:] = key[1:] != key[:-1]
    return s


def prev(x: np.ndarray, start: np.ndarray, fill: object = 0) -> np.ndarray:
    """The previous row's value within the segment (``fill`` at a segment's first row)."""
    out = np.empty_like(x)
    if len(x):
        out[1:] = x[:-1]
        out[start] = fill
    return out


def _search(hk: np.ndarray, hv: np.ndarray, qk: np.ndarray, qv: np.ndarray,
            right: bool) -> np.ndarray:
    """``searchsorted`` of each query ``(qk, qv)`` in the points ``(hk, hv)`` sorted by key, then
    value: the global index of the first point of key ``qk`` with value ``> qv`` (``right``) or
    ``>= qv``: one merge (a stable sort of both), so every key's points are searched at once."""
    nh = len(hk)
    key = np.concatenate([hk, qk])
    val = np.concatenate([hv, qv])
    tie = np.concatenate([np.full(nh, 0 if right else 1, dtype=np.int8),
                          np.full(len(qk), 1 if right else 0, dtype=np.int8)])
    order = np.lexsort((tie, val, key))
    is_h = order < nh
    before = np.cumsum(is_h)
    out = np.empty(len(qk), dtype=I64)
    q = ~is_h
    out[order[q] - nh] = before[q]
    return out


def _seg_bounds(seg: np.ndarray, sorted_seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (np.searchsorted(sorted_seg, seg, "left").astype(I64),
            np.searchsorted(sorted_seg, seg, "right").astype(I64))


# ---- lag rows --------------------------------------------------------------------------------

def _priority(table: pa.Table) -> np.ndarray:
    kind = _chunk(table.column("source_kind")).cast(pa.string())
    out = np.full(len(kind), 9, dtype=I64)
    for k, p in SOURCE_PRIORITY.items():
        hit = np.asarray(pc.fill_null(pc.equal(kind, k), False).to_numpy(zero_copy_only=False),
                         dtype=bool)
        out[hit] = p
    return out


def _desc_nulls_last(x: Num) -> np.ndarray:
    return np.where(x.ok, -x.v, I64_MAX)


def dedupe(obs: pa.Table) -> pa.Table:
    """One row per queue, group and capture:
    the source decides (snapshot > consumerProgress > brokerConsumeStats > consumerOffset.json),
    then the latest observation, then the larger max offset, then the source's name."""
    if obs.num_rows == 0:
        return obs
    keys = [codes(obs, c) for c in (*GQUEUE, "capture_ts")]
    order = np.lexsort((codes(obs, "source"), _desc_nulls_last(num(obs, "broker_offset")),
                        _desc_nulls_last(num(obs, "observed_ts")), _priority(obs),
                        *keys[::-1]))
    new = np.zeros(len(order), dtype=bool)
    new[0] = True
    for k in keys:
        s = k[order]
        new[1:] |= s[1:] != s[:-1]
    return obs.take(pa.array(order[new]))


@dataclass(slots=True)
class History:
    """Every queue's captured max offsets, once per time, sorted by queue then time; ``seg``:
    a global segment id, a new segment where the max offset went backwards."""

    q: np.ndarray
    t: np.ndarray
    b: np.ndarray
    min_offset: Num
    seg: np.ndarray


def history(q: np.ndarray, t: np.ndarray, b: Num, mn: Num) -> History:
    """The broker history (transforms.observations.broker_history) from points ``(q, t, b,
    min_offset)`` (points without a max offset are none), with its segments
    (:func:`time_lag`)."""
    keep = b.ok
    q, t, bv, mn = q[keep], t[keep], b.v[keep], mn.take(np.nonzero(keep)[0])
    order = np.lexsort((t, q))
    q, t, bv, mn = q[order], t[order], bv[order], mn.take(order)
    if len(q):  # once per (queue, time): the largest max offset and min offset
        new = np.ones(len(q), dtype=bool)
        new[1:] = (q[1:] != q[:-1]) | (t[1:] != t[:-1])
        first = np.nonzero(new)[0]
        bmax = np.maximum.reduceat(bv, first)
        mval = np.where(mn.ok, mn.v, np.iinfo(I64).min)
        mmax = np.maximum.reduceat(mval, first)
        mok = np.logical_or.reduceat(mn.ok, first)
        q, t, bv, mn = q[first], t[first], bmax, Num(np.where(mok, mmax, 0), mok)
    qs = starts(q)
    dec = ~qs & (bv < prev(bv, qs))
    seg = np.cumsum(qs | dec) - 1
    return History(q, t, bv, mn, seg.astype(I64))


def fill_offsets(q: np.ndarray, t: np.ndarray, b: Num, mn: Num, h: History, max_skew_ms: int
                 ) -> tuple[Num, Num, Num]:
    """(max offset, min offset, ``broker_offset_ts``): an observation's own max offset at its own
    time, else the nearest captured one of its queue within ``max_skew_ms`` (ties: the later;
    docs/lag-rules.md), else null."""
    bo, mo = Num(b.v.copy(), b.ok.copy()), Num(mn.v.copy(), mn.ok.copy())
    ts = Num(np.where(b.ok, t, 0), b.ok.copy())
    need = np.nonzero(~b.ok)[0]
    if len(need) == 0 or len(h.q) == 0:
        return bo, mo, ts
    i = _search(h.q, h.t, q[need], t[need], right=False)
    n = len(h.q)
    best = np.full(len(need), -1, dtype=I64)
    best_d = np.full(len(need), I64_MAX, dtype=I64)
    for cand in (i - 1, i):  # the later one wins a tie: it is looked at second, with <=
        c = np.clip(cand, 0, n - 1)
        ok = (cand >= 0) & (cand < n) & (h.q[c] == q[need])
        d = np.abs(h.t[c] - t[need])
        better = ok & (d <= max_skew_ms) & (d <= best_d)
        best = np.where(better, c, best)
        best_d = np.where(better, d, best_d)
    hit = best >= 0
    rows, src = need[hit], best[hit]
    bo.v[rows], bo.ok[rows] = h.b[src], True
    ts.v[rows], ts.ok[rows] = h.t[src], True
    take_min = rows[~mo.ok[rows]]
    src_min = src[~mo.ok[rows]]
    mo.v[take_min], mo.ok[take_min] = h.min_offset.v[src_min], h.min_offset.ok[src_min]
    return bo, mo, ts


@dataclass(slots=True)
class TimeLag:
    seconds: np.ndarray  # float, NaN where null
    source: np.ndarray  # object: exact | interpolated | lower_bound | unknown
    upper: np.ndarray  # float, NaN where null
    delay: Num


def time_lag(q: np.ndarray, t: np.ndarray, lag: Num, co: Num, delay: Num, last_ts: Num,
             h: History) -> TimeLag:
    """The time lag (docs/lag-rules.md): 0 when caught up, ``delay_ms`` (exact) when the
    capture carries a real one, else the first unconsumed message (offset ``C``) dated between
    the last point of its history segment with ``B <= C`` and the first with ``B > C``
    (``interpolated``), a lower bound when every point is above ``C``, else unknown."""
    n = len(q)
    delay = Num(delay.v, delay.ok & ~(delay.v > MAX_REAL_DELAY_MS))
    need = lag.ok & (lag.v > 0) & ~delay.ok & co.ok
    est = np.full(n, np.nan)
    src = np.full(n, "unknown", dtype=object)
    rows = np.nonzero(need)[0]
    if len(rows) and len(h.q):
        qr, tr, c = q[rows], t[rows], co.v[rows]
        lo_q, hi_q = _seg_bounds(qr, h.q)
        has = hi_q > lo_q
        at = _search(h.q, h.t, qr, tr, right=True) - 1  # the last point at or before
        last = len(h.q) - 1
        seg = np.where(at >= lo_q, h.seg[np.clip(at, 0, last)], h.seg[np.clip(lo_q, 0, last)])
        lo, hi = _seg_bounds(seg, h.seg)
        j = _search(h.seg, h.b, seg, c, right=True)  # first point with B > C
        pa_i, pb_i = j - 1, j
        has_a, has_b = has & (pa_i >= lo), has & (pb_i < hi)
        a, b = np.clip(pa_i, 0, len(h.q) - 1), np.clip(pb_i, 0, len(h.q) - 1)
        interp = has_a & has_b & (h.b[b] > h.b[a])
        with np.errstate(invalid="ignore", divide="ignore"):
            t_star = h.t[a] + ((c - h.b[a]).astype(float) + 1.0) * (h.t[b] - h.t[a]) / (
                (h.b[b] - h.b[a]).astype(float) + 1.0)
        lower = tr - h.t[np.clip(lo, 0, len(h.q) - 1)]
        is_lower = has & ~has_a & (lower > 0)
        e = np.full(len(rows), np.nan)
        e[interp] = np.maximum(tr[interp] - t_star[interp], 0) / 1000.0
        e[is_lower] = lower[is_lower] / 1000.0
        s = np.full(len(rows), "unknown", dtype=object)
        s[interp] = "interpolated"
        s[is_lower] = "lower_bound"
        est[rows], src[rows] = e, s
    secs = est.copy()
    source = src
    d = delay.ok & lag.ok & (lag.v != 0)
    secs[d] = np.maximum(delay.v[d], 0) / 1000.0
    source[d] = "exact"
    z = lag.ok & (lag.v == 0)
    secs[z], source[z] = 0.0, "exact"
    secs[~lag.ok], source[~lag.ok] = np.nan, "unknown"
    up = lag.ok & (lag.v > 0) & last_ts.ok & (last_ts.v > 0)
    upper = np.full(n, np.nan)
    upper[up] = np.maximum(t[up] - last_ts.v[up], 0) / 1000.0
    return TimeLag(secs, source, upper, delay)


def _shift(x: np.ndarray, k: int, fill: object) -> np.ndarray:
    """``x`` moved ``k`` rows down (row ``i`` holds ``x[i - k]``), ``fill`` above."""
    out = np.full_like(x, fill)
    if k < len(x):
        out[k:] = x[:len(x) - k]
    return out


def _window_any(x: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """Per row: any of ``x`` over the row and the ``width - 1`` before it in its segment
    (``pos``: the row's 0-based position in its segment)."""
    out = np.zeros(len(x), dtype=bool)
    for k in range(width):
        out |= _shift(x, k, False) & (pos >= k)
    return out


def _window_reduce(x: np.ndarray, pos: np.ndarray, width: int, fn: np.ufunc) -> np.ndarray:
    """Per row: ``fn`` (minimum, maximum) over the row and the ``width - 1`` before it in its
    segment."""
    out = x.copy()
    for k in range(1, width):
        out = np.where(pos >= k, fn(out, _shift(x, k, 0)), out)
    return out


@dataclass(slots=True)
class Status:
    status: np.ndarray  # object, None where unknown
    complete: np.ndarray  # float, NaN where null
    samples: Num
    consume_rate: np.ndarray
    produce_rate: np.ndarray


def _rewound(c: np.ndarray, dec: np.ndarray, pos: np.ndarray, w: int) -> np.ndarray:
    """Per row: the consumer offset ``c`` went back (``dec``) within the row's window (its
    last ``w - 1`` rows) and no later row of the window got back to the offset before that
    first decrease (Burrow's checkIfOffsetsRewind, checkIfRewindRecovered)."""
    n_rows = len(c)
    dec_at = np.full(n_rows, -1, dtype=I64)
    for k in range(w - 1):
        jc = np.maximum(np.arange(n_rows) - k, 0)
        hit = (pos >= k) & dec[jc]
        dec_at = np.where(hit, jc, dec_at)
    has = dec_at >= 0
    run_max = np.full(n_rows, np.iinfo(I64).min, dtype=I64)
    for k in range(w):
        j = np.maximum(np.arange(n_rows) - k, 0)
        inside = (pos >= k) & has & (j >= dec_at)
        run_max = np.where(inside, np.maximum(run_max, c[j]), run_max)
    before = c[np.maximum(dec_at - 1, 0)]
    return has & (run_max < before)


def status(gq: np.ndarray, cap: np.ndarray, t: np.ndarray, lag: Num, co: Num, bo: Num,
           secs: np.ndarray, lower: np.ndarray, online: tuple[np.ndarray, np.ndarray],
           enable_false: np.ndarray, p: Params) -> Status:
    """The queue status (docs/lag-rules.md): Burrow 1.9's ``calculatePartitionStatus``
    (core/internal/evaluator/caching.go) over each queue's last ``window`` judged captures (a
    known lag and a committed offset), adapted to RocketMQ: STOP, REWIND, OK (caught up in the
    window), STALL, WARN, OK; rates since the previous judged capture."""
    n_all = len(gq)
    w = max(1, int(p.window))
    on_true, on_false = online
    off = enable_false | on_false  # online_eff == False
    on_null = ~enable_false & ~on_true & ~on_false
    ok_all = lag.ok & (lag.v <= p.allowed_lag)
    if p.allowed_lag_seconds > 0:
        with np.errstate(invalid="ignore"):
            ok_all |= ~np.isnan(secs) & ~lower & (secs <= p.allowed_lag_seconds)
    out = np.full(n_all, None, dtype=object)
    complete = np.full(n_all, np.nan)
    samples = Num(np.zeros(n_all, dtype=I64), np.zeros(n_all, dtype=bool))
    c_rate, p_rate = np.full(n_all, np.nan), np.full(n_all, np.nan)
    judged = lag.ok & co.ok
    # not judged (unknown lag, never committed): OK when caught up, STOP when offline
    nj = ~judged & lag.ok
    out[nj & (lag.v <= p.allowed_lag)] = "OK"
    out[nj & ~(lag.v <= p.allowed_lag) & off] = "STOP"
    rows = np.nonzero(judged)[0]
    if len(rows) == 0:
        return Status(out, complete, samples, c_rate, p_rate)
    order = rows[np.lexsort((cap[rows], gq[rows]))]
    g = gq[order]
    st = starts(g)
    first = np.maximum.accumulate(np.where(st, np.arange(len(g)), 0))
    pos = np.arange(len(g)) - first
    c, b, lg, tt = co.v[order], bo.v[order], lag.v[order], t[order]
    ok = ok_all[order]
    n = np.minimum(pos + 1, w)
    first_lag = lg[np.arange(len(g)) - n + 1]
    min_c = _window_reduce(c, pos, w, np.minimum)
    max_c = _window_reduce(c, pos, w, np.maximum)
    min_b = _window_reduce(b, pos, w, np.minimum)
    any_ok = _window_any(ok, pos, w)
    pc_, pl, pb_, pt = prev(c, st), prev(lg, st), prev(b, st), prev(tt, st)
    dec = ~st & (c < pc_)  # the offset went back at this row
    fell = ~st & (lg < pl)
    rewind = np.zeros(len(g), dtype=bool)
    lag_fell = np.zeros(len(g), dtype=bool)
    if w >= 2:
        lag_fell = _window_any(fell, pos, w - 1)
        rewind = (n >= 2) & _rewound(c, dec, pos, w)
    all_same = min_c == max_c
    never_dec = (n >= 2) & ~lag_fell
    recent_zero = min_b <= c
    onf, onn = off[order], on_null[order]
    stopped = onf | (onn & (n == w) & (n >= 2) & all_same & (lg > first_lag) & ~recent_zero)
    s = np.full(len(g), "OK", dtype=object)
    rest = ~ok
    for cond, name in ((stopped, "STOP"), (rewind, "REWIND"), (any_ok, "OK"),
                       ((n >= 2) & all_same, "STALL"), (never_dec, "WARN")):
        s[rest & cond] = name
        rest &= ~cond
    out[order] = s
    complete[order] = n / float(w)
    samples.v[order], samples.ok[order] = n, True
    dt = (tt - pt) / 1000.0
    pos_dt = ~st & (dt > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        cr = np.where(pos_dt, np.maximum(c - pc_, 0) / dt, np.nan)
        pr = np.where(pos_dt, np.maximum(b - pb_, 0) / dt, np.nan)
    c_rate[order], p_rate[order] = cr, pr
    return Status(out, complete, samples, c_rate, p_rate)


def _floats(x: np.ndarray) -> pa.Array:
    return pa.array(x, type=pa.float64(), from_pandas=True)


def lag_rows(table: pa.Table, p: Params) -> pa.Table:
    """The lag dataset's computed rows for the observations (``_r`` 1) of ``table``, with the
    points (``_r`` 0: max offsets of the broker history without a consumer) beside them:
    deduplicated, ``broker_offset`` filled (``broker_offset_ts``), ``lag``, ``inflight``, the
    time lag columns and the status columns added; every other column of an observation is
    kept as it is."""
    r = np.asarray(pc.fill_null(_chunk(table.column("_r")), 0).to_numpy(
        zero_copy_only=False))
    obs = dedupe(table.filter(pa.array(r == 1)).drop_columns(["_r"]))
    pts = table.filter(pa.array(r == 0))
    both = pa.concat_tables([obs.select(list(QUEUE)), pts.select(list(QUEUE))])
    qall = dense(*[codes(both, c) for c in QUEUE])
    q, qp = qall[:obs.num_rows], qall[obs.num_rows:]
    t = num(obs, "observed_ts").v
    b, mn = num(obs, "broker_offset"), num(obs, "min_offset")
    h = history(np.concatenate([q, qp]), np.concatenate([t, num(pts, "observed_ts").v]),
                _cat(b, num(pts, "broker_offset")), _cat(mn, num(pts, "min_offset")))
    bo, mo, bts = fill_offsets(q, t, b, mn, h, p.max_skew_ms)
    co, pull = num(obs, "consumer_offset"), num(obs, "pull_offset")
    _, committed_false = flag(obs, "committed")
    never = committed_false & ~co.ok
    raw = bo.v - np.where(never, 0, co.v)
    lag = Num(np.maximum(raw, 0), bo.ok & (co.ok | never))
    inflight = Num(pull.v - co.v, pull.ok & co.ok)
    tl = time_lag(q, t, lag, co, num(obs, "delay_ms"), num(obs, "last_timestamp"), h)
    lower = tl.source == "lower_bound"
    gq = dense(*[codes(obs, c) for c in GQUEUE])
    _, enable_false = flag(obs, "consume_enable")
    s = status(gq, num(obs, "capture_ts").v, t, lag, co, bo, tl.seconds, lower,
               flag(obs, "online"), enable_false, p)
    cols = {
        "broker_offset": bo.arrow(), "min_offset": mo.arrow(), "broker_offset_ts": bts.arrow(),
        "delay_ms": tl.delay.arrow(), "lag": lag.arrow(), "inflight": inflight.arrow(),
        "lag_seconds": _floats(tl.seconds), "lag_seconds_source": pa.array(tl.source, pa.string()),
        "estimated": pa.array((tl.source == "interpolated") | lower),
        "lower_bound": pa.array(lower), "lag_seconds_upper": _floats(tl.upper),
        "status": pa.array(s.status, pa.string()), "complete": _floats(s.complete),
        "window_samples": s.samples.arrow(pa.int32()), "consume_rate": _floats(s.consume_rate),
        "produce_rate": _floats(s.produce_rate)}
    return _with(obs, cols)


def _cat(a: Num, b: Num) -> Num:
    return Num(np.concatenate([a.v, b.v]), np.concatenate([a.ok, b.ok]))


def _with(table: pa.Table, cols: dict[str, pa.Array]) -> pa.Table:
    for name, arr in cols.items():
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, arr)
        else:
            table = table.append_column(name, arr)
    return table


# ---- owners ----------------------------------------------------------------------------------

@dataclass(slots=True)
class Track:
    """The owner track over rows of whole topics: the rows (``rows``, indices
    into the table) where ownership is known, sorted by queue then capture, with each row's
    previous row in its queue (``start``: none), and whether it has no owner."""

    rows: np.ndarray
    start: np.ndarray
    end: np.ndarray
    owner: np.ndarray  # codes, -1: none
    cap: np.ndarray
    none: np.ndarray


def owner_track(table: pa.Table) -> Track:
    """Each queue's owner across the captures where ownership is known: a group and topic's
    capture counts when some queue of it has an owner, or the group is offline. A row whose
    owner could not be read (``owner_unknown``: a member did not answer its
    GET_CONSUMER_RUNNING_INFO) is left out, so the previous owner is carried across the gap."""
    owner = codes(table, "owner")
    unknown, _ = flag(table, "owner_unknown")
    _, offline = flag(table, "online")
    cap = num(table, "capture_ts").v
    kept = np.nonzero(~((owner < 0) & unknown))[0]
    gt = dense(*[codes(table, c)[kept] for c in ("cluster", "group", "topic")], cap[kept])
    any_owner = np.zeros(int(gt.max()) + 1 if len(gt) else 0, dtype=bool)
    np.logical_or.at(any_owner, gt, owner[kept] >= 0)
    rows = kept[any_owner[gt] | offline[kept]]
    gq = dense(*[codes(table, c)[rows] for c in GQUEUE])
    order = np.lexsort((cap[rows], gq))
    rows, g = rows[order], gq[order]
    st = starts(g)
    end = np.ones(len(g), dtype=bool)
    end[:-1] = st[1:]
    return Track(rows, st, end, owner[rows], cap[rows], owner[rows] < 0)


TRACK_COLS = (*GQUEUE, "capture_ts", "owner")


def tracked_rows(table: pa.Table) -> pa.Table:
    """The owner track's rows (:func:`owner_track`): each queue's captures where ownership is
    known, with the owner (null: none), sorted by queue then capture."""
    return table.select(list(TRACK_COLS)).take(pa.array(owner_track(table).rows))


def _lit(n: int, value: object, typ: pa.DataType) -> pa.Array:
    return pa.array([value] * n, type=typ) if value is not None else pa.nulls(n, typ)


CHANGE_COLS = ("ts", "window_start_ts", "cluster", "group", "topic", "broker", "queue_id",
               "client", "change", "source_kind", "source", "strategy", "cid_all", "mq_all",
               "cause")


def owner_changes(table: pa.Table) -> pa.Table:
    """The owner changes: where a queue's owner differs from its previous
    known capture's, the new owner ``gained`` it and the previous one ``lost`` it, dated
    ``window_start_ts`` (the previous capture) .. ``ts`` (this one)."""
    tr = owner_track(table)
    i = np.nonzero(~tr.start & (tr.owner != prev(tr.owner, tr.start, -1)))[0]
    parts = []
    for change, who, hit in (("gained", tr.rows[i], tr.owner[i] >= 0),
                             ("lost", tr.rows[np.maximum(i - 1, 0)], tr.owner[i - 1] >= 0)):
        at, by = tr.rows[i][hit], who[hit]
        n = len(at)
        parts.append(pa.table({
            "ts": table.column("capture_ts").take(at).cast(pa.int64()),
            "window_start_ts": pa.array(tr.cap[i - 1][hit], pa.int64()),
            **{c: table.column(c).take(at) for c in GQUEUE},
            "client": table.column("owner").take(by), "change": _lit(n, change, pa.string()),
            "source_kind": table.column("source_kind").take(at),
            "source": table.column("source").take(at), "strategy": _lit(n, None, pa.string()),
            "cid_all": _lit(n, None, pa.int32()), "mq_all": _lit(n, None, pa.int32()),
            "cause": _lit(n, "rebalance", pa.string())}))
    return pa.concat_tables(parts)


UNOWNED_COLS = (*GQUEUE, "since_ts", "start_ts", "end_ts", "duration_ms", "open", "source_kind")


def unowned_intervals(table: pa.Table) -> pa.Table:
    """The unowned intervals: each run of consecutive known captures without
    an owner: ``since_ts`` the last capture that had one, ``start_ts`` .. ``end_ts`` (the first
    owned again; null while ``open``)."""
    tr = owner_track(table)
    brk = tr.start | (tr.none != prev(tr.none, tr.start, False))
    first = np.nonzero(brk & tr.none)[0]
    isl = np.cumsum(brk) - 1
    last_of = np.zeros(int(isl.max()) + 1 if len(isl) else 0, dtype=I64)
    last_of[isl] = np.arange(len(isl))  # (the last write wins: each island's last row)
    last = last_of[isl[first]]
    since = Num(tr.cap[np.maximum(first - 1, 0)], ~tr.start[first])
    nxt = np.clip(last + 1, 0, max(len(tr.cap) - 1, 0))
    end = Num(tr.cap[nxt], ~tr.end[last])
    start = tr.cap[first]
    dur = np.where(end.ok, end.v - start, tr.cap[last] - start)
    at = tr.rows[first]
    return pa.table({
        **{c: table.column(c).take(at) for c in GQUEUE}, "since_ts": since.arrow(),
        "start_ts": pa.array(start, pa.int64()), "end_ts": end.arrow(),
        "duration_ms": pa.array(dur, pa.int64()), "open": pa.array(~end.ok),
        "source_kind": table.column("source_kind").take(at)})


RESET_COLS = ("ts", "window_start_ts", "cluster", "group", "topic", "client", "source_kind",
              "gained", "lost", "strategy", "cid_all", "mq_all", "source", "n_gained",
              "n_lost", "cause", "queues")


def capture_resets(table: pa.Table) -> pa.Table:
    """The offset resets seen in captures: a queue's committed offset went back between two
    captures with the same owner (compared with the previous capture that had an owner: the
    4.x push reset drops the process queues for about 10 s); one event per capture, group,
    topic, owner and source kind, with the queues (``broker:queueId``, sorted)."""
    owner, co = codes(table, "owner"), num(table, "consumer_offset")
    cap = num(table, "capture_ts").v
    rows = np.nonzero((owner >= 0) & co.ok)[0]
    gq = dense(*[codes(table, c)[rows] for c in GQUEUE])
    order = np.lexsort((cap[rows], gq))
    rows, g = rows[order], gq[order]
    st = starts(g)
    c, o = co.v[rows], owner[rows]
    back_i = np.nonzero(~st & (c < prev(c, st)) & (o == prev(o, st, -1)))[0]
    back, before = rows[back_i], rows[np.maximum(back_i - 1, 0)]
    qname = pc.binary_join_element_wise(
        table.column("broker").take(back).cast(pa.string()),
        table.column("queue_id").take(back).cast(pa.string()), ":")
    ev = dense(cap[back], *[codes(table, k)[back] for k in
                            ("cluster", "group", "topic", "owner", "source_kind")])
    qn = codes(pa.table({"q": qname}), "q")
    srt = np.lexsort((qn, ev))
    ev_s, qn_s = ev[srt], qn[srt]
    first = starts(ev_s)
    uniq = first | np.concatenate([[True], qn_s[1:] != qn_s[:-1]])
    heads = srt[first]  # one row per event (its first queue's row)
    offsets = np.concatenate([np.nonzero(first[uniq])[0], [int(uniq.sum())]]).astype(np.int32)
    queues = pa.ListArray.from_arrays(pa.array(offsets), _chunk(qname).take(
        pa.array(srt[uniq])))
    prev_ts = cap[before]
    ws = np.minimum.reduceat(prev_ts[srt], np.nonzero(first)[0]) if len(srt) else prev_ts
    at = back[heads]
    n = len(at)
    empty = pa.array([[]] * n, pa.list_(pa.string()))
    return pa.table({
        "ts": pa.array(cap[at], pa.int64()), "window_start_ts": pa.array(ws, pa.int64()),
        **{k: table.column(k).take(at) for k in ("cluster", "group", "topic")},
        "client": table.column("owner").take(at),
        "source_kind": table.column("source_kind").take(at), "gained": empty, "lost": empty,
        "strategy": _lit(n, None, pa.string()), "cid_all": _lit(n, None, pa.int32()),
        "mq_all": _lit(n, None, pa.int32()), "source": table.column("source").take(at),
        "n_gained": _lit(n, 0, pa.int32()), "n_lost": _lit(n, 0, pa.int32()),
        "cause": _lit(n, "reset", pa.string()), "queues": queues})


# the owner outputs, by name (:func:`owner_outputs`)
OWNER_OUTPUTS = {"changes": owner_changes, "resets": capture_resets,
                 "unowned": unowned_intervals, "track": tracked_rows}


def owner_outputs(table: pa.Table, track: bool = True) -> dict[str, pa.Table]:
    """The owner changes, capture resets and unowned intervals of the lag rows of whole topics
    in ``table`` and, with ``track``, the owner track's rows: each output's rows with its
    ``source`` as the outputs show it (a local path without ``file:``, as
    :func:`mqctl.lagjob.stages.display_source`)."""
    if "source" in table.column_names:
        shown = pc.replace_substring_regex(table.column("source"), DISPLAY_SOURCE, "")
        table = table.set_column(table.column_names.index("source"), "source", shown)
    return {name: fn(table) for name, fn in OWNER_OUTPUTS.items()
            if track or name != "track"}

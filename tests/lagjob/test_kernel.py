"""The lag report's vectorised kernel (mqctl/lagjob/kernel.py, group_topics.py) on hand-made
Arrow batches, without Spark: every rule of docs/lag-rules.md it computes, across queue
boundaries, empty and one-row queues, unknown values staying null."""

from __future__ import annotations

from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

from mqctl.lagjob import group_topics as GT  # noqa: E402
from mqctl.lagjob import kernel as K  # noqa: E402

T0 = 1_780_000_000_000
MIN = 60_000
OBS_TYPES = {
    "_r": pa.int8(), "capture_ts": pa.int64(), "observed_ts": pa.int64(),
    "cluster": pa.string(), "group": pa.string(), "topic": pa.string(),
    "broker": pa.string(), "queue_id": pa.int32(), "broker_offset": pa.int64(),
    "min_offset": pa.int64(), "consumer_offset": pa.int64(), "pull_offset": pa.int64(),
    "last_timestamp": pa.int64(), "delay_ms": pa.int64(), "owner": pa.string(),
    "online": pa.bool_(), "consume_enable": pa.bool_(), "committed": pa.bool_(),
    "owner_unknown": pa.bool_(), "source_kind": pa.string(), "source": pa.string(),
}
DEFAULT: dict[str, Any] = {"_r": 1, "cluster": "c", "group": "G", "topic": "T", "broker": "b",
                           "queue_id": 0, "source_kind": "snapshot", "source": "s1"}


def row(i: int = 0, **kw: Any) -> dict[str, Any]:
    """An observation at capture ``i`` (minutes after T0)."""
    r = {**DEFAULT, "capture_ts": T0 + i * MIN, "observed_ts": T0 + i * MIN, **kw}
    if r["_r"] == 0:
        r["capture_ts"] = None
    return r


def point(i: int, b: int, **kw: Any) -> dict[str, Any]:
    return row(i, _r=0, broker_offset=b, **kw)


def table(rows: list[dict[str, Any]]) -> Any:
    return pa.table({k: pa.array([r.get(k) for r in rows], t) for k, t in OBS_TYPES.items()})


def lag(rows: list[dict[str, Any]], **params: Any) -> list[dict[str, Any]]:
    out = K.lag_rows(table(rows), K.Params(**params)).to_pylist()
    return sorted(out, key=lambda r: (r["group"], r["broker"], r["queue_id"], r["capture_ts"]))


# ---- dedupe, fill, lag ---------------------------------------------------------------------

def test_dedupe_prefers_the_snapshot_then_the_later_then_the_larger_offset():
    rows = [row(0, broker_offset=10, consumer_offset=5, source_kind="consumer-offset"),
            row(0, broker_offset=9, consumer_offset=4, source_kind="snapshot", source="s2"),
            row(0, broker_offset=12, consumer_offset=4, source_kind="snapshot", source="s3")]
    (r,) = lag(rows)
    assert (r["broker_offset"], r["source"]) == (12, "s3")
    same = [row(0, broker_offset=10, consumer_offset=5, source="b"),
            row(0, broker_offset=10, consumer_offset=5, source="a")]
    assert [r["source"] for r in lag(same)] == ["a"]


def test_lag_is_clamped_and_never_committed_counts_the_whole_queue():
    rows = [row(0, broker_offset=10, consumer_offset=12, pull_offset=14),
            row(0, queue_id=1, broker_offset=30, consumer_offset=None, committed=False),
            row(0, queue_id=2, broker_offset=None, consumer_offset=3)]
    a, b, c = lag(rows)
    assert (a["lag"], a["inflight"]) == (0, 2)
    assert (b["lag"], b["inflight"], b["lag_seconds"], b["lag_seconds_source"]) == (
        30, None, None, "unknown")
    assert (c["lag"], c["lag_seconds"], c["lag_seconds_source"], c["status"]) == (
        None, None, "unknown", None)


def test_a_missing_max_offset_takes_the_nearest_point_of_its_own_queue_within_the_skew():
    rows = [row(0, broker_offset=None, consumer_offset=5, min_offset=None,
                source_kind="consumer-offset"),
            point(0, 100, min_offset=7) | {"observed_ts": T0 - 1000},
            point(0, 90) | {"observed_ts": T0 + 1000},  # a tie: the later wins
            point(0, 500, queue_id=1) | {"observed_ts": T0},  # another queue
            row(5, broker_offset=None, consumer_offset=5)]  # no point within 60 s
    a, b = lag(rows)
    assert (a["broker_offset"], a["broker_offset_ts"], a["min_offset"], a["lag"]) == (
        90, T0 + 1000, None, 85)
    assert (b["broker_offset"], b["broker_offset_ts"], b["lag"]) == (None, None, None)
    own = lag([row(0, broker_offset=10, consumer_offset=5)])[0]
    assert own["broker_offset_ts"] == T0


# ---- time lag ------------------------------------------------------------------------------

def test_time_lag_exact_when_caught_up_or_carried_and_not_for_now_minus_zero():
    rows = [row(0, broker_offset=10, consumer_offset=10),
            row(0, queue_id=1, broker_offset=10, consumer_offset=4, delay_ms=2500),
            row(0, queue_id=2, broker_offset=10, consumer_offset=4,
                delay_ms=K.MAX_REAL_DELAY_MS + 1)]
    a, b, c = lag(rows)
    assert (a["lag_seconds"], a["lag_seconds_source"]) == (0.0, "exact")
    assert (b["lag_seconds"], b["lag_seconds_source"], b["estimated"]) == (2.5, "exact", False)
    assert (c["delay_ms"], c["lag_seconds"], c["lag_seconds_source"]) == (None, None, "unknown")


def test_time_lag_interpolated_between_the_bracketing_points():
    # B: 0 @0, 100 @1m, 100 @2m, 400 @3m; C = 150 -> between 100 @2m and 400 @3m
    rows = [point(0, 0), point(1, 100), point(2, 100),
            row(3, broker_offset=400, consumer_offset=150)]
    (r,) = lag(rows)
    t_star = (T0 + 2 * MIN) + (150 - 100 + 1) * MIN / (400 - 100 + 1)
    assert r["lag_seconds_source"] == "interpolated" and r["estimated"] is True
    assert r["lag_seconds"] == pytest.approx((T0 + 3 * MIN - t_star) / 1000.0)


def test_time_lag_lower_bound_before_the_first_point_and_unknown_with_one():
    lower = [row(0, broker_offset=50, consumer_offset=10),
             row(2, broker_offset=60, consumer_offset=10)]
    a, b = lag(lower)
    assert (a["lag_seconds"], a["lag_seconds_source"]) == (None, "unknown")
    assert (b["lag_seconds"], b["lag_seconds_source"], b["lower_bound"]) == (
        120.0, "lower_bound", True)


def test_time_lag_history_is_split_where_the_max_offset_went_back():
    # a broker replaced: B 1000 -> 5; the observation after it only uses its own segment
    rows = [point(0, 900), point(1, 1000), point(2, 5), point(3, 20),
            row(4, broker_offset=30, consumer_offset=10)]
    (r,) = lag(rows)
    t_star = (T0 + 2 * MIN) + (10 - 5 + 1) * MIN / (20 - 5 + 1)
    assert r["lag_seconds_source"] == "interpolated"
    assert r["lag_seconds"] == pytest.approx((T0 + 4 * MIN - t_star) / 1000.0)


def test_time_lag_history_is_the_queues_own_across_groups():
    rows = [row(0, group="A", broker_offset=100, consumer_offset=100),
            row(0, queue_id=1, group="A", broker_offset=5, consumer_offset=5),
            row(1, group="B", broker_offset=200, consumer_offset=150)]
    b = next(r for r in lag(rows) if r["group"] == "B")
    # A's point (100 @0) brackets B's C=150 with B's own (200 @1m); queue 1's does not count
    t_star = T0 + (150 - 100 + 1) * MIN / (200 - 100 + 1)
    assert b["lag_seconds"] == pytest.approx((T0 + MIN - t_star) / 1000.0)


def test_upper_bound_from_the_last_consumed_message():
    (r,) = lag([row(0, broker_offset=10, consumer_offset=4, last_timestamp=T0 - 30_000)])
    assert r["lag_seconds_upper"] == 30.0
    (z,) = lag([row(0, broker_offset=10, consumer_offset=10, last_timestamp=T0 - 30_000)])
    assert z["lag_seconds_upper"] is None


# ---- status --------------------------------------------------------------------------------

def series(offsets: list[tuple[int, int]], **kw: Any) -> list[dict[str, Any]]:
    return [row(i, broker_offset=b, consumer_offset=c, **kw) for i, (b, c) in enumerate(offsets)]


def statuses(rows: list[dict[str, Any]], **params: Any) -> list[str | None]:
    return [r["status"] for r in lag(rows, **params)]


def test_status_stall_warn_ok_and_a_single_capture():
    assert statuses(series([(10, 5), (20, 5), (30, 5)], online=True), window=3)[-1] == "STALL"
    assert statuses(series([(10, 5), (20, 6), (30, 7)]), window=3)[-1] == "WARN"
    assert statuses(series([(10, 5), (20, 16), (30, 20)]), window=3)[-1] == "OK"
    assert statuses(series([(10, 5)]), window=3) == ["OK"]


def test_status_rewind_and_its_recovery():
    assert statuses(series([(100, 50), (100, 60), (100, 20)]), window=5)[-1] == "REWIND"
    # back to 60 after the decrease: recovered
    assert statuses(series([(100, 50), (100, 60), (100, 20), (100, 61)]),
                    window=5)[-1] != "REWIND"


def test_status_stop_offline_and_inferred_with_unknown_membership():
    assert statuses(series([(10, 5)], online=False)) == ["STOP"]
    assert statuses(series([(10, 5)], online=True, consume_enable=False)) == ["STOP"]
    # membership unknown: no move over a full window while the lag grew (inferred STOP) ...
    assert statuses(series([(10, 5), (20, 5), (30, 5)]), window=3) == ["OK", "STALL", "STOP"]
    # ... not when the lag did not grow, nor when the window is not full
    assert statuses(series([(10, 5), (10, 5), (10, 5)]), window=3)[-1] == "STALL"
    assert statuses(series([(10, 5), (20, 5), (30, 5)]), window=4)[-1] == "STALL"
    # ... nor with a max offset of the window at the current offset (checkIfRecentLagZero)
    assert statuses(series([(5, 5), (20, 5), (30, 5)]), window=3)[-1] == "OK"


def test_status_caught_up_by_time_lag_not_by_a_lower_bound():
    rows = series([(10, 5), (20, 5)])
    rows[1]["delay_ms"] = 3000
    assert statuses(rows, window=3, allowed_lag_seconds=10.0)[-1] == "OK"
    assert statuses(rows, window=3, allowed_lag_seconds=0.0)[-1] == "STALL"


def test_status_window_and_rates_restart_at_queue_boundaries():
    a = series([(10, 5), (20, 5), (30, 5)], queue_id=0)
    b = series([(100, 50), (110, 60)], queue_id=1)
    out = lag(a + b, window=3)
    q0, q1 = out[:3], out[3:]
    assert [r["window_samples"] for r in q0] == [1, 2, 3]
    assert [r["window_samples"] for r in q1] == [1, 2]
    assert [r["complete"] for r in q1] == [pytest.approx(1 / 3), pytest.approx(2 / 3)]
    assert q1[0]["consume_rate"] is None and q1[0]["produce_rate"] is None
    assert q1[1]["consume_rate"] == pytest.approx(10 / 60)
    assert q0[2]["consume_rate"] == 0.0


def test_never_committed_is_in_no_window():
    rows = [row(0, broker_offset=10, consumer_offset=None, committed=False),
            row(1, broker_offset=0, consumer_offset=None, committed=False),
            row(2, broker_offset=10, consumer_offset=None, committed=False, online=False),
            row(3, broker_offset=20, consumer_offset=5)]
    out = lag(rows, window=3)
    assert [r["status"] for r in out] == [None, "OK", "STOP", "OK"]
    assert [r["window_samples"] for r in out] == [None, None, None, 1]


def test_empty_batch():
    assert lag([]) == []
    assert K.owner_changes(table([])).num_rows == 0
    assert K.unowned_intervals(table([])).num_rows == 0
    assert K.capture_resets(table([])).num_rows == 0


# ---- owners --------------------------------------------------------------------------------

def owned(owners: list[str | None], **kw: Any) -> list[dict[str, Any]]:
    return [row(i, broker_offset=10, consumer_offset=5, owner=o, **kw)
            for i, o in enumerate(owners)]


def changes(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    out = K.owner_changes(table(rows)).to_pylist()
    return sorted((r["queue_id"], (r["ts"] - T0) // MIN, (r["window_start_ts"] - T0) // MIN,
                   r["client"], r["change"]) for r in out)


def test_owner_changes_gain_and_loss_between_captures():
    assert changes(owned(["c1", "c1", "c2"])) == [(0, 2, 1, "c1", "lost"),
                                                   (0, 2, 1, "c2", "gained")]


def test_an_owner_that_did_not_answer_carries_the_previous_owner():
    rows = owned(["c1", None, None, "c1"])
    for r in rows[1:3]:
        r["owner_unknown"] = True
    assert changes(rows) == []
    assert K.unowned_intervals(table(rows)).num_rows == 0
    moved = owned(["c1", None, "c2"])
    moved[1]["owner_unknown"] = True
    # dated from the last capture that showed the old owner
    assert changes(moved) == [(0, 2, 0, "c1", "lost"), (0, 2, 0, "c2", "gained")]


def test_ownership_unknown_at_a_capture_where_no_queue_has_an_owner():
    rows = owned(["c1", None, "c1"])
    # capture 1: no queue of the topic has an owner and the group is not offline: not known
    assert changes(rows) == []
    offline = owned(["c1", None, "c1"])
    offline[1]["online"] = False
    assert changes(offline) == [(0, 1, 0, "c1", "lost"), (0, 2, 1, "c1", "gained")]


def test_the_track_keeps_known_captures_and_skips_an_owner_not_read():
    rows = owned(["c1", None, None, "c2"])
    rows[1]["owner_unknown"] = True  # not read: left out, the previous owner carries
    rows += owned([None, "c9", None, "c9"], queue_id=1)  # capture 0: no owner anywhere
    got = [(r["queue_id"], (r["capture_ts"] - T0) // MIN, r["owner"])
           for r in K.tracked_rows(table(rows)).to_pylist()]
    # capture 0 is known (queue 0 has an owner), so queue 1's "no owner" there counts;
    # capture 2 has no owner on any queue of the topic (and the group is online): not known
    assert got == [(0, 0, "c1"), (0, 3, "c2"), (1, 0, None), (1, 1, "c9"), (1, 3, "c9")]


def test_unowned_intervals_since_start_end_and_open():
    rows = owned(["c1", None, None, "c2"]) + owned(["c1", None], queue_id=1)
    # another queue keeps an owner at each capture: ownership is known at each
    rows += owned(["c3", "c3", "c3", "c3"], queue_id=2)
    out = sorted(K.unowned_intervals(table(rows)).to_pylist(), key=lambda r: r["queue_id"])
    assert [(r["queue_id"], r["since_ts"], r["start_ts"], r["end_ts"], r["duration_ms"],
             r["open"]) for r in out] == [
        (0, T0, T0 + MIN, T0 + 3 * MIN, 2 * MIN, False),
        (1, T0, T0 + MIN, None, 0, True)]


def test_capture_resets_same_owner_offset_back_one_event_per_owner():
    rows = [row(0, queue_id=q, broker_offset=100, consumer_offset=50, owner="c1")
            for q in (0, 1, 2)]
    rows += [row(1, queue_id=q, broker_offset=100, consumer_offset=10, owner="c1")
             for q in (1, 0)]
    rows += [row(1, queue_id=2, broker_offset=100, consumer_offset=10, owner="c2")]
    (ev,) = K.capture_resets(table(rows)).to_pylist()
    assert (ev["ts"], ev["window_start_ts"], ev["client"], ev["queues"], ev["cause"]) == (
        T0 + MIN, T0, "c1", ["b:0", "b:1"], "reset")
    # compared with the previous capture that had an owner (the 4.x push reset's gap)
    gap = [row(0, broker_offset=100, consumer_offset=50, owner="c1"),
           row(1, broker_offset=100, consumer_offset=50, owner=None),
           row(2, broker_offset=100, consumer_offset=20, owner="c1")]
    (g,) = K.capture_resets(table(gap)).to_pylist()
    assert (g["ts"], g["window_start_ts"]) == (T0 + 2 * MIN, T0)


# ---- per group and topic ---------------------------------------------------------------------

GT_TYPES = {"capture_ts": pa.int64(), "observed_ts": pa.int64(), "cluster": pa.string(),
            "group": pa.string(), "topic": pa.string(), "lag": pa.int64(),
            "lag_seconds": pa.float64(), "lag_seconds_source": pa.string(),
            "estimated": pa.bool_(), "consume_rate": pa.float64(),
            "produce_rate": pa.float64(), "status": pa.string(), "complete": pa.float64(),
            "online": pa.bool_(), "members": pa.int32(), "committed": pa.bool_(),
            "owner_unknown": pa.bool_(), "window_samples": pa.int32(),
            "consume_type": pa.string()}


def group_topics(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    base = {"cluster": "c", "group": "G", "topic": "T", "capture_ts": T0, "observed_ts": T0}
    t = pa.table({k: pa.array([{**base, **r}.get(k) for r in rows], typ)
                  for k, typ in GT_TYPES.items()})
    return {(r["topic"], r["capture_ts"]): r for r in GT.group_topic_rows(t).to_pylist()}


def test_group_topic_totals_worst_status_and_its_queue_count():
    rows = [{"lag": 5, "status": "OK", "window_samples": 10, "members": 2},
            {"lag": 7, "status": "STALL", "window_samples": 4, "members": 3},
            {"lag": None, "status": "STALL", "window_samples": None},
            {"topic": "U", "lag": 1, "status": None}]
    gt = group_topics(rows)
    t = gt["T", T0]
    assert (t["queues"], t["queues_known"], t["total_lag"], t["max_lag"]) == (3, 2, 12, 7)
    assert (t["status_code"], t["status_queues"], t["window_samples"], t["members"]) == (
        3, 2, 4, 3)
    u = gt["U", T0]  # no queue has a status: unknown, never OK
    assert (u["status_code"], u["status_queues"], u["window_samples"]) == (None, None, None)


def test_group_topic_unknowns_stay_null_and_caveats_count():
    rows = [{"committed": False, "owner_unknown": True, "online": None, "estimated": None},
            {"committed": None, "owner_unknown": None, "online": None, "estimated": None}]
    t = group_topics(rows)["T", T0]
    assert (t["total_lag"], t["max_lag"], t["lag_seconds"], t["consume_rate"]) == (
        None, None, None, None)
    assert (t["online"], t["estimated"], t["complete"], t["consume_type"]) == (
        None, None, None, None)
    assert (t["never_committed"], t["owner_unknown"]) == (1, 1)


def test_group_topic_total_that_does_not_fit_a_long_is_unknown():
    big = 1 << 62
    t = group_topics([{"lag": big + 1}, {"lag": big + 3}])["T", T0]
    assert (t["total_lag"], t["max_lag"]) == (None, big + 3)


def test_group_topic_rates_add_in_ascending_order_and_time_lag_source_of_the_max():
    rates = [0.1, 1e16, 0.2, -1e16, 0.3]
    rows = [{"consume_rate": r, "lag_seconds": s, "lag_seconds_source": src,
             "complete": c, "online": o}
            for r, s, src, c, o in zip(rates, [3.0, 9.0, 9.0, None, 1.0],
                                       ["exact", "interpolated", "exact", None, "exact"],
                                       [1.0, 0.5, None, 1.0, 2.0],
                                       [False, True, None, False, False], strict=True)]
    t = group_topics(rows)["T", T0]
    acc = 0.0
    for r in sorted(rates):
        acc += r
    assert t["consume_rate"] == acc  # (in the rows' order the sum differs)
    # the first of the rows with the largest time lag names its source
    assert (t["lag_seconds"], t["lag_seconds_source"]) == (9.0, "interpolated")
    assert (t["complete"], t["online"]) == (3 / 4, True)

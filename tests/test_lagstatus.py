"""The lag report's per-queue rules in plain Python (mqctl.lagstatus, what ``mqctl exporter``
runs): Burrow's statuses case by case, and sample by sample against the reference that the
Spark job is checked against (tests/lagstatus_reference.py) over the same random histories;
the time lag as docs/lag-rules.md says it."""

from __future__ import annotations

import pytest
from lagstatus_reference import burrow_reference, random_histories

from mqctl.lagstatus import Sample, queue_status, time_lag, worst

S = 1000


def with_lag(r: dict) -> dict:
    """The report's lag (docs/lag-rules.md): broker - consumer offset clamped at 0; a queue
    never committed counts the whole queue; no max offset: unknown."""
    b, c = r.get("broker_offset"), r.get("consumer_offset")
    lag = None if b is None else max(b - (c or 0), 0)
    return {**r, "lag": lag, "observed_ts": r.get("observed_ts", r["capture_ts"]),
            "online": r.get("online"), "consume_enable": r.get("consume_enable")}


def sample(r: dict) -> Sample:
    return Sample(r["capture_ts"], r["consumer_offset"], r["broker_offset"], r["lag"],
                  online=r["online"], consume_enable=r["consume_enable"],
                  observed_ts=r["observed_ts"])


def verdicts(rows: list[dict], window: int, allowed_lag: int = 0,
             allowed_lag_seconds: float = 0.0) -> dict[int, tuple]:
    """Per capture: (status, complete, window_samples, consume rate, produce rate)."""
    hist: list[Sample] = []
    out = {}
    for r in rows:
        hist.append(sample(r))
        v = queue_status(hist, window, allowed_lag, allowed_lag_seconds)
        out[r["capture_ts"]] = (v.status, v.complete, v.window_samples, v.consume_rate,
                                v.produce_rate)
    return out


def series(offsets, lags, online=None, consume_enable=None, step=60 * S):
    out = []
    for i, (c, lag) in enumerate(zip(offsets, lags, strict=True)):
        on = online[i] if isinstance(online, list) else online
        out.append(with_lag({"capture_ts": i * step, "consumer_offset": c,
                             "broker_offset": c + lag, "online": on,
                             "consume_enable": consume_enable}))
    return out


CASES = {  # the cases of the Spark job's test_each_burrow_status, window 3: the last status
    "ok_zero": (series([10, 20, 30], [5, 0, 5], online=True), "OK"),
    "warn": (series([10, 20, 30], [5, 5, 6], online=True), "WARN"),
    "ok_dec": (series([10, 20, 30], [5, 4, 6], online=True), "OK"),
    "stall": (series([10, 10, 10], [5, 6, 7], online=True), "STALL"),
    "stop_off": (series([10, 20, 30], [5, 6, 7], online=[True, True, False]), "STOP"),
    "stop_unk": (series([10, 10, 10], [5, 6, 8]), "STOP"),
    "stall_unk": (series([10, 10, 10], [5, 5, 5]), "STALL"),
    "rewind": (series([30, 20, 25], [5, 15, 12], online=True), "REWIND"),
    "disabled": (series([10, 20, 30], [5, 6, 7], consume_enable=False), "STOP"),
    "caught": (series([0, 0, 0], [0, 0, 0], online=False), "OK"),
    "rw_back": (series([30, 20, 35], [5, 15, 6], online=True), "OK"),
    "rw_back2": (series([100, 98, 110], [5, 9, 8], online=True), "OK"),
    "rw_zero": (series([30, 0, 10], [0, 30, 25], online=True), "REWIND"),
    "stop_grace": (series([10, 10, 10], [0, 5, 8]), "OK"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_burrow_status(name):
    rows, want = CASES[name]
    assert verdicts(rows, 3)[120 * S][0] == want


def test_a_single_capture_is_ok_or_stop_and_rates_need_two():
    st = verdicts(series([10, 20, 30], [5, 5, 6], online=True), 3)
    assert st[0][:3] == ("OK", pytest.approx(1 / 3), 1) and st[0][3:] == (None, None)
    # 10 messages consumed in 60 s; produced: the max offset 15 -> 25
    assert st[60 * S][3] == pytest.approx(10 / 60) and st[60 * S][4] == pytest.approx(10 / 60)
    assert st[120 * S][1:3] == (1.0, 3)
    off = verdicts(series([10, 20, 30], [5, 6, 7], online=[False, True, True]), 3)
    assert off[0][0] == "STOP"


def test_the_window_slides():
    st = verdicts(series([10, 20, 30, 40], [0, 5, 6, 7], online=True), 3)
    assert st[120 * S][0] == "OK" and st[180 * S][0] == "WARN"


def test_a_time_lag_within_allowed_seconds_is_caught_up_but_not_a_lower_bound():
    rows = series([10, 20, 30], [5, 5, 6], online=True)
    hist = [sample(r) for r in rows]
    assert queue_status(hist, 3).status == "WARN"
    near = [Sample(s.capture_ts, s.consumer_offset, s.broker_offset, s.lag, online=True,
                   lag_seconds=4.0) for s in hist]
    assert queue_status(near, 3, allowed_lag_seconds=10).status == "OK"
    assert queue_status(near, 3, allowed_lag_seconds=0).status == "WARN"
    bound = [Sample(s.capture_ts, s.consumer_offset, s.broker_offset, s.lag, online=True,
                    lag_seconds=4.0, lower_bound=True) for s in hist]
    assert queue_status(bound, 3, allowed_lag_seconds=10).status == "WARN"


def test_never_committed_is_in_no_window():
    nc = Sample(0, None, 50, 50, online=True)
    assert queue_status([nc], 3).status is None
    assert queue_status([Sample(0, None, 50, 50, online=False)], 3).status == "STOP"
    assert queue_status([Sample(0, None, 0, 0, online=True)], 3).status == "OK"
    assert queue_status([Sample(0, 5, None, None, online=True)], 3).status is None


def test_equal_to_the_reference_on_random_histories():
    """Every sample of the 300 random histories the Spark job is checked on, over windows of
    1, 2, 3 and 5 samples: the same status, complete, window samples and rates."""
    rows = [with_lag(r) for r in random_histories()]
    queues: dict[tuple, list[dict]] = {}
    for r in rows:
        queues.setdefault((r["group"], r["queue_id"]), []).append(r)
    checked, seen = 0, set()
    for window, allowed in ((1, 0), (2, 0), (3, 0), (3, 2), (5, 0)):
        for samples in queues.values():
            samples.sort(key=lambda r: r["capture_ts"])
            want = burrow_reference(samples, window, allowed)
            got = verdicts(samples, window, allowed)
            assert got.keys() == want.keys()
            bad = {k: (got[k], want[k]) for k in want if got[k] != pytest.approx(want[k])}
            assert not bad, (window, allowed, bad)
            seen |= {v[0] for v in got.values()}
            checked += len(want)
    assert {"OK", "WARN", "REWIND", "STALL", "STOP", None} <= seen
    assert checked > 5000


def test_the_reference_comparison_can_fail():
    rows = series([10, 10, 10], [5, 6, 7], online=True)
    assert burrow_reference(rows, 3)[120 * S][0] == "STALL"
    assert verdicts(rows, 3) == burrow_reference(rows, 3)
    assert verdicts(rows, 2) != burrow_reference(rows, 3)  # (window samples 2, not 3)


def test_worst_is_by_mqctl_severity():
    assert worst(["OK", "REWIND", "STALL", None]) == "STALL"
    assert worst(["STOP", "STALL"]) == "STOP" and worst([None]) is None


def test_time_lag_exact_interpolated_lower_bound_unknown():
    assert time_lag(0, 10, None, 100 * S, []).source == "exact"
    tl = time_lag(5, 10, 12_000, 100 * S, [])
    assert (tl.seconds, tl.source, tl.estimated) == (12.0, "exact", False)
    # the broker's "now - 0" of a never-committed queue is no time lag
    assert time_lag(5, 10, 1_795_467_383_000, 100 * S, []).source == "unknown"
    assert time_lag(50, None, None, 100 * S, [(0, 50)]).source == "unknown"
    # message 10 stored between B=0 at 0 s and B=101 at 60 s: the 11th of 101 -> 60*11/102 s
    pts = [(0, 0), (60 * S, 101), (120 * S, 200)]
    tl = time_lag(190, 10, None, 120 * S, pts)
    assert tl.source == "interpolated" and tl.estimated and not tl.lower_bound
    assert tl.seconds == pytest.approx(120 - 60 * 11 / 102)
    # every point above C: at least since the first point
    lb = time_lag(50, 10, None, 120 * S, [(60 * S, 40), (120 * S, 60)])
    assert (lb.seconds, lb.source, lb.lower_bound) == (60.0, "lower_bound", True)
    assert time_lag(50, 10, None, 60 * S, [(60 * S, 60)]).source == "unknown"
    # a max offset that went backwards (a store wiped): only the points after it count
    seg = time_lag(20, 5, None, 180 * S, [(0, 100), (60 * S, 3), (120 * S, 25)])
    assert seg.source == "interpolated"
    assert seg.seconds == pytest.approx(180 - (60 + 3 / 23 * 60))

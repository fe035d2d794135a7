"""The exporter's rebalance and health rules (:mod:`mqctl.laghealth`) against the Spark
report's transforms restated row by row (tests/laghealth_reference.py) on random owner
histories, and case by case. No Spark: tests/lagjob/test_laghealth_spark.py checks the
transforms themselves against the same reference."""

from __future__ import annotations

import dataclasses

import pytest
from laghealth_reference import random_owner_histories, report_reference

from mqctl.laghealth import GroupNow, HealthOptions, Obs, judge

S = 1000
FIELDS = ("rebalances", "storms", "in_storm", "storm_start_ts", "storm_end_ts", "storm_rounds",
          "storm_events", "storm_rule", "unowned_ms", "unowned_share", "unowned_now",
          "health_code")


def obs_of(rows):
    return [Obs(r["cluster"], r["group"], r["topic"], r["broker"], r["queue_id"],
                r["capture_ts"], r["owner"], r["owner_unknown"], r["online"],
                r["consumer_offset"]) for r in rows]


def groups_of(rows):
    return [GroupNow(g["cluster"], g["group"], g["capture_ts"], g["group_status_code"],
                     g["queues"], g["online"]) for g in rows]


def verdicts(rows, latest, **kw):
    got = judge(obs_of(rows), groups_of(latest), HealthOptions(**kw))
    return {k: {f: getattr(v, f) for f in FIELDS} for k, v in got.items()}


@pytest.mark.parametrize("seed", [7, 8, 9, 10])
@pytest.mark.parametrize("kw", [
    {}, {"storm_rounds": 2, "storm_window_ms": 120 * S, "storm_round_max_ms": 0},
    {"round_gap_ms": 60 * S, "storm_round_max_ms": 45 * S, "unowned_max": 0.0},
    {"storm_rounds": 1, "storm_window_ms": 30 * S, "unowned_max": 0.5}])
def test_equal_to_the_report_reference_on_random_histories(seed, kw):
    rows, latest = random_owner_histories(seed, groups=14)
    want = report_reference(rows, latest, **kw)
    got = verdicts(rows, latest, **kw)
    assert got.keys() == want.keys()
    bad = {k: (got[k], {f: want[k][f] for f in FIELDS}) for k in want
           if got[k] != pytest.approx({f: want[k][f] for f in FIELDS})}
    assert not bad


def test_the_random_histories_reach_every_verdict():
    """The comparison above is worth something: storms by both rules, unowned time, resets,
    every health."""
    seen_rules, seen_health, unowned, rebal = set(), set(), 0, 0
    for seed in (7, 8, 9, 10):
        rows, latest = random_owner_histories(seed, groups=14)
        for v in report_reference(rows, latest).values():
            seen_rules.add(v["storm_rule"])
            seen_health.add(v["health_code"])
            unowned += v["unowned_ms"] > 0
            rebal += v["rebalances"]
    assert {"rounds", "long-round"} <= {p for r in seen_rules if r for p in r.split("+")}
    assert {0, 1, 2, None} <= seen_health
    assert unowned > 5 and rebal > 50


def test_the_reference_comparison_can_fail():
    rows, latest = random_owner_histories(7, groups=14)
    want = report_reference(rows, latest)
    got = verdicts(rows, latest, storm_rounds=2)
    assert got != {k: {f: v[f] for f in FIELDS} for k, v in want.items()}


def _q(ts, owner, *, queue=0, offset=10, online=True):
    return Obs("C", "G", "T", "b", queue, ts, owner, online=online, offset=offset)


def test_three_rounds_in_the_window_are_a_storm_and_err():
    flips = [_q(t * 60 * S, f"c{t % 2}") for t in range(5)]  # a move every minute
    g = GroupNow("C", "G", 4 * 60 * S, 0, 1, True)
    assert judge(flips, [g], HealthOptions(storm_rounds=5))[("C", "G")].health == "OK"
    v = judge(flips, [g], HealthOptions())[("C", "G")]
    assert (v.rebalances, v.storms, v.in_storm, v.storm_rule) == (8, 1, True, "rounds")
    assert v.storm_rounds == 4 and v.health == "ERR"
    calm = judge(flips[:2], [GroupNow("C", "G", 60 * S, 0, 1, True)], HealthOptions())
    assert calm[("C", "G")].health == "OK" and calm[("C", "G")].storms == 0


def _held(ts):
    return _q(ts, "c1", queue=1)  # (a capture with no owner at all says nothing of owners)


def test_an_unowned_queue_counts_its_time_in_the_window():
    hist = [_q(0, "c0"), _q(60 * S, None), _q(120 * S, None), _q(180 * S, "c0")]
    hist += [_held(o.ts) for o in hist]
    v = judge(hist, [GroupNow("C", "G", 180 * S, 0, 2, True)], HealthOptions())[("C", "G")]
    assert v.unowned_ms == 120 * S and v.unowned_share == pytest.approx(0.1)
    assert v.unowned_now == 0 and v.health == "ERR" and v.rebalances == 2
    open_ = judge([o for o in hist if o.ts <= 120 * S], [GroupNow("C", "G", 120 * S, 1, 2, True)],
                  HealthOptions())[("C", "G")]
    assert open_.unowned_now == 1 and open_.unowned_ms == 60 * S and open_.health == "WARN"
    lone = judge([o for o in hist if o.queue[4] == 0], [GroupNow("C", "G", 180 * S, 0, 1, True)],
                 HealthOptions())[("C", "G")]
    assert lone.unowned_ms == 0 and lone.rebalances == 0


def test_an_offline_group_is_not_err_for_its_unowned_queues():
    hist = [_q(0, None, online=False), _q(60 * S, None, online=False)]
    v = judge(hist, [GroupNow("C", "G", 60 * S, 4, 1, False)], HealthOptions())[("C", "G")]
    assert v.unowned_ms == 60 * S and v.health == "ERR"  # (STOP: the status's ERR)
    w = judge(hist, [GroupNow("C", "G", 60 * S, 1, 1, False)], HealthOptions())[("C", "G")]
    assert w.health == "WARN"


def test_a_reset_drop_and_re_add_is_no_rebalance():
    hist = [_q(0, "c0", offset=50), _q(30 * S, None, offset=50), _q(60 * S, "c0", offset=5)]
    held = [_held(o.ts) for o in hist]
    v = judge(hist + held, [GroupNow("C", "G", 60 * S, 0, 1, True)], HealthOptions())[("C", "G")]
    assert v.rebalances == 0 and v.unowned_ms == 0
    moved = dataclasses.replace(hist[2], offset=60)
    v = judge([*hist[:2], moved, *held], [GroupNow("C", "G", 60 * S, 0, 1, True)],
              HealthOptions())[("C", "G")]
    assert v.rebalances == 2 and v.unowned_ms == 30 * S

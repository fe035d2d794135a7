"""The Spark report's rebalance and health steps (captures only, as
``stages.rebalance_history`` runs them without logs: the kernel's owner frames, then
``group_health`` and ``with_rebalances``) against the row-by-row reference
(tests/laghealth_reference.py) on the random owner histories :mod:`mqctl.laghealth` is
checked on (tests/test_laghealth.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from laghealth_reference import random_owner_histories, report_reference

from mqctl.lagjob import transforms as X

from .kernel_frames import owner_frames

pytestmark = pytest.mark.spark

OBS = ("cluster string, `group` string, topic string, broker string, queue_id int, "
       "capture_ts long, owner string, owner_unknown boolean, online boolean, "
       "consumer_offset long, source_kind string, source string")
GROUPS = ("cluster string, `group` string, capture_ts long, group_status_code int, "
          "queues long, online boolean, message_model string")
FIELDS = ("rebalances", "storms", "in_storm", "storm_start_ts", "storm_end_ts", "storm_rounds",
          "storm_events", "storm_rule", "unowned_ms", "unowned_share", "unowned_now",
          "health_code")


def spark_verdicts(spark, rows, latest, *, round_gap_ms=20_000, storm_rounds=3,
                   storm_window_ms=600_000, storm_round_max_ms=60_000, unowned_max=0.1):
    cols = [c.split()[0].strip("`") for c in OBS.split(", ")]
    obs = spark.createDataFrame(
        [tuple({**r, "source_kind": "snapshot", "source": "s"}[c] for c in cols)
         for r in rows], OBS)
    own = owner_frames(obs)  # (the kernel's owner track, changes, resets, unowned intervals)
    resets = own["resets"]
    changes = X.mark_resets(own["changes"].select(*X.CHANGE_COLS), resets)
    unowned = X.drop_reset_gaps(own["unowned"], changes)
    events = X.rebalance_events(changes).unionByName(resets)
    rounds = X.rebalance_rounds(events, round_gap_ms)
    storms = X.rebalance_storms(rounds, storm_rounds, storm_window_ms, storm_round_max_ms)
    gcols = [c.split()[0].strip("`") for c in GROUPS.split(", ")]
    groups = spark.createDataFrame([tuple({**g, "message_model": "CLUSTERING"}[c]
                                          for c in gcols) for g in latest], GROUPS)
    health = X.group_health(groups, storms, unowned, storm_window_ms, unowned_max)
    counted = X.with_rebalances(groups.select("cluster", "group"), events)
    out = {}
    for r in health.join(counted, on=["cluster", "group"]).collect():
        d = r.asDict()
        out[(d["cluster"], d["group"])] = {f: d[f] for f in FIELDS}
    return out


@pytest.mark.parametrize("kw", [
    {}, {"storm_rounds": 2, "storm_window_ms": 120_000, "storm_round_max_ms": 0},
    {"round_gap_ms": 60_000, "storm_round_max_ms": 45_000, "unowned_max": 0.0}])
def test_the_spark_transforms_equal_the_reference(spark, kw):
    rows, latest = random_owner_histories(7, groups=14)
    want = report_reference(rows, latest, **kw)
    got = spark_verdicts(spark, rows, latest, **kw)
    assert got.keys() == want.keys()
    bad = {k: (got[k], {f: want[k][f] for f in FIELDS}) for k in want
           if got[k] != pytest.approx({f: want[k][f] for f in FIELDS})}
    assert not bad

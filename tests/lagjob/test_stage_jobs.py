"""Issue 28 item 2: the group health of a small run is one shuffle. With adaptive execution
every exchange of a cut's plan is a query stage and a Spark job of its own; the health joined
the groups to their storms and unowned intervals, aggregated and joined back (11 jobs of the
demo's report), and now partitions them once by group and computes everything in windows
(5). A count of jobs (the status tracker, job group ``mqctl-lag:health``), not a time."""

from __future__ import annotations

from mqctl.lagjob.job import run_report

from .builders import build_scenario

# this input (every kind, with logs): 5 jobs after the change, 11-13 before it
MAX_HEALTH = 7


def test_the_group_health_of_a_small_run_is_one_shuffle(spark, tmp_path):
    build_scenario(tmp_path / "in")
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup("mqctl-lag:health"))
    res = run_report([str(tmp_path / "in")], str(tmp_path / "out"), spark=spark, tz="UTC",
                     log_tz="UTC")
    jobs = len(set(tracker.getJobIdsForGroup("mqctl-lag:health")) - before)
    healths = {(g["group"], g["health"]) for g in res.groups}
    assert ("G_STALL", "ERR") in healths and ("GID_LOG", None) in healths, healths
    assert 0 < jobs <= MAX_HEALTH, jobs

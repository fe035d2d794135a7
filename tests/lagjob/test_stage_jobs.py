"""The group health of a small run is one shuffle. With adaptive execution
every exchange of a cut's plan is a query stage and a Spark job of its own; the health joined
the groups to their storms and unowned intervals, aggregated and joined back (11 jobs of the
demo's report), and now partitions them once by group and computes everything in windows
(5). A count of jobs (the status tracker, job group ``mqctl-lag:health``), not a time.

The run keeps adaptive execution and four shuffle partitions, as an input of 4 MB or more
gets them: below that a run has neither (``session.sized_settings``), and a job count would
no longer count the exchanges."""

from __future__ import annotations

from mqctl.lagjob.job import run_report
from mqctl.lagjob.session import run_settings

from .builders import build_scenario

# this input (every kind, with logs): 5 jobs after the change, 11-13 before it
MAX_HEALTH = 7


def test_the_group_health_of_a_small_run_is_one_shuffle(spark, tmp_path):
    build_scenario(tmp_path / "in")
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup("mqctl-lag:health"))
    # (the user's --conf wins over the sized settings: these are the session's for the run)
    aqe = {"spark.sql.adaptive.enabled": "true", "spark.sql.shuffle.partitions": "4"}
    with run_settings(spark, aqe):
        res = run_report([str(tmp_path / "in")], str(tmp_path / "out"), spark=spark, tz="UTC",
                         log_tz="UTC", spark_conf=aqe)
    jobs = len(set(tracker.getJobIdsForGroup("mqctl-lag:health")) - before)
    healths = {(g["group"], g["health"]) for g in res.groups}
    assert ("G_STALL", "ERR") in healths and ("GID_LOG", None) in healths, healths
    assert 0 < jobs <= MAX_HEALTH, jobs

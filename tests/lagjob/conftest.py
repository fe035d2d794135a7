"""The ONE SparkSession of the lag job tests (session-scoped), and input builders."""

from __future__ import annotations

import os
import sys

import pytest
from made_once import made_once

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("SPARK_LOCAL_HOSTNAME", "localhost")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("mqctl-lagjob-tests")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.default.parallelism", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "1g")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.extraJavaOptions",
                       "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-DontCompileHugeMethods "
                       "-XX:ReservedCodeCacheSize=512m")
               .config("spark.sql.session.timeZone", "UTC")
               # as mqctl's own sessions (session.PYSPARK_CALL_SITES): no call-site capture
               .config("spark.python.sql.dataFrameDebugging.enabled", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    from mqctl.lagjob import lookups

    lookups.install(session)  # as every report does (run_report): Java look-ups kept
    yield session
    session.stop()


@pytest.fixture(scope="session")
def demo_report(spark, tmp_path_factory):
    """`mqctl demo`'s timeline (1.75 simulated hours, a capture every 10 minutes: 10 captures,
    its client and broker logs) and the Spark report over it, once per test run: test_demo.py,
    test_report_browser.py and test_prometheus_tools.py all read this one run (and never
    write into it).

    Under pytest-xdist each worker has its own session, so the first worker to ask makes it in
    the run's shared temporary directory, holding a lock, and leaves its result there; a
    worker that asks later (or waits on the lock meanwhile) reads that result instead of
    making a second one (the demo's report takes about a minute of a test worker)."""
    from mqctl.demo import run_demo

    def make(where):
        return run_demo(where, hours=1.75, interval_s=600, spark=spark)

    if not os.environ.get("PYTEST_XDIST_WORKER"):  # one process: nothing to share
        return make(tmp_path_factory.mktemp("demo"))
    return made_once(tmp_path_factory.getbasetemp().parent / "demo-report", make)

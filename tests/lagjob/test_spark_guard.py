"""tests/spark_guard.py: a test timing out inside a JVM call leaves the shared session usable.

Without the guard, the interrupted call's answer is read by the next call on the same py4j
socket (and the next call waits for the interrupted job to finish first): every spark test
after one timeout failed. See the guard's docstring.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import spark_guard

TESTS = Path(__file__).resolve().parent.parent


@pytest.mark.spark
def test_an_interrupted_spark_call_leaves_the_session_usable(spark):
    from pyspark.sql import functions as F

    class Interrupted(BaseException):  # (as pytest-timeout's Failed: not an Exception)
        pass

    dropped: list[bool] = []

    def fire(signum, frame):
        dropped.append(spark_guard.drop_interrupted_py4j_call())
        raise Interrupted

    tracker = spark.sparkContext.statusTracker()
    main, running = threading.get_ident(), threading.Event()

    def alarm_once_the_job_runs() -> None:  # (as a timeout fires: inside the JVM call)
        deadline = time.monotonic() + 120
        while not tracker.getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.05)
        running.set()
        signal.pthread_kill(main, signal.SIGALRM)

    before = signal.signal(signal.SIGALRM, fire)
    try:
        threading.Thread(target=alarm_once_the_job_runs, daemon=True).start()
        with pytest.raises(Interrupted):  # (minutes of work on 2 cores: interrupted)
            spark.range(0, 20_000_000_000, 1, 2).select(F.sum(F.sqrt("id"))).collect()
    finally:
        running.wait(130)
        signal.signal(signal.SIGALRM, before)
    assert dropped == [True]
    # the next calls get their own answers...
    assert spark.range(10).selectExpr("sum(id) AS s").collect()[0]["s"] == 45
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    # ...and the interrupted job was cancelled, not left to run for minutes
    deadline = time.monotonic() + 60
    while tracker.getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert tracker.getActiveJobsIds() == []


def test_nothing_to_drop_without_an_active_spark_context(monkeypatch):
    monkeypatch.delitem(sys.modules, "pyspark", raising=False)
    assert spark_guard.drop_interrupted_py4j_call() is False


def test_the_guard_runs_before_pytest_timeouts_failure(tmp_path):
    """The conftest hook wraps pytest-timeout's SIGALRM handler: the guard runs, then the test
    fails with the timeout as before."""
    mark = tmp_path / "dropped"
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        from spark_guard import pytest_timeout_set_timer  # noqa: F401
        """))
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(f"""\
        import time
        import pytest
        import spark_guard

        @pytest.mark.timeout(1)
        def test_slow():
            spark_guard.drop_interrupted_py4j_call = (
                lambda: open({str(mark)!r}, "w").write("x") > 0)
            time.sleep(30)
        """))
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "--rootdir", str(tmp_path), str(tmp_path)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Timeout (>1.0s) from pytest-timeout" in res.stdout
    assert mark.read_text() == "x"

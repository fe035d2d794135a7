"""Keep the shared test SparkSession usable after a test times out inside a JVM call.

pytest-timeout's ``signal`` method raises ``Failed`` from a SIGALRM handler wherever the main
thread is, usually blocked in py4j reading the answer to a long Spark call. PySpark's py4j
client pins one socket per Python thread (``py4j.clientserver.JavaClient.thread_connection``);
the interrupted call's answer is still to come on that socket, so every later call on the
thread reads the answer meant for the call before it: "SparkSession does not exist in the
JVM", a ``JavaObject`` where an int was expected. One slow test then failed every spark test
after it, in milliseconds (stop 34's note: 83 of 89).

The guard wraps the timeout handler: before the ``Failed`` is raised it closes the thread's
socket (the next call opens a fresh one) and cancels the Spark jobs still running for it, so
the ``finally`` blocks that unwind the test, and the tests after it, talk to a clean gateway.
The test that timed out still fails, as before. ``tests/lagjob/test_spark_guard.py`` shows it.
"""

from __future__ import annotations

import signal
import sys
import time
from typing import Any

import pytest


def drop_interrupted_py4j_call() -> bool:
    """Close the current thread's py4j socket of the active SparkContext and cancel its running
    jobs. False when there is nothing to do (no Spark here, no socket)."""
    if "pyspark" not in sys.modules:
        return False
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    gateway = getattr(sc, "_gateway", None)
    client = getattr(gateway, "_gateway_client", None)
    get = getattr(client, "get_thread_connection", None)  # (ClientServer, PySpark's default)
    conn = get() if get is not None else None
    if sc is None or conn is None or conn.socket is None:
        return False
    conn.close(reset=True)  # (a later call sees socket None and connects anew)
    try:
        _cancel_running(sc)
    except Exception:  # pragma: no cover - the JVM is gone: the next test says so
        pass
    return True


def _cancel_running(sc: Any, settle_s: float = 5.0) -> None:
    """Cancel the running jobs, and for ``settle_s`` the jobs the interrupted JVM thread still
    submits (a call interrupted while the JVM plans its query submits the job afterwards). Only
    the test's own thread drives this session, so every running job is the interrupted one's."""
    tracker = sc.statusTracker()
    sc.cancelAllJobs()
    deadline = time.monotonic() + settle_s
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if tracker.getActiveJobsIds():
            sc.cancelAllJobs()


@pytest.hookimpl(hookwrapper=True, optionalhook=True)
def pytest_timeout_set_timer(item: Any, settings: Any) -> Any:
    """After pytest-timeout set its SIGALRM handler: run :func:`drop_interrupted_py4j_call`
    first when it fires."""
    yield
    if not hasattr(signal, "SIGALRM"):
        return
    fire = signal.getsignal(signal.SIGALRM)
    if not callable(fire):  # (the 'thread' method: nothing to wrap)
        return

    def guarded(signum: int, frame: Any) -> None:
        __tracebackhide__ = True
        drop_interrupted_py4j_call()
        fire(signum, frame)

    signal.signal(signal.SIGALRM, guarded)

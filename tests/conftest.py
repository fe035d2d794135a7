"""Shared fixtures: sample paths, a CLI runner that goes through the real error boundary."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the recorded real RocketMQ 4.9.3/5.3.3 corpus, beside the checkout (as CI has it);
# MQCTL_REAL_CORPUS points elsewhere (the test of the summary line sets a missing one)
REAL_CORPUS = Path(os.environ.get("MQCTL_REAL_CORPUS")
                   or ROOT.parent / "shared" / "samples" / "real")
CORPUS_ABSENT = "the real corpus is not present"


def needs_corpus(path: Path = REAL_CORPUS) -> pytest.MarkDecorator:
    """Skip a module or test when (a part of) the real corpus is absent, with one reason the
    run's summary line counts."""
    return pytest.mark.skipif(not path.is_dir(), reason=f"{CORPUS_ABSENT} ({path})")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """A run without the corpus says so in its summary, with how many tests it skipped for it
    (the tests parametrised over its files are not collected at all then)."""
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if CORPUS_ABSENT in str(getattr(r, "longrepr", ""))]
    if skipped or not REAL_CORPUS.is_dir():
        terminalreporter.write_sep(
            "=", f"{CORPUS_ABSENT} ({REAL_CORPUS}): {len(skipped)} test(s) skipped, "
            "those parametrised over its files not collected", yellow=True)


def _samples_dir() -> Path:
    env = os.environ.get("MQCTL_SAMPLES")
    if env:
        return Path(env)
    for cand in (ROOT / "tests" / "samples",):
        if cand.is_dir():
            return cand
    return ROOT / "tests" / "samples"


SAMPLES = _samples_dir()


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        import json

        return json.loads(self.stdout)


def sim_cli(sim: Any, *args: str) -> CliResult:
    """``mqctl -n <the simulated cluster> ARGS`` in-process; never a traceback."""
    r = run_cli(["-n", sim.namesrv_addr, *args])
    assert "Traceback" not in r.stderr, r.stderr
    return r


def run_cli(args: list[str], env: dict[str, str] | None = None,
            stdin: str | None = None) -> CliResult:
    """Run ``mqctl`` in-process through :func:`mqctl.cli.main` with captured streams."""
    import sys

    from mqctl.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_env = dict(os.environ)
    old_stdin = sys.stdin
    try:
        if env:
            os.environ.update(env)
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(old_env)
        sys.stdin = old_stdin
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return run_cli


# a test timing out inside a JVM call leaves the shared SparkSession usable (tests/spark_guard.py)
from spark_guard import pytest_timeout_set_timer  # noqa: E402, F401

# the simulated cluster's fixtures (sim, sim_factory) live next to the sim's own tests
try:
    from sim_fixtures import *  # noqa: F403
except ImportError as _exc:  # pragma: no cover - only before the sim package exists
    if "sim_fixtures" not in str(_exc):
        raise


# Every environment variable mqctl reads, by what the autouse fixture does with it;
# tests/test_suite_hygiene.py derives the list from mqctl/ and fails when one is missing.
ENV_CLEARED = ("MQCTL_CONFIG", "MQCTL_PROFILE", "NAMESRV_ADDR", "MQCTL_NAMESRV", "MQCTL_OUTPUT",
               "MQCTL_TIMEOUT", "MQCTL_ACCESS_KEY", "MQCTL_SECRET_KEY", "MQCTL_SECURITY_TOKEN",
               "MQCTL_TLS", "MQCTL_TLS_CA", "MQCTL_TLS_INSECURE", "MQCTL_TZ", "MQCTL_VERSION",
               "MQCTL_CONCURRENCY", "NO_COLOR", "_MQCTL_COMPLETE", "_MQCTL_COMP_LINE",
               "_MQCTL_COMP_CUR", "PYSPARK_GATEWAY_PORT", "MQCTL_TEST_SIGNAL_AT")
ENV_SET = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")  # to a fresh directory
# to a fixed value: no JVM a test starts writes a class archive (a fresh cache each test would
# make every one write 190 MB at exit); tests/lagjob/test_classcache.py turns it on
ENV_FIXED = {"MQCTL_CLASS_ARCHIVE": "off"}
ENV_KEPT = {  # the machine's, on purpose
    "PATH": "where programs are", "JAVA_HOME": "the JVM (see _no_unmarked_jvm)",
    "TZ": "the machine's zone: tests of local time set it themselves",
    "PYSPARK_PYTHON": "Spark's Python", "PYSPARK_DRIVER_PYTHON": "Spark's Python",
    "SPARK_HOME": "Spark's installation (PySpark's own when unset)",
    "SPARK_LOCAL_IP": "set by ./dev (127.0.0.1)"}


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    """No test reads the developer's real ~/.config/mqctl, NAMESRV_ADDR or MQCTL_*."""
    cfg = tmp_path_factory.mktemp("xdg")
    for var, sub in zip(ENV_SET, ("config", "state", "cache"), strict=True):
        monkeypatch.setenv(var, str(cfg / sub))
    for var in ENV_CLEARED:
        monkeypatch.delenv(var, raising=False)
    for var, value in ENV_FIXED.items():
        monkeypatch.setenv(var, value)


def pytest_collection_modifyitems(items):
    """A test that uses the Spark session fixture is a `spark` test (a JVM)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.spark)


# The spark phase's files by what they cost (worker-seconds, `./dev test -m "spark and not
# cluster" -n 2 --dist loadfile --durations=0`, 2026-11-29, this 2-core machine). With
# --dist loadfile a worker takes the next file in collection order when it runs low, so a
# heavy file taken late kept one worker busy for a minute after the other had finished (824
# against 922 s). The scheduler below hands out the heaviest file left instead (longest
# first), which keeps the two within a few seconds of each other. A stale or missing entry
# only changes the order, never which tests run; a file not listed counts 5 s per test.
SPARK_FILE_SECONDS = {
    "tests/lagjob/test_bounded.py": 417, "tests/lagjob/test_real_history.py": 210,
    "tests/lagjob/test_hostile_inputs_lag.py": 169, "tests/lagjob/test_incremental.py": 112,
    "tests/lagjob/test_cli.py": 93, "tests/lagjob/test_report_browser.py": 93,
    "tests/lagjob/test_transforms.py": 92, "tests/lagjob/test_owner_gaps.py": 86,
    "tests/lagjob/test_trust.py": 68, "tests/lagjob/test_options_rerun.py": 65,
    "tests/lagjob/test_classcache.py": 61, "tests/test_wheel.py": 57,
    "tests/lagjob/test_job.py": 47, "tests/test_quickstart.py": 39,
    "tests/test_docs_examples.py": 26, "tests/lagjob/test_stage_jobs.py": 24,
    "tests/lagjob/test_sim_silent_member.py": 17, "tests/lagjob/test_storms_health.py": 16,
    "tests/cli/test_secrets_never_leak.py": 15, "tests/lagjob/test_html_report.py": 11,
    "tests/lagjob/test_snapshot_gzip_spark.py": 10, "tests/lagjob/test_snapshot_checks.py": 10,
}


def file_cost(scope: str, tests: int) -> float:
    """A file's expected worker-seconds (``SPARK_FILE_SECONDS``, else 5 s per test)."""
    return SPARK_FILE_SECONDS.get(scope, 5.0 * tests)


def heaviest_first(queue) -> None:
    """Move the costliest file of an xdist work queue (an ``OrderedDict`` of file -> its
    tests) to the front, where the scheduler takes the next unit from."""
    heaviest = max(queue, key=lambda scope: file_cost(scope, len(queue[scope])))
    queue.move_to_end(heaviest, last=False)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, heaviest file first (see ``SPARK_FILE_SECONDS``); other modes as
    pytest-xdist has them."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class HeaviestFirst(LoadFileScheduling):
        def _assign_work_unit(self, node):
            heaviest_first(self.workqueue)
            super()._assign_work_unit(node)

    return HeaviestFirst(config, log)


NO_JVM = ("#!/bin/sh\necho 'this test started a JVM but is not marked spark: add "
          "@pytest.mark.spark (./dev test -m \"not spark\" must start none)' >&2\nexit 97\n")


@pytest.fixture(autouse=True)
def _no_unmarked_jvm(request, tmp_path_factory, monkeypatch):
    """A test without the `spark` marker finds a `java` that refuses to start (JAVA_HOME and
    first on PATH, inherited by its subprocesses): a JVM test left unmarked fails and says
    so, instead of slowing down `-m "not spark"`."""
    if request.node.get_closest_marker("spark"):
        return
    home = tmp_path_factory.getbasetemp() / "no-jvm"
    java = home / "bin" / "java"
    if not java.exists():
        java.parent.mkdir(parents=True, exist_ok=True)
        java.write_text(NO_JVM)
        java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.setenv("PATH", f"{java.parent}{os.pathsep}{os.environ.get('PATH', '')}")

"""Shared fixtures: sample paths, a CLI runner that goes through the real error boundary."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the recorded real RocketMQ 4.9.3/5.3.3 corpus, beside the checkout (as CI has it)
REAL_CORPUS = ROOT.parent / "shared" / "samples" / "real"


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
               "_MQCTL_COMP_CUR", "PYSPARK_GATEWAY_PORT")
ENV_SET = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")  # to a fresh directory
ENV_KEPT = {  # the machine's, on purpose
    "PATH": "where programs are", "JAVA_HOME": "the JVM (see _no_unmarked_jvm)",
    "TZ": "the machine's zone: tests of local time set it themselves",
    "PYSPARK_PYTHON": "Spark's Python", "PYSPARK_DRIVER_PYTHON": "Spark's Python",
    "SPARK_LOCAL_IP": "set by ./dev (127.0.0.1)"}


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    """No test reads the developer's real ~/.config/mqctl, NAMESRV_ADDR or MQCTL_*."""
    cfg = tmp_path_factory.mktemp("xdg")
    for var, sub in zip(ENV_SET, ("config", "state", "cache"), strict=True):
        monkeypatch.setenv(var, str(cfg / sub))
    for var in ENV_CLEARED:
        monkeypatch.delenv(var, raising=False)


SPARK_GROUP = "spark"  # the xdist_group of every `spark` test: one worker, one JVM at a time
WIDE_SCOPES = ("module", "class", "package")


def _wide_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a fixture set up once for many tests of its module (a simulated
    cluster, a built wheel, a browser run): those tests share one worker, or each worker that
    runs one of them would set the fixture up again."""
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        if defs and str(getattr(defs[-1], "scope", "function")) in WIDE_SCOPES:
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the xdist_group markers
def pytest_collection_modifyitems(items):
    """A test that uses the Spark session fixture is a `spark` test (a JVM). Under
    `pytest -n N --dist loadgroup` (what ./dev test runs) every spark test lands on one worker,
    so the suite starts one test JVM, and tests sharing a module-scoped fixture land together;
    the other tests spread one by one over all workers."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.spark)
    wide = {item.nodeid for item in items if _wide_fixture(item)}
    # a module whose shared fixture a spark test also uses: the whole module on the spark worker
    spark_modules = {item.nodeid.split("::")[0] for item in items
                     if item.nodeid in wide and item.get_closest_marker("spark")}
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        module = item.nodeid.split("::")[0]
        if item.get_closest_marker("spark") or (item.nodeid in wide and module in spark_modules):
            item.add_marker(pytest.mark.xdist_group(SPARK_GROUP))
        elif item.nodeid in wide:
            item.add_marker(pytest.mark.xdist_group(module))


class _XdistGroupIds:
    """pytest-xdist 3.8 (--dist loadgroup) keeps a group on one worker by appending "@group"
    to each grouped test's id on the worker (``item._nodeid``); pytest 9.2 reads the id from
    ``item._id``, so the suffix is lost and every group silently spreads over all workers
    (pytest-dev/pytest-xdist#1386: several test JVMs at once, spark tests past their timeout).
    This appends it where pytest reads it, when xdist's did not take (a fixed xdist: no-op)."""

    @pytest.hookimpl(trylast=True)  # after xdist's own attempt
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        try:
            from _pytest.nodeid import NodeId  # pytest >= 9.2
        except ImportError:  # older pytest: xdist's suffix works
            return
        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            suffix = "@" + "_".join(names)
            if names and not item.nodeid.endswith(suffix) \
                    and isinstance(getattr(item, "_id", None), NodeId):
                item._id = NodeId.parse(item.nodeid + suffix)


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        config.pluginmanager.register(_XdistGroupIds(), "mqctl-xdist-group-ids")


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

"""The test suite isolates itself and can be selected: every environment
variable mqctl reads is cleared or set by the autouse fixture, a test that starts a JVM is
marked `spark`, no timeout is silently cut by the global one, and "read-only" means one
thing."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import ENV_CLEARED, ENV_FIXED, ENV_KEPT, ENV_SET, ROOT
from readonly import assert_read_only

from mqctl.remoting.codes import PULL_FLAG_COMMIT_OFFSET, RequestCode

ENV_NAME = re.compile(r"^_?[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^[A-Z]{2,}$")
ENV_CALLS = {"get", "getenv", "setdefault", "pop"}


def env_read_by_mqctl() -> dict[str, str]:
    """Every environment variable name mqctl/ reads, with where: the first argument of
    ``os.environ.get``/``os.getenv``/``env.get`` (any mapping named *env*), ``environ[...]``,
    ``"X" in os.environ``, and every ``MQCTL_*``/``NAMESRV_ADDR`` string (the config loader
    passes them around in tuples)."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "mqctl").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(ROOT))

        def envish(node: ast.AST) -> bool:
            text = ast.unparse(node).lower()
            return "environ" in text or text.split(".")[-1].startswith("env") or text == "os"

        for node in ast.walk(tree):
            names: list[ast.AST] = []
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ENV_CALLS and envish(node.func.value) and node.args:
                names.append(node.args[0])
            elif isinstance(node, ast.Subscript) and envish(node.value):
                names.append(node.slice)
            elif isinstance(node, ast.Compare) and any(
                    isinstance(o, (ast.In, ast.NotIn)) for o in node.ops) and any(
                    envish(c) for c in node.comparators):
                names.append(node.left)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.match(
                    r"^(_?MQCTL_[A-Z0-9_]+|NAMESRV_ADDR)$", node.value):
                names.append(node)
            for n in names:
                if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                        and ENV_NAME.match(n.value):
                    found.setdefault(n.value, where)
    return found


def test_the_autouse_fixture_covers_every_variable_mqctl_reads():
    read = env_read_by_mqctl()
    # the scan finds what the issue named, and the config loader's tuples
    assert {"MQCTL_TZ", "MQCTL_VERSION", "MQCTL_CONCURRENCY", "NAMESRV_ADDR",
            "MQCTL_SECRET_KEY", "_MQCTL_COMPLETE", "XDG_CACHE_HOME", "TZ"} <= set(read)
    handled = set(ENV_CLEARED) | set(ENV_SET) | set(ENV_KEPT) | set(ENV_FIXED)
    missing = {k: v for k, v in read.items() if k not in handled}
    assert missing == {}, ("read by mqctl, not in tests/conftest.py's ENV_CLEARED, ENV_SET, "
                           f"ENV_FIXED or ENV_KEPT: {missing}")
    assert not set(ENV_CLEARED) & set(ENV_KEPT)


def test_tests_pass_with_every_cleared_variable_set(tmp_path):
    """The reproduction of the issue: with MQCTL_TZ, MQCTL_VERSION and MQCTL_CONCURRENCY (and
    every other cleared variable) set in the developer's shell, tests still pass."""
    hostile = {v: "1" for v in ENV_CLEARED if not v.startswith("_MQCTL")}
    hostile.update(MQCTL_TZ="Asia/Tokyo", MQCTL_VERSION="V4_9_3", MQCTL_CONCURRENCY="3",
                   MQCTL_OUTPUT="json", NAMESRV_ADDR="10.9.9.9:9876",
                   _MQCTL_COMPLETE="complete_bash", _MQCTL_COMP_LINE="mqctl ")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/test_time_zones.py::test_profile_tz_and_env",
                        "tests/cli/test_help.py::test_config_show_notes"],
                       capture_output=True, text=True, cwd=ROOT, timeout=240,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), **hostile))
    assert r.returncode == 0, r.stdout[-3000:]
    assert "2 passed" in r.stdout


def test_an_unmarked_test_cannot_start_a_jvm():
    java = shutil.which("java")
    assert java and Path(java).parent == Path(os.environ["JAVA_HOME"]) / "bin"
    r = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 97 and "not marked spark" in r.stderr


@pytest.mark.spark
def test_a_spark_test_gets_the_real_java():
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on this machine")
    assert "not marked spark" not in Path(java).read_bytes().decode("latin-1")


def _global_timeout() -> float:
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return float(doc["tool"]["pytest"]["ini_options"]["timeout"])


def _marker_timeout(decorators: list[ast.expr]) -> float | None:
    for d in decorators:
        for call in ast.walk(d):
            if isinstance(call, ast.Call) and ast.unparse(call.func).endswith(
                    "mark.timeout") and call.args and isinstance(call.args[0], ast.Constant):
                return float(call.args[0].value)
    return None


def test_no_subprocess_waits_longer_than_its_tests_timeout():
    """A ``timeout=`` past the global pytest timeout is cut by it, silently (test_quickstart
    waited 900 s under a 300 s limit): the test must carry a timeout marker at least as long."""
    limit = _global_timeout()
    cut = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = None
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
                module = _marker_timeout([node.value])
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            allowed = _marker_timeout(fn.decorator_list) or module or limit
            for call in ast.walk(fn):
                if not isinstance(call, ast.Call):
                    continue
                for kw in call.keywords:
                    if kw.arg == "timeout" and isinstance(kw.value, ast.Constant) \
                            and isinstance(kw.value.value, (int, float)) \
                            and kw.value.value > allowed:
                        cut.append(f"{path.relative_to(ROOT)}::{fn.name} waits "
                                   f"{kw.value.value} s, limit {allowed} s")
    assert cut == []


def test_one_assert_read_only_and_it_catches_a_committing_pull():
    defs = [f"{p.relative_to(ROOT)}" for p in (ROOT / "tests").rglob("*.py")
            if re.search(r"^def assert_read_only", p.read_text(encoding="utf-8"), re.M)]
    assert defs == ["tests/readonly.py"]

    class Rec:
        def __init__(self, code: int, ext: dict[str, str] | None = None) -> None:
            self.code, self.ext_fields = code, ext

    reading = Rec(RequestCode.PULL_MESSAGE, {"sysFlag": "2"})  # suspend only: reads
    assert_read_only([Rec(RequestCode.GET_ROUTEINFO_BY_TOPIC), reading])
    for bad in (Rec(RequestCode.PULL_MESSAGE, {"sysFlag": str(PULL_FLAG_COMMIT_OFFSET | 2)}),
                Rec(RequestCode.PULL_MESSAGE, None),  # flags unknown: not proven read-only
                Rec(RequestCode.HEART_BEAT), Rec(RequestCode.LOCK_BATCH_MQ),
                Rec(RequestCode.UPDATE_CONSUMER_OFFSET)):
        with pytest.raises(AssertionError):
            assert_read_only([reading, bad])
    with pytest.raises(AssertionError, match="sent nothing"):
        assert_read_only([])



def test_dev_test_runs_every_test_once_in_two_phases():
    """./dev test with no selection: the tests that start no JVM on xdist workers (modules
    whole, --dist loadscope), then the spark tests on their own workers (files whole, --dist
    loadfile); together every test but
    the cluster ones (pyproject's addopts leaves those out), each once."""
    dev = (ROOT / "dev").read_text(encoding="utf-8")
    phases = re.findall(r'run_pytest -m "([^"]+)"([^|]*)\|\| rc\d=', dev)
    assert [m for m, _ in phases] == ["not spark and not cluster", "spark and not cluster"]
    assert "--dist loadscope" in phases[0][1] and "-n " in phases[0][1]
    # a spark test file's tests share one worker's session (one JVM per worker)
    assert "--dist loadfile" in phases[1][1] and "-n " in phases[1][1]
    assert "'not cluster'" in (ROOT / "pyproject.toml").read_text()
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert any(d.startswith("pytest-xdist") for d in doc["project"]["optional-dependencies"]["dev"])
    pins = (ROOT / "constraints.txt").read_text().splitlines()
    assert {p.split("==")[0] for p in pins if "==" in p} >= {"pytest-xdist", "execnet"}


MADE_ONCE_WORKER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from made_once import made_once

shared, log = Path(sys.argv[2]), Path(sys.argv[3])

def make(where):
    with open(log, "a") as fh:  # who made it
        fh.write(sys.argv[4] + "\\n")
    time.sleep(0.5)  # the other workers ask meanwhile
    if sys.argv[4] == "fail":
        raise RuntimeError("no result")
    where.mkdir()
    return {"made by": sys.argv[4], "where": str(where)}

try:
    print(made_once(shared, make)["made by"])
except RuntimeError:
    print("failed")
"""


def test_a_shared_session_result_is_made_by_one_worker(tmp_path):
    """tests/made_once.py (the demo's report of tests/lagjob/conftest.py): of several
    processes asking at once, one makes the result and every other reads it; a failed try
    leaves nothing behind, and the next one makes it."""
    script = tmp_path / "worker.py"
    script.write_text(MADE_ONCE_WORKER)
    shared, log = tmp_path / "shared", tmp_path / "made.log"

    def workers(*names: str) -> list[str]:
        procs = [subprocess.Popen([sys.executable, str(script), str(ROOT / "tests"),
                                   str(shared), str(log), n], stdout=subprocess.PIPE, text=True)
                 for n in names]
        return [p.communicate(timeout=60)[0].strip() for p in procs]

    said = workers("fail")
    assert said == ["failed"] and not (shared / "result.pickle").exists()
    said = workers("a", "b", "c", "d")
    makers = log.read_text().split()
    assert makers[0] == "fail" and len(makers) == 2, makers  # one of a-d made it
    assert said == [makers[1]] * 4
    assert workers("e") == [makers[1]]  # later: read, not made
    assert log.read_text().split() == makers


def test_the_spark_phase_hands_out_its_heaviest_file_first():
    """The table behind the spark phase's order names files that exist and hold spark tests,
    and the work queue gives the costliest file left (a file not listed: 5 s a test)."""
    from collections import OrderedDict

    from conftest import SPARK_FILE_SECONDS, heaviest_first

    for name in SPARK_FILE_SECONDS:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "spark" in text, name
    queue = OrderedDict([("tests/cli/test_secrets_never_leak.py", {"a": False}),
                         ("tests/lagjob/test_bounded.py", {"b": False}),
                         ("tests/new_one.py", {f"t{i}": False for i in range(200)}),
                         ("tests/lagjob/test_cli.py", {"c": False})])
    order = []
    while queue:
        heaviest_first(queue)
        order.append(queue.popitem(last=False)[0])
    assert order == ["tests/new_one.py", "tests/lagjob/test_bounded.py",
                     "tests/lagjob/test_cli.py", "tests/cli/test_secrets_never_leak.py"]


def test_a_run_without_the_corpus_says_so_in_its_summary(tmp_path):
    """Corpus tests skip when ../shared/samples/real is absent; the run's summary says so and
    counts them, so a green run without the corpus is never mistaken for one that read it."""
    env = {**os.environ, "MQCTL_REAL_CORPUS": str(tmp_path / "absent")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                        "no:xdist", str(ROOT / "tests" / "locks" / "test_hung_corpus.py")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-2000:]
    summary = r.stdout.rsplit("short test summary info", 1)[0].strip().splitlines()[-2:]
    assert any(re.search(r"the real corpus is not present .*: [1-9]\d* test\(s\) skipped", line)
               for line in summary), summary

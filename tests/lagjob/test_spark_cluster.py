"""The lag report unchanged on a standalone Spark cluster.

A master and a worker are started from pyspark's own launcher (``bin/spark-class
org.apache.spark.deploy.master.Master`` / ``...worker.Worker``, as docs/exports.md section 11
shows) on 127.0.0.1 with ephemeral ports; the demo scenario's snapshots (gzip, as
``mqctl snapshot --compress gzip`` writes them) and logs go through ``mqctl lag report --master
spark://127.0.0.1:PORT`` in its own process (the driver; the executor runs in the worker's
JVM and imports mqctl from the zip the job ships), and every output equals a local run's with
the same settings (this test found that queue moves and unowned intervals broke ties between
two clients losing a queue at one moment by row order; they are ordered by client now).
Both processes are always stopped (their whole process groups, bounded waits).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

from .test_cli import tiny_inputs

# not in the default run (pyproject's addopts deselect it): 6 to 10 minutes on this 2-core
# machine while other jobs share it; run it with `pytest -m cluster`
pytestmark = [pytest.mark.spark, pytest.mark.cluster, pytest.mark.timeout(1800)]

PY = sys.executable
START_TIMEOUT_S = 90


def spark_class() -> Path:
    pyspark = pytest.importorskip("pyspark")
    p = Path(pyspark.__file__).resolve().parent / "bin" / "spark-class"
    if not p.exists():
        pytest.skip(f"{p} is not installed")
    return p


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY")}
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_HOSTNAME="localhost",
               PYSPARK_PYTHON=PY, PYSPARK_DRIVER_PYTHON=PY,
               SPARK_NO_DAEMONIZE="1")
    return env


class Daemon:
    """One Spark daemon in its own process group, its log in a file."""

    def __init__(self, args: list[str], log: Path, conf: Path):
        self.log = log
        self._fh = open(log, "w")  # noqa: SIM115 - closed in stop()
        env = _env()
        # no REST submission server (a fixed port 6066) and no web UI on fixed ports
        env["SPARK_DAEMON_JAVA_OPTS"] = (
            "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dspark.master.rest.enabled=false")
        self.proc = subprocess.Popen([str(spark_class()), *args, "--properties-file", str(conf)],
                                     stdout=self._fh, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)

    def wait_for(self, pattern: str, timeout: float = START_TIMEOUT_S) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while time.monotonic() < deadline:
            m = rx.search(self.log.read_text(errors="replace"))
            if m:
                return m
            if self.proc.poll() is not None:
                break
            time.sleep(0.3)
        raise AssertionError(f"{pattern!r} not in {self.log}:\n"
                             + self.log.read_text(errors="replace")[-3000:])

    def stop(self) -> None:
        """SIGTERM to the whole group (the worker's executors included), SIGKILL after 20 s."""
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        with contextlib.suppress(ProcessLookupError):  # leftovers of the group (executors)
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._fh.close()


@contextlib.contextmanager
def standalone_cluster(tmp: Path) -> Iterator[str]:
    """A master and a worker (2 cores, 2 GB) on loopback; yields ``spark://127.0.0.1:PORT``."""
    tmp.mkdir(parents=True, exist_ok=True)
    conf = tmp / "spark-daemon.conf"
    conf.write_text("spark.master.rest.enabled false\nspark.ui.enabled false\n"
                    "spark.worker.cleanup.enabled false\n")
    master = worker = None
    try:
        master = Daemon(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", "0", "--webui-port", "0"], tmp / "master.log", conf)
        url = master.wait_for(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)").group(1)
        worker = Daemon(["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                         "--port", "0", "--webui-port", "0", "--cores", "2", "--memory", "2g",
                         "--work-dir", str(tmp / "work"), url], tmp / "worker.log", conf)
        worker.wait_for(r"Successfully registered with master")
        yield url
    finally:
        for d in (worker, master):
            if d is not None:
                d.stop()


def spark_submit(url: str, inputs: Path, out: Path) -> dict:
    """``spark-submit --master URL mqctl/lagjob/job.py ...`` (client mode); the JSON output."""
    submit = Path(PY).parent / "spark-submit"
    if not submit.exists():
        pytest.skip("spark-submit is not next to this interpreter")
    r = subprocess.run(
        [str(submit), "--master", url, "--conf", "spark.executor.memory=1g",
         "--conf", "spark.cores.max=2", "--conf", "spark.ui.enabled=false",
         "--conf", "spark.sql.shuffle.partitions=2",
         "--driver-java-options", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
         str(ROOT / "mqctl" / "lagjob" / "job.py"), str(inputs), "--out", str(out),
         "--tz", "UTC", "-o", "json", "-q", "--fail-on", "lag>25"],
        capture_output=True, text=True, timeout=600, env=_env(), cwd=out.parent)
    assert r.returncode == 9, r.stderr[-4000:]
    # spark-submit forwards the Python process' stderr to its stdout: take the JSON document
    lines = r.stdout.splitlines()
    return json.loads("\n".join(lines[lines.index("{"):len(lines) - lines[::-1].index("}")]))


def demo_inputs(root: Path) -> list[str]:
    """The demo scenario for 1h40m, a capture every 10 minutes (the captures as gzip), and the
    simulated clients' and brokers' logs."""
    from mqctl.demo import capture_timeline

    cap = asyncio.run(capture_timeline(root, hours=1.75, interval_s=600))
    for f in sorted(cap.snapshots_dir.rglob("*.jsonl")):  # as --compress gzip writes them
        import gzip

        Path(str(f) + ".gz").write_bytes(gzip.compress(f.read_bytes(), mtime=0))
        f.unlink()
    assert len(list(cap.snapshots_dir.rglob("*.jsonl.gz"))) == cap.captures == 10
    return [f"snapshot={cap.snapshots_dir}", str(cap.logs_dir)]


def read_dataset(spark, path: Path) -> list[tuple]:
    df = spark.read.parquet(str(path))
    cols = sorted(df.columns)
    return sorted((tuple(r) for r in df.select(*cols).collect()), key=repr)


def run_report_process(args: list[str], out: Path, master: str) -> subprocess.CompletedProcess:
    """``mqctl lag report`` in its own process (its own driver), the same settings for every
    master: 4 shuffle partitions, 2 cores, 1 GB executors."""
    return subprocess.run(
        [PY, "-m", "mqctl", "lag", "report", *args, "--out", str(out), "--master", master,
         "--conf", "spark.executor.memory=1g", "--conf", "spark.cores.max=2",
         "--conf", "spark.sql.shuffle.partitions=4", "--conf", "spark.ui.enabled=false"],
        capture_output=True, text=True, timeout=900, env=_env(), cwd=out.parent)


def test_report_on_a_standalone_cluster_equals_a_local_run(request, tmp_path):
    sc_path = spark_class()
    assert sc_path.exists()
    t0 = time.monotonic()
    inputs = demo_inputs(tmp_path / "demo")
    common = [*inputs, "--window", "10", "-o", "json"]
    t1 = time.monotonic()
    # the local run: the same command and settings, master local[2]
    local = run_report_process(common, tmp_path / "local", "local[2]")
    assert local.returncode == 0, local.stderr[-4000:]
    t2 = time.monotonic()
    with standalone_cluster(tmp_path / "cluster") as url:
        t3 = time.monotonic()
        r = run_report_process(common, tmp_path / "remote", url)
        t4 = time.monotonic()
        assert r.returncode == 0, r.stderr[-4000:]
        # the job file under spark-submit on the same cluster (its master from spark-submit)
        sub = spark_submit(url, tiny_inputs(tmp_path / "tiny"), tmp_path / "submitted")
        t5 = time.monotonic()
    # the work ran on the worker: an executor per application was launched there
    apps = sorted(p.name for p in (tmp_path / "cluster" / "work").glob("app-*"))
    assert len(apps) == 2, apps
    print(f"\ndemo capture {t1 - t0:.1f} s, local report {t2 - t1:.1f} s, cluster start "
          f"{t3 - t2:.1f} s, report on the cluster {t4 - t3:.1f} s, spark-submit "
          f"{t5 - t4:.1f} s, stop {time.monotonic() - t5:.1f} s")
    # spark-submit: lags 10, 20, 30 while the offset moves: WARN, total lag 30 (as locally in
    # test_cli.test_job_main_in_process)
    assert sub["summary"][0]["total_lag"] == 30 and sub["summary"][0]["status"] == "WARN"
    assert [b["value"] for b in sub["breaches"]] == [30]
    assert (tmp_path / "submitted" / "lag").is_dir()
    a, b = json.loads(local.stdout), json.loads(r.stdout)
    assert a["summary"] and a["counts"] and a["quarantine"].get("total") == 0
    for key in ("summary", "counts", "quarantine", "inputs", "dates", "groups", "breaches"):
        assert b[key] == a[key], key
    by = {(s["group"], s["topic"]): s["status"] for s in b["summary"]}
    assert by[("GID_REPLAY", "TopicPay")] == "STOP"  # the demo's stopped group, seen remotely
    assert (tmp_path / "remote" / "summary.csv").read_bytes() == \
        (tmp_path / "local" / "summary.csv").read_bytes()
    from mqctl.lagjob.result import DATASETS

    spark = request.getfixturevalue("spark")  # only now: no idle JVM during the runs
    compared = 0
    for ds in DATASETS:
        lp, rp = tmp_path / "local" / ds, tmp_path / "remote" / ds
        assert lp.is_dir() == rp.is_dir(), ds
        if not lp.is_dir() or not any(lp.glob("date=*")):
            continue
        left, right = read_dataset(spark, lp), read_dataset(spark, rp)
        assert len(right) == len(left), ds
        assert right == left, ds
        compared += len(left)
    assert compared > 1000  # the lag rows alone: 10 captures x the demo's queues
    assert not any(ROOT.glob("spark-warehouse"))

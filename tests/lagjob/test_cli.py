"""`mqctl lag report` and the job module: options, exit codes, start-up guards, missing Java or
PySpark, spark-submit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from .builders import T0, snap_row, write_snapshot

PY = sys.executable


def tiny_inputs(root: Path) -> Path:
    snap = root / "snap"
    for i in range(3):  # lag 10, 20, 30 with the offset moving: WARN at the third capture
        ts = T0 + i * 60_000
        write_snapshot(snap, "c1", ts, [snap_row(ts, "G", "T", 0, 1000 + 20 * i, 990 + 10 * i,
                                                 owner="a@1")])
    return snap


# ---- no Spark needed ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["lag>>1", "nosuch>1", "lag_seconds>soon"])
def test_bad_fail_on_is_a_usage_error_before_spark(tmp_path, bad):
    r = run_cli(["lag", "report", str(tiny_inputs(tmp_path)), "--out", str(tmp_path / "o"),
                 "--fail-on", bad])
    assert r.exit_code == 2
    assert "bad --fail-on" in r.stderr and "hint:" in r.stderr
    assert not (tmp_path / "o").exists()


def test_missing_inputs_and_bad_kind_are_usage_errors(tmp_path):
    r = run_cli(["lag", "report", str(tmp_path / "nothing-here"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "no input files found" in r.stderr
    r = run_cli(["lag", "report", "bogus=/x", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "unknown input kind 'bogus'" in r.stderr
    r = run_cli(["lag", "report", str(tmp_path), "--out", str(tmp_path / "o"), "--conf", "x"])
    assert r.exit_code == 2 and "bad --conf" in r.stderr


def test_cli_passes_options_through(tmp_path, monkeypatch):
    import mqctl.lagjob as lagjob
    from mqctl.lagjob.job import ReportResult
    from mqctl.lagjob.thresholds import Breach

    seen = {}

    def fake(inputs, out, options, **kw):
        from mqctl.lagoptions import declared

        seen.update(kw, inputs=inputs, out=out)
        seen.update({f.name: getattr(options, f.name) for f, _spec in declared()})
        kw["progress"]("lag report: fake progress")
        return ReportResult(summary=[{"group": "G", "topic": "T", "status": "WARN"}], groups=[],
                            paths={"summary_json": "S"}, quarantine={}, quarantined=0,
                            breaches=[Breach("lag>1", "lag", 5, "1", "c", "G", "T")],
                            counts={}, inputs={}, dates=[])

    monkeypatch.setattr(lagjob, "run_report", fake)
    prom = str(tmp_path / "mqctl.prom")  # (its directory must exist: checked as it is read)
    r = run_cli(["lag", "report", "a", "topic-status=b", "--out", "o", "--master",
                 "spark://127.0.0.1:7077", "--window", "5", "--fail-on", "lag>1", "--tz", "UTC",
                 "--log-tz", "+02:00", "--cluster", "prod", "--max-skew", "2m", "--align", "0",
                 "--storm-rounds", "4", "--storm-window", "1h", "--conf",
                 "spark.executor.memory=2g", "--prom-file", prom, "-o", "json"])
    assert r.exit_code == 9  # a breach: ThresholdBreached after the output
    assert "1 threshold(s) breached: lag>1" in r.stderr and "hint: details in S" in r.stderr
    assert "lag report: fake progress" in r.stderr
    assert r.json["summary"][0]["status"] == "WARN"
    assert seen["inputs"] == ["a", "topic-status=b"] and seen["out"] == "o"
    assert (seen["master"], seen["window"], seen["fail_on"], seen["tz"], seen["log_tz"],
            seen["cluster"], seen["max_skew_ms"], seen["align_ms"], seen["storm_rounds"],
            seen["storm_window_ms"], seen["spark_conf"], seen["prom_file"]) == (
        "spark://127.0.0.1:7077", 5, ["lag>1"], "UTC", "+02:00", "prod", 120_000, 0, 4,
        3_600_000, {"spark.executor.memory": "2g"}, prom)
    q = run_cli(["-q", "lag", "report", "a", "--out", "o", "-o", "json"])
    assert "fake progress" not in q.stderr  # --quiet


PROBE = """
import json, sys
from mqctl.cli import main
code = main(sys.argv[1:])
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("args", [["lag", "--help"], ["lag", "report", "--help"]])
def test_lag_help_imports_nothing_heavy(args):
    r = subprocess.run([PY, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and ("--fail-on" in r.stdout or "report" in r.stdout)
    mods = json.loads(r.stderr.strip().splitlines()[-1])
    assert not [m for m in mods if m.startswith(("pyspark", "py4j", "plotly", "mqctl.lagjob"))]


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYSPARK_GATEWAY", "SPARK_", "JAVA_HOME"))}
    env.update(extra)
    return env


def test_missing_java_is_a_clear_usage_error(tmp_path):
    inputs = tiny_inputs(tmp_path)
    code = "import sys; from mqctl.cli import main; sys.exit(main(sys.argv[1:]))"
    r = subprocess.run([PY, "-c", code, "lag", "report", str(inputs), "--out",
                        str(tmp_path / "o")], capture_output=True, text=True, timeout=120,
                       env=_clean_env(PATH=str(tmp_path / "no-bin")), cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert "needs Java" in r.stderr and "install Java 17" in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_pyspark_is_a_clear_usage_error(tmp_path):
    inputs = tiny_inputs(tmp_path)
    code = ("import sys; sys.modules['pyspark'] = None\n"
            "from mqctl.cli import main; sys.exit(main(sys.argv[1:]))")
    r = subprocess.run([PY, "-c", code, "lag", "report", str(inputs), "--out",
                        str(tmp_path / "o")], capture_output=True, text=True, timeout=120,
                       env=_clean_env(), cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert "needs PySpark" in r.stderr and "pip install 'mqctl[spark]'" in r.stderr


def test_job_module_help_without_spark():
    r = subprocess.run([PY, "-m", "mqctl.lagjob.job", "--help"], capture_output=True, text=True,
                       timeout=60, cwd=ROOT)
    assert r.returncode == 0 and "--fail-on" in r.stdout and "--master" in r.stdout


# ---- with Spark --------------------------------------------------------------------------------

def test_job_main_in_process(spark, tmp_path, capsys):
    pytest.importorskip("pyspark")
    from mqctl.lagjob.job import main

    inputs = tiny_inputs(tmp_path)
    code = main([str(inputs), "--out", str(tmp_path / "o"), "--tz", "UTC", "-o", "json",
                 "--fail-on", "status>=WARN", "--fail-on", "lag>1000"])
    out, err = capsys.readouterr()
    assert code == 9 and "1 threshold(s) breached" in err
    data = json.loads(out)
    # lags 10, 20, 30 while the offset moves: Burrow's WARN (lag never decreased)
    assert [(r["group"], r["status"], r["total_lag"]) for r in data["summary"]] == [
        ("G", "WARN", 30)]
    assert [b["expr"] for b in data["breaches"]] == ["status>=WARN"]
    assert main([str(inputs), "--out", str(tmp_path / "o"), "--fail-on", "oops"]) == 2


@pytest.mark.slow
@pytest.mark.spark
def test_spark_submit_runs_the_job_file(tmp_path):
    """The job file unchanged under spark-submit (its own JVM, master from spark-submit)."""
    pytest.importorskip("pyspark")
    submit = Path(PY).parent / "spark-submit"
    if not submit.exists():
        pytest.skip("spark-submit is not next to this interpreter")
    inputs = tiny_inputs(tmp_path)
    out = tmp_path / "o"
    r = subprocess.run(
        [str(submit), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
         "--conf", "spark.sql.shuffle.partitions=1",
         "--driver-java-options", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
         str(ROOT / "mqctl" / "lagjob" / "job.py"), str(inputs), "--out", str(out),
         "--tz", "UTC", "-o", "json", "-q", "--fail-on", "lag>25"],
        capture_output=True, text=True, timeout=240,
        env=_clean_env(PYSPARK_PYTHON=PY, SPARK_LOCAL_IP="127.0.0.1",
                       SPARK_LOCAL_HOSTNAME="localhost"), cwd=tmp_path)
    assert r.returncode == 9, r.stderr[-3000:]
    # spark-submit forwards the Python process' stderr to its stdout: take the JSON document
    lines = r.stdout.splitlines()
    data = json.loads("\n".join(lines[lines.index("{"):len(lines) - lines[::-1].index("}")]))
    assert data["summary"][0]["total_lag"] == 30 and data["breaches"][0]["value"] == 30
    assert (out / "lag").is_dir() and (out / "summary.json").is_file()
    # Spark's logging is quiet: WARN from the moment the context starts (spark.log.level);
    # only the three version lines printed before that remain (dozens without it)
    assert 'Spark log level to "WARN"' in r.stderr and r.stderr.count(" INFO ") <= 3


# ---- what the terminal shows ---------------------------------------------------

def test_the_jvm_start_up_notice_is_dropped_and_everything_else_passes(tmp_path):
    """The JVM's stderr goes through mqctl.lagjob.session._pump: its "Using incubator modules"
    notice (nothing an operator can act on) is dropped; Spark's warnings pass, in order."""
    import io
    import os

    from mqctl.lagjob.session import _pump

    r, w = os.pipe()
    os.write(w, b"WARNING: Using incubator modules: jdk.incubator.vector\n"
                b"spark: WARN SparkContext: something to act on\n"
                b"a last line without newline")
    os.close(w)
    out = io.BytesIO()
    _pump(r, out)
    assert out.getvalue() == (b"spark: WARN SparkContext: something to act on\n"
                              b"a last line without newline")


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_terminal_output_is_short_and_without_the_jvm_notice(tmp_path):
    """`mqctl lag report` in its own process (its own JVM): stderr has the progress and no JVM
    notice; stdout has one row per group (health, status, why) and where the report is, no
    list of every path (that is in -o json)."""
    inputs = tiny_inputs(tmp_path)
    out = tmp_path / "o"
    r = subprocess.run([PY, "-m", "mqctl", "lag", "report", str(inputs), "--out", str(out),
                        "--tz", "UTC"], capture_output=True, text=True, timeout=600,
                       env=_clean_env(SPARK_LOCAL_IP="127.0.0.1"), cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Using incubator modules" not in r.stderr
    assert r.stderr.startswith("lag report: reading 3 snapshot file(s)"), r.stderr[:500]
    lines = r.stdout.splitlines()
    assert lines[0] == "# Groups (latest capture, worst first)"
    assert lines[1].split()[:3] == ["GROUP", "HEALTH", "STATUS"]
    assert lines[2].split()[:3] == ["G", "WARN", "WARN"]
    assert [f"report: {out}", f"HTML: {out}/report.html",
            f"Prometheus: {out}/mqctl_lag.prom"] == lines[-3:]
    assert "wrote lag:" not in r.stdout and max(map(len, lines)) < 200

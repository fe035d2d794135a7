"""The Quickstart's main-job command, as a user runs it: `./dev demo` (here with a shorter
simulated run). CI runs the other one, `./dev test`, which is what runs this test."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import ROOT


@pytest.mark.spark
@pytest.mark.timeout(960)  # above the subprocess' own 900 s (the global timeout is 300 s)
def test_dev_demo(tmp_path):
    if not (ROOT / ".venv" / "bin" / "mqctl").exists() or shutil.which("bash") is None:
        pytest.fail("./dev demo needs the project's .venv (./dev test creates it)")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_HOSTNAME="localhost")
    r = subprocess.run(["bash", str(ROOT / "dev"), "demo", "--hours", "0.5", "--interval",
                        "10m", "--out", str(tmp_path / "demo"), "-o", "plain"],
                       capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    # the summary (one row per group) and where the page is
    html = tmp_path / "demo" / "report" / "report.html"
    assert "# Groups (latest capture, worst first)" in r.stdout.splitlines()
    assert f"HTML: {html}" in r.stdout.splitlines()
    assert html.is_file()
    assert len(list((tmp_path / "demo" / "snapshots").rglob("*.jsonl"))) == 3

"""The wheel stands on its own: build the wheel and the sdist from this
checkout, install the wheel into a fresh venv (its dependencies from pip's configured index,
pinned by constraints.txt), and use it from there, far from the checkout: ``mqctl --version``,
``mqctl sim up`` and a command against it, ``mqctl completion bash``, and the lag job under
``spark-submit`` from the path ``mqctl lag job-path`` prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

# building, a fresh venv and its install (each bounded below): past the global 300 s on a
# loaded machine
pytestmark = pytest.mark.timeout(1500)


def _clean_env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH (it would put the checkout first) and no venv of the test run."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    pytest.importorskip("build", reason="the dev extra's `build` is not installed (./dev "
                        "test installs it)")
    out = tmp_path_factory.mktemp("dist")
    # the sdist first, then the wheel from it (what python -m build does), in isolated
    # environments pinned by constraints.txt; not from the checkout's directory, where a
    # build/ left by setuptools would shadow the `build` package
    r = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=600, cwd=out,
                       env=_clean_env(PIP_CONSTRAINT=str(ROOT / "constraints.txt")))
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    (wheel,) = out.glob("mqctl-*.whl")
    (sdist,) = out.glob("mqctl-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


@pytest.fixture(scope="module")
def venv(built, tmp_path_factory) -> Path:
    """A fresh venv with the wheel and its ``job`` extra (the job's Arrow modules; the spark
    extra's pyspark is not needed here: it comes with spark-submit): no checkout on its path."""
    root = tmp_path_factory.mktemp("fresh") / "venv"
    env = _clean_env(PIP_CONSTRAINT=str(ROOT / "constraints.txt"))
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300, env=env)
    r = subprocess.run([str(root / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", f"{built['wheel']}[job]"],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return root


def run(venv: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "mqctl"), *args], capture_output=True, text=True,
                          timeout=timeout, env=_clean_env(), cwd=venv)


def test_license_in_wheel_and_sdist(built):
    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    with zipfile.ZipFile(built["wheel"]) as z:
        names = z.namelist()
        lic = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
        assert lic and z.read(lic[0]).decode() == license_text
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in meta
    with tarfile.open(built["sdist"]) as t:
        member = next(m for m in t.getmembers() if m.name.endswith("/LICENSE")
                      and m.name.count("/") == 1)
        f = t.extractfile(member)
        assert f is not None and f.read().decode() == license_text


def test_installed_wheel_runs_without_the_checkout(venv):
    r = run(venv, "--version")
    assert (r.returncode, r.stdout.strip()) == (0, "mqctl 0.1.0")
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import mqctl; print(mqctl.__file__)"], capture_output=True,
                           text=True, env=_clean_env(), timeout=60, cwd=venv).stdout.strip()
    assert where.startswith(str(venv)) and not where.startswith(str(ROOT))
    r = run(venv, "completion", "bash")
    assert r.returncode == 0 and r.stdout == (ROOT / "completions" / "mqctl.bash").read_text()


def test_sim_up_and_a_command_from_the_wheel(venv):
    p = subprocess.Popen([str(venv / "bin" / "mqctl"), "sim", "up", "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=_clean_env(PYTHONUNBUFFERED="1"), cwd=venv)
    try:
        addr = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and addr is None:
            line = p.stdout.readline() if p.stdout else ""
            if not line and p.poll() is not None:
                break
            if line.startswith("export NAMESRV_ADDR="):
                addr = line.strip().split("=", 1)[1]
        assert addr, p.stderr.read() if p.stderr else ""
        r = run(venv, "-n", addr, "cluster", "-o", "json")
        assert r.returncode == 0, r.stderr
        assert {b["broker"] for b in json.loads(r.stdout)["brokers"]} == {"broker-a", "broker-b"}
    finally:
        p.terminate()
        p.wait(timeout=30)


@pytest.mark.spark
def test_spark_submit_runs_the_installed_job(venv, tmp_path):
    pyspark = pytest.importorskip("pyspark")
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    job = run(venv, "lag", "job-path")
    assert job.returncode == 0, job.stderr
    path = Path(job.stdout.strip())
    assert path.is_file() and path.is_relative_to(venv) and path.name == "job.py"
    from lagjob.test_cli import tiny_inputs

    inputs = tiny_inputs(tmp_path)
    py = str(venv / "bin" / "python")
    r = subprocess.run(
        [str(submit), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
         "--conf", "spark.sql.shuffle.partitions=1",
         "--driver-java-options", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
         str(path), str(inputs), "--out", str(tmp_path / "o"), "--tz", "UTC", "-o", "json",
         "-q"], capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env=_clean_env(PYSPARK_PYTHON=py, PYSPARK_DRIVER_PYTHON=py,
                       SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_HOSTNAME="localhost"))
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    lines = r.stdout.splitlines()
    data = json.loads("\n".join(lines[lines.index("{"):len(lines) - lines[::-1].index("}")]))
    assert data["summary"][0]["total_lag"] == 30
    assert (tmp_path / "o" / "summary.json").is_file()

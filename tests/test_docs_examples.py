"""Every command example in the README and docs/ runs against the simulated cluster.

Examples are the ``$ mqctl ...`` lines of ```console blocks, run in order per document in a
scratch directory with ``NAMESRV_ADDR`` pointing at a fresh demo cluster (2.5 simulated
minutes in, so the demo's crash has happened; one simulated second passes between
commands). A trailing ``# exit N`` states the expected exit code (default 0). ``mqctl sim
up`` runs as a process on free ports until its addresses are printed, then gets SIGTERM.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT, run_cli
from sim_fixtures import start_sim

from mqctl.timeparse import set_clock

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")


def examples(path):
    out = []
    in_block = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_block = line.strip() == "```console" if not in_block else False
            continue
        if in_block and line.startswith("$ mqctl"):
            cmd = line[2:]
            m = EXIT.search(cmd)
            code = int(m.group(1)) if m else 0
            cmd = EXIT.sub("", cmd)
            cmd = re.sub(r"\s+#.*$", "", cmd)
            out.append((cmd, code))
    return out


def test_docs_have_examples():
    found = {p.name: len(examples(p)) for p in DOCS}
    assert found["README.md"] >= 10
    assert sum(found.values()) >= 25, found


def run_sim_up(args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "mqctl", *args, "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            if line.startswith("export NAMESRV_ADDR=") or not line:
                break
        p.send_signal(signal.SIGTERM)
        return p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()


def _doc_param(doc):
    """A document whose examples run the Spark report is a `spark` case (a JVM)."""
    spark = any(re.match(r"mqctl (.* )?(lag report|demo)\b", cmd) for cmd, _ in examples(doc))
    return pytest.param(doc, id=doc.name, marks=[pytest.mark.spark] if spark else [])


@pytest.mark.parametrize("doc", [_doc_param(p) for p in DOCS if examples(p)])
def test_examples_run(doc, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "docs" / "examples", tmp_path, dirs_exist_ok=True)  # files named
    sim = start_sim("demo")
    try:
        sim.advance(150)
        env = {"NAMESRV_ADDR": sim.namesrv_addr}
        for cmd, code in examples(doc):
            args = shlex.split(cmd)[1:]
            if args[:2] == ["sim", "up"]:
                assert run_sim_up(args) == code, cmd
                continue
            r = run_cli(args, env=env)
            assert r.exit_code == code, f"{doc.name}: {cmd}\n{r.stdout[-2000:]}\n{r.stderr}"
            assert "Traceback" not in r.stderr, cmd
            # snapshots taken by hand are at least --align (10 s) apart, as the docs say
            sim.advance(15 if args[:1] == ["snapshot"] else 1)
    finally:
        set_clock(None)
        sim.__exit__(None, None, None)

"""Run every case of docs/errors.md: exit code, the error line, and no traceback."""

from __future__ import annotations

import re
import shlex
import shutil

import pytest
from conftest import ROOT, run_cli
from sim_fixtures import start_sim

from mqctl.timeparse import set_clock

ROW = re.compile(r"^\| `mqctl (?P<cmd>[^`]+)` \| (?P<code>\d+) \| `(?P<msg>.+)` \|$")


def cases():
    out = []
    for line in (ROOT / "docs" / "errors.md").read_text().splitlines():
        m = ROW.match(line)
        if m:
            out.append((m["cmd"], int(m["code"]), m["msg"]))
    return out


CASES = cases()


def test_catalogue_is_large_and_covers_every_area():
    assert len(CASES) >= 50
    text = (ROOT / "docs" / "errors.md").read_text()
    for area in ("Frames", "Bodies", "Times", "Configs", "Topologies", "Scenario",
                 "Plan and rollback", "Export files", "Flags"):
        assert f"### {area}" in text


@pytest.fixture(scope="module")
def cluster():
    s = start_sim("demo")
    try:
        s.advance(30)
        yield s
    finally:
        set_clock(None)
        s.__exit__(None, None, None)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "docs" / "examples", tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("cmd, code, msg", CASES, ids=[c[0][:60] for c in CASES])
def test_bad_input(cluster, workdir, cmd, code, msg):
    r = run_cli(shlex.split(cmd), env={"NAMESRV_ADDR": cluster.namesrv_addr})
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert r.exit_code == code, (cmd, r.stderr)
    assert len(lines) == 1 and msg in lines[0], (cmd, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    assert "hint:" in r.stderr or code != 2 or "Invalid value" in msg or "Missing" in msg

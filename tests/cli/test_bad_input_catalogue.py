"""Run every case of docs/bad-input.md: exit code, the error line, and no traceback."""

from __future__ import annotations

import re
import shlex
import shutil

import pytest
from conftest import ROOT, run_cli
from sim_fixtures import running_sim

CATALOGUE = ROOT / "docs" / "bad-input.md"
ROW = re.compile(r"^\| `mqctl (?P<cmd>[^`]+)` \| (?P<code>\d+) \| `(?P<msg>.+)` \|$")


def cases():
    out = []
    for line in CATALOGUE.read_text().splitlines():
        m = ROW.match(line)
        if m:
            out.append((m["cmd"], int(m["code"]), m["msg"]))
    return out


CASES = cases()


def test_catalogue_is_large_and_covers_every_area():
    assert len(CASES) >= 50
    text = CATALOGUE.read_text()
    for area in ("Frames", "Bodies", "Times", "Configs", "Topologies", "Scenario",
                 "Plan and rollback", "Export files", "Flags"):
        assert f"## {area}" in text


def test_the_docs_state_the_catalogue_size():
    """Where the README or a docs page says how many bad-input cases there are, it is the
    number of rows this test runs (the README once said 114 while the page had 142)."""
    said: dict[str, list[int]] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for m in re.finditer(r"(\d[\d,]*) bad-input cases", page.read_text(encoding="utf-8")):
            said.setdefault(page.name, []).append(int(m[1].replace(",", "")))
    assert said, "no page states the catalogue's size any more: drop this test or say it"
    wrong = {page: counts for page, counts in said.items() if set(counts) != {len(CASES)}}
    assert wrong == {}, f"the catalogue has {len(CASES)} rows"


@pytest.fixture(scope="module")
def cluster():
    with running_sim("demo") as s:
        s.advance(30)
        yield s


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

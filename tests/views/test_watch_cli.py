"""``--watch`` through the CLI against the simulated cluster: off a terminal one compact JSON
document per round (JSON Lines) for every watched view, a broker stopped mid-watch shown
stale with its age and its last good values, and on a terminal (tmux, where installed) the
view redrawn in place, its deltas, the broker going away, ``q`` leaving with exit 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from cli_process import finish
from conftest import ROOT

from mqctl.cli.common import DEFAULT_WATCH

VIEWS = [["groups"], ["group", "progress", "GID_ORDER"], ["locks", "show", "GID_ORDER"],
         ["consumers", "GID_ORDER"], ["topic", "status", "TopicOrder"],
         ["diagnose", "GID_ORDER"]]


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")


@pytest.mark.parametrize("view", VIEWS, ids=[" ".join(v) for v in VIEWS])
def test_json_lines_one_compact_document_per_round(sim, view):
    r = subprocess.run([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, *view,
                        "--watch", "0.2", "--count", "3"], capture_output=True, text=True,
                       timeout=120, env=env())
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    docs = [json.loads(line) for line in lines]
    assert [d["round"] for d in docs] == [1, 2, 3]
    assert all(isinstance(d["result"], dict) and d["view"] == " ".join(
        v for v in view if not v.startswith(("GID_", "Topic"))) for d in docs)
    assert all("\n" not in line and ": " not in line[:40] for line in lines)  # compact
    assert docs[0]["interval_s"] == 0.2 and isinstance(docs[0]["deltas"], list)


def test_watch_without_a_value_takes_the_default(sim):
    r = subprocess.run([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, "groups",
                        "--watch", "--count", "1"], capture_output=True, text=True,
                       timeout=120, env=env())
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["interval_s"] == DEFAULT_WATCH


def test_a_broker_stopped_mid_watch_is_stale_with_its_age(sim):
    p = subprocess.Popen([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, "group",
                          "progress", "GID_ORDER", "--watch", "0.3", "--count", "6"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    assert p.stdout is not None
    first = json.loads(p.stdout.readline())
    assert first["stale_brokers"] == []
    sim.call(lambda c: c.faults.broker_down("broker-b"))
    code, out, err = finish(p, limit=120)
    assert code in (0, 8), err
    docs = [json.loads(line) for line in out.splitlines()]
    down = [d for d in docs if "broker-b" in d["stale_brokers"]]
    assert down, docs
    stale = [x for x in down[-1]["deltas"] if x["stale"]]
    assert stale and all(x["broker"] == "broker-b" for x in stale)
    assert all(x["stale_age_s"] > 0 and x["row"]["lag"] is not None for x in stale)
    fresh_b = [x for x in first["deltas"] if x["broker"] == "broker-b"]
    assert len(stale) == len(fresh_b)  # every queue of the broker, none blank
    sim.call(lambda c: c.faults.broker_up("broker-b"))


def _tmux() -> str:
    path = shutil.which("tmux")
    if path is None:
        pytest.skip("tmux is not installed: the terminal view is tested where it is")
    return path


def _capture(tmux: str, sock: str) -> str:
    return subprocess.run([tmux, "-S", sock, "capture-pane", "-p", "-t", "w"],
                          capture_output=True, text=True, timeout=30).stdout


def _until(fn, what: str, limit: float = 60.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("key", ["q", "C-c"])
def test_the_terminal_view_redraws_in_place_and_q_or_ctrl_c_leaves(sim, tmp_path, key):
    tmux = _tmux()
    sock, done = str(tmp_path / "tmux.sock"), tmp_path / "exit"
    # (the shell keeps going on Ctrl-C, to write mqctl's exit code: a trap, not an ignore,
    # so that mqctl gets the SIGINT as from a terminal)
    cmd = (f"trap 'true' INT; {sys.executable} -m mqctl -n {sim.namesrv_addr} group "
           f"progress GID_ORDER --watch 0.5; echo $? > {done}; sleep 30")
    subprocess.run([tmux, "-S", sock, "new-session", "-d", "-s", "w", "-x", "160", "-y", "40",
                    "env", "-u", "COLUMNS", "-u", "LINES", f"PYTHONPATH={ROOT}", "sh", "-c",
                    cmd], check=True, timeout=30)
    try:
        screen = _until(lambda: (lambda t: t if "round 3" in t else None)(
            _capture(tmux, sock)), "the third round")
        assert "mqctl group progress" in screen and "last read" in screen
        assert "Δ" in screen and "RATE/s" in screen
        assert screen.count("last read") == 1  # redrawn in place, not scrolled
        sim.call(lambda c: c.faults.broker_down("broker-b"))
        stale = _until(lambda: (lambda t: t if "stale" in t and "did not answer" in t
                                else None)(_capture(tmux, sock)), "the stale rows")
        assert "broker-b" in stale
        subprocess.run([tmux, "-S", sock, "send-keys", "-t", "w", key], check=True, timeout=30)
        code = _until(lambda: done.exists() and done.read_text().strip(), "the exit")
        assert code == "0"
        after = _capture(tmux, sock)
        assert "last read" not in after  # the main screen is back
    finally:
        sim.call(lambda c: c.faults.broker_up("broker-b"))
        subprocess.run([tmux, "-S", sock, "kill-server"], capture_output=True, timeout=30)

"""On a terminal a lever's --execute shows the plan and asks (real processes on a
pseudo-terminal): `y` applies it, anything else changes nothing and writes no undo file."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time

import pytest
from conftest import ROOT


def on_terminal(sim, args, cwd, answer):
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200",
               XDG_STATE_HOME=str(cwd / "state"))
    proc = subprocess.Popen([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, *args],
                            stdout=slave, stderr=slave, stdin=slave, env=env, cwd=cwd,
                            start_new_session=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 30
    answered = False
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        out += chunk
        if not answered and b"Proceed? [y/N]" in out:
            os.write(master, answer.encode() + b"\n")
            answered = True
    code = proc.wait(timeout=30)
    os.close(master)
    return code, out.decode(errors="replace")


@pytest.mark.parametrize("answer, code", [("y", 0), ("n", 6)])
def test_a_terminal_is_asked_before_a_pause(sim, tmp_path, answer, code):
    undo = tmp_path / "undo.json"
    got, out = on_terminal(sim, ["group", "pause", "GID_PAY", "--execute", "--undo-file",
                                 str(undo)], tmp_path, answer)
    assert got == code, out
    assert "consumeEnable: true -> false" in out  # the plan, before the question
    assert "About to pause (consumeEnable=false) group GID_PAY" in out
    enabled = sim.call(lambda c: {c.brokers[b].groups["GID_PAY"].consume_enable
                                  for b in c.brokers})
    if answer == "y":
        assert enabled == {False} and undo.exists()
    else:
        assert enabled == {True} and not undo.exists()
        assert "not confirmed: nothing was changed" in out

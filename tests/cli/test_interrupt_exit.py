"""The CLI boundary for interrupts (follow-up): SIGINT (Ctrl-C) or SIGTERM that
reaches a command with no interrupt handling of its own (a read-only command, ``--watch``)
ends it with exit 130 and one line ``mqctl: interrupted`` on stderr: never silently (Typer
turns a KeyboardInterrupt into a bare ``Exit(130)``; SIGTERM's default action kills the process
without a word, -15).

A real ``mqctl`` process (a real signal) against the simulated cluster whose brokers answer
late, so the signal lands while the command waits for them. 127.0.0.1 only; bounded waits."""

from __future__ import annotations

import signal
import subprocess
import time

import cli_process
import pytest

from mqctl.remoting.codes import MUTATING_REQUESTS

LATENCY_MS = 4000


def spawn(sim, cwd, *args: str) -> subprocess.Popen:
    return cli_process.spawn(sim, list(args), cwd, timeout="20")


def wait_for_broker_request(sim, proc, limit: float = 30.0) -> None:
    """Signal only once mqctl waits for a (slow) broker: its start-up is over."""
    addrs = {sim.cluster.broker_addr(b) for b in ("broker-a", "broker-b")}
    cli_process.wait_for(proc, lambda: any(r.addr in addrs for r in sim.request_log),
                         "a broker request", limit)


@pytest.fixture
def slow(sim):
    for b in ("broker-a", "broker-b"):
        sim.call(lambda c, b=b: c.faults.latency(b, LATENCY_MS))
    sim.clear_request_log()
    return sim


# SIGHUP (the terminal went away) exits 129, 128 + SIGHUP
@pytest.mark.parametrize("sig,code", [("SIGINT", 130), ("SIGTERM", 130), ("SIGHUP", 129)])
@pytest.mark.parametrize("cmd", [["group", "progress", "GID_PAY"],
                                 ["group", "progress", "GID_PAY", "--watch", "1"],
                                 ["offsets", "show", "-g", "GID_PAY"]])
def test_interrupt_of_a_read_only_command_says_so_and_exits_130(slow, tmp_path, sig, code,
                                                               cmd):
    proc = spawn(slow, tmp_path, *cmd)
    wait_for_broker_request(slow, proc)
    time.sleep(0.5)
    t0 = time.monotonic()
    proc.send_signal(getattr(signal, sig))
    try:
        out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert time.monotonic() - t0 < 5  # at once, not after the brokers' 4 s answer
    assert proc.returncode == code, (proc.returncode, err)
    assert err.splitlines() == ["mqctl: interrupted"], err
    assert "Traceback" not in err and out == ""
    # nothing was changed by a read-only command
    assert not {r.code for r in slow.request_log} & set(MUTATING_REQUESTS)


@pytest.mark.parametrize("sig,code", [("SIGHUP", 129), ("SIGTERM", 130), ("SIGINT", 130)])
def test_a_signal_while_mqctl_starts_is_an_interrupt(tmp_path, sig, code):
    """A signal during the imports and the building of the command tree (a few hundred ms
    after the process starts: `python -m mqctl` and the console script record it until then)
    ends the command like one a moment later: the one line, 129 or 130, no traceback, no
    silent kill. Sent here at a fixed point: after the recording starts, before the CLI is
    imported."""
    import os
    import sys

    from conftest import ROOT

    code_text = ("import os, signal, sys\n"
                 "from mqctl.interrupt import hold_signals\n"
                 "hold_signals()\n"
                 f"os.kill(os.getpid(), signal.{sig})\n"
                 "sys.argv = ['mqctl', 'groups']\n"
                 "from mqctl.cli import entrypoint\n"
                 "entrypoint()\n")
    r = subprocess.run([sys.executable, "-c", code_text], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == code, (r.returncode, r.stderr)
    assert r.stderr.splitlines() == ["mqctl: interrupted"], r.stderr

"""SIGHUP (an SSH session dropping) during ``offsets reset/rollback
--execute`` is an interrupt like SIGTERM: mqctl stops sending, waits for the requests in flight
within the bound, and says what changed -- in a file beside the rollback file too
(``NAME.result.txt``, with ``NAME.remaining.csv``), since the terminal may be gone; a write to
the dead terminal does not end the run before the files are written.

A real ``mqctl`` process (a real signal; a real pseudo-terminal whose other end is closed, as
sshd closes it) against the simulated cluster, broker-b answering 1.5 s late. 127.0.0.1 only;
bounded waits.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys

import cli_process
import pytest
from conftest import ROOT
from test_reset_concurrent import G, T, live, writes

from mqctl.models import MessageQueue


def spawn_on_terminal(sim, args, cwd):
    """``mqctl`` with stdout and stderr on a pseudo-terminal; returns (process, master fd)."""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    proc = subprocess.Popen([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, *args],
                            stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env,
                            cwd=cwd, start_new_session=True)
    os.close(slave)
    return proc, master


def wait_exit(proc, limit=30.0):
    try:
        return proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


def reset_on_terminal(sim, tmp_path):
    """A rewind of GID_REPLAY by 100 on a pseudo-terminal, broker-b slow: (process, master fd,
    rollback file, the offsets before)."""
    before = live(sim)
    slow_b(sim)
    rb = tmp_path / "rb.json"
    proc, master = spawn_on_terminal(sim, ["offsets", "reset", "-g", G, "-t", T, "--shift-by",
                                           "-100", "--execute", "--yes", "--rollback-file",
                                           str(rb)], tmp_path)
    return proc, master, rb, before


def slow_b(sim):
    sim.call(lambda c: c.faults.latency("broker-b", 1500))
    sim.clear_request_log()


def statuses_hold(sim, results, before):
    """What mqctl says is what the brokers hold: applied -> the target, not sent -> unchanged."""
    now = live(sim)
    for x in results:
        mq = MessageQueue(T, x["broker"], x["queue_id"])
        if x["status"] == "applied":
            assert now[mq] == x["target"], x
        elif x["status"] == "not-sent":
            assert now[mq] == before[mq], x
        else:
            assert x["status"] == "unknown", x


def test_sighup_on_a_dead_terminal_during_apply_keeps_the_result_in_files(sim, tmp_path):
    """The issue's reproduction: SIGHUP while applying, the terminal gone (its master side
    closed: every write to it fails with EIO). Before: killed silently, no table, no
    .remaining.csv. Now: exit 130, and beside the rollback file the result (what was applied,
    not sent, the finish and undo commands) and the remaining plan."""
    proc, master, rb, before = reset_on_terminal(sim, tmp_path)
    try:
        cli_process.wait_for(proc, lambda: len(writes(sim, "broker-a")) >= 4
                             and len(writes(sim, "broker-b")) >= 1, "the apply")
    finally:
        os.close(master)  # the session drops: the terminal is gone ...
    proc.send_signal(signal.SIGHUP)  # ... and the kernel hangs up the process
    assert wait_exit(proc) == 130
    result = tmp_path / "rb.result.txt"
    remaining = tmp_path / "rb.remaining.csv"
    assert rb.exists() and result.exists() and remaining.exists()
    text = result.read_text()
    assert "interrupted by SIGHUP during apply: 5 applied, 3 not sent, 0 unknown" in text
    assert f"--from-file {remaining} --execute" in text  # the finish command
    assert f"offsets rollback {rb} --execute" in text  # the undo command
    rows = {(x[0], int(x[1])): x[5] for x in (ln.split() for ln in text.splitlines())
            if len(x) > 5 and x[0] in ("broker-a", "broker-b") and x[4] == "-"}  # NOW: not read
    assert rows == {**{("broker-a", q): "applied" for q in range(4)},
                    ("broker-b", 0): "applied",
                    **{("broker-b", q): "not-sent" for q in (1, 2, 3)}}
    now = live(sim)
    for (b, q), status in rows.items():
        mq = MessageQueue(T, b, q)
        assert now[mq] == (before[mq] - 100 if status == "applied" else before[mq])
    # the remaining plan finishes it
    assert {(ln.split(",")[2], ln.split(",")[3]) for ln in remaining.read_text().splitlines()[1:]
            } == {("broker-b", "1"), ("broker-b", "2"), ("broker-b", "3")}


@pytest.mark.parametrize("command", ["reset", "rollback"])
def test_sighup_during_apply_reports_like_sigterm(cli, sim, tmp_path, command):
    """With the terminal still there (a pipe), SIGHUP reports as SIGTERM does: exit 130, each
    queue's status, finish and undo; the result is kept beside the rollback file as well."""
    rb = tmp_path / "rb.json"
    if command == "rollback":
        first = tmp_path / "first.json"
        r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", G, "-t", T, "--to-earliest",
                 "--execute", "--rollback-file", str(first), "--verify-wait", "0"])
        assert r.exit_code == 0, r.stderr
        args = ["offsets", "rollback", str(first), "--execute", "--yes", "-o", "json"]
    else:
        args = ["offsets", "reset", "-g", G, "-t", T, "--shift-by", "-100", "--execute",
                "--yes", "--rollback-file", str(rb), "-o", "json"]
    before = live(sim)
    slow_b(sim)
    proc = cli_process.spawn(sim, args, tmp_path)
    cli_process.wait_for(proc, lambda: len(writes(sim, "broker-a")) >= 4
                         and len(writes(sim, "broker-b")) >= 1, "the apply")
    proc.send_signal(signal.SIGHUP)
    code, out, err = cli_process.finish(proc)
    assert code == 130, err
    d = json.loads(out)
    intr = d["interrupted"]
    assert intr["signal"] == "SIGHUP" and intr["during"] == "apply"
    assert "interrupted by SIGHUP during apply: 5 applied, 3 not sent, 0 unknown" in err
    statuses_hold(sim, d["results"], before)
    own = d["rollback_file"]
    assert intr["result_file"] == own.removesuffix(".json") + ".result.txt"
    with open(intr["result_file"]) as fh:
        kept = fh.read()
    assert "interrupted by SIGHUP during apply" in kept and intr["undo"] in kept


def test_sighup_while_planning_changes_nothing(sim, tmp_path):
    before = live(sim)
    slow_b(sim)
    rb = tmp_path / "rb.json"
    proc = cli_process.spawn(sim, ["offsets", "reset", "-g", G, "-t", T, "--to-earliest",
                                   "--execute", "--rollback-file", str(rb)], tmp_path)
    addr_b = sim.cluster.broker_addr("broker-b")
    cli_process.wait_for(proc, lambda: any(r.addr == addr_b for r in sim.request_log),
                         "the plan's reads")
    proc.send_signal(signal.SIGHUP)
    code, _, err = cli_process.finish(proc)
    assert code == 130, err
    assert "interrupted by SIGHUP before any change: nothing was changed" in err
    assert writes(sim) == [] and not rb.exists() and live(sim) == before


def test_a_terminal_gone_before_the_apply_changes_nothing(sim, tmp_path):
    """The terminal is gone before the plan could be shown: nothing is applied (nobody would
    see what happens), and nothing is half written."""
    proc, master, rb, before = reset_on_terminal(sim, tmp_path)
    os.close(master)
    assert wait_exit(proc) == 130
    assert writes(sim) == [] and not rb.exists() and live(sim) == before

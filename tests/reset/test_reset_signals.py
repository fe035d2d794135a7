"""No signal is lost during `offsets reset --execute`, and a result nobody could read is
kept (real processes against the simulated cluster).

One handler records SIGINT, SIGTERM and SIGHUP for the whole command (mqctl.interrupt): a
signal is delivered at every phase boundary (``MQCTL_TEST_SIGNAL_AT=PHASE:SIGNAL``, the
process signals itself there, so each boundary is hit exactly), and every run exits 130
naming the signal and what it interrupted, never 0. Before, a SIGINT that came as the event
loop finished (its wake-up never read) or between the start-up handler and the loop's was
lost: exit 0, "8 verified".

``offsets reset --execute | head -1``: the reader goes away after the plan; the change goes
on, its result is kept beside the rollback file, and the exit is 141 (docs/errors.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cli_process import finish
from conftest import ROOT

PHASES = {  # boundary -> what the run says it interrupted
    "start": "before any change: nothing was changed",
    "planned": "before any change: nothing was changed",
    "applying": "during apply",
    "broker-done": "during apply",
    "verifying": "during verify",
    "verified": "after the change was complete",
    "done": "after the change was complete",
}


def run(sim, args, cwd, env=None, **kw):
    e = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="250", **(env or {}))
    return subprocess.Popen([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, *args],
                            stderr=subprocess.PIPE, text=True, env=e, cwd=cwd, **kw)


def committed(sim):
    qs = sim.call(lambda c: c.subscribe_queues("TopicPay"))
    return {mq: sim.call(lambda c, mq=mq: c.committed_offset("GID_REPLAY", mq)) for mq in qs}


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_at_every_phase_boundary_is_never_lost(sim, tmp_path, phase, sig):
    before = committed(sim)
    rb = tmp_path / "rb.json"
    proc = run(sim, ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-earliest",
                     "--execute", "--yes", "--verify-wait", "0", "--rollback-file", str(rb),
                     "-o", "json"], tmp_path, env={"MQCTL_TEST_SIGNAL_AT": f"{phase}:{sig}"},
               stdout=subprocess.PIPE)
    code, out, err = finish(proc, 60)
    assert code == 130, (phase, sig, code, err)
    assert f"interrupted by {sig} {PHASES[phase]}" in err, (phase, err)
    assert "Traceback" not in err
    after = committed(sim)
    if PHASES[phase].startswith("before"):
        assert after == before and not rb.exists()  # nothing was changed, as it says
        return
    assert rb.exists()  # written before the first change
    d = json.loads(out)
    if phase in ("verified", "done"):  # the change is complete, and its result is printed
        assert {r["status"] for r in d["results"]} <= {"verified", "already", "unverified"}
        assert all(v == 0 for v in after.values())  # --to-earliest: every queue at its min
        # (a signal before the result is printed: it is kept beside the rollback file too)
        assert os.path.exists(tmp_path / "rb.result.txt") == (phase == "verified")
    else:
        assert d["interrupted"]["signal"] == sig
        for r in d["results"]:  # what it says is what the broker holds
            mq = next(m for m in after if (m.broker_name, m.queue_id) == (r["broker"],
                                                                         r["queue_id"]))
            if r["status"] == "not-sent":
                assert after[mq] == before[mq]
            elif r["status"] == "applied":
                assert after[mq] == r["target"]


def test_the_reader_going_away_after_the_plan_keeps_the_result_and_exits_141(sim, tmp_path):
    # reproduction: `offsets reset --execute ... | head -1` applied, verified, lost the
    # per-queue result and exited 0
    sim.call(lambda c: c.faults.latency("broker-b", 300))  # the apply outlasts our reading
    rb = tmp_path / "rb.json"
    r, w = os.pipe()
    proc = run(sim, ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-earliest",
                     "--execute", "--yes", "--verify-wait", "0", "--rollback-file", str(rb),
                     "-o", "plain"], tmp_path, stdout=w)
    os.close(w)
    with os.fdopen(r) as reader:  # head: read up to the plan's last line, then go away
        for line in reader:
            if line.startswith("applying "):
                break
        else:
            pytest.fail("the plan was not printed")
    code, _out, err = finish(proc, 60)
    assert code == 141, err
    kept = tmp_path / "rb.result.txt"
    errors = [ln for ln in err.splitlines() if ln.startswith("mqctl: error:")]
    assert errors == [f"mqctl: error: the result could not be written to stdout (its reader "
                      f"went away) after the change; the result is in {kept}"], err
    text = kept.read_text()
    assert "result:" in text and "broker-b" in text
    assert all(v == 0 for v in committed(sim).values())  # the change went through

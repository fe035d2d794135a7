"""A signal at every phase of `group pause --execute` and `offsets clone --execute` (real
processes against the simulated cluster, MQCTL_TEST_SIGNAL_AT=PHASE:SIGNAL): exit 130 naming
the signal and the phase, and what the outcome says was applied is what the brokers hold; a
second change of the group while one runs is refused (the change lock `offsets reset` takes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cli_process import finish
from conftest import ROOT

from mqctl.interrupt import change_lock

PHASES = {
    "start": "before any change: nothing was changed",
    "planned": "before any change: nothing was changed",
    "applying": "during apply",
    "broker-done": "during apply",
    "verifying": "during verify",
    "verified": "after the change was complete",
}


def run(sim, args, tmp_path, env):
    e = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="250",
             XDG_STATE_HOME=str(tmp_path / "state"), **env)
    p = subprocess.Popen([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                         cwd=tmp_path)
    return finish(p, 60)


def enabled(sim):
    return sim.call(lambda c: {b: c.brokers[b].groups["GID_PAY"].consume_enable
                               for b in sorted(c.brokers)})


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_at_every_phase_of_a_pause_says_what_was_applied(sim, tmp_path, phase, sig):
    undo = tmp_path / "undo.json"
    code, out, err = run(sim, ["group", "pause", "GID_PAY", "--execute", "--yes",
                               "--undo-file", str(undo), "-o", "json"], tmp_path,
                         {"MQCTL_TEST_SIGNAL_AT": f"{phase}:{sig}"})
    assert code == 130, (phase, sig, code, err)
    assert f"interrupted by {sig} {PHASES[phase]}" in err, (phase, err)
    assert "Traceback" not in err
    now = enabled(sim)
    if PHASES[phase].startswith("before"):
        assert all(now.values()) and not undo.exists()  # nothing was changed, as it says
        return
    assert undo.exists()  # written before the first request
    # the terminal may be gone (SIGHUP): the result is kept beside the undo file too
    kept = tmp_path / "undo.result.txt"
    assert kept.exists() and "GID_PAY" in kept.read_text()
    d = json.loads(out)
    for b in d["brokers"]:  # what it says is what the broker holds
        if b["status"] == "not-sent":
            assert now[b["broker"]] is True
        elif b["status"] in ("applied", "verified"):
            assert now[b["broker"]] is False
    if phase in ("applying", "broker-done", "verifying"):
        assert d["interrupted"]["signal"] == sig
        assert "undo:" in err or all(b["status"] == "not-sent" for b in d["brokers"])
    if phase == "applying":  # the signal came before the first request
        assert {b["status"] for b in d["brokers"]} == {"not-sent"}
        assert "finish: mqctl" in err and "group pause GID_PAY" in err


def test_a_second_change_of_the_group_is_refused_while_one_runs(cli, sim, tmp_path,
                                                                 monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    sim.clear_request_log()
    with change_lock([sim.namesrv_addr], "GID_PAY", "mqctl offsets reset GID_PAY/TopicPay"):
        for args in (["group", "pause", "GID_PAY"], ["group", "config", "set", "GID_PAY",
                                                     "retryMaxTimes=2"],
                     ["offsets", "clone", "--from", "GID_REPLAY", "--to", "GID_PAY", "-t",
                      "TopicPay", "--force"]):
            r = cli(["-n", sim.namesrv_addr, *args, "--execute", "--yes"])
            assert r.exit_code == 6, r.stderr
            assert "another mqctl run is changing group GID_PAY" in r.stderr
    assert all(enabled(sim).values())
    assert not [x for x in sim.request_log if x.code in (200, 314)]


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_during_a_config_change_says_what_was_applied(sim, tmp_path, phase, sig):
    undo = tmp_path / "undo.json"
    code, out, err = run(sim, ["group", "config", "set", "GID_PAY", "retryMaxTimes=4",
                               "--execute", "--yes", "--undo-file", str(undo), "-o", "json"],
                         tmp_path, {"MQCTL_TEST_SIGNAL_AT": f"{phase}:{sig}"})
    assert code == 130, (phase, sig, code, err)
    assert f"interrupted by {sig} {PHASES[phase]}" in err, (phase, err)
    now = sim.call(lambda c: {b: c.brokers[b].groups["GID_PAY"].retry_max_times
                              for b in sorted(c.brokers)})
    if PHASES[phase].startswith("before"):
        assert set(now.values()) == {16} and not undo.exists()
        return
    assert undo.exists()
    for b in json.loads(out)["brokers"]:
        assert now[b["broker"]] == (16 if b["status"] == "not-sent" else 4), b


def clone_offsets(sim):
    return sim.call(lambda c: {(b, q): c.brokers[b].committed("GID_COPY", "TopicPay", q)
                               for b in sorted(c.brokers) for q in range(4)})


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_during_an_offsets_clone_says_what_was_applied(sim, tmp_path, phase, sig):
    from mqctl.sim.broker import GroupConf

    def new_group(c):
        for b in c.brokers.values():
            b.groups["GID_COPY"] = GroupConf("GID_COPY")
            b.offsets[("TopicPay", "GID_COPY")] = {q: 1 for q in range(4)}

    sim.call(new_group)
    rb = tmp_path / "rb.json"
    code, out, err = run(sim, ["offsets", "clone", "--from", "GID_REPLAY", "--to", "GID_COPY",
                               "-t", "TopicPay", "--offline", "--execute", "--yes",
                               "--rollback-file", str(rb), "-o", "json"],
                         tmp_path, {"MQCTL_TEST_SIGNAL_AT": f"{phase}:{sig}"})
    assert code == 130, (phase, sig, code, err)
    assert f"interrupted by {sig} {PHASES[phase]}" in err, (phase, err)
    now = clone_offsets(sim)
    if PHASES[phase].startswith("before"):
        assert set(now.values()) == {1} and not rb.exists()
        return
    assert rb.exists()  # written before the first request
    d = json.loads(out)
    if phase == "verified":  # complete: every queue G1 had an offset on is G1's now
        assert {q["status"] for q in d["queues"]} <= {"verified", "unchanged"}
    for broker, state in (d["brokers"] or {}).items():
        got = {v for (b, _), v in now.items() if b == broker}
        assert (got == {1}) == (state == "not-sent"), (broker, state, got)

"""Reset guards: --max-replay/--max-skip refuse an --execute beyond them,
with the numbers; queues without a committed offset never pass as 0; profile defaults and
require_guards; a large change asks on a terminal (without --yes)."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time

import pytest

from mqctl.config import load_settings
from mqctl.errors import UsageError
from mqctl.models import MessageQueue
from mqctl.remoting.codes import MUTATING_REQUESTS
from mqctl.reset import ConsumerState, Plan, QueuePlan, Target
from mqctl.reset.guards import (
    Guards,
    check_guards,
    confirmed,
    needs_confirmation,
    plan_totals,
    resolve_guards,
)

MQ = MessageQueue
BASE = ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay"]


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def mutating(sim):
    return [r for r in sim.request_log if r.code in MUTATING_REQUESTS]


def rollback_files():
    root = os.environ["XDG_STATE_HOME"]
    return sorted(p for d, _, fs in os.walk(root) for p in fs)


def plan_of(*queues):
    qs = [QueuePlan(MQ("T", "b", i), mn, mx, cur, tgt) for i, (mn, mx, cur, tgt)
          in enumerate(queues)]
    return Plan("G", "T", Target("offset"), 0, "ns", qs, {},
                ConsumerState(False, [], None, False, None, None))


# ------------------------------------------------------------------------------ pure

def test_totals_count_known_changes_and_bound_the_unknown_ones():
    t = plan_totals(plan_of((0, 100, 100, 50),    # replays 50
                            (0, 100, 10, 30),     # skips 20
                            (0, 100, 5, 5),       # no change
                            (20, 100, None, 40)))  # no offset: up to 60 back or 20 forward
    assert (t.queues, t.replay, t.skip, t.unknown) == (3, 50, 20, 1)
    assert (t.replay_most, t.skip_most) == (110, 40)
    assert t.moved_most == 150


def test_guards_refuse_beyond_the_limit_and_never_count_unknown_as_zero():
    known = plan_totals(plan_of((0, 100, 100, 50), (0, 100, 10, 30)))
    assert check_guards(known, Guards(max_replay=50, max_skip=20)) == []
    over = check_guards(known, Guards(max_replay=49, max_skip=19, replay_source="flag",
                                      skip_source="profile prod max_skip"))
    assert len(over) == 2
    assert "replay 50 message(s), more than 49" in over[0] and "(flag)" in over[0]
    assert "skip 20 message(s), more than 19" in over[1] and "profile prod" in over[1]
    # one queue without an offset: 50 counted fit, the most it could be (110) does not
    unknown = plan_totals(plan_of((0, 100, 100, 50), (20, 100, None, 40)))
    msg = check_guards(unknown, Guards(max_replay=100))
    assert len(msg) == 1 and "replay 50 counted message(s)" in msg[0]
    assert "up to 110" in msg[0] and "never counted as 0" in msg[0]
    assert check_guards(unknown, Guards(max_replay=110, max_skip=20)) == []
    assert check_guards(unknown, Guards()) == []  # no guard, nothing refused


def test_confirmation_threshold_and_answers():
    t = plan_totals(plan_of((0, 100, 100, 50)))
    assert needs_confirmation(t, Guards(confirm_above=49))
    assert not needs_confirmation(t, Guards(confirm_above=50))
    assert [confirmed(a) for a in ("y\n", "YES", " yes ", "n", "", None, "yep")] == [
        True, True, True, False, False, False, False]


def test_resolve_flags_over_profile_and_require_guards(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("profiles:\n  prod: {max_replay: 500, require_guards: true,"
                   " confirm_above: 7}\n")
    s = load_settings(config_file=str(cfg), profile="prod", env={})
    g = resolve_guards(s, max_replay=None, max_skip=3, execute=False)
    assert (g.max_replay, g.max_skip, g.confirm_above) == (500, 3, 7)
    assert g.replay_source == "profile prod max_replay" and g.skip_source == "flag"
    with pytest.raises(UsageError, match=r"requires reset guards.*--max-skip"):
        resolve_guards(s, max_replay=None, max_skip=None, execute=True)
    assert resolve_guards(s, max_replay=9, max_skip=0, execute=True).max_replay == 9
    with pytest.raises(UsageError, match="--max-skip must be >= 0"):
        resolve_guards(s, max_replay=None, max_skip=-1, execute=False)


@pytest.mark.parametrize("value", ["'many'", "1.5", "-3", "true"])
def test_bad_profile_values_are_config_errors(tmp_path, cli, value):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"profiles:\n  prod: {{max_replay: {value}}}\n")
    r = cli(["--config", str(cfg), "--profile", "prod", "config", "show"])
    assert r.exit_code == 2 and "max_replay (profile prod)" in r.stderr, r.stderr


# ------------------------------------------------------------------------------ sim

def test_guard_refuses_an_execute_with_the_numbers_and_changes_nothing(cli, sim):
    plan = run(cli, sim, *BASE, "--to-earliest", "-o", "json").json
    replay = sum(q["replay"] for q in plan["queues"])
    assert replay > 1000
    shown = run(cli, sim, *BASE, "--to-earliest", "--max-replay", "1000")
    assert shown.exit_code == 0, shown.stderr
    assert (f"guard --max-replay 1000 (flag): the plan would replay {replay} message(s), more "
            "than 1000: --execute would be refused") in shown.stdout
    r = run(cli, sim, *BASE, "--to-earliest", "--max-replay", "1000", "--execute")
    assert r.exit_code == 6, r.stderr
    assert f"replay {replay} message(s), more than 1000" in r.stderr
    assert "--force does not override a guard" in r.stderr
    assert "nothing was changed (refused)" in r.stdout
    assert mutating(sim) == [] and rollback_files() == []
    # --force does not get past it either
    assert run(cli, sim, *BASE, "--to-earliest", "--max-replay", "1000", "--execute",
               "--force").exit_code == 6
    assert mutating(sim) == []


def test_skip_guard_and_a_change_within_both_limits(cli, sim):
    r = run(cli, sim, *BASE, "--to-latest", "--max-skip", "10", "--execute", "-o", "json")
    assert r.exit_code == 6 and mutating(sim) == []
    g = r.json["guards"]
    assert g["max_skip"] == 10 and g["totals"]["skip"] > 10 and g["totals"]["replay"] == 0
    assert "skip" in g["breaches"][0] and len(g["breaches"]) == 1
    # exactly at the limit passes: "more than N" is refused
    ok = run(cli, sim, *BASE, "--shift-by", "-100", "--max-replay", "800", "--max-skip", "0",
             "--execute", "-o", "json")
    assert ok.exit_code == 0, ok.stderr
    assert ok.json["guards"]["totals"]["replay"] == 800 and ok.json["guards"]["breaches"] == []
    assert {x["status"] for x in ok.json["results"]} == {"verified"}


def test_a_queue_without_committed_offset_is_not_counted_as_zero(cli, sim):
    sim.call(lambda c: c.brokers["broker-a"].offsets[("TopicPay", "GID_REPLAY")].pop(0))
    r = run(cli, sim, *BASE, "--shift-by", "-10", "--max-replay", "1000", "--execute",
            "-o", "json")
    assert r.exit_code == 6, r.stderr
    t = r.json["guards"]["totals"]
    assert t["unknown_queues"] == 1 and t["replay"] == 70  # 7 queues x 10 counted
    q0 = next(q for q in r.json["queues"] if (q["broker"], q["queue_id"]) == ("broker-a", 0))
    assert q0["current"] is None
    assert t["replay_at_most"] == 70 + q0["max"] - q0["target"]
    assert "1 queue(s) have no committed offset" in r.stderr and mutating(sim) == []
    # its change, replay and skip are unknown: null, `-` in the table, never 0
    assert (q0["change"], q0["replay"], q0["skip"]) == (None, None, None)
    known = [q for q in r.json["queues"] if q["current"] is not None]
    assert len(known) == 7 and all(q["replay"] == 10 and q["skip"] == 0 for q in known)
    table = run(cli, sim, *BASE, "--to-earliest", "-o", "plain").stdout.splitlines()
    head = next(ln for ln in table if ln.startswith("BROKER "))
    row = next(ln for ln in table if ln.startswith("broker-a ") and ln.split()[1] == "0")
    cell = {h: row[head.index(h) - 2:head.index(h) + len(h)].strip()
            for h in ("CURRENT", "CHANGE", "REPLAY", "SKIP")}
    assert cell == {"CURRENT": "none", "CHANGE": "-", "REPLAY": "-", "SKIP": "-"}, (head, row)
    # the same reset without that queue passes
    ok = run(cli, sim, *BASE, "--shift-by", "-10", "--max-replay", "1000", "--execute",
             "--queues", "broker-a:1-3,broker-b:0-3")
    assert ok.exit_code == 0, ok.stderr
    # with it and no guard: the result counts the 7 known changes and says the eighth is not
    done = run(cli, sim, *BASE, "--to-earliest", "--execute")
    assert done.exit_code == 0, done.stderr
    assert ("8 of 8 queue(s) were reset: " in done.stdout
            and " (1 queue(s) without a committed offset before: not counted, their change is "
            "not known)" in done.stdout), done.stdout


def test_profile_defaults_and_require_guards(cli, sim, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"profiles:\n  prod: {{namesrv: '{sim.namesrv_addr}', require_guards: true}}\n"
                   f"  capped: {{namesrv: '{sim.namesrv_addr}', max_replay: 100,"
                   " max_skip: 0}\n")
    base = ["--config", str(cfg)]
    r = cli([*base, "--profile", "prod", *BASE, "--shift-by", "-10", "--execute"])
    assert r.exit_code == 2 and "requires reset guards" in r.stderr, r.stderr
    assert sim.request_log == []  # refused before any network I/O
    # the plan alone needs no guard
    assert cli([*base, "--profile", "prod", *BASE, "--shift-by", "-10"]).exit_code == 0
    ok = cli([*base, "--profile", "prod", *BASE, "--shift-by", "-10", "--execute",
              "--max-replay", "80", "--max-skip", "0"])
    assert ok.exit_code == 0, ok.stderr
    capped = cli([*base, "--profile", "capped", *BASE, "--shift-by", "-100", "--execute"])
    assert capped.exit_code == 6 and "(profile capped max_replay)" in capped.stderr
    more = cli([*base, "--profile", "capped", *BASE, "--shift-by", "-100", "--execute",
                "--max-replay", "800"])
    assert more.exit_code == 0, more.stderr


def test_rollback_execute_is_guarded_too(cli, sim, tmp_path):
    rb = tmp_path / "rb.json"
    r = run(cli, sim, *BASE, "--shift-by", "-100", "--execute", "--rollback-file", str(rb))
    assert r.exit_code == 0, r.stderr
    n = len(mutating(sim))
    back = run(cli, sim, "offsets", "rollback", str(rb), "--execute", "--max-skip", "10")
    assert back.exit_code == 6, back.stderr
    assert "skip 800 message(s), more than 10" in back.stderr
    assert len(mutating(sim)) == n  # nothing more was sent
    ok = run(cli, sim, "offsets", "rollback", str(rb), "--execute", "--max-skip", "800")
    assert ok.exit_code == 0, ok.stderr


# ------------------------------------------------------------------------------ confirmation

def test_large_change_on_a_terminal_asks_and_no_changes_nothing(cli, sim, monkeypatch):
    import mqctl.cli.offsets as offsets

    asked = []

    async def ask(question):
        asked.append(question)
        return "n\n"

    monkeypatch.setattr(offsets, "_interactive", lambda: True)
    monkeypatch.setattr(offsets, "_ask", ask)
    r = run(cli, sim, *BASE, "--to-earliest", "--execute")
    assert r.exit_code == 6 and "not confirmed" in r.stderr, r.stderr
    assert len(asked) == 1 and "About to reset GID_REPLAY / TopicPay: 8 queue(s)" in asked[0]
    assert "more than confirm_above 10000" in asked[0]
    assert mutating(sim) == [] and rollback_files() == []
    # a small change is not asked about; --yes never asks
    assert run(cli, sim, *BASE, "--shift-by", "-10", "--execute").exit_code == 0
    assert len(asked) == 1
    assert run(cli, sim, *BASE, "--to-earliest", "--execute", "--yes").exit_code == 0
    assert len(asked) == 1 and mutating(sim)


def test_yes_answer_applies(cli, sim, monkeypatch):
    import mqctl.cli.offsets as offsets

    async def ask(question):
        return "y\n"

    monkeypatch.setattr(offsets, "_interactive", lambda: True)
    monkeypatch.setattr(offsets, "_ask", ask)
    r = run(cli, sim, *BASE, "--to-earliest", "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {x["status"] for x in r.json["results"]} == {"verified"}
    assert len(rollback_files()) == 1


@pytest.mark.parametrize("answer", ["n", "SIGINT"])
def test_real_terminal_prompt(sim, tmp_path, answer):
    """A real pseudo-terminal on stdin and stderr: the question shows the totals; 'n' stops
    everything (exit 6), so does an interrupt at the question (exit 130, at once: the
    answer is read off the event loop); nothing is sent either way."""
    master, slave = pty.openpty()
    env = dict(os.environ, NAMESRV_ADDR=sim.namesrv_addr, XDG_STATE_HOME=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-m", "mqctl", *BASE, "--to-earliest", "--execute",
                          "-o", "plain"], stdin=slave, stderr=slave, stdout=subprocess.PIPE,
                         env=env, text=True)
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"Proceed? [y/N]" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if ready:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
        assert b"Proceed? [y/N]" in seen, seen
        assert b"8 queue(s)" in seen and b"replayed" in seen
        if answer == "SIGINT":
            p.send_signal(signal.SIGINT)
        else:
            os.write(master, b"n\n")
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
        os.close(master)
    assert p.returncode == (130 if answer == "SIGINT" else 6)
    assert "# reset plan: GID_REPLAY / TopicPay to earliest" in out  # the plan came first
    assert mutating(sim) == [] and not list(tmp_path.rglob("*.json"))

"""Concurrent changes of one group are serialized and never reported as
success.

From this machine a second ``offsets reset/rollback --execute`` (or ``--from-file``) or ``locks
release --execute`` of a group is refused while one runs (exit 6, naming the other run's pid and
start time); a lock left by a killed run is taken over and said so. From another machine
(another state directory here) nothing can stop it: verify then reports each queue that reached
its target and was moved elsewhere as ``moved by another writer (now N)``, exit 8, and the
summary counts only what this run's change still holds.

Real ``mqctl`` processes against the simulated cluster; broker-b answers late (the issue's slow
scenario), so the first run is still applying while the second one starts. GID_REPLAY is
offline (its offsets move only when something writes them). 127.0.0.1 only; bounded waits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import cli_process
import pytest
from conftest import ROOT

from mqctl.models import MessageQueue
from mqctl.remoting.codes import RequestCode

G, T = "GID_REPLAY", "TopicPay"
WRITES = (RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, RequestCode.UPDATE_CONSUMER_OFFSET)
LATENCY_MS = 2000


def live(sim, group=G, topic=T):
    qs = sim.call(lambda c: c.subscribe_queues(topic))
    return {mq: sim.call(lambda c, mq=mq: c.committed_offset(group, mq)) for mq in qs}


def writes(sim, broker=None):
    addr = sim.cluster.broker_addr(broker) if broker else None
    return [r for r in sim.request_log if r.code in WRITES and (addr is None or r.addr == addr)]


def reset_args(rb, *target, fmt="json"):
    return ["offsets", "reset", "-g", G, "-t", T, *target, "--execute", "--yes",
            "--rollback-file", str(rb), "-o", fmt]


def slow_first_run(sim, tmp_path, *target):
    """Run 1 in its own process, broker-b slow: returns once broker-a took its four changes and
    broker-b's first is on its way (run 1 applies for about 3 more latencies)."""
    sim.call(lambda c: c.faults.latency("broker-b", LATENCY_MS))
    sim.clear_request_log()
    rb = tmp_path / "run1.json"
    proc = cli_process.spawn(sim, reset_args(rb, *target), tmp_path)
    cli_process.wait_for(proc, lambda: len(writes(sim, "broker-a")) >= 4
                         and len(writes(sim, "broker-b")) >= 1, "run 1's apply")
    return proc, rb


def test_a_second_reset_of_the_group_from_this_machine_is_refused(cli, sim, tmp_path):
    """The issue's reproduction from one machine: --shift-by -100 and, while it applies,
    --shift-by -5. The second is refused before it reads anything; the first completes alone
    and its rollback file is the only one that claims the 'before'."""
    before = live(sim)
    proc, rb1 = slow_first_run(sim, tmp_path, "--shift-by", "-100")
    sent = len(writes(sim))
    rb2 = tmp_path / "run2.json"
    r = cli(["-n", sim.namesrv_addr, *reset_args(rb2, "--shift-by", "-5")])
    assert r.exit_code == 6, (r.exit_code, r.stderr)
    assert f"another mqctl run is changing group {G} from this machine: pid {proc.pid}, " \
           "started 20" in r.stderr
    assert "(mqctl offsets reset GID_REPLAY/TopicPay)" in r.stderr
    assert "hint: wait for it to end" in r.stderr
    assert r.stdout == "" and not rb2.exists()
    assert len(writes(sim)) == sent  # the refused run sent nothing
    code, out, err = cli_process.finish(proc)
    assert code == 0, err
    d = json.loads(out)
    assert {x["status"] for x in d["results"]} == {"verified"}
    assert live(sim) == {mq: v - 100 for mq, v in before.items()}
    saved = {(q["broker"], q["queue_id"]): q["offset"]
             for q in json.loads(rb1.read_text())["queues"]}
    assert saved == {(mq.broker_name, mq.queue_id): v for mq, v in before.items()}
    # the lock went with the run: the next change of the group goes ahead
    r = cli(["-n", sim.namesrv_addr, *reset_args(rb2, "--shift-by", "-5"), "--verify-wait",
             "0"])
    assert r.exit_code == 0, r.stderr
    assert live(sim) == {mq: v - 105 for mq, v in before.items()}


def test_a_rollback_of_the_group_is_refused_while_a_reset_runs(cli, sim, tmp_path):
    """``offsets rollback --execute`` (and ``--from-file``) take the same lock."""
    first = tmp_path / "first.json"
    r = cli(["-n", sim.namesrv_addr, *reset_args(first, "--shift-by", "-10"), "--verify-wait",
             "0"])
    assert r.exit_code == 0, r.stderr
    plan = tmp_path / "plan.csv"
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", G, "-t", T, "--shift-by", "-1",
             "--export", str(plan)])
    assert r.exit_code == 0, r.stderr
    proc, _ = slow_first_run(sim, tmp_path, "--shift-by", "-100")
    sent = len(writes(sim))
    r = cli(["-n", sim.namesrv_addr, "offsets", "rollback", str(first), "--execute", "--yes"])
    assert r.exit_code == 6, (r.exit_code, r.stderr)
    assert f"another mqctl run is changing group {G} from this machine: pid {proc.pid}" \
           in r.stderr
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", G, "-t", T, "--from-file",
             str(plan), "--execute", "--yes"])
    assert r.exit_code == 6 and f"pid {proc.pid}" in r.stderr, (r.exit_code, r.stderr)
    assert len(writes(sim)) == sent
    # a dry run (no --execute) is not a change: it plans while the other run applies
    r = cli(["-n", sim.namesrv_addr, "offsets", "rollback", str(first)])
    assert "# reset plan:" in r.stdout and "another mqctl run" not in r.stderr, r.stderr
    code, _, err = cli_process.finish(proc)
    assert code == 0, err


def test_a_lock_left_by_a_killed_run_is_taken_over_and_said_so(cli, sim, tmp_path):
    """A run killed with SIGKILL cannot release anything: the kernel drops its flock, the
    lock file keeps its record; the next run takes it over and says whose it was."""
    proc, _ = slow_first_run(sim, tmp_path, "--shift-by", "-100")
    proc.kill()
    proc.communicate()
    sim.call(lambda c: c.faults.clear())
    r = cli(["-n", sim.namesrv_addr, *reset_args(tmp_path / "next.json", "--shift-by", "-1"),
             "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    notes = " ".join(r.json["notes"])
    assert f"took over the change lock of group {G} left by pid {proc.pid}" in notes
    assert f"pid {proc.pid} no longer runs" in notes
    assert f"mqctl offsets rollbacks -g {G}" in notes
    assert f"mqctl: warning: took over the change lock of group {G}" in r.stderr
    # released cleanly this time: the run after it takes nothing over
    r = cli(["-n", sim.namesrv_addr, *reset_args(tmp_path / "after.json", "--shift-by", "-1"),
             "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    assert "took over" not in " ".join(r.json["notes"])


def test_another_machine_moving_the_offsets_is_reported_not_verified(cli, sim, tmp_path,
                                                                    monkeypatch):
    """The issue's reproduction across machines (another state directory: another machine's
    lock): run 1 --shift-by -100; while it applies on slow broker-b, another machine sets
    broker-a's queues to the old offset - 5. Before: every queue 'verified' (NOW 95 past the
    target, TARGET and NOW disagreeing), '800 message(s) rewound' counting the other machine's
    queues, exit 0. Now: those queues are
    ``moved by another writer (now N)``, exit 8, and the summary counts the queues whose
    change still stands."""
    before = live(sim)
    a_before = {v for mq, v in before.items() if mq.broker_name == "broker-a"}
    assert len(a_before) == 1  # the demo's broker-a queues start at one offset
    proc, _ = slow_first_run(sim, tmp_path, "--shift-by", "-100")
    # the other machine planned before run 1 wrote (--shift-by -5 from the old offsets) and
    # writes after it: between run 1's target and its previous offset, as consumers would be
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other-machine"))
    at = a_before.pop() - 5
    other = {mq: at for mq in before}
    r = cli(["-n", sim.namesrv_addr, "--timeout", "5", *reset_args(
        tmp_path / "other.json", "--to-offset", str(at)), "--queues", "broker-a:0-3",
        "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    assert len(writes(sim, "broker-b")) < 4  # run 1 was still applying: it had not verified
    code, out, err = cli_process.finish(proc)
    assert code == 8, err
    d = json.loads(out)
    by = {(x["broker"], x["queue_id"]): x for x in d["results"]}
    now = live(sim)
    for (b, q), x in by.items():
        mq = MessageQueue(T, b, q)
        assert x["now"] == now[mq]
        if b == "broker-a":  # reached run 1's target, then the other machine moved it
            assert now[mq] == other[mq] != x["target"]
            assert x["status"] == "moved", x
            assert x["detail"].startswith(f"moved by another writer (now {other[mq]})"), x
        else:
            assert x["status"] == "verified" and now[mq] == x["target"], x
    summary = d["done"]
    assert summary.startswith("4 of 8 queue(s) were reset: 400 message(s) rewound")
    assert "4 moved by another writer afterwards" in summary
    assert "4 of 8 queue(s) were moved by another writer after this run reset them" in err
    assert "re-run" not in err.split("hint:", 1)[1].split("broker-a:0,1,2,3:")[0]


def test_the_plan_says_when_the_offsets_were_read(cli, sim):
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", G, "-t", T, "--shift-by", "-1",
             "-o", "json"])
    assert r.exit_code == 0, r.stderr
    a, b = r.json["offsets_read_ts"]
    assert r.json["offsets_read"] and a <= b <= r.json["created_ts"]
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", G, "-t", T, "--shift-by", "-1"])
    assert "committed offsets read at 20" in r.stdout


def test_a_release_of_the_group_is_refused_while_another_change_runs(cli, sim, tmp_path):
    """``locks release --execute`` takes the group's lock too (held here by a run of
    ``offsets reset --execute`` of the same group, still applying)."""
    proc, _ = slow_first_run(sim, tmp_path, "--shift-by", "-100")
    r = cli(["-n", sim.namesrv_addr, "locks", "release", "-g", G, "--queue", "broker-a:0",
             "-t", T, "--execute", "--no-state"])
    assert r.exit_code == 6, (r.exit_code, r.stderr)
    assert f"another mqctl run is changing group {G} from this machine: pid {proc.pid}" \
           in r.stderr
    assert not [x for x in sim.request_log if x.code == RequestCode.UNLOCK_BATCH_MQ]
    code, _, err = cli_process.finish(proc)
    assert code == 0, err


def test_the_lock_is_per_group_and_name_server(tmp_path, monkeypatch):
    """Another group, or the same group name on other name servers, is another lock."""
    from mqctl.errors import RefusedError
    from mqctl.interrupt import change_lock, change_lock_path

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    ns = ["127.0.0.1:9876"]
    with change_lock(ns, "G", "first") as stale:
        assert stale is None
        with change_lock(ns, "H", "other group"), \
                change_lock(["10.0.0.1:9876"], "G", "other cluster"):
            pass
        with pytest.raises(RefusedError) as e:
            with change_lock(ns, "G", "second"):
                pass
        assert f"pid {os.getpid()}" in e.value.message and "(first)" in e.value.message
        assert e.value.exit_code == 6
    assert not change_lock_path(ns, "G").exists()  # released: no record left
    assert change_lock_path(["b:1", "a:1"], "G") == change_lock_path(["a:1", "b:1"], "G")
    assert change_lock_path(ns, "../G").parent == change_lock_path(ns, "G").parent


def test_a_lock_held_by_another_process_names_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    from mqctl.errors import RefusedError
    from mqctl.interrupt import change_lock

    code = ("import sys, time\nfrom mqctl.interrupt import change_lock\n"
            "with change_lock(['ns:1'], 'G', 'holder'):\n print('held', flush=True)\n"
            " time.sleep(30)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        with pytest.raises(RefusedError) as e:
            with change_lock(["ns:1"], "G", "me"):
                pass
        assert time.monotonic() - t0 < 5  # refused at once, never waits
        assert f"pid {holder.pid}, started " in e.value.message and "(holder)" in e.value.message
    finally:
        holder.kill()
        holder.communicate()
    with change_lock(["ns:1"], "G", "me") as stale:  # killed: taken over
        assert stale is not None and stale.pid == holder.pid and stale.alive() is False


# ------------------------------------------------------------------ the verify rule, pure

@pytest.mark.parametrize("now,online,path,status", [
    (900, False, "SERVER_SIDE", "verified"),     # at the target when verify ends
    (950, False, "SERVER_SIDE", "moved"),        # between target and previous: not consumers
    (850, False, "SERVER_SIDE", "moved"),        # below the target
    (1100, False, "LEGACY_UPDATE", "moved"),     # past the previous offset
    (950, False, "LEGACY_UPDATE", "moved"),
    (950, True, "SERVER_SIDE", "verified"),      # the group's own consumers moved on from it
    (850, True, "SERVER_SIDE", "moved"),         # 5.2+ consumers never move back
])
def test_verify_never_calls_a_moved_queue_verified(now, online, path, status):
    """``verified`` only at the target, or moved on from it by the group's
    own online consumers; a queue the broker accepted and another writer moved is ``moved by
    another writer (now N)``."""
    import asyncio
    from types import SimpleNamespace

    from mqctl.reset import (
        BrokerPlan,
        ConsumerState,
        Path_,
        Plan,
        QueuePlan,
        QueueResult,
        Status,
        Target,
        verify,
    )
    from mqctl.versions import V5_2_0

    q = QueuePlan(MessageQueue(T, "broker-a", 0), 0, 2000, 1005, 900)

    class Admin:
        concurrency = 1

        async def consume_stats(self, group, addr, topic):
            return SimpleNamespace(offsets={q.mq: SimpleNamespace(consumer_offset=now)})

    st = ConsumerState(online, ["c@1"] if online else [], False, False, "CONSUME_PASSIVELY",
                       "CLUSTERING", min_version=V5_2_0 if online else None)
    plan = Plan(G, T, Target("offset", 900), 0, "ns", [q],
                {"broker-a": BrokerPlan("broker-a", "a:1", getattr(Path_, path), "test")}, st)
    admin: Any = Admin()
    res = asyncio.run(verify(admin, plan, [QueueResult(q, Status.APPLIED, "written")],
                             owners=None))
    assert res[0].status.value == status, res[0].detail
    assert res[0].now == now
    if status == "moved":
        assert res[0].detail.startswith(f"moved by another writer (now {now})")

"""``mqctl locks release --execute``: SIGINT/SIGTERM (and SIGHUP) while the releases are sent
never leave a silent half-change (the mechanism of
``offsets reset --execute``).

A real ``mqctl`` process (a real signal, a real exit code) against the simulated cluster: an
orderly group whose consumer Y crashed, so the brokers still hold Y's locks (a1, a3 on broker-a,
b1, b3 on broker-b: AVG_BY_CIRCLE over two clients), and broker-b answers 1.5 s late (scenario
``faults:`` ``action: latency``). Ground truth is the brokers' lock table
(``SimBroker.lock_holder``): what mqctl says was released is released, what it says was not
sent is still held by Y. 127.0.0.1 only; every wait is bounded.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import time

import cli_process
import pytest

from mqctl.models import MessageQueue
from mqctl.remoting.codes import RequestCode

G, T = "GID_ORDER_RI", "TopicOrderRI"
X, Y = "10.1.0.1@101#x", "10.1.0.2@102#y"
CRASH_S = 27
LATENCY_MS = 1500
# Y's queues under AVG_BY_CIRCLE (queues sorted a0..a3, b0..b3; clients X, Y)
Y_QS = [MessageQueue(T, b, i) for b in ("broker-a", "broker-b") for i in (1, 3)]
SPECS = [mq.short for mq in Y_QS]


def scenario(start_ms: int) -> dict:
    return {"name": "release-interrupt", "running_info_timeout": 0.3,
            "clock": {"mode": "manual", "start": start_ms},
            "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
            "topics": [{"name": T, "queues": 4, "rate": 1, "history": "10m"}],
            "groups": [{"name": G, "orderly": True, "topics": [T], "strategy": "AVG_BY_CIRCLE",
                        "consumers": [{"id": X}, {"id": Y, "crash_at": f"{CRASH_S}s"}]}],
            "faults": [{"action": "latency", "broker": "broker-b", "at": f"{CRASH_S}s",
                        "latency_ms": LATENCY_MS}]}


@pytest.fixture
def crashed(cli, sim_factory, tmp_path):
    """The cluster after Y crashed, its locks still on the brokers, broker-b slow; a state file
    that saw Y holding them (so mqctl finds the holder by itself). The simulated clock is
    aligned with the wall clock the mqctl subprocess reads."""
    sim = sim_factory(scenario(int(time.time() * 1000) - 30_000))
    sim.advance(25)
    r = cli(["--timeout", "3", "locks", "show", "-n", sim.namesrv_addr, "-g", G,
             "--state-dir", str(tmp_path / "state"), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert {q["queue"] for q in r.json["queues"] if q["owner"] == Y} == set(SPECS)
    sim.advance(5)  # Y crashes at 27 s; broker-b answers 1.5 s late from then on
    assert all(holder(sim, mq) == Y for mq in Y_QS)
    sim.clear_request_log()
    return sim


def holder(sim, mq: MessageQueue) -> str | None:
    e = sim.call(lambda c: c.brokers[mq.broker_name].lock_holder(G, mq))
    return None if e is None else e.client_id


def unlocks(sim, broker: str | None = None) -> list:
    addr = sim.cluster.broker_addr(broker) if broker else None
    return [r for r in sim.request_log if r.code == RequestCode.UNLOCK_BATCH_MQ
            and (addr is None or r.addr == addr)]


def spawn(sim, tmp_path, *extra: str) -> subprocess.Popen:
    args = ["locks", "release", "-g", G, "--state-dir", str(tmp_path / "state"), "--execute"]
    for s in SPECS:
        args += ["--queue", s]
    return cli_process.spawn(sim, [*args, *extra], tmp_path, timeout="5")


def wait_for(sim, proc, cond, what: str, limit: float = 40.0) -> None:
    cli_process.wait_for(proc, cond, what, limit)


finish = cli_process.finish


def wait_for_first_b(sim, proc) -> None:
    """broker-a (no latency) took both of its releases; broker-b's first is in flight."""
    wait_for(sim, proc, lambda: len(unlocks(sim, "broker-a")) >= 2
             and len(unlocks(sim, "broker-b")) >= 1, "the releases")


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_interrupt_during_release_says_what_was_released(cli, crashed, tmp_path, sig):
    sim = crashed
    proc = spawn(sim, tmp_path, "-o", "json")
    wait_for_first_b(sim, proc)
    t0 = time.monotonic()
    proc.send_signal(getattr(signal, sig))
    code, out, err = finish(proc)
    took_s = time.monotonic() - t0
    assert code == 130, err
    assert took_s < 9.0  # the request in flight (1.5 s) is waited for, at most 5 s
    d = json.loads(out)
    st = {x["queue"]: x["status"] for x in d["results"]}
    # broker-a answered at once; broker-b's first answered within the wait, its second was
    # never sent
    assert st == {"broker-a:1": "released", "broker-a:3": "released",
                  "broker-b:1": "released", "broker-b:3": "not-sent"}, st
    assert len(unlocks(sim, "broker-b")) == 1
    # the brokers agree: released -> Y's entry is gone, not sent -> Y still holds it
    for x in d["results"]:
        mq = MessageQueue(T, x["broker"], x["queue_id"])
        assert holder(sim, mq) == (None if x["status"] == "released" else Y), x
    intr = d["interrupted"]
    assert intr["signal"] == sig and intr["during"] == "apply"
    assert f"interrupted by {sig} during apply: 3 released, 1 not sent, 0 unknown" in err
    assert intr["finish"] in err and "cannot be undone" in err
    assert d["executed"] is True
    # kept in a file too: the terminal may be gone (SIGHUP: an SSH session that dropped)
    with open(intr["result_file"]) as fh:
        kept = fh.read()
    assert f"interrupted by {sig} during apply: 3 released, 1 not sent" in kept
    assert intr["finish"] in kept
    # the printed command finishes the release: only the queue not sent
    sim.call(lambda c: c.faults.clear())
    sim.clear_request_log()
    cmd = shlex.split(intr["finish"])
    assert cmd[:3] == ["mqctl", "-n", sim.namesrv_addr]
    r = cli([*cmd[1:], "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert [(x["queue"], x["status"]) for x in r.json["results"]] == [("broker-b:3", "released")]
    assert [json.loads(u.body)["mqSet"] for u in unlocks(sim)] == \
        [[MessageQueue(T, "broker-b", 3).to_dict()]]
    assert all(holder(sim, mq) is None for mq in Y_QS)


def test_second_interrupt_stops_waiting_and_says_unknown(crashed, tmp_path):
    sim = crashed
    proc = spawn(sim, tmp_path)  # plain text output (not a terminal)
    wait_for_first_b(sim, proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 130, err
    assert "interrupted by SIGINT during apply: 2 released, 1 not sent, 1 unknown" in err
    # the plan was printed before the apply started, the per-queue result after it
    assert out.index("# release plan") < out.index("releasing 4 lock(s) now") \
        < out.index("# result")
    rows = {x[0]: x for x in (ln.split() for ln in out.split("# result", 1)[1].splitlines())
            if x and x[0].startswith("broker-")}
    assert {q: r[3] for q, r in rows.items()} == {
        "broker-a:1": "released", "broker-a:3": "released", "broker-b:1": "unknown",
        "broker-b:3": "not-sent"}, rows
    assert "finish the release: mqctl" in out and "cannot be undone" in out
    time.sleep(LATENCY_MS / 1000 + 0.3)  # whatever broker-b did with the request in flight
    assert holder(sim, MessageQueue(T, "broker-b", 3)) == Y  # the one not sent still holds
    assert all(holder(sim, MessageQueue(T, "broker-a", i)) is None for i in (1, 3))


def test_interrupt_while_planning_changes_nothing(crashed, tmp_path):
    sim = crashed
    proc = spawn(sim, tmp_path, "-o", "json")
    addr_b = sim.cluster.broker_addr("broker-b")
    wait_for(sim, proc, lambda: any(r.addr == addr_b for r in sim.request_log),
             "planning to reach broker-b")
    proc.send_signal(signal.SIGTERM)
    code, out, err = finish(proc)
    assert code == 130, err
    assert "interrupted by SIGTERM before any change: nothing was changed" in err
    assert out == ""  # -o json: no plan, no result
    time.sleep(LATENCY_MS / 1000 + 0.3)
    assert unlocks(sim) == []
    assert all(holder(sim, mq) == Y for mq in Y_QS)


def test_interrupt_during_the_recheck_says_every_release_was_sent(crashed, tmp_path):
    sim = crashed
    proc = spawn(sim, tmp_path, "-o", "json")

    def rechecking() -> bool:  # a request after the fourth release: the re-check has begun
        log = list(sim.request_log)
        idx = [i for i, r in enumerate(log) if r.code == RequestCode.UNLOCK_BATCH_MQ]
        return len(idx) == 4 and len(log) > idx[-1] + 1

    wait_for(sim, proc, rechecking, "the re-check")
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 130, err
    assert "interrupted by SIGINT during re-check: every request was sent, 4 released but " \
           "not re-checked" in err
    d = json.loads(out)
    assert {x["status"] for x in d["results"]} == {"released"}
    assert d["interrupted"]["finish"] is None and d["after"] is None
    assert all(holder(sim, mq) is None for mq in Y_QS)


def test_a_failed_release_is_a_partial_failure_naming_the_rest(cli, crashed, tmp_path):
    from mqctl.remoting.codes import ResponseCode

    sim = crashed
    sim.call(lambda c: c.faults.clear())
    sim.call(lambda c: c.faults.error("broker-b", RequestCode.UNLOCK_BATCH_MQ,
                                      ResponseCode.SYSTEM_ERROR, "disk full", times=1))
    args = ["--timeout", "5", "-n", sim.namesrv_addr, "locks", "release", "-g", G,
            "--state-dir", str(tmp_path / "state"), "--execute", "-o", "json"]
    for s in SPECS:
        args += ["--queue", s]
    r = cli(args)
    assert r.exit_code == 8, r.stderr
    st = {x["queue"]: x["status"] for x in r.json["results"]}
    assert st == {"broker-a:1": "released", "broker-a:3": "released",
                  "broker-b:1": "failed", "broker-b:3": "not-sent"}, st
    assert [holder(sim, mq) for mq in Y_QS] == [None, None, Y, Y]
    assert "2 of 4 release(s) did not go through: broker-b:1 failed" in r.stderr
    assert "--queue broker-b:1 --queue broker-b:3 --client" in r.stderr


def test_a_second_release_of_the_group_is_refused_while_one_runs(cli, crashed, tmp_path):
    """one change of a group at a time from this machine; the second release
    is refused (exit 6) naming the first one's pid, and sends nothing."""
    sim = crashed
    proc = spawn(sim, tmp_path, "-o", "json")
    wait_for_first_b(sim, proc)
    sent = len(unlocks(sim))
    r = cli(["-n", sim.namesrv_addr, "locks", "release", "-g", G, "--queue", "broker-b:3",
             "--client", Y, "--execute", "--no-state"])
    assert r.exit_code == 6, (r.exit_code, r.stderr)
    assert f"another mqctl run is changing group {G} from this machine: pid {proc.pid}" \
           in r.stderr
    assert len(unlocks(sim)) == sent
    code, _, err = finish(proc)
    assert code == 0, err

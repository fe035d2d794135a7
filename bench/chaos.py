"""Chaos run: mqctl commands against the simulated cluster while faults fire at random.

Drives `snapshot`, `group progress`, `locks show`, `allocate --against-live` and
`offsets reset --execute` (as separate processes, each with a wall-clock limit) while a fault
thread, seeded, takes brokers down and back, drops connections, injects latency spikes and
error codes, and crashes consumers mid-reset. Afterwards it checks the invariants:

* no command hung past its limit;
* every failure was reported with the partial-failure exit code (8), or -- for resets -- was
  refused before any change (6);
* each reset either took effect (the broker holds the target) or is listed as not taken;
* rollback files restore the exact prior offsets;
* a reset interrupted (SIGINT or SIGTERM) while it applies leaves no silent partial change: it
  exits 130 and every queue it says ``applied`` is at its target, every queue it says
  ``not-sent`` is unchanged, its rollback file holds the offsets from before it, and it prints
  the commands that finish and undo it; interrupted before the apply, nothing changed;
* snapshot files are whole (every line parses; no temporary file left);
* nothing read is a failure, not a partial result: with every broker refusing (NO_PERMISSION,
  a wrong ACL secret) or every broker down, group progress, consumers, offsets show, locks
  show, snapshot --all-groups and allocate --against-live exit 5 (3 when all are down), never
  8; stdout states no "total lag 0", "offline" or "no online consumer"; stderr has the code and
  a ``hint:``; no capture file is written and nothing state-changing is sent. With one broker
  refusing, the totals exit 8 and name it (``not included: <broker>``);
* a ``locks release --execute`` interrupted while it sends (its own cluster: a crashed orderly
  consumer's locks, a slow broker) exits 130; every queue it says ``released`` is free on the
  broker, every queue it says ``not-sent`` is still held by the crashed consumer, and it prints
  the command that finishes it.
* two ``offsets reset --execute`` of one group at once, the first still
  applying on a slow broker: from this machine the second is refused (exit 6, naming the first
  one's pid), sends nothing and writes no rollback file, and the first completes alone; from
  another machine (its own state directory) the second moves some queues before the first
  verifies: the first calls a queue ``verified`` only if it holds the first's target, every
  other one ``moved by another writer (now N)`` with N what the broker holds, exits 8, and
  counts only its verified queues as rewound/skipped;
* SIGHUP is an interrupt too: the interrupted reset and release cases send
  SIGINT, SIGTERM or SIGHUP; after SIGHUP the result is also in ``<rollback>.result.txt`` and,
  half the time, the terminal is gone first (the pipes closed: every write fails) and the
  invariants are checked against that file alone;
* a bad input file among the lag report's inputs: after the fault loop, the
  run's own captures plus bad files picked at random (a truncated ``.jsonl.gz``, one that is
  not gzip, an empty one, a dangling symlink, a symlink loop) go through ``mqctl lag report``
  (Spark): it exits 0, prints no Java stack trace, traceback or internal error, quarantines
  exactly the planted files as ``unreadable file`` and names each in a note
  (``--no-lag-report`` leaves it out).

    python bench/chaos.py --duration 300 --seed 7        # longer on demand
    (tests/test_chaos.py runs a short form in CI)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqctl.models import MessageQueue
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.sim import SimThread

GROUP, TOPIC = "GID_REPLAY", "TopicPay"
ONLINE_GROUP, ONLINE_TOPIC = "GID_ORDER", "TopicOrder"  # consumers may crash mid-reset
CRASHABLE = ("GID_ORDER", "GID_AUDIT", "GID_DUP")
READ_CODES = (RequestCode.GET_CONSUME_STATS, RequestCode.QUERY_CONSUME_TIME_SPAN,
              RequestCode.GET_TOPIC_STATS_INFO, RequestCode.GET_CONSUMER_RUNNING_INFO,
              RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET)


@dataclass
class Report:
    commands: int = 0
    exit_codes: dict[str, dict[int, int]] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    resets: int = 0
    queues_checked: int = 0
    snapshot_files: int = 0
    interrupts: dict[str, int] = field(default_factory=dict)  # by outcome
    concurrent: dict[str, int] = field(default_factory=dict)  # concurrent resets, by case
    violations: list[str] = field(default_factory=list)
    max_seconds: dict[str, float] = field(default_factory=dict)
    lag_inputs: dict[str, int] = field(default_factory=dict)  # bad lag-report inputs, by kind

    def to_dict(self) -> dict[str, Any]:
        return {"commands": self.commands, "exit_codes": self.exit_codes,
                "faults": self.faults, "resets": self.resets,
                "queues_checked": self.queues_checked,
                "snapshot_files": self.snapshot_files, "interrupts": self.interrupts,
                "concurrent": self.concurrent, "lag_inputs": self.lag_inputs,
                "violations": self.violations,
                "max_seconds": {k: round(v, 2) for k, v in self.max_seconds.items()}}


class FaultThread(threading.Thread):
    def __init__(self, sim: SimThread, rng: random.Random, report: Report):
        super().__init__(daemon=True)
        self.sim, self.rng, self.report = sim, rng, report
        self.stop = threading.Event()
        self.hold = threading.Lock()  # held by a case that sets its own faults
        self.brokers = sorted(sim.cluster.brokers)

    def count(self, kind: str) -> None:
        self.report.faults[kind] = self.report.faults.get(kind, 0) + 1

    def up_later(self, b: str) -> None:
        with self.hold:
            try:
                self.sim.call(lambda c: c.faults.broker_up(b))
            except Exception:  # the simulated cluster may be stopping
                pass

    def run(self) -> None:
        while not self.stop.wait(self.rng.uniform(0.3, 1.2)):
            with self.hold:
                if not self.fire():
                    return

    def fire(self) -> bool:
        b = self.rng.choice(self.brokers)
        kind = self.rng.choice(["down", "drop", "latency", "error", "crash", "clear"])
        try:
            if kind == "down":
                self.sim.call(lambda c, b=b: c.faults.broker_down(b))
                t = threading.Timer(self.rng.uniform(0.5, 2.5), self.up_later, (b,))
                t.daemon = True
                t.start()
            elif kind == "drop":
                self.sim.call(lambda c, b=b: c.faults.drop_connections(b))
            elif kind == "latency":
                ms = self.rng.uniform(100, 1500)
                self.sim.call(lambda c, b=b, ms=ms: c.faults.latency(b, ms))
            elif kind == "error":
                code = self.rng.choice(READ_CODES)
                resp = self.rng.choice([ResponseCode.SYSTEM_BUSY, ResponseCode.SYSTEM_ERROR])
                n = self.rng.randint(1, 4)
                self.sim.call(lambda c, b=b, code=code, resp=resp, n=n: c.faults.error(
                    b, code, resp, "[REJECTREQUEST]system busy (chaos)", times=n))
            elif kind == "crash":
                alive = self.sim.call(lambda c: [x.client_id for x in c.consumers_list
                                                 if x.state == "running"
                                                 and x.group.name in CRASHABLE])
                if alive:
                    cid = self.rng.choice(alive)
                    self.sim.call(lambda c, cid=cid: c.consumer(cid).crash())
            else:
                self.sim.call(lambda c: c.faults.clear())
            self.count(kind)
        except Exception:  # the simulated cluster may be stopping
            return False
        return True


def run_cmd(ns: str, args: list[str], limit: float, report: Report, name: str,
            allowed: set[int] | None = None) -> subprocess.CompletedProcess[str] | None:
    env = dict(os.environ, NAMESRV_ADDR=ns, PYTHONUNBUFFERED="1")
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-m", "mqctl", "--timeout", "1", *args],
                           capture_output=True, text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        report.violations.append(f"{name} hung past {limit:g}s: {' '.join(args)}")
        return None
    took = time.monotonic() - t0
    report.max_seconds[name] = max(report.max_seconds.get(name, 0.0), took)
    report.commands += 1
    codes = report.exit_codes.setdefault(name, {})
    codes[r.returncode] = codes.get(r.returncode, 0) + 1
    if allowed is None:
        allowed = {0, 8, 6} if name == "reset" else {0, 8}
    # no broker answered at all: not a partial failure but a connection error (exit 3)
    total = r.returncode == 3 and ("cannot connect" in r.stderr or "timed out" in r.stderr
                                   or "closed by peer" in r.stderr)
    # right after brokers restart they know no member until the next heartbeat (30 s)
    no_members = r.returncode == 2 and "has no online consumer" in r.stderr
    if total:
        report.faults["total-outage-seen"] = report.faults.get("total-outage-seen", 0) + 1
    elif no_members:
        report.faults["members-unknown-after-restart"] = report.faults.get(
            "members-unknown-after-restart", 0) + 1
    elif r.returncode not in allowed:
        report.violations.append(f"{name} exited {r.returncode} (allowed {sorted(allowed)}): "
                                 f"{r.stderr.strip()[-300:]}")
    if "Traceback" in r.stderr:
        report.violations.append(f"{name} printed a traceback")
    return r


def offsets(sim: SimThread, group: str = GROUP, topic: str = TOPIC
            ) -> dict[MessageQueue, int | None]:
    qs = sim.call(lambda c: c.subscribe_queues(topic))
    return {mq: sim.call(lambda c, mq=mq: c.committed_offset(group, mq)) for mq in qs}


def rollback_offsets(rb: Path) -> dict[tuple[str, int], int | None]:
    """(broker, queue id) -> saved offset; ``"none"`` (no committed offset) reads as None."""
    return {(q["broker"], q["queue_id"]): None if q["offset"] == "none" else q["offset"]
            for q in json.loads(rb.read_text())["queues"]}


def check_rollback_file(rb: Path, before: dict[MessageQueue, int | None],
                        report: Report) -> None:
    """The rollback file holds the offsets from before the reset, queue by queue."""
    saved = rollback_offsets(rb)
    for mq, v in before.items():
        key = (mq.broker_name, mq.queue_id)
        if key in saved and saved[key] != v:
            report.violations.append(f"rollback file {rb.name} has {saved[key]} for "
                                     f"{mq.short}, the offset was {v}")


def check_online_reset(sim: SimThread, r: subprocess.CompletedProcess[str],
                       report: Report) -> None:
    """An online group: consumers move on after a reset, so 'took' is the verify rule."""
    from mqctl.reset import QueuePlan, took

    report.resets += 1
    if r.returncode == 6:
        return
    try:
        d = json.loads(r.stdout)
    except ValueError:
        report.violations.append(f"online reset printed no JSON (exit {r.returncode})")
        return
    now = offsets(sim, ONLINE_GROUP, ONLINE_TOPIC)
    for res in d.get("results", []):
        mq = MessageQueue(ONLINE_TOPIC, res["broker"], res["queue_id"])
        report.queues_checked += 1
        plan = QueuePlan(mq, 0, 1 << 62, res["previous"], res["target"])
        # a rewind the consumers replayed within the wait: verify read it taken (its lowest
        # read), and the queue is back at or past its old offset
        replayed = (res.get("lowest") is not None and res["previous"] is not None
                    and took(plan, res["lowest"]) and now[mq] is not None
                    and now[mq] >= res["previous"])
        if res["status"] == "verified" and not took(plan, now[mq]) and not replayed:
            report.violations.append(f"{mq.short} verified but holds {now[mq]} "
                                     f"(previous {res['previous']}, target {res['target']})")
        if res["status"] in ("failed", "not-taken") and r.returncode != 8:
            report.violations.append(f"{mq.short} {res['status']} but exit {r.returncode}")


def check_reset(sim: SimThread, r: subprocess.CompletedProcess[str], before: dict, rb: Path,
                report: Report) -> None:
    report.resets += 1
    if r.returncode == 6:
        if offsets(sim) != before:
            report.violations.append("a refused reset changed offsets")
        return
    try:
        d = json.loads(r.stdout)
    except ValueError:
        report.violations.append(f"reset printed no JSON (exit {r.returncode})")
        return
    now = offsets(sim)
    if rb.exists():
        check_rollback_file(rb, before, report)
    elif any(q.get("current") != q.get("target") for q in d.get("queues", [])):
        report.violations.append("reset --execute wrote no rollback file")
    elif now != before:
        # every queue was at its target, so nothing was sent and no rollback file is due
        report.violations.append("a reset with nothing to change changed offsets")
    for res in d.get("results", []):
        mq = MessageQueue(TOPIC, res["broker"], res["queue_id"])
        report.queues_checked += 1
        if res["status"] in ("verified", "already") and now[mq] != res["target"]:
            report.violations.append(f"{mq.short} reported {res['status']} but holds "
                                     f"{now[mq]}, target {res['target']}")
        if res["status"] in ("failed", "not-taken") and r.returncode != 8:
            report.violations.append(f"{mq.short} {res['status']} but exit {r.returncode}")
    listed = {(x["broker"], x["queue_id"]) for x in d.get("results", [])}
    planned = {(x["broker"], x["queue_id"]) for x in d.get("queues", [])}
    if d.get("results") is not None and listed != planned:
        report.violations.append("a planned queue is missing from the results")


WRITE_CODES = (RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, RequestCode.UPDATE_CONSUMER_OFFSET)


def run_interrupted(ns: str, args: list[str], rng: random.Random, sig: signal.Signals,
                    report: Report, name: str, limit: float, *, changed: Callable[[], bool],
                    at_change: bool, keep: Callable[[], None] | None = None,
                    gone: bool = False) -> tuple[int, str, str, Any, bool] | None:
    """mqctl ``args`` in its own process, ``sig`` sent once ``changed()`` (its first change
    reached the slow broker; the answer still on the way) or, without ``at_change``, at a
    random moment; ``keep()`` runs while waiting. ``gone``: its stdout and stderr are closed
    just before the signal (the terminal went away: every later write fails), and nothing is
    read from them (unless it had already ended). (exit code, stdout, stderr, parsed JSON or
    None, whether the terminal was gone), or None with a violation when it hung or printed
    broken JSON."""
    env = dict(os.environ, NAMESRV_ADDR=ns, PYTHONUNBUFFERED="1")
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "mqctl", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    wait_until = t0 + (limit / 2 if at_change else rng.uniform(0.2, 4.0))
    while time.monotonic() < wait_until and proc.poll() is None:
        if at_change and changed():
            time.sleep(rng.uniform(0.0, 0.1))
            break
        if keep is not None:
            keep()
        time.sleep(0.02)
    # a run that already ended wrote its output to the terminal before it went away: it is
    # read as a finished run (the result file is for a run the hang-up found still running)
    gone = gone and proc.poll() is None
    if gone:
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        if gone:
            proc.wait(timeout=limit)
            out, err = "", ""
        else:
            out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        report.violations.append(f"{name} hung past {limit:g}s after {sig.name}")
        return None
    report.max_seconds[name] = max(report.max_seconds.get(name, 0.0), time.monotonic() - t0)
    report.commands += 1
    if "Traceback" in err:
        report.violations.append(f"{name} printed a traceback")
    try:
        return proc.returncode, out, err, json.loads(out) if out.strip() else None, gone
    except ValueError:
        report.violations.append(f"{name} printed broken JSON (exit {proc.returncode})")
        return None


def interrupted_reset(sim: SimThread, rng: random.Random, args: list[str], rb: Path,
                      limit: float, report: Report) -> None:
    """``offsets reset --execute`` in its own process, a slow broker, and SIGINT or SIGTERM
    once its first change reached the slow broker (or at a random moment); then the
    invariants."""
    before = offsets(sim)
    slow = rng.choice(sorted(sim.cluster.brokers))
    ms = rng.uniform(600, 1500)
    sim.call(lambda c: c.faults.latency(slow, ms))
    addr = sim.cluster.broker_addr(slow)

    def writes() -> int:  # state-changing requests that reached the slow broker
        return len([x for x in sim.request_log if x.code in WRITE_CODES and x.addr == addr])

    seen = writes()
    sig = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
    gone = sig == signal.SIGHUP and rng.random() < 0.5  # the terminal went away first
    # while applying (after the first change arrived), every 4th at a random moment
    at_change = sum(v for k, v in report.interrupts.items()
                    if not k.startswith("release")) % 4 != 3

    def keep_slow() -> None:  # the fault thread may clear it: keep it slow until the change
        sim.call(lambda c: c.faults.latency(slow, ms))

    ran = run_interrupted(sim.namesrv_addr, ["--timeout", "2", *args], rng, sig, report,
                          "interrupted-reset", limit, changed=lambda: writes() > seen,
                          at_change=at_change, keep=keep_slow, gone=gone)
    if ran is None:
        return
    code, out, err, d, gone = ran
    now = offsets(sim)
    kept = rb.with_name(f"{rb.stem}.result.txt")
    if gone:  # nothing could be read from the terminal: the file beside the rollback file
        interrupted_without_terminal(code, kept, before, now, rb, report)
        return
    intr = d.get("interrupted") if isinstance(d, dict) else None
    if intr is not None and sig == signal.SIGHUP:
        check_result_file(intr, kept, report)
    if intr is None:
        # finished before the signal, or stopped before any change (planning, or the start-up
        # before it: SIGINT and SIGTERM exit 130 saying so): nothing may have changed
        outcome = f"finished (exit {code})" if d is not None else "before-apply"
        if outcome == "before-apply":
            report.resets += 1  # a reset checked: it must have changed nothing
            # 3: no broker answered while planning (nothing can have been sent either)
            if code not in (130, 3):
                report.violations.append(f"interrupted reset exited {code}: {err[-200:]}")
            elif code == 130 and "interrupted" not in err:
                report.violations.append(f"an interrupted reset exited 130 silently ({sig.name})")
            if now != before:
                report.violations.append(f"a reset stopped before its apply (exit {code}) "
                                         "changed offsets")
        else:
            check_reset(sim, subprocess.CompletedProcess(args, code, out, err), before, rb,
                        report)
        report.interrupts[outcome] = report.interrupts.get(outcome, 0) + 1
        return
    check_interrupted(d, code, err, sig.name, before, now, rb, report)


def check_interrupted(d: dict[str, Any], code: int, err: str, signame: str,
                      before: dict[MessageQueue, int | None],
                      now: dict[MessageQueue, int | None], rb: Path, report: Report) -> None:
    """The invariants of a reset that said it was interrupted while changing."""
    intr = d["interrupted"]
    report.interrupts[intr["during"]] = report.interrupts.get(intr["during"], 0) + 1
    report.resets += 1
    if code != 130:
        report.violations.append(f"an interrupted reset exited {code}, not 130")
    if intr["signal"] != signame:
        report.violations.append(f"interrupted by {signame}, reported {intr['signal']}")
    if not rb.exists():
        report.violations.append("an interrupted reset wrote no rollback file")
    else:
        check_rollback_file(rb, before, report)
    if str(rb) not in intr.get("undo", "") or f"interrupted by {signame}" not in err:
        report.violations.append("an interrupted reset did not print its undo command")
    for res in d.get("results", []):
        mq = MessageQueue(TOPIC, res["broker"], res["queue_id"])
        report.queues_checked += 1
        goal = res["expected"] if res.get("expected") is not None else res["target"]
        if res["status"] in ("applied", "verified", "already") and now[mq] != goal:
            report.violations.append(f"interrupted: {mq.short} said {res['status']} but holds "
                                     f"{now[mq]}, target {goal}")
        if res["status"] == "not-sent" and now[mq] != before[mq]:
            report.violations.append(f"interrupted: {mq.short} said not-sent but moved "
                                     f"{before[mq]} -> {now[mq]}")
        if res["status"] not in ("applied", "verified", "already", "not-sent", "unknown",
                                 "failed", "unverified", "not-taken"):
            report.violations.append(f"interrupted: {mq.short} has status {res['status']}")
    left = [x for x in d.get("results", []) if x["status"] in ("not-sent", "unknown",
                                                                 "failed")]
    if left and not intr.get("finish"):
        report.violations.append("an interrupted reset with queues left printed no finish "
                                 "command")


def result_rows(text: str) -> list[dict[str, Any]]:
    """The result table of a ``.result.txt`` (BROKER QID PREVIOUS TARGET [NOW] STATUS ...)."""
    rows: list[dict[str, Any]] = []
    table = False
    for ln in text.splitlines():
        x = ln.split()
        if x[:1] == ["result"]:  # the result table's title (the plan table comes first)
            table = True
        if not table or len(x) < 5 or not x[1].isdigit() or not x[0].startswith("broker-"):
            continue
        # NOW is a number, or '-' where the queue was not read after the change
        has_now = x[4] == "-" or x[4].lstrip("-").isdigit()
        status = x[5] if has_now and len(x) > 5 else x[4]
        rows.append({"broker": x[0], "queue_id": int(x[1]), "target": int(x[3]),
                     "expected": None, "status": status})
    return rows


def check_result_file(intr: dict[str, Any], kept: Path, report: Report) -> None:
    """After SIGHUP the result is in a file too, and it says the same as the output."""
    if intr.get("result_file") != str(kept) or not kept.exists():
        report.violations.append(f"a reset interrupted by SIGHUP kept no result file ({kept})")
    elif f"interrupted by SIGHUP during {intr['during']}" not in kept.read_text():
        report.violations.append(f"{kept.name} does not say it was interrupted by SIGHUP")


def interrupted_without_terminal(code: int, kept: Path, before: dict[MessageQueue, int | None],
                                 now: dict[MessageQueue, int | None], rb: Path,
                                 report: Report) -> None:
    """SIGHUP after the terminal went away: the exit code and the files say what happened."""
    report.resets += 1
    if not kept.exists():
        # stopped before any change (or no broker answered the plan): nothing written, nothing
        # changed; a run that changed anything keeps its result beside its rollback file
        report.interrupts["hangup-before-apply"] = report.interrupts.get(
            "hangup-before-apply", 0) + 1
        if rb.exists() or now != before:
            report.violations.append(f"a reset whose terminal went away (exit {code}) changed "
                                     "offsets and kept no result file")
        elif code < 0 or code == 1:  # killed, or an internal error (stderr is gone)
            report.violations.append(f"a reset hung up before its apply exited {code}")
        return
    text = kept.read_text()
    m = re.search(r"interrupted by (SIG\w+) during (\w+)", text)
    if m is None:  # it finished (the signal came late); its result is in the file
        report.interrupts["hangup-finished"] = report.interrupts.get("hangup-finished", 0) + 1
        if code not in (0, 8):
            report.violations.append(f"a finished reset without a terminal exited {code}")
        for res in result_rows(text):
            mq = MessageQueue(TOPIC, res["broker"], res["queue_id"])
            if res["status"] in ("verified", "already") and now[mq] != res["target"]:
                report.violations.append(f"{kept.name}: {mq.short} {res['status']} but holds "
                                         f"{now[mq]}")
        return
    undo = re.search(r"^undo it: (.*)$", text, re.M)
    finish = re.search(r"^finish the change: (mqctl .*)$", text, re.M)
    doc = {"interrupted": {"signal": m[1], "during": m[2], "undo": undo[1] if undo else "",
                           "finish": finish[1] if finish else None},
           "results": result_rows(text)}
    report.interrupts["hangup-gone"] = report.interrupts.get("hangup-gone", 0) + 1
    check_interrupted(doc, code, text, "SIGHUP", before, now, rb, report)


# ---------------------------------------------- concurrent resets of one group

def concurrent_resets(sim: SimThread, faults: FaultThread, rng: random.Random, work: Path,
                      i: int, limit: float, report: Report) -> Path:
    """Two ``offsets reset --execute`` of GROUP at once, the first still applying on a slow
    broker-b (the fault thread held off). From this machine the second must be refused; from
    another machine (its own state directory) it moves broker-a's queues and the first must
    report them ``moved``, never ``verified``, and count only what stands. Returns the first
    run's rollback file (the offsets from before both)."""
    other_machine = rng.random() < 0.5
    with faults.hold:
        sim.call(lambda c: c.faults.clear())
        for b in sorted(sim.cluster.brokers):
            sim.call(lambda c, b=b: c.faults.broker_up(b))
        before = offsets(sim)
        ms = rng.uniform(1500, 2500)
        sim.call(lambda c: c.faults.latency("broker-b", ms))
        mark = len(sim.request_log)
        addr = {b: sim.cluster.broker_addr(b) for b in ("broker-a", "broker-b")}

        def writes(b: str) -> list[Any]:
            return [x for x in sim.request_log[mark:] if x.code in WRITE_CODES
                    and x.addr == addr[b]]

        # a target no queue is at (else nothing is sent), a shift or an offset
        cur = {v for v in before.values() if v is not None}
        at_a = rng.choice([x for x in range(100, 20000, 97) if x not in cur])
        target = rng.choice([["--shift-by", str(-rng.randint(50, 300))]
                             if min(cur, default=0) > 300 else ["--to-offset", str(at_a)],
                             ["--to-offset", str(at_a)]])
        rb_a, rb_b = work / f"concurrent-{i}-a.json", work / f"concurrent-{i}-b.json"
        env = dict(os.environ, NAMESRV_ADDR=sim.namesrv_addr, PYTHONUNBUFFERED="1")
        t0 = time.monotonic()
        first = subprocess.Popen([sys.executable, "-m", "mqctl", "--timeout", "5", "offsets",
                                  "reset", "-g", GROUP, "-t", TOPIC, *target, "--execute",
                                  "--yes", "--rollback-file", str(rb_a), "-o", "json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=env)
        while (len(writes("broker-a")) < 4 or not writes("broker-b")) and \
                first.poll() is None and time.monotonic() - t0 < limit:
            time.sleep(0.02)
        applying = first.poll() is None and len(writes("broker-b")) >= 1
        second = None
        if applying and not other_machine:
            second = run_cmd(sim.namesrv_addr, ["offsets", "reset", "-g", GROUP, "-t", TOPIC,
                                                "--shift-by", "-5", "--execute", "--yes",
                                                "--rollback-file", str(rb_b), "-o", "json"],
                             limit, report, "concurrent-reset", allowed={6})
        elif applying:
            # between the first run's target and the old offset, as consumers would be (or
            # past the target when the first run moved forward)
            a0 = MessageQueue(TOPIC, "broker-a", 0)
            at = max(0, (before[a0] or 0) - rng.randint(1, 50)) if target[0] == "--shift-by" \
                else at_a + rng.randint(1, 50)
            other = dict(env, XDG_STATE_HOME=str(work / "other-machine"))
            b_args = ["--timeout", "5", "offsets", "reset", "-g", GROUP, "-t", TOPIC,
                      "--queues", "broker-a:0-3", "--to-offset", str(at), "--execute", "--yes",
                      "--rollback-file", str(rb_b), "--verify-wait", "0", "-o", "json"]
            try:
                second = subprocess.run([sys.executable, "-m", "mqctl", *b_args],
                                        capture_output=True, text=True, timeout=limit,
                                        env=other)
            except subprocess.TimeoutExpired:
                report.violations.append("the other machine's reset hung")
        try:
            out, err = first.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            first.kill()
            first.communicate()
            report.violations.append("a reset beside a concurrent one hung")
            return rb_a
        report.commands += 1
        sim.call(lambda c: c.faults.clear())
    r = subprocess.CompletedProcess(first.args, first.returncode, out, err)
    if not applying:
        report.concurrent["first-finished-early"] = report.concurrent.get(
            "first-finished-early", 0) + 1
        check_reset(sim, r, before, rb_a, report)
        return rb_a
    if "Traceback" in err:
        report.violations.append("a concurrent reset printed a traceback")
    if not other_machine:
        report.concurrent["same-machine"] = report.concurrent.get("same-machine", 0) + 1
        if second is not None:
            if second.returncode != 6 or f"pid {first.pid}" not in second.stderr:
                report.violations.append(f"a second reset of {GROUP} from this machine exited "
                                         f"{second.returncode}, not 6 naming pid {first.pid}: "
                                         f"{second.stderr.strip()[-300:]}")
            if rb_b.exists():
                report.violations.append("a refused concurrent reset wrote a rollback file")
        check_reset(sim, r, before, rb_a, report)
        if r.returncode != 0:
            report.violations.append(f"a reset beside a refused one exited {r.returncode}: "
                                     f"{err.strip()[-300:]}")
        return rb_a
    check_moved(sim, r, before, rb_a, writes("broker-a")[4:], writes("broker-b"), ms, report)
    return rb_a


def check_moved(sim: SimThread, r: subprocess.CompletedProcess[str],
                before: dict[MessageQueue, int | None], rb: Path, other_writes: list[Any],
                own_b_writes: list[Any], latency_ms: float, report: Report) -> None:
    """The first run of a cross-machine race: every ``verified`` queue holds its target, every
    queue not at its target is not ``verified`` (``moved by another writer (now N)`` where it
    reached it), exit 8 when any was moved, and the summary counts the verified ones only."""
    try:
        d = json.loads(r.stdout)
    except ValueError:
        report.violations.append(f"a raced reset printed no JSON (exit {r.returncode})")
        return
    # conclusive only when the other machine wrote before this run's verify read (which comes
    # after its last broker-b answer, one latency after that request arrived)
    last_own = max((x.ts_ms for x in own_b_writes), default=0) + latency_ms
    if not other_writes or max(x.ts_ms for x in other_writes) >= last_own:
        report.concurrent["other-machine-late"] = report.concurrent.get(
            "other-machine-late", 0) + 1
        return
    report.concurrent["other-machine"] = report.concurrent.get("other-machine", 0) + 1
    report.resets += 1
    if rb.exists():
        check_rollback_file(rb, before, report)
    now = offsets(sim)
    verified, moved = [], 0
    for res in d.get("results", []):
        mq = MessageQueue(TOPIC, res["broker"], res["queue_id"])
        report.queues_checked += 1
        goal = res["expected"] if res.get("expected") is not None else res["target"]
        if res["status"] == "verified":
            verified.append(res)
            if now[mq] != goal:
                report.violations.append(f"raced: {mq.short} verified but holds {now[mq]}, "
                                         f"target {goal}")
        elif now[mq] == goal and res["status"] != "already":
            report.violations.append(f"raced: {mq.short} holds its target {goal} but is "
                                     f"{res['status']}")
        if res["status"] == "moved":
            moved += 1
            if not res["detail"].startswith(f"moved by another writer (now {now[mq]})"):
                report.violations.append(f"raced: {mq.short} moved: {res['detail'][:120]}")
    if moved and r.returncode != 8:
        report.violations.append(f"a reset with moved queues exited {r.returncode}, not 8")
    replay = sum(max(0, x["previous"] - x["target"]) for x in verified
                 if x["previous"] is not None)
    want = f"{len(verified)} of {len(d.get('results', []))} queue(s) were reset: {replay} "
    if not str(d.get("done", "")).startswith(want):
        report.violations.append(f"raced: the summary says {d.get('done')!r}, expected it to "
                                 f"start {want!r}")


# ------------------------------------------------------------------ nothing read

# what a 5.3 broker answers a wrong ACL secret: NO_PERMISSION with the message of
# DefaultAuthenticationHandler's signature check (AuthenticationPipeline; the sim's
# SimServer._authenticate does the same; the real corpus holds no ACL recording)
REFUSE_REMARK = "check signature failed."
FALSE_FACTS = ("total lag 0", "offline", "no online consumer")
NOTHING_READ_MODES = ("refuse", "down", "partial")


def nothing_read_commands(snap: Path) -> list[tuple[str, list[str]]]:
    return [("progress", ["group", "progress", "GID_PAY"]),
            ("consumers", ["consumers", "GID_PAY"]),
            ("offsets-show", ["offsets", "show", "-g", "GID_PAY"]),
            ("locks", ["locks", "show", "--group", "GID_ORDER", "--no-state"]),
            ("snapshot", ["-q", "snapshot", "--out", str(snap), "--all-groups"]),
            ("allocate", ["allocate", "-g", "GID_PAY", "-t", "TopicPay", "--against-live"])]


def check_nothing_read(name: str, mode: str, code: int, out: str, err: str,
                       new_files: list[str], mutating: list[str], report: Report) -> None:
    """Every broker refused (``refuse``) or was down (``down``): a failure, never partial."""
    want = 3 if mode == "down" else 5
    if code != want:
        report.violations.append(f"{name} with every broker {mode}: exit {code}, not {want}"
                                 + (" (called partial)" if code == 8 else ""))
    for fact in FALSE_FACTS:
        if fact in out:
            report.violations.append(f"{name} with every broker {mode} printed {fact!r}")
    if mode == "refuse" and "NO_PERMISSION" not in err:
        report.violations.append(f"{name}: every broker refused, stderr has no NO_PERMISSION")
    if "mqctl: error:" not in err or not any(ln.startswith("hint:") for ln in err.splitlines()):
        report.violations.append(f"{name} with every broker {mode}: no error with a hint")
    if new_files:
        report.violations.append(f"{name} with every broker {mode} wrote {new_files}")
    if mutating:
        report.violations.append(f"{name} sent {mutating} while nothing could be read")


def check_partial_total(name: str, broker: str, code: int, out: str, report: Report) -> None:
    """One broker refused: the read is partial (8) and the total names what it leaves out."""
    if code != 8:
        report.violations.append(f"{name} with {broker} refusing: exit {code}, not 8")
    summary = [ln for ln in out.splitlines() if "total lag" in ln]
    if not summary or f"not included: {broker}" not in summary[-1]:
        report.violations.append(f"{name} with {broker} refusing: the total does not name it "
                                 f"({summary[-1] if summary else 'no total'})")


def nothing_read_case(sim: SimThread, faults: FaultThread, mode: str, snap: Path,
                      rng: random.Random, limit: float, report: Report) -> None:
    """Every broker refusing or down (or one refusing: ``partial``), the fault thread held
    off, the read-only commands run against it, then the invariants."""
    from mqctl.remoting.codes import MUTATING_REQUESTS, request_name

    brokers = sorted(sim.cluster.brokers)
    with faults.hold:
        sim.call(lambda c: c.faults.clear())
        for b in brokers:
            sim.call(lambda c, b=b: c.faults.broker_up(b))
        refusing = brokers if mode == "refuse" else [rng.choice(brokers)]
        if mode == "down":
            for b in brokers:
                sim.call(lambda c, b=b: c.faults.broker_down(b))
        else:
            for b in refusing:
                sim.call(lambda c, b=b: c.faults.error(b, None, ResponseCode.NO_PERMISSION,
                                                       REFUSE_REMARK))
        cmds = nothing_read_commands(snap)
        if mode == "partial":
            cmds = [c for c in cmds if c[0] in ("progress", "offsets-show")]
        try:
            for name, args in cmds:
                files = {str(f) for f in snap.rglob("*.jsonl*")}
                seen = len(sim.request_log)
                r = run_cmd(sim.namesrv_addr, args, limit, report, f"{name}-{mode}",
                            allowed={8} if mode == "partial" else {3 if mode == "down" else 5})
                if r is None:
                    continue
                if mode == "partial":
                    check_partial_total(name, refusing[0], r.returncode, r.stdout, report)
                    continue
                new = sorted({str(f) for f in snap.rglob("*.jsonl*")} - files)
                sent = sorted({request_name(x.code) for x in sim.request_log[seen:]
                               if x.code in MUTATING_REQUESTS})
                check_nothing_read(name, mode, r.returncode, r.stdout, r.stderr, new, sent,
                                   report)
        finally:
            sim.call(lambda c: c.faults.clear())
            for b in brokers:
                sim.call(lambda c, b=b: c.faults.broker_up(b))
    report.faults[f"nothing-read-{mode}"] = report.faults.get(f"nothing-read-{mode}", 0) + 1


# ------------------------------------------------------- interrupted locks release

REL_GROUP, REL_TOPIC = "GID_ORDER_CHAOS", "TopicOrderChaos"
REL_X, REL_Y = "10.1.0.1@101#x", "10.1.0.2@102#y"  # Y crashes; its locks stay on the brokers
REL_CRASH_S = 27


def release_scenario(start_ms: int, slow: str, latency_ms: float) -> dict[str, Any]:
    """An orderly group of two clients; Y crashes at 27 s (its locks stay for the broker's
    60 s lease: RebalanceLockManager.REBALANCE_LOCK_MAX_LIVE_TIME) and ``slow`` answers late
    from then on. The manual clock starts 30 s before the wall clock mqctl reads."""
    return {"name": "chaos-release", "running_info_timeout": 0.3,
            "clock": {"mode": "manual", "start": start_ms},
            "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
            "topics": [{"name": REL_TOPIC, "queues": 4, "rate": 1, "history": "10m"}],
            "groups": [{"name": REL_GROUP, "orderly": True, "topics": [REL_TOPIC],
                        "strategy": "AVG_BY_CIRCLE",
                        "consumers": [{"id": REL_X}, {"id": REL_Y,
                                                      "crash_at": f"{REL_CRASH_S}s"}]}],
            "faults": [{"action": "latency", "broker": slow, "at": f"{REL_CRASH_S}s",
                        "latency_ms": latency_ms}]}


def check_interrupted_release(d: dict[str, Any] | None, code: int, err: str, signame: str,
                              holders: dict[str, str | None], report: Report) -> None:
    """The invariants of ``locks release --execute`` interrupted while sending: ``holders``
    is each queue's lock holder on the broker afterwards (None: free)."""
    if code != 130:
        report.violations.append(f"an interrupted release exited {code}, not 130")
    intr = d.get("interrupted") if isinstance(d, dict) else None
    if intr is None:
        report.violations.append(f"an interrupted release printed no interrupted section "
                                 f"(exit {code}): {err[-200:]}")
        return
    report.interrupts[f"release-{intr['during']}"] = report.interrupts.get(
        f"release-{intr['during']}", 0) + 1
    if intr["signal"] != signame or f"interrupted by {signame}" not in err:
        report.violations.append(f"release interrupted by {signame}, reported "
                                 f"{intr['signal']}")
    results = d.get("results", [])
    if {x["queue"] for x in results} != set(holders):
        report.violations.append("an interrupted release does not list every queue")
    for x in results:
        report.queues_checked += 1
        held = holders.get(x["queue"])
        if x["status"] == "released" and held is not None:
            report.violations.append(f"release interrupted: {x['queue']} said released but "
                                     f"{held} still holds it")
        if x["status"] == "not-sent" and held != REL_Y:
            report.violations.append(f"release interrupted: {x['queue']} said not-sent but "
                                     f"its holder is {held}")
    left = [x for x in results if x["status"] in ("not-sent", "unknown", "failed")]
    if left and not intr.get("finish"):
        report.violations.append("an interrupted release with queues left printed no finish "
                                 "command")


def interrupted_release(rng: random.Random, limit: float, report: Report) -> None:
    """``locks release --execute`` of a crashed consumer's locks in its own process and its own
    simulated cluster, SIGINT or SIGTERM once the slow broker got its first release (every 4th
    at a random moment); then the brokers' lock tables against what it said."""
    slow = rng.choice(["broker-a", "broker-b"])
    latency = rng.uniform(800, 1500)
    start = int(time.time() * 1000) - (REL_CRASH_S + 3) * 1000
    with SimThread(release_scenario(start, slow, latency)) as sim:
        sim.advance(REL_CRASH_S + 3)
        qs = sim.call(lambda c: c.subscribe_queues(REL_TOPIC))

        def holder(mq: MessageQueue) -> str | None:
            e = sim.call(lambda c: c.brokers[mq.broker_name].lock_holder(REL_GROUP, mq))
            return None if e is None else e.client_id

        mine = [mq for mq in qs if holder(mq) == REL_Y]
        if not mine:
            report.violations.append("release case: the crashed consumer holds no lock")
            return
        addr = sim.cluster.broker_addr(slow)

        def unlocks() -> int:
            return len([x for x in sim.request_log if x.code == RequestCode.UNLOCK_BATCH_MQ
                        and x.addr == addr])

        sim.clear_request_log()
        args = ["--timeout", "5", "locks", "release", "-g", REL_GROUP, "--client", REL_Y,
                "--no-state", "--execute", "-o", "json"]
        for mq in mine:
            args += ["--queue", mq.short]
        sig = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
        at_change = sum(v for k, v in report.interrupts.items()
                        if k.startswith("release")) % 4 != 3
        ran = run_interrupted(sim.namesrv_addr, args, rng, sig, report, "interrupted-release",
                              limit, changed=lambda: unlocks() > 0, at_change=at_change)
        if ran is None:
            return
        code, _, err, d, _gone = ran
        time.sleep(latency / 1000 + 0.3)  # whatever the slow broker did with one in flight
        holders = {mq.short: holder(mq) for mq in mine}
        if not isinstance(d, dict) or "interrupted" not in d:
            # finished before the signal (exit 0: all released) or stopped while planning
            # (exit 130, nothing released)
            done = code == 0 and all(h is None for h in holders.values())
            untouched = (code == 130 and "nothing was changed" in err
                         and all(h == REL_Y for h in holders.values()))
            if not (done or untouched):
                report.violations.append(f"release (exit {code}) left holders {holders}: "
                                         f"{err[-200:]}")
            key = "release-finished" if code == 0 else "release-before-apply"
            report.interrupts[key] = report.interrupts.get(key, 0) + 1
            return
        check_interrupted_release(d, code, err, sig.name, holders, report)


# bad lag-report inputs: kind -> the cause the report names (mqctl/lagjob/readers.py)
BAD_LAG_INPUTS = {"truncated gzip": "truncated gzip", "not gzip": "not gzip",
                  "empty gzip": "empty gzip file", "dangling symlink": "dangling symlink",
                  "symlink loop": "symlink loop"}


def plant_bad_inputs(src: Path, dest: Path, rng: random.Random, n: int = 2) -> dict[str, str]:
    """Copy the capture files of ``src`` into ``dest`` and add ``n`` bad ones of kinds picked
    at random; returns the bad file names -> the cause the report must name."""
    dest.mkdir(parents=True, exist_ok=True)
    good = sorted(f for f in src.rglob("*") if f.is_file()
                  and f.name.endswith((".jsonl", ".jsonl.gz")))
    for f in good:
        (dest / f.name).write_bytes(f.read_bytes())
    planted: dict[str, str] = {}
    for i, kind in enumerate(rng.sample(sorted(BAD_LAG_INPUTS), n)):
        name = f"mqctl-snapshot-bad-{i}.jsonl.gz"
        path = dest / name
        if kind == "truncated gzip":
            whole = gzip.compress(b"".join(b'{"n":%d}\n' % k for k in range(2000)))
            path.write_bytes(whole[: len(whole) // 2])
        elif kind == "not gzip":
            path.write_bytes(b'{"not": "gzip"}\n')
        elif kind == "empty gzip":
            path.write_bytes(b"")
        elif kind == "dangling symlink":
            os.symlink(dest / "gone" / name, path)
        else:  # a loop of two links: each one is a bad file
            other = dest / f"mqctl-snapshot-bad-{i}b.jsonl.gz"
            os.symlink(other.name, path)
            os.symlink(path.name, other)
            planted[other.name] = BAD_LAG_INPUTS[kind]
        planted[name] = BAD_LAG_INPUTS[kind]
    return planted


def check_lag_report(code: int, out: str, err: str, planted: dict[str, str],
                     report: Report) -> None:
    """The report finishes (exit 0) without a trace; exactly the planted files are quarantined
    as unreadable, each named in a note with its cause."""
    if code != 0:
        report.violations.append(f"lag report with bad inputs exited {code}: {err[-300:]}")
    for mark in ("\tat ", "Traceback", "internal error", "Exception in thread"):
        if mark in err:
            report.violations.append(f"lag report with bad inputs printed {mark.strip()!r}")
    try:
        data = json.loads(out)
    except ValueError:
        report.violations.append("lag report -o json printed no JSON")
        return
    unreadable = data.get("quarantine", {}).get("by_reason", {}).get("unreadable file", 0)
    if unreadable != len(planted) or data.get("inputs", {}).get("unreadable") != len(planted):
        report.violations.append(f"lag report quarantined {unreadable} unreadable file(s), "
                                 f"{len(planted)} were planted")
    notes = "\n".join(data.get("notes", []))
    for name, cause in planted.items():
        if name not in notes or cause not in notes:
            report.violations.append(f"lag report notes do not name {name} ({cause})")


def bad_lag_input_case(snap: Path, work: Path, rng: random.Random, limit: float,
                       report: Report) -> None:
    planted = plant_bad_inputs(snap, work / "lag-in", rng)
    for cause in planted.values():
        report.lag_inputs[cause] = report.lag_inputs.get(cause, 0) + 1
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-m", "mqctl", "-o", "json", "lag", "report",
                            str(work / "lag-in"), "--out", str(work / "lag-out")],
                           capture_output=True, text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        report.violations.append(f"lag report with bad inputs hung past {limit:g}s")
        return
    report.max_seconds["lag-report"] = time.monotonic() - t0
    report.commands += 1
    report.exit_codes.setdefault("lag-report", {})[r.returncode] = 1
    check_lag_report(r.returncode, r.stdout, r.stderr, planted, report)


def run_chaos(duration: float, seed: int, *, limit: float = 45.0,
              min_rounds: int = 0, lag_report: bool = False) -> Report:
    """Run commands against a faulty sim for ``duration`` seconds, and on past it until at least
    ``min_rounds`` commands ran (bounded at three times ``duration``), so a slow or loaded machine
    still covers every kind of case instead of failing a count. ``lag_report``: then run the
    lag report over the captures with bad input files among them (Spark: about 30 s more)."""
    rng = random.Random(seed)
    report = Report()
    work = Path(tempfile.mkdtemp(prefix="mqctl-chaos-"))
    with SimThread("demo", clock="real") as sim:
        ns = sim.namesrv_addr
        original = offsets(sim)
        faults = FaultThread(sim, random.Random(seed + 1), report)
        faults.start()
        first_rb: Path | None = None
        start = time.monotonic()
        deadline, hard = start + duration, start + 3 * duration
        i = 0
        while time.monotonic() < deadline or (i < min_rounds and time.monotonic() < hard):
            i += 1
            pick = i % 5
            if pick == 0:
                run_cmd(ns, ["-q", "snapshot", "--out", str(work / "snap"), "--all-groups"],
                        limit, report, "snapshot")
            elif i % 20 == 6:  # every broker refusing / down, or one refusing, in turn
                mode = NOTHING_READ_MODES[i // 20 % len(NOTHING_READ_MODES)]
                nothing_read_case(sim, faults, mode, work / "snap", rng, limit, report)
            elif i % 20 == 16:  # a locks release interrupted while it sends
                interrupted_release(rng, limit, report)
            elif i % 20 == 11:  # two resets of one group at once (this or another machine)
                rb = concurrent_resets(sim, faults, rng, work, i, limit, report)
                if first_rb is None and rb.exists():  # the offsets from before both
                    first_rb = rb
            elif pick == 1:
                run_cmd(ns, ["group", "progress", rng.choice(["GID_AUDIT", "GID_PAY",
                                                             "GID_ORDER"])],
                        limit, report, "progress")
            elif pick == 2:
                run_cmd(ns, ["locks", "show", "--group", "GID_ORDER", "--no-state"], limit,
                        report, "locks")
            elif pick == 3:
                run_cmd(ns, ["allocate", "-g", "GID_PAY", "-t", "TopicPay", "--against-live"],
                        limit, report, "allocate")
            elif i % 10 == 9:  # interrupted while it applies (SIGINT or SIGTERM)
                target = rng.choice([["--to-earliest"], ["--to-latest"],
                                     ["--shift-by", str(rng.randint(-500, 500))]])
                rb = work / f"interrupted-{i}.json"
                interrupted_reset(sim, rng, ["offsets", "reset", "-g", GROUP, "-t", TOPIC,
                                             *target, "--execute", "--rollback-file", str(rb),
                                             "-o", "json"], rb, limit, report)
                if first_rb is None and rb.exists():  # it may have changed offsets
                    first_rb = rb
            elif i % 3 == 0:  # an online orderly group whose consumers may crash meanwhile
                r = run_cmd(ns, ["offsets", "reset", "-g", ONLINE_GROUP, "-t", ONLINE_TOPIC,
                                 "--shift-by", str(-rng.randint(1, 200)), "--execute",
                                 "--rollback-file", str(work / f"online-{i}.json"), "-o",
                                 "json"], limit, report, "reset")
                if r is not None:
                    check_online_reset(sim, r, report)
            else:
                target = rng.choice([["--to-earliest"], ["--to-latest"],
                                     ["--to-offset", str(rng.randint(0, 20000))],
                                     ["--shift-by", str(rng.randint(-500, 500))]])
                rb = work / f"rollback-{i}.json"
                before = offsets(sim)
                r = run_cmd(ns, ["offsets", "reset", "-g", GROUP, "-t", TOPIC, *target,
                                 "--execute", "--rollback-file", str(rb), "-o", "json"],
                            limit, report, "reset")
                if r is not None:
                    check_reset(sim, r, before, rb, report)
                    if first_rb is None and rb.exists():
                        first_rb = rb
        faults.stop.set()
        faults.join(timeout=5)
        sim.call(lambda c: c.faults.clear())
        for b in sorted(sim.cluster.brokers):
            sim.call(lambda c, b=b: c.faults.broker_up(b))
        time.sleep(0.5)
        # the first rollback file restores the exact offsets from before the first reset
        if first_rb is not None:
            saved = rollback_offsets(first_rb)
            # --force: the resets since have moved the offsets far from what the first one
            # wrote, which a rollback refuses unless forced (a stale or foreign rollback file)
            r = run_cmd(ns, ["offsets", "rollback", str(first_rb), "--execute", "--force", "-o",
                             "json"], limit, report, "reset")
            now = offsets(sim)
            for mq, v in now.items():
                key = (mq.broker_name, mq.queue_id)
                if key in saved and saved[key] is not None and v != saved[key]:
                    report.violations.append(f"rollback left {mq.short} at {v}, expected "
                                             f"{saved[key]}")
                if key in saved and saved[key] != original[mq]:
                    report.violations.append(f"first rollback file disagrees with the "
                                             f"original offset of {mq.short}")
    if lag_report:
        bad_lag_input_case(work / "snap", work, rng, max(limit, 600.0), report)
    for f in (work / "snap").rglob("*"):
        if f.is_file() and f.name.endswith(".tmp"):
            report.violations.append(f"half-written snapshot left: {f.name}")
        if f.name.endswith((".jsonl", ".jsonl.gz")):
            report.snapshot_files += 1
            text = (gzip.decompress(f.read_bytes()).decode() if f.name.endswith(".gz")
                    else f.read_text())
            for n, line in enumerate(text.splitlines(), 1):
                try:
                    json.loads(line)
                except ValueError:
                    report.violations.append(f"{f.name} line {n} is not whole JSON")
    return report


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-lag-report", action="store_true",
                    help="leave out the lag report over bad input files (Spark)")
    args = ap.parse_args()
    t0 = time.monotonic()
    report = run_chaos(args.duration, args.seed, lag_report=not args.no_lag_report)
    print(json.dumps(report.to_dict(), indent=2))
    print(f"chaos run: {time.monotonic() - t0:.0f} s, {report.commands} commands, "
          f"{sum(report.faults.values())} faults, {report.resets} resets, "
          f"{sum(v for k, v in report.interrupts.items() if not k.startswith('release'))} "
          f"interrupted resets, "
          f"{sum(v for k, v in report.interrupts.items() if k.startswith('release'))} "
          f"interrupted releases {report.interrupts}, "
          f"{sum(report.concurrent.values())} concurrent resets {report.concurrent}, "
          f"bad lag-report inputs {report.lag_inputs}, "
          f"{len(report.violations)} violation(s)")
    sys.exit(1 if report.violations else 0)


if __name__ == "__main__":
    main()

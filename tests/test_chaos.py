"""The chaos run's short form (bench/chaos.py has the long one): commands against the
simulated cluster while faults fire at random, then the invariants."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT


@pytest.fixture(scope="module")
def chaos():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import chaos as mod
    finally:
        sys.path.pop(0)
    return mod


def test_chaos_short_run(chaos):
    report = chaos.run_chaos(duration=40, seed=11, min_rounds=30)
    assert report.violations == [], report.violations
    assert report.commands >= 20 and report.resets >= 4
    assert sum(v for k, v in report.faults.items() if k in ("down", "drop", "latency", "error",
                                                           "crash")) >= 15
    assert report.snapshot_files >= 3 and report.queues_checked > 0


@pytest.mark.parametrize("current,expect", [(100, []), (90, ["wrote no rollback file"])])
def test_check_reset_no_rollback_file_only_when_nothing_changes(chaos, monkeypatch, tmp_path,
                                                                current, expect):
    """A reset whose queues all sit at their targets sends nothing and writes no rollback
    file (mqctl/cli/offsets.py); the checker accepts that and nothing else."""
    from mqctl.models import MessageQueue

    mq = MessageQueue(chaos.TOPIC, "broker-a", 0)
    before = {mq: current}
    monkeypatch.setattr(chaos, "offsets", lambda sim: dict(before))
    out = {"queues": [{"broker": "broker-a", "queue_id": 0, "current": current, "target": 100}],
           "results": [{"broker": "broker-a", "queue_id": 0, "status": "already",
                        "target": 100}]}
    r = subprocess.CompletedProcess([], 0, json.dumps(out), "")
    report = chaos.Report()
    chaos.check_reset(None, r, before, tmp_path / "absent.json", report)
    got = [v for v in report.violations if "rollback" in v]
    assert [e for e in expect if not any(e in v for v in got)] == []
    assert len(got) == len(expect)


@pytest.mark.parametrize("lowest,expect", [(0, 0), (50, 1), (None, 1)])
def test_check_online_reset_accepts_a_rewind_replayed_within_the_wait(chaos, monkeypatch,
                                                                      lowest, expect):
    """verify reports a rewind the consumers already replayed as verified ('taken
    (re-consumed to N)'): the checker accepts it only when verify's lowest
    read had taken, and the queue is back at or past its old offset."""
    from mqctl.models import MessageQueue

    mq = MessageQueue(chaos.ONLINE_TOPIC, "broker-a", 0)
    monkeypatch.setattr(chaos, "offsets", lambda sim, group, topic: {mq: 50})
    out = {"results": [{"broker": "broker-a", "queue_id": 0, "status": "verified",
                        "previous": 50, "target": 0, "now": 50, "lowest": lowest}]}
    report = chaos.Report()
    chaos.check_online_reset(None, subprocess.CompletedProcess([], 0, json.dumps(out), ""),
                             report)
    assert len([v for v in report.violations if "verified but holds 50" in v]) == expect


def test_interrupted_reset_case_runs_clean(chaos):
    """The chaos run's interrupt-during-apply case on its own: a real mqctl process, a slow
    broker, SIGINT/SIGTERM after the first change arrived; the invariants hold."""
    import random
    import tempfile
    from pathlib import Path

    from mqctl.sim import SimThread

    report = chaos.Report()
    work = Path(tempfile.mkdtemp(prefix="mqctl-chaos-intr-"))
    with SimThread("demo", clock="real") as sim:
        for i, seed in enumerate((0, 1)):  # seeded: the signal lands while applying
            rb = work / f"rb-{i}.json"
            chaos.interrupted_reset(sim, random.Random(seed), [
                "offsets", "reset", "-g", chaos.GROUP, "-t", chaos.TOPIC, "--to-earliest",
                "--execute", "--rollback-file", str(rb), "-o", "json"], rb, 45.0, report)
    assert report.violations == [], report.violations
    assert report.interrupts.get("apply", 0) >= 1, report.interrupts
    assert report.queues_checked >= 8


def _interrupted_doc(rb, statuses):
    return {"interrupted": {"signal": "SIGINT", "during": "apply", "undo":
                            f"mqctl -n x offsets rollback {rb} --execute",
                            "finish": "mqctl -n x offsets reset ... --execute"},
            "results": [{"broker": "broker-a", "queue_id": q, "status": s, "target": 0,
                         "expected": 0} for q, s in enumerate(statuses)]}


@pytest.mark.parametrize("now_a1, expect", [(100, []), (0, ["said not-sent but moved"])])
def test_check_interrupted_catches_a_silent_change(chaos, tmp_path, now_a1, expect):
    """A queue reported not-sent that moved anyway is a silent partial change: a violation."""
    from mqctl.models import MessageQueue

    a0, a1 = (MessageQueue(chaos.TOPIC, "broker-a", q) for q in (0, 1))
    rb = tmp_path / "rb.json"
    rb.write_text(json.dumps({"queues": [{"broker": "broker-a", "queue_id": 0, "offset": 100},
                                         {"broker": "broker-a", "queue_id": 1,
                                          "offset": 100}]}))
    report = chaos.Report()
    chaos.check_interrupted(_interrupted_doc(rb, ["applied", "not-sent"]), 130,
                            "mqctl: error: interrupted by SIGINT during apply: ...", "SIGINT",
                            {a0: 100, a1: 100}, {a0: 0, a1: now_a1}, rb, report)
    assert [e for e in expect if not any(e in v for v in report.violations)] == []
    assert len(report.violations) == len(expect), report.violations


def test_nothing_read_and_release_cases_run_clean(chaos, tmp_path):
    """The every-broker-refuses / every-broker-down / one-refusing cases and the interrupted
    locks release on their own, against real mqctl processes; the invariants hold."""
    import random

    from mqctl.sim import SimThread

    report = chaos.Report()
    with SimThread("demo", clock="real") as sim:
        faults = chaos.FaultThread(sim, random.Random(1), report)
        for mode in chaos.NOTHING_READ_MODES:
            chaos.nothing_read_case(sim, faults, mode, tmp_path / "snap", random.Random(3),
                                    45.0, report)
    chaos.interrupted_release(random.Random(0), 45.0, report)
    assert report.violations == [], report.violations
    assert report.exit_codes["progress-refuse"] == {5: 1}
    assert report.exit_codes["snapshot-down"] == {3: 1}
    assert report.exit_codes["offsets-show-partial"] == {8: 1}
    assert report.interrupts == {"release-apply": 1}, report.interrupts
    assert not list((tmp_path / "snap").rglob("*.jsonl*"))


@pytest.mark.parametrize("mode,code,out,err,files,sent,expect", [
    ("refuse", 5, "", "mqctl: error: ... NO_PERMISSION (16) ...\nhint: check the secret\n", [],
     [], []),
    ("down", 3, "", "mqctl: error: no broker answered\nhint: no broker could be reached\n", [],
     [], []),
    ("refuse", 8, "3 queue(s); total lag 0\n", "mqctl: error: ... NO_PERMISSION ...\nhint: x\n",
     [], [], ["exit 8, not 5 (called partial)", "printed 'total lag 0'"]),
    ("refuse", 5, "group G is offline\n", "mqctl: error: broker error\n", ["g.jsonl"],
     ["HEART_BEAT"], ["printed 'offline'", "no NO_PERMISSION", "no error with a hint",
                      "wrote ['g.jsonl']", "sent ['HEART_BEAT']"]),
    ("down", 5, "no online consumer\n", "mqctl: error: x\nhint: y\n", [], [],
     ["exit 5, not 3", "printed 'no online consumer'"]),
])
def test_check_nothing_read_catches_each_violation(chaos, mode, code, out, err, files, sent,
                                                   expect):
    report = chaos.Report()
    chaos.check_nothing_read("progress", mode, code, out, err, files, sent, report)
    assert [e for e in expect if not any(e in v for v in report.violations)] == []
    assert len(report.violations) == len(expect), report.violations


@pytest.mark.parametrize("code,out,expect", [
    (8, "4 queue(s); total lag 12000 (not included: broker-b)\n", []),
    (8, "4 queue(s); total lag 12000\n", ["does not name it"]),
    (0, "8 queue(s); total lag 24000 (not included: broker-a)\n", ["exit 0, not 8",
                                                                  "does not name it"]),
])
def test_check_partial_total_catches_an_unnamed_broker(chaos, code, out, expect):
    report = chaos.Report()
    chaos.check_partial_total("offsets-show", "broker-b", code, out, report)
    assert [e for e in expect if not any(e in v for v in report.violations)] == []
    assert len(report.violations) == len(expect), report.violations


def _release_doc(statuses, finish="mqctl -n x locks release ... --execute"):
    return {"interrupted": {"signal": "SIGTERM", "during": "apply", "finish": finish},
            "results": [{"queue": q, "status": s} for q, s in statuses.items()]}


@pytest.mark.parametrize("statuses,holders,code,expect", [
    ({"broker-a:1": "released", "broker-b:1": "not-sent"},
     {"broker-a:1": None, "broker-b:1": "Y"}, 130, []),
    ({"broker-a:1": "released", "broker-b:1": "not-sent"},
     {"broker-a:1": "Y", "broker-b:1": "Y"}, 130, ["said released but Y still holds it"]),
    ({"broker-a:1": "released", "broker-b:1": "not-sent"},
     {"broker-a:1": None, "broker-b:1": None}, 0, ["exited 0, not 130",
                                                   "said not-sent but its holder is None"]),
])
def test_check_interrupted_release_catches_a_silent_change(chaos, monkeypatch, statuses,
                                                           holders, code, expect):
    monkeypatch.setattr(chaos, "REL_Y", "Y")
    report = chaos.Report()
    chaos.check_interrupted_release(_release_doc(statuses), code,
                                    "mqctl: error: interrupted by SIGTERM during apply: ...",
                                    "SIGTERM", holders, report)
    assert [e for e in expect if not any(e in v for v in report.violations)] == []
    assert len(report.violations) == len(expect), report.violations


def test_check_interrupted_release_wants_the_finish_command(chaos):
    report = chaos.Report()
    chaos.check_interrupted_release(_release_doc({"broker-b:1": "not-sent"}, finish=None), 130,
                                    "interrupted by SIGTERM", "SIGTERM",
                                    {"broker-b:1": chaos.REL_Y}, report)
    assert len(report.violations) == 1 and "no finish command" in report.violations[0]


def test_planted_lag_inputs_are_what_the_report_calls_unreadable(chaos, tmp_path):
    """Every kind of bad file the chaos run plants is listed by the lag report's own listing
    as unreadable, with the cause the checker expects (no JVM: the listing is Python)."""
    import random

    from mqctl.lagjob.inputs import InputSpec
    from mqctl.lagjob.readers import list_local

    src = tmp_path / "snap" / "c1"
    src.mkdir(parents=True)
    (src / "mqctl-snapshot-c1-2024-06-01T10-00-00.000Z.jsonl").write_text("{}\n")
    planted = chaos.plant_bad_inputs(tmp_path / "snap", tmp_path / "in", random.Random(0),
                                     n=len(chaos.BAD_LAG_INPUTS))
    listing = list_local([InputSpec(str(tmp_path / "in"))])
    got = {Path(f.path).name: str(f.unreadable) for f in listing.unreadable()}
    assert set(got) == set(planted)
    for name, cause in planted.items():
        assert got[name].startswith(cause), (name, got[name])
    assert (tmp_path / "in" / "mqctl-snapshot-c1-2024-06-01T10-00-00.000Z.jsonl").is_file()


@pytest.mark.parametrize("code,err,doc,expect", [
    (0, "", {"quarantine": {"by_reason": {"unreadable file": 1}}, "inputs": {"unreadable": 1},
             "notes": ["1 file(s) could not be read: bad.jsonl.gz (not gzip)"]}, []),
    (1, "mqctl: internal error\n\tat org.apache.spark.Foo\n",
     {"quarantine": {"by_reason": {}}, "inputs": {}, "notes": []},
     ["exited 1", "printed 'at'", "printed 'internal error'", "quarantined 0",
      "do not name bad.jsonl.gz"]),
])
def test_check_lag_report_catches_each_violation(chaos, code, err, doc, expect):
    report = chaos.Report()
    chaos.check_lag_report(code, json.dumps(doc), err, {"bad.jsonl.gz": "not gzip"}, report)
    assert [e for e in expect if not any(e in v for v in report.violations)] == []
    assert len(report.violations) == len(expect), report.violations

"""Trust under failure: plan and rollback files are checked, not trusted (ragged
rows, duplicate columns, stale plans, absurd targets, deep JSON), --queues ranges are bounded,
and an interrupt (SIGINT/SIGTERM) during `offsets reset/rollback --execute` never leaves a
silent half-change (tested on a real subprocess against the simulated cluster)."""

from __future__ import annotations

import json
import time

import pytest

from mqctl.errors import UsageError
from mqctl.models import MessageQueue
from mqctl.reset import (
    MAX_QUEUE_ID,
    BrokerPlan,
    ConsumerState,
    Path_,
    Plan,
    QueuePlan,
    Target,
    compute_target,
    parse_queue_scope,
    preflight,
    read_plan_file,
    read_rollback,
)
from mqctl.reset.plan import FAR_BEYOND_MAX

MQ = MessageQueue
A0 = MQ("T", "broker-a", 0)
A1 = MQ("T", "broker-a", 1)
HEADER = "group,topic,broker,queue_id,current,target,min,max,target_time\n"


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# ------------------------------------------------------------------ bounded queue ranges

def test_queue_range_is_capped_before_it_is_expanded():
    t0 = time.monotonic()
    with pytest.raises(UsageError) as e:
        parse_queue_scope(["broker-a:0-999999999"])
    assert time.monotonic() - t0 < 1.0  # refused before a billion-element set is built
    assert f"queue id 999999999 is beyond {MAX_QUEUE_ID}" in e.value.message
    assert "at most" in (e.value.hint or "")
    with pytest.raises(UsageError):
        parse_queue_scope([f"broker-a:{MAX_QUEUE_ID + 1}"])
    # the largest allowed range still works
    assert len(parse_queue_scope([f"broker-a:0-{MAX_QUEUE_ID}"]) or ()) == MAX_QUEUE_ID + 1


# ------------------------------------------------------------------------------ files

def test_csv_row_cut_mid_number_is_refused(tmp_path):
    p = write(tmp_path, "cut.csv", HEADER
              + "GID_REPLAY,TopicPay,broker-a,0,35500,35400,0,40000,\n"
              + "GID_REPLAY,TopicPay,broker-a,1,35500,354\n")
    with pytest.raises(UsageError) as e:
        read_plan_file(p, "GID_REPLAY", "TopicPay")
    assert "row 2 has 6 field(s), the header has 9" in e.value.message


def test_csv_row_with_extra_fields_is_refused(tmp_path):
    p = write(tmp_path, "extra.csv", HEADER
              + "GID_REPLAY,TopicPay,broker-a,0,35500,35400,0,40000,,99\n")
    with pytest.raises(UsageError) as e:
        read_plan_file(p, "GID_REPLAY", "TopicPay")
    assert "row 1 has 10 field(s), the header has 9" in e.value.message


def test_csv_duplicate_column_is_refused(tmp_path):
    p = write(tmp_path, "dup.csv", "group,topic,broker,queue_id,target,target\n"
              "GID_REPLAY,TopicPay,broker-a,0,100,200\n")
    with pytest.raises(UsageError) as e:
        read_plan_file(p, "GID_REPLAY", "TopicPay")
    assert "column 'target' appears twice" in e.value.message


def test_plan_file_keeps_its_current_column(tmp_path):
    p = write(tmp_path, "ok.csv", HEADER + "G,T,broker-a,0,500,400,0,900,\n"
              "G,T,broker-a,1,none,300,0,900,\n")
    t = read_plan_file(p, "G", "T")
    assert t.plan == {A0: 400, A1: 300}
    assert t.expected == {A0: 500, A1: None}


@pytest.mark.parametrize("depth", [100_000])
def test_deeply_nested_json_plan_is_a_usage_error(tmp_path, depth):
    p = write(tmp_path, "deep.json", "[" * depth)
    with pytest.raises(UsageError) as e:
        read_plan_file(p, "G", "T")
    assert "nested too deeply" in e.value.message
    q = write(tmp_path, "deep-rb.json", "{\"a\":" * depth)
    with pytest.raises(UsageError) as e:
        read_rollback(q)
    assert "nested too deeply" in e.value.message


def test_plan_target_beyond_a_long_is_a_usage_error(tmp_path):
    p = write(tmp_path, "big.csv", HEADER + "G,T,broker-a,0,500,9223372036854775808,0,900,\n")
    with pytest.raises(UsageError) as e:
        read_plan_file(p, "G", "T")
    assert "beyond 9223372036854775807" in e.value.message


# ------------------------------------------------------------------------------ targets

def qp(current=500, lo=100, hi=1000, mq=A0):
    return QueuePlan(mq, lo, hi, current, 0)


def plan_of(queues, target, online=False):
    st = ConsumerState(online, [], None, False, None, None)
    bp = {"broker-a": BrokerPlan("broker-a", "127.0.0.1:1", Path_.SERVER_SIDE, "test")}
    return Plan("G", "T", target, 0, "ns", queues, bp, st)


@pytest.mark.parametrize("requested", [9223372036854775807, 1000 + FAR_BEYOND_MAX + 1])
def test_target_far_beyond_the_max_is_refused_not_clamped(requested):
    q = compute_target(qp(), Target("offset", requested), None)
    assert q.far_beyond and q.target == 1000  # shown at the max, never applied
    p = plan_of([q], Target("offset", requested))
    p = preflight(p, force=True, scoped=False)  # --force does not turn it into "skip everything"
    assert any(f"target {requested} is far beyond the max offset 1000" in r
               for r in p.refusals)


def test_target_a_little_beyond_the_max_is_still_clamped():
    q = compute_target(qp(), Target("offset", 1000 + FAR_BEYOND_MAX), None)
    assert q.clamped and not q.far_beyond and q.target == 1000
    p = plan_of([q], Target("offset", 1000 + FAR_BEYOND_MAX))
    p = preflight(p, force=False, scoped=False)
    assert p.refusals == []


def test_shift_far_beyond_the_max_is_refused():
    q = compute_target(qp(), Target("shift", 2 * FAR_BEYOND_MAX), None)
    p = plan_of([q], Target("shift", 2 * FAR_BEYOND_MAX))
    p = preflight(p, force=False, scoped=False)
    assert any("far beyond the max offset" in r for r in p.refusals)


def test_to_offset_beyond_a_long_is_a_usage_error():
    from mqctl.reset import target_from_options
    with pytest.raises(UsageError) as e:
        target_from_options(to_time=None, by_duration=None, to_earliest=False, to_latest=False,
                            to_offset=2 ** 63, shift_by=None, from_file=None, group="G",
                            topic="T")
    assert "beyond 9223372036854775807" in e.value.message


# ------------------------------------------------------------------------------ drift

def per_queue(kind, targets, expected):
    return Target(kind, text="f", plan=targets, expected=expected)


def test_stale_plan_warns_with_the_drift_and_refuses_when_larger_than_the_change():
    t = per_queue("plan", {A0: 450, A1: 300}, {A0: 500, A1: 500})
    # A0: the plan moves 500 -> 450 (change -50) but the group is at 700 now (drift +200)
    # A1: at 510 now (drift +10), the plan's change is -200: stale, but within the change
    qs = [compute_target(qp(700), t, None), compute_target(qp(510, mq=A1), t, None)]
    p = plan_of(qs, t)
    p = preflight(p, force=False, scoped=False)
    stale = [w for w in p.warnings if "stale" in w]
    assert len(stale) == 1
    assert "broker-a:0 500 -> now 700 (drift +200, plan change -50)" in stale[0]
    assert "broker-a:1 500 -> now 510 (drift +10, plan change -200)" in stale[0]
    (ref,) = [r for r in p.refusals if "stale" in r]
    assert "1 queue(s) moved more than the plan's own change" in ref and "broker-a:0" in ref
    assert "broker-a:1" not in ref
    p = plan_of(qs, t)
    p = preflight(p, force=True, scoped=False)
    assert not any("stale" in r for r in p.refusals)
    assert any("stale" in w for w in p.warnings)


def test_plan_without_drift_says_nothing():
    t = per_queue("plan", {A0: 450}, {A0: 500})
    p = plan_of([compute_target(qp(500), t, None)], t)
    p = preflight(p, force=False, scoped=False)
    assert not any("stale" in x for x in p.warnings + p.refusals)


def test_rollback_file_of_another_group_is_refused():
    # the reset set 10 (from 500); a group at 90000 is past the saved offset: by the offsets
    # alone that is this group having replayed the rewind and consumed on, or another group's
    # file: refused either way, saying both, with the drift in the warning
    t = per_queue("rollback", {A0: 500}, {A0: 10})
    p = plan_of([compute_target(qp(90000, hi=100000), t, None)], t)
    p = preflight(p, force=False, scoped=False)
    (ref,) = [r for r in p.refusals if "rollback file" in r]
    assert "broker-a:0 saved 500, now 90000" in ref and "replaying 89500 message(s)" in ref
    assert "another group or cluster, or of an older reset" in ref and "--force" in ref
    assert any("broker-a:0 10 -> now 90000 (drift +89990, plan change +490)" in w
               for w in p.warnings)
    # a group behind what the reset wrote was moved back by something else: not this file
    t = per_queue("rollback", {A0: 500}, {A0: 5000})
    p = plan_of([compute_target(qp(10, hi=100000), t, None)], t)
    p = preflight(p, force=False, scoped=False)
    (ref,) = [r for r in p.refusals if "rollback file" in r]
    assert "broker-a:0 5000 -> now 10 (drift -4990, plan change -4500)" in ref
    assert "is it another group's or an older reset's file?" in ref
    # a file written against another name server says so in the refusal
    t = Target("rollback", text="f", plan={A0: 500}, expected={A0: 10},
               elsewhere=("it was written against name server 10.0.0.9:9876",))
    p = plan_of([compute_target(qp(90000, hi=100000), t, None)], t)
    p = preflight(p, force=False, scoped=False)
    (ref,) = [r for r in p.refusals if "rollback file" in r]
    assert "does not match group G's offsets: it was written against name server" in ref


def test_rollback_file_remembers_what_the_reset_wrote(tmp_path):
    p = tmp_path / "rb.json"
    p.write_text(json.dumps({"schema": "mqctl.rollback/1", "group": "G", "topic": "T",
                             "queues": [{"broker": "broker-a", "queue_id": 0, "offset": 500,
                                         "reset_to": 10},
                                        {"broker": "broker-a", "queue_id": 1, "offset": 7}]}))
    _, _, t, _ = read_rollback(str(p))
    assert t.plan == {A0: 500, A1: 7} and t.expected == {A0: 10}


# ------------------------------------------------------------------------------ live

def live(sim, group="GID_REPLAY", topic="TopicPay"):
    qs = sim.call(lambda c: c.subscribe_queues(topic))
    return {mq: sim.call(lambda c, mq=mq: c.committed_offset(group, mq)) for mq in qs}


def resets_sent(sim):
    from mqctl.remoting.codes import RequestCode
    return [r for r in sim.request_log if r.code in (RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
                                                       RequestCode.UPDATE_CONSUMER_OFFSET)]


def test_stale_plan_file_is_refused_live_then_forced(cli, sim, tmp_path):
    ns = sim.namesrv_addr
    plan = tmp_path / "plan.csv"
    r = cli(["-n", ns, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--shift-by",
             "-5", "--export", str(plan)])
    assert r.exit_code == 0, r.stderr
    # meanwhile someone rewinds broker-a:0 by 3000: the plan's CURRENT is stale there
    a0 = MQ("TopicPay", "broker-a", 0)
    before = live(sim)
    r = cli(["-n", ns, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--shift-by",
             "-3000", "--queues", "broker-a:0", "--execute", "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    moved = live(sim)[a0]
    assert moved != before[a0]
    sim.clear_request_log()
    r = cli(["-n", ns, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--from-file",
             str(plan), "--execute", "-o", "json"])
    assert r.exit_code == 6, r.stderr
    d = r.json
    (stale,) = [w for w in d["warnings"] if "stale plan" in w]
    drift = moved - before[a0]
    assert f"broker-a:0 {before[a0]} -> now {moved} (drift {drift:+d}, plan change -5)" in stale
    assert any("stale plan" in x and "1 queue(s) moved more" in x for x in d["refusals"])
    assert resets_sent(sim) == [] and live(sim)[a0] == moved
    r = cli(["-n", ns, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--from-file",
             str(plan), "--execute", "--force", "--verify-wait", "0", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert live(sim)[a0] == before[a0] - 5


def test_rollback_file_of_another_group_is_refused_live(cli, sim, tmp_path):
    ns = sim.namesrv_addr
    rb = tmp_path / "rb.json"
    r = cli(["-n", ns, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
             "--to-earliest", "--execute", "--rollback-file", str(rb), "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(rb.read_text())
    other = tmp_path / "other.json"
    other.write_text(json.dumps(dict(doc, group="GID_AUDIT")))  # the file edited to another group
    audit = live(sim, "GID_AUDIT")
    sim.clear_request_log()
    r = cli(["-n", ns, "offsets", "rollback", str(other), "--execute", "-o", "json"])
    assert r.exit_code == 6, r.stderr
    assert any("does not match group GID_AUDIT" in x for x in r.json["refusals"])
    assert resets_sent(sim) == [] and live(sim, "GID_AUDIT") == audit


def test_to_offset_long_max_is_refused_live(cli, sim):
    before = live(sim)
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
             "--to-offset", "9223372036854775807", "--execute", "-o", "json"])
    assert r.exit_code == 6, r.stderr
    assert all(q["far_beyond"] for q in r.json["queues"])
    assert "is far beyond the max offset" in r.stderr
    assert resets_sent(sim) == [] and live(sim) == before


# ------------------------------------------------------------- interrupts and concurrency

def _spawn(sim, args, cwd):
    from cli_process import spawn
    return spawn(sim, args, cwd)


def _wait_for_reset(sim, proc, broker, n=1, limit=60.0):
    """Until the n-th state-changing request reached ``broker`` (recorded on arrival, before
    the sim's latency fault delays the answer)."""
    from cli_process import wait_for
    addr = sim.cluster.broker_addr(broker)
    wait_for(proc, lambda: len([r for r in resets_sent(sim) if r.addr == addr]) >= n,
             "the apply", limit)


def _finish(proc, limit=30.0):
    from cli_process import finish
    return finish(proc, limit)


def _check_statuses(sim, d, before):
    """What mqctl says is what the broker holds: applied -> at the target, not sent ->
    unchanged. Returns the statuses by (broker, qid)."""
    now = live(sim)
    st = {}
    for x in d["results"]:
        mq = MQ("TopicPay", x["broker"], x["queue_id"])
        st[x["broker"], x["queue_id"]] = x["status"]
        if x["status"] == "applied":
            assert now[mq] == x["target"], (x, now[mq])
        elif x["status"] == "not-sent":
            assert now[mq] == before[mq], (x, now[mq])
        else:
            assert x["status"] == "unknown", x
    return st


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupt_during_reset_apply_says_what_changed(cli, sim, tmp_path, sig):
    import shlex
    import signal

    before = live(sim)
    sim.call(lambda c: c.faults.latency("broker-b", 1500))  # broker-b answers 1.5 s late
    rb = tmp_path / "rb.json"
    proc = _spawn(sim, ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
                        "--to-earliest", "--execute", "--rollback-file", str(rb), "-o", "json"],
                  tmp_path)
    _wait_for_reset(sim, proc, "broker-b")
    _wait_for_reset(sim, proc, "broker-a", 4)  # broker-a (no latency) sent all four
    t0 = time.monotonic()
    proc.send_signal(getattr(signal, sig))
    code, out, err = _finish(proc)
    took_s = time.monotonic() - t0
    assert code == 130, err
    assert took_s < 9.0  # the request in flight (1.5 s) is waited for, at most 5 s
    d = json.loads(out)
    st = _check_statuses(sim, d, before)
    # broker-a (no latency) finished; broker-b's first request was in flight and answered
    # within the wait; its other three were never sent
    assert {s for (b, _), s in st.items() if b == "broker-a"} == {"applied"}
    assert [st["broker-b", q] for q in range(4)] == ["applied"] + ["not-sent"] * 3
    addr_b = sim.cluster.broker_addr("broker-b")
    assert len([r for r in resets_sent(sim) if r.addr == addr_b]) == 1
    intr = d["interrupted"]
    assert intr["signal"] == sig and intr["during"] == "apply"
    assert f"interrupted by {sig} during apply: 5 applied, 3 not sent, 0 unknown" in err
    assert d["rollback_file"] == str(rb) and rb.exists()
    assert intr["undo"] in err and intr["finish"] in err
    # the printed commands work: finish completes the change, undo restores the original
    sim.call(lambda c: c.faults.clear())
    finish = shlex.split(intr["finish"])
    assert finish[0] == "mqctl"
    r = cli([*finish[1:], "-o", "json", "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    assert {x["status"] for x in r.json["results"]} == {"verified"}
    assert len(r.json["results"]) == 3
    assert all(v == 0 for v in live(sim).values())  # --to-earliest: every queue at min 0
    r = cli([*shlex.split(intr["undo"])[1:], "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    assert live(sim) == before


def test_second_interrupt_stops_waiting_and_says_unknown(sim, tmp_path):
    import signal

    before = live(sim)
    sim.call(lambda c: c.faults.latency("broker-b", 1500))
    proc = _spawn(sim, ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
                        "--to-earliest", "--execute", "--rollback-file",
                        str(tmp_path / "rb.json")], tmp_path)  # the table output
    _wait_for_reset(sim, proc, "broker-b")
    _wait_for_reset(sim, proc, "broker-a", 4)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    code, out, err = _finish(proc)
    assert code == 130, err
    assert "interrupted by SIGINT during apply: 4 applied, 3 not sent, 1 unknown" in err
    result = out.split("# result", 1)[1]  # BROKER QID PREVIOUS TARGET [NOW] STATUS DETAIL
    b_rows = {int(x[1]): x[5] for x in (ln.split() for ln in result.splitlines())
              if len(x) > 5 and x[0] == "broker-b" and x[4] == "-"}  # NOW: not read
    assert b_rows == {0: "unknown", 1: "not-sent", 2: "not-sent", 3: "not-sent"}
    assert "rollback file" in out and "undo it: mqctl" in out and "finish the change:" in out
    time.sleep(1.6)  # whatever broker-b did with the request, the others never moved
    now = live(sim)
    assert all(now[MQ("TopicPay", "broker-b", q)] == before[MQ("TopicPay", "broker-b", q)]
               for q in (1, 2, 3))


def test_interrupt_during_rollback_apply(cli, sim, tmp_path):
    import shlex
    import signal

    before = live(sim)
    rb = tmp_path / "rb.json"
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
             "--to-earliest", "--execute", "--rollback-file", str(rb), "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    mid = live(sim)
    sim.clear_request_log()
    sim.call(lambda c: c.faults.latency("broker-b", 1500))
    proc = _spawn(sim, ["offsets", "rollback", str(rb), "--execute", "-o", "json"], tmp_path)
    _wait_for_reset(sim, proc, "broker-b")
    _wait_for_reset(sim, proc, "broker-a", 4)
    proc.send_signal(signal.SIGTERM)
    code, out, err = _finish(proc)
    assert code == 130, err
    d = json.loads(out)
    st = _check_statuses(sim, d, mid)
    assert [st["broker-b", q] for q in range(4)] == ["applied"] + ["not-sent"] * 3
    intr = d["interrupted"]
    assert intr["finish"] == f"mqctl -n {sim.namesrv_addr} offsets rollback {rb} --execute"
    # the rollback's own rollback file (the offsets it replaced) undoes the partial rollback
    own = d["rollback_file"]
    assert own and own != str(rb) and intr["undo"].endswith(f"rollback {own} --execute")
    sim.call(lambda c: c.faults.clear())
    r = cli([*shlex.split(intr["finish"])[1:], "--verify-wait", "0", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert live(sim) == before


def test_execute_prints_the_plan_first_and_the_result_in_the_past_tense(cli, sim, tmp_path):
    r = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
             "--shift-by", "-100", "--execute", "--rollback-file", str(tmp_path / "rb.json"),
             "--verify-wait", "0"])
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert out.count("# reset plan:") == 1 and out.count("# result") == 1
    before, after = out.split("# result")
    # the plan (and what it will do) came before the apply started ...
    assert "8 queue(s): 800 message(s) will be consumed again, 0 skipped" in before
    assert "applying 8 change(s) now" in before
    # ... the result says what was done
    assert "will be consumed again" not in after
    assert "8 of 8 queue(s) were reset: 800 message(s) rewound (to be consumed again), " \
           "0 skipped" in after
    assert "rollback file:" in after


def test_failed_queues_are_not_counted_as_reset(cli, sim, tmp_path):
    from mqctl.remoting.codes import RequestCode, ResponseCode
    sim.call(lambda c: c.faults.error("broker-b", RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
                                      ResponseCode.SYSTEM_ERROR, "disk full"))
    r2 = cli(["-n", sim.namesrv_addr, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
              "--shift-by", "-100", "--execute", "--rollback-file", str(tmp_path / "rb2.json"),
              "--verify-wait", "0"])
    assert r2.exit_code == 8
    assert "4 of 8 queue(s) were reset: 400 message(s) rewound (to be consumed again), " \
           "0 skipped; 4 were not (see STATUS)" in r2.stdout


def test_sigterm_while_planning_exits_130_and_changes_nothing(sim, tmp_path):
    import signal

    before = live(sim)
    sim.call(lambda c: c.faults.latency("broker-b", 1500))
    rb = tmp_path / "rb.json"
    proc = _spawn(sim, ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
                        "--to-earliest", "--execute", "--rollback-file", str(rb)], tmp_path)
    addr_b = sim.cluster.broker_addr("broker-b")
    deadline = time.monotonic() + 30
    while not any(r.addr == addr_b for r in sim.request_log) and time.monotonic() < deadline:
        time.sleep(0.02)  # planning has reached the slow broker
    proc.send_signal(signal.SIGTERM)
    code, out, err = _finish(proc)
    assert code == 130, err
    assert "interrupted by SIGTERM before any change: nothing was changed" in err
    assert out == ""  # no plan was complete: nothing to show
    assert resets_sent(sim) == [] and not rb.exists() and live(sim) == before


def test_interrupt_during_verify_says_every_request_was_sent(sim, tmp_path):
    """An online group: verify waits (polls) after the apply; an interrupt there stops the
    wait, and the output says every request was sent and none was verified."""
    import signal

    rb = tmp_path / "rb.json"
    proc = _spawn(sim, ["offsets", "reset", "-g", "GID_ORDER", "-t", "TopicOrder",
                        "--shift-by", "-10", "--execute", "--verify-wait", "30",
                        "--rollback-file", str(rb), "-o", "json"], tmp_path)
    _wait_for_reset(sim, proc, "broker-a", 4)
    _wait_for_reset(sim, proc, "broker-b", 4)
    for b in ("broker-a", "broker-b"):  # answered; verify's re-reads will be slow
        sim.call(lambda c, b=b: c.faults.latency(b, 3000))
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    code, out, err = _finish(proc)
    assert code == 130, err
    d = json.loads(out)
    assert d["interrupted"]["during"] == "verify" and d["interrupted"]["finish"] is None
    assert {x["status"] for x in d["results"]} == {"applied"}
    assert "interrupted by SIGINT during verify: every request was sent, 8 applied but not " \
           "verified" in err
    now = live(sim, "GID_ORDER", "TopicOrder")
    for x in d["results"]:  # the pending server-side offsets are what the broker shows
        assert now[MQ("TopicOrder", x["broker"], x["queue_id"])] == x["target"]

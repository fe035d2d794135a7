"""Unread brokers in ``offsets show`` and the reset plan: the brokers whose offsets were not
read are named next to the total (as ``group progress`` does), and a user-given epoch 0 target
renders as 1970-01-01, not as an empty time."""

from __future__ import annotations

from mqctl.models import MessageQueue
from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode, ResponseCode
from mqctl.reset import QueuePlan, Target, target_time

EPOCH0 = "1970-01-01T00:00:00.000Z"


def test_offsets_show_names_the_brokers_not_included_next_to_the_total(cli, sim):
    sim.call(lambda c: c.faults.error("broker-b", RequestCode.GET_CONSUME_STATS,
                                      ResponseCode.NO_PERMISSION, "no permission for GID_AUDIT"))
    r = cli(["-n", sim.namesrv_addr, "offsets", "show", "-g", "GID_AUDIT", "-o", "plain"])
    assert r.exit_code == 8, r.stderr
    summary = [ln for ln in r.stdout.splitlines() if "total lag" in ln]
    assert len(summary) == 1 and summary[0].endswith("(not included: broker-b)"), r.stdout
    # the total is broker-a's queues only: the rows shown
    j = cli(["-n", sim.namesrv_addr, "offsets", "show", "-g", "GID_AUDIT", "-o", "json"])
    rows = j.json["queues"]
    assert rows and {x["broker"] for x in rows} == {"broker-a"}
    assert f"total lag {sum(x['lag'] for x in rows)} " in summary[0]
    assert not {x.code for x in sim.request_log} & set(MUTATING_REQUESTS)


def test_offsets_show_total_has_no_note_when_every_broker_answered(cli, sim):
    r = cli(["-n", sim.namesrv_addr, "offsets", "show", "-g", "GID_AUDIT", "-o", "plain"])
    assert r.exit_code == 0, r.stderr
    summary = [ln for ln in r.stdout.splitlines() if "total lag" in ln]
    assert len(summary) == 1 and "not included" not in summary[0]


def test_epoch_zero_target_renders_as_1970_in_the_plan_header():
    t = Target("time", 0, text="1970-01-01T00:00:00Z")
    assert t.describe() == f"to time {EPOCH0} (1970-01-01T00:00:00Z)"
    assert Target("time", 0).describe() == f"to time {EPOCH0}"
    q = QueuePlan(MessageQueue("T", "broker-a", 0), current=5, target=3, min_offset=2,
                  max_offset=9)
    assert target_time(q, t, None, None) == (None, f">= {EPOCH0}")
    assert target_time(q, t, None, None, nearest=True) == (None, f"~ {EPOCH0}")


def test_epoch_zero_target_in_the_cli_plan_header(cli, sim):
    r = cli(["-n", sim.namesrv_addr, "-o", "plain", "offsets", "reset", "-g", "GID_PAY",
             "-t", "TopicPay", "--to-time", "1970-01-01T00:00:00Z"])
    assert r.exit_code in (0, 8), r.stderr
    header = [ln for ln in r.stdout.splitlines() if "reset plan:" in ln]
    assert header and f"to time {EPOCH0} (1970-01-01T00:00:00Z)" in header[0], r.stdout
    assert "to time  (" not in r.stdout
    assert not {x.code for x in sim.request_log} & set(MUTATING_REQUESTS)


def test_epoch_zero_target_in_the_rerun_hint():
    from mqctl.reset import ConsumerState, Plan, QueueResult, Status
    from mqctl.reset.outcome import rerun_hint

    q = QueuePlan(MessageQueue("T", "broker-a", 0), current=5, target=3, min_offset=2,
                  max_offset=9)
    plan = Plan("G", "T", Target("time", 0, text="1970-01-01T00:00:00Z"), 1, "ns:9876", [q], {},
                ConsumerState(False, [], None, False, None, None))
    hint = rerun_hint(plan, [QueueResult(q, Status.NOT_TAKEN)], "rb.json", scoped=True)
    assert f"--to-time {EPOCH0} --queues broker-a:0" in hint, hint

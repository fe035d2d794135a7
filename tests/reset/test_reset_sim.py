"""`mqctl offsets` against the simulated cluster: every target kind, both broker paths,
online/offline/orderly groups, clamping, refusals, rollback, a broker failing mid-apply, and an
online consumer overwriting a legacy write."""

from __future__ import annotations

import csv
import json

import pytest
from sim_fixtures import LEGACY_SCENARIO

from mqctl.models import MessageQueue
from mqctl.remoting.codes import RequestCode, ResponseCode

MQ = MessageQueue
WRITES = {RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, RequestCode.UPDATE_CONSUMER_OFFSET}


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def offsets(sim, group, topic="TopicPay"):
    qs = sim.call(lambda c: c.subscribe_queues(topic))
    return {mq: sim.call(lambda c, mq=mq: c.committed_offset(group, mq)) for mq in qs}


def writes(sim):
    return [r for r in sim.request_log if r.code in WRITES]


@pytest.mark.parametrize("args", [
    ["--to-time", "-30m"], ["--by-duration", "-1h"], ["--to-earliest"], ["--to-latest"],
    ["--to-offset", "0"], ["--shift-by", "-100"],
])
def test_plan_only_changes_nothing(cli, sim, args):
    before = offsets(sim, "GID_REPLAY")
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", *args,
            "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["execute"] is False and len(d["queues"]) == 8
    assert writes(sim) == [] and offsets(sim, "GID_REPLAY") == before
    for q in d["queues"]:
        mq = MQ("TopicPay", q["broker"], q["queue_id"])
        assert q["current"] == before[mq]
        assert q["min"] <= q["target"] <= q["max"]
        assert q["change"] == q["target"] - q["current"]
    if args[0] == "--to-earliest":
        assert {q["target"] for q in d["queues"]} == {0}
    if args[0] == "--shift-by":
        assert all(q["target"] == q["current"] - 100 for q in d["queues"])
    if args[0] == "--to-time":
        b = sim.cluster.brokers["broker-a"]
        ts = sim.clock.now_ms() - 1_800_000
        assert d["queues"][0]["target"] == b.search("TopicPay", 0, ts)


def test_execute_server_side_then_rollback(cli, sim, tmp_path):
    before = offsets(sim, "GID_REPLAY")
    rb = tmp_path / "rb.json"
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-time",
            "-40m", "--execute", "--rollback-file", str(rb), "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["summary"] == {"verified": 8}
    after = offsets(sim, "GID_REPLAY")
    for q in d["queues"]:
        assert after[MQ("TopicPay", q["broker"], q["queue_id"])] == q["target"]
    saved = json.loads(rb.read_text())
    assert {(q["broker"], q["queue_id"]): q["offset"] for q in saved["queues"]} == {
        (mq.broker_name, mq.queue_id): v for mq, v in before.items()}
    assert oct(rb.stat().st_mode & 0o777) == "0o600"
    # rollback: plan first (nothing changes), then execute restores the exact prior offsets
    r = run(cli, sim, "offsets", "rollback", str(rb), "-o", "json")
    assert r.exit_code == 0 and offsets(sim, "GID_REPLAY") == after
    r = run(cli, sim, "offsets", "rollback", str(rb), "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert offsets(sim, "GID_REPLAY") == before
    assert r.json["rollback_file"] and r.json["rollback_file"] != str(rb)


def test_queue_zero_to_offset_zero_and_clamping(cli, sim):
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-offset",
            "0", "--queues", "broker-a:0", "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [q["queue_id"] for q in r.json["queues"]] == [0]
    assert sim.call(lambda c: c.committed_offset("GID_REPLAY", MQ("TopicPay", "broker-a", 0))) \
        == 0
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-offset",
            "999999999", "--queues", "broker-b:1,2", "-o", "json")
    d = r.json
    assert all(q["clamped"] and q["target"] == q["max"] for q in d["queues"])
    assert len(d["warnings"]) == 2 and "clamped" in d["warnings"][0]


def test_export_edit_and_apply_from_file(cli, sim, tmp_path):
    plan = tmp_path / "plan.csv"
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-latest",
            "--export", str(plan))
    assert r.exit_code == 0 and plan.exists()
    rows = list(csv.DictReader(plan.open()))
    assert len(rows) == 8
    edited = [dict(r, target=str(int(r["current"]) - 10)) for r in rows[:3]]
    with plan.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(edited)
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--from-file",
            str(plan), "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert len(r.json["queues"]) == 3
    now = offsets(sim, "GID_REPLAY")
    for e in edited:
        assert now[MQ("TopicPay", e["broker"], int(e["queue_id"]))] == int(e["target"])


def test_online_orderly_group_server_side(cli, sim):
    sim.advance(30)
    r = run(cli, sim, "offsets", "reset", "-g", "GID_ORDER", "-t", "TopicOrder", "--shift-by",
            "-50", "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["consumers"]["online"] and d["consumers"]["orderly"]
    assert any("orderly" in w for w in d["warnings"])
    assert d["summary"] == {"verified": 8}


def test_unknown_group_is_refused(cli, sim):
    r = run(cli, sim, "offsets", "reset", "-g", "GID_NOBODY", "-t", "TopicPay", "--to-latest",
            "--execute")
    assert r.exit_code == 6 and "no committed offset" in r.stderr
    assert writes(sim) == []


def test_broker_failing_mid_apply_then_rerun_completes(cli, sim, tmp_path):
    before = offsets(sim, "GID_REPLAY")
    sim.call(lambda c: c.faults.error("broker-b", RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
                                      ResponseCode.SYSTEM_ERROR, "disk full"))
    rb = tmp_path / "rb.json"
    args = ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-earliest",
            "--execute", "-o", "json"]
    r = run(cli, sim, *args, "--rollback-file", str(rb))
    assert r.exit_code == 8
    status = {(x["broker"], x["queue_id"]): x["status"] for x in r.json["results"]}
    assert {s for (b, _), s in status.items() if b == "broker-a"} == {"verified"}
    assert {s for (b, _), s in status.items() if b == "broker-b"} == {"failed"}
    assert "disk full" in r.stderr and rb.exists()
    mid = offsets(sim, "GID_REPLAY")
    assert all(v == 0 for mq, v in mid.items() if mq.broker_name == "broker-a")
    assert all(v == before[mq] for mq, v in mid.items() if mq.broker_name == "broker-b")
    sim.call(lambda c: c.faults.clear())
    r = run(cli, sim, *args)
    assert r.exit_code == 0, r.stderr
    st = {(x["broker"], x["queue_id"]): x["status"] for x in r.json["results"]}
    assert {s for (b, _), s in st.items() if b == "broker-a"} == {"already"}
    assert {s for (b, _), s in st.items() if b == "broker-b"} == {"verified"}
    # the first rollback file still restores the exact prior offsets
    r = run(cli, sim, "offsets", "rollback", str(rb), "--execute")
    assert r.exit_code == 0, r.stderr
    assert offsets(sim, "GID_REPLAY") == before


def test_unreachable_broker_is_refused_before_any_change(cli, sim):
    sim.call(lambda c: c.faults.broker_down("broker-b"))
    sim.advance(0.1)
    r = run(cli, sim, "--timeout", "1", "offsets", "reset", "-g", "GID_REPLAY", "-t",
            "TopicPay", "--to-latest", "--execute")
    assert r.exit_code == 6 and "broker-b" in r.stderr and "not reachable" in r.stderr
    assert writes(sim) == []
    r = run(cli, sim, "--timeout", "1", "offsets", "reset", "-g", "GID_REPLAY", "-t",
            "TopicPay", "--to-latest", "--queues", "broker-a:0,1,2,3", "--execute")
    assert r.exit_code == 0, r.stderr


LEGACY = LEGACY_SCENARIO


def test_legacy_offline_group_uses_update_per_queue(cli, sim_factory):
    s = sim_factory(LEGACY)
    r = run(cli, s, "offsets", "reset", "-g", "G_OFF", "-t", "T", "--to-offset", "0",
            "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {b["path"] for b in r.json["brokers"]} == {"legacy-update"}
    assert r.json["summary"] == {"verified": 2}
    assert {x.code for x in writes(s)} == {RequestCode.UPDATE_CONSUMER_OFFSET}
    assert set(offsets(s, "G_OFF", "T").values()) == {0}


def test_legacy_online_explicit_offsets_refused_and_forced_write_overwritten(cli,
                                                                              sim_factory):
    s = sim_factory(LEGACY, clock="accelerated", speed=200)
    r = run(cli, s, "offsets", "reset", "-g", "G_ON", "-t", "T", "--to-offset", "0",
            "--execute")
    assert r.exit_code == 6 and "live consumers overwrite" in r.stderr
    assert writes(s) == []
    # --force writes them; the live consumer commits its own offset back within seconds
    r = run(cli, s, "offsets", "reset", "-g", "G_ON", "-t", "T", "--to-offset", "0",
            "--execute", "--force", "--verify-wait", "0.1", "-o", "json")
    assert r.exit_code == 8, r.stderr
    assert {x["status"] for x in r.json["results"]} == {"not-taken"}
    assert "overwritten" in r.stderr


def test_legacy_online_by_time_goes_through_the_clients(cli, sim_factory):
    s = sim_factory(LEGACY, clock="accelerated", speed=200)
    r = run(cli, s, "offsets", "reset", "-g", "G_ON", "-t", "T", "--to-earliest", "--execute",
            "--verify-wait", "0.15", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {b["path"] for b in r.json["brokers"]} == {"legacy-push"}
    assert r.json["summary"] == {"verified": 2}
    assert set(offsets(s, "G_ON", "T").values()) == {0}

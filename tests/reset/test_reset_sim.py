"""`mqctl offsets` against the simulated cluster: every target kind, both broker paths,
online/offline/orderly/pop/broadcasting groups, clamping, refusals, rollback, a broker failing
and a broker killed mid-apply (then re-run), and an online consumer overwriting a legacy write."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest
from sim_fixtures import LEGACY_SCENARIO

from mqctl.admin import Admin
from mqctl.models import MessageQueue
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode, ResponseCode
from mqctl.reset import Status, Target, apply_plan, default_wait, make_plan, verify
from mqctl.timeparse import format_ms

MQ = MessageQueue
RESET = RequestCode.INVOKE_BROKER_TO_RESET_OFFSET
WRITES = {RESET, RequestCode.UPDATE_CONSUMER_OFFSET}


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def offsets(sim, group, topic="TopicPay"):
    qs = sim.call(lambda c: c.subscribe_queues(topic))
    return {mq: sim.call(lambda c, mq=mq: c.committed_offset(group, mq)) for mq in qs}


def writes(sim):
    return [r for r in sim.request_log if r.code in WRITES]


def mutating(sim):
    return [r for r in sim.request_log if r.code in MUTATING_REQUESTS]


def statuses(d):
    return {(x["broker"], x["queue_id"]): x["status"] for x in d["results"]}


# ------------------------------------------------------------------------------ read-only

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
    assert mutating(sim) == [] and offsets(sim, "GID_REPLAY") == before
    b = sim.cluster.brokers["broker-a"]
    for q in d["queues"]:
        mq = MQ("TopicPay", q["broker"], q["queue_id"])
        assert q["current"] == before[mq]
        assert q["min"] <= q["target"] <= q["max"]
        assert q["change"] == q["target"] - q["current"]
        assert q["replay"] == max(0, -q["change"]) and q["skip"] == max(0, q["change"])
    if args[0] == "--to-earliest":
        assert {q["target"] for q in d["queues"]} == {0}
        first = sim.call(lambda c: b.store_ts("TopicPay", 0, 0))
        assert d["queues"][0]["target_ts"] == first
        assert d["queues"][0]["target_time"] == format_ms(first)
    if args[0] == "--to-latest":
        last = sim.call(lambda c: b.store_ts("TopicPay", 0, d["queues"][0]["max"] - 1))
        assert d["queues"][0]["target_time"] == f"after {format_ms(last)}"
    if args[0] == "--shift-by":
        assert all(q["target"] == q["current"] - 100 for q in d["queues"])
    if args[0] == "--to-time":
        ts = sim.clock.now_ms() - 1_800_000
        assert d["queues"][0]["target"] == b.search("TopicPay", 0, ts)
        # LOWER: the first message stored at or after the time
        tgt = d["queues"][0]["target"]
        assert b.store_ts("TopicPay", 0, tgt) >= ts > b.store_ts("TopicPay", 0, tgt - 1)
        assert d["queues"][0]["target_time"] == f">= {format_ms(ts)}"
    assert "WARN: No action will be performed as the --execute option is missing" in run(
        cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", *args).stdout


def test_show_matches_the_brokers(cli, sim):
    sim.advance(20)
    r = run(cli, sim, "offsets", "show", "-g", "GID_AUDIT", "-t", "TopicAudit", "-o", "json")
    assert r.exit_code == 0, r.stderr
    rows = r.json["queues"]
    assert len(rows) == 8 and mutating(sim) == []
    for row in rows:
        mq = MQ("TopicAudit", row["broker"], row["queue_id"])
        cur = sim.call(lambda c, mq=mq: c.committed_offset("GID_AUDIT", mq))
        mx = sim.call(lambda c, mq=mq: c.max_offset(mq))
        assert (row["current"], row["max"], row["lag"]) == (cur, mx, mx - cur)
    assert sum(x["lag"] for x in rows) > 0  # the lagging group of the demo


# ------------------------------------------------------------------------------ server-side

def test_execute_server_side_then_rollback(cli, sim, tmp_path):
    before = offsets(sim, "GID_REPLAY")
    rb = tmp_path / "rb.json"
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-time",
            "-40m", "--execute", "--rollback-file", str(rb), "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["summary"] == {"verified": 8} and d["rollback_file"] == str(rb)
    assert {b["path"] for b in d["brokers"]} == {"server-side"}
    after = offsets(sim, "GID_REPLAY")
    for q in d["queues"]:
        assert after[MQ("TopicPay", q["broker"], q["queue_id"])] == q["target"]
    # one INVOKE_BROKER_TO_RESET_OFFSET per queue, explicit queueId + offset, to the masters
    sent = writes(sim)
    assert len(sent) == 8 and {x.code for x in sent} == {RESET}
    masters = {sim.cluster.broker_addr("broker-a"), sim.cluster.broker_addr("broker-b")}
    assert {x.addr for x in sent} == masters
    for x in sent:
        assert {"group", "topic", "queueId", "offset", "isForce"} <= set(x.ext_fields)
        q = next(q for q in d["queues"] if q["queue_id"] == int(x.ext_fields["queueId"])
                 and sim.cluster.broker_addr(q["broker"]) == x.addr)
        assert int(x.ext_fields["offset"]) == q["target"]
    saved = json.loads(rb.read_text())
    assert {(q["broker"], q["queue_id"]): q["offset"] for q in saved["queues"]} == {
        (mq.broker_name, mq.queue_id): v for mq, v in before.items()}
    assert oct(rb.stat().st_mode & 0o777) == "0o600"
    # rollback: plan first (nothing changes), then execute restores the exact prior offsets
    sim.clear_request_log()
    r = run(cli, sim, "offsets", "rollback", str(rb), "-o", "json")
    assert r.exit_code == 0 and offsets(sim, "GID_REPLAY") == after and writes(sim) == []
    r = run(cli, sim, "offsets", "rollback", str(rb), "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert offsets(sim, "GID_REPLAY") == before
    # the rollback wrote its own rollback file (of the offsets it replaced) first
    own = r.json["rollback_file"]
    assert own and own != str(rb)
    assert {(q["broker"], q["queue_id"]): q["offset"]
            for q in json.loads(Path(own).read_text())["queues"]} == {
        (mq.broker_name, mq.queue_id): v for mq, v in after.items()}


def test_queue_zero_to_offset_zero_and_clamping(cli, sim):
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-offset",
            "0", "--queues", "broker-a:0", "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [q["queue_id"] for q in r.json["queues"]] == [0]
    assert r.json["summary"] == {"verified": 1}
    assert sim.call(lambda c: c.committed_offset("GID_REPLAY", MQ("TopicPay", "broker-a", 0))) \
        == 0
    (x,) = writes(sim)
    assert (x.ext_fields["queueId"], x.ext_fields["offset"]) == ("0", "0")
    # a committed 0 is an offset, not "none": the same command again has nothing to do
    sim.clear_request_log()
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-offset",
            "0", "--queues", "broker-a:0", "--execute", "-o", "json")
    assert r.exit_code == 0 and r.json["queues"][0]["current"] == 0
    assert r.json["summary"] == {"already": 1} and writes(sim) == []
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-offset",
            "999999", "--queues", "broker-b:1-2", "-o", "json")
    d = r.json
    assert [q["queue_id"] for q in d["queues"]] == [1, 2]
    assert all(q["clamped"] and q["target"] == q["max"] for q in d["queues"])
    assert len(d["warnings"]) == 2 and "clamped" in d["warnings"][0]


@pytest.mark.parametrize("ext", ["csv", "json"])
def test_export_edit_and_apply_from_file(cli, sim, tmp_path, ext):
    plan = tmp_path / f"plan.{ext}"
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-latest",
            "--export", str(plan))
    assert r.exit_code == 0 and plan.exists() and writes(sim) == []
    if ext == "csv":
        rows = list(csv.DictReader(plan.open()))
        assert len(rows) == 8
        edited = [dict(r, target=str(int(r["current"]) - 10)) for r in rows[:3]]
        with plan.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(edited)
    else:
        doc = json.loads(plan.read_text())
        assert len(doc["queues"]) == 8 and doc["group"] == "GID_REPLAY"
        edited = [dict(q, target=q["current"] - 10) for q in doc["queues"][:3]]
        plan.write_text(json.dumps(dict(doc, queues=edited)))
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--from-file",
            str(plan), "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert len(r.json["queues"]) == 3 and r.json["summary"] == {"verified": 3}
    now = offsets(sim, "GID_REPLAY")
    for e in edited:
        assert now[MQ("TopicPay", e["broker"], int(e["queue_id"]))] == int(e["target"])
    assert len(writes(sim)) == 3


def test_online_orderly_group_server_side(cli, sim):
    sim.advance(30)
    r = run(cli, sim, "offsets", "reset", "-g", "GID_ORDER", "-t", "TopicOrder", "--shift-by",
            "-50", "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["consumers"]["online"] and d["consumers"]["orderly"]
    assert any("orderly" in w for w in d["warnings"])
    assert d["summary"] == {"verified": 8}
    # the consumers jump on their next pull and go on from there
    sim.advance(10)
    now = offsets(sim, "GID_ORDER", "TopicOrder")
    for q in d["queues"]:
        assert now[MQ("TopicOrder", q["broker"], q["queue_id"])] >= q["target"]


def test_topic_the_online_consumers_do_not_subscribe_is_warned(cli, sim):
    r = run(cli, sim, "offsets", "reset", "-g", "GID_PAY", "-t", "TopicAudit", "--to-latest",
            "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert "the online consumers of GID_PAY do not subscribe to TopicAudit (they subscribe to " \
        "TopicPay)" in " ".join(r.json["warnings"])
    r = run(cli, sim, "offsets", "reset", "-g", "GID_PAY", "-t", "TopicPay", "--to-latest",
            "-o", "json")
    assert not any("do not subscribe" in w for w in r.json["warnings"])
    assert writes(sim) == []


def test_pop_group_server_side_is_warned(cli, sim):
    r = run(cli, sim, "offsets", "reset", "-g", "GID_POP", "-t", "TopicNews", "--to-earliest",
            "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json["consumers"]["pop"] is True
    assert any("pop/gRPC" in w for w in r.json["warnings"])


def test_broadcasting_group_is_refused_unless_forced(cli, sim):
    r = run(cli, sim, "offsets", "reset", "-g", "GID_NEWS", "-t", "TopicNews", "--to-earliest",
            "--execute")
    assert r.exit_code == 6 and "BROADCASTING" in r.stderr and "LocalFileOffsetStore" in \
        r.stderr
    assert writes(sim) == []
    r = run(cli, sim, "offsets", "reset", "-g", "GID_NEWS", "-t", "TopicNews", "--to-earliest",
            "--execute", "--force", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert any("BROADCASTING" in w for w in r.json["warnings"])


def test_unknown_group_is_refused(cli, sim):
    r = run(cli, sim, "offsets", "reset", "-g", "GID_NOBODY", "-t", "TopicPay", "--to-latest",
            "--execute", "--force")
    assert r.exit_code == 6 and "does not exist on broker" in r.stderr
    assert "SUBSCRIPTION_GROUP_NOT_EXIST" in r.stderr
    assert writes(sim) == []


FRESH = {"name": "fresh", "clock": {"mode": "manual"}, "brokers": ["broker-a"],
         "topics": [{"name": "T", "queues": 2, "rate": 2, "history": "30m"}],
         "groups": [{"name": "G_NEW", "topics": []}]}


def test_known_group_without_offsets_gets_them(cli, sim_factory):
    s = sim_factory(FRESH)
    r = run(cli, s, "offsets", "reset", "-g", "G_NEW", "-t", "T", "--by-duration", "-10m",
            "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert all(q["current"] is None for q in d["queues"])
    assert any("creates them" in w for w in d["warnings"])
    assert d["summary"] == {"verified": 2}
    assert offsets(s, "G_NEW", "T") == {MQ("T", "broker-a", q["queue_id"]): q["target"]
                                        for q in d["queues"]}
    # the rollback file knows there was nothing before: rollback leaves those queues alone,
    # and says what that means (not a usage error)
    s.clear_request_log()
    for extra in ([], ["--execute"]):
        r = run(cli, s, "offsets", "rollback", d["rollback_file"], *extra, "-o", "json")
        assert r.exit_code == 0, r.stderr
        assert r.json["nothing_to_restore"] is True
        assert [(q["broker"], q["queue_id"], q["saved"], q["reset_to"])
                for q in r.json["queues"]] == [("broker-a", q["queue_id"], None, q["target"])
                                               for q in d["queues"]]
    assert writes(s) == [] and offsets(s, "G_NEW", "T") == {
        MQ("T", "broker-a", q["queue_id"]): q["target"] for q in d["queues"]}


def test_time_in_the_future_and_before_retention_are_warned(cli, sim):
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-time",
            "+1h", "-o", "json")
    assert r.exit_code == 0
    assert any("is in the future" in w for w in r.json["warnings"])
    assert all(q["target"] == q["max"] for q in r.json["queues"])
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-time",
            "-30h", "-o", "json")
    assert any("(retention)" in w for w in r.json["warnings"])
    assert all(q["target"] == q["min"] for q in r.json["queues"])


# ------------------------------------------------------------------------------ faults

def test_broker_failing_mid_apply_then_rerun_completes(cli, sim, tmp_path):
    before = offsets(sim, "GID_REPLAY")
    sim.call(lambda c: c.faults.error("broker-b", RESET, ResponseCode.SYSTEM_ERROR,
                                      "disk full"))
    rb = tmp_path / "rb.json"
    args = ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-earliest",
            "--execute", "--rollback-file", str(rb), "-o", "json"]
    r = run(cli, sim, *args)
    assert r.exit_code == 8
    st = statuses(r.json)
    assert {s for (b, _), s in st.items() if b == "broker-a"} == {"verified"}
    # the first request to broker-b failed; the others were not sent at all
    assert [st["broker-b", q] for q in range(4)] == ["failed"] + ["not-sent"] * 3
    assert len([x for x in writes(sim) if x.addr == sim.cluster.broker_addr("broker-b")]) == 1
    assert "disk full" in r.stderr and rb.exists()
    assert "--queues broker-b:0,1,2,3" in r.stderr
    mid = offsets(sim, "GID_REPLAY")
    assert all(v == 0 for mq, v in mid.items() if mq.broker_name == "broker-a")
    assert all(v == before[mq] for mq, v in mid.items() if mq.broker_name == "broker-b")
    sim.call(lambda c: c.faults.clear())
    sim.clear_request_log()
    r = run(cli, sim, *args)  # the same command, the same --rollback-file
    assert r.exit_code == 0, r.stderr
    st = statuses(r.json)
    assert {s for (b, _), s in st.items() if b == "broker-a"} == {"already"}
    assert {s for (b, _), s in st.items() if b == "broker-b"} == {"verified"}
    assert {x.addr for x in writes(sim)} == {sim.cluster.broker_addr("broker-b")}
    # the first rollback file was kept (it holds the original offsets); the re-run wrote .2
    assert r.json["rollback_file"] == str(tmp_path / "rb.2.json")
    r = run(cli, sim, "offsets", "rollback", str(rb), "--execute")
    assert r.exit_code == 0, r.stderr
    assert offsets(sim, "GID_REPLAY") == before
    # and a third run finds nothing to do: nothing is sent
    sim.clear_request_log()
    files = sorted(p.name for p in tmp_path.iterdir())
    r = run(cli, sim, "offsets", "rollback", str(rb), "--execute", "-o", "json")
    assert r.exit_code == 0 and r.json["summary"] == {"already": 8} and writes(sim) == []
    # ... and writes no rollback file for a run that changes nothing
    assert r.json["rollback_file"] is None and sorted(p.name for p in tmp_path.iterdir()) == files


def test_broker_killed_mid_apply_then_rerun_completes(cli, sim, tmp_path):
    """broker-b dies after answering two of its four resets: the output says exactly which
    queues changed, the rollback file stays valid, and the same command completes the rest."""
    before = offsets(sim, "GID_REPLAY")
    srv = sim.cluster.servers["broker-b"]
    orig = srv.handler
    seen = []

    def dies_on_third_reset(cmd, conn):  # a SimServer handler (answer or awaitable)
        if cmd.code == RESET:
            seen.append(cmd.ext_fields["queueId"])
            if len(seen) == 3:
                sim.cluster.faults.broker_down("broker-b")
                return None  # killed: no answer
        return orig(cmd, conn)

    srv.handler = dies_on_third_reset
    rb = tmp_path / "rb.json"
    args = ["--timeout", "2", "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
            "--to-offset", "100", "--execute", "-o", "json"]
    r = run(cli, sim, *args, "--rollback-file", str(rb))
    assert r.exit_code == 8, r.stderr
    res = {(x["broker"], x["queue_id"]): x for x in r.json["results"]}
    assert {res["broker-a", q]["status"] for q in range(4)} == {"verified"}
    assert [res["broker-b", q]["status"] for q in range(4)] == [
        "unverified", "unverified", "failed", "not-sent"]
    assert "accepted by the broker" in res["broker-b", 0]["detail"]
    assert "may or may not have changed" in res["broker-b", 2]["detail"]
    truth = offsets(sim, "GID_REPLAY")
    assert [truth[MQ("TopicPay", "broker-b", q)] for q in range(4)] == [
        100, 100, before[MQ("TopicPay", "broker-b", 2)], before[MQ("TopicPay", "broker-b", 3)]]
    saved = {(q["broker"], q["queue_id"]): q["offset"]
             for q in json.loads(rb.read_text())["queues"]}
    assert saved == {(mq.broker_name, mq.queue_id): v for mq, v in before.items()}
    # the broker comes back (with its flushed offsets); the same command completes the rest
    srv.handler = orig
    sim.call(lambda c: c.faults.broker_up("broker-b"))
    sim.advance(0.1)
    r = run(cli, sim, *args)
    assert r.exit_code == 0, r.stderr
    st = statuses(r.json)
    assert [st["broker-b", q] for q in range(4)] == ["already", "already", "verified",
                                                      "verified"]
    assert {st["broker-a", q] for q in range(4)} == {"already"}
    assert set(offsets(sim, "GID_REPLAY").values()) == {100}
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


def test_unreadable_broker_config_is_never_guessed(cli, sim):
    # a per-queue server-side request to a broker that resets the legacy way would move every
    # queue of the topic to its max offset: without the config mqctl refuses, even with --force
    sim.call(lambda c: c.faults.error("broker-b", RequestCode.GET_BROKER_CONFIG,
                                      ResponseCode.NO_PERMISSION, "no permission"))
    for extra in ([], ["--force"]):
        r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay",
                "--to-offset", "0", "--execute", *extra)
        assert r.exit_code == 6 and "Traceback" not in r.stderr
        assert "cannot tell broker broker-b's reset path: GET_BROKER_CONFIG failed" in r.stderr
        assert "no permission" in r.stderr
    assert writes(sim) == []
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-offset",
            "0", "--queues", "broker-a:0,1,2,3", "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json["summary"] == {"verified": 4}


def test_search_failure_is_never_guessed(cli, sim):
    sim.call(lambda c: c.faults.error("broker-a", RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
                                      ResponseCode.SYSTEM_ERROR, "store busy"))
    r = run(cli, sim, "offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-time",
            "-30m", "--execute")
    assert r.exit_code == 6 and "SEARCH_OFFSET_BY_TIMESTAMP" in r.stderr
    assert "store busy" in r.stderr and writes(sim) == []


# ------------------------------------------------------------------------------ legacy path

LEGACY = LEGACY_SCENARIO


def test_legacy_offline_group_uses_update_per_queue(cli, sim_factory):
    s = sim_factory(LEGACY)
    r = run(cli, s, "offsets", "reset", "-g", "G_OFF", "-t", "T", "--to-offset", "0",
            "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {b["path"] for b in r.json["brokers"]} == {"legacy-update"}
    assert "UPDATE_CONSUMER_OFFSET per queue" in r.stdout  # announced, never silent
    assert r.json["summary"] == {"verified": 2}
    sent = writes(s)
    assert [x.code for x in sent] == [RequestCode.UPDATE_CONSUMER_OFFSET] * 2
    assert sorted((x.ext_fields["queueId"], x.ext_fields["commitOffset"]) for x in sent) == [
        ("0", "0"), ("1", "0")]  # queue 0 and offset 0 are written
    assert set(offsets(s, "G_OFF", "T").values()) == {0}


def test_legacy_online_explicit_offsets_refused_and_forced_write_overwritten(cli,
                                                                              sim_factory):
    s = sim_factory(LEGACY, clock="accelerated", speed=200)
    r = run(cli, s, "offsets", "reset", "-g", "G_ON", "-t", "T", "--to-offset", "0",
            "--execute")
    assert r.exit_code == 6 and "live consumers overwrite" in r.stderr
    assert writes(s) == []
    r = run(cli, s, "offsets", "reset", "-g", "G_ON", "-t", "T", "--to-earliest",
            "--queues", "broker-a:0", "--execute")
    assert r.exit_code == 6 and "subset" in r.stderr
    # --force writes them; the live consumer commits its own offset back within seconds and
    # verify (after the default 10 s of the mqctl clock) catches it
    r = run(cli, s, "offsets", "reset", "-g", "G_ON", "-t", "T", "--to-offset", "0",
            "--execute", "--force", "-o", "json")
    assert r.exit_code == 8, r.stderr
    assert {x.code for x in writes(s)} == {RequestCode.UPDATE_CONSUMER_OFFSET}
    assert {x["status"] for x in r.json["results"]} == {"not-taken"}
    assert all(x["now"] > 0 for x in r.json["results"])
    assert "overwritten" in r.stderr


def test_legacy_online_by_time_goes_through_the_clients(cli, sim_factory):
    s = sim_factory(LEGACY, clock="accelerated", speed=200)
    # the default wait (15 s on the mqctl clock) passes in ~0.1 s of an accelerated sim
    r = run(cli, s, "offsets", "reset", "-g", "G_ON", "-t", "T", "--to-earliest", "--execute",
            "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {b["path"] for b in r.json["brokers"]} == {"legacy-push"}
    assert r.json["summary"] == {"verified": 2}
    assert set(offsets(s, "G_ON", "T").values()) == {0}
    (x,) = writes(s)  # one request for the whole topic, by time (earliest = timestamp 0)
    assert x.code == RESET and x.ext_fields["timestamp"] == "0"
    assert x.ext_fields["isForce"] == "true"


def test_legacy_push_leaves_the_read_queues_beyond_the_write_queues(cli, sim_factory):
    """A topic shrunk to 2 write queues but still read on 4: Broker2Client.resetOffset iterates
    writeQueueNums, so queues 2 and 3 keep their offsets; the plan says so, verify reports them
    not taken and the exit is 8, never a silent success."""
    import copy

    sc = copy.deepcopy(LEGACY)
    sc["topics"][0].update({"queues": 4, "read_queues": 4, "write_queues": 2})
    s = sim_factory(sc, clock="accelerated", speed=200)
    before = offsets(s, "G_ON", "T")
    r = run(cli, s, "offsets", "reset", "-g", "G_ON", "-t", "T", "--to-earliest", "--execute",
            "-o", "json")
    assert r.exit_code == 8, r.stderr
    assert "the legacy reset covers queues 0..1 only" in r.stderr + r.stdout
    status = {x["queue_id"]: x["status"] for x in r.json["results"]}
    assert status == {0: "verified", 1: "verified", 2: "not-taken", 3: "not-taken"}
    assert all("beyond the 2 write queue(s)" in x["detail"] for x in r.json["results"]
               if x["queue_id"] >= 2)
    now = offsets(s, "G_ON", "T")
    assert [now[q] for q in sorted(now)][:2] == [0, 0]
    assert {q: v for q, v in now.items() if q.queue_id >= 2} == {
        q: v for q, v in before.items() if q.queue_id >= 2}


def reset_to_earliest_on_manual_clock(s, group: str, wait: float):
    """Plan, apply and verify a reset of ``group``/T to earliest, with verify's waits advancing
    the simulated clock; returns the results and what the broker held after each wait
    ((ms since the apply, offsets))."""
    seen: list[tuple[int, dict]] = []

    async def go():
        async with RemotingClient(ClientOptions(timeout=5)) as client:
            admin = Admin(client, s.namesrv_addr)
            plan = await make_plan(admin, group, "T", Target("earliest"))
            assert not plan.refusals and default_wait(plan) == wait
            results = await apply_plan(admin, plan)
            t0 = s.clock.now_ms()

            async def advance(sec: float) -> None:
                await asyncio.to_thread(s.advance, sec)
                seen.append((s.clock.now_ms() - t0, offsets(s, group, "T")))

            return await verify(admin, plan, results, wait_s=wait, waiter=advance, poll_s=1.0)

    return asyncio.run(go()), seen


def test_legacy_push_waits_out_the_client_pause_on_the_manual_clock(sim_factory):
    """The verify wait is injectable: here it advances the simulated clock, so the 10 s client
    pause passes without sleeping, and verify stops polling as soon as the queues took."""
    s = sim_factory(LEGACY)
    before = offsets(s, "G_ON", "T")
    res, seen = reset_to_earliest_on_manual_clock(s, "G_ON", 15.0)
    assert [r.status for r in res] == [Status.VERIFIED, Status.VERIFIED]
    # the clients held the old offsets through their 10 s pause, then applied the reset ...
    assert all(o == before for t, o in seen if t < 10_000)
    assert set(seen[-1][1].values()) == {0}
    # ... and verify stopped right after, well before its 15 s limit
    assert 10_000 <= seen[-1][0] <= 12_000


def test_legacy_offline_plan_of_a_legacy_broker_is_announced(cli, sim_factory):
    s = sim_factory(LEGACY)
    r = run(cli, s, "offsets", "reset", "-g", "G_OFF", "-t", "T", "--to-earliest")
    assert r.exit_code == 0
    assert "legacy-update (useServerSideResetOffset=false; group offline" in r.stdout
    assert writes(s) == []


# ------------------------------------------------------------------- server-side, old clients

def _server_side(version: str) -> dict:
    return {"name": "server-side-" + version, "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a"}],
            "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "1h"}],
            "groups": [{"name": "G", "topics": ["T"], "initial_lag": 0,
                        "consumers": [{"id": "10.9.0.1@1", "version": version}]}]}


@pytest.mark.parametrize("version, wait, took_after_s", [
    ("V4_9_8", 15.0, (10, 12)),  # before 5.2.0: the client fixes the offset 10 s later
    ("V5_3_3", 1.0, None),       # 5.2.0+: at once (apache/rocketmq#7635), and replayed at once
])
def test_server_side_reset_with_online_clients_waits_for_their_fix(sim_factory, version, wait,
                                                                   took_after_s):
    """The pull that takes a pending server-side reset also commits the client's old offset
    (PullMessageProcessor erases the reset, then stores commitOffset); the client writes the new
    offset when it fixes the OFFSET_ILLEGAL pull: 10 s later before 5.2.0 (and re-adds the
    queue at its next rebalance), at once since. The default verify wait covers each, and stops
    as soon as the queues took. A 5.2.0+ client takes the reset at its next pull and, fast,
    replays the rewind before any read: the broker's answer is the proof."""
    s = sim_factory(_server_side(version))
    s.advance(3)  # the consumer is up, consuming, committing
    before = offsets(s, "G", "T")
    assert min(before.values()) > 0
    res, seen = reset_to_earliest_on_manual_clock(s, "G", wait)
    assert [r.status for r in res] == [Status.VERIFIED, Status.VERIFIED]
    if took_after_s is None:
        assert seen and all(o[mq] >= v for _, o in seen for mq, v in before.items()), seen
        assert all(r.detail.startswith("applied by the broker (it wrote 0 before answering")
                   and "the group has re-consumed to" in r.detail for r in res)
        return
    lo, hi = took_after_s
    first = next(t for t, o in seen if set(o.values()) == {0})
    assert lo * 1000 <= first <= hi * 1000, seen
    if version == "V4_9_8":
        # meanwhile the broker showed the client's old offsets again (the pull's commit), so
        # a verify that ended after the 1 s that suffices for a 5.2.0+ client (seen[0] is what
        # it would read) would find the reset not taken
        early = [o for t, o in seen if t < 10_000]
        assert early and all(o[mq] >= v for o in early for mq, v in before.items())
        assert seen[0][0] == 1000 and all(v > 0 for v in seen[0][1].values())


def test_time_targets_on_brokers_before_5_1_1_are_announced_as_nearest(cli, sim_factory):
    """broker-a is 4.9.8 (no useServerSideResetOffset: known from the config), broker-b 5.1.0
    (has the key, so only GET_BROKER_RUNTIME_INFO tells); broker-c is 5.3.3. Both older ones
    search for the nearest message, so the plan says '~' for them and warns."""
    sc = {"name": "versions", "clock": {"mode": "manual"},
          "brokers": [{"name": "broker-a", "version": "V4_9_8"},
                      {"name": "broker-b", "version": "V5_1_0"}, "broker-c"],
          "topics": [{"name": "T", "queues": 1, "rate": 1, "history": "1h"}],
          "groups": [{"name": "G", "topics": ["T"], "initial_lag": 100}]}
    s = sim_factory(sc)
    r = run(cli, s, "offsets", "reset", "-g", "G", "-t", "T", "--by-duration", "30m", "-o",
            "json")
    assert r.exit_code == 0, r.stderr
    text = {q["broker"]: q["target_time"] for q in r.json["queues"]}
    assert text["broker-a"].startswith("~ ") and text["broker-b"].startswith("~ ")
    assert text["broker-c"].startswith(">= ")
    warned = [w for w in r.json["warnings"] if "nearest the time" in w]
    assert len(warned) == 1 and warned[0].startswith("broker(s) broker-a, broker-b older than")
    paths = {b["broker"]: b["path"] for b in r.json["brokers"]}
    assert paths == {"broker-a": "legacy-update", "broker-b": "legacy-update",
                     "broker-c": "server-side"}
    # the broker's own answer is in the plan: a 4.x search past the last message gives it
    r = run(cli, s, "offsets", "reset", "-g", "G", "-t", "T", "--to-time", "+1h", "-o", "json")
    q = {x["broker"]: x for x in r.json["queues"]}
    assert q["broker-a"]["target"] == q["broker-a"]["max"] - 1
    assert q["broker-c"]["target"] == q["broker-c"]["max"]
    assert any("answer with their last message instead" in w for w in r.json["warnings"])
    # offsets targets do not search: no version question asked, no warning
    r = run(cli, s, "offsets", "reset", "-g", "G", "-t", "T", "--to-offset", "5", "-o", "json")
    assert not any("nearest" in w for w in r.json["warnings"])

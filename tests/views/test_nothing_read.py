"""Nothing read is not "partial", and is never "lag 0" or "offline".

Every broker refusing (a wrong ACL secret: the sim's brokers answer NO_PERMISSION as 5.3's
AuthenticationPipeline does) or every broker down is a failure (exit 5 / 3) with the broker's
code, remark and a hint for the cause; when some brokers answered (exit 8) the facts that
depend on the others are unknown and stdout names the brokers not included."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode, ResponseCode

SECRET = "S3CRET-trust-views-9d2e"


@pytest.fixture
def acl_sim(sim_factory):
    from mqctl.sim import load_scenario
    from mqctl.sim.scenario import AclSpec

    s = sim_factory(load_scenario("demo", acl=AclSpec(True, {"ops": SECRET})))
    s.advance(30)
    return s


def wrong(sim):
    return {"NAMESRV_ADDR": sim.namesrv_addr, "MQCTL_ACCESS_KEY": "ops",
            "MQCTL_SECRET_KEY": "not-the-secret"}


def right(sim):
    return {**wrong(sim), "MQCTL_SECRET_KEY": SECRET}


def assert_refused(r, *, stdout_empty=True):
    assert r.exit_code == 5, (r.exit_code, r.stderr)
    assert "NO_PERMISSION (16)" in r.stderr and "check signature failed." in r.stderr
    hint = [ln for ln in r.stderr.splitlines() if ln.startswith("hint:")]
    assert hint and "secret" in hint[0] and "permission" in hint[0], r.stderr
    assert "Traceback" not in r.stderr and SECRET not in r.stdout + r.stderr
    for false_fact in ("total lag 0", "offline", "no online consumer", "covers the brokers"):
        assert false_fact not in r.stdout + r.stderr, (false_fact, r.stdout, r.stderr)
    if stdout_empty:
        assert r.stdout == ""


@pytest.mark.parametrize("cmd", [
    ["group", "progress", "GID_PAY"],
    ["group", "progress", "GID_PAY", "-o", "json"],
    ["consumers", "GID_PAY"],
    ["offsets", "show", "-g", "GID_PAY"],
    ["locks", "show", "--group", "GID_ORDER"],
    ["allocate", "-g", "GID_PAY", "-t", "TopicPay", "--against-live"],
])
def test_every_broker_refusing_is_a_broker_error_not_partial(acl_sim, cmd):
    r = run_cli(cmd, env=wrong(acl_sim))
    assert_refused(r)
    ok = run_cli(cmd, env=right(acl_sim))  # the same command with the right secret reads
    assert ok.exit_code == 0, ok.stderr


def test_snapshot_writes_no_empty_file_when_nothing_was_read(acl_sim, tmp_path):
    r = run_cli(["snapshot", "--out", str(tmp_path), "-g", "GID_PAY", "-o", "json"],
                env=wrong(acl_sim))
    assert_refused(r, stdout_empty=False)
    assert not list(tmp_path.rglob("*.jsonl*")), "a 0-row capture file was written"
    d = json.loads(r.stdout)
    assert d["file"] is None and d["rows"] == 0
    assert d["groups"] == [{"group": "GID_PAY", "rows": 0, "status": "failed", "error":
                            d["groups"][0]["error"]}]
    assert "NO_PERMISSION" in d["groups"][0]["error"]
    r2 = run_cli(["snapshot", "--out", str(tmp_path), "-g", "TYPO", "-g", "GID_PAY"],
                 env=wrong(acl_sim))
    assert r2.exit_code == 5 and "for 2 group(s)" not in r2.stdout + r2.stderr
    assert "0 of 2 group(s) captured" in r2.stdout and "2 failed" in r2.stdout
    assert not list(tmp_path.rglob("*.jsonl*"))


def test_snapshot_counts_captured_failed_and_unknown_groups(acl_sim, tmp_path):
    r = run_cli(["snapshot", "--out", str(tmp_path), "-g", "TYPO", "-g", "GID_PAY"],
                env=right(acl_sim))
    assert r.exit_code == 2, r.stderr  # an unknown group is bad input (was 8)
    assert "for 2 group(s)" not in r.stdout
    assert "1 of 2 group(s) captured" in r.stdout and "1 not found (TYPO)" in r.stdout
    assert len(list(tmp_path.rglob("*.jsonl*"))) == 1


def test_every_broker_down_is_a_connection_error(cli, sim, tmp_path):
    for b in ("broker-a", "broker-b"):
        sim.call(lambda c, b=b: c.faults.broker_down(b))
    sim.advance(0.1)
    for cmd in (["group", "progress", "GID_PAY"], ["consumers", "GID_PAY"],
                ["offsets", "show", "-g", "GID_PAY"],
                ["snapshot", "--out", str(tmp_path), "-g", "GID_PAY"]):
        r = cli(["-n", sim.namesrv_addr, "--timeout", "1", *cmd])
        assert r.exit_code == 3, (cmd, r.exit_code, r.stderr)
        assert "no broker answered" in r.stderr and "broker-a" in r.stderr
        assert "hint:" in r.stderr and "offline" not in r.stdout + r.stderr
        assert "total lag 0" not in r.stdout
    assert not list(tmp_path.rglob("*.jsonl*"))


def test_one_broker_refusing_consume_stats_names_it_next_to_the_totals(cli, sim):
    sim.call(lambda c: c.faults.error("broker-b", RequestCode.GET_CONSUME_STATS,
                                      ResponseCode.NO_PERMISSION, "no permission for GID_AUDIT"))
    r = cli(["-n", sim.namesrv_addr, "group", "progress", "GID_AUDIT"])
    assert r.exit_code == 8, r.stderr
    summary = [ln for ln in r.stdout.splitlines() if "total lag" in ln]
    assert summary and "not included: broker-b" in summary[0], r.stdout
    topic_rows = [ln for ln in r.stdout.splitlines() if ln.startswith("TopicAudit ")]
    assert any("broker-b" in ln for ln in topic_rows), r.stdout  # the per-topic row says so
    j = cli(["-n", sim.namesrv_addr, "group", "progress", "GID_AUDIT", "-o", "json"])
    d = j.json
    assert d["total"]["brokers_not_included"] == ["broker-b"]
    assert d["total"]["complete"] is False
    assert {q["broker"] for q in d["queues"]} == {"broker-a"}
    t = {x["topic"]: x for x in d["topics"]}["TopicAudit"]
    assert t["brokers_not_included"] == ["broker-b"] and t["lag"] == sum(
        q["lag"] for q in d["queues"] if q["topic"] == "TopicAudit")
    assert not {x.code for x in sim.request_log} & set(MUTATING_REQUESTS)


def test_membership_unknown_when_a_broker_did_not_answer(cli, sim):
    # GID_REPLAY is offline; broker-b does not answer the member list: offline is not known
    sim.call(lambda c: c.faults.error("broker-b", RequestCode.GET_CONSUMER_LIST_BY_GROUP,
                                      ResponseCode.SYSTEM_BUSY, "busy"))
    r = cli(["-n", sim.namesrv_addr, "consumers", "GID_REPLAY", "-o", "json"])
    assert r.exit_code == 8, r.stderr
    d = r.json
    assert d["online"] is None
    assert not [f for f in d["findings"] if f["check"] == "offline"]
    members = {b["broker"]: b["members"] for b in d["brokers"]}
    assert members == {"broker-a": 0, "broker-b": None}
    t = cli(["-n", sim.namesrv_addr, "consumers", "GID_REPLAY"])
    assert "no online consumer on any broker" not in t.stdout
    assert "unknown" in t.stdout and "broker-b" in t.stdout


def test_allocate_live_does_not_call_a_group_offline_when_a_broker_did_not_answer():
    import asyncio

    from mqctl.admin import BrokerFailure
    from mqctl.allocate.live import read_live_group
    from mqctl.allocate.preview import PreviewOptions, preview
    from mqctl.errors import BrokerError, PartialFailure
    from mqctl.models import BrokerData, QueueData, TopicRoute

    route = TopicRoute("T", (BrokerData("c", "broker-a", {0: "127.0.0.1:1"}),
                             BrokerData("c", "broker-b", {0: "127.0.0.1:2"})),
                       (QueueData("broker-a", 2, 2, 6), QueueData("broker-b", 2, 2, 6)))
    err = BrokerError(ResponseCode.SYSTEM_BUSY, "busy", "127.0.0.1:2")

    class Admin:
        async def topic_route(self, topic):
            return route

        async def members_by_broker(self, group, r):
            return {"broker-a": [], "broker-b": BrokerFailure("broker-b", "127.0.0.1:2", err)}

    live = asyncio.run(read_live_group(Admin(), "G", "T"))
    with pytest.raises(PartialFailure, match="broker-b did not answer") as ei:
        preview(list(live.queues), [], "G", PreviewOptions(), live=live)
    assert "no online consumer" not in ei.value.message


def test_progress_with_the_member_list_unread_says_owners_unknown(cli, sim):
    for b in ("broker-a", "broker-b"):
        sim.call(lambda c, b=b: c.faults.error(b, RequestCode.GET_CONSUMER_CONNECTION_LIST,
                                               ResponseCode.SYSTEM_BUSY, "busy"))
    r = cli(["-n", sim.namesrv_addr, "group", "progress", "GID_AUDIT", "-o", "json"])
    assert r.exit_code == 8, r.stderr  # the offsets were read: partial, not a failure
    d = r.json
    assert d["queues"] and d["online"] is None
    assert all(t["unowned"] is None for t in d["topics"])
    assert "offline" not in r.stdout

"""`group pause/resume` and `group config set/rollback` on the simulated cluster: the plan, the
execute, the read-back, the undo, what the request log shows was sent, the refusals."""

from __future__ import annotations

import json

import pytest
from readonly import assert_read_only

from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode as C


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def conf(sim, broker, group):
    return sim.call(lambda c: c.brokers[broker].groups[group])


def sent(sim, code):
    return [r for r in sim.request_log if r.code == code]


def test_pause_plan_sends_nothing_and_shows_each_brokers_value(cli, sim):
    sim.clear_request_log()
    r = run(cli, sim, "group", "pause", "GID_PAY", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["lever"] == "pause" and d["execute"] is False
    assert {b["consume_enable"] for b in d["brokers"]} == {"true"}
    assert all(b["status"] == "planned" for b in d["brokers"])
    assert not sent(sim, C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP)
    assert all(conf(sim, b["broker"], "GID_PAY").consume_enable for b in d["brokers"])
    assert_read_only(sim)  # a plan sends nothing that changes the cluster
    for args in (["group", "config", "set", "GID_PAY", "retryMaxTimes=2"],
                 ["offsets", "clone", "--from", "GID_REPLAY", "--to", "GID_PAY", "-t",
                  "TopicPay"]):
        sim.clear_request_log()
        run(cli, sim, *args)
        assert_read_only(sim)


def test_pause_execute_sends_the_config_as_read_and_resume_undoes_it(cli, sim, tmp_path):
    before = {b: sim.call(lambda c, b=b: dict(vars(c.brokers[b].groups["GID_PAY"])))
              for b in sim.call(lambda c: sorted(c.brokers))}
    sim.clear_request_log()
    undo = tmp_path / "undo.json"
    r = run(cli, sim, "group", "pause", "GID_PAY", "--execute", "--yes", "--undo-file",
            str(undo), "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert {b["status"] for b in d["brokers"]} == {"verified"}
    ups = sent(sim, C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP)
    assert len(ups) == len(before)  # one per master, nothing else changed
    for req in ups:
        body = fastjson.loads(req.body)
        assert body["consumeEnable"] is False
        assert body["retryMaxTimes"] == before[req.server]["retry_max_times"]
    for b in before:
        now = dict(vars(conf(sim, b, "GID_PAY")))
        assert now["consume_enable"] is False
        assert {k: v for k, v in now.items() if k != "consume_enable"} == \
            {k: v for k, v in before[b].items() if k != "consume_enable"}
    # the effect: the brokers answer the group's pulls NO_PERMISSION
    eff = d["effect"]
    assert sorted(eff["pulls_refused_on"]) == sorted(before)
    assert all("subscription group no permission" in t for t in eff["pulls"].values())
    saved = json.loads(undo.read_text())
    assert {x["broker"] for x in saved["brokers"]} == set(before)
    assert all(x["config"]["consumeEnable"] is True for x in saved["brokers"])
    # a paused group has an audit record; resume removes it
    r = run(cli, sim, "group", "resume", "GID_PAY", "--execute", "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert all(conf(sim, b, "GID_PAY").consume_enable for b in before)


def test_config_set_validates_type_and_release_and_rolls_back(cli, sim, tmp_path):
    r = run(cli, sim, "group", "config", "set", "GID_PAY", "retryMaxTimes=abc")
    assert r.exit_code == 2 and "whole number" in r.stderr
    r = run(cli, sim, "group", "config", "set", "GID_PAY", "nope=1")
    assert r.exit_code == 2 and "not a SubscriptionGroupConfig field" in r.stderr
    undo = tmp_path / "u.json"
    r = run(cli, sim, "group", "config", "set", "GID_PAY", "retryMaxTimes=3", "--execute",
            "--yes", "--undo-file", str(undo), "-o", "json")
    assert r.exit_code == 0, r.stderr
    brokers = [b["broker"] for b in r.json["brokers"]]
    assert all(conf(sim, b, "GID_PAY").retry_max_times == 3 for b in brokers)
    r = run(cli, sim, "group", "config", "rollback", str(undo), "--execute", "--yes",
            "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert all(conf(sim, b, "GID_PAY").retry_max_times == 16 for b in brokers)


def test_config_set_refuses_a_group_that_does_not_exist_unless_create(cli, sim):
    r = run(cli, sim, "group", "config", "set", "GID_NEW_ONE", "retryMaxTimes=2", "--execute",
            "--yes")
    assert r.exit_code == 2 and "--create" in r.stderr
    r = run(cli, sim, "group", "config", "set", "GID_NEW_ONE", "retryMaxTimes=2", "--create",
            "--execute", "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {b["action"] for b in r.json["brokers"]} == {"create"}


def test_execute_without_a_terminal_needs_yes(cli, sim):
    sim.clear_request_log()
    r = run(cli, sim, "group", "pause", "GID_PAY", "--execute")
    assert r.exit_code == 6 and "--yes" in r.stderr
    assert not sim.request_log  # refused before any request


@pytest.mark.parametrize("code", [16])
def test_an_acl_refusal_is_named_per_broker(cli, sim, code):
    from mqctl.sim.server import ErrorRule

    brokers = sim.call(lambda c: sorted(c.brokers))
    sim.call(lambda c: c.servers[brokers[0]].faults.errors.append(
        ErrorRule(C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, code,
                  "user:ops has no permission to Update the group", None)))
    r = run(cli, sim, "group", "pause", "GID_PAY", "--execute", "--yes", "-o", "json")
    assert r.exit_code == 8, r.stderr
    st = {b["broker"]: b for b in r.json["brokers"]}
    assert st[brokers[0]]["status"] == "failed" and "ACL" in st[brokers[0]]["detail"]
    assert all(st[b]["status"] == "verified" for b in brokers[1:])
    assert "finish:" in r.stderr and f"--brokers {brokers[0]}" in r.stderr


def test_groups_progress_and_diagnose_show_a_paused_group_with_who_and_when(cli, sim):
    r = run(cli, sim, "group", "pause", "GID_PAY", "--execute", "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    g = run(cli, sim, "groups", "--no-clients", "-o", "json")
    row = next(x for x in g.json["groups"] if x["group"] == "GID_PAY")
    assert row["state"] == "PAUSED"
    assert "consumeEnable=false" in row["reason"] and "paused by" in row["reason"]
    p = run(cli, sim, "group", "progress", "GID_PAY", "--no-clients", "-o", "json")
    assert p.json["paused_on"] and "paused by" in p.json["paused_by"]
    d = run(cli, sim, "diagnose", "GID_PAY", "-o", "json")
    f = [x for x in d.json["findings"] if x["code"] == "consume-disabled"]
    assert f and "group resume GID_PAY" in f[0]["next"]
    assert any("paused by" in e["text"] for e in f[0]["evidence"])


def test_pause_of_some_brokers_then_the_rest(cli, sim):
    brokers = sim.call(lambda c: sorted(c.brokers))
    first = brokers[0]
    sim.clear_request_log()
    r = run(cli, sim, "group", "pause", "GID_PAY", "--brokers", first, "--execute", "--yes",
            "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [x.server for x in sent(sim, C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP)] == [first]
    assert {b: conf(sim, b, "GID_PAY").consume_enable for b in brokers} == \
        {b: b != first for b in brokers}
    g = run(cli, sim, "groups", "--no-clients", "-o", "json")
    row = next(x for x in g.json["groups"] if x["group"] == "GID_PAY")
    assert row["state"] == "PAUSED" and "serve its pulls" in row["reason"]
    # the whole group: the paused broker is already as planned, nothing sent to it again
    sim.clear_request_log()
    r = run(cli, sim, "group", "pause", "GID_PAY", "--execute", "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    st = {b["broker"]: b["status"] for b in r.json["brokers"]}
    assert st[first] == "already" and all(st[b] == "verified" for b in brokers[1:])
    assert first not in [x.server for x in sent(sim, C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP)]
    assert run(cli, sim, "group", "pause", "GID_PAY", "--brokers", "nope").exit_code == 2


def test_resume_of_a_group_that_is_not_paused_sends_nothing(cli, sim):
    sim.clear_request_log()
    r = run(cli, sim, "group", "resume", "GID_PAY", "--execute", "--yes", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {b["status"] for b in r.json["brokers"]} == {"already"}
    assert r.json["undo_file"] is None
    assert not sent(sim, C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP)

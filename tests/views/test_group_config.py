"""`mqctl group config GROUP` against the sim and the real corpus's
GET_ALL_SUBSCRIPTIONGROUP_CONFIG answers."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
import yaml
from conftest import REAL_CORPUS
from readonly import assert_read_only
from wire_capture_helpers import assert_clean_error

from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode as C
from mqctl.views.group_config import GroupConfigView, compare

FORMATS = ["table", "plain", "json", "yaml", "csv"]

MIXED = {  # a 4.9.3 and a 5.3.3 broker
    "name": "gc", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                {"name": "broker-b", "version": "V5_3_3"}],
    "topics": [{"name": "T", "queues": 2, "rate": 1.0}],
    "groups": [{"name": "G", "topics": ["T"]}],
}


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def set_conf(sim, broker, group, **kw):
    def go(c):
        for k, v in kw.items():
            setattr(c.brokers[broker].groups[group], k, v)
    sim.call(go)


@pytest.mark.parametrize("fmt", FORMATS)
def test_group_config_every_format_flags_disagreements(cli, sim, fmt):
    set_conf(sim, "broker-b", "GID_PAY", retry_max_times=3, consume_enable=False)
    sim.clear_request_log()
    r = run(cli, sim, "group", "config", "GID_PAY", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    if fmt == "json":
        d = r.json
        assert d["disagreements"] == ["consumeEnable", "retryMaxTimes"]
        f = {x["field"]: x for x in d["fields"]}
        assert f["retryMaxTimes"]["values"] == {"broker-a": 16, "broker-b": 3}
        assert f["retryMaxTimes"]["agree"] is False and f["retryQueueNums"]["agree"] is True
        assert f["groupRetryPolicy"]["values"]["broker-a"] == {"type": "CUSTOMIZED"}
        assert d["brokers"]["broker-b"]["consumeEnable"] is False and d["missingOn"] == []
    elif fmt == "yaml":
        assert yaml.safe_load(r.stdout)["disagreements"] == ["consumeEnable", "retryMaxTimes"]
    elif fmt == "csv":
        rows = {x["field"]: x for x in csv.DictReader(io.StringIO(r.stdout))}
        assert rows["retryMaxTimes"]["broker-a"] == "16" and rows["retryMaxTimes"][
            "broker-b"] == "3"
        assert rows["retryMaxTimes"]["agree"] == "DIFFERS" and rows["brokerId"]["agree"] == "yes"
    else:
        assert "DIFFERS" in r.stdout and "brokers disagree on 2 field(s)" in r.stdout
    assert {x.code for x in sim.request_log if x.server != "namesrv"} == {
        C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG}  # never 352 (it creates a misspelt group)
    assert_read_only(sim)


def test_group_config_agreeing_brokers_and_a_missing_one(cli, sim):
    sim.call(lambda c: c.brokers["broker-b"].groups.pop("GID_AUDIT"))
    r = run(cli, sim, "group", "config", "GID_AUDIT", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json["disagreements"] == [] and r.json["missingOn"] == ["broker-b"]
    assert r.json["brokers"]["broker-b"] is None
    r = run(cli, sim, "group", "config", "GID_AUDIT", "-o", "plain")
    assert "no subscription group GID_AUDIT on broker-b" in r.stdout


def test_group_config_unknown_group_creates_nothing(cli, sim):
    before = sim.call(lambda c: {b: set(x.groups) for b, x in c.brokers.items()})
    r = run(cli, sim, "group", "config", "GID_PAYY")
    assert_clean_error(r, 2, "no broker has a subscription group 'GID_PAYY'")
    assert sim.call(lambda c: {b: set(x.groups) for b, x in c.brokers.items()}) == before


def test_group_config_versions_differ_without_false_disagreements(cli, sim_factory):
    s = sim_factory(MIXED)
    r = run(cli, s, "group", "config", "G", "-o", "json")
    assert r.exit_code == 0, r.stderr
    f = {x["field"]: x for x in r.json["fields"]}
    # 5.x-only fields: known on broker-b, unknown (not different) on broker-a
    assert f["consumeMessageOrderly"]["values"] == {"broker-b": False}
    assert f["consumeMessageOrderly"]["unknownOn"] == ["broker-a"]
    assert f["consumeMessageOrderly"]["agree"] is True and r.json["disagreements"] == []
    r = run(cli, s, "group", "config", "G", "-o", "plain")
    assert "consumeMessageOrderly on broker-a" in r.stdout


def test_group_config_broker_down(cli, sim):
    sim.call(lambda c: c.faults.broker_down("broker-b"))
    sim.advance(0.1)
    r = run(cli, sim, "--timeout", "1", "group", "config", "GID_PAY", "-o", "json")
    assert r.exit_code == 8, r.stderr
    assert r.json["brokers_not_included"] == ["broker-b"] and list(r.json["brokers"]) == [
        "broker-a"]


@pytest.mark.parametrize("version", ["4.9.3", "5.3.3"])
def test_real_subscription_group_tables(version):
    """The real 201 answers: every field mqctl compares is there (5.x adds its own), and two
    real groups compare as the broker sent them (NC_NEVER was made by updateSubGroup)."""
    ex = json.loads((REAL_CORPUS / version / "other-requests" /
                     "201_getAllSubscriptionGroupConfig.broker-a.json").read_text())
    table = fastjson.loads(bytes.fromhex(ex["response"]["body_hex"]))["subscriptionGroupTable"]
    for g in ("NC_NEVER", "RI_G", "TOOLS_CONSUMER"):
        assert g in table
    view = GroupConfigView("NC_NEVER", {"broker-a": table["NC_NEVER"], "x": table["RI_G"]})
    rows = {r.name: r for r in compare(view)}
    base = {"consumeEnable", "consumeFromMinEnable", "consumeBroadcastEnable",
            "retryQueueNums", "retryMaxTimes", "brokerId", "whichBrokerWhenConsumeSlowly",
            "notifyConsumerIdsChangedEnable"}
    five = {"consumeMessageOrderly", "groupRetryPolicy", "consumeTimeoutMinute",
            "groupSysFlag"}
    assert base <= set(rows)
    assert (five <= set(rows)) == (version == "5.3.3")
    differs = {n for n, r in rows.items() if r.differs}
    # the updateSubGroup-created group differs from an auto-created one where the recorded
    # tables differ, no more, no less
    expect = {k for k in table["NC_NEVER"] if k in rows and
              table["NC_NEVER"][k] != table["RI_G"][k]}
    assert differs == expect
    assert {"consumeFromMinEnable", "consumeBroadcastEnable"} <= expect  # updateSubGroup's


def test_group_config_takes_the_group_as_argument_or_option(cli, sim):
    a = run(cli, sim, "group", "config", "GID_PAY", "-o", "json")
    b = run(cli, sim, "group", "config", "-g", "GID_PAY", "-o", "json")
    assert a.exit_code == b.exit_code == 0 and a.json["fields"] == b.json["fields"]
    assert_clean_error(run(cli, sim, "group", "config"), 2, "missing the consumer group")
    assert_clean_error(run(cli, sim, "group", "config", "GID_PAY", "-g", "GID_AUDIT"), 2,
                       "two groups given")


def test_demo_group_with_a_broker_that_allows_fewer_retries(cli, sim):
    """demo.yaml: GID_MIXED's subscription group on broker-b has retryMaxTimes 3."""
    r = run(cli, sim, "group", "config", "GID_MIXED", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json["disagreements"] == ["retryMaxTimes"]
    f = {x["field"]: x for x in r.json["fields"]}
    assert f["retryMaxTimes"]["values"] == {"broker-a": 16, "broker-b": 3}


def test_scenario_group_config_is_checked():
    from mqctl.sim.cluster import _GROUP_CONFIG_ATTRS
    from mqctl.sim.scenario import GROUP_CONFIG_FIELDS, ScenarioError, load_scenario

    assert set(_GROUP_CONFIG_ATTRS) == set(GROUP_CONFIG_FIELDS)

    def load(group_extra):
        return load_scenario({**MIXED, "groups": [{**MIXED["groups"][0], **group_extra}]})

    sc = load({"config": {"retryMaxTimes": 5}, "config_by_broker": {"broker-b": {
        "consumeFromMinEnable": False}}})
    assert sc.groups[0].config == {"retryMaxTimes": 5}
    assert sc.groups[0].config_by_broker == {"broker-b": {"consumeFromMinEnable": False}}
    # consumeEnable is honoured (the brokers refuse the group's pulls)
    assert load({"config_by_broker": {"broker-b": {"consumeEnable": False}}}).groups[
        0].config_by_broker == {"broker-b": {"consumeEnable": False}}
    for extra, path in [({"config": {"retryMaxTimes": "x"}}, "groups[0].config.retryMaxTimes"),
                        ({"config": {"consumeEnable": "no"}}, "groups[0].config.consumeEnable"),
                        ({"config_by_broker": {"broker-z": {}}},
                         "groups[0].config_by_broker.broker-z"),
                        ({"config": {"consumeFromMinEnable": 1}},
                         "groups[0].config.consumeFromMinEnable")]:
        with pytest.raises(ScenarioError, match=re.escape(path)):
            load(extra)


def test_scenario_group_config_reaches_each_broker(cli, sim_factory):
    s = sim_factory({**MIXED, "groups": [{**MIXED["groups"][0],
                                          "config": {"consumeTimeoutMinute": 30},
                                          "config_by_broker": {"broker-a": {"brokerId": 1}}}]})
    r = run(cli, s, "group", "config", "G", "-o", "json")
    f = {x["field"]: x for x in r.json["fields"]}
    assert f["brokerId"]["values"] == {"broker-a": 1, "broker-b": 0}
    # 4.9.3 has no consumeTimeoutMinute: only broker-b (5.3.3) reports the scenario's value
    assert f["consumeTimeoutMinute"]["values"] == {"broker-b": 30}
    assert r.json["disagreements"] == ["brokerId"]

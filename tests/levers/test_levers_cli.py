"""The levers' command line: `group config` is a group whose default shows the config (help
and completion say so), and a change that is not confirmed sends nothing."""

from __future__ import annotations

from completion_line import line

from mqctl.api import Cluster
from mqctl.levers import LeverRequest
from mqctl.remoting.codes import RequestCode as C


def test_group_config_completes_its_subcommands_and_help_lists_them(cli):
    got = line("mqctl group config s")
    assert "plain,set" in got and "plain,show" in got
    assert "plain,rollback" in line("mqctl group config r")
    r = cli(["group", "config", "--help"])
    assert r.exit_code == 0
    out = r.stdout
    assert "Show the group's subscription group config" in out  # the default's own help
    for sub in ("show", "set", "rollback"):
        assert f"  {sub}" in out.split("Commands:")[1]


def test_group_config_without_a_subcommand_still_shows_the_config(cli, sim):
    r = cli(["-n", sim.namesrv_addr, "group", "config", "GID_PAY", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["group"] == "GID_PAY" and r.json["fields"]
    same = cli(["-n", sim.namesrv_addr, "group", "config", "show", "GID_PAY", "-o", "json"])
    assert same.json["fields"] == r.json["fields"]


def test_a_change_not_confirmed_sends_nothing_and_writes_no_undo_file(sim, tmp_path):
    undo = tmp_path / "u.json"
    asked = []
    sim.clear_request_log()
    with Cluster(sim.namesrv_addr) as c:
        o = c.lever(LeverRequest("pause", "GID_PAY", {"consumeEnable": False}, execute=True,
                                 undo_file=str(undo)),
                    confirm=lambda q: asked.append(q) or "n")
    assert o.declined and o.error() is not None and o.error().exit_code == 6
    assert asked and "pause" in asked[0] and "[y/N]" in asked[0]
    assert not undo.exists()
    assert not [r for r in sim.request_log if r.code == C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP]


def test_a_5x_field_is_refused_on_a_4x_broker(cli, sim_factory):
    s = sim_factory({"name": "mixed", "clock": {"mode": "manual"},
                     "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                                 {"name": "broker-b", "version": "V5_3_3"}],
                     "topics": [{"name": "T", "queues": 1, "rate": 1.0}],
                     "groups": [{"name": "G", "topics": ["T"]}]})
    r = cli(["-n", s.namesrv_addr, "group", "config", "set", "G",
             'groupRetryPolicy={"type":"EXPONENTIAL"}', "-o", "json"])
    assert r.exit_code == 6, r.stderr
    assert "broker-a runs V4_9_3: it has no groupRetryPolicy (since 5.0.0)" in r.stderr
    row = {b["broker"]: b for b in r.json["brokers"]}
    assert row["broker-a"]["action"] == "skip" and row["broker-b"]["action"] == "update"

"""One shape for machines (docs/output.md "Machine output: one shape"): every command's
``-o json`` is an object, a table's rows are under the name ``--table`` takes, and what a
command prints is the API's result through the command's rows, so the two cannot drift."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from mqctl.render import Result, Table, cols, to_json

# every command that reads the cluster or files, with what it needs (the simulated demo
# cluster; {out}: a fresh directory)
COMMANDS = [
    ["cluster"], ["topics"], ["route", "TopicPay"], ["consumers", "GID_ORDER"], ["groups"],
    ["group", "progress", "GID_ORDER"], ["group", "config", "GID_PAY"],
    ["diagnose", "GID_AUDIT"], ["locks", "show", "GID_ORDER"],
    ["allocate", "--queues", "b:4", "--consumers", "2"], ["allocate", "-g", "GID_PAY", "-t",
                                                          "TopicPay"],
    ["allocate", "--list-strategies"], ["offsets", "show", "GID_REPLAY"],
    ["offsets", "reset", "GID_REPLAY", "-t", "TopicPay", "--to-earliest"],
    ["offsets", "rollbacks"], ["snapshot", "-g", "GID_PAY", "--out", "{out}"],
    ["topic", "status", "TopicPay"], ["topic", "consumers", "TopicPay"],
    ["message", "show", "-t", "TopicPay", "-b", "broker-a", "-q", "0", "--offset", "1"],
    ["time", "now"], ["config", "show"], ["config", "profiles"], ["sim", "scenarios"],
    ["lag", "prune", "--keep", "1d", "--snapshots", "{out}"],
    ["group", "dlq", "GID_PAY"], ["group", "dlq", "resend", "GID_PAY", "--all"],
]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    from sim_fixtures import running_sim

    out = tmp_path_factory.mktemp("out")
    with running_sim("demo") as s:
        yield {" ".join(c): run_cli(["-n", s.cluster.namesrv_addr,
                                     *[a.replace("{out}", str(out)) for a in c], "-o", "json"])
               for c in COMMANDS}


@pytest.mark.parametrize("command", [" ".join(c) for c in COMMANDS])
def test_every_json_output_is_an_object(outputs, command):
    r = outputs[command]
    assert r.exit_code in (0, 8, 9), r.stderr
    assert isinstance(json.loads(r.stdout), dict)


def test_a_table_is_under_its_name_with_and_without_table(sim):
    ns = ["-n", sim.cluster.namesrv_addr]
    whole = run_cli([*ns, "cluster", "-o", "json"]).json
    picked = run_cli([*ns, "cluster", "-o", "json", "--table", "brokers"]).json
    assert list(whole) == ["brokers"] and picked == whole and whole["brokers"]
    progress = run_cli([*ns, "group", "progress", "GID_AUDIT", "-o", "json", "--table",
                        "topics"]).json
    assert list(progress) == ["topics"] and isinstance(progress["topics"], list)


def test_the_document_rule():
    one = Result([Table(cols("a"), [{"a": 1}], name="things")])
    assert one.structured() == {"things": [{"a": 1}]}
    listed = Result([Table(cols("a"), [{"a": 1}], name="things")], data=[{"a": 2}])
    assert listed.structured() == {"things": [{"a": 2}]}
    given = Result([Table(cols("a"), [])], data={"x": 1})
    assert given.structured() == {"x": 1}
    two = Result([Table(cols("a"), [{"a": 1}], name="x"), Table(cols("b"), [], name="y")])
    assert two.structured() == {"x": [{"a": 1}], "y": []}


def test_the_cli_prints_the_api_result_through_the_rows(sim):
    """``-o json`` of a view is its rows function over the API's result, nothing else: the
    same document from the API and from the command (the simulated clock stands still)."""
    from mqctl import Cluster
    from mqctl.views.groups_rows import groups_result
    from mqctl.views.progress_rows import progress_result
    from mqctl.views.topics import topics_result

    ns = sim.cluster.namesrv_addr
    with Cluster(ns) as c:
        groups, progress, topics = c.groups(), c.group_progress("GID_AUDIT"), c.topics()
    expect = {
        "groups": groups_result(groups).structured(),
        "group progress GID_AUDIT": progress_result(progress).structured(),
        "topics": topics_result(topics.names, topics.info, topics.configs, "normal",
                                None).structured(),
    }
    for command, doc in expect.items():
        got = run_cli(["-n", ns, *command.split(), "-o", "json"])
        assert got.stdout == to_json(doc) + "\n", command

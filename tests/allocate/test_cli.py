"""``mqctl allocate`` end to end through the real CLI boundary (offline inputs)."""

from __future__ import annotations

import json

import pytest

from mqctl.allocate import compute_allocation
from mqctl.allocate.inputs import parse_queue_spec

SHORT = ["allocate", "--queues", "broker-a:8,broker-b:8", "--consumers", "3"]


def qids(items: list[dict]) -> list[str]:
    return [f"{q['brokerName']}:{q['queueId']}" for q in items]


def assert_usage_error(r, *fragments: str) -> None:
    assert r.exit_code == 2, (r.stdout, r.stderr)
    lines = [x for x in r.stderr.strip().splitlines() if not x.startswith("mqctl: warning:")]
    assert lines[0].startswith("mqctl: error: ")
    assert len(lines) == 2  # one line and a hint
    assert any(line.startswith("hint: ") for line in lines)
    assert "Traceback" not in r.stderr
    for f in fragments:
        assert f in r.stderr
    assert r.stdout == ""


def test_json_shape_avg(cli):
    r = cli([*SHORT, "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert {"strategy", "group", "assignments", "unassigned", "idle"} <= set(d)
    assert "moves" not in d
    assert d["strategy"] == "avg" and d["group"] == ""
    assert list(d["assignments"]) == ["10.0.0.1@1", "10.0.0.2@2", "10.0.0.3@3"]
    assert qids(d["assignments"]["10.0.0.2@2"]) == ["broker-a:6", "broker-a:7", "broker-b:0",
                                                   "broker-b:1", "broker-b:2"]
    assert d["assignments"]["10.0.0.1@1"][0] == {"brokerName": "broker-a", "queueId": 0,
                                                  "topic": "TopicTest"}
    assert d["unassigned"] == [] and d["idle"] == []
    assert d["topics"] == ["TopicTest"]


def test_idle_consumer_has_empty_list_and_is_listed(cli):
    r = cli(["allocate", "--queues", "b:2", "--consumers", "x,y,z", "-o", "json",
             "--topic", "T"])
    d = r.json
    assert d["assignments"]["z"] == [] and d["idle"] == ["z"]
    assert d["assignments"]["x"] == [{"brokerName": "b", "queueId": 0, "topic": "T"}]


def test_plain_table_per_consumer(cli):
    r = cli([*SHORT, "-o", "plain"])
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0] == "# avg: 16 queue(s), 3 consumer(s)"
    assert lines[1].split() == ["CONSUMER", "COUNT", "QUEUES"]
    assert lines[2].split() == ["10.0.0.1@1", "6", "broker-a:0-5"]
    assert lines[3].split() == ["10.0.0.2@2", "5", "broker-a:6-7", "broker-b:0-2"]
    assert "balance: min 5, max 6, spread 1 over 3 consumer(s)" in r.stdout


def test_table_output_renders(cli):
    r = cli([*SHORT, "-o", "table"])
    assert r.exit_code == 0 and "10.0.0.3@3" in r.stdout and "broker-b:3-7" in r.stdout


def test_by_queue(cli):
    r = cli(["allocate", "--queues", "broker-a:2", "--consumers", "a,a,b", "--by-queue",
             "-o", "plain"])
    rows = [line.split() for line in r.stdout.splitlines()[2:4]]
    assert rows == [["TopicTest", "broker-a", "0", "a"], ["TopicTest", "broker-a", "1",
                                                           "(none)"]]
    assert "client id a appears 2 times" in r.stdout
    assert "1 queue(s) get no consumer because of the duplicate client id(s): broker-a:1" \
        in r.stdout
    assert "3 consumer(s) (2 distinct ids)" in r.stdout


def test_csv_and_yaml(cli):
    r = cli([*SHORT, "-o", "csv"])
    assert r.stdout.splitlines()[0] == "consumer,count,queues"
    assert r.stdout.splitlines()[1] == "10.0.0.1@1,6,broker-a:0-5"
    import yaml

    y = yaml.safe_load(cli([*SHORT, "-o", "yaml"]).stdout)
    assert y["assignments"] == cli([*SHORT, "-o", "json"]).json["assignments"]


@pytest.mark.parametrize("name", ["avg", "AVG", "avg-by-circle", "AVG_BY_CIRCLE",
                                  "consistent-hash", "CONSISTENT_HASH",
                                  "AllocateMessageQueueAveragelyByCircle",
                                  "org.apache.rocketmq.client.consumer.rebalance."
                                  "AllocateMessageQueueConsistentHash"])
def test_each_simple_strategy_matches_library(cli, name):
    r = cli([*SHORT, "-s", name, "-o", "json"])
    q = parse_queue_spec("broker-a:8,broker-b:8")
    lib = compute_allocation(name, q, ["10.0.0.1@1", "10.0.0.2@2", "10.0.0.3@3"])
    assert r.json["assignments"] == {c: [m.to_dict() for m in v]
                                     for c, v in lib.assignments.items()}
    assert r.json["strategy"] == lib.strategy


def test_virtual_nodes_option(cli):
    r1 = cli([*SHORT, "-s", "consistent-hash", "--virtual-nodes", "1", "-o", "json"]).json
    r10 = cli([*SHORT, "-s", "consistent-hash", "-o", "json"]).json
    r0 = cli([*SHORT, "-s", "consistent-hash", "--virtual-nodes", "0", "-o", "json"]).json
    assert r1["assignments"] != r10["assignments"]
    assert len(r0["unassigned"]) == 16 and len(r0["idle"]) == 3


def test_config_strategy(cli, tmp_path):
    f = tmp_path / "cfg.yaml"
    f.write_text("10.0.0.1@1: [broker-a:0, broker-z:9]\n10.0.0.2@2: [broker-a:0]\n")
    r = cli([*SHORT, "-s", "config", "--queue-config", str(f), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert qids(d["assignments"]["10.0.0.1@1"]) == ["broker-a:0", "broker-z:9"]
    assert qids(d["assignments"]["10.0.0.2@2"]) == ["broker-a:0"]
    assert d["idle"] == ["10.0.0.3@3"]
    assert len(d["unassigned"]) == 15
    assert any("more than one consumer" in n for n in d["notes"])


def test_machine_room_strategy(cli):
    r = cli(["allocate", "-s", "MACHINE_ROOM", "--rooms", "hz", "--queues",
             "hz@broker-a:5,sh@broker-b:5", "--consumers", "c0,c1", "-o", "json"])
    d = r.json
    assert qids(d["assignments"]["c0"]) == ["hz@broker-a:0", "hz@broker-a:1", "hz@broker-a:4"]
    assert qids(d["assignments"]["c1"]) == ["hz@broker-a:2", "hz@broker-a:3"]
    assert len(d["unassigned"]) == 5


def test_machine_room_nearby_strategy(cli):
    args = ["allocate", "-s", "machine-room-nearby", "--inner", "avg-by-circle",
            "--broker-room-regex", r"(\w+)-", "--consumer-room-regex", r"(\w+)\.",
            "--queues", "hz-a:2,sh-b:2,bj-c:2", "--consumers", "hz.1,sh.1,sh.2", "-o", "json"]
    d = cli(args).json
    assert d["strategy"] == "machine-room-nearby-avg-by-circle"
    assert qids(d["assignments"]["hz.1"]) == ["bj-c:0", "hz-a:0", "hz-a:1"]
    assert qids(d["assignments"]["sh.1"]) == ["bj-c:1", "sh-b:0"]
    assert qids(d["assignments"]["sh.2"]) == ["sh-b:1"]


def test_nearby_room_error_is_usage_error(cli):
    r = cli(["allocate", "-s", "machine-room-nearby", "--consumer-room-regex", r"(\w+)-",
             "--queues", "hz-a:2", "--consumers", "nodash"])
    assert_usage_error(r, "machine room is empty for consumer 'nodash'")


def test_what_if_add_and_remove(cli):
    r = cli([*SHORT, "--add-consumer", "10.0.0.9@9", "--add-consumer", "10.0.0.8@8",
             "--remove-consumer", "10.0.0.1@1", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert set(d["assignments"]) == {"10.0.0.2@2", "10.0.0.3@3", "10.0.0.8@8", "10.0.0.9@9"}
    assert d["summary"]["added"] == ["10.0.0.9@9", "10.0.0.8@8"]
    assert d["summary"]["removed"] == ["10.0.0.1@1"]
    before = {q: c for c, qs in d["before"]["assignments"].items() for q in qids(qs)}
    after = {q: c for c, qs in d["assignments"].items() for q in qids(qs)}
    changed = sorted(q for q in after if before[q] != after[q])
    assert sorted(qids([m["queue"] for m in d["moves"]])) == changed
    assert all(m["from"] == before[qids([m["queue"]])[0]] and
               m["to"] == after[qids([m["queue"]])[0]] for m in d["moves"])
    assert d["summary"]["movedQueues"] == len(changed)
    assert d["summary"]["after"]["spread"] == 0


def test_what_if_plain_tables(cli):
    r = cli([*SHORT, "--add-consumer", "10.0.0.4@4", "-o", "plain"])
    out = r.stdout
    assert "# moves: 9 of 16 queue(s) change owner" in out
    assert "9 of 16 queue(s) move (56%)" in out
    row = next(line.split() for line in out.splitlines() if line.startswith("10.0.0.4@4"))
    assert row == ["10.0.0.4@4", "-", "4", "+4", "added"]


def test_what_if_by_queue(cli):
    r = cli([*SHORT, "--compare", "avg-by-circle", "--by-queue", "-o", "plain"])
    assert "# queues" in r.stdout
    row = next(line.split() for line in r.stdout.splitlines()
               if line.split()[:3] == ["TopicTest", "broker-a", "1"])
    assert row == ["TopicTest", "broker-a", "1", "10.0.0.1@1", "10.0.0.2@2", "true"]


def test_compare_strategies(cli):
    d = cli([*SHORT, "--compare", "consistent-hash", "-o", "json"]).json
    assert d["strategy"] == "consistent-hash" and d["before"]["strategy"] == "avg"
    assert d["summary"]["before"]["strategy"] == "avg"
    assert len(d["moves"]) == d["summary"]["movedQueues"] > 0


def test_remove_unknown_consumer(cli):
    assert_usage_error(cli([*SHORT, "--remove-consumer", "nobody"]),
                       "--remove-consumer 'nobody': not a consumer")


def test_previous_file_with_sticky(cli, tmp_path, sticky_registered):
    prev = cli([*SHORT, "-s", "avg-by-circle", "-o", "json"])
    f = tmp_path / "prev.json"
    f.write_text(prev.stdout)
    d = cli([*SHORT, "-s", "sticky", "--previous", str(f), "-o", "json"]).json
    assert d["assignments"] == prev.json["assignments"]  # nothing changed: nothing moves
    w = cli([*SHORT, "-s", "sticky", "--previous", str(f), "--add-consumer", "x@1",
             "-o", "json"]).json
    assert w["summary"]["movedQueues"] == 4  # the newcomer's share and nothing else
    assert {m["to"] for m in w["moves"]} == {"x@1"}


def test_compare_sticky_starts_from_base(cli, sticky_registered):
    d = cli([*SHORT, "--compare", "sticky", "--add-consumer", "10.0.0.4@4", "-o", "json"]).json
    assert d["summary"]["movedQueues"] == 4
    assert {m["to"] for m in d["moves"]} == {"10.0.0.4@4"}


def test_list_strategies(cli, sticky_registered):
    r = cli(["allocate", "--list-strategies", "-o", "json"])
    rows = {x["name"]: x for x in r.json["strategies"]}
    assert rows["avg"]["origin"] == "builtin" and rows["avg"]["javaName"] == "AVG"
    assert rows["sticky"]["origin"] == "mqctl-sticky" and rows["sticky"]["version"] == "0.1.0"
    assert len(rows) >= 7
    p = cli(["allocate", "--list-strategies", "-o", "plain"])
    assert p.stdout.splitlines()[0].split()[:3] == ["NAME", "ORIGIN", "VERSION"]


def test_broken_plugin_warns_on_stderr(cli, fresh_registry, make_dist):
    make_dist("mqctl-broken", "0.3", {"broken": "no_such_module_xyz:Thing"}, {})
    r = cli(["allocate", "--list-strategies", "-o", "plain"])
    assert r.exit_code == 0
    assert "mqctl: warning: plugin strategy 'broken' from mqctl-broken 0.3 failed to load" \
        in r.stderr
    assert "avg" in r.stdout and "broken" not in r.stdout
    r2 = cli([*SHORT, "-s", "broken"])
    assert_usage_error(r2, "unknown strategy 'broken'")
    assert "mqctl: warning: plugin strategy 'broken'" in r2.stderr


def test_plugin_crash_exit_7(cli, fresh_registry, make_dist):
    make_dist("mqctl-crash", "1", {"crash": "crash_mod:Crash"},
              {"crash_mod": "class Crash:\n    def allocate(self, *a):\n"
                            "        raise KeyError(1)\n"})
    r = cli([*SHORT, "-s", "crash"])
    assert r.exit_code == 7 and "mqctl: error: strategy 'crash' failed: KeyError" in r.stderr
    assert "Traceback" not in r.stderr


def test_topology_file(cli, tmp_path):
    t = tmp_path / "topo.yaml"
    t.write_text("group: GID_ORDER\nqueues:\n"
                 + "".join(f"  - {{topic: TopicOrder, brokerName: broker-{b}, queueId: {i}}}\n"
                           for b in "ab" for i in range(4))
                 + "consumers: ['10.0.0.7@34567#3', '10.0.0.5@12345#1', '10.0.0.6@23456#2']\n")
    d = cli(["allocate", "--topology", str(t), "-s", "consistent-hash", "-o", "json"]).json
    assert d["group"] == "GID_ORDER"
    # the protocol notes' vector, computed by the real Java class
    assert qids(d["assignments"]["10.0.0.5@12345#1"]) == ["broker-a:0", "broker-a:1",
                                                         "broker-b:1"]
    assert qids(d["assignments"]["10.0.0.7@34567#3"]) == ["broker-a:3", "broker-b:2",
                                                         "broker-b:3"]
    g = cli(["allocate", "--topology", str(t), "--group", "OTHER", "-o", "json"]).json
    assert g["group"] == "OTHER"


def test_unused_option_note(cli):
    d = cli([*SHORT, "--virtual-nodes", "5", "--rooms", "hz", "-o", "json"]).json
    assert "--virtual-nodes is not used by avg" in d["notes"]
    assert "--rooms is not used by avg" in d["notes"]


# ------------------------------------------------------------------------------- errors

def test_error_unknown_strategy(cli):
    assert_usage_error(cli([*SHORT, "-s", "fastest"]), "unknown strategy 'fastest'",
                       "avg-by-circle", "machine-room-nearby")


def test_error_unknown_compare_strategy_before_anything(cli):
    assert_usage_error(cli([*SHORT, "--compare", "nope"]), "unknown strategy 'nope'")


def test_error_negative_virtual_nodes(cli):
    assert_usage_error(cli([*SHORT, "-s", "consistent-hash", "--virtual-nodes", "-3"]),
                       "illegal virtual node count: -3")


def test_error_no_queues(cli, tmp_path):
    t = tmp_path / "t.json"
    t.write_text(json.dumps({"queues": [], "consumers": ["a"]}))
    assert_usage_error(cli(["allocate", "--topology", str(t)]), "no queues to allocate")
    assert_usage_error(cli(["allocate", "--queues", "a:0", "--consumers", "1"]),
                       "no queues to allocate")


def test_error_no_consumers(cli, tmp_path):
    t = tmp_path / "t.json"
    t.write_text(json.dumps({"queues": ["b:0"], "consumers": []}))
    assert_usage_error(cli(["allocate", "--topology", str(t)]), "no consumers to allocate to")


def test_no_consumers_but_one_added(cli, tmp_path):
    t = tmp_path / "t.json"
    t.write_text(json.dumps({"queues": ["b:0", "b:1"], "consumers": []}))
    d = cli(["allocate", "--topology", str(t), "--add-consumer", "n@1", "-o", "json"]).json
    assert len(d["before"]["unassigned"]) == 2
    assert [(m["from"], m["to"]) for m in d["moves"]] == [(None, "n@1"), (None, "n@1")]


@pytest.mark.parametrize("content,fragment", [
    ("queues: []\n", "missing key(s) consumers"),
    ("queues: [b:0\nconsumers: [a]\n", "is not valid YAML at line"),
    ("queues: {a: 1}\nconsumers: [a]\n", "'queues' must be a list"),
    ("queues: [{topic: T, brokerName: b, queueId: x}]\nconsumers: [a]\n",
     "queueId must be a non-negative integer"),
    ("- just\n- a list\n", "expected a mapping"),
])
def test_error_bad_topology(cli, tmp_path, content, fragment):
    t = tmp_path / "t.yaml"
    t.write_text(content)
    assert_usage_error(cli(["allocate", "--topology", str(t)]), fragment)


def test_error_missing_topology_and_unreadable_config(cli, tmp_path):
    assert_usage_error(cli(["allocate", "--topology", str(tmp_path / "nope.yaml")]),
                       "does not exist")
    assert_usage_error(cli([*SHORT, "-s", "config", "--queue-config",
                            str(tmp_path / "nope.yaml")]), "queue config file", "does not exist")
    d = tmp_path / "dir.yaml"
    d.mkdir()
    assert_usage_error(cli([*SHORT, "-s", "config", "--queue-config", str(d)]), "is a directory")
    bad = tmp_path / "cfg.yaml"
    bad.write_text("a: [x\n")
    assert_usage_error(cli([*SHORT, "-s", "config", "--queue-config", str(bad)]),
                       "not valid YAML")
    assert_usage_error(cli([*SHORT, "-s", "config"]), "needs the per-consumer queue lists")


def test_error_input_combinations(cli, tmp_path):
    assert_usage_error(cli(["allocate"]), "nothing to allocate")
    assert_usage_error(cli(["allocate", "--group", "G"]),
                       "needs both --group and --topic (got only --group)")
    assert_usage_error(cli(["allocate", "--queues", "a:1"]), "--queues and --consumers go together")
    t = tmp_path / "t.yaml"
    t.write_text("queues: [a:1]\nconsumers: [x]\n")
    assert_usage_error(cli(["allocate", "--topology", str(t), "--queues", "a:1"]),
                       "--topology cannot be combined")
    assert_usage_error(cli([*SHORT, "--against-live"]), "--against-live needs live inputs")
    assert_usage_error(cli([*SHORT, "-s", "machine-room"]), "--rooms")
    assert_usage_error(cli(["allocate", "--queues", "a", "--consumers", "1"]), "bad entry")


def test_help_lists_options(cli):
    r = cli(["allocate", "--help"])
    for opt in ("--strategy", "--topology", "--queues", "--consumers", "--virtual-nodes",
                "--queue-config", "--rooms", "--inner", "--broker-room-regex",
                "--consumer-room-regex", "--previous", "--add-consumer", "--remove-consumer",
                "--compare", "--against-live", "--by-queue", "--list-strategies"):
        assert opt in r.stdout


def test_every_error_raised_by_allocate_has_a_hint():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = [*sorted((root / "mqctl" / "allocate").glob("*.py")),
             root / "mqctl" / "cli" / "allocate.py"]
    missing = []
    for f in files:
        for n in ast.walk(ast.parse(f.read_text())):
            if (isinstance(n, ast.Call) and getattr(n.func, "id", None) in (
                    "UsageError", "PluginError", "PartialFailure")
                    and not any(k.arg == "hint" for k in n.keywords) and len(n.args) < 2):
                missing.append(f"{f.name}:{n.lineno}")
    assert missing == []


def test_queue_config_shorthand_uses_the_topology_topic(cli, tmp_path):
    t = tmp_path / "t.yaml"
    t.write_text("topic: TopicOrder\nqueues: [broker-a:0, broker-a:1]\nconsumers: [a, b]\n")
    c = tmp_path / "c.yaml"
    c.write_text("a: [broker-a:1]\nb: [broker-a:0]\n")
    d = cli(["allocate", "--topology", str(t), "-s", "config", "--queue-config", str(c),
             "-o", "json"]).json
    assert d["assignments"]["a"] == [{"brokerName": "broker-a", "queueId": 1,
                                      "topic": "TopicOrder"}]
    assert d["unassigned"] == []


def test_topology_broadcasting(cli, tmp_path):
    t = tmp_path / "t.yaml"
    t.write_text("messageModel: broadcasting\nqueues: [b:0, b:1]\nconsumers: [x, y]\n")
    r = cli(["allocate", "--topology", str(t), "-o", "json"])
    d = r.json
    assert d["strategy"] == "broadcasting"
    assert d["assignments"]["x"] == d["assignments"]["y"] and len(d["assignments"]["x"]) == 2
    assert any("every consumer consumes every queue" in n for n in d["notes"])
    t.write_text("messageModel: FANOUT\nqueues: [b:0]\nconsumers: [x]\n")
    assert_usage_error(cli(["allocate", "--topology", str(t)]), "'messageModel' must be")

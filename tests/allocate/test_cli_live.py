"""``mqctl allocate --group G --topic T`` end to end over TCP against a scripted cluster."""

from __future__ import annotations

import pytest
from readonly import assert_read_only

from mqctl.models import MessageQueue
from mqctl.remoting.codes import RequestCode

from .fake_cluster import FakeCluster

T, G = "TopicOrder", "GID_ORDER"
A, B, C = "10.0.0.5@12345#1", "10.0.0.6@23456#2", "10.0.0.7@34567#3"


def q(b: str, i: int) -> MessageQueue:
    return MessageQueue(T, f"broker-{b}", i)


def qids(items: list[dict]) -> list[str]:
    return [f"{x['brokerName'][-1]}{x['queueId']}" for x in items]


def cluster(**kw) -> FakeCluster:
    base = {"topic": T, "group": G, "queues_per_broker": {"broker-a": 4, "broker-b": 4},
            "members": {"broker-a": [C, A, B], "broker-b": [A, B, C]}}
    base.update(kw)
    return FakeCluster(**base)


def live(cli, fc: FakeCluster, *extra: str):
    return cli(["--timeout", "3", "allocate", "-n", fc.namesrv, "-g", G, "-t", T, *extra])


def test_live_prediction_protocol_vector(cli):
    with cluster() as fc:
        r = live(cli, fc, "-s", "consistent-hash", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    # the protocol notes' vector, computed with the real Java ConsistentHashRouter
    assert {c: qids(v) for c, v in d["assignments"].items()} == {
        A: ["a0", "a1", "b1"], B: ["a2", "b0"], C: ["a3", "b2", "b3"]}
    assert d["group"] == G and d["live"]["agree"] is True
    assert d["live"]["messageModel"] == "CLUSTERING"
    # every broker of the topic was asked for the member list
    asked = {role for role, c in fc.received if c == RequestCode.GET_CONSUMER_LIST_BY_GROUP}
    assert asked == {"broker-a", "broker-b"}
    assert_read_only(fc)


def test_live_table_shows_brokers(cli):
    with cluster(members={"broker-a": [A, B], "broker-b": [A, B, C]}) as fc:
        r = live(cli, fc, "-o", "plain")
    assert r.exit_code == 0
    assert f"broker broker-a does not list {C}" in r.stdout
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()
            if line.startswith("broker-")}
    assert rows["broker-a"][1:3] == ["2", "NO"] and rows["broker-b"][1:3] == ["3", "yes"]


def test_live_what_if(cli):
    with cluster() as fc:
        d = live(cli, fc, "--add-consumer", "10.0.0.8@45678#4", "--remove-consumer", A,
                 "-o", "json").json
        assert_read_only(fc)
    assert d["summary"]["before"]["consumers"] == 3 and d["summary"]["after"]["consumers"] == 3
    assert d["summary"]["movedQueues"] == len(d["moves"]) > 0


def test_live_against_live_finds_inconsistent_client(cli):
    owned = {A: [q("a", 0), q("a", 1), q("a", 2)], B: [q("a", 3), q("b", 0), q("b", 1)],
             C: [q("b", 2), q("b", 3), q("b", 1)]}  # C also consumes b1: stale view
    with cluster(owned=owned) as fc:
        r = live(cli, fc, "--against-live", "-o", "json")
        assert_read_only(fc)
        infos = [c for _, c in fc.received if c == RequestCode.GET_CONSUMER_RUNNING_INFO]
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert len(infos) == 3
    assert [(qids([x["queue"]])[0], x["predicted"], x["reported"], x["kind"])
            for x in d["differences"]] == [("b1", [B], [B, C], "owned by several clients")]
    assert d["reported"]["strategies"] == {A: "avg", B: "avg", C: "avg"}


def test_live_against_live_all_consistent_plain(cli):
    owned = {A: [q("a", 0), q("a", 1), q("a", 2)], B: [q("a", 3), q("b", 0), q("b", 1)],
             C: [q("b", 2), q("b", 3)]}
    with cluster(owned=owned) as fc:
        r = live(cli, fc, "--against-live", "-o", "plain")
    assert "prediction matches what all 3 client(s) report" in r.stdout
    assert "prediction vs. what clients report: 0 difference(s)" in r.stdout


def test_live_client_not_answering_is_partial_failure(cli):
    owned = {A: [q("a", 0), q("a", 1), q("a", 2)], B: [q("a", 3), q("b", 0), q("b", 1)]}
    with cluster(owned=owned, silent_clients={C}) as fc:
        r = live(cli, fc, "--against-live", "-o", "json")
    assert r.exit_code == 8
    d = r.json
    assert C in d["reported"]["failures"]
    assert {qids([x["queue"]])[0] for x in d["differences"]} == {"b2", "b3"}
    assert "mqctl: error: 1 broker/client request(s) failed" in r.stderr


def test_live_broker_down_is_partial_failure(cli):
    with cluster(down={"broker-b"}) as fc:
        r = live(cli, fc, "-o", "json")
    assert r.exit_code == 8
    assert r.json["live"]["failedBrokers"].keys() == {"broker-b"}
    assert len(r.json["assignments"]) == 3  # broker-a's answer was enough


def test_live_broadcasting_and_pop(cli):
    with cluster(message_model="BROADCASTING") as fc:
        d = live(cli, fc, "-o", "json").json
    assert d["strategy"] == "broadcasting"
    assert all(len(v) == 8 for v in d["assignments"].values())
    with cluster(consume_type="CONSUME_POP") as fc:
        d = live(cli, fc, "-o", "json", "--against-live").json
        infos = [c for _, c in fc.received if c == RequestCode.GET_CONSUMER_RUNNING_INFO]
    assert d["strategy"] == "pop" and infos == []
    assert any("allocation does not apply" in n for n in d["notes"])


def test_live_offline_group_and_unknown_topic(cli):
    with cluster(members={}) as fc:
        r = live(cli, fc)
        assert r.exit_code == 2 and "has no online consumer on any broker" in r.stderr
        r = cli(["allocate", "-n", fc.namesrv, "-g", G, "-t", "NoSuchTopic"])
        assert r.exit_code == 2 and "has no route" in r.stderr


def test_live_unreachable_name_server(cli):
    from tcp_peer import refused_port

    with refused_port() as port:
        r = cli(["--timeout", "1", "allocate", "-n", f"127.0.0.1:{port}", "-g", G, "-t", T])
    assert r.exit_code == 3 and "Traceback" not in r.stderr


@pytest.mark.parametrize("strategy", ["avg", "avg-by-circle", "consistent-hash"])
def test_live_equals_offline(cli, tmp_path, strategy):
    with cluster() as fc:
        on = live(cli, fc, "-s", strategy, "-o", "json").json
    off = cli(["allocate", "-s", strategy, "--queues", "broker-a:4,broker-b:4", "--topic", T,
               "--consumers", ",".join([A, B, C]), "-o", "json"]).json
    assert on["assignments"] == off["assignments"]

"""`mqctl allocate` live inputs against the simulated cluster: the prediction equals what the
simulated Java-like clients actually own, and --against-live finds an inconsistent group."""

from __future__ import annotations

from mqctl.models import MessageQueue
from mqctl.remoting.codes import MUTATING_REQUESTS


def owned(sim, cid, topic):
    return {m for m in sim.call(lambda c: list(c.consumer(cid).pqs)) if m.topic == topic}


def test_prediction_equals_what_the_clients_own(cli, sim):
    sim.advance(25)
    r = cli(["-n", sim.namesrv_addr, "allocate", "-g", "GID_PAY", "-t", "TopicPay", "-o",
             "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["strategy"] == "avg" and d["group"] == "GID_PAY"
    assert len(d["assignments"]) == 3 and d["unassigned"] == [] and d["idle"] == []
    for cid, qs in d["assignments"].items():
        assert {MessageQueue(q["topic"], q["brokerName"], q["queueId"]) for q in qs} == owned(
            sim, cid, "TopicPay")
    assert not {x.code for x in sim.request_log} & set(MUTATING_REQUESTS)


def test_against_live_agrees_on_a_healthy_group(cli, sim):
    sim.advance(25)
    r = cli(["-n", sim.namesrv_addr, "allocate", "-g", "GID_PAY", "-t", "TopicPay",
             "--against-live", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert r.json.get("differences", []) == []


def test_against_live_finds_the_inconsistent_group(cli, sim):
    sim.advance(45)
    r = cli(["-n", sim.namesrv_addr, "allocate", "-g", "GID_MIXED", "-t", "TopicMixed",
             "--against-live", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    # broker-b does not list demo14, and demo14 allocates with AVG_BY_CIRCLE: clients disagree
    assert d["differences"], d
    assert any("10.0.4.40@4400#demo14" in str(x) for x in d["differences"])


def test_what_if_a_consumer_joins(cli, sim):
    sim.advance(25)
    r = cli(["-n", sim.namesrv_addr, "allocate", "-g", "GID_PAY", "-t", "TopicPay",
             "--add-consumer", "10.0.1.99@99", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert "10.0.1.99@99" in d["assignments"] and d["moves"]
    moved = {(m["queue"]["brokerName"] if isinstance(m.get("queue"), dict) else m["queue"])
             for m in d["moves"]}
    assert moved

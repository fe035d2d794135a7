"""A hostile-input catalogue: no number that was not read.

One reproduction per bullet, each a class:

* a group no broker knows is refused the same way with and without ``-t`` (a broker answers
  GET_CONSUME_STATS with a topic for any group name, 0 everywhere);
* a BROADCASTING group's offsets live in its clients: its lag is unknown in every view, under
  one name (state ``UNKNOWN``, reason ``broadcasting``), never 0 or a whole-queue "lag";
* the brokers' rate (messages handed to the group: mqadmin's "Consume TPS") and the clients'
  consumeOKTPS are two numbers with two names, and a pop group's clients are not counted twice;
* a per-topic rate summed over the brokers that answered is not shown as the topic's rate;
* ``allocate -g G -t T`` for a topic no client of G subscribes to predicts no owners;
* a queue that does not exist is a usage error wherever a command takes one.

Every expected number is read from the simulated brokers and clients. Each test failed on the
code before its fix (checked by running this file against that tree).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import run_cli
from sim_fixtures import running_sim

from mqctl.errors import ExitCode


@pytest.fixture(scope="module")
def demo() -> Iterator[object]:
    """The bundled demo after 90 simulated seconds (read-only tests share it)."""
    with running_sim("demo") as s:
        s.advance(90)
        yield s


def ns(sim: Any) -> dict[str, str]:
    return {"NAMESRV_ADDR": sim.namesrv_addr}


# ------------------------------------------------------------ a group no broker knows

@pytest.mark.parametrize("cmd", [["offsets", "show"], ["group", "progress"]],
                         ids=lambda c: " ".join(c))
@pytest.mark.parametrize("topic", [[], ["-t", "TopicPay"]], ids=["no-topic", "topic"])
def test_a_group_no_broker_knows_is_refused_with_and_without_topic(demo, cmd, topic):
    r = run_cli([*cmd, "GID_TYPO", *topic], env=ns(demo))
    assert r.exit_code == ExitCode.USAGE, r.stdout
    assert "'GID_TYPO' is not known to any broker" in r.stderr
    assert "LAG" not in r.stdout and "lag" not in r.stdout


def test_a_known_group_without_offsets_on_the_topic_is_shown_not_refused(demo):
    """GID_REPLAY exists (a subscription group, offsets on TopicPay): on TopicAudit its queues
    are `none` (never committed); only a group no broker knows is refused."""
    r = run_cli(["-o", "json", "offsets", "show", "GID_REPLAY", "-t", "TopicAudit"],
                env=ns(demo))
    assert r.exit_code == 0, r.stderr
    assert r.json["queues"] and all(q["committed"] is False and q["current"] is None
                                    for q in r.json["queues"])


# ------------------------------------------------------------ a queue that does not exist

@pytest.mark.parametrize("extra", [[], ["--client", "10.0.3.31@4301#demo07", "--execute"]],
                         ids=["plan", "client-execute"])
def test_locks_release_of_a_queue_the_topic_does_not_have_is_a_usage_error(demo, extra):
    """TopicOrder has 4 queues per broker: broker-a:99 names nothing (it was `state
    unowned`, and with --client an UNLOCK_BATCH_MQ for it was sent)."""
    from mqctl.remoting.codes import RequestCode

    demo.clear_request_log()
    r = run_cli(["locks", "release", "GID_ORDER", "-t", "TopicOrder", "--queue", "broker-a:99",
                 *extra], env=ns(demo))
    assert r.exit_code == ExitCode.USAGE, r.stdout + r.stderr
    assert "does not have: broker-a:99" in r.stderr and "unowned" not in r.stderr
    assert RequestCode.UNLOCK_BATCH_MQ not in {x.code for x in demo.request_log}


def test_allocate_queue_config_naming_a_queue_the_topic_does_not_have(demo, tmp_path):
    """Live, the route is read: a configured queue it does not have is bad input (offline the
    list is returned as AllocateMessageQueueByConfig returns it, tests/allocate)."""
    cfg = tmp_path / "qc.yaml"
    cfg.write_text('"10.0.1.11@4101#demo01": ["broker-a:99", "broker-a:0"]\n')
    r = run_cli(["allocate", "-g", "GID_PAY", "-t", "TopicPay", "--strategy", "config",
                 "--queue-config", str(cfg)], env=ns(demo))
    assert r.exit_code == ExitCode.USAGE, r.stdout
    assert "does not have: broker-a:99" in r.stderr and r.stdout == ""


# ------------------------------------------------------------ allocate: a topic not subscribed

def test_allocate_for_a_topic_the_group_does_not_subscribe_to_is_refused(demo):
    r = run_cli(["allocate", "-g", "GID_PAY", "-t", "TopicAudit"], env=ns(demo))
    assert r.exit_code == ExitCode.USAGE, r.stdout
    assert "GID_PAY does not subscribe to TopicAudit (it subscribes to TopicPay)" in r.stderr
    assert r.stdout == ""


def test_allocate_names_the_clients_that_do_not_subscribe_to_the_topic(sim_factory):
    """Two members, one subscribes to T, the other to U only: both are in T's member list, so
    the subscriber takes half of T (as the simulated client computes it) and the other half
    goes to a client that never consumes it: the prediction stands, with a warning."""
    s = sim_factory({
        "name": "half", "clock": {"mode": "manual"}, "brokers": [{"name": "broker-a"}],
        "topics": [{"name": "T", "queues": 4, "rate": 1}, {"name": "U", "queues": 1,
                                                            "rate": 1}],
        "groups": [{"name": "G", "topics": ["T"], "consumers": [
            {"id": "10.0.0.1@1"}, {"id": "10.0.0.2@2", "subscriptions": {"U": "*"}}]}]})
    s.advance(60)
    r = run_cli(["-o", "json", "allocate", "-g", "G", "-t", "T"], env=ns(s))
    assert r.exit_code == 0, r.stderr
    assert "do not subscribe to T (10.0.0.2@2)" in r.stderr
    owned = s.call(lambda c: sorted(f"{m.broker_name}:{m.queue_id}"
                                    for m in c.consumer("10.0.0.1@1").pqs if m.topic == "T"))
    got = r.json["assignments"]
    assert sorted(f"{q['brokerName']}:{q['queueId']}" for q in got["10.0.0.1@1"]) == owned
    assert len(got["10.0.0.2@2"]) == 4 - len(owned) > 0


# ------------------------------------------------------------ two rates, two names

def committed_total(sim, group: str, topic: str) -> int:
    return sim.call(lambda c: sum(v for b in c.brokers.values()
                                  for q, v in b.offsets.get((topic, group), {}).items()))


def test_pop_clients_consumed_tps_is_the_groups_rate_not_twice_it(sim):
    """GID_POP (two pop clients on TopicNews) consumed 4/s and its per-topic rate read 8.00:
    each simulated pop client consumed every message. A real pop client's consumeOKTPS counts
    what that client processed (ConsumerStatsManager keyed topic@group, fed by
    ConsumeMessagePopConcurrentlyService.processConsumeResult), so the sum over the clients is
    the group's rate; here it is checked against the group's committed offsets' progress."""
    sim.advance(120)
    before = committed_total(sim, "GID_POP", "TopicNews")
    sim.advance(60)
    rate = (committed_total(sim, "GID_POP", "TopicNews") - before) / 60
    r = run_cli(["-o", "json", "group", "progress", "GID_POP", "--no-retry"], env=ns(sim))
    assert r.exit_code == 0, r.stderr
    (topic,) = r.json["topics"]
    assert rate > 0
    assert topic["consume_tps_clients"] == pytest.approx(rate, rel=0.1)
    assert r.json["consume_tps_clients"] == pytest.approx(rate, rel=0.1)
    assert r.json["consume_tps"] == pytest.approx(rate, rel=0.1)  # the brokers agree


def test_the_brokers_and_the_clients_rates_have_two_names(demo):
    r = run_cli(["-o", "plain", "group", "progress", "GID_PAY", "--no-retry"], env=ns(demo))
    assert r.exit_code == 0, r.stderr
    assert "CONSUMED TPS" in r.stdout and "consume TPS" not in r.stdout
    total = next(ln for ln in r.stdout.splitlines() if ln.startswith("group GID_PAY:"))
    assert "pulled TPS" in total and "(brokers)" in total
    assert "consumed TPS" in total and "(clients)" in total


def test_a_filling_client_cache_says_which_rate_is_which():
    """Real 4.9.3: a group filling its client cache showed the brokers' 347.73 beside the
    clients' 8.95, both called consume TPS."""
    from mqctl.models import MessageQueue
    from mqctl.views.progress import GroupProgress, QueueProgress
    from mqctl.views.progress_rows import progress_result

    q = QueueProgress(MessageQueue("T", "broker-a", 0), 5000, 4000, None, 1, committed=True,
                      delay_ms=1000)
    p = GroupProgress("G", 1_717_200_000_000, "c", [q], None, [], consume_tps=347.73,
                      client_tps={"T": 8.95}, produce_tps={"T": 10.0})
    res = progress_result(p, retry=False)
    total = res.notes[0]
    assert "pulled TPS 347.73 (brokers)" in total and "consumed TPS 8.95 (clients)" in total
    why = next(n for n in res.notes if n.startswith("pulled TPS 347.73 vs consumed TPS 8.95"))
    assert "mqadmin's \"Consume TPS\"" in why and "caches are filling" in why
    assert res.data["consume_tps"] == 347.73 and res.data["consume_tps_clients"] == 8.95


# ------------------------------------------------------------ a rate summed over part of a topic

def test_one_broker_hung_the_topics_rates_are_not_partial_sums(sim):
    """broker-b hung: TopicPay's PRODUCE TPS was broker-a's alone, beside the clients' rate of
    the whole topic; the brokers' pulled TPS was broker-a's share. Both are unknown now."""
    sim.advance(60)
    sim.call(lambda c: c.faults.latency("broker-b", 8_000))
    r = run_cli(["--timeout", "2", "-o", "json", "group", "progress", "GID_PAY", "--no-retry"],
                env=ns(sim))
    assert r.exit_code == ExitCode.PARTIAL, r.stderr
    (topic,) = r.json["topics"]
    assert topic["brokers_not_included"] == ["broker-b"]
    assert topic["produce_tps"] is None and r.json["produce_tps"] is None
    assert r.json["consume_tps"] is None
    t = run_cli(["--timeout", "2", "-o", "plain", "group", "progress", "GID_PAY", "--no-retry"],
                env=ns(sim))
    assert "PRODUCE TPS `-` for TopicPay: broker-b did not answer" in t.stdout
    assert "pulled TPS unknown (broker-b did not answer)" in t.stdout


# ------------------------------------------------------------ BROADCASTING: one unknown, one name

def test_broadcasting_lag_is_unknown_in_every_view_under_one_name(demo, tmp_path):
    """GID_NEWS keeps its offsets in its clients (LocalFileOffsetStore): `group progress`
    printed `total lag 0, max time lag 0ms` (JSON lag 0, complete true) and with -t the whole
    queue as lag, `offsets show -t` CURRENT none with the whole queue as LAG, `snapshot` wrote
    no row and said `ok`. Now every view: lag unknown, state UNKNOWN, reason `broadcasting`;
    the broker offsets are real and shown."""
    env = ns(demo)
    maxes = demo.call(lambda c: {(b.name, q): b.max_offset("TopicNews", q)
                                 for b in c.brokers.values() for q in range(2)})
    g = run_cli(["-o", "json", "groups", "--match", "GID_NEWS"], env=env)
    assert g.exit_code == 0, g.stderr
    (row,) = g.json["groups"]
    assert (row["state"], row["lag"], row["lag_unknown"]) == ("UNKNOWN", None, "broadcasting")
    assert row["reason"].startswith("broadcasting:") and row["consume_tps"] is None
    for topic in ([], ["-t", "TopicNews"]):
        p = run_cli(["-o", "json", "group", "progress", "GID_NEWS", *topic], env=env)
        assert p.exit_code == 0, p.stderr
        assert p.json["total"]["lag"] is None and p.json["total"]["max_time_lag_s"] is None
        assert p.json["total"]["lag_unknown"] == "broadcasting"
        assert len(p.json["queues"]) == len(maxes)
        for q in p.json["queues"]:
            assert (q["lag"], q["consumer_offset"], q["time_lag_s"], q["inflight"]) == (
                None, None, None, None)
            assert q["lag_unknown"] == "broadcasting" and q["owner"] is None
            assert abs(q["broker_offset"] - maxes[(q["broker"], q["queue_id"])]) <= 2
        (t,) = p.json["topics"]
        assert t["lag"] is None and t["unowned"] is None
        o = run_cli(["-o", "json", "offsets", "show", "GID_NEWS", *topic], env=env)
        assert o.exit_code == 0, o.stderr
        assert len(o.json["queues"]) == len(maxes)
        assert all(x["lag"] is None and x["current"] is None and x["committed"] is None
                   and x["lag_unknown"] == "broadcasting" for x in o.json["queues"])
    text = run_cli(["-o", "plain", "group", "progress", "GID_NEWS", "--no-retry"], env=env)
    assert "group GID_NEWS: lag UNKNOWN (broadcasting" in text.stdout
    assert "total lag" not in text.stdout and "max time lag 0" not in text.stdout
    s = run_cli(["-o", "json", "snapshot", "--out", str(tmp_path), "-g", "GID_NEWS",
                 "--compress", "none"], env=env)
    assert s.exit_code == 0, s.stderr
    assert s.json["groups"] == [{"group": "GID_NEWS", "rows": len(maxes), "status": "ok",
                                 "lag_unknown": "broadcasting"}]
    from mqctl.snapshot import read_rows

    rows = read_rows(s.json["file"])
    assert len(rows) == len(maxes)
    for r in rows:
        assert (r["lag"], r["consumer_offset"], r["delay_ms"], r["committed"]) == (
            None, None, None, None)
        assert r["lag_unknown"] == r["delay_unknown"] == "broadcasting"
        assert r["message_model"] == "BROADCASTING" and r["owner"] is None

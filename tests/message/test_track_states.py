"""`mqctl message track`: each state is produced by a group of a simulated cluster
(tests/message/helpers.py), and each state appears only where its cause is."""

from __future__ import annotations

import json

from conftest import REAL_CORPUS, needs_corpus
from readonly import assert_read_only

from message.helpers import EXPECTED, TOPIC
from mqctl.message.track import DELAY_LEVELS_MS
from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R


def _track(cli, s, *args):
    r = cli(["-n", s.namesrv_addr, "-o", "json", "message", "track", *args])
    assert r.exit_code in (0, 8), r.stderr
    return json.loads(r.stdout)


def _msg_id(cli, s, offset):
    r = cli(["-n", s.namesrv_addr, "-o", "json", "message", "show", "-t", TOPIC, "-b",
             "broker-a", "-q", "0", "--offset", str(offset)])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def test_each_group_gets_the_state_of_its_cause(cli, world):
    s, offset = world
    shown = _msg_id(cli, s, offset)
    s.clear_request_log()
    doc = _track(cli, s, "--msg-id", shown["msgId"])
    assert_read_only(s)
    states = {g["group"]: g["state"] for g in doc["groups"]}
    assert states == EXPECTED
    assert doc["message"]["queueOffset"] == offset
    by = {g["group"]: g for g in doc["groups"]}
    assert "NoSuchTag" in by["G_FILTERED"]["evidence"] and "10.7.0.3@1" in by[
        "G_FILTERED"]["evidence"]
    assert by["G_DEAD"]["copy"]["topic"] == "%DLQ%G_DEAD"
    assert by["G_RETRYING"]["copy"]["reconsumeTimes"] >= 1
    assert by["G_RETRYING"]["nextDelayLevel"] == 3 + by["G_RETRYING"]["copy"]["reconsumeTimes"]
    assert by["G_WAITING"]["ahead"] == offset - by["G_WAITING"]["committed"]
    assert by["G_WAITING"]["waitMs"] > 0 and by["G_CONSUMED"]["waitMs"] is None
    assert by["G_CONSUMED"]["owner"] == "10.7.0.1@1"


def test_the_same_message_by_unique_key_and_by_key(cli, world):
    s, offset = world
    shown = _msg_id(cli, s, offset)
    by_uniq = _track(cli, s, "-t", TOPIC, "--unique-key", shown["properties"]["UNIQ_KEY"])
    own_key = shown["keys"][0]
    by_key = _track(cli, s, "-t", TOPIC, "--key", own_key)
    for doc in (by_uniq, by_key):
        assert doc["message"]["msgId"] == shown["msgId"]
        assert {g["group"]: g["state"] for g in doc["groups"]} == EXPECTED


def test_an_older_message_is_consumed_where_it_was_and_waits_where_it_was_not(cli, world):
    """A message from before the start: consumed by every group whose offset was at the end
    (no copy: nothing failed then), still waiting behind the stuck group's offset."""
    s, offset = world
    old = offset - 10  # before the start: the failing groups had consumed it already
    doc = _track(cli, s, "--msg-id", _msg_id(cli, s, old)["msgId"])
    states = {g["group"]: g["state"] for g in doc["groups"]}
    assert states["G_RETRYING"] == "consumed" and states["G_DEAD"] == "consumed"
    assert states["G_WAITING"] == "waiting" and states["G_OFFLINE"] == "offline"
    assert "retrying" not in states.values() and "dead-lettered" not in states.values()


def test_a_message_not_reached_yet_is_waiting_not_consumed(cli, world):
    """The newest message: no group past it except those that consumed it; G_FILTERED's tag
    rule wins over its offset, G_BROADCAST stays unknown."""
    s, _ = world
    mx = s.call(lambda c: c.brokers["broker-a"].max_offset(TOPIC, 0))
    doc = _track(cli, s, "--msg-id", _msg_id(cli, s, mx - 1)["msgId"])
    states = {g["group"]: g["state"] for g in doc["groups"]}
    assert states["G_FILTERED"] == "filtered" and states["G_BROADCAST"] == "broadcast: unknown"
    assert states["G_WAITING"] == "waiting"
    assert "broadcast: unknown" not in {v for k, v in states.items() if k != "G_BROADCAST"}
    assert "filtered" not in {v for k, v in states.items() if k != "G_FILTERED"}


def test_a_broker_that_does_not_answer_makes_the_state_unknown(cli, world):
    s, offset = world
    msg_id = _msg_id(cli, s, offset)["msgId"]
    s.call(lambda c: c.faults.error("broker-a", C.GET_CONSUME_STATS, R.SYSTEM_ERROR,
                                    "injected", times=50))
    try:
        doc = _track(cli, s, "--msg-id", msg_id)
    finally:
        s.call(lambda c: c.servers["broker-a"].faults.errors.clear())
    states = {g["group"]: g["state"] for g in doc["groups"]}
    assert "unknown" in states.values()
    unknown = [g for g in doc["groups"] if g["state"] == "unknown"]
    assert all(g["evidence"].startswith("not read") for g in unknown)
    # copies are still read: the dead letter outranks what could not be read
    assert states["G_DEAD"] == "dead-lettered"


def test_a_pop_consumer_is_unknown_until_its_unacked_copy_comes_back(cli, sim_factory):
    """A pop consumer's offset moves when it pops: until the invisible time (60 s) has passed
    and the unacked message is revived into %RETRY%G_POP_T, whether it was acked is unknown;
    then the copy makes it retrying."""
    from message.helpers import TRACK_SCENARIO

    sc = {**TRACK_SCENARIO, "groups": [g for g in TRACK_SCENARIO["groups"]
                                       if g["name"] == "G_POP"]}
    s = sim_factory(sc)
    offset = s.call(lambda c: c.brokers["broker-a"].max_offset(TOPIC, 0)) + 2
    s.advance(20)
    msg_id = _msg_id(cli, s, offset)["msgId"]
    early = _track(cli, s, "--msg-id", msg_id)["groups"]
    assert [(g["group"], g["state"]) for g in early] == [("G_POP", "unknown")]
    assert "pop consumer" in early[0]["evidence"] and "%RETRY%G_POP_T" in early[0]["evidence"]
    s.advance(60)
    late = _track(cli, s, "--msg-id", msg_id)["groups"]
    assert [(g["group"], g["state"]) for g in late] == [("G_POP", "retrying")]
    assert late[0]["copy"]["topic"] == "%RETRY%G_POP_T"


def test_a_message_on_the_second_broker_is_judged_by_that_broker_s_queue(cli, sim_factory):
    """Two brokers, a group behind on broker-b only: a message of broker-b waits, the same
    queue id and offset on broker-a is consumed."""
    s = sim_factory({"name": "two", "clock": {"mode": "manual"},
                     "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
                     "topics": [{"name": TOPIC, "queues": 1, "rate": 1, "history": "10m"}],
                     "groups": [{"name": "G", "topics": [TOPIC], "initial_lag": 100}]})
    # commit broker-a to its end: the group caught up there, not on broker-b
    s.call(lambda c: c.brokers["broker-a"].commit(
        "G", TOPIC, 0, c.brokers["broker-a"].max_offset(TOPIC, 0)))
    mx = s.call(lambda c: c.brokers["broker-b"].max_offset(TOPIC, 0))
    states = {}
    for broker in ("broker-a", "broker-b"):
        r = cli(["-n", s.namesrv_addr, "-o", "json", "message", "show", "-t", TOPIC, "-b",
                 broker, "-q", "0", "--offset", str(mx - 10)])
        doc = _track(cli, s, "--msg-id", json.loads(r.stdout)["msgId"])
        assert doc["message"]["brokerName"] == broker
        states[broker] = doc["groups"][0]["state"]
    assert states == {"broker-a": "consumed", "broker-b": "offline"}


def test_a_retry_waiting_out_its_delay_is_scheduled_for_its_group_only(cli, world):
    """A minute in, G_RETRYING's copy of the message waits in SCHEDULE_TOPIC_XXXX (queue =
    delay level - 1, REAL_TOPIC its retry topic) after its third failure; the other groups
    read the same copy by the message's unique key and leave it alone."""
    from mqctl.models import SCHEDULE_TOPIC
    from mqctl.sim.index import stored_message

    s, offset = world
    doc = _track(cli, s, "--msg-id", _msg_id(cli, s, offset)["msgId"])
    by = {g["group"]: g for g in doc["groups"]}
    r, c = by["G_RETRYING"], by["G_RETRYING"]["copy"]
    assert r["state"] == "retrying" and r["evidence"].startswith(
        f"scheduled in {SCHEDULE_TOPIC} broker-a/{c['queueId']}")
    assert f"delay level {r['delayLevel']} " in r["evidence"] and "due at ~" in r["evidence"]
    assert c["topic"] == SCHEDULE_TOPIC and c["queueId"] == r["delayLevel"] - 1
    assert r["delayLevel"] == 2 + c["reconsumeTimes"]  # 3 + the reconsume times it failed with
    assert r["nextDelayLevel"] == 3 + c["reconsumeTimes"]
    assert r["dueAt"] == c["storeTimestamp"] + DELAY_LEVELS_MS[r["delayLevel"] - 1]
    assert r["dueAt"] > s.call(lambda cl: cl.clock.now_ms())
    held = s.call(lambda cl: stored_message(cl.brokers["broker-a"], SCHEDULE_TOPIC,
                                            c["queueId"], c["queueOffset"]))
    assert held.properties["REAL_TOPIC"] == "%RETRY%G_RETRYING"
    assert held.properties["DELAY"] == str(r["delayLevel"])
    assert held.properties["UNIQ_KEY"] == doc["message"]["properties"]["UNIQ_KEY"]
    others = [g for g in doc["groups"] if g["group"] != "G_RETRYING"]
    assert others and not any(SCHEDULE_TOPIC in g["evidence"] for g in others)
    assert {g["group"]: g["state"] for g in others} == {
        k: v for k, v in EXPECTED.items() if k != "G_RETRYING"}


def test_a_delivered_copy_is_no_longer_scheduled(cli, sim_factory):
    """First failure: scheduled at level 3 (10 s) in both groups. Once delivered and failed
    again, G_AGAIN's copy waits at level 4, while G_ONCE (maxReconsumeTimes 1) dead-letters
    it: its delivered copy, still in SCHEDULE_TOPIC_XXXX, says nothing any more."""
    s = sim_factory({
        "name": "sched", "clock": {"mode": "manual"}, "brokers": [{"name": "broker-a"}],
        "topics": [{"name": TOPIC, "queues": 1, "rate": 1, "history": "10m"}],
        "groups": [
            {"name": "G_AGAIN", "topics": [TOPIC], "consumers": [
                {"id": "10.8.0.1@1", "fail_ratio": 1.0, "max_reconsume_times": 16}]},
            {"name": "G_ONCE", "topics": [TOPIC], "consumers": [
                {"id": "10.8.0.2@1", "fail_ratio": 1.0, "max_reconsume_times": 1}]}]})
    offset = s.call(lambda c: c.brokers["broker-a"].max_offset(TOPIC, 0)) + 1
    s.advance(5)
    msg_id = _msg_id(cli, s, offset)["msgId"]
    first = {g["group"]: g for g in _track(cli, s, "--msg-id", msg_id)["groups"]}
    assert {g: (r["state"], r.get("delayLevel")) for g, r in first.items()} == {
        "G_AGAIN": ("retrying", 3), "G_ONCE": ("retrying", 3)}
    assert all(r["evidence"].startswith("scheduled") for r in first.values())
    s.advance(25)
    later = {g["group"]: g for g in _track(cli, s, "--msg-id", msg_id)["groups"]}
    assert later["G_AGAIN"]["state"] == "retrying" and later["G_AGAIN"]["delayLevel"] == 4
    assert later["G_AGAIN"]["copy"]["reconsumeTimes"] == 2
    assert later["G_ONCE"]["state"] == "dead-lettered"
    assert "SCHEDULE_TOPIC_XXXX" not in later["G_ONCE"]["evidence"]


@needs_corpus()
def test_the_schedule_topic_is_the_real_brokers(world):
    """SCHEDULE_TOPIC_XXXX as both real versions' topics.json has it: 18 queues, perm 6."""
    from mqctl.models import SCHEDULE_TOPIC

    s, _ = world
    conf = s.call(lambda c: c.brokers["broker-a"].topics[SCHEDULE_TOPIC])
    for version in ("4.9.3", "5.3.3"):
        real = json.loads((REAL_CORPUS / version / "store-files" / "broker-a_topics.json")
                          .read_text())["topicConfigTable"][SCHEDULE_TOPIC]
        assert (conf.read, conf.write, conf.perm) == (
            real["readQueueNums"], real["writeQueueNums"], real["perm"])

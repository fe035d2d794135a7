"""The scenario knobs `mqctl diagnose` is tested with: the simulated cluster breaks the way
RocketMQ does (the classes each behaviour follows are named in mqctl/sim)."""

from __future__ import annotations

from sim_fixtures import start_sim

from mqctl.models import DLQ_PREFIX, RETRY_PREFIX, MessageQueue
from mqctl.remoting.client import RemotingClient
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.timeparse import set_clock


def cluster(groups, topics=None, brokers=None):
    return {"name": "knobs", "clock": {"mode": "manual"},
            "brokers": brokers or [{"name": "broker-a"}, {"name": "broker-b"}],
            "topics": topics or [{"name": "T", "queues": 1, "rate": 10, "history": "10m"}],
            "groups": groups}


def test_failed_messages_go_through_retry_to_the_dlq(sim_factory):
    """Every consumption fails, maxReconsumeTimes 2: a message is sent back with
    reconsumeTimes 0 and 1 (delay levels 3 and 4: 10 s, 30 s), then dead-lettered."""
    s = sim_factory(cluster([{"name": "G", "topics": ["T"], "consumers": [
        {"id": "10.9.1.1@1", "fail_ratio": 1.0, "max_reconsume_times": 2}]}],
        brokers=[{"name": "broker-a"}]))
    s.advance(9)
    assert s.call(lambda c: c.brokers["broker-a"].max_offset(RETRY_PREFIX + "G", 0)) == 0
    s.advance(200)

    def counts(c):
        b = c.brokers["broker-a"]
        return (b.max_offset(RETRY_PREFIX + "G", 0), b.max_offset(DLQ_PREFIX + "G", 0),
                c.consumer("10.9.1.1@1").status("T"))
    retry, dlq, status = s.call(counts)
    consumed = s.call(lambda c: c.committed_offset("G", MessageQueue("T", "broker-a", 0))
                      ) - 6000  # 10/s for 10 min of history before the start
    # each message is sent back twice (times 0, 1) and dead-lettered after its third failure
    assert dlq > 0 and retry >= dlq
    assert status["consumeOKTPS"] == 0 and status["consumeFailedTPS"] > 0
    assert dlq <= consumed
    chunks = s.call(lambda c: list(c.brokers["broker-a"].sent_back[(RETRY_PREFIX + "G", 0)]))
    assert {times for _, _, times in chunks} <= {1, 2}


def test_a_hung_message_holds_the_commit_until_consume_timeout(sim_factory):
    """The committed offset stays on the hung message while the later ones are consumed;
    ProcessQueue.cleanExpiredMsg (every consumeTimeout = 15 min from the start) sends back a
    message consumed for longer than 15 min, and the offset moves on."""
    s = sim_factory(cluster([{"name": "G", "topics": ["T"], "consumers": [
        {"id": "10.9.2.1@1", "stuck_message_at": "1m"}]}], brokers=[{"name": "broker-a"}]))
    mq = MessageQueue("T", "broker-a", 0)
    s.advance(70)
    held = s.call(lambda c: c.committed_offset("G", mq))
    s.advance(600)
    assert s.call(lambda c: c.committed_offset("G", mq)) == held
    info = s.call(lambda c: c.consumer("10.9.2.1@1").running_info()["mqTable"][mq])
    assert info["cachedMsgMinOffset"] == held and info["commitOffset"] == held
    # the later messages were consumed meanwhile (10 a second for 600 s): beyond a span of
    # 2000 a pull waits for the batch before it, it does not stop
    head = s.call(lambda c: c.consumer("10.9.2.1@1").pqs[mq].head)
    assert head - held >= 6000 - 10
    assert info["cachedMsgCount"] == 1 and info["cachedMsgMaxOffset"] == held
    # the cleanup at 15 min finds it consumed for 14 min only (not expired): still held
    s.advance(15 * 60 - 670 + 10)
    assert s.call(lambda c: c.committed_offset("G", mq)) == held
    s.advance(15 * 60)  # the one at 30 min sends it back
    assert s.call(lambda c: c.committed_offset("G", mq)) > held
    s.advance(15)  # sent back with delay level 3: in the retry topic 10 s later
    assert s.call(lambda c: c.brokers["broker-a"].max_offset(RETRY_PREFIX + "G", 0)) == 1


def test_consume_enable_false_refuses_the_group_on_that_broker():
    s = start_sim(cluster([{"name": "G", "topics": ["T"], "initial_lag": 10,
                            "config_by_broker": {"broker-b": {"consumeEnable": False}},
                            "consumers": [{"id": "10.9.3.1@1"}]}]))
    try:
        a, b = MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-b", 0)
        before = s.call(lambda c: (c.committed_offset("G", a), c.committed_offset("G", b)))
        s.advance(30)
        assert s.call(lambda c: c.committed_offset("G", a)) >= before[0] + 10 + 250
        assert s.call(lambda c: c.committed_offset("G", b)) == before[1]

        async def pull() -> int:  # what an external client gets (PullMessageProcessor)
            from mqctl.config import load_settings

            opts = load_settings(flags={"namesrv": s.namesrv_addr}).client_options()
            async with RemotingClient(opts) as client:
                resp = await client.invoke(
                    s.cluster.broker_addr("broker-b"), RequestCode.PULL_MESSAGE,
                    {"consumerGroup": "G", "topic": "T", "queueId": 0, "queueOffset": 0,
                     "maxMsgNums": 1, "sysFlag": 0, "commitOffset": 0, "suspendTimeoutMillis": 0,
                     "subVersion": 0}, ok_codes=(ResponseCode.NO_PERMISSION,))
                return resp.code

        assert s.run(pull()) == ResponseCode.NO_PERMISSION
    finally:
        set_clock(None)
        s.__exit__(None, None, None)


def test_perm_by_broker_and_retry_topic_brokers(sim_factory):
    """A write-only topic on broker-b: its queues there are left out of the subscription (as
    the client's topicRouteData2TopicSubscribeInfo does) and still produced to; a group's
    retry topic is on the brokers its clients heartbeat to."""
    s = sim_factory(cluster(
        [{"name": "G", "topics": ["T"], "consumers": [{"id": "10.9.4.1@1"}]}],
        topics=[{"name": "T", "queues": 2, "rate": 1, "history": "1m",
                 "perm_by_broker": {"broker-b": 2}, "brokers": ["broker-a", "broker-b"]},
                {"name": "U", "queues": 1, "rate": 1, "brokers": ["broker-c"]}],
        brokers=[{"name": "broker-a"}, {"name": "broker-b"}, {"name": "broker-c"}]))
    s.advance(10)
    assert s.call(lambda c: {mq.broker_name for mq in c.subscribe_queues("T")}) == {"broker-a"}
    body = s.call(lambda c: c.route_body("T"))
    assert {q["brokerName"]: q["perm"] for q in body["queueDatas"]} == {"broker-a": 6,
                                                                        "broker-b": 2}
    assert s.call(lambda c: c.max_offset(MessageQueue("T", "broker-b", 0))) == 70
    assert s.call(lambda c: c.topic_brokers(RETRY_PREFIX + "G")) == ["broker-a", "broker-b"]


def test_consume_rt_is_the_capacity_and_the_status_table(sim_factory):
    s = sim_factory(cluster([{"name": "G", "topics": ["T"], "initial_lag": 5000,
                              "consumers": [{"id": "10.9.5.1@1", "consume_rt": "250ms",
                                             "threads": 4}]}],
                            brokers=[{"name": "broker-a"}]))
    s.advance(61)
    st = s.call(lambda c: c.consumer("10.9.5.1@1").status("T"))
    assert st["consumeRT"] == 250.0 and st["consumeOKTPS"] == 16.0  # 4 threads / 250 ms
    idle = s.call(lambda c: c.consumer("10.9.5.1@1").status(RETRY_PREFIX + "G"))
    assert idle == {"consumeFailedMsgs": 0, "consumeFailedTPS": 0.0, "consumeOKTPS": 0.0,
                    "consumeRT": 0.0, "pullRT": 0.0, "pullTPS": 0.0}


def test_runtime_knobs_are_reported_as_given(sim_factory):
    s = sim_factory(cluster([], brokers=[{"name": "broker-a", "slave": True,
                                          "runtime": {"pageCacheLockTimeMills": "1500"},
                                          "slave_runtime": {"commitLogMaxOffset": "5"}}]))

    async def tables():
        from mqctl.admin import Admin
        from mqctl.config import load_settings

        opts = load_settings(flags={"namesrv": s.namesrv_addr}).client_options()
        async with RemotingClient(opts) as client:
            admin = Admin(client, s.namesrv_addr)
            return (await admin.broker_runtime_info(s.cluster.broker_addr("broker-a")),
                    await admin.broker_runtime_info(s.cluster.broker_addr("broker-a",
                                                                          slave=True)))

    master, slave = s.run(tables())
    assert master["pageCacheLockTimeMills"] == "1500" and "commitLogMaxOffset" not in master
    assert slave["commitLogMaxOffset"] == "5" and slave["pageCacheLockTimeMills"] == "0"

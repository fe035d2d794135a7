"""A simulated 4.9.3 client applying the legacy pushes of two brokers, as the real one does:
``MQClientInstance.resetOffset`` is synchronized and pauses 10 s per push, so broker-b's queues
are written 10 s after broker-a's (real: reset/client_log_after_reset.log, 38.69 then 48.72); a
push holds one of the client's callback threads meanwhile (``NettyRemotingClient.publicExecutor``,
``clientCallbackExecutorThreads``), and GET_CONSUMER_RUNNING_INFO is served by the same threads,
so with as many pushes as threads the running info waits for the first push to be applied; a
client that ignores the push (``ignore_reset_push``) keeps its process queues."""

from __future__ import annotations

import asyncio

from mqctl.errors import BrokerError
from mqctl.models import ConsumerRunningInfo, MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.codes import RequestCode, ResponseCode

MQ = MessageQueue
CID = "10.9.0.1@c1"


def scenario(**consumer) -> dict:
    return {"name": "push-threads", "clock": {"mode": "manual"}, "running_info_timeout": "0.3s",
            "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                        {"name": "broker-b", "version": "V4_9_3"}],
            "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "10m"}],
            "groups": [{"name": "G", "topics": ["T"], "initial_lag": 0,
                        "consumers": [{"id": CID, "version": "V4_9_3", **consumer}]}]}


async def _push(client: RemotingClient, addr: str, ts: int) -> None:
    await client.invoke(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
        "topic": "T", "group": "G", "timestamp": ts, "isForce": True})


async def _running_info(client: RemotingClient, addr: str) -> ConsumerRunningInfo:
    resp = await client.invoke(addr, RequestCode.GET_CONSUMER_RUNNING_INFO,
                               {"consumerGroup": "G", "clientId": CID, "jstackEnable": False},
                               timeout=5)
    return ConsumerRunningInfo.from_body(fastjson.loads(resp.body))


def push_both_then(s, after):
    """Push broker-a's reset to 10 min ago, then broker-b's, then ``after(client)``."""
    async def go():
        async with RemotingClient(ClientOptions(timeout=5)) as client:
            ts = s.clock.now_ms() - 600_000
            for b in ("broker-a", "broker-b"):
                await _push(client, s.cluster.broker_addr(b), ts)
            return await after(client)
    return asyncio.run(go())


def dropped(info: ConsumerRunningInfo) -> dict[str, bool]:
    return {f"{mq.broker_name}:{mq.queue_id}": pq.dropped for mq, pq in info.mq_table.items()
            if mq.topic == "T"}


def test_a_client_whose_threads_all_hold_pushes_answers_after_its_first_push_is_applied(
        sim_factory):
    s = sim_factory(scenario(callback_threads=2))
    s.advance(5)
    addr = s.cluster.broker_addr("broker-a")

    async def ask(client):
        try:
            await _running_info(client, addr)
        except BrokerError as exc:
            return exc
        return None

    err = push_both_then(s, ask)
    # both pushes hold the two threads and the clock stands still: the broker's forward
    # times out, with the real remark
    assert isinstance(err, BrokerError) and err.code == ResponseCode.CONSUME_MSG_TIMEOUT
    assert "RemotingTimeoutException: wait response on the channel" in (err.remark or "")
    s.advance(10)  # broker-a's push applied: a thread is free, broker-b's pause runs

    async def ask_again():
        async with RemotingClient(ClientOptions(timeout=5)) as client:
            return await _running_info(client, addr)

    info = asyncio.run(ask_again())
    assert dropped(info) == {"broker-a:0": False, "broker-a:1": False,
                             "broker-b:0": True, "broker-b:1": True}
    s.advance(10)
    assert set(dropped(asyncio.run(ask_again())).values()) == {False}


def test_a_client_that_ignores_the_push_keeps_its_process_queues(sim_factory):
    s = sim_factory(scenario(ignore_reset_push=True))
    s.advance(5)

    def pqs():
        return s.call(lambda c: {mq: (pq.last_lock_ts, pq.dropped) for mq, pq in
                                 c.consumer(CID).pqs.items() if mq.topic == "T"})

    before, offs = pqs(), s.call(lambda c: {mq: c.committed_offset("G", mq)
                                            for mq in c.subscribe_queues("T")})

    async def nothing(_client):
        return None

    push_both_then(s, nothing)
    s.advance(25)
    assert pqs() == before
    now = s.call(lambda c: {mq: c.committed_offset("G", mq) for mq in c.subscribe_queues("T")})
    assert all(now[mq] >= v for mq, v in offs.items())  # never back to the target

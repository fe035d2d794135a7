"""Behaviour of the simulated cluster: locks, resets, membership, faults, ACL, TLS, logs."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from sim_fixtures import LEGACY_SCENARIO
from test_sim_protocol import body, call

from mqctl.allocate import allocate_group
from mqctl.errors import ConnectError
from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.acl import Credentials
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R
from mqctl.remoting.frame import RemotingCommand
from mqctl.remoting.tls import TlsSettings
from mqctl.sim import load_scenario
from mqctl.sim.scenario import ScenarioError

MQ = MessageQueue


def lock_body(group: str, client: str, mqs: list[MessageQueue]) -> bytes:
    return fastjson.dumps({"clientId": client, "consumerGroup": group,
                           "mqSet": [m.to_dict() for m in mqs], "onlyThisBroker": False}).encode()


def locked(sim, group: str, client: str, mqs: list[MessageQueue], broker: str = "broker-a"
           ) -> set[MessageQueue]:
    resp = call(sim, broker, C.LOCK_BATCH_MQ, None, lock_body(group, client, mqs))
    return {MQ.from_dict(m) for m in body(resp)["lockOKMQSet"]}


def holder(sim, group: str, mq: MessageQueue) -> str | None:
    e = sim.call(lambda c: c.brokers[mq.broker_name].lock_holder(group, mq))
    return None if e is None else e.client_id


# ---------------------------------------------------------------------------- locks

def test_lock_lease_rules(sim):
    q = MQ("TopicOrder", "broker-a", 0)
    owner = holder(sim, "GID_ORDER", q)
    assert owner is not None  # an orderly consumer locked it at start
    assert locked(sim, "GID_ORDER", "intruder@1", [q]) == set()  # refused while held
    assert holder(sim, "GID_ORDER", q) == owner
    sim.advance(200)  # the owner keeps renewing (lockAll every 20 s)
    assert locked(sim, "GID_ORDER", "intruder@1", [q]) == set()
    # a free queue of another group is granted, renewed by its holder, refused to others
    free = MQ("TopicOrder", "broker-a", 3)
    assert locked(sim, "G_LOCKTEST", "a@1", [free]) == {free}
    sim.advance(40)
    assert locked(sim, "G_LOCKTEST", "a@1", [free]) == {free}  # renewal
    sim.advance(59)
    assert locked(sim, "G_LOCKTEST", "b@2", [free]) == set()  # 59 s after renewal: still held
    sim.advance(2)
    assert locked(sim, "G_LOCKTEST", "b@2", [free]) == {free}  # expired: takeover
    assert holder(sim, "G_LOCKTEST", free) == "b@2"
    # unlock by a non-holder is ignored, by the holder releases
    call(sim, "broker-a", C.UNLOCK_BATCH_MQ, None, lock_body("G_LOCKTEST", "a@1", [free]))
    assert holder(sim, "G_LOCKTEST", free) == "b@2"
    call(sim, "broker-a", C.UNLOCK_BATCH_MQ, None, lock_body("G_LOCKTEST", "b@2", [free]))
    assert holder(sim, "G_LOCKTEST", free) is None


def test_crashed_orderly_consumer_leaves_stale_locks(sim):
    crashed = "10.0.3.33@4303#demo09"
    sim.advance(60)
    mine = [mq for mq in sim.call(lambda c: list(c.consumer(crashed).pqs))
            if mq.topic == "TopicOrder"]
    assert mine
    sim.advance(65)  # crash_at 2m
    assert sim.call(lambda c: c.consumer(crashed).state) == "crashed"
    ids = body(call(sim, "broker-a", C.GET_CONSUMER_LIST_BY_GROUP,
                    {"consumerGroup": "GID_ORDER"}))["consumerIdList"]
    assert crashed not in ids  # the connection closed: removed at once
    # the broker still holds its locks; the new owners' lock attempts fail
    assert all(holder(sim, "GID_ORDER", mq) == crashed for mq in mine)
    survivors = [c for c in ids]
    new_owner = {}
    queues = sim.call(lambda c: c.subscribe_queues("TopicOrder"))
    for cid, mqs in allocate_group("AVG", queues, survivors).items():
        for mq in mqs:
            new_owner[mq] = cid
    for mq in mine:
        pq = sim.call(lambda c, mq=mq: c.consumer(new_owner[mq]).pqs.get(mq))
        assert pq is None  # "add a new mq failed ... because lock failed"
    sim.advance(60)  # lease (60 s after the crashed client's last renewal) ran out
    for mq in mine:
        assert holder(sim, "GID_ORDER", mq) == new_owner[mq]
        pq = sim.call(lambda c, mq=mq: c.consumer(new_owner[mq]).pqs[mq])
        assert pq.locked


def test_hung_consumer_stays_member_then_expires(sim):
    cid = "10.0.1.13@4103#demo03"
    sim.call(lambda c: c.consumer(cid).hang())
    t0 = sim.clock.now_ms()
    resp = call(sim, "broker-a", C.GET_CONSUMER_RUNNING_INFO,
                {"consumerGroup": "GID_PAY", "clientId": cid, "jstackEnable": "false"})
    assert resp.code == R.CONSUME_MSG_TIMEOUT and "Timeout" in resp.remark
    del t0
    sim.advance(100)
    assert cid in body(call(sim, "broker-a", C.GET_CONSUMER_LIST_BY_GROUP,
                            {"consumerGroup": "GID_PAY"}))["consumerIdList"]
    sim.advance(40)  # > 120 s without heartbeat: channel expired
    assert cid not in body(call(sim, "broker-a", C.GET_CONSUMER_LIST_BY_GROUP,
                                {"consumerGroup": "GID_PAY"}))["consumerIdList"]


# ---------------------------------------------------------------------------- membership

def test_join_and_leave_rebalance_as_java(sim):
    queues = sim.call(lambda c: c.subscribe_queues("TopicPay"))
    sim.advance(3600 + 25)  # demo04 joins at 60m
    members = sorted(body(call(sim, "broker-a", C.GET_CONSUMER_LIST_BY_GROUP,
                               {"consumerGroup": "GID_PAY"}))["consumerIdList"])
    assert len(members) == 4
    want = allocate_group("AVG", queues, members)
    for cid, mqs in want.items():
        got = sim.call(lambda c, cid=cid: {m for m in c.consumer(cid).pqs if m.topic ==
                                           "TopicPay"})
        assert got == set(mqs), cid


def test_duplicate_ids_get_the_same_queues(sim):
    sim.advance(25)
    dup = sim.call(lambda c: [set(x.pqs) for x in c.consumers("GID_DUP")
                              if x.client_id == "172.17.0.2@1"])
    assert len(dup) == 2 and dup[0] == dup[1] and dup[0]
    other = sim.call(lambda c: set(c.consumer("172.17.0.3@1").pqs))
    owned = dup[0] | other
    all_q = set(sim.call(lambda c: c.subscribe_queues("TopicAudit")))
    assert {q for q in all_q if q not in owned}  # some queues have no consumer


# ---------------------------------------------------------------------------- resets

def reset_ext(topic: str = "TopicPay", group: str = "GID_REPLAY", **kw: Any) -> dict[str, Any]:
    return {"topic": topic, "group": group, "timestamp": -1, "isForce": "true", "queueId": -1,
            **kw}


def test_server_side_reset_explicit_and_by_time(sim):
    mq = MQ("TopicPay", "broker-a", 0)
    mx = sim.call(lambda c: c.max_offset(mq))
    resp = call(sim, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET,
                reset_ext(queueId=0, offset=0))
    assert fastjson.mq_map(body(resp)["offsetTable"]) == {mq: 0}
    assert sim.call(lambda c: c.committed_offset("GID_REPLAY", mq)) == 0
    bad = call(sim, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET,
               reset_ext(queueId=0, offset=mx + 5))
    assert (bad.code, bad.remark) == (R.SYSTEM_ERROR, f"Target offset {mx + 5} not in consume "
                                      f"queue range [0-{mx}]")
    ts = sim.clock.start_ms - 1_800_000
    resp = call(sim, "broker-b", C.INVOKE_BROKER_TO_RESET_OFFSET, reset_ext(timestamp=ts))
    table = fastjson.mq_map(body(resp)["offsetTable"])
    b = sim.cluster.brokers["broker-b"]
    assert table == {MQ("TopicPay", "broker-b", q): b.search("TopicPay", q, ts)
                     for q in range(4)}
    slave = call(sim, "broker-a#1", C.INVOKE_BROKER_TO_RESET_OFFSET, reset_ext())
    assert (slave.code, slave.remark) == (R.SYSTEM_ERROR, "Can not reset offset in slave broker")
    nog = call(sim, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET, reset_ext(group="GID_X"))
    assert (nog.code, nog.remark) == (R.SUBSCRIPTION_GROUP_NOT_EXIST, "Group GID_X does not "
                                      "exist")


def test_server_side_reset_wins_over_online_commits(sim):
    mq = MQ("TopicPay", "broker-a", 1)
    sim.advance(10)
    owner = next(cid for cid in ("10.0.1.11@4101#demo01", "10.0.1.12@4102#demo02",
                                 "10.0.1.13@4103#demo03")
                 if mq in sim.call(lambda c, cid=cid: c.consumer(cid).pqs))
    call(sim, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET,
         reset_ext(group="GID_PAY", queueId=1, offset=100))
    # pending: a client's commit is acknowledged but ignored
    up = call(sim, "broker-a", C.UPDATE_CONSUMER_OFFSET, {
        "consumerGroup": "GID_PAY", "topic": "TopicPay", "queueId": 1, "commitOffset": 999999})
    assert up.code == 0 and up.remark == "Offset has been previously reset"
    q = call(sim, "broker-a", C.QUERY_CONSUMER_OFFSET, {
        "consumerGroup": "GID_PAY", "topic": "TopicPay", "queueId": 1,
        "setZeroIfNotFound": "false"})
    assert q.ext("offset") == "100"
    sim.advance(1)  # the next pull jumps to 100 and the consumer continues from there
    pq = sim.call(lambda c: c.consumer(owner).pqs[mq])
    assert pq.position >= 100
    sim.advance(6)  # the reset was consumed by the pull: commits count again
    committed = sim.call(lambda c: c.committed_offset("GID_PAY", mq))
    assert 100 <= committed <= sim.call(lambda c: c.consumer(owner).pqs[mq].position)
    assert committed != 999999


LEGACY = LEGACY_SCENARIO


def test_legacy_reset_needs_online_consumers_and_applies_after_pause(sim_factory):
    s = sim_factory(LEGACY)
    s.advance(1)
    off = call(s, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET,
               reset_ext(topic="T", group="G_OFF"))
    assert off.code == R.CONSUMER_NOT_ONLINE
    assert off.remark.startswith("Consumer not online, so can not reset offset, Group: G_OFF")
    mq = MQ("T", "broker-a", 0)
    before = s.call(lambda c: c.committed_offset("G_ON", mq))
    start = s.clock.start_ms
    # without force, a target ahead of the current offset keeps the current offset
    resp = call(s, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET,
                reset_ext(topic="T", group="G_ON", isForce="false"))
    assert fastjson.mq_map(body(resp)["offsetTable"])[mq] == before
    # with force to a time 10 minutes back: 10 s client pause before it is written
    ts = start - 600_000
    resp = call(s, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET,
                reset_ext(topic="T", group="G_ON", timestamp=ts, isForce="true"))
    target = fastjson.mq_map(body(resp)["offsetTable"])[mq]
    assert target == s.cluster.brokers["broker-a"].search("T", 0, ts) and target < before
    s.advance(5)
    assert s.call(lambda c: c.committed_offset("G_ON", mq)) == before  # still paused
    # MQClientInstance.resetOffset is synchronized: the first (unforced) push is applied at
    # 10 s, with the offsets it carried; the forced one gets its own 10 s pause after that
    s.advance(6)
    assert s.call(lambda c: c.committed_offset("G_ON", mq)) == before
    s.advance(10)
    assert s.call(lambda c: c.committed_offset("G_ON", mq)) == target


def test_online_consumer_overwrites_a_direct_offset_write(sim_factory):
    s = sim_factory(LEGACY)
    s.advance(2)
    mq = MQ("T", "broker-a", 1)
    before = s.call(lambda c: c.committed_offset("G_ON", mq))
    call(s, "broker-a", C.UPDATE_CONSUMER_OFFSET, {"consumerGroup": "G_ON", "topic": "T",
                                                   "queueId": 1, "commitOffset": 0})
    assert s.call(lambda c: c.committed_offset("G_ON", mq)) == 0
    s.advance(6)  # the client's periodic commit (every 5 s) writes its own offset back
    assert s.call(lambda c: c.committed_offset("G_ON", mq)) == before


# ---------------------------------------------------------------------------- faults

def test_faults(sim):
    addr = sim.cluster.servers["broker-b"].addr

    async def invoke(code: int, ext: dict[str, Any] | None = None, timeout: float = 3
                     ) -> RemotingCommand:
        async with RemotingClient(ClientOptions(timeout=timeout)) as c:
            return await c.invoke(addr, code, ext, check=False)

    sim.call(lambda c: c.faults.error("broker-b", C.GET_MAX_OFFSET, R.SYSTEM_BUSY,
                                      "[REJECTREQUEST]system busy", times=2))
    got = [asyncio.run(invoke(C.GET_MAX_OFFSET, {"topic": "TopicPay", "queueId": 0})).code
           for _ in range(3)]
    assert got == [R.SYSTEM_BUSY, R.SYSTEM_BUSY, R.SUCCESS]
    sim.call(lambda c: c.faults.latency("broker-b", 300))
    import time
    t0 = time.perf_counter()
    asyncio.run(invoke(C.GET_MAX_OFFSET, {"topic": "TopicPay", "queueId": 0}))
    assert time.perf_counter() - t0 >= 0.3
    with pytest.raises(Exception) as ei:
        asyncio.run(invoke(C.GET_MAX_OFFSET, {"topic": "TopicPay", "queueId": 0},
                           timeout=0.1))
    assert "timed out" in str(ei.value)
    sim.call(lambda c: c.faults.clear())
    sim.call(lambda c: c.faults.drop_next("broker-b", 1))
    with pytest.raises(ConnectError, match="closed by peer"):
        asyncio.run(invoke(C.GET_MAX_OFFSET, {"topic": "TopicPay", "queueId": 0}))
    sim.call(lambda c: c.faults.broker_down("broker-b"))
    sim.advance(0.01)
    with pytest.raises(ConnectError, match="refused"):
        asyncio.run(invoke(C.GET_MAX_OFFSET, {"topic": "TopicPay", "queueId": 0}))
    sim.call(lambda c: c.faults.broker_up("broker-b"))
    import time as _t
    _t.sleep(0.2)
    assert asyncio.run(invoke(C.GET_MAX_OFFSET, {"topic": "TopicPay", "queueId": 0})).code == 0


# ---------------------------------------------------------------------------- ACL / TLS

ACL = {"name": "acl", "clock": {"mode": "manual"}, "brokers": ["broker-a"],
       "topics": [{"name": "T", "queues": 1}],
       "acl": {"accounts": [{"access_key": "ops", "secret_key": "s3cret-ops-key"}]}}


def test_acl_enforced(sim_factory):
    s = sim_factory(ACL)
    addr = s.cluster.servers["broker-a"].addr

    async def invoke(creds: Credentials | None, body_bytes: bytes = b"",
                     tamper: bool = False) -> RemotingCommand:
        async with RemotingClient(ClientOptions(credentials=creds)) as c:
            cmd = c.build(C.GET_MAX_OFFSET, {"topic": "T", "queueId": 0}, body_bytes)
            if tamper:
                cmd = cmd.with_(body=body_bytes + b"x")
            conn = await c._connection(addr)
            return await conn.request(cmd, 3)

    assert asyncio.run(invoke(Credentials("ops", "s3cret-ops-key"))).code == 0
    wrong = asyncio.run(invoke(Credentials("ops", "wrong")))
    assert (wrong.code, wrong.remark) == (R.NO_PERMISSION, "check signature failed.")
    missing = asyncio.run(invoke(None))  # ACL 2.0: no AccessKey -> no username
    assert (missing.code, missing.remark) == (R.NO_PERMISSION, "username cannot be null.")
    who = asyncio.run(invoke(Credentials("nobody", "x")))
    assert (who.code, who.remark) == (R.NO_PERMISSION, "User:nobody is not found.")
    tampered = asyncio.run(invoke(Credentials("ops", "s3cret-ops-key"), b'{"a":1}', tamper=True))
    assert tampered.code == R.NO_PERMISSION
    assert not any("s3cret" in (r.remark or "") for r in (wrong, missing, who, tampered))


def test_tls(sim_factory):
    s = sim_factory({**ACL, "acl": {}, "tls": {"enabled": True}})
    ca = s.cluster.tls_cert_file
    assert ca

    async def invoke(tls: TlsSettings) -> RemotingCommand:
        async with RemotingClient(ClientOptions(tls=tls, timeout=2)) as c:
            return await c.invoke(s.namesrv_addr, C.GET_BROKER_CLUSTER_INFO)

    assert asyncio.run(invoke(TlsSettings(enabled=True, ca_file=ca))).code == 0
    assert asyncio.run(invoke(TlsSettings(enabled=True, insecure=True))).code == 0
    with pytest.raises(ConnectError):
        asyncio.run(invoke(TlsSettings()))


# ---------------------------------------------------------------------------- logs

def test_logs_in_rocketmq_formats(sim_factory, tmp_path):
    s = sim_factory("demo", log_dir=str(tmp_path))
    s.advance(130)
    text = (tmp_path / "clients" / "10.0.3.31@4301#demo07" / "rocketmq_client.log").read_text()
    # the real 5.3.3 client writes no caller data: every line of 5.3.3/client-logs/*.log has
    # [<logger>#?:?] (the `%method:%line` of rmq.client.logback.xml behind an async appender)
    line = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (INFO |WARN |ERROR) "
                      r"\[\d+\] \[[^]]+\] \[[A-Za-z.]+#\?:\?\] - ")
    assert text.splitlines() and all(line.match(ln) for ln in text.splitlines())
    assert "[o.a.r.c.i.c.RebalanceImpl#?:?] - client rebalanced result changed." in text
    assert "client rebalanced result changed. allocateMessageQueueStrategyName=AVG, " \
           "group=GID_ORDER, topic=TopicOrder, clientId=10.0.3.31@4301#demo07" in text
    assert "doRebalance, GID_ORDER, add a new mq, MessageQueue [topic=TopicOrder" in text
    lock = (tmp_path / "brokers" / "broker-a" / "lock.log").read_text()
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO AdminBrokerThread_1 - "
                     r"RebalanceLockManager#tryLockBatch: lock a message which has not been "
                     r"locked yet, group=GID_ORDER, clientId=", lock, re.M)


# ---------------------------------------------------------------------------- scenarios

@pytest.mark.parametrize("doc, fragment", [
    ({"brokers": []}, "brokers: at least one broker is needed"),
    ({"brokers": ["a"], "topics": [{"name": "T", "brokers": ["zz"]}]},
     "topics[0].brokers[0]: unknown broker 'zz'"),
    ({"brokers": ["a"], "topics": [{"name": "T"}], "groups": [{"name": "G", "consumers": [
        {"id": "c", "behaviour": "sleepy"}]}]},
     "groups[0].consumers[0].behaviour: unknown value 'sleepy' (healthy, slow, stuck, crash, "
     "hang)"),
    ({"brokers": ["a"], "topics": [{"name": "T"}], "groups": [{"name": "G", "consumers": [
        {"id": "c", "behaviour": "crash"}]}]},
     "groups[0].consumers[0].at: behaviour crash needs the time it happens"),
    ({"brokers": ["a"], "topics": [{"name": "T", "per_queue": [{"queue": 4}]}]},
     "topics[0].per_queue[0].queue: queue 4 does not exist (the topic has 4)"),
    ({"brokers": ["a"], "topics": [{"name": "T", "per_queue": [
        {"queue": 0, "store_times": ["-1m", "-2m"]}]}]},
     "topics[0].per_queue[0].store_times[1]: store times must not decrease"),
    ({"brokers": ["a"], "topics": [{"name": "T", "per_queue": [{"queue": 0, "broker": "b"}]}]},
     "topics[0].per_queue[0].broker: 'b' does not host this topic"),
    ({"brokers": ["a"], "clock": {"start": "yesterday-ish"}}, "clock.start: cannot parse time"),
    ({"brokers": ["a"], "colour": 1}, "colour: unknown key"),
    ({"brokers": ["a"], "topics": [{"name": "T", "queues": "four"}]},
     "topics[0].queues: expected an integer"),
    ({"brokers": ["a"], "topics": [{"name": "T"}], "groups": [{"name": "G", "consumers": [
        {"id": "c", "crash_at": "soon"}]}]},
     "groups[0].consumers[0].crash_at: 'soon' is not a duration"),
    ({"brokers": ["a"], "clock": {"mode": "warp"}}, "clock.mode: unknown value 'warp'"),
    ({"brokers": ["a"], "faults": [{"action": "down", "broker": "b"}]},
     "faults[0].broker: unknown broker 'b'"),
])
def test_scenario_validation(doc, fragment):
    with pytest.raises(ScenarioError) as ei:
        load_scenario(doc)
    assert fragment in ei.value.message


def test_bundled_scenarios_load():
    from mqctl.sim import bundled

    names = bundled()
    assert {"demo", "rooms"} <= set(names)
    for n in names:
        sc = load_scenario(n)
        assert sc.brokers and sc.topics
    assert json.dumps(names)


def test_documented_example_scenario_loads():
    """The complete example in docs/scenario.md is valid and means what it says."""
    import yaml
    from conftest import ROOT

    text = (ROOT / "docs" / "scenario.md").read_text()
    block = text.split("## Scenario format", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    sc = load_scenario(yaml.safe_load(block))
    assert [b.name for b in sc.brokers] == ["broker-a", "hz@broker-b", "broker-old"]
    assert not sc.brokers[1].server_side_reset and sc.brokers[0].slave
    assert sc.brokers[2].version == 409 and not sc.brokers[2].server_side_reset
    pay = sc.groups[0]
    assert [c.behaviour for c in pay.consumers] == ["healthy", "slow", "hang", "healthy"]
    assert pay.consumers[1].crash_at_s == 600 and pay.consumers[3].join_at_s == 1800
    assert pay.consumers[1].behaviour_at_s == 60 and pay.consumers[2].hang_at_s == 300
    assert (pay.consumers[1].silent_at_s, pay.consumers[1].silent_for_s) == (240, 40)
    assert pay.consumers[1].callback_threads == 2 and pay.consumers[1].ignore_reset_push
    assert pay.consumers[0].callback_threads == 4 and not pay.consumers[0].ignore_reset_push
    a = pay.consumers[0]  # the knobs mqctl diagnose is tested with
    assert (a.consume_rt_ms, a.fail_ratio, a.max_reconsume_times, a.stuck_message_at_s) == (
        300, 0.2, 2, 300)
    topic = sc.topic("TopicPay")
    assert topic.queue_spec("broker-a", 0).rate == 0.5  # type: ignore[union-attr]
    assert topic.queue_spec("hz@broker-b", 0) is None
    assert topic.queue_spec("hz@broker-b", 1).min_offset == 5000  # type: ignore[union-attr]
    assert topic.queue_spec("hz@broker-b", 2).store_times_ms == (  # type: ignore[union-attr]
        -600_000, -600_000, -600_000, -300_000, 0, 30_000)
    assert sc.start_ms == 1_717_200_000_000
    # ... and it runs (manual clock, no log files in the working directory)
    from mqctl.sim import SimThread

    with SimThread(load_scenario(sc, log_dir=None), clock="manual") as sim:
        b = sim.cluster.brokers["hz@broker-b"]
        assert sim.clock.now_ms() == sc.start_ms and b.max_offset("TopicPay", 2) == 5
        sim.advance(30)
        assert b.max_offset("TopicPay", 2) == 6 and b.min_offset("TopicPay", 1) == 5000
        sim.advance(1)  # then the topic's rate (5/s) goes on after the last explicit message
        assert b.max_offset("TopicPay", 2) == 11
        a = sim.cluster.brokers["broker-a"]
        assert a.max_offset("TopicPay", 0) == 3600  # 0.5/s x 2 h of history, quiet until 2m
        sim.advance(60 + 29 + 10)
        assert a.max_offset("TopicPay", 0) == 3605
    assert pay.consumers[3].version == 409 and pay.consumers[3].heartbeat_brokers == (
        "broker-a",)
    assert sc.topic("TopicPay").rate_changes[0].at_s == 4800
    assert [f.action for f in sc.faults] == ["down", "latency", "error", "drop"]
    assert sc.acl.enabled and sc.tls.enabled and sc.clock == "accelerated"

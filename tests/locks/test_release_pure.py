"""Release planning without a cluster: holder choice, refusal, queue syntax, the body."""

from __future__ import annotations

import pytest

from locks.helpers import NOW, capture, mq, pq, queues, running
from mqctl.errors import ConnectError, RefusedError, UsageError
from mqctl.locks import (
    BROKER_LEASE_MS,
    Claim,
    StoredClient,
    build_view,
    master_addr,
    parse_queue_spec,
    plan_release,
    resolve_queue,
)
from mqctl.models import BrokerData, MessageQueue, QueueData, TopicRoute

QS = queues(4)
Q3 = mq("broker-a:3")


def view(clients, previous=None, topics=("T",), qbt=None, **kw):
    return build_view(capture(clients, topics=topics, **kw), now=NOW,
                      queues_by_topic=qbt or {"T": QS}, previous=previous)[0]


@pytest.mark.parametrize("text,expect", [("broker-a:3", ("broker-a", 3)),
                                         (" hz@broker-a:12 ", ("hz@broker-a", 12)),
                                         ("a:b:0", ("a:b", 0))])
def test_parse_queue_spec(text, expect):
    assert parse_queue_spec(text) == expect


@pytest.mark.parametrize("text", ["broker-a", "broker-a:", ":3", "broker-a:x", "broker-a:-1", ""])
def test_parse_queue_spec_rejects(text):
    with pytest.raises(UsageError) as ei:
        parse_queue_spec(text)
    assert "expected BROKER:QUEUE_ID" in ei.value.message
    assert ei.value.exit_code == 2


def test_plan_release_of_a_crashed_holder_from_the_state_file():
    gone = StoredClient("dead@7", NOW - 10_000,
                        (Claim("dead@7", Q3, True, NOW - 12_000, live=False,
                               observed_ts=NOW - 10_000),))
    v = view({"a@1": running({})}, previous={"dead@7": gone})
    assert v.queue(Q3).state.value == "stale"
    plan = plan_release(v, Q3, "127.0.0.1:10911")
    assert plan.holder == "dead@7"
    assert not plan.alive_renewing
    assert plan.body() == {"consumerGroup": "G", "clientId": "dead@7",
                           "mqSet": [{"topic": "T", "brokerName": "broker-a", "queueId": 3}],
                           "onlyThisBroker": False}
    assert "UNLOCK_BATCH_MQ" in plan.describe() and "127.0.0.1:10911" in plan.describe()
    assert plan.to_dict()["state"] == "stale"


def test_plan_release_refuses_a_live_renewing_holder_unless_forced():
    v = view({"a@1": running({Q3: pq(True, 3000)})})
    with pytest.raises(RefusedError) as ei:
        plan_release(v, Q3, "127.0.0.1:10911")
    assert "alive and renewing" in ei.value.message and ei.value.exit_code == 6
    assert "--force" in ei.value.hint
    plan = plan_release(v, Q3, "127.0.0.1:10911", force=True)
    assert plan.holder == "a@1" and plan.alive_renewing and plan.forced
    assert any("takes the lock back" in w for w in plan.warnings)


def test_plan_release_for_a_named_client_refuses_when_another_holds_and_renews():
    v = view({"a@1": running({Q3: pq(True, 3000)}), "b@2": running({})})
    with pytest.raises(RefusedError) as ei:
        plan_release(v, Q3, "127.0.0.1:10911", client="b@2")
    assert ei.value.message.startswith("a@1 holds and renews the lock of broker-a:3, not b@2")
    assert plan_release(v, Q3, "127.0.0.1:10911", client="b@2", force=True).holder == "b@2"


def test_plan_release_allows_a_live_holder_that_stopped_renewing():
    v = view({"a@1": running({Q3: pq(True, 45_000)})})
    plan = plan_release(v, Q3, "127.0.0.1:10911")
    assert plan.holder == "a@1" and not plan.alive_renewing


def test_plan_release_without_a_holder_needs_client():
    v = view({"a@1": running({})})
    with pytest.raises(UsageError) as ei:
        plan_release(v, Q3, "127.0.0.1:10911")
    assert "no client is recorded" in ei.value.message and "--client" in ei.value.hint
    plan = plan_release(v, Q3, "127.0.0.1:10911", client="x@9")
    assert plan.holder == "x@9"
    assert any("not recorded" in w for w in plan.warnings)


def test_plan_release_two_live_lock_claimers_need_client():
    v = view({"a@1": running({Q3: pq(True, 50_000)}), "b@2": running({Q3: pq(True, 40_000)})})
    with pytest.raises(UsageError) as ei:
        plan_release(v, Q3, "127.0.0.1:10911")
    assert "--client" in ei.value.message


def test_plan_release_of_a_lapsed_lease_warns_it_is_harmless():
    gone = StoredClient("hung@3", NOW - 100_000,
                        (Claim("hung@3", Q3, True, NOW - BROKER_LEASE_MS - 5000, live=False,
                               observed_ts=NOW - 100_000),))
    v = view({"a@1": running({}), "hung@3": "timeout"}, previous={"hung@3": gone})
    plan = plan_release(v, Q3, "127.0.0.1:10911")
    assert plan.holder == "hung@3"
    assert any("lapsed already" in w for w in plan.warnings)


def _stopped(age: int = 12_000) -> dict[str, StoredClient]:
    return {"stopped@1": StoredClient("stopped@1", NOW - 10_000,
                                      (Claim("stopped@1", Q3, True, NOW - age, live=False,
                                             observed_ts=NOW - 10_000),))}


@pytest.mark.parametrize("client", [None, "stopped@1"])
def test_plan_release_refuses_a_lock_another_client_was_granted_since(client):
    # the holder stopped gracefully (unlockAll), the broker granted b@2 the lock
    # 2 s ago (4.x: not marked yet); a release for stopped@1 would be ignored by the broker
    v = view({"b@2": running({Q3: pq(False, 2_000)})}, previous=_stopped())
    assert v.queue(Q3).state.value == "lock-failed"
    with pytest.raises(RefusedError) as ei:
        plan_release(v, Q3, "127.0.0.1:10911", client=client)
    assert ei.value.exit_code == 6
    assert ei.value.message.startswith("b@2 already claims broker-a:3: the broker granted it "
                                       "the lock at ")
    assert "so stopped@1 no longer holds it" in ei.value.message
    assert "--force" in (ei.value.hint or "")
    plan = plan_release(v, Q3, "127.0.0.1:10911", client=client, force=True)
    assert plan.holder == "stopped@1" and plan.forced


def test_plan_release_of_a_departed_holder_whose_lock_the_survivor_was_refused():
    # b@2's last grant (30 s ago) is older than stopped@1's renewal (12 s ago): its renewals
    # are refused while stopped@1's lease runs: the release is what frees the queue
    v = view({"b@2": running({Q3: pq(False, 30_000)})}, previous=_stopped())
    assert v.queue(Q3).state.value == "stale"
    assert plan_release(v, Q3, "127.0.0.1:10911").holder == "stopped@1"


def test_resolve_queue_ambiguity_and_unknown_queue():
    qs_u = [MessageQueue("U", "broker-a", i) for i in range(4)]
    v = view({"a@1": running({}, topics=("T", "U"))}, topics=("T", "U"),
             qbt={"T": QS, "U": qs_u})
    with pytest.raises(UsageError) as ei:
        resolve_queue(v, "broker-a", 3, None)
    assert "2 topics" in ei.value.message and "--topic" in ei.value.message
    assert resolve_queue(v, "broker-a", 3, "U") == MessageQueue("U", "broker-a", 3)
    assert resolve_queue(v, "broker-b", 1, None) == mq("broker-b:1")
    with pytest.raises(UsageError) as ei:
        resolve_queue(v, "broker-z", 0, None)
    assert "no queue broker-z:0" in ei.value.message


def test_master_addr():
    route = TopicRoute("T", (BrokerData("c", "broker-a", {0: "h:1", 1: "h:2"}),
                             BrokerData("c", "broker-b", {1: "h:4"})),
                       (QueueData("broker-a", 4, 4, 6),))
    assert master_addr(route, "broker-a") == "h:1"
    with pytest.raises(ConnectError):
        master_addr(route, "broker-b")
    with pytest.raises(UsageError):
        master_addr(route, "broker-x")

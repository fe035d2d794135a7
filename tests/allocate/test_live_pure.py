"""Live inputs and --against-live over a scripted admin (no network): merging member lists,
broker disagreement and failures, BROADCASTING, POP, and prediction-vs-report differences."""

from __future__ import annotations

import asyncio

import pytest

from mqctl.admin import BrokerFailure
from mqctl.allocate.live import choose_strategy, read_live_group, read_reports
from mqctl.allocate.preview import PreviewOptions, preview
from mqctl.errors import ConnectError, UsageError
from mqctl.models import (
    BrokerData,
    Connection,
    ConsumerConnection,
    ConsumerRunningInfo,
    MessageQueue,
    ProcessQueueInfo,
    QueueData,
    TopicRoute,
)

TOPIC = "TopicOrder"
ROUTE = TopicRoute(TOPIC, brokers=(BrokerData("c", "broker-a", {0: "127.0.0.1:1"}),
                                   BrokerData("c", "broker-b", {0: "127.0.0.1:2"})),
                   queues=(QueueData("broker-a", 4, 4, 6), QueueData("broker-b", 4, 4, 6),
                           QueueData("broker-c", 8, 8, 2)))  # broker-c: write-only
A, B, C = "10.0.0.5@12345#1", "10.0.0.6@23456#2", "10.0.0.7@34567#3"


def conn(model: str = "CLUSTERING", ctype: str = "CONSUME_PASSIVELY") -> ConsumerConnection:
    return ConsumerConnection(connections=(Connection(A, "1.1.1.1:1", "JAVA", 1),),
                              consume_type=ctype, message_model=model,
                              consume_from_where="CONSUME_FROM_LAST_OFFSET", subscriptions={})


class FakeAdmin:
    def __init__(self, members, connection=None, infos=None):
        self.members = members
        self.connection = connection if connection is not None else conn()
        self.infos = infos or {}
        self.asked_infos: list[str] = []

    async def topic_route(self, topic):
        assert topic == TOPIC
        return ROUTE

    async def members_by_broker(self, group, route):
        return dict(self.members)

    async def consumer_connection(self, group, route):
        return self.connection

    async def running_infos(self, group, ids, route):
        self.asked_infos = sorted(ids)
        return {c: self.infos[c] for c in ids if c in self.infos}


def run(coro):
    return asyncio.run(coro)


def info(*queues: MessageQueue, strategy: str = "AllocateMessageQueueAveragely",
         dropped: tuple[MessageQueue, ...] = ()) -> ConsumerRunningInfo:
    table = {q: ProcessQueueInfo() for q in queues}
    table.update({q: ProcessQueueInfo(dropped=True) for q in dropped})
    return ConsumerRunningInfo(
        properties={"allocateMessageQueueStrategy":
                    f"org.apache.rocketmq.client.consumer.rebalance.{strategy}@5e91993f"},
        subscriptions=(), mq_table=table)


def q(b: str, i: int) -> MessageQueue:
    return MessageQueue(TOPIC, f"broker-{b}", i)


def test_readable_queues_and_agreeing_brokers():
    live = run(read_live_group(FakeAdmin({"broker-a": [C, A, B], "broker-b": [A, B, C]}), "G",
                               TOPIC))
    assert len(live.queues) == 8 and {m.broker_name for m in live.queues} == {"broker-a",
                                                                              "broker-b"}
    assert live.consumers == (A, B, C) and live.agree and live.notes() == []
    res, before = preview(list(live.queues), list(live.consumers), "G", PreviewOptions(),
                          live=live)
    # the protocol notes' AVG vector
    assert [m.short for m in before.assignments[A]] == ["broker-a:0", "broker-a:1",
                                                        "broker-a:2"]
    assert res.data["live"]["agree"] is True
    assert res.data["live"]["brokers"] == {"broker-a": [C, A, B], "broker-b": [A, B, C]}


def test_brokers_disagree_union_used_and_reported():
    live = run(read_live_group(FakeAdmin({"broker-a": [A, B], "broker-b": [A, B, C]}), "G",
                               TOPIC))
    assert not live.agree and live.consumers == (A, B, C)
    assert live.disagreements() == {"broker-a": {"missing": [C]}}
    res, _ = preview(list(live.queues), list(live.consumers), "G", PreviewOptions(),
                     live=live)
    assert any(n.startswith(f"broker broker-a does not list {C}") for n in res.notes)
    assert res.tables[-1].name == "brokers"
    agrees = {r["broker"]: r["agrees"] for r in res.tables[-1].rows}
    assert agrees == {"broker-a": "NO", "broker-b": "yes"}


def test_duplicate_ids_kept_with_highest_multiplicity():
    live = run(read_live_group(FakeAdmin({"broker-a": [A, A, B], "broker-b": [A, B]}), "G",
                               TOPIC))
    assert live.consumers == (A, A, B)


def test_failed_broker_reported_and_all_failed_raises():
    err = ConnectError("connection refused", addr="127.0.0.1:2")
    live = run(read_live_group(FakeAdmin({"broker-a": [A], "broker-b": BrokerFailure(
        "broker-b", "127.0.0.1:2", err)}), "G", TOPIC))
    assert live.consumers == (A,) and live.failures[0].broker == "broker-b"
    assert any("broker broker-b (127.0.0.1:2) did not answer" in n for n in live.notes())
    # no broker answered: a failure with the connection exit code, not an empty preview
    from mqctl.admin import NothingRead
    from mqctl.errors import ExitCode

    with pytest.raises(NothingRead, match=r"no broker answered .*connection refused") as ei:
        run(read_live_group(FakeAdmin({"broker-a": BrokerFailure("broker-a", None, err)}),
                            "G", TOPIC))
    assert ei.value.exit_code == ExitCode.CONNECTION and ei.value.hint


def test_offline_group_is_a_usage_error_unless_a_consumer_is_added():
    live = run(read_live_group(FakeAdmin({"broker-a": [], "broker-b": []}), "G", TOPIC))
    with pytest.raises(UsageError, match="has no online consumer on any broker"):
        preview(list(live.queues), [], "G", PreviewOptions(), live=live)
    res, _ = preview(list(live.queues), [], "G", PreviewOptions(add=("n@1",)), live=live)
    assert res.data["summary"]["movedQueues"] == 8


def test_broadcasting_everyone_gets_everything():
    live = run(read_live_group(FakeAdmin({"broker-a": [A, B], "broker-b": [A, B]},
                                         connection=conn("BROADCASTING")), "G", TOPIC))
    res, before = preview(list(live.queues), list(live.consumers), "G",
                          PreviewOptions(strategy="consistent-hash"), live=live)
    assert before.strategy == "broadcasting"
    assert before.assignments[A] == before.assignments[B] == list(live.queues)
    assert any("BROADCASTING" in n for n in res.notes)
    assert res.data["strategy"] == "broadcasting"


def test_pop_allocation_does_not_apply():
    live = run(read_live_group(FakeAdmin({"broker-a": [A], "broker-b": [A]},
                                         connection=conn(ctype="CONSUME_POP")), "G", TOPIC))
    res, before = preview(list(live.queues), list(live.consumers), "G", PreviewOptions(),
                          live=live)
    assert before is None
    assert res.data["strategy"] == "pop" and res.data["assignments"] == {A: []}
    assert any("allocation does not apply" in n for n in res.notes)


def test_against_live_lists_every_difference():
    infos = {
        A: info(q("a", 0), q("a", 1), q("a", 2)),
        # B still holds a queue it should have given to C, and misses one of its own
        B: info(q("a", 3), q("b", 0), q("b", 2), dropped=(q("b", 1),)),
        C: info(q("b", 3), strategy="AllocateMessageQueueConsistentHash"),
    }
    admin = FakeAdmin({"broker-a": [A, B, C], "broker-b": [A, B, C]}, infos=infos)
    live = run(read_live_group(admin, "G", TOPIC))
    reports = run(read_reports(admin, "G", set(live.consumers), live.route))
    assert admin.asked_infos == [A, B, C]
    res, _ = preview(list(live.queues), list(live.consumers), "G", PreviewOptions(),
                     live=live, reports=reports)
    diffs = [(d["queue"]["brokerName"][-1] + str(d["queue"]["queueId"]), d["predicted"],
              d["reported"], d["kind"]) for d in res.data["differences"]]
    assert diffs == [("b1", [B], [], "not owned by any client"),
                     ("b2", [C], [B], "owned by another client")]
    # the strategy the clients run is choose_strategy's
    choice = choose_strategy(None, reports, consumers=live.consumers)
    assert choice.per_client == {A: "avg", B: "avg", C: "consistent-hash"}
    assert any("clients run different strategies" in w for w in choice.warnings)
    assert any(f"client {B} is dropping 1 queue(s)" in n for n in res.notes)
    assert res.data["reported"]["strategies"] == {A: "avg", B: "avg", C: "consistent-hash"}


def test_against_live_all_match_and_client_failure():
    infos = {A: info(q("a", 0), q("a", 1), q("a", 2)),
             B: info(q("a", 3), q("b", 0), q("b", 1)), C: info(q("b", 2), q("b", 3))}
    admin = FakeAdmin({"broker-a": [A, B, C], "broker-b": [A, B, C]}, infos=infos)
    live = run(read_live_group(admin, "G", TOPIC))
    reports = run(read_reports(admin, "G", set(live.consumers), live.route))
    res, _ = preview(list(live.queues), list(live.consumers), "G", PreviewOptions(),
                     live=live, reports=reports)
    assert res.data["differences"] == []
    assert "prediction matches what all 3 client(s) report" in res.notes
    infos[C] = UsageError("not online")  # type: ignore[assignment]
    reports = run(read_reports(admin, "G", set(live.consumers), live.route))
    res, _ = preview(list(live.queues), list(live.consumers), "G", PreviewOptions(),
                     live=live, reports=reports)
    assert reports.failures == {C: "not online"}
    assert {d["queue"]["queueId"] for d in res.data["differences"]} == {2, 3}
    assert any(f"client {C} did not report its queues" in n for n in res.notes)


def test_strategy_mismatch_pointed_out():
    infos = {c: info(strategy="AllocateMessageQueueAveragelyByCircle") for c in (A, B, C)}
    admin = FakeAdmin({"broker-a": [A, B, C], "broker-b": [A, B, C]}, infos=infos)
    live = run(read_live_group(admin, "G", TOPIC))
    reports = run(read_reports(admin, "G", set(live.consumers), live.route))
    # the live default is the clients' strategy, said in a note, and the
    # prediction then matches what they report
    choice = choose_strategy(None, reports, consumers=live.consumers)
    assert choice.strategy == "avg-by-circle" and choice.source == "clients"
    assert any("clients report avg-by-circle (3 of 3)" in n for n in choice.notes)
    res, _ = preview(list(live.queues), list(live.consumers), "G",
                     PreviewOptions(strategy=choice.strategy), live=live, reports=reports)
    assert res.data["strategy"] == "avg-by-circle"
    # an explicit other strategy is an override, with the clients' strategy named
    over = choose_strategy("avg", reports, consumers=live.consumers)
    assert over.strategy == "avg" and any("overrides" in n and "avg-by-circle" in n
                                          for n in over.notes)

"""Verify returns new frozen results by ordered rules: the results given are left as they
were, and the first rule that decides a queue is its verdict."""

from __future__ import annotations

import asyncio
import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from mqctl.models import MessageQueue
from mqctl.reset.results import QueueResult, Status
from mqctl.reset.types import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, Target
from mqctl.reset.verify import APPLIED_RULES, FAILED_RULES, verify

MQ = MessageQueue("T", "broker-a", 0)


class FakeAdmin:
    concurrency = 1

    def __init__(self, offset: int) -> None:
        self.offset = offset

    async def consume_stats(self, group: str, addr: str, topic: str) -> Any:
        return SimpleNamespace(offsets={MQ: SimpleNamespace(consumer_offset=self.offset)})


def plan(online: bool) -> Plan:
    st = ConsumerState(online, ["c@1"] if online else [], False, False, "CONSUME_PASSIVELY",
                       "CLUSTERING", min_version=479 if online else None)
    return Plan("G", "T", Target("offset", 100), 0, "ns", [QueuePlan(MQ, 0, 500, 300, 100)],
                {"broker-a": BrokerPlan("broker-a", "a:1", Path_.SERVER_SIDE, "t")}, st)


def test_the_results_given_are_left_as_they_were():
    given = QueueResult(plan(False).queues[0], Status.APPLIED, "server-side reset")
    (got,) = asyncio.run(verify(FakeAdmin(100), plan(False), [given], owners=None))
    assert got.status == Status.VERIFIED and got.now == 100
    assert given.status == Status.APPLIED and given.now is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        given.status = Status.VERIFIED  # type: ignore[misc]


@pytest.mark.parametrize("online, offset, status, said", [
    (False, 100, Status.VERIFIED, ""),  # exact
    (False, 250, Status.MOVED, "no online consumer to move it"),  # offline: another writer
    (True, 250, Status.VERIFIED, "have moved on to 250"),  # online: its consumers moved it
])
def test_the_first_rule_that_decides_is_the_verdict(online, offset, status, said):
    given = QueueResult(plan(online).queues[0], Status.APPLIED, "server-side reset")
    (got,) = asyncio.run(verify(FakeAdmin(offset), plan(online), [given], owners=None))
    assert got.status == status and said in got.detail
    names = [r.__name__ for r in APPLIED_RULES]
    assert names[0] == "_exact" and names.index("_offline_moved") < names.index("_moved_on")
    assert [r.__name__ for r in FAILED_RULES] == ["_failed_yet_taken", "_failed_as_read"]

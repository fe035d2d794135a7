"""Production goes to the write queues only.

Real RocketMQ (read-gt-write/, both versions): after ``updateTopic -r 4 -w 2`` the producer's
TopicPublishInfo holds writeQueueNums queues, so RW_T queues 2-3 stayed at 25 while 0-1 grew
to 50."""

from __future__ import annotations

from typing import Any

import pytest
from test_sim_protocol import call

from mqctl.remoting.codes import RequestCode as C
from mqctl.sim.scenario import ScenarioError, load_scenario


def _scenario(**topic: Any) -> dict[str, Any]:
    return {"name": "rw", "clock": {"mode": "manual"}, "brokers": ["broker-a"],
            "topics": [{"name": "RW_T", "read_queues": 4, "write_queues": 2, "rate": 1,
                        "history": "100s", **topic}],
            "groups": []}


def _max(s, q: int) -> int:
    return int(call(s, "broker-a", C.GET_MAX_OFFSET, {"topic": "RW_T", "queueId": q}
                    ).ext("offset"))


def test_read_only_queues_keep_their_history_and_get_no_production(sim_factory):
    s = sim_factory(_scenario(rate_changes=[{"at": 50, "rate": 3}]))
    assert [_max(s, q) for q in range(4)] == [100, 100, 100, 100]  # history on every queue
    s.advance(50)
    assert [_max(s, q) for q in range(4)] == [150, 150, 100, 100]
    s.advance(10)  # the rate change too applies to the write queues only
    assert [_max(s, q) for q in range(4)] == [180, 180, 100, 100]


def test_per_queue_history_on_a_read_only_queue_is_kept(sim_factory):
    s = sim_factory(_scenario(per_queue=[{"queue": 3, "max_offset": 25}]))
    s.advance(20)
    assert [_max(s, q) for q in range(4)] == [120, 120, 100, 25]


def test_a_per_queue_rate_on_a_read_only_queue_is_a_scenario_error():
    with pytest.raises(ScenarioError, match=r"topics\[0\]\.per_queue\[0\]\.rate: queue 2 is "
                                            r"not a write queue"):
        load_scenario(_scenario(per_queue=[{"queue": 2, "rate": 5}]))

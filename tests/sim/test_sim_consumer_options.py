"""Scenario options of the simulated consumers: ``threads`` and ``restart_at``."""

from __future__ import annotations

from typing import Any

import pytest

from mqctl.sim.scenario import ScenarioError, load_scenario

C1, C2 = "127.0.1.81@c1", "127.0.1.82@c2"


def _scenario(**c2: Any) -> dict[str, Any]:
    return {"name": "opts", "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
            "topics": [{"name": "CL_T", "queues": 4, "rate": 0}],
            "groups": [{"name": "CL_G", "topics": ["CL_T"], "consumers": [
                {"id": C1}, {"id": C2, **c2}]}]}


def test_threads_sets_the_consume_threads_in_running_info(sim_factory):
    s = sim_factory(_scenario(threads=2))
    props = s.call(lambda c: (c.consumer(C2).running_info()["properties"],
                              c.consumer(C1).running_info()["properties"]))
    assert (props[0]["consumeThreadMin"], props[0]["consumeThreadMax"]) == ("2", "2")
    assert (props[1]["consumeThreadMin"], props[1]["consumeThreadMax"]) == ("20", "20")


def test_restart_at_brings_a_crashed_consumer_back_with_the_same_id(sim_factory, tmp_path):
    """client-logs/ step 4: c2 killed with -9, started again with the same client id."""
    s = sim_factory(_scenario(crash_at="30s", restart_at="60s"), log_dir=str(tmp_path))

    def ids() -> list[str]:
        return s.call(lambda c: sorted(c.brokers["broker-a"].consumer_ids("CL_G")))
    s.advance(31)
    assert ids() == [C1]
    s.advance(29)
    assert ids() == [C1, C2]
    state = s.call(lambda c: (c.consumer(C2).state, c.consumer(C2).runs,
                              sorted(m.queue_id for m in c.consumer(C2).pqs
                                     if m.broker_name == "broker-a")))
    assert state[:2] == ("running", 2)
    text = s.call(lambda c: c.consumer(C2).log.path.read_text())
    assert text.count("start beginning") == 2


@pytest.mark.parametrize(("c2", "path", "problem"), [
    ({"threads": 0}, "consumers[1].threads", "at least 1"),
    ({"restart_at": "60s"}, "consumers[1].restart_at", "needs crash_at"),
    ({"crash_at": "60s", "restart_at": "30s"}, "consumers[1].restart_at", "after crash_at"),
])
def test_bad_options_are_scenario_errors(c2, path, problem):
    with pytest.raises(ScenarioError, match=path.replace("[", r"\[").replace("]", r"\]")) as e:
        load_scenario(_scenario(**c2))
    assert problem in str(e.value)

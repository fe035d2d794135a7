"""A consumer's ``rate`` is its processing capacity: empty queues cost
nothing. Before the fix a ``rate: 40`` consumer with 8 busy and 2 empty %RETRY%
queues consumed 32/s."""

from __future__ import annotations

from typing import Any

import pytest

CID = "10.0.0.1@1"


def _scenario(rate: float, behaviour: str) -> dict[str, Any]:
    return {"name": "rate", "clock": {"mode": "manual"},
            "brokers": ["broker-a", "broker-b"],
            "topics": [{"name": "T", "queues": 4, "rate": 0, "max_offset": 100_000}],
            "groups": [{"name": "G", "topics": ["T"], "initial_lag": 50_000,
                        "consumers": [{"id": CID, "behaviour": behaviour, "rate": rate}]}]}


def _committed(s) -> int:
    def total(c: Any) -> int:
        return sum(v for b in c.brokers.values() for (t, g), tab in b.offsets.items()
                   if (t, g) == ("T", "G") for v in tab.values())
    return s.call(total)


@pytest.mark.parametrize(("rate", "behaviour"), [(40, "slow"), (7, "slow"), (150, "healthy")])
def test_configured_rate_is_consumed_with_backlog(sim_factory, rate, behaviour):
    s = sim_factory(_scenario(rate, behaviour))
    s.advance(10)
    queues = s.call(lambda c: sorted((m.topic, m.broker_name, m.queue_id)
                                     for m in c.consumer(CID).pqs))
    assert len(queues) == 10  # 8 queues of T with backlog, 2 empty %RETRY%G queues
    before = _committed(s)
    s.advance(120)
    tps = (_committed(s) - before) / 120
    assert abs(tps - rate) <= 0.03 * rate, tps


def test_idle_capacity_is_not_banked(sim_factory):
    """A queue that was empty does not get a burst of saved-up budget when messages come."""
    sc = _scenario(10, "slow")
    sc["groups"][0]["initial_lag"] = 0
    sc["topics"][0]["per_queue"] = [{"queue": 0, "broker": "broker-a", "max_offset": 100_000,
                                     "rate": 0}]
    sc["topics"][0]["rate_changes"] = [{"at": 100, "rate": 50}]
    s = sim_factory(sc)
    s.advance(100)
    before = _committed(s)
    s.advance(10)
    # 8 queues now get 50/s each: a 10/s consumer still consumes about 10/s
    assert abs((_committed(s) - before) / 10 - 10) <= 1.5

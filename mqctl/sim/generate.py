"""Generated scenarios: shapes too large to write out by hand (``mqctl sim up --scenario
large``). Each is a plain scenario document, validated like a YAML file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def large_scenario(brokers: int = 32, topics: int = 16, queues_per_topic: int = 4,
                   groups: int = 200, consumers_per_group: int = 2,
                   clock: str = "real") -> dict[str, Any]:
    """``brokers`` brokers, each holding ``topics * queues_per_topic`` queues (64 by default),
    and ``groups`` consumer groups (each on one topic, cycling) with live consumers: the
    32 brokers x 64 queues x 200 groups shape of the start-up benchmark."""
    return {
        "name": f"large-{brokers}x{topics * queues_per_topic}x{groups}",
        "description": f"{brokers} brokers x {topics * queues_per_topic} queues x {groups} "
                       "groups (generated; the scale benchmark's cluster)",
        "clock": {"mode": clock},
        "brokers": [f"broker-{i:02d}" for i in range(brokers)],
        "topics": [{"name": f"Topic{t:02d}", "queues": queues_per_topic, "rate": 10,
                    "history": "1h"} for t in range(topics)],
        "groups": [{"name": f"GID_{g:03d}", "topics": [f"Topic{g % topics:02d}"],
                    "initial_lag": g % 50,
                    "consumers": [{"id": f"10.{g // 250}.{g % 250}.{c + 1}@{1000 + c}#g{g}"}
                                  for c in range(consumers_per_group)]}
                   for g in range(groups)],
    }


GENERATED: dict[str, Callable[[], dict[str, Any]]] = {"large": large_scenario}

"""Queue allocation: RocketMQ's strategies, bit-exact with the Java client, whole group at once.

Public API (stable; used by the CLI, the simulated cluster's consumers and the lock view):

    allocate_group(strategy, queues, consumers, **params) -> dict[client_id, list[MessageQueue]]

``queues`` and ``consumers`` may be in any order: they are sorted exactly as
``RebalanceImpl.rebalanceByTopic`` sorts them (``Collections.sort``) before allocating.
Every distinct consumer id appears in the result, with an empty list when it gets nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mqctl.models import MessageQueue, java_string_key


def sort_inputs(queues: Iterable[MessageQueue], consumers: Iterable[str]
                ) -> tuple[list[MessageQueue], list[str]]:
    return sorted(queues), sorted(consumers, key=java_string_key)


def allocate_group(strategy: str, queues: Iterable[MessageQueue], consumers: Iterable[str],
                   **params: Any) -> dict[str, list[MessageQueue]]:
    mq_all, cid_all = sort_inputs(queues, consumers)
    name = strategy.strip().lower().replace("_", "-")
    if name != "avg":
        raise NotImplementedError(strategy)
    out: dict[str, list[MessageQueue]] = {c: [] for c in cid_all}
    n, k = len(mq_all), len(cid_all)
    if not n or not k:
        return out
    first_index: dict[str, int] = {}
    for i, c in enumerate(cid_all):
        first_index.setdefault(c, i)  # indexOf: first occurrence (duplicate ids)
    mod = n % k
    for c, index in first_index.items():
        if n <= k:
            avg = 1
        elif mod > 0 and index < mod:
            avg = n // k + 1
        else:
            avg = n // k
        start = index * avg if (mod > 0 and index < mod) else index * avg + mod
        rng = min(avg, n - start)
        out[c] = [mq_all[(start + i) % n] for i in range(max(0, rng))]
    return out


__all__ = ["allocate_group", "sort_inputs"]

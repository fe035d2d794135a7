"""Queue allocation: RocketMQ's strategies, bit-exact with the Java client, whole group at once.

Public API (stable; used by the CLI, the simulated cluster's consumers and the lock view)::

    allocate_group(strategy, queues, consumers, **params) -> dict[client_id, list[MessageQueue]]
    sort_inputs(queues, consumers) -> (sorted queues, sorted client ids)
    compute_allocation(strategy, queues, consumers, group=..., **params) -> Allocation

``queues`` and ``consumers`` may be in any order: they are sorted exactly as
``RebalanceImpl.rebalanceByTopic`` sorts them (``Collections.sort``) before allocating.
Every distinct consumer id appears in the result, with an empty list when it gets nothing; a
duplicated client id (two clients with the same id) gets the share of its first occurrence,
as ``List.indexOf`` gives the Java client.

Strategies (``strategy`` is case-insensitive, ``_`` and ``-`` interchangeable, RocketMQ's
names accepted): ``avg``, ``avg-by-circle``, ``consistent-hash`` (``virtual_nodes=10``),
``config`` (``config={cid: [mq]}``), ``machine-room`` (``rooms={"hz"}``),
``machine-room-nearby`` (``inner="avg"``, ``broker_room_regex``, ``consumer_room_regex``), and
any plugin registered under the ``mqctl.strategies`` entry-point group.
"""

from __future__ import annotations

from mqctl.allocate.base import Allocation, AllocationStrategy, Balance, sort_inputs
from mqctl.allocate.engine import (
    BROADCASTING,
    allocate_group,
    broadcast_allocation,
    compute_allocation,
    create_strategy,
)
from mqctl.allocate.plan import (
    LiveDifference,
    Move,
    WhatIf,
    apply_membership,
    compare_with_reports,
    compute_moves,
)
from mqctl.allocate.registry import ENTRY_POINT_GROUP, StrategyInfo, register, registry

__all__ = [
    "BROADCASTING",
    "ENTRY_POINT_GROUP",
    "Allocation",
    "AllocationStrategy",
    "Balance",
    "LiveDifference",
    "Move",
    "StrategyInfo",
    "WhatIf",
    "allocate_group",
    "apply_membership",
    "broadcast_allocation",
    "compare_with_reports",
    "compute_allocation",
    "compute_moves",
    "create_strategy",
    "register",
    "registry",
    "sort_inputs",
]

"""Whole-group allocation: sort as the client does, run a strategy once, describe the result."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mqctl.allocate.base import (
    Allocation,
    AllocationStrategy,
    normalise_assignment,
    sort_inputs,
    sort_queues,
)
from mqctl.allocate.registry import registry
from mqctl.errors import MqctlError, PluginError
from mqctl.models import MessageQueue

BROADCASTING = "broadcasting"


def create_strategy(strategy: str | AllocationStrategy, **params: Any) -> AllocationStrategy:
    if isinstance(strategy, AllocationStrategy):
        return strategy
    return registry.create(strategy, **params)


def compute_allocation(strategy: str | AllocationStrategy, queues: Iterable[MessageQueue],
                       consumers: Iterable[str], *, group: str = "",
                       **params: Any) -> Allocation:
    """Allocate ``queues`` among ``consumers`` as every client of the group would.

    Inputs may be in any order and the queues may repeat (the client's ``mqSet`` is a set);
    client ids keep their duplicates. Every distinct consumer appears in the result.
    """
    mq_all, cid_all = sort_inputs(set(queues), consumers)
    strat = create_strategy(strategy, group=group, **params)
    try:
        raw = strat.allocate_group(group, mq_all, cid_all)
    except MqctlError:
        raise
    except Exception as exc:
        if isinstance(strategy, str) and registry.is_plugin(strategy):
            raise PluginError(f"strategy {strat.display_name!r} failed: "
                              f"{type(exc).__name__}: {exc}",
                              hint="this is a bug in the plugin; re-run with --debug") from exc
        raise
    notes: list[str] = []
    assignments = normalise_assignment(raw, cid_all)
    if not strat.multi_owner:
        known = set(mq_all)
        foreign = sort_queues({mq for qs in assignments.values() for mq in qs
                               if mq not in known})
        if foreign:
            notes.append(f"strategy {strat.display_name} assigned {len(foreign)} queue(s) that "
                         f"are not in the input, e.g. {foreign[0].short}")
    return Allocation(strategy=strat.display_name, group=group, queues=tuple(mq_all),
                      consumers=tuple(cid_all), assignments=assignments, notes=tuple(notes))


def broadcast_allocation(queues: Iterable[MessageQueue], consumers: Iterable[str], *,
                         group: str = "") -> Allocation:
    """BROADCASTING groups do not allocate: every consumer consumes every queue."""
    mq_all, cid_all = sort_inputs(set(queues), consumers)
    return Allocation(strategy=BROADCASTING, group=group, queues=tuple(mq_all),
                      consumers=tuple(cid_all),
                      assignments={c: list(mq_all) for c in dict.fromkeys(cid_all)},
                      notes=(f"{'group ' + group if group else 'the group'} is BROADCASTING: "
                             "every consumer consumes every queue; no allocation strategy "
                             "applies",))


def allocate_group(strategy: str | AllocationStrategy, queues: Iterable[MessageQueue],
                   consumers: Iterable[str], **params: Any) -> dict[str, list[MessageQueue]]:
    """``{client_id: [MessageQueue, ...]}`` for every distinct consumer (sorted lists)."""
    group = str(params.pop("group", "") or "")
    return compute_allocation(strategy, queues, consumers, group=group, **params).assignments

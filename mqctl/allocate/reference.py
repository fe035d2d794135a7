"""The strategies one consumer at a time, as the Java classes run them.

Each class implements only the Java contract ``allocate(group, current_cid, mq_all, cid_all)``
(the registry's adapter turns that into a group result by calling it once per consumer), and
follows the Java method body statement by statement, including ``AbstractAllocateMessageQueue
Strategy.check``. They exist to check the one-pass group code (tests) and as the baseline of
``bench/allocate_consistent_hash.py``; the CLI never uses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mqctl.allocate.base import AllocationStrategy, java_key, sort_queues
from mqctl.allocate.builtin import DEFAULT_ROOM_REGEX, _rooms, _virtual_nodes, java_split
from mqctl.allocate.builtin import regex_resolver as _regex_resolver
from mqctl.allocate.hashring import HashRing
from mqctl.models import MessageQueue


class JavaCheckError(ValueError):
    """``IllegalArgumentException`` thrown by the Java strategy."""


def check(current_cid: str, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> bool:
    """``AbstractAllocateMessageQueueStrategy.check``."""
    if not current_cid:
        raise JavaCheckError("currentCID is empty")
    if not mq_all:
        raise JavaCheckError("mqAll is null or mqAll empty")
    if not cid_all:
        raise JavaCheckError("cidAll is null or cidAll empty")
    return current_cid in cid_all  # else: log "[BUG] ... not in cidAll" and return []


class RefAveragely(AllocationStrategy):
    name = "ref-avg"

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        index = cid_all.index(current_cid)
        mod = len(mq_all) % len(cid_all)
        if len(mq_all) <= len(cid_all):
            average = 1
        elif mod > 0 and index < mod:
            average = len(mq_all) // len(cid_all) + 1
        else:
            average = len(mq_all) // len(cid_all)
        start = index * average if (mod > 0 and index < mod) else index * average + mod
        rng = min(average, len(mq_all) - start)
        return [mq_all[(start + i) % len(mq_all)] for i in range(rng)]


class RefAveragelyByCircle(AllocationStrategy):
    name = "ref-avg-by-circle"

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        index = cid_all.index(current_cid)
        return [mq_all[i] for i in range(index, len(mq_all)) if i % len(cid_all) == index]


class RefConsistentHash(AllocationStrategy):
    """Rebuilds the ring and routes every queue on every call, as the Java class does."""

    name = "ref-consistent-hash"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.virtual_nodes = _virtual_nodes(params)

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        router = HashRing(cid_all, self.virtual_nodes)
        return [mq for mq in mq_all if router.route(str(mq)) == current_cid]


class RefByMachineRoom(AllocationStrategy):
    name = "ref-machine-room"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.rooms = _rooms(params)

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        current = cid_all.index(current_cid)
        pre = [mq for mq in mq_all
               if len(t := java_split(mq.broker_name, "@")) == 2 and t[0] in self.rooms]
        mod = len(pre) // len(cid_all)
        rem = len(pre) % len(cid_all)
        start = mod * current
        result = [pre[i] for i in range(start, start + mod)]
        if rem > current:
            result.append(pre[current + mod * len(cid_all)])
        return result


class RefMachineRoomNearby(AllocationStrategy):
    name = "ref-machine-room-nearby"

    def __init__(self, inner: AllocationStrategy | None = None, **params: Any) -> None:
        super().__init__(**params)
        self.inner = inner or RefAveragely()
        self.broker_room = _regex_resolver(params.get("broker_room_regex") or DEFAULT_ROOM_REGEX,
                                           "broker room")
        self.consumer_room = _regex_resolver(
            params.get("consumer_room_regex") or DEFAULT_ROOM_REGEX, "consumer room")

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        mr2mq: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = self.broker_room(mq.broker_name)
            if not room:
                raise JavaCheckError(f"Machine room is null for mq {mq}")
            mr2mq.setdefault(room, []).append(mq)
        mr2c: dict[str, list[str]] = {}
        for cid in cid_all:
            room = self.consumer_room(cid)
            if not room:
                raise JavaCheckError(f"Machine room is null for consumer id {cid}")
            mr2c.setdefault(room, []).append(cid)
        result: list[MessageQueue] = []
        current_room = self.consumer_room(current_cid) or ""
        here = mr2mq.pop(current_room, None)
        if here:
            result += self.inner.allocate(group, current_cid, here, mr2c[current_room])
        for room in sorted(mr2mq, key=java_key):  # TreeMap iteration order
            if room not in mr2c:
                result += self.inner.allocate(group, current_cid, mr2mq[room], cid_all)
        return result


def reference_loop(strategy: AllocationStrategy, group: str, mq_all: Sequence[MessageQueue],
                   cid_all: Sequence[str]) -> dict[str, list[MessageQueue]]:
    """What the group's clients compute, one ``allocate`` call per distinct consumer."""
    return {cid: sort_queues(set(strategy.allocate(group, cid, mq_all, cid_all)))
            for cid in dict.fromkeys(cid_all)}

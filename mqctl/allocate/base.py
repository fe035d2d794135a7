"""The strategy contract and the result of one allocation.

A strategy is configured when it is created (as the Java strategies are: the virtual node count,
the machine rooms, the configured queue list) and then answers for a whole group at once:

* :meth:`AllocationStrategy.allocate_group` -- every consumer's share in one pass; or
* :meth:`AllocationStrategy.allocate` -- the Java contract
  (``AllocateMessageQueueStrategy.allocate(consumerGroup, currentCID, mqAll, cidAll)``),
  one consumer at a time.

A subclass implements at least one of the two; the base class derives the other. Both receive
``mq_all`` and ``cid_all`` already sorted as ``RebalanceImpl.rebalanceByTopic`` sorts them, with
duplicate client ids kept (the broker does not de-duplicate them either).
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mqctl.models import MessageQueue

Assignment = dict[str, list[MessageQueue]]


def java_key(s: str) -> str:
    """A sort key with Java ``String.compareTo`` order (UTF-16 code units), always a ``str``.

    A supplementary character (above U+FFFF) becomes its two surrogate code points, which then
    compare below U+E000..U+FFFF exactly as the UTF-16 code units do in Java. (Unlike
    ``models.java_string_key``, the key type never mixes ``str`` and ``bytes``.)
    """
    if s.isascii() or all(ord(c) <= 0xFFFF for c in s):
        return s
    b = s.encode("utf-16-le", "surrogatepass")
    return "".join(map(chr, struct.unpack(f"<{len(b) // 2}H", b)))


def mq_key(mq: MessageQueue) -> tuple[str, str, int]:
    """``MessageQueue.compareTo``: topic, brokerName (``String.compareTo``), queueId."""
    return (java_key(mq.topic), java_key(mq.broker_name), mq.queue_id)


def sort_queues(queues: Iterable[MessageQueue]) -> list[MessageQueue]:
    return sorted(queues, key=mq_key)


def sort_inputs(queues: Iterable[MessageQueue], consumers: Iterable[str]
                ) -> tuple[list[MessageQueue], list[str]]:
    """``Collections.sort(mqAll); Collections.sort(cidAll)`` as ``rebalanceByTopic`` does.

    ``MessageQueue.compareTo`` (topic, brokerName, queueId) and ``String.compareTo`` (UTF-16
    code units) order; duplicate client ids are kept.
    """
    return sort_queues(queues), sorted(consumers, key=java_key)


def distinct(cid_all: Sequence[str]) -> list[str]:
    """The distinct ids of ``cid_all`` in first-occurrence order (sorted input stays sorted)."""
    return list(dict.fromkeys(cid_all))


class AllocationStrategy:
    """Base class of every strategy, built-in or plugin.

    Class attributes describe the strategy for ``--list-strategies``; ``params`` are the keyword
    arguments it was created with (``virtual_nodes``, ``rooms``, ``config``, ``inner``,
    ``broker_room_regex``, ``consumer_room_regex``, ``previous``, ...); a strategy reads the ones
    it needs and ignores the rest.
    """

    #: canonical lower-kebab name (the registry's key)
    name: ClassVar[str] = ""
    #: ``getName()`` of the Java class, when there is one
    java_name: ClassVar[str | None] = None
    description: ClassVar[str] = ""
    #: the strategy wants ``params["previous"]`` (the current assignment) to decide
    uses_previous: ClassVar[bool] = False
    #: a queue may legitimately go to several consumers (e.g. CONFIG)
    multi_owner: ClassVar[bool] = False

    def __init__(self, **params: Any) -> None:
        self.params = params
        cls = type(self)
        if (cls.allocate is AllocationStrategy.allocate
                and cls.allocate_group is AllocationStrategy.allocate_group):
            raise TypeError(f"{cls.__name__} implements neither allocate() nor allocate_group()")

    @property
    def display_name(self) -> str:
        """The name shown in output (``machine-room-nearby`` adds its inner strategy)."""
        return self.name

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        """The Java contract: the share of ``current_cid`` (``[]`` when it is not a member)."""
        if current_cid not in cid_all:
            return []
        return list(self.allocate_group(group, mq_all, cid_all).get(current_cid, []))

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> Assignment:
        """Every distinct consumer's share. The default asks :meth:`allocate` per consumer."""
        return {cid: list(self.allocate(group, cid, mq_all, cid_all))
                for cid in distinct(cid_all)}


@dataclass(frozen=True, slots=True)
class Balance:
    """How even an allocation is: queue counts over the distinct consumers."""

    consumers: int
    min: int
    max: int

    @property
    def spread(self) -> int:
        return self.max - self.min

    def to_dict(self) -> dict[str, int]:
        return {"consumers": self.consumers, "min": self.min, "max": self.max,
                "spread": self.spread}


@dataclass(frozen=True, slots=True)
class Allocation:
    """The outcome of one strategy over one queue set and one consumer list."""

    strategy: str
    group: str
    queues: tuple[MessageQueue, ...]          # sorted mqAll
    consumers: tuple[str, ...]                # sorted cidAll, duplicates kept
    assignments: dict[str, list[MessageQueue]]  # distinct consumer -> sorted queues
    notes: tuple[str, ...] = field(default=())

    @property
    def distinct_consumers(self) -> list[str]:
        return distinct(self.consumers)

    @property
    def duplicates(self) -> dict[str, int]:
        """Client ids that occur more than once (pid collisions in containers)."""
        return {c: n for c, n in Counter(self.consumers).items() if n > 1}

    def owners(self) -> dict[MessageQueue, list[str]]:
        """Queue -> consumers that get it (every queue of ``queues`` appears)."""
        out: dict[MessageQueue, list[str]] = {mq: [] for mq in self.queues}
        for cid in self.distinct_consumers:
            for mq in self.assignments.get(cid, ()):
                out.setdefault(mq, []).append(cid)
        return out

    @property
    def unassigned(self) -> list[MessageQueue]:
        owned = {mq for qs in self.assignments.values() for mq in qs}
        return [mq for mq in self.queues if mq not in owned]

    @property
    def idle(self) -> list[str]:
        return [c for c in self.distinct_consumers if not self.assignments.get(c)]

    @property
    def shared(self) -> dict[MessageQueue, list[str]]:
        """Queues that more than one consumer gets."""
        return {mq: cs for mq, cs in self.owners().items() if len(cs) > 1}

    def counts(self) -> dict[str, int]:
        return {c: len(self.assignments.get(c, ())) for c in self.distinct_consumers}

    def balance(self) -> Balance:
        counts = list(self.counts().values())
        if not counts:
            return Balance(0, 0, 0)
        return Balance(len(counts), min(counts), max(counts))

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON shape (docs/allocate.md)."""
        return {"strategy": self.strategy, "group": self.group,
                "assignments": {c: [mq.to_dict() for mq in self.assignments.get(c, ())]
                                for c in self.distinct_consumers},
                "unassigned": [mq.to_dict() for mq in self.unassigned],
                "idle": self.idle}


def normalise_assignment(result: Mapping[str, Iterable[MessageQueue]] | None,
                         cid_all: Sequence[str]) -> Assignment:
    """Every distinct consumer present, lists de-duplicated (the caller's ``HashSet``) and
    sorted; ids that are not members are dropped."""
    members = distinct(cid_all)
    result = result or {}
    out: Assignment = {}
    for cid in members:
        qs = result.get(cid) or ()
        out[cid] = sort_queues(set(qs))
    return out

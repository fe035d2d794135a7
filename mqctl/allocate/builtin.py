"""RocketMQ's six allocation strategies, bit-exact with the Java client, whole group at once.

Behaviour read from apache/rocketmq ``client/.../consumer/rebalance/`` (4.9.x and 5.x agree):
``AllocateMessageQueueAveragely``, ``AllocateMessageQueueAveragelyByCircle``,
``AllocateMessageQueueConsistentHash``, ``AllocateMessageQueueByConfig``,
``AllocateMessageQueueByMachineRoom`` and ``AllocateMachineRoomNearby``. Each Java class answers
for one consumer (``allocate(group, currentCID, mqAll, cidAll)``); these classes compute the
share of every consumer in one pass and give, for each consumer, exactly the list the Java class
returns for it. With duplicate client ids every copy gets the share of the first occurrence
(``List.indexOf``), which is how a pid collision leaves queues without a consumer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from mqctl.allocate.base import AllocationStrategy, Assignment, distinct, java_key
from mqctl.allocate.hashring import HashFunction, HashRing
from mqctl.errors import UsageError
from mqctl.models import MessageQueue

DEFAULT_VIRTUAL_NODES = 10  # AllocateMessageQueueConsistentHash()
DEFAULT_ROOM_REGEX = r"([^-]*)"  # the part before the first '-' (RocketMQ's own test resolver)


def _empty(cid_all: Sequence[str]) -> Assignment:
    return {c: [] for c in distinct(cid_all)}


def _first_index(cid_all: Sequence[str]) -> dict[str, int]:
    first: dict[str, int] = {}
    for i, c in enumerate(cid_all):
        first.setdefault(c, i)  # List.indexOf: the first occurrence
    return first


def java_split(s: str, sep: str) -> list[str]:
    """Java ``String.split(sep)`` for a literal one-character ``sep``: trailing empty strings
    are dropped (``"a@"`` -> ``["a"]``, ``"@"`` -> ``[]``, ``"@b"`` -> ``["", "b"]``)."""
    if sep not in s:
        return [s]
    parts = s.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


class Averagely(AllocationStrategy):
    """``AllocateMessageQueueAveragely``: contiguous blocks; the first ``n % k`` consumers get
    one queue more."""

    name = "avg"
    java_name = "AVG"
    description = "contiguous blocks, first consumers get the remainder (RocketMQ default)"

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> Assignment:
        out = _empty(cid_all)
        n, k = len(mq_all), len(cid_all)
        if not n or not k:
            return out
        mod = n % k
        for cid, index in _first_index(cid_all).items():
            if n <= k:
                size = 1
            elif mod > 0 and index < mod:
                size = n // k + 1
            else:
                size = n // k
            start = index * size if (mod > 0 and index < mod) else index * size + mod
            rng = min(size, n - start)
            out[cid] = list(mq_all[start:start + rng]) if rng > 0 else []
        return out


class AveragelyByCircle(AllocationStrategy):
    """``AllocateMessageQueueAveragelyByCircle``: round robin, queue ``j`` to consumer
    ``j % k``."""

    name = "avg-by-circle"
    java_name = "AVG_BY_CIRCLE"
    description = "round robin: queue j goes to consumer j mod k"

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> Assignment:
        out = _empty(cid_all)
        k = len(cid_all)
        if not mq_all or not k:
            return out
        for cid, index in _first_index(cid_all).items():
            out[cid] = list(mq_all[index::k])
        return out


# --virtual-nodes cap. RocketMQ's AllocateMessageQueueConsistentHash defaults to 10 virtual
# nodes per consumer (and takes any int >= 0). 10,000 is 1,000x that: measured on 10
# consumers, the largest deviation of a consumer's share of the ring from even is 51% at 10,
# 22% at 100, 2.9% at 1,000 and 2.5% at 10,000 virtual nodes, so a larger count changes
# nothing a preview could show, while the ring costs memory and ~8 us per entry to build:
# 100,000,000 ran for minutes.
MAX_VIRTUAL_NODES = 10_000
# the whole ring (consumers x virtual nodes): 1,000,000 entries build in about 15 s here,
# and 100,000 generated consumers at the default 10 fit exactly
MAX_RING_ENTRIES = 1_000_000


def _virtual_nodes(params: Mapping[str, Any]) -> int:
    v = params.get("virtual_nodes")
    if v is None:
        return DEFAULT_VIRTUAL_NODES
    if isinstance(v, bool) or not isinstance(v, int):
        raise UsageError(f"virtual node count must be an integer, not {v!r}",
                         hint="pass --virtual-nodes N with N >= 0")
    if v < 0:
        # AllocateMessageQueueConsistentHash: "illegal virtualNodeCnt :" + virtualNodeCnt
        raise UsageError(f"illegal virtual node count: {v}",
                         hint="--virtual-nodes must be 0 or more (default 10)")
    if v > MAX_VIRTUAL_NODES:
        raise UsageError(f"virtual node count {v:,} is too large: at most "
                         f"{MAX_VIRTUAL_NODES:,} per consumer",
                         hint="RocketMQ's default is 10; beyond a few thousand the ring's "
                              "balance no longer changes (docs/allocate.md)")
    return v


class ConsistentHash(AllocationStrategy):
    """``AllocateMessageQueueConsistentHash``: an MD5 ring with ``virtual_nodes`` entries per
    consumer; each queue goes to the ring entry after ``hash(mq.toString())``."""

    name = "consistent-hash"
    java_name = "CONSISTENT_HASH"
    description = "MD5 ring with virtual nodes (--virtual-nodes, default 10); few moves, uneven"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.virtual_nodes = _virtual_nodes(params)
        self.hash_function: HashFunction | None = params.get("hash_function")

    def ring(self, cid_all: Sequence[str]) -> HashRing:
        n = len(set(cid_all)) * self.virtual_nodes
        if n > MAX_RING_ENTRIES:
            raise UsageError(f"{len(set(cid_all)):,} consumers x {self.virtual_nodes:,} "
                             f"virtual nodes = {n:,} ring entries: at most "
                             f"{MAX_RING_ENTRIES:,}",
                             hint="lower --virtual-nodes (RocketMQ's default is 10) or the "
                                  "consumer count")
        return HashRing(cid_all, self.virtual_nodes, self.hash_function)

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> Assignment:
        out = _empty(cid_all)
        if not mq_all or not cid_all:
            return out
        ring = self.ring(cid_all)
        for mq in mq_all:
            owner = ring.route(str(mq))
            if owner is not None:
                out[owner].append(mq)
        return out


def _queue_list(value: Any, what: str) -> list[MessageQueue]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise UsageError(f"{what}: expected a list of queues, found {type(value).__name__}",
                         hint="config maps each client id to a list of queues")
    out = []
    for q in value:
        if not isinstance(q, MessageQueue):
            raise UsageError(f"{what}: not a MessageQueue: {q!r}",
                             hint="config maps each client id to a list of queues")
        out.append(q)
    return out


class ByConfig(AllocationStrategy):
    """``AllocateMessageQueueByConfig``: each consumer consumes the queue list it was configured
    with (``setMessageQueueList``), whatever the route and the other consumers are."""

    name = "config"
    java_name = "CONFIG"
    description = "fixed per-consumer queue lists (--queue-config FILE)"
    multi_owner = True

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        cfg = params.get("config")
        if cfg is None:
            raise UsageError("strategy 'config' needs the per-consumer queue lists",
                             hint="pass --queue-config FILE (YAML/JSON: {clientId: [queues]})")
        if not isinstance(cfg, Mapping):
            raise UsageError("config: expected a mapping of client id to queue list",
                             hint="pass --queue-config FILE (YAML/JSON: {clientId: [queues]})")
        self.config: dict[str, list[MessageQueue]] = {
            str(c): _queue_list(qs, f"config of {c}") for c, qs in cfg.items()}

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        # no checks at all: the configured list, member or not
        return list(self.config.get(current_cid, []))

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> Assignment:
        return {c: list(self.config.get(c, [])) for c in distinct(cid_all)}


def _rooms(params: Mapping[str, Any]) -> frozenset[str]:
    rooms = params.get("rooms")
    if rooms is None:
        raise UsageError("strategy 'machine-room' needs the consumers' machine rooms",
                         hint="pass --rooms hz,sh (the 'room' of broker names 'room@broker')")
    if isinstance(rooms, str):
        rooms = [r.strip() for r in rooms.split(",") if r.strip()]
    return frozenset(str(r) for r in rooms)


class ByMachineRoom(AllocationStrategy):
    """``AllocateMessageQueueByMachineRoom``: keep queues whose broker name is
    ``<room>@<broker>`` with ``room`` in ``rooms`` (``setConsumeridcs``), then blocks of
    ``len // k`` with the remainder dealt from the end."""

    name = "machine-room"
    java_name = "MACHINE_ROOM"
    description = "queues of brokers named 'room@broker' in --rooms, split in blocks"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.rooms = _rooms(params)

    def eligible(self, mq_all: Sequence[MessageQueue]) -> list[MessageQueue]:
        out = []
        for mq in mq_all:
            parts = java_split(mq.broker_name, "@")
            if len(parts) == 2 and parts[0] in self.rooms:
                out.append(mq)
        return out

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> Assignment:
        out = _empty(cid_all)
        k = len(cid_all)
        if not mq_all or not k:
            return out
        pre = self.eligible(mq_all)
        mod, rem = divmod(len(pre), k)
        for cid, index in _first_index(cid_all).items():
            share = pre[mod * index:mod * index + mod]
            if rem > index:
                share.append(pre[index + mod * k])
            out[cid] = share
        return out


RoomResolver = Callable[[str], "str | None"]


def regex_resolver(pattern: str, what: str) -> RoomResolver:
    """The room is group 1 of ``pattern`` matched at the start of the name (``re.match``)."""
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"bad {what} regex {pattern!r}: {exc}",
                         hint="use Python regex syntax; group 1 is the room") from None
    if rx.groups < 1:
        raise UsageError(f"{what} regex {pattern!r} has no capture group",
                         hint="group 1 of the regex is the room, e.g. '([a-z]+)-'")

    def resolve(name: str) -> str | None:
        m = rx.match(name)
        return m.group(1) if m else None

    return resolve


class MachineRoomNearby(AllocationStrategy):
    """``AllocateMachineRoomNearby``: queues of a room go to the consumers in the same room (by
    the inner strategy); rooms with queues but no consumer are shared by every consumer, each
    such room allocated separately over the whole group."""

    name = "machine-room-nearby"
    java_name = "MACHINE_ROOM_NEARBY"
    description = ("same-room consumers first (--inner, --broker-room-regex, "
                   "--consumer-room-regex); orphan rooms shared by all")

    #: the inner strategy when none is named. Through the registry (the CLI, allocate_group)
    #: ``params["inner"]`` arrives created from any registered name, plugins included; a name
    #: given to this class directly is one of the built-ins (this module knows no registry,
    #: so that the registry can import it)
    default_inner: ClassVar[str] = "avg"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        inner = params.get("inner") or self.default_inner
        if isinstance(inner, AllocationStrategy):
            self.inner = inner
        else:
            self.inner = create_builtin(str(inner), outer=self.name,
                                        **{k: v for k, v in params.items() if k != "inner"})
        broker = params.get("broker_room")
        consumer = params.get("consumer_room")
        self.broker_room: RoomResolver = broker or regex_resolver(
            params.get("broker_room_regex") or DEFAULT_ROOM_REGEX, "broker room")
        self.consumer_room: RoomResolver = consumer or regex_resolver(
            params.get("consumer_room_regex") or DEFAULT_ROOM_REGEX, "consumer room")

    @property
    def display_name(self) -> str:
        return f"{self.name}-{self.inner.display_name}"

    def rooms(self, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
              ) -> tuple[dict[str, list[MessageQueue]], dict[str, list[str]]]:
        """Room -> queues and room -> consumers, keys in ``TreeMap`` (String) order."""
        mr2mq: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = self.broker_room(mq.broker_name)
            if not room:  # StringUtils.isNoneEmpty fails: the Java strategy throws
                raise UsageError(f"machine room is empty for queue {mq.short} "
                                 f"(broker {mq.broker_name!r})",
                                 hint="check --broker-room-regex: group 1 must match at the "
                                      "start of every broker name")
            mr2mq.setdefault(room, []).append(mq)
        mr2c: dict[str, list[str]] = {}
        for cid in cid_all:
            room = self.consumer_room(cid)
            if not room:
                raise UsageError(f"machine room is empty for consumer {cid!r}",
                                 hint="check --consumer-room-regex: group 1 must match at the "
                                      "start of every client id")
            mr2c.setdefault(room, []).append(cid)
        order = sorted(set(mr2mq) | set(mr2c), key=java_key)
        return ({r: mr2mq[r] for r in order if r in mr2mq},
                {r: mr2c[r] for r in order if r in mr2c})

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> Assignment:
        out = _empty(cid_all)
        if not mq_all or not cid_all:
            return out
        mr2mq, mr2c = self.rooms(mq_all, cid_all)
        # 1. each consumer's own room, among the consumers of that room
        for room, consumers in mr2c.items():
            mqs = mr2mq.get(room)
            if mqs:
                _merge(out, self.inner.allocate_group(group, mqs, consumers), consumers)
        # 2. rooms with queues and no consumer: shared by everyone, one room at a time
        #    (the Java loop runs whether or not the current room had queues)
        for room, mqs in mr2mq.items():
            if room not in mr2c:
                _merge(out, self.inner.allocate_group(group, mqs, cid_all), cid_all)
        return out


def _merge(out: Assignment, part: Mapping[str, Iterable[MessageQueue]],
           members: Sequence[str]) -> None:
    for cid in distinct(members):
        out[cid].extend(part.get(cid, ()))


BUILTINS: tuple[type[AllocationStrategy], ...] = (
    Averagely, AveragelyByCircle, ConsistentHash, ByConfig, ByMachineRoom, MachineRoomNearby)


def own_inner_error(outer: str) -> UsageError:
    return UsageError(f"{outer} cannot be its own inner strategy",
                      hint="use --inner avg, avg-by-circle or consistent-hash")


def create_builtin(name: str, *, outer: str | None = None, **params: Any) -> AllocationStrategy:
    """A built-in strategy by its name or RocketMQ's (``avg``, ``AVG_BY_CIRCLE``), without the
    registry (which also knows plugins and Java class names); ``outer`` is the strategy that
    will run it inside, which cannot be the same one."""
    key = name.strip().lower().replace("_", "-")
    if key == outer:
        raise own_inner_error(outer)
    for cls in BUILTINS:
        if key in (cls.name, (cls.java_name or "").lower().replace("_", "-")):
            return cls(**params)
    raise UsageError(f"unknown built-in strategy {name!r}",
                     hint=f"use one of {', '.join(cls.name for cls in BUILTINS)}")

"""Offline inputs: topology files, ``--queues``/``--consumers`` shorthand, assignment files.

Topology file (YAML or JSON)::

    group: GID_ORDER                       # optional
    topic: TopicOrder                      # optional: default topic for shorthand queues
    queues:                                # objects, or "broker-a:3" strings
      - {topic: TopicOrder, brokerName: broker-a, queueId: 0}
      - broker-a:1
    consumers: [10.0.0.5@12345#1, 10.0.0.6@23456#2]   # or a count: 3
    messageModel: CLUSTERING               # optional; BROADCASTING: everyone gets every queue

Assignment files (``--config``, ``--previous``) are a previous ``mqctl allocate -o json``
output (its ``assignments``) or a bare ``{clientId: [queues]}`` mapping.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mqctl.errors import UsageError
from mqctl.fsutil import load_json, load_yaml, read_stream_capped, read_text_capped
from mqctl.models import MessageQueue
from mqctl.timeparse import is_digits

# a queue id is a Java int (MessageQueue.queueId)
MAX_QUEUE_ID = 2**31 - 1

DEFAULT_TOPIC = "TopicTest"
MAX_QUEUES_PER_BROKER = 65_536
MAX_GENERATED_CONSUMERS = 100_000
TOPOLOGY_HINT = ("a topology is {group: G, queues: [{topic, brokerName, queueId} or "
                 "'broker:queueId'], consumers: [client ids] or a count} (docs/allocate.md)")
QUEUE_HINT = "write a queue as 'broker-a:3' or {topic: T, brokerName: broker-a, queueId: 3}"
ASSIGNMENT_HINT = ("expected {clientId: [queues]} (e.g. {'10.0.0.1@1': ['broker-a:0']}) or a "
                   "previous 'mqctl allocate -o json' output")
FILE_HINT = "check the path"


@dataclass(frozen=True, slots=True)
class Topology:
    group: str
    queues: tuple[MessageQueue, ...]
    consumers: tuple[str, ...]
    source: str = ""
    message_model: str = "CLUSTERING"

    @property
    def broadcasting(self) -> bool:
        return self.message_model == "BROADCASTING"


def generated_ids(n: int) -> list[str]:
    """``n`` realistic client ids: ``10.0.0.1@1``, ``10.0.0.2@2``, ... (``ip@pid``, as
    ``ClientConfig.buildMQClientId`` builds them), 254 hosts per /24: ``10.0.1.1@255``."""
    if n < 1 or n > MAX_GENERATED_CONSUMERS:
        raise UsageError(f"consumer count {n} out of range",
                         hint=f"use 1 to {MAX_GENERATED_CONSUMERS}")
    return [f"10.{(i // 254) // 256}.{(i // 254) % 256}.{i % 254 + 1}@{i + 1}"
            for i in range(n)]


def _as_json(v: Any) -> str:
    """A value from a file, in an error, as it would be written in JSON (``["broker-a"]``,
    ``"1"``, ``null``), never a Python repr; long values are cut."""
    text = json.dumps(v, default=str, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def parse_queue(item: Any, topic: str | None, where: str) -> MessageQueue:
    """An object ``{topic, brokerName, queueId}`` or a string ``broker:queueId``."""
    if isinstance(item, MessageQueue):
        return item
    if isinstance(item, str):
        broker, sep, qid = item.strip().rpartition(":")
        if not sep or not broker or not is_digits(qid.strip()):
            raise UsageError(f"{where}: bad queue {_as_json(item)}", hint=QUEUE_HINT)
        if len(qid.strip()) > 10 or int(qid) > MAX_QUEUE_ID:
            raise UsageError(f"{where}: queue id of {_as_json(item)} is beyond {MAX_QUEUE_ID}",
                             hint=QUEUE_HINT)
        return MessageQueue(topic or DEFAULT_TOPIC, broker, int(qid))
    if isinstance(item, dict):
        missing = [k for k in ("brokerName", "queueId") if k not in item]
        if "topic" not in item and not topic:
            missing.insert(0, "topic")
        if missing:
            raise UsageError(f"{where}: queue {_as_json(item)} lacks {', '.join(missing)}",
                             hint=QUEUE_HINT)
        t = item.get("topic", topic)
        b, q = item["brokerName"], item["queueId"]
        for name, v in (("topic", t), ("brokerName", b)):
            if not isinstance(v, str) or not v:
                raise UsageError(f"{where}: {name} must be a non-empty string (got "
                                 f"{_as_json(v)})", hint=QUEUE_HINT)
        if isinstance(q, bool) or not isinstance(q, int) or not 0 <= q <= MAX_QUEUE_ID:
            raise UsageError(f"{where}: queueId must be a non-negative integer (got "
                             f"{_as_json(q)})", hint=QUEUE_HINT)
        assert isinstance(t, str)  # checked in the loop above (mypy cannot follow it)
        return MessageQueue(t, b, q)
    raise UsageError(f"{where}: a queue must be an object or 'broker:queueId', "
                     f"not {type(item).__name__}", hint=QUEUE_HINT)


def parse_queue_spec(spec: str, topic: str | None = None) -> list[MessageQueue]:
    """``broker-a:8,broker-b:8``: 8 queues (ids 0-7) on each broker."""
    out: list[MessageQueue] = []
    seen: set[str] = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        broker, sep, n = part.rpartition(":")
        broker = broker.strip()
        if not sep or not broker or not is_digits(n.strip()):
            raise UsageError(f"--queues: bad entry {part!r}",
                             hint="write BROKER:COUNT, e.g. --queues broker-a:8,broker-b:8")
        count = int(n) if len(n.strip()) <= 10 else MAX_QUEUES_PER_BROKER + 1
        if count > MAX_QUEUES_PER_BROKER:
            raise UsageError(f"--queues: {n.strip()[:20]}{'...' if len(n.strip()) > 20 else ''}"
                             f" queues on {broker} is too many",
                             hint=f"at most {MAX_QUEUES_PER_BROKER} per broker")
        if broker in seen:
            raise UsageError(f"--queues: broker {broker!r} given twice",
                             hint="give each broker once with its queue count")
        seen.add(broker)
        out.extend(MessageQueue(topic or DEFAULT_TOPIC, broker, q) for q in range(count))
    if not out:
        raise UsageError("no queues to allocate", hint="e.g. --queues broker-a:8,broker-b:8")
    return out


def parse_consumer_spec(spec: str) -> list[str]:
    """``c1,c2`` (ids as given, duplicates kept) or a count ``3`` (generated ids)."""
    s = spec.strip()
    if s.isdigit() and not s.isascii():  # ('٣': a count in other digits, or a name? neither)
        raise UsageError(f"--consumers {s[:20]!r}: only ASCII digits 0-9 are read for a count",
                         hint="write --consumers c1,c2 or a count: --consumers 3")
    if is_digits(s):
        if len(s) > 10:
            raise UsageError(f"consumer count {s[:20]}... out of range",
                             hint=f"use 1 to {MAX_GENERATED_CONSUMERS}")
        return generated_ids(int(s))
    ids = [p.strip() for p in s.split(",")]
    if not s or any(not p for p in ids):
        raise UsageError(f"--consumers: empty client id in {spec!r}",
                         hint="write --consumers c1,c2 or a count: --consumers 3")
    return ids


def read_structured(path: str, what: str) -> Any:
    """YAML or JSON from ``path`` (``-`` is stdin); errors name the file. Bounded: a FIFO, a
    device or a file over the cap of allocate's input files is refused (docs/errors.md)."""


    try:
        if path == "-":
            text = read_stream_capped(sys.stdin, what, cap="topology file")
        else:
            text = read_text_capped(path, what, cap="topology file")
    except FileNotFoundError:
        raise UsageError(f"{what} {path!r} does not exist", hint=FILE_HINT) from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path!r} is a directory", hint=FILE_HINT) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {what} {path!r}: {exc}",
                         hint="a readable UTF-8 YAML or JSON file is needed") from None
    if path.endswith(".json"):
        try:
            return load_json(text, f"{what} {path!r}")
        except UsageError as exc:
            exc.hint = exc.hint or "check the syntax near that line"
            raise
    return load_yaml(text, f"{what} {path!r}", hint="YAML or JSON is accepted")


def parse_topology(data: Any, source: str = "topology") -> Topology:
    if not isinstance(data, dict):
        raise UsageError(f"{source}: expected a mapping with 'queues' and 'consumers', found "
                         f"{type(data).__name__}",
                         hint=TOPOLOGY_HINT)
    missing = [k for k in ("queues", "consumers") if k not in data]
    if missing:
        raise UsageError(f"{source}: missing key(s) {', '.join(missing)}",
                         hint=TOPOLOGY_HINT)
    group = data.get("group", "") or ""
    topic = data.get("topic")
    if not isinstance(group, str):
        raise UsageError(f"{source}: 'group' must be a string", hint=TOPOLOGY_HINT)
    if topic is not None and not isinstance(topic, str):
        raise UsageError(f"{source}: 'topic' must be a string", hint=TOPOLOGY_HINT)
    raw_q = data["queues"]
    if not isinstance(raw_q, list):
        raise UsageError(f"{source}: 'queues' must be a list, not {type(raw_q).__name__}",
                         hint=TOPOLOGY_HINT)
    queues = tuple(parse_queue(q, topic, f"{source}: queues[{i}]") for i, q in enumerate(raw_q))
    raw_c = data["consumers"]
    if isinstance(raw_c, int) and not isinstance(raw_c, bool):
        consumers = tuple(generated_ids(raw_c)) if raw_c > 0 else ()
    elif isinstance(raw_c, list):
        bad = [i for i, c in enumerate(raw_c) if not isinstance(c, str) or not c]
        if bad:
            raise UsageError(f"{source}: consumers[{bad[0]}] is not a non-empty string: "
                             f"{_as_json(raw_c[bad[0]])}", hint=TOPOLOGY_HINT)
        consumers = tuple(raw_c)
    else:
        raise UsageError(f"{source}: 'consumers' must be a list of client ids or a count, "
                         f"not {type(raw_c).__name__}", hint=TOPOLOGY_HINT)
    model = data.get("messageModel", "CLUSTERING")
    if not isinstance(model, str) or model.upper() not in ("CLUSTERING", "BROADCASTING"):
        raise UsageError(f"{source}: 'messageModel' must be CLUSTERING or BROADCASTING",
                         hint=TOPOLOGY_HINT)
    return Topology(group=group, queues=queues, consumers=consumers, source=source,
                    message_model=model.upper())


def load_topology(path: str) -> Topology:
    return parse_topology(read_structured(path, "topology file"), f"topology file {path!r}")


def parse_assignment(data: Any, topic: str | None, source: str
                     ) -> dict[str, list[MessageQueue]]:
    """``{clientId: [queues]}`` from a previous ``-o json`` output or a bare mapping."""
    if isinstance(data, dict) and "assignments" in data:
        topic = topic or (data.get("topic") if isinstance(data.get("topic"), str) else None)
        data = data["assignments"]
    if not isinstance(data, dict):
        raise UsageError(f"{source}: expected a mapping of client id to queue list",
                         hint=ASSIGNMENT_HINT)
    out: dict[str, list[MessageQueue]] = {}
    for cid, qs in data.items():
        if not isinstance(cid, str) or not cid:
            raise UsageError(f"{source}: client id {cid!r} is not a non-empty string",
                             hint=ASSIGNMENT_HINT)
        if qs is None:
            qs = []
        if not isinstance(qs, list):
            raise UsageError(f"{source}: queues of {cid!r} must be a list",
                             hint=ASSIGNMENT_HINT)
        out[cid] = [parse_queue(q, topic, f"{source}: {cid}[{i}]") for i, q in enumerate(qs)]
    return out


def load_assignment(path: str, topic: str | None, what: str) -> dict[str, list[MessageQueue]]:
    return parse_assignment(read_structured(path, what), topic, f"{what} {path!r}")


def topics_of(queues: Sequence[MessageQueue]) -> list[str]:
    return sorted({mq.topic for mq in queues})

"""A simulated broker's messages by position and by key: what ``DefaultMessageStore`` reads
for PULL_MESSAGE and VIEW_MESSAGE_BY_ID, and its ``IndexService`` for QUERY_MESSAGE.

The sim keeps no message contents for the messages its producers write (:mod:`.messages`
makes them up from their position), so their index is computed, not stored: each key a
message of :func:`mqctl.sim.messages.make_message` carries can be turned back into the
offsets that carry it. Messages sent back to a retry or dead-letter topic are copies of the
message that failed; their origins are recorded when they are stored
(``BrokerState.copies``) and indexed then, as ``IndexService.buildIndex`` does at put time.

IndexService semantics (apache/rocketmq ``store/index/IndexService``, ``IndexFile``, 4.9.3 and
5.3.3): an entry per key of ``KEYS`` (split by space) and one for ``UNIQ_KEY``, each under
``topic#key``; ``queryOffset`` caps maxNum at ``maxMsgsNumBatch`` (64), walks the entries
newest first, keeps those stored within [begin, end], and stops at maxNum;
``DefaultMessageStore.queryMessage`` returns them in commit-log order. The answer carries the
last index file's end timestamp and end commit-log offset (``indexLastUpdateTimestamp``,
``indexLastUpdatePhyoffset``). A real index matches by key hash, so it can also return a
message of another key with the same hash (clients filter: ``MQAdminImpl.queryMessage``); the
sim's computed index has no collisions.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import Any, Protocol

from mqctl.models import SCHEDULE_TOPIC
from mqctl.sim.messages import (
    SimMessage,
    make_copy,
    make_message,
    parse_phys,
    parse_uniq_key,
    queue_seed,
)
from mqctl.sim.store import QueueLog
from mqctl.timeparse import is_digits

Origin = tuple[str, int, int, int]  # original topic, queue, offset, reconsumeTimes


class BrokerState(Protocol):
    """What the index reads of a broker (``mqctl.sim.broker.state.BrokerState`` has it)."""

    name: str
    cluster: Any
    topics: dict[str, Any]
    logs: dict[tuple[str, int], QueueLog]
    copies: dict[tuple[str, int], list[tuple[int, list[Origin | None]]]]
    copy_index: dict[tuple[str, str], list[tuple[int, int]]]
    sent: dict[tuple[str, int], dict[int, Any]]
    scheduled: dict[int, list[tuple[int, int, str]]]

    def now(self) -> int: ...

    def qlog(self, topic: str, qid: int) -> QueueLog | None: ...

MAX_MSGS_NUM_BATCH = 64  # MessageStoreConfig.maxMsgsNumBatch (IndexService.queryOffset's cap)
DEFAULT_QUERY_MAX_NUM = 32  # MessageStoreConfig.defaultQueryMaxNum (unique-key queries)
_ORDER_KEY = re.compile(r"ORD-([0-9]{5})")
_ORDER_MOD = 100000
_MIX_MOD = 1 << 31


def store_host(b: BrokerState) -> tuple[str, int]:
    addr = b.cluster.servers[b.name].addr if b.name in b.cluster.servers else ""
    host, _, port = addr.rpartition(":")
    return host or "127.0.0.1", int(port or 10911)


def origin_of(b: BrokerState, topic: str, qid: int, offset: int) -> tuple[str, int, int, int
                                                                           ] | None:
    """(original topic, queue, offset, reconsumeTimes) of a sent-back copy, None otherwise."""
    runs = b.copies.get((topic, qid))
    if not runs:
        return None
    i = bisect.bisect_right(runs, offset, key=lambda r: r[0]) - 1
    if i < 0:
        return None
    first, origins = runs[i]
    k = offset - first
    return origins[k] if 0 <= k < len(origins) else None


def scheduled_for(b: BrokerState, qid: int, offset: int) -> str | None:
    """The ``REAL_TOPIC`` of the copy at ``offset`` of SCHEDULE_TOPIC_XXXX queue ``qid``."""
    runs = b.scheduled.get(qid, [])
    i = bisect.bisect_right(runs, offset, key=lambda r: r[0]) - 1
    return runs[i][2] if i >= 0 and offset < runs[i][0] + runs[i][1] else None


def stored_message(b: BrokerState, topic: str, qid: int, offset: int) -> SimMessage:
    """The message at ``offset`` (which the queue holds): one a client sent (SEND_MESSAGE) as
    it was stored, a copy when one was sent back there, else the producer's."""
    sent = b.sent.get((topic, qid))
    if sent and offset in sent:
        return sent[offset]  # type: ignore[no-any-return]
    lg = b.qlog(topic, qid)
    assert lg is not None
    ts = lg.store_ts(offset)
    host = store_host(b)
    origin = origin_of(b, topic, qid, offset)
    if origin is not None:
        otopic, oqid, ooff, times = origin
        olog = b.qlog(otopic, oqid)
        if olog is not None:
            orig = make_message(otopic, b.name, oqid, ooff, olog.store_ts(ooff),
                                b.cluster.scenario.cluster, host)
            if topic == SCHEDULE_TOPIC:
                return make_copy(orig, topic, b.name, offset, ts, times,
                                 real_topic=scheduled_for(b, qid, offset), queue_id=qid,
                                 delay_level=qid + 1)
            via = topic.startswith("%RETRY%") or times > 1
            return make_copy(orig, topic, b.name, offset, ts, times,
                             real_topic=(topic if topic.startswith("%RETRY%") else
                                         "%RETRY%" + topic[len("%DLQ%"):]) if via else None)
    return make_message(topic, b.name, qid, offset, ts, b.cluster.scenario.cluster, host)


def _queues(b: BrokerState, topic: str) -> Iterator[tuple[int, int, int]]:
    conf = b.topics.get(topic)
    if conf is None:
        return
    now = b.now()
    for q in range(max(conf.read, conf.write)):
        lg = b.qlog(topic, q)
        if lg is not None:
            yield q, lg.min_offset, lg.max_offset(now)


def _order_offsets(seed: int, k: int, mn: int, mx: int) -> Iterator[int]:
    """The offsets in [mn, mx) whose ((seed + o) mod 2^31) mod 100000 is ``k``."""
    o = mn
    while o < mx:
        n = (seed + o) % _MIX_MOD
        o += (k - n % _ORDER_MOD) % _ORDER_MOD
        if o >= mx:
            return
        if (seed + o) % _MIX_MOD % _ORDER_MOD == k:
            yield o
            o += 1
        # else the mix wrapped past 2^31 in between: search again from there


def _produced(b: BrokerState, topic: str, key: str) -> Iterator[tuple[int, int]]:
    """(queue, offset) of the producer's messages of ``topic`` that carry ``key``."""
    m = _ORDER_KEY.fullmatch(key)
    uniq = parse_uniq_key(key)
    for q, mn, mx in _queues(b, topic):
        prefix = f"{topic}-{b.name}-{q}-"
        if key.startswith(prefix) and is_digits(key[len(prefix):]):
            o = int(key[len(prefix):])
            if mn <= o < mx:
                yield q, o
        seed = queue_seed(topic, b.name, q)
        if m is not None:
            yield from ((q, o) for o in _order_offsets(seed, int(m.group(1)), mn, mx))
        if uniq is not None and uniq[0] == seed and mn <= uniq[1] < mx:
            yield q, uniq[1]


def query(b: BrokerState, topic: str, key: str, max_num: int, begin: int, end: int
          ) -> list[SimMessage]:
    """``DefaultMessageStore.queryMessage`` over the index: the newest ``max_num`` (capped at
    64) messages of ``topic`` carrying ``key`` stored within [begin, end], in commit-log
    order."""
    max_num = min(max_num, MAX_MSGS_NUM_BATCH)
    if max_num <= 0:
        return []
    hits: list[SimMessage] = []
    for q, o in _produced(b, topic, key):
        if origin_of(b, topic, q, o) is None and o not in b.sent.get((topic, q), {}):
            hits.append(stored_message(b, topic, q, o))
    for q, o in b.copy_index.get((topic, key), ()):
        hits.append(stored_message(b, topic, q, o))
    hits = [m for m in hits if begin <= m.store_ts <= end and key_matches(m, key)]
    hits.sort(key=lambda m: (m.store_ts, m.commit_log_offset), reverse=True)
    return sorted(hits[:max_num], key=lambda m: m.commit_log_offset)


def key_matches(m: SimMessage, key: str) -> bool:
    return key in m.properties.get("KEYS", "").split(" ") or m.properties.get(
        "UNIQ_KEY") == key


def index_last_update(b: BrokerState) -> tuple[int, int]:
    """(indexLastUpdateTimestamp, indexLastUpdatePhyoffset): the newest message indexed on the
    broker (0, 0 before any)."""
    best: tuple[int, int] = (0, 0)
    for (topic, q), lg in b.logs.items():
        mx = lg.max_offset(b.now())
        if mx > lg.min_offset:
            ts = lg.store_ts(mx - 1)
            if ts >= best[0]:
                best = (ts, stored_message(b, topic, q, mx - 1).commit_log_offset)
    return best


def by_commit_log_offset(b: BrokerState, phys: int) -> SimMessage | None:
    """``DefaultMessageStore.selectOneMessageByOffset``: the message at a commit-log offset,
    None when the broker holds none there."""
    pos = parse_phys(phys)
    if pos is None:
        return None
    seed24, offset = pos
    for (topic, q), lg in sorted(b.logs.items()):
        if queue_seed(topic, b.name, q) & 0xFFFFFF != seed24:
            continue
        if lg.min_offset <= offset < lg.max_offset(b.now()):
            m = stored_message(b, topic, q, offset)
            if m.commit_log_offset == phys:
                return m
    return None


def index_copy(b: BrokerState, topic: str, qid: int, offset: int) -> None:
    """``IndexService.buildIndex`` for a copy just stored: its keys and unique key."""
    m = stored_message(b, topic, qid, offset)
    keys = [k for k in m.properties.get("KEYS", "").split(" ") if k]
    uniq = m.properties.get("UNIQ_KEY")
    for k in dict.fromkeys([*keys, *([uniq] if uniq else [])]):
        b.copy_index.setdefault((topic, k), []).append((qid, offset))


__all__ = ["DEFAULT_QUERY_MAX_NUM", "MAX_MSGS_NUM_BATCH", "by_commit_log_offset",
           "index_copy", "index_last_update", "key_matches", "origin_of", "query",
           "store_host", "stored_message"]

"""Broker store files: ``consumerOffset.json`` (ConsumerOffsetManager, pretty fastjson with
bare int keys), ``topics.json`` (TopicConfigManager) and ``subscriptionGroup.json``
(SubscriptionGroupManager)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mqctl.errors import BodyError
from mqctl.lagjob.inputs import Kind, PathMeta
from mqctl.lagjob.parsers.common import (
    GROUP_CFG,
    OBS,
    OUT_OF_RANGE,
    SNAPSHOT_ONLY_NONE,
    TOPIC_CFG,
    Rec,
    _bool,
    _int,
    _line_of,
    bad,
    name_problem,
    range_problem,
)
from mqctl.models import parse_offset_table_key
from mqctl.remoting import fastjson


def _load_store(source: str, kind: str, text: str, ts: int) -> tuple[Any, Rec | None]:
    if not text.strip():
        return None, bad(source, kind, None, "empty file", "", "", ts)
    try:
        return fastjson.loads(text), None
    except BodyError as exc:
        line = _line_of(text, exc.pos)
        snippet = ""
        if line is not None:
            lines = text.splitlines()
            snippet = lines[line - 1] if 0 < line <= len(lines) else ""
        return None, bad(source, kind, line, "malformed store JSON", exc.message, snippet, ts)


def _key_line(text: str, key: str) -> int | None:
    pos = text.find(f'"{key}"')
    return _line_of(text, pos) if pos >= 0 else None


def parse_consumer_offset(source: str, text: str, meta: PathMeta, ts: int,
                          cluster: str) -> Iterator[Rec]:
    """``offsetTable {"topic@group[@broadcast]": {qid: offset}}`` and LMQ's
    ``lmqOffsetTable {"topic@group": offset}`` (queue 0). ``@broadcast`` entries keep their
    suffix in the group name (``G@broadcast``) so they never mix with the clustering offsets."""
    kind = Kind.CONSUMER_OFFSET.value
    doc, err = _load_store(source, kind, text, ts)
    if err is not None:
        yield err
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("offsetTable", {}), dict):
        yield bad(source, kind, 1, "not a consumerOffset.json",
                  "expected an object with offsetTable", text[:200], ts)
        return
    if meta.broker is None:
        yield bad(source, kind, None, "broker unknown",
                  "put the file under <broker>/ or broker=<name>/", "", ts)
        return
    broker = meta.broker
    tables: list[tuple[str, Any, bool]] = [(k, v, False) for k, v in
                                           (doc.get("offsetTable") or {}).items()]
    lmq = doc.get("lmqOffsetTable")
    if isinstance(lmq, dict):
        tables += [(k, v, True) for k, v in lmq.items()]
    for key, value, is_lmq in tables:
        parsed = parse_offset_table_key(key) if isinstance(key, str) else None
        if parsed is None:
            yield bad(source, kind, _key_line(text, str(key)), "bad offsetTable key",
                      "expected topic@group", str(key), ts)
            continue
        topic, group, broadcast = parsed
        why = name_problem(topic=topic, group=group)
        if why is not None:
            yield bad(source, kind, _key_line(text, key), "bad offsetTable key", why, key, ts)
            continue
        if broadcast:
            group = f"{group}@broadcast"
        entries: list[tuple[Any, Any]]
        if is_lmq:
            entries = [(0, value)]
        elif isinstance(value, dict):
            entries = list(value.items())
        else:
            yield bad(source, kind, _key_line(text, key), "bad offsetTable value",
                      "expected {queueId: offset}", repr(value)[:200], ts)
            continue
        for qid, off in entries:
            q, o = _int(qid), _int(off)
            if q is None or o is None or q < 0:
                yield bad(source, kind, _key_line(text, key), "bad offset entry",
                          f"queue {qid!r} offset {off!r}", f"{key}: {qid}: {off}", ts)
                continue
            why = range_problem(queue_ids=(q,), consumer_offset=o)
            if why is not None:
                yield bad(source, kind, _key_line(text, key), OUT_OF_RANGE, why,
                          f"{key}: {qid}: {off}", ts)
                continue
            yield (OBS, (ts, cluster, group, topic, broker, q, None, None, o, None, None, None,
                         None, None, None, None, None, kind, source, *SNAPSHOT_ONLY_NONE))


def _broker_table(source: str, kind: str, text: str, meta: PathMeta, ts: int, key: str,
                  file: str) -> tuple[dict[str, Any], Rec | None]:
    """The ``key`` table of a broker's store file, or the record that quarantines the file (not
    JSON, not that file, or no broker in its path)."""
    doc, err = _load_store(source, kind, text, ts)
    if err is not None:
        return {}, err
    table = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(table, dict):
        return {}, bad(source, kind, 1, f"not a {file}", f"expected {key}", text[:200], ts)
    if meta.broker is None:
        return {}, bad(source, kind, None, "broker unknown",
                       "put the file under <broker>/ or broker=<name>/", "", ts)
    return table, None


def parse_topics(source: str, text: str, meta: PathMeta, ts: int,
                 cluster: str) -> Iterator[Rec]:
    kind = Kind.TOPICS.value
    table, err = _broker_table(source, kind, text, meta, ts, "topicConfigTable", "topics.json")
    if err is not None:
        yield err
        return
    for name, cfg in table.items():
        if not isinstance(cfg, dict) or not isinstance(name, str):
            yield bad(source, kind, _key_line(text, str(name)), "bad topic config", "",
                      repr(cfg)[:200], ts)
            continue
        raw_attrs = cfg.get("attributes")
        attrs: dict[str, Any] = raw_attrs if isinstance(raw_attrs, dict) else {}
        mtype = str(attrs.get("message.type") or attrs.get("+message.type") or "")
        orderly = bool(cfg.get("order")) or mtype.upper() == "FIFO"
        yield (TOPIC_CFG, (ts, cluster, meta.broker, name, _int(cfg.get("readQueueNums")),
                           _int(cfg.get("writeQueueNums")), _int(cfg.get("perm")), orderly,
                           source))


def parse_subscription_group(source: str, text: str, meta: PathMeta, ts: int,
                             cluster: str) -> Iterator[Rec]:
    kind = Kind.SUBSCRIPTION_GROUP.value
    table, err = _broker_table(source, kind, text, meta, ts, "subscriptionGroupTable",
                               "subscriptionGroup.json")
    if err is not None:
        yield err
        return
    for name, cfg in table.items():
        if not isinstance(cfg, dict) or not isinstance(name, str):
            yield bad(source, kind, _key_line(text, str(name)), "bad group config", "",
                      repr(cfg)[:200], ts)
            continue
        yield (GROUP_CFG, (ts, cluster, meta.broker, name, _bool(cfg.get("consumeEnable")),
                           _bool(cfg.get("consumeMessageOrderly")),
                           _bool(cfg.get("consumeBroadcastEnable")), source))

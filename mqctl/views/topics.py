"""``mqctl topics``: the system-topic rule (TopicValidator) and the rows of the topic list
(pure)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mqctl.admin import BrokerFailure
from mqctl.models import DLQ_PREFIX, RETRY_PREFIX
from mqctl.render import Column, Result, Table

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.models import ClusterInfo

# TopicValidator.SYSTEM_TOPIC_SET (4.9.3 and 5.3.3; CHECKPOINT_TOPIC from 5.x) and topics
# brokers register with addSystemTopic (TopicConfigManager: trace topic, SELF_TEST_TOPIC, ...)
SYSTEM_TOPICS = {"TBW102", "SCHEDULE_TOPIC_XXXX", "BenchmarkTest", "OFFSET_MOVED_EVENT",
                 "SELF_TEST_TOPIC", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRACE_TOPIC",
                 "RMQ_SYS_TRANS_OP_HALF_TOPIC", "TRANS_CHECK_MAX_TIME_TOPIC",
                 "CHECKPOINT_TOPIC", "DefaultHeartBeatSyncerTopic", "rocketmq-controller"}
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"  # MixAll.REPLY_TOPIC_POSTFIX


def is_system_topic(topic: str, cluster_names: set[str], broker_names: set[str]) -> str:
    """Classify a topic name as TopicValidator.isSystemTopic does once a broker started:
    TopicConfigManager calls addSystemTopic for the cluster name, the broker name and
    ``<cluster>_REPLY_TOPIC`` (4.9.3 and 5.3.3); ``rmq_sys_`` is SYSTEM_TOPIC_PREFIX."""
    if topic in cluster_names:
        return "cluster"
    if topic in broker_names:
        return "broker"
    if topic.startswith(RETRY_PREFIX):
        return "retry"
    if topic.startswith(DLQ_PREFIX):
        return "dlq"
    if topic.startswith(("rmq_sys_", "RMQ_SYS_", "%LMQ%", "%SYS%")) or topic in SYSTEM_TOPICS \
            or any(topic == f"{c}_{REPLY_TOPIC_POSTFIX}" for c in cluster_names):
        return "system"
    return "normal"


# --kind system lists every system topic, the cluster- and broker-name ones included
KIND_GROUPS = {"system": {"system", "cluster", "broker"}}


def topic_queue_info(tables: Mapping[str, Mapping[str, Mapping[str, Any]]]
                     ) -> dict[str, dict[str, Any]]:
    """Per topic, from each master's GET_ALL_TOPIC_CONFIG table (``{broker: {topic:
    TopicConfig}}``): read and write queues summed over the brokers that have it, those
    brokers, and the message type. A 5.x TopicConfig carries ``attributes``; its type is the
    ``message.type`` attribute (set with ``mqadmin updateTopic -a +message.type=FIFO``), NORMAL
    when absent (TopicConfig.getTopicMessageType, TopicAttributes.TOPIC_MESSAGE_TYPE_ATTRIBUTE
    in apache/rocketmq). 4.x has no message types and no ``attributes``: type None. Brokers
    that disagree give ``FIFO/NORMAL``."""
    out: dict[str, dict[str, Any]] = {}
    for broker in sorted(tables):
        for topic, conf in tables[broker].items():
            d = out.setdefault(topic, {"read_queues": 0, "write_queues": 0, "brokers": [],
                                       "types": set()})
            d["read_queues"] += int_or_zero(conf.get("readQueueNums"))
            d["write_queues"] += int_or_zero(conf.get("writeQueueNums"))
            d["brokers"].append(broker)
            attrs = conf.get("attributes")
            if isinstance(attrs, dict):
                mt = attrs.get("message.type") or attrs.get("+message.type") or "NORMAL"
                d["types"].add(str(mt).upper())
    for d in out.values():
        types = d.pop("types")
        d["message_type"] = "/".join(sorted(types)) or None
    return out


def int_or_zero(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def match_name(name: str, pattern: str | None) -> bool:
    """``--match`` of ``topics`` and ``groups``: case-insensitive; a glob when it has ``*``,
    ``?`` or ``[``, else a substring."""
    if not pattern:
        return True
    n, p = name.lower(), pattern.lower()
    if any(c in p for c in "*?["):
        return fnmatch.fnmatchcase(n, p)
    return p in n


def topic_rows(names: list[str], cluster_names: set[str], broker_names: set[str], kind: str,
               match: str | None = None,
               info: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rows of ``mqctl topics``: ``kind`` all lists every name the name server returned
    (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), as mqadmin topicList does. ``match``:
    :func:`match_name`. ``info`` (:func:`topic_queue_info`) adds the queue counts and
    the message type; a topic no answering broker has gets None (unknown), never 0."""
    rows = []
    for t in names:
        k = is_system_topic(t, cluster_names, broker_names)
        if kind != "all" and k not in KIND_GROUPS.get(kind, {kind}):
            continue
        if not match_name(t, match):
            continue
        row: dict[str, Any] = {"topic": t, "kind": k}
        if info is not None:
            i = info.get(t)
            row.update({"read_queues": i["read_queues"] if i else None,
                        "write_queues": i["write_queues"] if i else None,
                        "brokers": list(i["brokers"]) if i else [],
                        "message_type": i["message_type"] if i else None})
        rows.append(row)
    return rows


def topics_result(names: list[str], info: ClusterInfo, configs: Mapping[str, Any], kind: str,
                  match: str | None = None) -> Result:
    """``mqctl topics``: the topic list's rows (:func:`topic_rows`) with the queue counts and
    types of the masters' topic tables (``configs``: broker -> GET_ALL_TOPIC_CONFIG table, or
    its BrokerFailure), and a note naming the brokers left out."""
    failures = [v for v in configs.values() if isinstance(v, BrokerFailure)]
    tables = {b: v for b, v in configs.items() if not isinstance(v, BrokerFailure)}
    rows = topic_rows(names, set(info.clusters), set(info.brokers), kind, match,
                      info=topic_queue_info(tables))
    shown = [{**r, "queues_cell": "-" if r["read_queues"] is None else r["read_queues"],
              "type_cell": r["message_type"] or "-"} for r in rows]
    notes = ([f"QUEUES and TYPE leave out {', '.join(sorted(f.broker for f in failures))} "
              "(not included: it did not answer)"] if failures else [])
    return Result([Table([Column("topic", "TOPIC"), Column("kind", "KIND"),
                          Column("queues_cell", "QUEUES", "right", raw="read_queues"),
                          Column("type_cell", "TYPE", raw="message_type")], shown,
                         name="topics")],
                  data=rows, notes=notes)


async def capture_topic_tables(admin: Admin) -> tuple[list[str], ClusterInfo, dict[str, Any]]:
    """What ``mqctl topics`` reads (read-only): the name server's topic list and cluster info,
    and every master's topic table (GET_ALL_TOPIC_CONFIG: broker -> table, or its
    BrokerFailure)."""
    names, info = await admin.topic_list(), await admin.cluster_info()
    brokers = [info.brokers[k] for k in sorted(info.brokers)]
    configs = await admin._per_broker(brokers, admin.topic_config_table) if brokers else {}
    return names, info, configs

"""Parsers for every input kind except the canonical snapshot (pure Python, no Spark).

Spark runs these inside ``mapPartitions`` (whole files for store and mqadmin captures, single
lines for logs), so they are plain functions over strings that return plain tuples in the field
order of the ``*_FIELDS`` lists of :mod:`.common` (``schemas.py`` builds the Spark types from
the same lists). Nothing here raises on bad input: every problem becomes a :data:`BAD_FIELDS` record
with the source, the line number and a short, categorical reason.

Formats (apache/rocketmq @8fc57f1; see ``docs/exports.md`` section 2 and the protocol notes):

* ``consumerOffset.json`` (ConsumerOffsetManager, pretty fastjson with bare int keys),
  ``topics.json`` (TopicConfigManager), ``subscriptionGroup.json`` (SubscriptionGroupManager);
* mqadmin ``consumerProgress`` (ConsumerProgressSubCommand, every layout 4.x..5.3),
  ``brokerConsumeStats`` (BrokerConsumeStatsSubCommad), ``topicStatus`` (TopicStatusSubCommand);
* client ``rocketmq_client.log`` (RebalanceImpl, RebalanceLockManager's client side) and broker
  ``lock.log`` (broker RebalanceLockManager, 4.x and 5.x templates).

The package is split by subject: :mod:`.common` (record layouts, tags, plausible ranges, the
bad record), :mod:`.files` (the whole-file entry point), :mod:`.store` (store files),
:mod:`.mqadmin` (mqadmin text) and :mod:`.logs` (client and lock log lines). This ``__init__``
is the package's face (``from mqctl.lagjob import parsers as P``); no module of the package
imports it.
"""

from mqctl.lagjob.inputs import GMT8  # the broker logs' pinned zone (tests use P.GMT8)
from mqctl.lagjob.parsers.common import (
    BAD,
    BAD_FIELDS,
    CONTENT_MAX,
    FUTURE_SLACK_MS,
    GROUP_CFG,
    GROUP_CFG_FIELDS,
    INT_FIELDS,
    INT_MAX,
    LOG_FIELDS,
    LONG_MAX,
    MEMBER,
    MEMBER_FIELDS,
    MIN_CAPTURE_MS,
    OBS,
    OBS_FIELDS,
    OUT_OF_RANGE,
    POINT,
    POINT_FIELDS,
    QUEUE_ID_MAX,
    SNAPSHOT_NON_NEGATIVE,
    SNAPSHOT_ONLY_NONE,
    TAGS,
    TOPIC_CFG,
    TOPIC_CFG_FIELDS,
    Rec,
    bad,
    range_problem,
)
from mqctl.lagjob.parsers.files import parse_file
from mqctl.lagjob.parsers.logs import (
    CLIENT_KEYWORDS,
    LOCK_KEYWORDS,
    LogResult,
    line_time,
    parse_client_log_line,
    parse_lock_log_line,
)
from mqctl.lagjob.parsers.mqadmin import (
    parse_broker_consume_stats,
    parse_consumer_progress,
    parse_local_time,
    parse_topic_status,
)
from mqctl.lagjob.parsers.store import (
    parse_consumer_offset,
    parse_subscription_group,
    parse_topics,
)

__all__ = [
    "BAD", "BAD_FIELDS", "CLIENT_KEYWORDS", "CONTENT_MAX", "FUTURE_SLACK_MS", "GMT8", "GROUP_CFG",
    "GROUP_CFG_FIELDS", "INT_FIELDS", "INT_MAX", "LOCK_KEYWORDS", "LOG_FIELDS", "LONG_MAX",
    "LogResult", "MEMBER", "MEMBER_FIELDS", "MIN_CAPTURE_MS", "OBS", "OBS_FIELDS", "OUT_OF_RANGE",
    "POINT", "POINT_FIELDS", "QUEUE_ID_MAX", "Rec", "SNAPSHOT_NON_NEGATIVE", "SNAPSHOT_ONLY_NONE",
    "TAGS", "TOPIC_CFG",
    "TOPIC_CFG_FIELDS", "bad", "line_time", "parse_broker_consume_stats", "parse_client_log_line",
    "parse_consumer_offset", "parse_consumer_progress", "parse_file", "parse_local_time",
    "parse_lock_log_line", "parse_subscription_group", "parse_topic_status", "parse_topics",
    "range_problem",
]

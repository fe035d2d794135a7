"""The lag job's transforms: pure ``DataFrame -> DataFrame`` functions (built-in Spark functions
only, no Python UDFs), each testable with small inline data.

Vocabulary:

* an **observation** is one queue of one group at one capture (``OBS_FIELDS`` plus
  ``capture_ts``); ``observed_ts`` is when that source captured it, ``capture_ts`` the aligned
  capture it belongs to (:func:`capture_index`; the rule is :mod:`mqctl.lagjob.alignment`);
* the **broker history** of a queue is its (time, max offset) points from every source;
* a **change** is one queue gained or lost by one client; an **event** groups the changes of a
  client (and topic) at one moment; a **round** groups a group's events that follow each other
  closely; a **storm** is many rounds in a short window.

Method notes (``docs/exports.md`` sections 3-5 have the full rules):

* time lag, exact when the capture carries it (snapshot ``delay_ms`` from
  QUERY_CONSUME_TIME_SPAN) and 0 when caught up; otherwise interpolated like
  kafka-lag-exporter (``LookupTable.scala``) but anchored on captured points: the expected
  store time of the first unconsumed message, between the two captures whose max offsets
  bracket it (:func:`mqctl.lagjob.kernel.time_lag`); a lower bound when it predates the
  first capture;
* status per queue over the last ``window`` captures follows Burrow
  (``core/internal/evaluator/caching.go``), adapted to RocketMQ, which has no commit
  timestamps (:func:`mqctl.lagjob.kernel.status`).

The per-queue rules themselves (dedupe, max offsets, lag, time lag, the status window, the
owner track, its changes, resets and unowned intervals) are the kernel's
(:mod:`mqctl.lagjob.kernel`, Arrow in, Arrow out); these transforms read its rows.

The package is split by subject, each module a set of pure functions:

* :mod:`.common`: the queue keys, the source priority and the date helpers;
* :mod:`.snapshot`: the canonical snapshot's records parsed and checked;
* :mod:`.observations`: captures, the broker history, the members and configs joined in;
* :mod:`.status`: the group-topic and group status, the latest rows;
* :mod:`.health`: the group health (status, storms and unowned queues together) and the groups
  that are seen but cannot be judged;
* :mod:`.rebalance`: the rebalance history (changes, resets, moves, unowned, rounds, storms,
  locks).

This ``__init__`` is the package's face: callers use ``from mqctl.lagjob import transforms as
X`` and ``X.name``. No module of the package imports it.
"""

from mqctl.lagjob.transforms.common import (
    BY_TOPIC,
    DAY_MS,
    GQUEUE,
    OBS_KEY,
    QUEUE,
    SOURCE_PRIORITY,
    by_topic,
    date_of,
    iso_of,
    with_date,
)
from mqctl.lagjob.transforms.health import (
    BROADCAST_REASON,
    HEALTH,
    HEALTH_CODE,
    HEALTH_COLUMNS,
    LOGS_ONLY_REASON,
    group_health,
    unseen_groups,
)
from mqctl.lagjob.transforms.observations import (
    KEY_COLUMNS,
    broker_history,
    capture_chains,
    capture_index,
    enrich,
    latest_shared,
    record_keys,
    with_capture,
)
from mqctl.lagjob.transforms.rebalance import (
    CHANGE_COLS,
    LIFE_EVENTS,
    LOCK_EVENTS,
    RESET_WINDOW_MS,
    RESTART_GAP_MS,
    change_hits,
    drop_reset_gaps,
    infer_log_cluster,
    lock_events,
    log_changes,
    mark_resets,
    merge_changes,
    merge_unowned_sources,
    queue_moves,
    rebalance_events,
    rebalance_rounds,
    rebalance_storms,
    reset_events,
    unowned_from_logs,
)
from mqctl.lagjob.transforms.snapshot import (
    SNAPSHOT_BAD,
    SNAPSHOT_OBS,
    SNAPSHOT_OBS_DDL,
    check_snapshot_records,
    line_numbers,
    parse_snapshot_lines,
    parse_snapshot_records,
    split_snapshot_records,
)
from mqctl.lagjob.transforms.status import (
    SEVERITY,
    STATUSES,
    latest_groups,
    latest_groups_rows,
    latest_per_broker,
    latest_status,
    latest_status_rows,
    merge_latest_groups,
    merge_latest_status,
    severity,
    status_name,
    with_rebalances,
)

__all__ = [
    "BROADCAST_REASON", "BY_TOPIC", "HEALTH", "HEALTH_CODE", "HEALTH_COLUMNS",
    "LOGS_ONLY_REASON", "group_health", "unseen_groups", "KEY_COLUMNS", "capture_chains",
    "latest_shared", "record_keys", "CHANGE_COLS", "DAY_MS", "GQUEUE", "LIFE_EVENTS",
    "LOCK_EVENTS", "OBS_KEY", "QUEUE", "RESET_WINDOW_MS", "RESTART_GAP_MS", "SEVERITY",
    "SNAPSHOT_BAD", "SNAPSHOT_OBS", "SNAPSHOT_OBS_DDL", "SOURCE_PRIORITY", "STATUSES",
    "broker_history", "by_topic", "capture_index", "check_snapshot_records", "date_of",
    "drop_reset_gaps", "enrich", "infer_log_cluster", "iso_of",
    "latest_groups", "latest_groups_rows", "latest_per_broker", "latest_status",
    "latest_status_rows", "line_numbers", "merge_latest_groups", "merge_latest_status",
    "lock_events", "log_changes", "change_hits", "mark_resets", "merge_changes",
    "merge_unowned_sources", "parse_snapshot_lines", "parse_snapshot_records", "queue_moves",
    "rebalance_events", "rebalance_rounds", "rebalance_storms", "reset_events", "severity",
    "split_snapshot_records", "status_name", "unowned_from_logs", "with_capture", "with_date",
    "with_rebalances",
]

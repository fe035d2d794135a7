"""The lag metrics in the Prometheus text format: names, labels, units and help of every series
the lag report's textfile carries (node_exporter's textfile collector) and ``mqctl exporter``
serves on ``/metrics``: one list, so that the shipped recording rules, alerts and Grafana
dashboard (docs/prometheus/) read either source unchanged. Pure (no Spark)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

# Prometheus textfile (node_exporter textfile collector: no client-side timestamps)
#
# Names follow Prometheus' conventions (https://prometheus.io/docs/practices/naming/): the
# ``mqctl_`` prefix, base units in the name (``_seconds``, ``_ratio`` for 0..1), no ``_total``
# (every value is a gauge the report recomputes, never a counter), an ``_info`` metric for
# metadata, and enum-style label sets for the status and the health (one series per state,
# 1 for the current one, as prometheus_client's Enum writes them). Unknown is ``NaN``, never a
# missing series and never 0: a comparison with NaN is false, so alerts skip unknown values,
# and ``x == x`` keeps the known ones. docs/exports.md section 6.1 has the table and
# docs/prometheus/ the recording rules (rocketmq-exporter's names), alerts and dashboard.

RETRY_PREFIX = "%RETRY%"
DLQ_PREFIX = "%DLQ%"
NAN = "NaN"


def topic_kind(topic: Any) -> str:
    """``retry`` (``%RETRY%<group>``, also 5.x pop retry topics), ``dlq`` (``%DLQ%<group>``) or
    ``topic``: retry and DLQ backlogs are metrics of their own, never summed into the lag."""
    t = str(topic or "")
    if t.startswith(RETRY_PREFIX):
        return "retry"
    if t.startswith(DLQ_PREFIX):
        return "dlq"
    return "topic"


def esc(v: Any) -> str:
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def label_set(d: dict[str, Any]) -> str:
    return "{" + ",".join(f'{k}="{esc("" if v is None else v)}"' for k, v in d.items()) + "}"


def num(v: Any) -> str:
    """A sample value; ``NaN`` for unknown (None, NaN, infinite)."""
    if v is None:
        return NAN
    if isinstance(v, bool):
        return "1" if v else "0"
    f = float(v)
    if not math.isfinite(f):
        return NAN
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)


STATUS_STATES = ("OK", "WARN", "REWIND", "STALL", "STOP", "UNKNOWN")
HEALTH_STATES = ("OK", "WARN", "ERR", "UNKNOWN")
_NAN_NOTE = " NaN: unknown."

# (name, help): per group, topic and broker (labels cluster, group, topic, broker)
BROKER_METRICS = [
    ("mqctl_consumer_lag_messages", "Messages not yet consumed by the group on the topic's "
     "queues of the broker, at the latest capture (broker max offset minus committed offset; "
     "retry and DLQ topics have their own metrics)." + _NAN_NOTE),
    ("mqctl_consumer_lag_seconds", "Time lag of the broker's slowest queue: how old the "
     "oldest unconsumed message is (exact, interpolated or a lower bound)." + _NAN_NOTE),
    ("mqctl_consumer_lag_seconds_estimated", "1 when mqctl_consumer_lag_seconds is estimated "
     "(interpolated or a lower bound), 0 when the broker measured it." + _NAN_NOTE),
    ("mqctl_consumer_consume_messages_per_second", "Messages consumed per second between the "
     "last two captures." + _NAN_NOTE),
    ("mqctl_consumer_produce_messages_per_second", "Messages produced to the topic's queues "
     "of the broker per second between the last two captures." + _NAN_NOTE),
    ("mqctl_consumer_retry_lag_messages", "Messages waiting in the group's %RETRY% topic on "
     "the broker (not in mqctl_consumer_lag_messages)." + _NAN_NOTE),
    ("mqctl_consumer_dlq_lag_messages", "Messages not consumed on a %DLQ% topic the group "
     "consumes, on the broker (not in mqctl_consumer_lag_messages)." + _NAN_NOTE),
]
# (name, key, help): per group and topic (labels cluster, group, topic)
TOPIC_METRICS = [
    ("mqctl_consumer_max_lag_messages", "max_lag",
     "Largest lag of one queue of the group on the topic (latest capture)." + _NAN_NOTE),
    ("mqctl_consumer_status_severity", "status_code",
     "Status of the group on the topic, by severity: 0 OK, 1 WARN, 2 REWIND, 3 STALL, "
     "4 STOP (Burrow's rules)." + _NAN_NOTE),
    ("mqctl_consumer_window_complete_ratio", "complete",
     "Fraction of the topic's queues whose status window is full (Burrow's complete); below 1 "
     "the status rests on fewer captures than --window." + _NAN_NOTE),
    ("mqctl_consumer_capture_timestamp_seconds", "capture_ts_s",
     "When the latest capture of the group on the topic was taken (unix seconds)."),
]
# (name, key, help): per group (labels cluster, group)
GROUP_METRICS = [
    ("mqctl_group_status_severity", "group_status_code",
     "Status of the group (its worst topic) by severity: 0 OK, 1 WARN, 2 REWIND, 3 STALL, "
     "4 STOP." + _NAN_NOTE),
    ("mqctl_group_health_severity", "health_code",
     "Health of the group: 0 OK, 1 WARN, 2 ERR (the status, rebalance storms and unowned "
     "queues together)." + _NAN_NOTE),
    ("mqctl_group_members", "members", "Members (online clients) of the group." + _NAN_NOTE),
    ("mqctl_group_online", "online",
     "1 when the group has at least one member, 0 when it has none." + _NAN_NOTE),
    ("mqctl_group_lag_messages", "total_lag",
     "Messages not yet consumed by the group over its topics, retry and DLQ topics not "
     "included." + _NAN_NOTE),
    ("mqctl_group_lag_seconds", "lag_seconds",
     "Time lag of the group's slowest queue (retry and DLQ topics not included)." + _NAN_NOTE),
    ("mqctl_group_retry_lag_messages", "retry_lag",
     "Messages waiting in the group's %RETRY% topics." + _NAN_NOTE),
    ("mqctl_group_dlq_lag_messages", "dlq_lag",
     "Messages not consumed on %DLQ% topics the group consumes." + _NAN_NOTE),
    ("mqctl_group_queues", "queues", "Queues of the group at the latest capture."),
    ("mqctl_group_status_queues", "status_queues",
     "Queues in the group's worst state (3 of 8 queues STALL: 3)." + _NAN_NOTE),
    ("mqctl_group_window_complete_ratio", "complete",
     "Fraction of the group's queues whose status window is full." + _NAN_NOTE),
    ("mqctl_group_rebalance_events", "rebalances",
     "Rebalance events (per client and topic) of the group in the report's inputs."),
    ("mqctl_group_rebalance_storms", "storms",
     "Rebalance storms of the group in the report's inputs."),
    ("mqctl_group_rebalance_storm", "in_storm",
     "1 while the group is in a rebalance storm (one reaches into the last --storm-window "
     "before its latest capture), else 0."),
    ("mqctl_group_unowned_ratio", "unowned_share",
     "Share of the group's queue time without an owner in the last --storm-window." + _NAN_NOTE),
    ("mqctl_group_unowned_queues", "unowned_now",
     "Queues of the group without an owner at its latest capture." + _NAN_NOTE),
    ("mqctl_group_capture_timestamp_seconds", "capture_ts_s",
     "When the group's latest capture was taken (unix seconds)." + _NAN_NOTE),
]
RUN_METRICS = [
    ("mqctl_lag_report_last_success_timestamp_seconds", "run_ts_s",
     "When the last lag report finished writing (unix seconds)."),
    ("mqctl_lag_report_duration_seconds", "duration_s",
     "How long the last lag report ran (seconds)." + _NAN_NOTE),
    ("mqctl_lag_report_last_capture_timestamp_seconds", "last_capture_s",
     "The newest capture in the last report's inputs (unix seconds)." + _NAN_NOTE),
    ("mqctl_lag_report_groups", "groups", "Groups in the last report."),
    ("mqctl_lag_report_quarantined_records", "quarantined",
     "Input lines or files the last report could not use (see OUT/quarantine)."),
    ("mqctl_lag_report_rebalance_storms", "storms", "Rebalance storms found by the last report."),
    ("mqctl_lag_report_lock_takeovers", "lock_takeovers",
     "Queue lock takeovers (expired locks taken by another client) in the last report."),
    ("mqctl_lag_report_threshold_breaches", "breaches",
     "--fail-on expressions breached by the last report."),
]


def family(name: str, help_: str, samples: list[str]) -> list[str]:
    return [f"# HELP {name} {help_}", f"# TYPE {name} gauge", *samples]


def render_prometheus(topic_rows: Iterable[dict[str, Any]], group_rows: Iterable[dict[str, Any]],
                      totals: dict[str, Any], run_ts_ms: int,
                      broker_rows: Iterable[dict[str, Any]] = ()) -> str:
    """The textfile: per group, topic and broker; per group and topic; per group (an
    ``_info`` series, the status and health as enums and by severity); the report's own health.
    Every family has its HELP and TYPE lines before its samples, and appears once."""
    out = lag_families(topic_rows, group_rows, broker_rows)
    run = {**totals, "run_ts_s": run_ts_ms / 1000.0}
    counts = ("quarantined", "storms", "lock_takeovers", "breaches", "groups")
    for name, key, help_ in RUN_METRICS:
        v = run.get(key)
        if v is None and key in counts:
            v = 0
        out += family(name, help_, [f"{name} {num(v)}"])
    return "\n".join(out) + "\n"


def lag_families(topic_rows: Iterable[dict[str, Any]], group_rows: Iterable[dict[str, Any]],
                 broker_rows: Iterable[dict[str, Any]] = ()) -> list[str]:
    """The lines of the per-row families (broker, topic, group), each family once with its
    HELP and TYPE lines, in the textfile's order: what the textfile and the exporter share."""
    fams: dict[str, list[str]] = {}

    def add(name: str, labels: dict[str, Any], value: Any) -> None:
        fams.setdefault(name, []).append(f"{name}{label_set(labels)} {num(value)}")

    kind_metric = {"retry": "mqctl_consumer_retry_lag_messages",
                   "dlq": "mqctl_consumer_dlq_lag_messages"}
    for r in broker_rows:
        lab = {"cluster": r.get("cluster") or "", "group": r.get("group"),
               "topic": r.get("topic"), "broker": r.get("broker")}
        kind = topic_kind(r.get("topic"))
        if kind != "topic":
            add(kind_metric[kind], lab, r.get("total_lag"))
            continue
        add("mqctl_consumer_lag_messages", lab, r.get("total_lag"))
        add("mqctl_consumer_lag_seconds", lab, r.get("lag_seconds"))
        add("mqctl_consumer_lag_seconds_estimated", lab,
            None if r.get("lag_seconds") is None else r.get("estimated"))
        add("mqctl_consumer_consume_messages_per_second", lab, r.get("consume_rate"))
        add("mqctl_consumer_produce_messages_per_second", lab, r.get("produce_rate"))
    for r in topic_rows:
        if r.get("topic") is None:  # a group seen only in logs: its group series say so
            continue
        lab = {"cluster": r.get("cluster") or "", "group": r.get("group"),
               "topic": r.get("topic")}
        vals = {**r, "capture_ts_s": (r["capture_ts"] / 1000.0) if r.get("capture_ts")
                else None}
        for name, key, _ in TOPIC_METRICS:
            add(name, lab, vals.get(key))
    for r in group_rows:
        lab = {"cluster": r.get("cluster") or "", "group": r.get("group")}
        add("mqctl_group_info", {**lab, "consume_type": r.get("consume_type") or "",
                                 "message_model": r.get("message_model") or ""}, 1)
        status = r.get("group_status") or "UNKNOWN"
        for st in STATUS_STATES:
            add("mqctl_group_status", {**lab, "status": st}, st == status)
        health = r.get("health") or "UNKNOWN"
        for h in HEALTH_STATES:
            add("mqctl_group_health", {**lab, "health": h}, h == health)
        vals = {**r, "capture_ts_s": (r["capture_ts"] / 1000.0) if r.get("capture_ts")
                else None}
        for name, key, _ in GROUP_METRICS:
            add(name, lab, vals.get(key))
    out: list[str] = []
    for name, help_ in BROKER_METRICS:
        out += family(name, help_, fams.get(name, []))
    for name, _, help_ in TOPIC_METRICS:
        out += family(name, help_, fams.get(name, []))
    out += family("mqctl_group_info", "Metadata of the group (value 1): consume_type "
                   "(CONSUME_PASSIVELY push, CONSUME_ACTIVELY pull, CONSUME_POP) and "
                   "message_model (CLUSTERING, BROADCASTING); empty when unknown.",
                   fams.get("mqctl_group_info", []))
    out += family("mqctl_group_status", "Status of the group (its worst topic, Burrow's "
                   "rules), one series per state: 1 for the current one. UNKNOWN: no queue "
                   "could be judged (a BROADCASTING group, a group seen only in logs).",
                   fams.get("mqctl_group_status", []))
    out += family("mqctl_group_health", "Health of the group, one series per state: OK, WARN "
                   "(status WARN), ERR (status REWIND, STALL or STOP, a rebalance storm, or "
                   "queues unowned over --unowned-max), UNKNOWN.",
                   fams.get("mqctl_group_health", []))
    for name, _, help_ in GROUP_METRICS:
        out += family(name, help_, fams.get(name, []))
    return out

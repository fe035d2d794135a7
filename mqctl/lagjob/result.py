"""What a lag report run produces: its datasets and their columns, the result a caller gets
(:class:`ReportResult`) and its terminal view (:func:`result_view`, shared by ``mqctl lag
report`` and ``python -m mqctl.lagjob.job``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.lagjob.thresholds import Breach

if TYPE_CHECKING:
    from mqctl.render import Result

DATASETS = ("lag", "group_status", "rebalance/events", "rebalance/moves", "rebalance/storms",
            "rebalance/unowned", "rebalance/locks", "quarantine")

LAG_COLUMNS = [
    "date", "capture_ts", "capture_time", "observed_ts", "cluster", "group", "topic", "broker",
    "queue_id", "broker_offset", "broker_offset_ts", "min_offset", "consumer_offset",
    "pull_offset", "lag", "inflight", "lag_seconds", "lag_seconds_source", "estimated",
    "lower_bound", "lag_seconds_upper", "delay_ms", "last_timestamp", "owner", "owners",
    "online", "members", "orderly", "consume_enable", "status", "complete", "window_samples",
    "consume_rate", "produce_rate", "source_kind", "source", "committed", "owner_unknown",
    "members_unanswered", "consume_type", "message_model",
]

GROUP_COLUMNS = [
    "date", "capture_ts", "capture_time", "cluster", "group", "topic", "queues", "queues_known",
    "total_lag", "max_lag", "lag_seconds", "lag_seconds_source", "estimated", "consume_rate",
    "produce_rate", "status", "status_code", "group_status", "group_status_code", "complete",
    "online", "members", "never_committed", "owner_unknown", "status_queues", "window_samples",
    "consume_type", "message_model",
]

# the counts a bounded re-run takes from the manifest and adds the new captures' to: what
# would otherwise read lag and group_status whole (:func:`outputs.with_earlier_counts`)
KEPT_COUNTS = ("lag", "group_status", "owner_unknown", "never_committed")

SUMMARY_COLUMNS = [
    "cluster", "group", "topic", "capture_time", "health", "status", "status_queues",
    "group_status", "total_lag", "max_lag", "lag_seconds", "lag_seconds_source", "peak_lag",
    "peak_lag_seconds", "consume_rate", "produce_rate", "complete", "window_samples", "queues",
    "captures", "online", "members", "rebalances", "storms", "in_storm", "unowned_share",
    "unowned_now", "never_committed", "owner_unknown", "consume_type", "message_model",
    "health_reasons",
]


@dataclass(frozen=True, slots=True)
class ReportResult:
    """What a run produced. ``summary`` holds the latest capture of each group and topic
    (worst first, at most ``summary_limit`` rows; ``truncated`` says when more exist)."""

    summary: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    paths: dict[str, str]
    quarantine: dict[str, int]
    quarantined: int
    breaches: list[Breach]
    counts: dict[str, int]
    inputs: dict[str, int]
    dates: list[str]
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    # what the outputs rest on but may not show (captures closer than --align): on stderr,
    # in summary.json and at the top of report.html
    warnings: list[str] = field(default_factory=list)
    # wall seconds per stage of the run, in order (docs/lag-performance.md; bench/lag_scale.py)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def breached(self) -> bool:
        return bool(self.breaches)

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "groups": self.groups, "paths": self.paths,
                "quarantine": {"total": self.quarantined, "by_reason": self.quarantine},
                "breaches": [b.to_dict() for b in self.breaches], "counts": self.counts,
                "inputs": self.inputs, "dates": self.dates, "truncated": self.truncated,
                "notes": self.notes, "warnings": self.warnings}


def result_view(res: ReportResult, limit: int = 20) -> Result:
    """What a person reads in the terminal: one row per group (worst health first: the health,
    the status with the queues in it, lag, time lag, members and the first reason), the
    breaches and quarantine, one line of counts and where the report is (the directory, the
    HTML page, the Prometheus file). ``-o json`` carries everything (``ReportResult.to_dict``:
    every group/topic row, all paths and notes)."""
    from mqctl.render import Column, Result, Table, cols

    def num(k: str, h: str) -> Column:
        return Column(k, h, "right")

    groups = res.groups or res.summary
    rows = []
    for g in groups[:limit]:
        reasons = list(g.get("health_reasons") or [])
        rows.append({**g, "status_text": g.get("status_text") or g.get("group_status"),
                     "why": reasons[0] if reasons else ""})
    # an unknown (a BROADCASTING group's lag, status and health) shows as "-", as on the page
    tables = [Table([Column("group", "GROUP"), Column("health", "HEALTH", unknown="-"),
                     Column("status_text", "STATUS", unknown="-"), num("total_lag", "LAG"),
                     num("lag_seconds", "LAG S"), num("members", "MEMBERS"),
                     num("rebalances", "REBALANCES"), Column("why", "WHY")],
                    rows, title="Groups (latest capture, worst first)", name="summary")]
    if res.quarantine:
        tables.append(Table(cols("reason", ("count", "COUNT")),
                            [{"reason": k, "count": v} for k, v in
                             sorted(res.quarantine.items())],
                            title="Quarantined input", name="quarantine"))
    if res.breaches:
        tables.append(Table(cols("expr", "group", "topic", "value", "threshold"),
                            [b.to_dict() for b in res.breaches], title="Thresholds breached",
                            name="breaches"))
    notes = []
    if len(groups) > limit or res.truncated:
        notes.append(f"showing {len(rows)} of {len(groups)} group(s); every group and topic is "
                     f"in {res.paths.get('summary_csv', 'summary.csv')}")
    c = res.counts
    notes.append(f"{c.get('lag_rows', 0)} queue observation(s), {c.get('rebalance_events', 0)} "
                 f"rebalance event(s), {c.get('storms', 0)} storm(s), "
                 f"{c.get('lock_takeovers', 0)} lock takeover(s), "
                 f"{res.quarantined} quarantined record(s); {len(res.notes)} note(s) in "
                 f"summary.json (-o json shows everything)")
    where = [f"report: {os.path.dirname(res.paths['summary_json'])}"
             if res.paths.get("summary_json") else None]
    if res.paths.get("html"):
        where.append(f"HTML: {res.paths['html']}")
    if res.paths.get("prometheus"):
        where.append(f"Prometheus: {res.paths['prometheus']}")
    notes.extend(w for w in where if w)  # a line each: paths are long
    return Result(tables, data=res.to_dict(), notes=[n for n in notes if n])

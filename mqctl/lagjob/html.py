"""The lag report's HTML page (``DIR/report.html``): one self-contained file an operator can
open offline or send to a colleague after an incident.

Two halves, so the page is tested without Spark:

* :func:`collect_report_data` (Spark) reduces the job's DataFrames to bounded lists for the
  worst ``HtmlLimits.groups`` groups: the time range covered, each group's totals per capture,
  the ``lines`` queues with the highest peak lag (at most ``svg_points`` points each, the
  maximum per time bucket when there are more captures), owner runs of ``lanes`` queues, and
  at most ``marks`` of each kind of mark (rebalance events, storms, unowned periods, lock
  takeovers) per group. Three small jobs plus the overview timeline; nothing unbounded reaches
  the driver.
* :func:`render_html` (pure) builds the page: a header with the first and last capture, a
  legend of the statuses and columns, the status table (a colour per row: the group's health;
  the status cell coloured by status), a section per group with one inline SVG (lag and time
  lag per queue on log scales, status per capture, owners per queue over time, unowned
  periods, rebalance events by cause, offset resets, lock takeovers and storms on one time
  axis) and overview charts of every charted group, inline SVG too. Every bound that cut
  something is said on the page.

No JavaScript: the page was 5.4 MB with plotly.js inlined (4.8 MB of it) for three overview
charts, while the per-group timelines already drew inline SVG. SVG with ``<title>`` tooltips
draws the same charts in a few hundred kB, opens offline, can be mailed, and runs no script
over cluster data (issue 27 item 4).

Broker data (group, topic, client names) is escaped everywhere; ids of page elements are
generated, never taken from names.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mqctl.lagjob.verdicts import POP_NOTE, fmt_duration, utc

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True, slots=True)
class HtmlLimits:
    """How much of a run the page shows (bounds on what is collected to the driver)."""

    groups: int = 20  # group sections and overview chart lines (worst groups first)
    points: int = 2000  # points per group in the overview charts
    svg_points: int = 300  # points per line in a group's timeline
    lines: int = 8  # queue lines per group (highest peak lag first)
    lanes: int = 16  # owner lanes per group
    runs: int = 400  # owner runs per group
    marks: int = 200  # per group and kind: events, storms, unowned periods, takeovers
    timeline_events: int = 5000  # overview rebalance timeline
    storms: int = 500  # overview storms
    status_rows: int = 200  # rows of the status table


@dataclass(slots=True)
class ReportData:
    """Everything the page shows, bounded (see :class:`HtmlLimits`)."""

    first_ts: int | None = None
    last_ts: int | None = None
    captures: int = 0
    series: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    storms: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    bucket_ms: int | None = None  # overview charts: maximum per bucket
    svg_bucket_ms: int | None = None  # group timelines: maximum per bucket


# --------------------------------------------------------------------------------------------
# Spark side: bounded data for the page

# one schema for every row of the second collect (kinds: line, run, event, storm, unowned,
# takeover for the chosen groups; oevent, ostorm for the overview of all groups; span)
_MARK_COLS: list[tuple[str, str]] = [
    ("kind", "string"), ("_gi", "int"), ("grp", "string"), ("topic", "string"),
    ("broker", "string"), ("queue_id", "int"), ("rank", "int"), ("ts", "long"),
    ("end_ts", "long"), ("n1", "long"), ("n2", "long"), ("x", "double"), ("client", "string"),
    ("other", "string"), ("src", "string"), ("tot", "long"),
]
_SEP = "\u0001"


def collect_report_data(spark: SparkSession, *, gt: DataFrame, lag: DataFrame,
                        events: DataFrame, storms: DataFrame, unowned: DataFrame,
                        locks: DataFrame, group_rows: list[dict[str, Any]],
                        limits: HtmlLimits = HtmlLimits(), has_events: bool = True,
                        has_storms: bool = True) -> ReportData:
    """Reduce the job's DataFrames to what the page shows, in two collects: (1) the chosen
    groups' totals per capture and their queues' peak lag; (2) the drawn queues' points and
    owner changes, the marks (each kind bounded per group by one shared window) and the
    overview's latest events and storms. ``group_rows`` are the latest rows per group, worst
    first (the job's ``groups``): the first ``limits.groups`` get a section.
    ``has_events`` / ``has_storms`` = False leaves out what would find nothing."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    del spark  # groups and queues are picked with literal maps: no join, no broadcast job
    lim = limits
    data = ReportData()
    keys = [(g.get("cluster") or "", g["group"]) for g in group_rows[:lim.groups]]
    every_group = len(keys) == len(group_rows)

    def shaped(kind: str, df: DataFrame, cols: list[tuple[str, str]]) -> DataFrame:
        return df.select(*[F.lit(kind).alias(c) if c == "kind" else
                           (F.col(c) if c in df.columns else F.lit(None)).cast(t).alias(c)
                           for c, t in cols])

    def union(frames: list[DataFrame]) -> DataFrame:
        out = frames[0]
        for f in frames[1:]:
            out = out.unionByName(f)
        return out

    chosen = sorted({g for _c, g in keys})

    def pick(df: DataFrame) -> DataFrame:
        # the chosen groups' rows with their index; a missing cluster and "" are one key (the
        # group filter first: Parquet reads skip on it, and most rows go before the lookup)
        df = df.filter(F.col("group").isin(chosen))
        gmap = F.create_map(*[F.lit(x) for i, (c, g) in enumerate(keys)
                              for x in (f"{c}{_SEP}{g}", i)])
        gi = gmap[F.concat_ws(_SEP, F.coalesce(F.col("cluster"), F.lit("")), F.col("group"))]
        return df.withColumn("_gi", gi).filter(F.col("_gi").isNotNull())

    # ---- collect 1: totals per capture, peak lag per queue ---------------------------------
    qkey = ["_gi", "topic", "broker", "queue_id"]
    per_rows: list[Any] = []
    peaks: list[Any] = []
    if keys:
        per = (pick(gt).groupBy("_gi", "capture_ts")
               .agg(F.try_sum("total_lag").alias("n1"), F.max("lag_seconds").alias("x"),
                    F.max("group_status_code").alias("n2"))
               .withColumnRenamed("capture_ts", "ts"))
        cap = len(keys) * lim.points
        peak = (pick(lag).groupBy(*qkey)
                .agg(F.max("lag").alias("n1"), F.max("capture_ts").alias("end_ts")))
        one = shaped("per", per.limit(cap + 1), _MARK_COLS).unionByName(
            shaped("peak", peak, _MARK_COLS))
        rows1 = one.collect()
        per_rows = [r for r in rows1 if r["kind"] == "per"]
        peaks = [r for r in rows1 if r["kind"] == "peak"]
        if len(per_rows) > cap:  # too many captures to draw: each bucket's maximum
            span = per.agg(F.min("ts").alias("lo"), F.max("ts").alias("hi")).collect()[0]
            data.bucket_ms = b = max(1, (span["hi"] - span["lo"]) // lim.points + 1)
            per_rows = (per.withColumn("ts", F.floor(F.col("ts") / b) * b)
                        .groupBy("_gi", "ts").agg(F.max("n1").alias("n1"),
                                                  F.max("x").alias("x"),
                                                  F.max("n2").alias("n2")).collect())
    many = len({c for c, _g in keys if c}) > 1  # a cluster is named only when there are several
    data.series = [{"group": keys[r["_gi"]][1] if not (many and keys[r["_gi"]][0]) else
                    f"{keys[r['_gi']][1]} ({keys[r['_gi']][0]})", "ts": r["ts"],
                    "total_lag": r["n1"], "lag_seconds": r["x"], "status_code": r["n2"],
                    "_gi": r["_gi"]} for r in per_rows]
    stamps = sorted({r["ts"] for r in per_rows})
    if every_group and stamps:  # every group is charted: their range is the run's
        data.first_ts, data.last_ts = stamps[0], stamps[-1]
        if data.bucket_ms is None:
            data.captures = len(stamps)
    # rank each group's queues by peak lag (then name): the first `lines` get a line, the
    # first `lanes` an owner lane
    ranked: dict[str, int] = {}
    queue_info: list[dict[str, Any]] = []
    by_group: dict[int, list[Any]] = {}
    for r in peaks:
        by_group.setdefault(r["_gi"], []).append(r)
    for gi, qs in by_group.items():
        qs.sort(key=lambda r: (r["n1"] is None, -(r["n1"] or 0), str(r["topic"]),
                               str(r["broker"]), r["queue_id"] or 0))
        for rank, r in enumerate(qs[:max(lim.lines, lim.lanes)], start=1):
            ranked[_SEP.join(str(v) for v in (gi, r["topic"], r["broker"], r["queue_id"]))] = rank
            queue_info.append({"kind": "queue", "_gi": gi, "topic": r["topic"],
                               "broker": r["broker"], "queue_id": r["queue_id"], "rank": rank,
                               "n1": r["n1"], "end_ts": r["end_ts"], "tot": len(qs)})

    # ---- collect 2: points, owner changes, marks, overview ---------------------------------
    parts: list[DataFrame] = []
    if ranked:
        qmap = F.create_map(*[F.lit(x) for k, v in ranked.items() for x in (k, v)])
        # an owner that could not be read (a member did not answer) is its own kind of run
        own = (F.when(F.col("owner").isNull() & F.coalesce(F.col("owner_unknown"),
                                                           F.lit(False)),
                      F.lit(OWNER_UNKNOWN)).otherwise(F.col("owner"))
               if "owner_unknown" in lag.columns else F.col("owner"))
        q = pick(lag.select("cluster", "group", "topic", "broker", "queue_id", "capture_ts",
                            "lag", "lag_seconds", own.alias("owner")))
        q = q.withColumn("rank", qmap[F.concat_ws(_SEP, *[F.col(c).cast("string")
                                                         for c in qkey])])
        q = q.filter(F.col("rank").isNotNull())
        lines = q.filter(F.col("rank") <= lim.lines)
        if len(stamps) > lim.svg_points:  # each bucket's maximum
            b = (stamps[-1] - stamps[0]) // lim.svg_points + 1
            lines = (lines.withColumn("ts", F.floor(F.col("capture_ts") / b) * b)
                     .groupBy(*qkey, "rank", "ts")
                     .agg(F.max("lag").alias("n1"), F.max("lag_seconds").alias("x")))
            data.svg_bucket_ms = b
        else:
            lines = lines.select(*qkey, "rank", F.col("capture_ts").alias("ts"),
                                 F.col("lag").alias("n1"), F.col("lag_seconds").alias("x"))
        parts.append(shaped("line", lines, _MARK_COLS))
        # owners: the captures where a queue's owner changed (the first one included); a
        # run lasts until the next change or the queue's last capture. A null owner (nobody
        # reported one) is unknown and not drawn; unowned periods come from rebalance/unowned
        w = Window.partitionBy(*qkey).orderBy("capture_ts")
        same = (F.lag("owner").over(w).eqNullSafe(F.col("owner"))
                & F.lag("capture_ts").over(w).isNotNull())
        changes = (q.filter(F.col("rank") <= lim.lanes).withColumn("_same", same)
                   .filter(~F.col("_same"))
                   .select(*qkey, "rank", F.col("capture_ts").alias("ts"),
                           F.col("owner").alias("client")))
        marks = [("run", changes),
                 ("unowned", pick(unowned).select(
                     "_gi", "topic", "broker", "queue_id", F.col("start_ts").alias("ts"),
                     "end_ts", F.col("since_ts").alias("n1"),
                     F.col("source_kind").alias("other"))),
                 ("takeover", pick(locks.filter(F.col("takeover"))).select(
                     "_gi", "topic", "broker", "queue_id", "ts", "client",
                     F.col("prev_client").alias("other")))]
        if has_events:
            marks.append(("event", pick(events).select(
                "_gi", "topic", "ts", "client", F.col("n_gained").alias("n1"),
                F.col("n_lost").alias("n2"), F.col("cause").alias("other"))))
        if has_storms:
            marks.append(("storm", pick(storms).select(
                "_gi", F.col("start_ts").alias("ts"), "end_ts", F.col("rounds").alias("n1"),
                F.col("events").alias("n2"),
                F.substring(F.concat_ws(", ", "clients"), 1, 300).alias("other"))))
        # one window bounds every kind per group: owner changes lane by lane from the worst
        # queue, the other marks the latest first
        m = union([shaped(k, df, _MARK_COLS) for k, df in marks])
        order = F.when(F.col("kind") == "run", F.col("rank") * F.lit(1 << 44) + F.col("ts")
                       ).otherwise(-F.col("ts"))
        mw = Window.partitionBy("_gi", "kind")
        bound = F.when(F.col("kind") == "run", lim.runs).otherwise(lim.marks)
        parts.append(m.withColumn("tot", F.count(F.lit(1)).over(mw))
                     .withColumn("_rn", F.row_number().over(mw.orderBy(order)))
                     .filter(F.col("_rn") <= bound).drop("_rn"))
    if has_events:
        parts.append(shaped("oevent", events.orderBy(F.col("ts").desc())
                            .limit(lim.timeline_events).select(
                                F.col("group").alias("grp"), "topic", "ts", "client",
                                F.col("n_gained").alias("n1"), F.col("n_lost").alias("n2"),
                                F.col("cause").alias("other"),
                                F.col("source_kind").alias("src")), _MARK_COLS))
    if has_storms:
        parts.append(shaped("ostorm", storms.orderBy(F.col("start_ts").desc())
                            .limit(lim.storms).select(
                                F.col("group").alias("grp"), F.col("start_ts").alias("ts"),
                                "end_ts", F.col("rounds").alias("n1")), _MARK_COLS))
    if not (every_group and stamps):  # the range of every group's captures
        parts.append(shaped("span", gt.agg(F.min("capture_ts").alias("ts"),
                                           F.max("capture_ts").alias("end_ts"),
                                           F.countDistinct("capture_ts").alias("n1")),
                            _MARK_COLS))
    rows = [r.asDict() for r in union(parts).collect()] if parts else []
    for r in rows:
        if r["kind"] == "span":
            data.first_ts, data.last_ts = r["ts"], r["end_ts"]
            data.captures = int(r["n1"] or 0)
    data.events = sorted(({"ts": r["ts"], "group": r["grp"], "client": r["client"],
                           "topic": r["topic"], "n_gained": r["n1"], "n_lost": r["n2"],
                           "source_kind": r["src"], "cause": r["other"]}
                          for r in rows if r["kind"] == "oevent"),
                         key=lambda e: e["ts"], reverse=True)
    data.storms = sorted(({"group": r["grp"], "start_ts": r["ts"], "end_ts": r["end_ts"],
                           "rounds": r["n1"]} for r in rows if r["kind"] == "ostorm"),
                         key=lambda s: s["start_ts"], reverse=True)
    data.groups = _sections(keys, group_rows, data.series, queue_info + rows, lim)
    return data


def _downsample(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """At most about ``n`` time-ordered rows: each bucket's maximum of every value (None when
    the bucket has no known value), at the bucket's first time."""
    if len(rows) <= n or n < 1:
        return rows
    t0, t1 = rows[0]["ts"], rows[-1]["ts"]
    width = max(1, (t1 - t0) // n + 1)
    out: list[dict[str, Any]] = []
    for r in rows:
        b = (r["ts"] - t0) // width
        if out and out[-1]["_b"] == b:
            cur = out[-1]
            for k in ("total_lag", "lag_seconds", "status_code"):
                if r.get(k) is not None:
                    cur[k] = r[k] if cur.get(k) is None else max(cur[k], r[k])
        else:
            out.append({**r, "_b": b})
    return out


def _row(r: Any) -> dict[str, Any]:
    return {k: (v.asDict() if hasattr(v, "asDict") else v) for k, v in r.asDict().items()}


def _sections(keys: list[tuple[str, str]], group_rows: list[dict[str, Any]],
              series: list[dict[str, Any]], marks: list[dict[str, Any]],
              lim: HtmlLimits) -> list[dict[str, Any]]:
    """Per chosen group, the section's data (pure: from the collected rows)."""
    out: list[dict[str, Any]] = []
    for gi, (cluster, group) in enumerate(keys):
        mine = [m for m in marks if m["_gi"] == gi]
        totals = _downsample(sorted((s for s in series if s.get("_gi") == gi),
                                    key=lambda s: s["ts"]), lim.svg_points)
        queues: dict[tuple[Any, ...], dict[str, Any]] = {}
        lanes: dict[tuple[Any, ...], dict[str, Any]] = {}
        nq = 0
        for m in mine:
            if m["kind"] == "queue":
                nq = max(nq, m["tot"] or 0)
                key = (m["topic"], m["broker"], m["queue_id"])
                d = {"topic": m["topic"], "broker": m["broker"], "queue_id": m["queue_id"],
                     "rank": m["rank"], "peak": m["n1"]}
                if (m["rank"] or 0) <= lim.lines:
                    queues[key] = {**d, "points": []}
                if (m["rank"] or 0) <= lim.lanes:
                    lanes[key] = {**d, "runs": [], "last_ts": m["end_ts"]}
        changes: dict[tuple[Any, ...], list[tuple[int, Any]]] = {}
        for m in mine:
            key = (m["topic"], m["broker"], m["queue_id"])
            if m["kind"] == "line" and key in queues:
                queues[key]["points"].append((m["ts"], m["n1"], m["x"]))
            elif m["kind"] == "run" and key in lanes:
                changes.setdefault(key, []).append((m["ts"], m["client"]))
        run_rows = [m for m in mine if m["kind"] == "run"]
        # the bound keeps the first changes by lane: past the last lane it reached nothing is
        # known, and that lane's last kept owner is known only at its change
        cut_rank = (max(m["rank"] or 0 for m in run_rows)
                    if run_rows and int(run_rows[0]["tot"] or 0) > len(run_rows) else None)
        for key, ch in changes.items():  # a run: from a change to the next (or the last capture)
            ch.sort(key=lambda c: c[0])
            cut = cut_rank is not None and lanes[key]["rank"] == cut_rank
            for i, (ts, owner) in enumerate(ch):
                end = (ch[i + 1][0] if i + 1 < len(ch) else
                       ts if cut else lanes[key]["last_ts"] or ts)
                if owner is not None:
                    lanes[key]["runs"].append((ts, end, owner))
        if cut_rank is not None:
            for ln in lanes.values():
                ln["cut"] = (ln["rank"] or 0) >= cut_rank
        kinds: dict[str, list[dict[str, Any]]] = {}
        totals_by_kind: dict[str, int] = {}
        for m in mine:
            if m["kind"] in ("event", "storm", "unowned", "takeover"):
                kinds.setdefault(m["kind"], []).append(m)
                totals_by_kind[m["kind"]] = int(m["tot"] or 0)
        run_total = max((int(m["tot"] or 0) for m in mine if m["kind"] == "run"), default=0)
        latest = next((g for g in group_rows if (g.get("cluster") or "") == cluster
                       and g["group"] == group), {})
        for qd in queues.values():
            qd["points"].sort()
        for ld in lanes.values():
            ld["runs"].sort()
        out.append({
            "cluster": cluster, "group": group, "latest": latest, "totals": totals,
            "queues": sorted(queues.values(), key=lambda d: d["rank"]),
            "lanes": sorted(lanes.values(), key=lambda d: (str(d["topic"]), str(d["broker"]),
                                                           d["queue_id"] or 0)),
            "queue_count": nq, "runs_total": run_total,
            "events": sorted(kinds.get("event", []), key=lambda m: m["ts"]),
            "storms": sorted(kinds.get("storm", []), key=lambda m: m["ts"]),
            "unowned": sorted(kinds.get("unowned", []), key=lambda m: m["ts"]),
            "takeovers": sorted(kinds.get("takeover", []), key=lambda m: m["ts"]),
            "totals_by_kind": totals_by_kind,
        })
    return out


# --------------------------------------------------------------------------------------------
# formatting

STATUS_ORDER = ("OK", "WARN", "REWIND", "STALL", "STOP")
STATUS_COLOURS = {"OK": "#3a9d3a", "WARN": "#d9a400", "REWIND": "#e07b00", "STALL": "#d2502a",
                  "STOP": "#c0162c"}
# the group health (transforms/health.py): Burrow's group words
HEALTH_COLOURS = {"OK": "#3a9d3a", "WARN": "#c99700", "ERR": "#c0162c"}
HEALTH_MEANING = {
    "ERR": "The status is REWIND, STALL or STOP, or the group is in a rebalance storm, or its "
           "queues were unowned for --unowned-max of the time in the last --storm-window "
           "(the why column says which).",
    "WARN": "The status is WARN: the consumers move but fall behind.",
    "OK": "The status is OK, no storm, queues owned.",
    "-": "Unknown: the report cannot judge the group (a BROADCASTING group keeps its offsets "
         "in the clients; a group seen only in logs has no offsets in the inputs).",
}
STATUS_MEANING = {
    "OK": "Caught up at some capture of the window (lag <= --allowed-lag, or time lag <= "
          "--allowed-lag-seconds), or consuming with the lag going down.",
    "WARN": "The consumer moves, but the lag never went down between two captures of the "
            "window: it is falling behind.",
    "REWIND": "The committed offset went backwards in the window (an offset reset, or a "
              "re-commit after a rebalance) and did not get back: messages are read again.",
    "STALL": "The group is online but the committed offset did not move over the whole "
             "window while messages wait: the consumers are stuck.",
    "STOP": "Nobody consumes: the group has no members, or (membership unknown) the offset "
            "did not move over the window while the lag grew.",
}
COLUMN_MEANING = [
    ("cluster, group, topic", "What was measured; one row per group and topic."),
    ("health", "The group's health (legend above): its status, rebalance storms and unowned "
               "queues together; the row has its colour."),
    ("status", "The worst status of the topic's queues at the latest capture (legend above), "
               "with how many queues are in it (STALL, 3 of 8 queues) and, hatched, when it "
               "rests on fewer captures than the window (window 1 of 10)."),
    ("lag", "Messages not yet consumed, summed over the topic's queues: broker max offset "
            "minus the group's committed offset. A queue the group never committed (consumer "
            "offset none) counts its whole queue, as mqadmin's Diff does: where its consumers "
            "would start depends on their consumeFromWhere (the notes count such queues)."),
    ("max lag", "The largest lag of a single queue."),
    ("time lag", "How old the oldest unconsumed message is (the slowest queue): how far "
                 "behind the group is in time."),
    ("time lag source", "exact: the broker measured it (QUERY_CONSUME_TIME_SPAN); "
                        "interpolated: dated from the captured max-offset history; "
                        "lower_bound: older than the first capture, so at least this; "
                        "unknown: nothing to date it with."),
    ("consume/s, produce/s", "Messages per second consumed and produced since the previous "
                             "capture, summed over the queues."),
    ("complete", "Fraction of the queues whose status window is full (1 = a full window of "
                 "captures seen)."),
    ("capture", "When the latest capture of the group and topic was taken (UTC)."),
    ("why", "What makes the group's health what it is, and what the report cannot judge."),
    ("-", "Unknown: mqctl could not know the value (never shown as 0)."),
]
# the owner of a lane run whose owner could not be read (snapshot owner_unknown)
OWNER_UNKNOWN = "\u0000owner-unknown"
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31"]
CAUSE_COLOURS = {"rebalance": "#1f77b4", "stop": "#555555", "crash": "#b00020",
                 "reset": "#7b3fb5"}
E = html.escape


def _utc(ms: Any) -> str:
    """The page's one time format (the header, the tables, the tooltips, the generated stamp):
    ``2024-06-01 10:00:00 UTC``."""
    return utc(ms)


def fmt_count(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.1f}"
    return f"{int(v):,}"


def _short(v: Any) -> str:
    """Axis labels: 1k, 10k, 1M."""
    for div, suf in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:g}{suf}"
    return f"{v:g}"


def _mid(s: str, n: int) -> str:
    """Shorten in the middle (labels in the SVG; the full text is in its tooltip)."""
    return s if len(s) <= n else s[: n // 2 - 1] + "…" + s[-(n - n // 2):]


def _status_name(code: Any) -> str | None:
    if code is None:
        return None
    try:
        return STATUS_ORDER[int(code)]
    except (ValueError, IndexError):
        return None


def _qid(d: dict[str, Any]) -> str:
    return f"{d['broker']}:{d['queue_id']}"


def _qname(d: dict[str, Any]) -> str:
    return f"{d['topic']} {_qid(d)}"


def _storm_text(s: dict[str, Any]) -> str:
    return (f"rebalance storm {_utc(s['ts'])} to {_utc(s['end_ts'])}: {s['n1']} rounds, "
            f"{s['n2']} events; clients {s['other'] or '-'}")


def _unknown_owner_text(queue: str, start: Any, end: Any) -> str:
    return (f"owner of {queue} unknown from {_utc(start)} to {_utc(end)}: a member did not "
            "answer its running info (not a loss: the previous owner is carried across)")


def _unowned_text(u: dict[str, Any], what: str) -> str:
    return f"no owner of {_qname(u)} from {_utc(u['ts'])} {what} (seen in {u['other']})"


def _event_text(e: dict[str, Any], cause: str) -> str:
    return f"{_utc(e['ts'])} {cause}: {e['client']} {e['topic']} +{e['n1']} -{e['n2']}"


def _takeover_text(k: dict[str, Any]) -> str:
    return (f"{_utc(k['ts'])} lock of {_qname(k)} taken over by {k['client']} from "
            f"{k['other']}")


# --------------------------------------------------------------------------------------------
# the per-group timeline (inline SVG)

_W, _L, _R = 1000, 178, 14
_PW = _W - _L - _R


class _Svg:
    def __init__(self, t0: int, t1: int) -> None:
        self.t0, self.t1 = t0, t1
        self.parts: list[str] = []

    def x(self, ts: Any) -> float:
        if self.t1 <= self.t0:
            return _L + _PW / 2
        f = (float(ts) - self.t0) / (self.t1 - self.t0)  # logs may reach past the captures
        return round(_L + min(1.0, max(0.0, f)) * _PW, 1)

    def add(self, s: str) -> None:
        self.parts.append(s)


def _symlog(v: float) -> float:
    return math.log10(1 + max(0.0, v))


def _lag_ticks(vmax: float) -> list[tuple[float, str]]:
    """0, then powers of ten up to the first at or above ``vmax`` (1 is left out on a tall
    scale: it would sit on top of 0)."""
    top = max(1, math.ceil(math.log10(max(vmax, 1.0))))
    step = max(1, math.ceil(top / 7))  # at most about 7 labels in the panel
    ks = [k for k in range(0 if top < 3 else 1, top + 1) if (top - k) % step == 0]
    return [(0, "0")] + [(10.0 ** k, _short(10.0 ** k)) for k in ks]


_SEC_TICKS = [(1, "1s"), (10, "10s"), (60, "1m"), (600, "10m"), (3600, "1h"), (36000, "10h"),
              (86400, "1d"), (864000, "10d"), (8640000, "100d")]


def _sec_ticks(vmax: float) -> list[tuple[float, str]]:
    out: list[tuple[float, str]] = [(0, "0")]
    for v, label in _SEC_TICKS:
        out.append((v, label))
        if v >= vmax:
            break
    if len(out) > 4:  # 1s would sit on top of 0
        del out[1]
    return out


def _time_ticks(t0: int, t1: int) -> list[tuple[int, str]]:
    span = max(1, t1 - t0)
    steps = [60_000 * m for m in (1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880,
                                  10080)]
    step = next((s for s in steps if span / s <= 8), steps[-1])
    first = (t0 + step - 1) // step * step
    fmt = "%H:%M" if span < 86_400_000 else "%m-%d %H:%M"
    return [(t, datetime.fromtimestamp(t / 1000, tz=UTC).strftime(fmt))
            for t in range(first, t1 + 1, step)]


def _polyline(svg: _Svg, pts: list[tuple[Any, Any]], y: Any, colour: str, width: float,
              title: str, cls: str) -> None:
    """A line through the known points; an unknown value (None) breaks it: a gap, not 0."""
    segs: list[list[str]] = [[]]
    for ts, v in pts:
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            if segs[-1]:
                segs.append([])
            continue
        segs[-1].append(f"{svg.x(ts)},{y(float(v)):.1f}")
    body = []
    for seg in segs:
        if len(seg) == 1:
            cx, cy = seg[0].split(",")
            body.append(f'<circle cx="{cx}" cy="{cy}" r="2" fill="{colour}"/>')
        elif seg:
            body.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke="{colour}" '
                        f'stroke-width="{width}" stroke-linejoin="round"/>')
    if body:
        svg.add(f'<g class="{cls}"><title>{E(title)}</title>{"".join(body)}</g>')


def _value_panel(svg: _Svg, top: float, height: float, label: str, ticks: list[tuple[float, str]],
                 total: list[tuple[Any, Any]], total_title: str,
                 queues: list[tuple[list[tuple[Any, Any]], str, str]], cls: str) -> None:
    bottom = top + height
    ymax = max(_symlog(ticks[-1][0]), 1e-9)

    def y(v: float) -> float:  # beyond the last tick (over 100 days): at the top
        return bottom - min(1.0, _symlog(v) / ymax) * height

    svg.add(f'<text class="plabel" x="6" y="{top + 10:.0f}">{E(label)}</text>')
    for v, t in ticks:
        yy = y(v)
        svg.add(f'<line class="grid" x1="{_L}" x2="{_W - _R}" y1="{yy:.1f}" y2="{yy:.1f}"/>'
                f'<text class="tick" x="{_L - 4}" y="{yy + 3:.1f}" text-anchor="end">{E(t)}'
                "</text>")
    for pts, colour, title in queues:
        _polyline(svg, pts, y, colour, 1.2, title, cls + " queue")
    _polyline(svg, total, y, "#111", 2.2, total_title, cls + " total")


def _group_svg(gi: int, g: dict[str, Any], t0: int, t1: int,
               owner_colour: dict[str, str]) -> str:
    svg = _Svg(t0, t1)
    topics = {str(q["topic"]) for q in g["queues"]} | {str(ln["topic"]) for ln in g["lanes"]}

    def qlabel(d: dict[str, Any]) -> str:
        base = f"{d['broker']}:{d['queue_id']}"
        return base if len(topics) <= 1 else f"{d['topic']} {base}"

    y0 = 8.0
    lag_h, tl_h, lane_h, strip_h = 120.0, 96.0, 13.0, 10.0
    # a pop group: the broker hands out every queue's messages to whichever client pops, so
    # no client owns a queue: no lanes (empty ones would read as "owner unknown"), a note
    pop = (g.get("latest") or {}).get("consume_type") == "CONSUME_POP"
    lanes = [] if pop else g["lanes"]
    n_lanes = max(1, len(lanes))
    # layout: lag, time lag, status strip, owner lanes, marks, axis
    y_lag = y0
    y_tl = y_lag + lag_h + 16
    y_st = y_tl + tl_h + 12
    y_ln = y_st + strip_h + 16
    y_mk = y_ln + n_lanes * lane_h + 8
    y_ax = y_mk + 2 * 14 + 4
    height = y_ax + 18
    # storms behind everything, across every panel
    for s in g["storms"]:
        xa, xb = svg.x(s["ts"]), svg.x(s["end_ts"] if s["end_ts"] is not None else s["ts"])
        svg.add(f'<rect class="storm" x="{xa}" y="{y0}" width="{max(2.0, xb - xa):.1f}" '
                f'height="{y_ax - y0:.0f}" fill="#e02020" fill-opacity="0.13"><title>'
                f"{E(_storm_text(s))}</title></rect>")
    for t, label in _time_ticks(t0, t1):
        xx = svg.x(t)
        svg.add(f'<line class="vgrid" x1="{xx}" x2="{xx}" y1="{y0}" y2="{y_ax}"/>'
                f'<text class="tick" x="{xx}" y="{y_ax + 12:.0f}" text-anchor="middle">'
                f"{E(label)}</text>")
    totals = g["totals"]
    qcol = {id(q): PALETTE[i % len(PALETTE)] for i, q in enumerate(g["queues"])}
    lag_max = max([v for _, v in ((s["ts"], s.get("total_lag")) for s in totals)
                   if v is not None] + [p[1] for q in g["queues"] for p in q["points"]
                                        if p[1] is not None] + [1])
    _value_panel(svg, y_lag, lag_h, "lag (messages, log)", _lag_ticks(float(lag_max)),
                 [(s["ts"], s.get("total_lag")) for s in totals],
                 f"{g['group']}: total lag", [
                     ([(p[0], p[1]) for p in q["points"]], qcol[id(q)],
                      f"{q['topic']} {q['broker']}:{q['queue_id']} lag") for q in g["queues"]],
                 "lag")
    tl_max = max([s.get("lag_seconds") for s in totals if s.get("lag_seconds") is not None]
                 + [p[2] for q in g["queues"] for p in q["points"] if p[2] is not None] + [1])
    _value_panel(svg, y_tl, tl_h, "time lag (log)", _sec_ticks(float(tl_max)),
                 [(s["ts"], s.get("lag_seconds")) for s in totals],
                 f"{g['group']}: time lag of the slowest queue (s)", [
                     ([(p[0], p[2]) for p in q["points"]], qcol[id(q)],
                      f"{q['topic']} {q['broker']}:{q['queue_id']} time lag (s)")
                     for q in g["queues"]], "timelag")
    # status per capture: a strip of colours (a segment lasts until the next capture)
    svg.add(f'<text class="plabel" x="6" y="{y_st + 9:.0f}">status</text>')
    i = 0
    while i < len(totals):  # one rectangle per run of captures with the same status
        name = _status_name(totals[i].get("status_code"))
        j = i + 1
        while j < len(totals) and _status_name(totals[j].get("status_code")) == name:
            j += 1
        if name is not None:
            start = totals[i]["ts"]
            end = totals[j]["ts"] if j < len(totals) else totals[j - 1]["ts"]
            xa, xb = svg.x(start), svg.x(end)
            what = f"{name} from {_utc(start)}" + (f" until {_utc(end)}" if j < len(totals)
                                                    else f" to {_utc(end)} (the last capture)")
            svg.add(f'<rect class="status st-{name}" x="{xa}" y="{y_st}" '
                    f'width="{max(2.0, xb - xa):.1f}" height="{strip_h}" '
                    f'fill="{STATUS_COLOURS[name]}"><title>{E(what)}</title></rect>')
        i = j
    # owners per queue
    svg.add(f'<text class="plabel" x="6" y="{y_ln - 3:.0f}">owners per queue</text>')
    lane_of = {(str(ln["topic"]), str(ln["broker"]), ln["queue_id"]): i
               for i, ln in enumerate(lanes)}
    if pop:
        svg.add(f'<text class="pop-note" x="{_L + 6}" y="{y_ln + 10:.0f}">{E(POP_NOTE)}</text>')
    elif not lanes:
        svg.add(f'<text class="tick" x="{_L + 6}" y="{y_ln + 10:.0f}">no owner reported in the '
                "captures (owners are unknown, not absent)</text>")
    for i, ln in enumerate(lanes):
        ly = y_ln + i * lane_h
        svg.add(f'<text class="lane" x="{_L - 4}" y="{ly + 10:.1f}" text-anchor="end">'
                f"<title>{E(_qname(ln))}</title>"
                f"{E(_mid(qlabel(ln), 30))}</text>")
        for start, end, owner in ln["runs"]:
            xa, xb = svg.x(start), svg.x(end)
            if owner == OWNER_UNKNOWN:
                svg.add(f'<rect class="own-unknown" x="{xa}" y="{ly + 1:.1f}" '
                        f'width="{max(1.5, xb - xa):.1f}" height="{lane_h - 3}" '
                        'fill="#dddddd" stroke="#888888" stroke-dasharray="1,2"><title>'
                        f"{E(_unknown_owner_text(qlabel(ln), start, end))}</title></rect>")
                continue
            svg.add(f'<rect class="own" x="{xa}" y="{ly + 1:.1f}" '
                    f'width="{max(1.5, xb - xa):.1f}" height="{lane_h - 3}" '
                    f'fill="{owner_colour.get(str(owner), "#999")}"><title>'
                    f"{E(f'{owner} owned {qlabel(ln)} from {_utc(start)} to {_utc(end)}')}"
                    "</title></rect>")
    for u in g["unowned"]:
        li = lane_of.get((str(u["topic"]), str(u["broker"]), u["queue_id"]))
        if li is None:
            continue
        ly = y_ln + li * lane_h
        end = u["end_ts"] if u["end_ts"] is not None else t1
        xa, xb = svg.x(u["ts"]), svg.x(end)
        what = "still unowned" if u["end_ts"] is None else f"until {_utc(u['end_ts'])}"
        svg.add(f'<rect class="unowned" x="{xa}" y="{ly + 1:.1f}" '
                f'width="{max(2.0, xb - xa):.1f}" height="{lane_h - 3}" fill="#ffffff" '
                f'stroke="#d00000" stroke-width="1.2" stroke-dasharray="3,2"><title>'
                f"{E(_unowned_text(u, what))}</title></rect>")
    # marks: rebalance events (colour by cause) and lock takeovers
    ym1, ym2 = y_mk + 7, y_mk + 21
    svg.add(f'<text class="plabel" x="6" y="{ym1 + 4:.0f}">rebalances, resets</text>'
            f'<text class="plabel" x="6" y="{ym2 + 4:.0f}">lock takeovers</text>')
    for e in g["events"]:
        xx, cause = svg.x(e["ts"]), str(e["other"] or "rebalance")
        svg.add(f'<path class="event cause-{E(cause if cause in CAUSE_COLOURS else "other")}" '
                f'd="M{xx},{ym1 - 5} l4,8 l-8,0 z" fill="{CAUSE_COLOURS.get(cause, "#333")}">'
                f"<title>{E(_event_text(e, cause))}</title></path>")
    for k in g["takeovers"]:
        xx = svg.x(k["ts"])
        svg.add(f'<path class="takeover" d="M{xx},{ym2 - 5} l4,5 l-4,5 l-4,-5 z" '
                f'fill="#e67e00"><title>'
                f"{E(_takeover_text(k))}</title></path>")
    svg.add(f'<line class="axis" x1="{_L}" x2="{_W - _R}" y1="{y_ax}" y2="{y_ax}"/>')
    label = f"timeline of {g['group']}"
    return (f'<svg class="timeline" id="svg-{gi}" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {_W} {height:.0f}" role="img" aria-label="{E(label)}">'
            + "".join(svg.parts) + "</svg>")


# --------------------------------------------------------------------------------------------
# the page

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:1.2em 1.6em;color:#222;
max-width:1200px}
h1{font-size:1.45em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.6em;
border-bottom:1px solid #ddd;padding-bottom:.15em} h3{font-size:1.05em;margin:.2em 0}
table{border-collapse:collapse;font-size:.85em} td,th{border:1px solid #ddd;padding:3px 6px}
th{background:#f4f4f4;text-align:left} td.num{text-align:right;font-variant-numeric:tabular-nums}
td.time,td.num{white-space:nowrap}
.meta{color:#555;font-size:.9em;margin:.2em 0} .range{font-size:1.05em;margin:.3em 0}
tr.st-OK td{background:#eef8ee} tr.st-WARN td{background:#fff6d8}
tr.st-REWIND td{background:#ffead6} tr.st-STALL td{background:#ffe1d6}
tr.st-STOP td{background:#ffd6da}
tr.h-OK td{background:#eef8ee} tr.h-WARN td{background:#fff6d8} tr.h-ERR td{background:#ffd6da}
tr.unknown td{background:#f0f0f0;color:#555}
td.status.st-OK{color:#1f6b1f} td.status.st-WARN{color:#8a6700}
td.status.st-REWIND,td.status.st-STALL,td.status.st-STOP{color:#a01020;font-weight:600}
td.status.partial{background-image:repeating-linear-gradient(135deg,transparent 0 5px,
rgba(0,0,0,.07) 5px 8px)}
td.health{font-weight:700} td.h-OK{color:#1f6b1f} td.h-WARN{color:#8a6700}
td.h-ERR{color:#a01020} td.why{font-size:.85em;min-width:16em;max-width:30em}
td.status{white-space:nowrap}
.badge.h-OK{background:#3a9d3a} .badge.h-WARN{background:#c99700}
.badge.h-ERR{background:#c0162c} .badge.h-none{background:#888}
ul.why{font-size:.86em;margin:.1em 0 .4em;padding-left:1.2em;color:#5a0010}
svg .pop-note{fill:#444;font-size:10px;font-style:italic}
.badge{display:inline-block;padding:0 .45em;border-radius:3px;color:#fff;font-weight:600;
font-size:.85em}
.badge.st-OK{background:#3a9d3a} .badge.st-WARN{background:#c99700}
.badge.st-REWIND{background:#e07b00} .badge.st-STALL{background:#d2502a}
.badge.st-STOP{background:#c0162c} .badge.st-none{background:#888}
dl.legend{display:grid;grid-template-columns:max-content 1fr;gap:.2em .8em;font-size:.88em;
margin:.4em 0} dl.legend dt{font-weight:600} dl.legend dd{margin:0}
section.group{border:1px solid #ddd;border-left:6px solid #888;border-radius:4px;
padding:.5em .8em;margin:1em 0}
section.group.st-OK{border-left-color:#3a9d3a} section.group.st-WARN{border-left-color:#c99700}
section.group.st-REWIND{border-left-color:#e07b00}
section.group.st-STALL{border-left-color:#d2502a} section.group.st-STOP{border-left-color:#c0162c}
.facts{font-size:.88em;margin:.2em 0 .4em} .bounds{font-size:.8em;color:#666;margin:.3em 0}
svg.timeline{width:100%;height:auto;display:block;font-size:10px}
svg .grid{stroke:#e8e8e8} svg .vgrid{stroke:#efefef} svg .axis{stroke:#888}
svg .tick{fill:#555;font-size:9px} svg .plabel{fill:#222;font-size:10px;font-weight:600}
svg .lane{fill:#333;font-size:9px}
.keys{font-size:.8em;display:flex;flex-wrap:wrap;gap:.2em 1em;margin:.2em 0}
.sw{display:inline-block;width:.9em;height:.9em;vertical-align:-.1em;margin-right:.25em;
border-radius:2px} .sw.line{height:.25em;vertical-align:.2em}
nav.toc a{margin-right:.7em;white-space:nowrap;font-size:.9em}
details{font-size:.88em;margin:.2em 0} summary{cursor:pointer}
section.group.h-ERR{border-left-color:#c0162c} section.group.h-WARN{border-left-color:#c99700}
svg.overview{width:100%;height:auto;display:block;font-size:10px}
div.scroll{overflow-x:auto}
"""


def _health_badge(health: Any) -> str:
    name = str(health) if health in HEALTH_COLOURS else None
    return (f'<span class="badge h-{name}">{name}</span>' if name
            else '<span class="badge h-none">-</span>')


def _badge(status: Any) -> str:
    name = str(status) if status in STATUS_COLOURS else None
    return (f'<span class="badge st-{name}">{name}</span>' if name
            else '<span class="badge st-none">-</span>')


_STATUS_COLUMNS: list[tuple[str, str, str]] = [
    ("cluster", "cluster", "text"), ("group", "group", "text"), ("topic", "topic", "text"),
    ("health", "health", "health"), ("status", "status", "status"),
    ("total_lag", "lag", "count"),
    ("max_lag", "max lag", "count"), ("lag_seconds", "time lag", "duration"),
    ("lag_seconds_source", "time lag source", "text"), ("consume_rate", "consume/s", "rate"),
    ("produce_rate", "produce/s", "rate"), ("complete", "complete", "fraction"),
    ("health_reasons", "why", "reasons"), ("capture_ts", "capture", "time"),
]


def _cell(kind: str, v: Any, row: dict[str, Any] | None = None) -> str:
    if kind == "reasons":  # the first reason; all of them in the tooltip and the section
        items = [str(x) for x in (v or [])]
        more = f" (+{len(items) - 1})" if len(items) > 1 else ""
        return (f'<td class="why" title="{E("; ".join(items))}">{E(items[0])}{E(more)}</td>'
                if items else "<td></td>")
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return '<td class="num">-</td>' if kind not in ("text", "status", "health") \
            else "<td>-</td>"
    if kind == "status":  # with the queues in it and the window it rests on
        text = str((row or {}).get("status_text") or v)
        partial = " partial" if "window " in text else ""
        return f'<td class="status st-{E(str(v))}{partial}">{E(text)}</td>'
    if kind == "health":
        return f'<td class="health h-{E(str(v))}">{E(str(v))}</td>'
    if kind == "count":
        return f'<td class="num">{fmt_count(v)}</td>'
    if kind == "duration":
        return f'<td class="num" title="{float(v):.1f} s">{E(fmt_duration(v))}</td>'
    if kind == "rate":
        return f'<td class="num">{float(v):,.1f}</td>'
    if kind == "time":  # epoch ms, or an ISO string (capture_time) as given
        return f'<td class="time">{E(v if isinstance(v, str) else _utc(v))}</td>'
    if kind == "fraction":
        return f'<td class="num">{float(v):.2f}</td>'
    if isinstance(v, (list, tuple)):
        v = " ".join(str(x) for x in v)
    return f"<td>{E(str(v))}</td>"


def _status_table(rows: list[dict[str, Any]]) -> str:
    tips = {c: m for cs, m in COLUMN_MEANING for c in cs.split(", ")}
    # one cluster: no cluster column (its name is in the header of every group section)
    columns = [c for c in _STATUS_COLUMNS
               if c[0] != "cluster" or len({r.get("cluster") for r in rows if r.get("cluster")})
               > 1]
    head = "".join(f'<th title="{E(tips.get(h, ""))}">{E(h)}</th>' for _, h, _ in columns)
    body = []
    for r in rows:
        # the row's colour: the group's health (a storm makes an OK status red), else the
        # status; a row that cannot be judged is grey ("unknown")
        h, st = r.get("health"), r.get("status")
        cls = (f"h-{h}" if h in HEALTH_COLOURS else f"st-{st}" if st in STATUS_COLOURS
               else "unknown")
        body.append(f'<tr class="{E(cls)}">' + "".join(
            _cell(kind, r.get(k) if k != "capture_ts" else r.get(k, r.get("capture_time")), r)
            for k, _, kind in columns) + "</tr>")
    if not rows:
        body.append(f'<tr><td colspan="{len(columns)}">(none)</td></tr>')
    return (f'<div class="scroll"><table class="status"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _legend(window: Any) -> str:
    w = f"the last {window} captures" if window else "the status window"
    st = "".join(f"<dt>{_badge(s)}</dt><dd>{E(STATUS_MEANING[s])}</dd>"
                 for s in ("STOP", "STALL", "REWIND", "WARN", "OK"))
    hl = "".join(f"<dt>{_health_badge(h if h != '-' else None)}</dt><dd>{E(m)}</dd>"
                 for h, m in HEALTH_MEANING.items())
    cols = "".join(f"<dt>{E(c)}</dt><dd>{E(m)}</dd>" for c, m in COLUMN_MEANING)
    return ('<section id="legend"><h2>Legend</h2>'
            f"<p class=\"meta\">Status per queue over {E(w)} (Burrow's rules, "
            "docs/exports.md section 4); a topic has its worst queue's status, a group its "
            "worst topic's. Severity: OK &lt; WARN &lt; REWIND &lt; STALL &lt; STOP.</p>"
            f'<dl class="legend status-legend">{st}</dl>'
            "<h3>Health</h3><p class=\"meta\">One verdict per group in Burrow's group words; "
            "it also counts what the lag status does not see (docs/exports.md section "
            "4.1).</p>"
            f'<dl class="legend health-legend">{hl}</dl>'
            f'<h3>Columns</h3><dl class="legend column-legend">{cols}</dl>'
            "<h3>Group timelines</h3>"
            '<dl class="legend timeline-legend">'
            "<dt>lag, time lag</dt><dd>Black: the group (total lag; time lag of its slowest "
            "queue). Coloured: its queues with the highest peak lag. Log scales, so 40 "
            "messages and a million are both readable; a gap in a line is an unknown value."
            "</dd><dt>status</dt><dd>The group's status at each capture.</dd>"
            "<dt>owners</dt><dd>One lane per queue, coloured by the client that owned it, "
            "from the first capture that showed that owner to the first that did not. A "
            "dashed red box: nobody owned the queue (rebalance/unowned). A dotted grey box: "
            "the owner is unknown, a member did not answer its running info (not a loss: "
            "the previous owner is carried across). An empty lane: no owner was reported "
            "(unknown). A pop group has no lanes: the broker hands out messages of every "
            "queue to whichever client pops, so no client owns a queue.</dd>"
            "<dt>marks</dt><dd>Triangles: rebalance events of a client, coloured by cause "
            "here and in the overview (blue rebalance, grey stop, red crash, purple offset "
            "reset); orange diamonds: lock takeovers; shaded red bands: rebalance storms. "
            "Hover any mark for details.</dd></dl></section>")


def _group_section(gi: int, g: dict[str, Any], status_rows: list[dict[str, Any]],
                   t0: int, t1: int, lim: HtmlLimits | None) -> str:
    latest = g.get("latest") or {}
    status = latest.get("group_status")
    name = str(status) if status in STATUS_COLOURS else "none"
    health = latest.get("health")
    hname = str(health) if health in HEALTH_COLOURS else "none"
    clients: list[str] = []
    for ln in g["lanes"]:
        for _, _, owner in ln["runs"]:
            if str(owner) not in clients and owner != OWNER_UNKNOWN:
                clients.append(str(owner))
    owner_colour = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(clients)}
    topics = [r for r in status_rows if r.get("group") == g["group"]
              and (r.get("cluster") or "") == g["cluster"]]
    topic_txt = ", ".join(f"{r.get('topic')} ({r.get('status_text') or r.get('status') or '-'})"
                          for r in topics if r.get("topic") is not None)
    tk = g.get("totals_by_kind", {})
    facts = [f"lag {fmt_count(latest.get('total_lag'))} messages",
             f"time lag {fmt_duration(latest.get('lag_seconds'))}",
             f"members {fmt_count(latest.get('members'))}",
             f"latest capture {_utc(latest.get('capture_ts'))}",
             f"rebalance events {tk.get('event', 0)}", f"storms {tk.get('storm', 0)}",
             f"unowned periods {tk.get('unowned', 0)}",
             f"lock takeovers {tk.get('takeover', 0)}"]
    if topic_txt:
        facts.insert(3, f"topics: {topic_txt}")
    cl = f' <span class="meta">cluster {E(g["cluster"])}</span>' if g["cluster"] else ""
    parts = [f'<section class="group st-{name} h-{hname}" id="g-{gi}">',
             f"<h3>{_health_badge(health)} {_badge(status)} "
             f"<span class=\"gname\">{E(str(g['group']))}</span>{cl}</h3>",
             f'<p class="facts">{E(" · ".join(facts))}</p>']
    why = [str(x) for x in latest.get("health_reasons") or []]
    if why:
        parts.append('<ul class="why">' + "".join(f"<li>{E(x)}</li>" for x in why) + "</ul>")
    parts.append(_group_svg(gi, g, t0, t1, owner_colour))
    keys = ['<span><span class="sw line" style="background:#111"></span>group</span>']
    for i, q in enumerate(g["queues"]):
        peak = q.get("peak")
        keys.append(f'<span><span class="sw line" style="background:{PALETTE[i % len(PALETTE)]}">'
                    f"</span>{E(_qname(q))} "
                    f"(peak {fmt_count(peak)})</span>")
    parts.append('<div class="keys queue-keys">' + "".join(keys) + "</div>")
    if clients:
        parts.append('<div class="keys owner-keys">owners: ' + "".join(
            f'<span><span class="sw" style="background:{owner_colour[c]}"></span>{E(c)}</span>'
            for c in clients) + "</div>")
    # what the bounds left out, said on the page
    bounds = []
    nq = g.get("queue_count") or 0
    if nq:
        bounds.append(f"lines: {len(g['queues'])} of {nq} queue(s), highest peak lag first")
        if latest.get("consume_type") != "CONSUME_POP":  # (a pop group has no lanes)
            bounds.append(f"owner lanes: {len(g['lanes'])} of {nq} queue(s)")
    if g.get("runs_total") and lim and g["runs_total"] > lim.runs:
        bounds.append(f"owner changes: the first {lim.runs} of {g['runs_total']}")
    for kind, label in (("event", "rebalance events"), ("storm", "storms"),
                        ("unowned", "unowned periods"), ("takeover", "lock takeovers")):
        shown = len(g[{"event": "events", "storm": "storms", "unowned": "unowned",
                       "takeover": "takeovers"}[kind]])
        if tk.get(kind, 0) > shown:
            bounds.append(f"{label}: the latest {shown} of {tk[kind]}")
    hidden = sum(1 for u in g["unowned"] if (str(u["topic"]), str(u["broker"]), u["queue_id"])
                 not in {(str(ln["topic"]), str(ln["broker"]), ln["queue_id"])
                         for ln in g["lanes"]})
    if hidden:
        bounds.append(f"{hidden} unowned period(s) on queues without a lane (listed below)")
    if bounds:
        parts.append(f'<p class="bounds">Shown: {E("; ".join(bounds))}.</p>')
    if g["unowned"]:
        rows = "".join(
            f"<tr><td>{E(str(u['topic']))}</td><td>{E(_qid(u))}</td>"
            f"<td>{E(_utc(u['n1']))}</td><td>{E(_utc(u['ts']))}</td>"
            f"<td>{E(_utc(u['end_ts']) if u['end_ts'] is not None else 'still unowned')}</td>"
            f"<td>{E(str(u['other'] or '-'))}</td></tr>" for u in g["unowned"])
        parts.append(f"<details><summary>Unowned periods ({len(g['unowned'])})</summary>"
                     "<table><thead><tr><th>topic</th><th>queue</th><th>last owned</th>"
                     "<th>first seen unowned</th><th>owned again</th><th>seen in</th></tr>"
                     f"</thead><tbody>{rows}</tbody></table></details>")
    if g["takeovers"]:
        rows = "".join(
            f"<tr><td>{E(_utc(k['ts']))}</td><td>{E(str(k['topic']))}</td>"
            f"<td>{E(_qid(k))}</td><td>{E(str(k['other'] or '-'))}"
            f"</td><td>{E(str(k['client'] or '-'))}</td></tr>" for k in g["takeovers"])
        parts.append(f"<details><summary>Lock takeovers ({len(g['takeovers'])})</summary>"
                     "<table><thead><tr><th>time</th><th>topic</th><th>queue</th>"
                     "<th>expired holder</th><th>new holder</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table></details>")
    parts.append("</section>")
    return "\n".join(parts)


def _overview_lines(series: list[dict[str, Any]], key: str, t0: int, t1: int,
                    label: str, ticks: list[tuple[float, str]], unit: str, cls: str
                    ) -> tuple[str, list[tuple[str, str]]]:
    """One chart of every charted group: a line per group on a log scale (``key`` of the
    series rows per capture); returns the SVG and the (group, colour) legend entries."""
    svg = _Svg(t0, t1)
    top, height = 10.0, 170.0
    by_group: dict[str, list[dict[str, Any]]] = {}
    for r in series:
        by_group.setdefault(str(r["group"]), []).append(r)
    lines, keys = [], []
    for i, (g, rows) in enumerate(sorted(by_group.items())):
        colour = PALETTE[i % len(PALETTE)]
        rows = sorted(rows, key=lambda x: x["ts"])
        lines.append(([(x["ts"], x.get(key)) for x in rows], colour, f"{g}: {unit}"))
        keys.append((g, colour))
    y_ax = top + height + 8
    for t, text in _time_ticks(t0, t1):
        xx = svg.x(t)
        svg.add(f'<line class="vgrid" x1="{xx}" x2="{xx}" y1="{top}" y2="{y_ax}"/>'
                f'<text class="tick" x="{xx}" y="{y_ax + 12:.0f}" text-anchor="middle">'
                f"{E(text)}</text>")
    _value_panel(svg, top, height, label, ticks, [], "", lines, cls)
    svg.add(f'<line class="axis" x1="{_L}" x2="{_W - _R}" y1="{y_ax}" y2="{y_ax}"/>')
    return (f'<svg class="overview {cls}" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {_W} {y_ax + 18:.0f}" role="img" aria-label="{E(label)}">'
            + "".join(svg.parts) + "</svg>"), keys


def _overview_timeline(events: list[dict[str, Any]], storms: list[dict[str, Any]], t0: int,
                       t1: int) -> str:
    """Rebalance timeline of every group: a lane per group, its storms as red bands, its
    events as marks coloured by cause (the per-group timelines' colours), one mark per cause
    and pixel column (its tooltip counts the events there)."""
    groups = sorted({str(e["group"]) for e in events} | {str(s["group"]) for s in storms})
    if not groups:
        return '<p class="meta">No rebalance event in the inputs.</p>'
    svg = _Svg(t0, t1)
    lane_h, top = 16.0, 4.0
    lane = {g: i for i, g in enumerate(groups)}
    y_ax = top + len(groups) * lane_h + 4
    for t, text in _time_ticks(t0, t1):
        xx = svg.x(t)
        svg.add(f'<line class="vgrid" x1="{xx}" x2="{xx}" y1="{top}" y2="{y_ax}"/>'
                f'<text class="tick" x="{xx}" y="{y_ax + 12:.0f}" text-anchor="middle">'
                f"{E(text)}</text>")
    for g, i in lane.items():
        ly = top + i * lane_h
        svg.add(f'<text class="lane" x="{_L - 4}" y="{ly + 11:.1f}" text-anchor="end">'
                f"<title>{E(g)}</title>{E(_mid(g, 30))}</text>")
    for st in storms:
        ly = top + lane[str(st["group"])] * lane_h
        xa = svg.x(st["start_ts"])
        xb = svg.x(st["end_ts"] if st.get("end_ts") is not None else st["start_ts"])
        what = (f"rebalance storm of {st['group']} {_utc(st['start_ts'])} to "
                f"{_utc(st.get('end_ts'))}: {st.get('rounds')} round(s)")
        svg.add(f'<rect class="ostorm" x="{xa}" y="{ly:.1f}" width="{max(2.0, xb - xa):.1f}" '
                f'height="{lane_h}" fill="#e02020" fill-opacity="0.18"><title>{E(what)}'
                "</title></rect>")
    cells: dict[tuple[str, float, str], list[dict[str, Any]]] = {}
    for e in events:
        cause = str(e.get("cause") or "rebalance")
        cells.setdefault((str(e["group"]), round(svg.x(e["ts"])), cause), []).append(e)
    for (g, xx, cause), evs in sorted(cells.items()):
        ly = top + lane[g] * lane_h + lane_h / 2
        first, last = min(e["ts"] for e in evs), max(e["ts"] for e in evs)
        what = (f"{g}: {len(evs)} {cause} event(s) {_utc(first)}"
                + (f" to {_utc(last)}" if last != first else ""))
        colour = CAUSE_COLOURS.get(cause, "#333")
        key = cause if cause in CAUSE_COLOURS else "other"
        svg.add(f'<path class="oevent cause-{E(key)}" d="M{xx},{ly - 5} l4,8 l-8,0 z" '
                f'fill="{colour}"><title>{E(what)}</title></path>')
    svg.add(f'<line class="axis" x1="{_L}" x2="{_W - _R}" y1="{y_ax}" y2="{y_ax}"/>')
    return (f'<svg class="overview rebalance" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {_W} {y_ax + 18:.0f}" role="img" '
            f'aria-label="rebalance timeline of every group">' + "".join(svg.parts) + "</svg>")


def _cause_keys() -> str:
    return ('<div class="keys cause-keys">' + "".join(
        f'<span><span class="sw" style="background:{c}"></span>{E(k)}</span>'
        for k, c in CAUSE_COLOURS.items())
        + '<span><span class="sw" style="background:#e02020;opacity:.35"></span>storm</span>'
        "</div>")


def _overview(series: list[dict[str, Any]], events: list[dict[str, Any]],
              storms: list[dict[str, Any]], t0: int | None, t1: int | None) -> list[str]:
    if t0 is None or t1 is None:
        return ['<p class="meta">No capture in the inputs.</p>']
    lo = min([t0] + [e["ts"] for e in events] + [s["start_ts"] for s in storms])
    hi = max([t1] + [e["ts"] for e in events]
             + [s["end_ts"] for s in storms if s.get("end_ts") is not None])
    out = []
    lag_max = max([float(r["total_lag"]) for r in series if r.get("total_lag") is not None]
                  + [1.0])
    tl_max = max([float(r["lag_seconds"]) for r in series if r.get("lag_seconds") is not None]
                 + [1.0])
    for key, title, ticks, unit, cls in (
            ("total_lag", "Lag per group (messages, log scale)", _lag_ticks(lag_max),
             "total lag (messages)", "olag"),
            ("lag_seconds", "Time lag per group (slowest queue, log scale)",
             _sec_ticks(tl_max), "time lag of the slowest queue (s)", "otimelag")):
        chart, keys = _overview_lines(series, key, t0, t1, "", ticks, unit, cls)
        out += [f"<h3>{E(title)}</h3>", chart, '<div class="keys group-keys">' + "".join(
            f'<span><span class="sw line" style="background:{c}"></span>{E(g)}</span>'
            for g, c in keys) + "</div>"]
    out += ["<h3>Rebalance timeline (every group; marks coloured by cause)</h3>",
            _overview_timeline(events, storms, lo, hi), _cause_keys()]
    return out


def render_html(*, series: list[dict[str, Any]], events: list[dict[str, Any]],
                storms: list[dict[str, Any]], status_rows: list[dict[str, Any]],
                meta: dict[str, Any], groups: list[dict[str, Any]] | None = None,
                limits: HtmlLimits | None = None) -> str:
    """One self-contained page, no script and nothing fetched: it opens offline.
    ``series`` rows: ``group, ts, total_lag, lag_seconds``; ``events``: ``ts, group, client,
    topic, n_gained, n_lost, cause``; ``storms``: ``group, start_ts, end_ts, rounds``;
    ``groups``: the per-group sections of :func:`collect_report_data`. ``meta``: ``title``,
    ``subtitle``, ``notes``, ``first_ts``/``last_ts`` (the captures covered), ``captures``,
    ``window``."""
    title = str(meta.get("title", "mqctl lag report"))
    first, last = meta.get("first_ts"), meta.get("last_ts")
    if first is None and series:
        first, last = min(r["ts"] for r in series), max(r["ts"] for r in series)
    if first is not None and last is not None:
        n = meta.get("captures")
        caps = f", {n} capture(s)" if n else ""
        rng = (f"Captures from <b>{E(_utc(first))}</b> to <b>{E(_utc(last))}</b> "
               f"({E(fmt_duration((last - first) / 1000))}{E(caps)})")
    else:
        rng = "No capture in the inputs"
    groups = groups or []
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>{E(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head><body>",
        f'<header><h1>{E(title)}</h1><p class="range">{rng}</p>',
        f"<p class=\"meta\">{E(str(meta.get('subtitle', '')))}</p></header>",
    ]
    if groups:
        parts.append('<nav class="toc">Groups: ' + "".join(
            f'<a href="#g-{i}">{_health_badge((g.get("latest") or {}).get("health"))} '
            f"{E(str(g['group']))}</a>" for i, g in enumerate(groups)) + "</nav>")
    parts += [
        '<section id="status"><h2>Groups and topics (latest capture)</h2>',
        _status_table(status_rows), "</section>",
        _legend(meta.get("window")),
    ]
    if groups and first is not None:
        parts.append('<section id="groups"><h2>Per group</h2>')
        parts.append('<p class="meta">One timeline per group (worst first), all on the same '
                     f"time axis (UTC), from {E(_utc(first))} to {E(_utc(last))}.</p>")
        for i, g in enumerate(groups):
            parts.append(_group_section(i, g, status_rows, int(first), int(last or first),
                                        limits))
        parts.append("</section>")
    parts.append('<section id="overview"><h2>All groups</h2>')
    parts += _overview(series, events, storms, first, last)
    parts.append("</section>")
    notes = meta.get("notes") or []
    if notes:
        parts.append('<section id="notes"><h2>Notes</h2><ul>' + "".join(
            f"<li>{E(str(n))}</li>" for n in notes) + "</ul></section>")
    parts.append("</body></html>")
    return "\n".join(parts)

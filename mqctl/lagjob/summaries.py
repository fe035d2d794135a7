"""The lag report's summaries, written after the datasets: summary.csv, the Prometheus file,
report.html and summary.json, from one collect of the worst rows (:func:`summary_rows`);
then the state is committed (:func:`derived.commit_state`) and the result returned."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from mqctl.lagjob import derived as DV
from mqctl.lagjob import writers as W
from mqctl.lagjob.outputs import rows_counted
from mqctl.lagjob.result import SUMMARY_COLUMNS, ReportResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from mqctl.lagjob.context import RunContext
    from mqctl.lagjob.stages import Lagged, Rebalance, Report


def write_summaries(run: RunContext, rep: Report, stats: dict[str, dict[str | None, int]],
                    counts: dict[str, int], inputs: dict[str, int], run_dates: list[str],
                    run_ts: int, keep_derived: bool, lagged: Lagged, reb: Rebalance, fp: str
                    ) -> ReportResult:
    """summary.csv, the Prometheus file, report.html and summary.json, then the state
    (committed last: it matches the outputs)."""
    import time

    from mqctl.lagjob.thresholds import evaluate

    t_sum = time.perf_counter()
    run.job_group("summaries")
    sp, o, written = run.spark, run.o, run.written
    n_latest, n_groups = rows_counted(stats, "latest"), rows_counted(stats, "groups")
    d = rep.datasets
    frames = {"gt": d["group_status"], "lag": d["lag"], "events": d["rebalance/events"],
              "storms": d["rebalance/storms"], "unowned": d["rebalance/unowned"],
              "locks": d["rebalance/locks"], **{k: run.page[k] for k in ("series", "peaks")}}
    marked = {"has_events": bool(counts["rebalance_events"] or counts["reset_events"]),
              "has_storms": bool(counts["storms"])}
    parts, first_limit = _collected_with_rows(run, d["quarantine"], frames, stats, n_groups,
                                              marked)
    said = partial(said_row, run)
    summary, group_rows, more = summary_rows(rep, parts, o.summary_limit, said)
    qcounts = {r["reason"]: int(r["n"]) for r in more.get("q", [])}
    quarantined = sum(qcounts.values())
    totals = {"quarantined": quarantined, "storms": counts["storms"],
              "lock_takeovers": counts["lock_takeovers"]}
    breaches = evaluate(run.thresholds, rep.latest, totals)
    totals["breaches"] = len({b.expr for b in breaches})
    add_notes(run, counts)
    from mqctl.lagjob import alignment

    warnings = alignment.warnings(run.close, o.align_ms, o.window)
    rows = _Rows(rep, summary, group_rows, n_latest, n_groups, said)
    # CSV of every group/topic (the reasons as one cell, "; " between them)
    csv_path = W.join(run.out, "summary.csv")
    W.write_text(sp, csv_path, W.csv_text(SUMMARY_COLUMNS, (
        {**r, "health_reasons": "; ".join(r.get("health_reasons") or [])}
        for r in rows.latest(True))))
    written["summary_csv"] = csv_path
    write_prometheus(run, rep, rows, totals, lagged.lag_new)
    html_path = W.join(run.out, "report.html")
    first = (more["h"], first_limit) if "h" in parts else None
    W.write_text(sp, html_path, html_page(run, frames, group_rows, summary, counts,
                                          quarantined, run_ts, marked, first,
                                          more.get("p"), warnings))
    written["html"] = html_path
    from mqctl.timeparse import format_ms

    data = {
        "generated_ts": run_ts, "generated_at": format_ms(run_ts), "window": o.window,
        "inputs": inputs, "counts": counts, "dates": run_dates,
        "quarantine": {"total": quarantined, "by_reason": qcounts},
        "breaches": [b.to_dict() for b in breaches],
        "groups": group_rows, "summary": summary, "summary_rows": n_latest,
        "truncated": n_latest > len(summary), "paths": written, "notes": run.notes,
        "warnings": warnings,
    }
    json_path = W.join(run.out, "summary.json")
    written["summary_json"] = json_path
    W.write_text(sp, json_path, W.json_text(data))
    if run.state is not None:  # everything is written: the state matches the outputs
        DV.commit_state(run, keep_derived, lagged, reb, rep, fp)
    run.timings["summaries"] = time.perf_counter() - t_sum
    run.say(f"lag report: done ({counts['lag_rows']} lag row(s), {quarantined} "
            "quarantined)")
    return ReportResult(summary=summary, groups=group_rows, paths=written,
                        quarantine=qcounts, quarantined=quarantined, breaches=breaches,
                        counts=counts, inputs=inputs, dates=run_dates,
                        truncated=n_latest > len(summary), notes=list(run.notes),
                        warnings=warnings, timings=dict(run.timings))


def _collected_with_rows(run: RunContext, quarantine: DataFrame, frames: dict[str, DataFrame],
                         stats: dict[str, dict[str | None, int]], n_groups: int,
                         marked: dict[str, bool]) -> tuple[dict[str, DataFrame], int]:
    """The frames collected in the summary rows' one job (:func:`summary_rows`): the
    quarantine's reasons and, when every group is charted, the page's two collects
    (:func:`html.collect.first_collect` with its limit, returned too, and
    :func:`html.collect.second_collect`)."""
    from pyspark.sql import functions as F

    o = run.o
    parts: dict[str, DataFrame] = {}
    if rows_counted(stats, "quarantine"):
        parts["q"] = quarantine.groupBy("reason").agg(F.count(F.lit(1)).alias("n"))
    first_limit = n_groups * o.chart_points + 1
    if 0 < n_groups <= min(o.chart_groups, o.summary_limit):
        from mqctl.lagjob.html import collect as G

        parts["h"] = G.first_collect(frames["series"], frames["peaks"], first_limit)
        parts["p"] = G.second_collect(G.ReportFrames(**frames), limits(run), n_groups,
                                      **marked)
    return parts, first_limit


def summary_rows(rep: Report, more: dict[str, DataFrame], limit: int,
                 said: Callable[[dict[str, Any]], dict[str, Any]]
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, list[Any]]]:
    """The first ``limit`` rows (as ``said`` shows them) per group and topic and per group,
    worst first, and every row of the frames of ``more`` (by name), in one collect (one job
    where there were one per frame), each frame's rows in a struct column of its own. A sort
    under a limit is one partition in that order (``TakeOrderedAndProjectExec``: its
    ``outputOrdering`` is the sort order) and a union's partitions are its children's in
    turn, so the rows of each arrive in order."""
    from mqctl.lagjob.sqltext import ident, sql_text

    frames = {"l": rep.latest.orderBy(*_latest_order()).limit(limit),
              "g": rep.groups.orderBy(*_groups_order()).limit(limit), **more}
    both: DataFrame | None = None
    for tag, df in frames.items():
        # (SQL text: ``struct(*)`` is one expression, not a Column per field)
        part = df.selectExpr(f"{sql_text(tag)} AS _part", f"struct(*) AS {ident('_' + tag)}")
        both = part if both is None else both.unionByName(part, allowMissingColumns=True)
    assert both is not None
    got: dict[str, list[Any]] = {tag: [] for tag in frames}
    for r in both.collect():
        got[r["_part"]].append(r["_" + r["_part"]])
    return ([said(r.asDict()) for r in got.pop("l")], [said(r.asDict()) for r in got.pop("g")],
            got)


def add_notes(run: RunContext, counts: dict[str, int]) -> None:
    dupes = counts["duplicates"]
    if dupes:
        run.notes.append(f"{dupes} duplicate observation(s) of the same queue at the same "
                         "time were merged (the same capture given twice, or two sources "
                         "of one time; the source decides: docs/exports.md section 2.6)")
    if counts["owner_unknown"]:
        run.notes.append(
            f"{counts['owner_unknown']} queue observation(s) with the owner unknown (lag/ "
            "owner_unknown): a member did not answer its running info (members_unanswered) "
            "and no answering member claims the queue; the previous owner is carried "
            "across, with no rebalance, move or unowned interval from it")
    if counts["never_committed"]:
        run.notes.append(
            f"{counts['never_committed']} queue observation(s) without a committed offset "
            "(lag/ committed false): consumer offset none (null), LAG counts the whole "
            "queue as mqadmin's Diff does (where a consumer would start depends on its "
            "consumeFromWhere), time lag unknown, status only OK (nothing to consume) or "
            "STOP (group offline)")
    ignored = run.listing.ignored()
    if ignored:
        run.notes.append(f"{len(ignored)} file(s) ignored: "
                         + "; ".join(sorted({f.ignored for f in ignored})))


def write_prometheus(run: RunContext, rep: Report, rows: _Rows, totals: dict[str, int],
                     lag_new: DataFrame) -> None:
    import time

    from pyspark.sql import functions as F

    from mqctl.timeparse import now_ms

    if rows.n_groups <= len(rows.group_rows):  # every group is collected: no job
        stamps = [r["capture_ts"] for r in rows.group_rows
                  if r.get("capture_ts") is not None]
        last: Any = {"n": rows.n_groups, "t": max(stamps) if stamps else None}
    else:
        last = rep.groups.agg(F.max("capture_ts").alias("t"),
                              F.count(F.lit(1)).alias("n")).collect()[0]
    every = rows.n_latest <= len(rows.summary)  # (every latest row is collected)
    brokers = per_broker(run, rep, lag_new, rows.summary if every else None)
    order = ("cluster", "group", "topic", "broker")
    broker_rows: Iterable[dict[str, Any]]
    if every:  # a few rows: one collect, sorted here
        # (Spark's ascending order: nulls first; strings by code point, as UTF-8 bytes)
        broker_rows = sorted((r.asDict() for r in brokers.collect()), key=lambda r: tuple(
            (r[k] is not None, r[k]) for k in order))
    else:  # (streamed: a partition at a time)
        broker_rows = (r.asDict() for r in brokers.orderBy(*order).toLocalIterator())
    prom_text = W.render_prometheus(
        rows.latest(False), rows.groups(), {
            **totals, "groups": int(last["n"]),
            "last_capture_s": last["t"] / 1000.0 if last["t"] is not None else None,
            "duration_s": round(time.perf_counter() - run.started, 3)},
        now_ms(), broker_rows)
    prom_path = run.prom_file or W.join(run.out, "mqctl_lag.prom")
    W.write_text(run.spark, prom_path, prom_text)
    run.written["prometheus"] = prom_path


def per_broker(run: RunContext, rep: Report, lag_new: DataFrame,
               latest_rows: list[dict[str, Any]] | None) -> DataFrame:
    """The Prometheus file's rows per group, topic and broker at each group and topic's
    latest capture (:func:`transforms.latest_per_broker`; ``lag_new``: the rows of ``lag``
    this run computed, ``Lagged.lag_new``; ``latest_rows``: every latest row, when
    collected). A bounded re-run reads none of ``lag`` back for them: a group and topic with
    rows in the new captures has its latest capture
    there, so its rows come from the new rows; any other keeps the rows the derived
    state's ``brokers`` holds (its latest capture, and the rows of ``lag`` at it, are
    what they were at the run that wrote them). Kept as this run's ``brokers`` part."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import transforms as X

    if run.bound is None:
        out = X.latest_per_broker(rep.datasets["lag"], rep.latest, latest_rows)
    else:
        from mqctl.lagjob import bounded as B

        new_ts = int(run.bound.new_ts)
        latest_new = rep.latest.filter(F.col("capture_ts") >= F.lit(new_ts))
        rows_new = None if latest_rows is None else [
            r for r in latest_rows
            if r.get("capture_ts") is not None and int(r["capture_ts"]) >= new_ts]
        new = X.latest_per_broker(lag_new, latest_new, rows_new)
        earlier = B.read(run.spark, run.state or "", "brokers", run.manifest.derived,
                         new.schema)
        # (no key of a per-broker row is null: a latest row with a null key has none)
        keys = ["cluster", "group", "topic"]
        out = (earlier.join(latest_new.select(*keys).distinct(), on=keys, how="left_anti")
               .unionByName(new))
    run.page["brokers"] = out
    return out


def said_row(run: RunContext, row: dict[str, Any]) -> dict[str, Any]:
    """A summary row as the outputs show it: plain values, the status in words
    (``status_text``: ``STALL (3 of 8 queues)``, ``OK (window 1 of 10)``) and why the
    group's health is what it is (``health_reasons``, :mod:`mqctl.lagjob.verdicts`)."""
    from mqctl.lagjob import verdicts as V

    o = run.o
    r = _plain(row)
    r["status_text"] = V.status_text(r, o.window, "status" if "status" in r
                                     else "group_status")
    r["health_reasons"] = V.health_reasons(
        r, window=o.window, storm_window_ms=o.storm_window_ms,
        round_max_ms=o.storm_round_max_ms, storm_rounds=o.storm_rounds,
        unowned_max=o.unowned_max)
    return r


def limits(run: RunContext) -> Any:
    """The page's bounds (:class:`html.HtmlLimits`) from the options."""
    from mqctl.lagjob import html as H

    o = run.o
    return H.HtmlLimits(groups=o.chart_groups, points=o.chart_points,
                        timeline_events=o.timeline_events)


def html_page(run: RunContext, frames: dict[str, DataFrame], group_rows: list[dict[str, Any]],
              summary: list[dict[str, Any]], counts: dict[str, int], quarantined: int,
              run_ts: int, marked: dict[str, bool], first: tuple[list[Any], int] | None = None,
              second: list[Any] | None = None, warnings: list[str] | None = None) -> str:
    """report.html: bounded data from the frames, then the page (mqctl/lagjob/html/).
    ``marked``: whether there are events and storms to read (``has_events``,
    ``has_storms``); ``first``, ``second``: the page's collects, already made
    (:func:`html.collect.first_collect`, its rows and limit;
    :func:`html.collect.second_collect`'s rows); ``warnings``: at the top of the page."""
    from mqctl.lagjob import html as H
    from mqctl.lagjob.verdicts import utc

    o = run.o
    lim = limits(run)
    data = H.collect_report_data(
        run.spark, gt=frames["gt"], lag=frames["lag"], events=frames["events"],
        storms=frames["storms"], unowned=frames["unowned"], locks=frames["locks"],
        group_rows=group_rows, limits=lim, **marked, series=frames.get("series"),
        peaks=frames.get("peaks"), first=first, second=second)
    if data.bucket_ms is not None:
        run.notes.append(f"charts show the maximum per {data.bucket_ms // 1000}s bucket")
    shown = summary[:lim.status_rows]
    meta = {"title": "mqctl lag report", "first_ts": data.first_ts,
            "last_ts": data.last_ts, "captures": data.captures, "window": o.window,
            "subtitle": f"generated {utc(run_ts)}; window {o.window} capture(s); "
                        f"{counts['lag_rows']} queue observation(s); "
                        f"{counts['rebalance_events']} rebalance event(s); "
                        f"{counts['storms']} storm(s); "
                        f"{counts['lock_takeovers']} lock takeover(s); "
                        f"{quarantined} quarantined record(s)",
            "warnings": list(warnings or []),
            "notes": run.notes + ([f"the status table shows {len(shown)} of "
                                   f"{len(summary)} rows"]
                                  if len(shown) < len(summary) else [])}
    return H.render_html(series=data.series, events=data.events, storms=data.storms,
                         status_rows=shown, meta=meta, groups=data.groups, limits=lim)


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        if hasattr(v, "asDict"):
            v = v.asDict()
        out[k] = v
    return out


def _latest_order() -> list[Any]:
    """The order of the summary rows: worst first."""
    from pyspark.sql import functions as F

    return [F.col("health_code").desc_nulls_last(), F.col("status_code").desc_nulls_last(),
            F.col("lag_seconds").desc_nulls_last(), F.col("total_lag").desc_nulls_last(),
            "cluster", "group", "topic"]


def _groups_order() -> list[Any]:
    """The order of the group rows: worst first."""
    from pyspark.sql import functions as F

    return [F.col("health_code").desc_nulls_last(), F.col("group_status_code").desc_nulls_last(),
            F.col("lag_seconds").desc_nulls_last(), "cluster", "group"]


class _Rows:
    """Every summary row, for the outputs that list all of them: the rows already collected
    when they are all, else streamed partition by partition."""

    def __init__(self, rep: Report, summary: list[dict[str, Any]],
                 group_rows: list[dict[str, Any]], n_latest: int, n_groups: int,
                 said: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.rep, self.summary, self.group_rows = rep, summary, group_rows
        self.n_latest, self.n_groups, self.said = n_latest, n_groups, said

    def latest(self, ordered: bool) -> Iterable[dict[str, Any]]:
        if self.n_latest <= len(self.summary):
            return self.summary
        df = self.rep.latest.orderBy(*_latest_order()) if ordered else self.rep.latest
        return (self.said(r.asDict()) for r in df.toLocalIterator())

    def groups(self) -> Iterable[dict[str, Any]]:
        if self.n_groups <= len(self.group_rows):
            return self.group_rows
        return (self.said(r.asDict()) for r in self.rep.groups.toLocalIterator())

"""The Spark half of the lag report's page: the job's DataFrames reduced to bounded lists for
the worst ``HtmlLimits.groups`` groups (:class:`~mqctl.lagjob.html.data.ReportData`).

Two collects, so nothing unbounded reaches the driver: (1) the chosen groups' totals per
capture and their queues' peak lag; (2) the drawn queues' points and owner changes, the marks
(each kind bounded per group by one shared window) and the overview's latest events and
storms. :mod:`.sections` then builds each group's section from the rows (pure). When every
group is charted neither needs the ranking of the groups: the job makes both with its summary
rows, in their one collect (:func:`first_collect`, :func:`second_collect`: every row keyed by
its group, the queues ranked in Spark), and passes the rows in; they are taken when they are
what the two collects would collect (:meth:`_Collector.keyed_second`), else collected again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqctl.lagjob.html.data import OWNER_UNKNOWN, HtmlLimits, ReportData
from mqctl.lagjob.html.sections import MARK_TIE_COLS, build_sections
from mqctl.lagjob.sqltext import ident, sql_text

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

# one schema for every row of the second collect (kinds: line, run, event, storm, unowned,
# takeover for the chosen groups; oevent, ostorm for the overview of all groups; span)
_MARK_COLS: list[tuple[str, str]] = [
    ("kind", "string"), ("_gi", "int"), ("grp", "string"), ("topic", "string"),
    ("broker", "string"), ("queue_id", "int"), ("rank", "int"), ("ts", "long"),
    ("end_ts", "long"), ("n1", "long"), ("n2", "long"), ("x", "double"), ("client", "string"),
    ("other", "string"), ("src", "string"), ("tot", "long"),
]
_SEP = "\u0001"
_QKEY = ["_gi", "topic", "broker", "queue_id"]
# the shaped rows' columns as SQL text, per column the frame has and lacks (``shaped``): one
# selectExpr instead of a Column object and a cast per column (each a Py4J round trip; the
# page's frames took 1,400 of a demo report's 9,800 calls, docs/lag-performance.md)
_MARK_SQL = {c: (f"CAST({ident(c)} AS {t}) AS {ident(c)}", f"CAST(NULL AS {t}) AS {ident(c)}")
             for c, t in _MARK_COLS}


def _map_sql(pairs: list[tuple[str, int]]) -> str:
    """A map literal in SQL text (string keys, int values): one expression instead of a
    literal Column per key and value."""
    return "map(" + ", ".join(f"{sql_text(k)}, {int(v)}" for k, v in pairs) + ")"


@dataclass(frozen=True, slots=True)
class ReportFrames:
    """The job's DataFrames the page reads."""

    gt: DataFrame  # per group and topic per capture
    lag: DataFrame  # per queue per capture
    events: DataFrame  # rebalance and reset events
    storms: DataFrame
    unowned: DataFrame  # unowned periods
    locks: DataFrame  # lock observations (takeover = True: a takeover)
    # the totals per group and capture (:func:`group_series`) and the peak lag per queue
    # (:func:`queue_peaks`), read instead of ``gt`` and ``lag`` when given (a bounded re-run
    # keeps them in its derived state)
    series: DataFrame | None = None
    peaks: DataFrame | None = None


def group_series(gt: DataFrame) -> DataFrame:
    """Per group and capture: the lag over its topics, the largest time lag and the group
    status code: the page's overview series before the groups are chosen. A capture's row
    depends on that capture's rows only."""
    from pyspark.sql import functions as F

    return gt.groupBy("cluster", "group", "capture_ts").agg(
        F.try_sum("total_lag").alias("total_lag"), F.max("lag_seconds").alias("lag_seconds"),
        F.max("group_status_code").alias("group_status_code"))


def queue_peaks(lag: DataFrame) -> DataFrame:
    """Per queue of each group: its peak lag and last capture (the page ranks the queues by
    them)."""
    from pyspark.sql import functions as F

    return lag.groupBy("cluster", "group", "topic", "broker", "queue_id").agg(
        F.max("lag").alias("peak_lag"), F.max("capture_ts").alias("last_ts"))


def merge_queue_peaks(earlier: DataFrame, new: DataFrame) -> DataFrame:
    """:func:`queue_peaks` of the earlier rows (``earlier``) and of later ones (``new``, the
    later rows' :func:`queue_peaks`): maxima of maxima."""
    from pyspark.sql import functions as F

    return (earlier.select(*new.columns).unionByName(new)
            .groupBy("cluster", "group", "topic", "broker", "queue_id")
            .agg(F.max("peak_lag").alias("peak_lag"), F.max("last_ts").alias("last_ts")))


def collect_report_data(spark: SparkSession, *, gt: DataFrame, lag: DataFrame,
                        events: DataFrame, storms: DataFrame, unowned: DataFrame,
                        locks: DataFrame, group_rows: list[dict[str, Any]],
                        limits: HtmlLimits = HtmlLimits(), has_events: bool = True,
                        has_storms: bool = True, series: DataFrame | None = None,
                        peaks: DataFrame | None = None,
                        first: tuple[list[Any], int] | None = None,
                        second: list[Any] | None = None) -> ReportData:
    """:func:`collect_frames` with the frames as keywords (the job's call)."""
    del spark  # groups and queues are picked with literal maps: no join, no broadcast job
    return collect_frames(ReportFrames(gt, lag, events, storms, unowned, locks, series, peaks),
                          group_rows, limits, has_events=has_events, has_storms=has_storms,
                          first=first, second=second)


def _group_key() -> Column:
    """A group's key (``grp``) in rows collected before the groups are ranked: its cluster
    (a missing cluster and "" are one) and name, as :meth:`_Collector.pick` maps them."""
    from pyspark.sql import functions as F

    return F.expr(f"concat_ws({sql_text(_SEP)}, coalesce(cluster, ''), {ident('group')})")


def first_collect(series: DataFrame, peaks: DataFrame, limit: int) -> DataFrame:
    """Collect 1 of every group before the groups are ranked, for a caller that collects it
    with other rows in one job (the job: with the summary rows): the totals per group and
    capture (at most ``limit`` rows) and every queue's peak lag, each row with its group's
    key (``grp``) where :meth:`_Collector.totals_and_peaks` has the group's rank. ``series``:
    :func:`group_series`; ``peaks``: :func:`queue_peaks`. :func:`collect_frames` takes the
    rows (``first``) when every group is charted and the limit was not reached."""
    return _shaped("per", _totals(_keyed(series), "grp").limit(limit)).unionByName(
        _shaped("peak", _peaks(_keyed(peaks), "grp")))


def _keyed(df: DataFrame) -> DataFrame:
    """Every group's rows with its key (``grp``, :func:`_group_key`)."""
    from pyspark.sql import functions as F

    return df.filter(F.col("group").isNotNull()).withColumn("grp", _group_key())


def second_collect(frames: ReportFrames, limits: HtmlLimits, n_groups: int, *,
                   has_events: bool = True, has_storms: bool = True) -> DataFrame:
    """Collect 2 of every group before the groups are ranked, for a caller that collects it
    with other rows in one job (the job: with the summary rows and :func:`first_collect`):
    each group's queues ranked by peak lag in Spark (kind ``qrank``: the order
    :func:`_rank_queues` sorts them in), the lines' points of every capture (at most
    ``n_groups`` x ``lines`` x ``svg_points`` + 1 rows: past ``svg_points`` captures the
    lines are bucketed and collected alone), the marks and the overview, every group's
    rows with its key (``grp``). :meth:`_Collector.keyed_second` takes them only when they
    are what the second collect would collect."""
    c = _Collector(frames, [], limits, keyed=True)
    ranks = c.spark_ranks()
    q = c.ranked_queues(ranks)
    lines = c.lines(q, [], ReportData()).limit(n_groups * limits.lines * limits.svg_points + 1)
    return c.union([_shaped("qrank", ranks), lines,
                    c.marks(q, has_events=has_events, has_storms=has_storms),
                    *c.overview(has_events=has_events, has_storms=has_storms)])


def _totals(series: DataFrame, by: str) -> DataFrame:
    """The page's totals per group (``by``: its rank or its key) and capture (``ts``) from
    :func:`group_series` rows (per group and capture already: the same sums and maxima)."""
    from pyspark.sql import functions as F

    return (series.groupBy(by, "capture_ts")
            .agg(F.try_sum("total_lag").alias("n1"), F.max("lag_seconds").alias("x"),
                 F.max("group_status_code").alias("n2"))
            .withColumnRenamed("capture_ts", "ts"))


def _peaks(peaks: DataFrame, by: str) -> DataFrame:
    """Each queue's peak lag and last capture per group (``by``: its rank or its key) from
    :func:`queue_peaks` rows."""
    from pyspark.sql import functions as F

    return (peaks.groupBy(by, "topic", "broker", "queue_id")
            .agg(F.max("peak_lag").alias("n1"), F.max("last_ts").alias("end_ts")))


def collect_frames(frames: ReportFrames, group_rows: list[dict[str, Any]],
            limits: HtmlLimits = HtmlLimits(), *, has_events: bool = True,
            has_storms: bool = True, first: tuple[list[Any], int] | None = None,
            second: list[Any] | None = None) -> ReportData:
    """Reduce the job's DataFrames to what the page shows (module docstring). ``group_rows``
    are the latest rows per group, worst first (the job's ``groups``): the first
    ``limits.groups`` get a section. ``has_events`` / ``has_storms`` = False leaves out what
    would find nothing. ``first``: the rows of :func:`first_collect` and its limit, collected
    already (used when they are what collect 1 would collect, else collected again);
    ``second``: the rows of :func:`second_collect`, collected already (likewise)."""
    c = _Collector(frames, group_rows, limits)
    data = ReportData()
    got = c.keyed_totals_and_peaks(*first) if first is not None else None
    per_rows, peaks = got if got is not None else c.totals_and_peaks(data)  # collect 1
    data.series = c.overview_series(per_rows)
    stamps = sorted({r["ts"] for r in per_rows})
    if c.every_group and stamps:  # every group is charted: their range is the run's
        data.first_ts, data.last_ts = stamps[0], stamps[-1]
        if data.bucket_ms is None:
            data.captures = len(stamps)
    ranked, queue_info = _rank_queues(peaks, limits)
    rows = (c.keyed_second(second, ranked, stamps)
            if second is not None and got is not None else None)
    if rows is not None and ranked and len(stamps) > limits.svg_points:
        # the lines' points are each bucket's maximum: collected alone (the rest was taken)
        lines = c.lines(c.ranked_queues(c.rank_map(ranked)), stamps, data)
        rows += [r.asDict() for r in lines.collect()]
    if rows is None:  # collect 2
        parts: list[DataFrame] = []
        if ranked:
            q = c.ranked_queues(c.rank_map(ranked))
            parts.append(c.lines(q, stamps, data))
            parts.append(c.marks(q, has_events=has_events, has_storms=has_storms))
        parts += c.overview(has_events=has_events, has_storms=has_storms)
        if not (c.every_group and stamps):  # the range of every group's captures
            parts.append(c.span())
        rows = [r.asDict() for r in c.union(parts).collect()] if parts else []
    _overview_rows(data, rows)
    data.groups = build_sections(c.keys, group_rows, data.series, queue_info + rows, limits)
    return data


def _rank_queues(peaks: list[Any], lim: HtmlLimits
                 ) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Each group's queues ranked by peak lag (then name): the first ``lines`` get a line, the
    first ``lanes`` an owner lane. (rank by queue key, the ranked queues' rows)"""
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
    return ranked, queue_info


def _overview_rows(data: ReportData, rows: list[dict[str, Any]]) -> None:
    """The span, the overview's events and storms (latest first) from the second collect."""
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


def _shaped(kind: str, df: DataFrame) -> DataFrame:
    """``df`` in the one schema of the collected rows (:data:`_MARK_COLS`)."""
    have = set(df.columns)
    return df.selectExpr(*[f"{sql_text(kind)} AS kind" if c == "kind" else
                           _MARK_SQL[c][0 if c in have else 1] for c, _t in _MARK_COLS])


class _Collector:
    """The DataFrames of each step, for the chosen groups (``keys``: (cluster, group), worst
    first; a row's ``_gi`` is its group's index)."""

    def __init__(self, frames: ReportFrames, group_rows: list[dict[str, Any]],
                 lim: HtmlLimits, *, keyed: bool = False) -> None:
        from pyspark.sql import functions as F

        self.F = F
        self.f = frames
        self.lim = lim
        # keyed (:func:`second_collect`): every group's rows, each with its key (``grp``)
        # where the chosen groups' rows have their index (``_gi``)
        self.keyed = keyed
        self.gcol = "grp" if keyed else "_gi"
        self.qkey = [self.gcol, *_QKEY[1:]]
        self.keys = [(g.get("cluster") or "", g["group"]) for g in group_rows[:lim.groups]]
        self.every_group = len(self.keys) == len(group_rows)
        self.chosen = sorted({g for _c, g in self.keys})

    @staticmethod
    def union(frames: list[DataFrame]) -> DataFrame:
        out = frames[0]
        for f in frames[1:]:
            out = out.unionByName(f)
        return out

    def pick(self, df: DataFrame) -> DataFrame:
        """The chosen groups' rows with their index; a missing cluster and "" are one key
        (the group filter first: Parquet reads skip on it, and most rows go before the
        lookup)."""
        F = self.F
        if self.keyed:
            return _keyed(df)
        if not self.keys:
            return df.filter(F.lit(False)).withColumn("_gi", F.lit(None).cast("int"))
        # (SQL text: one expression each, not a literal Column per group)
        chosen = ", ".join(sql_text(g) for g in self.chosen)
        gmap = _map_sql([(f"{c}{_SEP}{g}", i) for i, (c, g) in enumerate(self.keys)])
        group = ident("group")
        return (df.filter(F.expr(f"{group} IN ({chosen})"))
                .withColumn("_gi", F.expr(f"{gmap}[concat_ws({sql_text(_SEP)}, "
                                          f"coalesce(cluster, ''), {group})]"))
                .filter(F.col("_gi").isNotNull()))

    # ---- collect 1: totals per capture, peak lag per queue ---------------------------------

    def totals_and_peaks(self, data: ReportData) -> tuple[list[Any], list[Any]]:
        """The chosen groups' totals per capture (each bucket's maximum when there are more
        than ``points`` captures: ``data.bucket_ms``) and every queue's peak lag."""
        if not self.keys:
            return [], []
        F, lim = self.F, self.lim
        per = _totals(self.pick(self.series()), "_gi")
        cap = len(self.keys) * lim.points
        qp = self.f.peaks if self.f.peaks is not None else queue_peaks(self.f.lag)
        peak = _peaks(self.pick(qp), "_gi")
        one = _shaped("per", per.limit(cap + 1)).unionByName(_shaped("peak", peak))
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
        return per_rows, peaks

    def keyed_totals_and_peaks(self, rows: list[Any], limit: int
                               ) -> tuple[list[Any], list[Any]] | None:
        """:meth:`totals_and_peaks` from :func:`first_collect`'s rows (``limit``: its limit),
        each given its group's rank; None unless they are what it would collect: every group
        is charted, and every capture's totals were collected (fewer than ``limit``) and are
        at most ``points`` per group (else each bucket's maximum is collected again)."""
        if not (self.keys and self.every_group):
            return None
        pers = [r for r in rows if r["kind"] == "per"]
        if len(pers) >= limit:
            return None
        index = {f"{c}{_SEP}{g}": i for i, (c, g) in enumerate(self.keys)}

        def ranked(kind: str) -> list[dict[str, Any]]:
            return [{**r.asDict(), "_gi": index[r["grp"]]} for r in rows
                    if r["kind"] == kind and r["grp"] in index]

        per_rows = ranked("per")
        if len(per_rows) > len(self.keys) * self.lim.points:
            return None
        return per_rows, ranked("peak")

    def keyed_second(self, rows: list[Any], ranked: dict[str, int], stamps: list[int]
                     ) -> list[dict[str, Any]] | None:
        """:func:`second_collect`'s rows, each chosen group's with its index, when they are
        what collect 2 would collect: every group is charted, its captures have a range
        (else collect 2 reads the span) and Spark ranked the queues as :func:`_rank_queues`
        did (``ranked``); else None (collect 2 is made). With more than ``svg_points``
        captures the lines' points are left out (each bucket's maximum is collected
        instead: :func:`collect_frames`)."""
        if not (self.keys and self.every_group and stamps):
            return None
        bucketed = len(stamps) > self.lim.svg_points
        index = {f"{c}{_SEP}{g}": i for i, (c, g) in enumerate(self.keys)}
        spark_ranked = {_SEP.join(str(v) for v in (index[r["grp"]], r["topic"], r["broker"],
                                                     r["queue_id"])): r["rank"]
                        for r in rows if r["kind"] == "qrank" and r["grp"] in index}
        if spark_ranked != ranked:
            return None
        out = []
        for r in rows:
            kind = r["kind"]
            if kind in ("oevent", "ostorm"):  # (the overview: every group's, by name)
                out.append(r.asDict())
            elif (kind != "qrank" and not (bucketed and kind == "line") and ranked
                  and r["grp"] in index):  # (collect 2 reads marks only with a ranked queue)
                out.append({**r.asDict(), "_gi": index[r["grp"]], "grp": None})
        return out

    def series(self) -> DataFrame:
        """The totals per group and capture (:func:`group_series`)."""
        return self.f.series if self.f.series is not None else group_series(self.f.gt)

    def overview_series(self, per_rows: list[Any]) -> list[dict[str, Any]]:
        """The overview's rows per group and capture; a cluster is named only when there
        are several."""
        keys = self.keys
        many = len({c for c, _g in keys if c}) > 1
        return [{"group": keys[r["_gi"]][1] if not (many and keys[r["_gi"]][0]) else
                 f"{keys[r['_gi']][1]} ({keys[r['_gi']][0]})", "ts": r["ts"],
                 "total_lag": r["n1"], "lag_seconds": r["x"], "status_code": r["n2"],
                 "_gi": r["_gi"]} for r in per_rows]

    # ---- collect 2: points, owner changes, marks, overview ---------------------------------

    def rank_map(self, ranked: dict[str, int]) -> Column:
        """Each ranked queue's rank by its key (``_gi``, topic, broker, queue id), from the
        driver's ranking (:func:`_rank_queues`): a literal map, no join."""
        F = self.F
        qmap = F.expr(_map_sql(list(ranked.items())))
        return qmap[F.concat_ws(_SEP, *[F.col(c).cast("string") for c in _QKEY])]

    def spark_ranks(self) -> DataFrame:
        """Each group's first ``max(lines, lanes)`` queues by peak lag (then name), ranked in
        Spark in :func:`_rank_queues`'s order (keyed: the ranking before the driver has the
        peaks)."""
        from pyspark.sql import Window

        F, lim = self.F, self.lim
        qp = self.f.peaks if self.f.peaks is not None else queue_peaks(self.f.lag)
        w = Window.partitionBy(self.gcol).orderBy(
            F.col("n1").isNull(), F.col("n1").desc(), "topic", "broker",
            F.coalesce(F.col("queue_id"), F.lit(0)))
        return (_peaks(self.pick(qp), self.gcol).withColumn("rank", F.row_number().over(w))
                .filter(F.col("rank") <= max(lim.lines, lim.lanes))
                .select(*self.qkey, "rank"))

    def ranked_queues(self, rank: Column | DataFrame) -> DataFrame:
        """The ranked queues' rows per capture with their rank (``rank``: :meth:`rank_map`,
        or keyed the rows of :meth:`spark_ranks`); an owner that could not be read (a member
        did not answer) is its own kind of run."""
        from pyspark.sql import DataFrame as Frame

        F, lag = self.F, self.f.lag
        own = (F.when(F.col("owner").isNull() & F.coalesce(F.col("owner_unknown"),
                                                           F.lit(False)),
                      F.lit(OWNER_UNKNOWN)).otherwise(F.col("owner"))
               if "owner_unknown" in lag.columns else F.col("owner"))
        q = self.pick(lag.select("cluster", "group", "topic", "broker", "queue_id",
                                 "capture_ts", "lag", "lag_seconds", own.alias("owner")))
        if isinstance(rank, Frame):  # (keyed: a join with the ranked queues)
            return q.join(rank, on=self.qkey)
        return q.withColumn("rank", rank).filter(F.col("rank").isNotNull())

    def lines(self, q: DataFrame, stamps: list[int], data: ReportData) -> DataFrame:
        """The points of the queue lines (each bucket's maximum past ``svg_points``
        captures: ``data.svg_bucket_ms``)."""
        F, lim = self.F, self.lim
        lines = q.filter(F.col("rank") <= lim.lines)
        if len(stamps) > lim.svg_points:  # each bucket's maximum
            b = (stamps[-1] - stamps[0]) // lim.svg_points + 1
            lines = (lines.withColumn("ts", F.floor(F.col("capture_ts") / b) * b)
                     .groupBy(*self.qkey, "rank", "ts")
                     .agg(F.max("lag").alias("n1"), F.max("lag_seconds").alias("x")))
            data.svg_bucket_ms = b
        else:
            lines = lines.select(*self.qkey, "rank", F.col("capture_ts").alias("ts"),
                                 F.col("lag").alias("n1"), F.col("lag_seconds").alias("x"))
        return _shaped("line", lines)

    def owner_changes(self, q: DataFrame) -> DataFrame:
        """The captures where a lane's owner changed (the first one included); a run lasts
        until the next change or the queue's last capture. A null owner (nobody reported
        one) is unknown and not drawn; unowned periods come from rebalance/unowned."""
        from pyspark.sql import Window

        F = self.F
        w = Window.partitionBy(*self.qkey).orderBy("capture_ts")
        same = (F.lag("owner").over(w).eqNullSafe(F.col("owner"))
                & F.lag("capture_ts").over(w).isNotNull())
        return (q.filter(F.col("rank") <= self.lim.lanes).withColumn("_same", same)
                .filter(~F.col("_same"))
                .select(*self.qkey, "rank", F.col("capture_ts").alias("ts"),
                        F.col("owner").alias("client")))

    def marks(self, q: DataFrame, *, has_events: bool, has_storms: bool) -> DataFrame:
        """Owner changes, unowned periods, lock takeovers, events and storms of the chosen
        groups, bounded per group and kind by one window: owner changes lane by lane from
        the worst queue, the other marks the latest first; ``tot`` says how many there
        were."""
        from pyspark.sql import Window

        F, f, lim = self.F, self.f, self.lim
        marks = [("run", self.owner_changes(q)),
                 ("unowned", self.pick(f.unowned).select(
                     self.gcol, "topic", "broker", "queue_id", F.col("start_ts").alias("ts"),
                     "end_ts", F.col("since_ts").alias("n1"),
                     F.col("source_kind").alias("other"))),
                 ("takeover", self.pick(f.locks.filter(F.col("takeover"))).select(
                     self.gcol, "topic", "broker", "queue_id", "ts", "client",
                     F.col("prev_client").alias("other")))]
        if has_events:
            marks.append(("event", self.pick(f.events).select(
                self.gcol, "topic", "ts", "client", F.col("n_gained").alias("n1"),
                F.col("n_lost").alias("n2"), F.col("cause").alias("other"))))
        if has_storms:
            marks.append(("storm", self.pick(f.storms).select(
                self.gcol, F.col("start_ts").alias("ts"), "end_ts", F.col("rounds").alias("n1"),
                F.col("events").alias("n2"),
                F.substring(F.concat_ws(", ", "clients"), 1, 300).alias("other"))))
        m = self.union([_shaped(k, df) for k, df in marks])
        order: Column = F.when(F.col("kind") == "run",
                               F.col("rank") * F.lit(1 << 44) + F.col("ts")
                               ).otherwise(-F.col("ts"))
        mw = Window.partitionBy(self.gcol, "kind")
        bound = F.when(F.col("kind") == "run", lim.runs).otherwise(lim.marks)
        return (m.withColumn("tot", F.count(F.lit(1)).over(mw))
                # (ties broken by every column, so which marks are kept does not depend on
                # the rows' order: a bounded re-run's page equals a full run's)
                .withColumn("_rn", F.row_number().over(mw.orderBy(
                    order, *(F.col(c).asc_nulls_first() for c in MARK_TIE_COLS))))
                .filter(F.col("_rn") <= bound).drop("_rn"))

    def overview(self, *, has_events: bool, has_storms: bool) -> list[DataFrame]:
        """The latest ``timeline_events`` events and ``storms`` storms of every group."""
        F, f, lim = self.F, self.f, self.lim
        parts = []
        if has_events:
            parts.append(_shaped("oevent", f.events.orderBy(F.col("ts").desc())
                                     .limit(lim.timeline_events).select(
                                         F.col("group").alias("grp"), "topic", "ts", "client",
                                         F.col("n_gained").alias("n1"),
                                         F.col("n_lost").alias("n2"),
                                         F.col("cause").alias("other"),
                                         F.col("source_kind").alias("src"))))
        if has_storms:
            parts.append(_shaped("ostorm", f.storms.orderBy(F.col("start_ts").desc())
                                     .limit(lim.storms).select(
                                         F.col("group").alias("grp"),
                                         F.col("start_ts").alias("ts"), "end_ts",
                                         F.col("rounds").alias("n1"))))
        return parts

    def span(self) -> DataFrame:
        """The first and last capture of every group, and how many captures."""
        F = self.F
        return _shaped("span", self.series().agg(F.min("capture_ts").alias("ts"),
                                                     F.max("capture_ts").alias("end_ts"),
                                                     F.countDistinct("capture_ts").alias("n1")))

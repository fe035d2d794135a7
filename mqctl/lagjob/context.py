"""What the steps of one lag report run share: the session, the listing, the options, the
state's manifest and what the run found so far, the timer and job group of its stages
(:meth:`RunContext.stage`), its caches and cuts (:meth:`RunContext.keep`,
:meth:`RunContext.cut`). The steps (:mod:`reading`, :mod:`outputs`, :mod:`summaries`,
:mod:`derived`, :mod:`stages`) take it; :class:`run.Run` adds the order of the steps."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mqctl.lagjob.alignment import Close
from mqctl.lagjob.inputs import Kind
from mqctl.lagoptions import Options

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame, SparkSession


class RunContext:
    """One run's state and its stage mechanics."""

    def __init__(self, spark: SparkSession, listing: Any, out: str, opts: Options,
                 thresholds: list[Any], prom_file: str | None,
                 say: Callable[[str], None]) -> None:
        self.spark = spark
        self.listing = listing
        self.out = out
        self.o = opts
        self.thresholds = thresholds
        self.prom_file = prom_file
        self.written: dict[str, str] = {}
        self.say = say
        self.started = 0.0
        self.persisted: list[DataFrame] = []
        self.current = "read"  # the stage running now (named when Spark fails in it)
        self.notes: list[str] = []
        # the captures opened within --align of the previous one, by cluster (with a
        # bounded re-run's earlier ones): :func:`reading.close_captures`
        self.close: dict[str, Close] = {}
        self.timings: dict[str, float] = {}
        self.state: str | None = None  # the ingested table's directory (incremental runs)
        self.full = False
        self.touched: set[str] | None = None  # dates whose observations changed (incremental)
        from mqctl.lagjob.ingest import Manifest

        self.manifest = Manifest()
        self.write_all = True
        # a bounded re-run (mqctl/lagjob/bounded.py): allowed (until it turned out impossible),
        # the batch this run ingested whole (None: none, or not whole), the bound when it is one
        self.may_bound = True
        self.new_batch: int | None = None
        self.clean_ingest = False
        self.aged_out: set[str] = set()  # dates of ingested files no longer among the inputs
        self.deferred = False  # their rows were kept in the table (:func:`ingest.age_out`)
        self.try_bound = False
        self.bound: Any = None
        self.obs_times: DataFrame | None = None  # (cluster, observed_ts) of what was read
        self.kept_counts: dict[str, dict[str, int]] = {}  # (the manifest's ``counts``)
        # the page's series and queue peaks (``series``, ``peaks``; ``series_new``: this run's
        # part of the series): :func:`outputs.page_frames`
        self.page: dict[str, DataFrame] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a stage (wall seconds, added up per name) and label its Spark jobs with it
        (job group ``mqctl-lag:<name>``: the event log and the status tracker show it)."""
        import time

        self.job_group(name)
        self.current = name
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0
            self.job_group("other")

    def job_group(self, name: str) -> None:
        try:
            self.spark.sparkContext.setJobGroup(f"mqctl-lag:{name}", name,
                                                interruptOnCancel=False)
        except Exception:  # no SparkContext here (Spark Connect): the timer still works
            pass

    def keep(self, df: DataFrame) -> DataFrame:
        """Cache a frame that several later steps read."""
        from pyspark import StorageLevel

        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        self.persisted.append(df)
        return df

    def keep_read(self, df: DataFrame, paths: dict[Kind, list[str]]) -> DataFrame:
        """Cache a frame read from ``paths`` that several later steps read. With no file to
        read, an empty relation (``Filter(false)``) instead, which the optimiser drops from
        every union and join: a cached empty frame costs a job at each use (with adaptive
        execution every scan of a cached frame is a query stage of its own)."""
        from pyspark.sql import functions as F

        return self.keep(df) if any(paths.values()) else df.where(F.lit(False))

    def cut(self, df: DataFrame, name: str, *, keep_partitioning: bool = False
            ) -> DataFrame:
        """Materialise a stage and cut its lineage (``localCheckpoint``): later stages join and
        window over it several times, and without the cut the analysed plans grow with every
        reuse of the same subtree. ``keep_partitioning``: the rows read back keep ``df``'s
        partitioning and order, so the steps after it inside the same partitioning shuffle
        nothing. (In Spark 4.x a checkpoint taken under adaptive execution is read back with
        an unknown partitioning, ``UnknownPartitioning(0)``; adaptive execution is off for
        that cut's own job only.)"""
        from pyspark import StorageLevel

        from mqctl.lagjob.session import run_settings

        aqe_off = {"spark.sql.adaptive.enabled": "false"} if keep_partitioning else {}
        with self.stage(name), run_settings(self.spark, aqe_off):
            return df.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)

    def cut_counting(self, df: DataFrame, name: str, where: SparkColumn, *,
                     keep_partitioning: bool = False) -> tuple[DataFrame, int]:
        """:meth:`cut`, and how many of its rows match ``where``, counted in the cut's own job
        (an observed metric, ``Dataset.observe``: ``CollectMetricsExec`` passes the rows and
        their partitioning through) where a check of the cut rows was a job of its own."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        seen = Observation(f"mqctl-{name}")
        out = self.cut(df.observe(seen, F.count(F.when(where, F.lit(1))).alias("n")), name,
                       keep_partitioning=keep_partitioning)
        return out, int(seen.get["n"])


    def forget(self) -> None:
        """Forget what an attempt of :meth:`_run` found (the next one reads it all again)."""
        self.unpersist()
        self.bound, self.notes, self.written, self.close = None, [], {}, {}
        self.touched, self.new_batch, self.clean_ingest = None, None, False
        self.aged_out, self.deferred, self.try_bound = set(), False, False

    def unpersist(self) -> None:
        for df in self.persisted:
            try:
                df.unpersist()
            except Exception:  # the JVM is gone: the error above says so
                pass
        self.persisted = []

    # -----------------------------------------------------------------------------------------

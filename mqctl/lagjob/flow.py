"""The Spark plan around the kernel (:mod:`mqctl.lagjob.kernel`): the per-queue work of the lag
report as one shuffle and ``mapInArrow`` calls.

    enrich      members and configs joined in (small sides: broadcast)
    shuffle     observations and broker points, once, by topic (cluster, topic)
    kernel      one mapInArrow per partition: dedupe, max offsets, lag, time lag, status
    owners      in the same mapInArrow, from the same batch: the owner track's rows, owner
                changes, capture resets, unowned intervals, and the totals per capture, group
                and topic (a row per output and partition, the output's rows as an Arrow IPC
                stream: :func:`side_frame`)

The aggregates across topics after it (the group's status, latest rows, health, storms) are
Spark aggregates reading the kernel's rows. A partition holds whole topics (the
repartition's key), which is what the kernel asks of a batch: each call gets one partition's
rows as one Arrow table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqctl.lagjob import group_topics, kernel
from mqctl.lagjob import transforms as X
from mqctl.lagjob.bounded import CHANGES_DDL, RESETS_DDL, UNOWNED_DDL
from mqctl.lagjob.transforms.status import status_name

# the kernel's columns added to an observation's, with their Spark types
LAG_ADDED = [("broker_offset_ts", "long"), ("lag", "long"), ("inflight", "long"),
             ("lag_seconds", "double"), ("lag_seconds_source", "string"),
             ("estimated", "boolean"), ("lower_bound", "boolean"),
             ("lag_seconds_upper", "double"), ("status", "string"), ("complete", "double"),
             ("window_samples", "int"), ("consume_rate", "double"), ("produce_rate", "double")]
# what the kernel reads of a broker point besides its queue
POINT_COLUMNS = ["observed_ts", "broker_offset", "min_offset"]




# a kernel row's kind (``_kind``): 0 a lag row; else one batch's owner output of that name,
# as an Arrow IPC stream in ``_side`` (the owners are computed from the same batch as the lag
# rows: the lag rows are not handed to Python again)
SIDES = {"changes": 1, "resets": 2, "unowned": 3, "track": 4, "group_topic": 5}
SIDE_COLUMNS = ["_kind", "_side"]
SIDE_SCHEMA = T.StructType([T.StructField("_kind", T.ByteType(), True),
                            T.StructField("_side", T.BinaryType(), True)])
_SIDE_ARROW = pa.schema([("_kind", pa.int8()), ("_side", pa.binary())])
# the per group and topic rows (:func:`group_topics.group_topic_rows`)
GROUP_TOPIC_DDL = (
    "cluster string, group string, topic string, capture_ts long, queues long, "
    "queues_known long, total_lag long, max_lag long, lag_seconds double, "
    "lag_seconds_source string, estimated boolean, consume_rate double, produce_rate double, "
    "status_code int, status_queues long, complete double, online boolean, members int, "
    "never_committed long, owner_unknown long, window_samples int, consume_type string, "
    "message_model string, observed_ts long")
SIDE_DDL = {"changes": CHANGES_DDL, "resets": RESETS_DDL, "unowned": UNOWNED_DDL,
            "group_topic": GROUP_TOPIC_DDL}


def _ipc(table: Any) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def _side_rows(outputs: dict[str, Any], schema: Any) -> Any:
    """One row per owner output: its kind and its rows as an Arrow IPC stream, every other
    column of ``schema`` (an Arrow schema ending in :data:`SIDE_COLUMNS`) null."""
    n = len(outputs)
    cols = {f.name: pa.nulls(n, f.type) for f in schema}
    cols["_kind"] = pa.array([SIDES[k] for k in outputs], pa.int8())
    cols["_side"] = pa.array([_ipc(t) for t in outputs.values()], pa.binary())
    return pa.table(cols, schema=schema)


def _sides(lag: Any, owners: bool, track: bool, group_topic: bool) -> dict[str, Any]:
    """The outputs computed from a batch of lag rows of whole topics, by name (:data:`SIDES`):
    with ``owners`` the owner outputs (the owner track's rows with ``track``), with
    ``group_topic`` the totals per capture, group and topic."""
    out = kernel.owner_outputs(lag, track) if owners else {}
    if group_topic:
        out["group_topic"] = group_topics.group_topic_rows(lag)
    return out


def _kernel_fn(params: Any, track: bool, sides: bool, names: list[str]
               ) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The mapInArrow function of :func:`kernel_rows`: a partition's lag rows (``_kind`` 0),
    then, with ``sides``, its other outputs (:func:`_sides`, :func:`_side_rows`)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        got = list(batches)
        if not got:
            return
        lag = kernel.lag_rows(pa.Table.from_batches(got), params)
        n = lag.num_rows
        out = lag.select(names[:-2]).append_column(
            "_kind", pa.array(np.zeros(n, np.int8))).append_column(
            "_side", pa.nulls(n, pa.binary()))
        yield from out.to_batches()
        if sides:
            yield from _side_rows(_sides(lag, True, track, True), out.schema).to_batches()

    return run


def kernel_rows(obs: DataFrame, points: DataFrame, o: Any, track: bool = True,
                sides: bool = True) -> DataFrame:
    """The kernel's rows: the lag dataset's rows before their date and display columns
    (``_kind`` 0, :func:`lag_part`), and each partition's owner outputs (:func:`side_frame`),
    from the enriched observations (with their captures: :func:`transforms.enrich`) and the
    broker's max-offset points: one shuffle by topic and one mapInArrow
    (:func:`kernel.lag_rows`, :func:`kernel.owner_outputs`; the owner track's rows with
    ``track``; only the lag rows without ``sides``). ``o``: the run's
    :class:`mqctl.lagoptions.Options`."""
    lists = list_columns(obs)
    obs = flag_null_lists(obs.withColumn("_r", F.lit(1).cast("byte")), lists)
    pts = points.select(*X.QUEUE, *POINT_COLUMNS).withColumn("_r", F.lit(0).cast("byte"))
    # (the points' rows have no lists: empty ones too)
    u = no_null_lists(obs.unionByName(pts, allowMissingColumns=True), lists)
    # (the side rows hold nulls in every column but their own: the flags too)
    fields = [T.StructField(f.name, f.dataType, True) if f.name.startswith(_NULL) else f
              for f in obs.schema.fields if f.name != "_r"]
    schema = T.StructType(fields + [T.StructField(n, T._parse_datatype_string(t), True)
                                    for n, t in LAG_ADDED] + SIDE_SCHEMA.fields)
    params = kernel.Params(window=o.window, allowed_lag=o.allowed_lag,
                           allowed_lag_seconds=o.allowed_lag_seconds,
                           max_skew_ms=o.max_skew_ms)
    out = X.by_topic(u).mapInArrow(_kernel_fn(params, track, sides, schema.names), schema)
    return restore_null_lists(out, lists)


# The list columns the kernel carries (``owners``, ``members_unanswered``) reach it without a
# null value: a null list is handed over empty, with a flag column saying it was null, and is
# null again after. Spark's Arrow writer (JVM to Python) is slow on null lists: at 1M rows
# the kernel's whole hand-over took about twice as long with ``members_unanswered`` null on
# every row (bench/lag_handover.py).
_NULL = "_null_"


def list_columns(df: DataFrame) -> dict[str, Any]:
    """``df``'s list columns and their types."""
    return {f.name: f.dataType for f in df.schema.fields if isinstance(f.dataType, T.ArrayType)}


def flag_null_lists(df: DataFrame, lists: dict[str, Any]) -> DataFrame:
    """``df`` with a flag per list column of ``lists``: whether its value is null."""
    return df.withColumns({_NULL + c: F.col(c).isNull() for c in lists})


def no_null_lists(df: DataFrame, lists: dict[str, Any]) -> DataFrame:
    """``df`` with every null list of ``lists`` made empty (:func:`flag_null_lists` first)."""
    return df.withColumns({c: F.coalesce(F.col(c), F.array().cast(t)) for c, t in lists.items()})


def restore_null_lists(df: DataFrame, lists: dict[str, Any]) -> DataFrame:
    """``df`` with the lists its flags say were null null again, and the flags dropped."""
    return df.withColumns({c: F.when(~F.col(_NULL + c), F.col(c)) for c in lists}).drop(
        *[_NULL + c for c in lists])


def lag_part(rows: DataFrame) -> DataFrame:
    """The lag rows of the kernel's rows (:func:`kernel_rows`)."""
    return rows.filter(F.col("_kind") == F.lit(0)).drop(*SIDE_COLUMNS)


def lag_rows(obs: DataFrame, points: DataFrame, o: Any) -> DataFrame:
    """The lag rows alone (:func:`kernel_rows` without its other outputs)."""
    return lag_part(kernel_rows(obs, points, o, track=False, sides=False))


def own_history(lag_rows: DataFrame, points: DataFrame) -> DataFrame:
    """The broker history as today's engine keeps it in the derived state: the points and the
    observations' own max offsets (not the ones filled from the points)."""
    own = lag_rows.filter(F.col("broker_offset_ts") == F.col("observed_ts"))
    return X.broker_history(own, X.by_topic(points))


# the owner track's rows (:func:`kernel.tracked_rows`)
TRACK_DDL = ("cluster string, group string, topic string, broker string, queue_id int, "
             "capture_ts long, owner string")
OWNER_IN = ["cluster", "group", "topic", "broker", "queue_id", "capture_ts", "owner", "online",
            "owner_unknown", "consumer_offset", "source_kind", "source"]


def _decode(names: list[str]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for blob in batch.column(0).to_pylist():
                yield from pa.ipc.open_stream(blob).read_all().select(names).to_batches()

    return run


def side_frame(rows: DataFrame, name: str) -> DataFrame:
    """The owner output ``name`` (a key of :data:`SIDES`) of the kernel's rows (or of
    :func:`owner_rows`), as a frame of its own."""
    schema = T._parse_datatype_string(SIDE_DDL.get(name, TRACK_DDL))
    assert isinstance(schema, T.StructType)
    src = rows.filter(F.col("_kind") == F.lit(SIDES[name])).select("_side")
    return src.mapInArrow(_decode(schema.names), schema)


def _side_fn(group_topic: bool) -> Callable[[Iterator[Any]], Iterator[Any]]:
    def run(batches: Iterator[Any]) -> Iterator[Any]:
        got = list(batches)
        if got:
            out = _sides(pa.Table.from_batches(got), True, True, group_topic)
            yield from _side_rows(out, _SIDE_ARROW).to_batches()

    return run


def owner_rows(lag_rows: DataFrame, *, group_topic: bool = False) -> DataFrame:
    """The owner outputs (and with ``group_topic`` the per group and topic rows) of lag rows
    whose partitions hold whole topics, as the kernel's side rows (:func:`side_frame` reads
    them)."""
    src = lag_rows if group_topic else lag_rows.select(*OWNER_IN)
    return src.mapInArrow(_side_fn(group_topic), SIDE_SCHEMA)


def captured_changes(rows: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame, DataFrame]:
    """:func:`mqctl.lagjob.stages._captured_changes` by the kernel: owner changes, offset
    resets, unowned intervals and the owner track's rows (:data:`TRACK_DDL`) from the kernel's
    rows (:func:`kernel_rows`) or from :func:`owner_rows`."""
    return (side_frame(rows, "changes"), side_frame(rows, "resets"),
            side_frame(rows, "unowned"), side_frame(rows, "track"))


def group_topic_status(rows: DataFrame) -> DataFrame:
    """Per capture, group and topic (:func:`group_topics.group_topic_rows`, from the kernel's rows
    or :func:`owner_rows`), with the status names and the group's status: the worst over its
    topics at that capture."""
    gt = side_frame(rows, "group_topic")
    wg = Window.partitionBy("cluster", "group", "capture_ts")
    return (gt.withColumns({
        # (every row counts a queue: never null)
        "queues": F.coalesce(F.col("queues"), F.lit(0).cast("long")),
        "queues_known": F.coalesce(F.col("queues_known"), F.lit(0).cast("long")),
        "status": status_name(F.col("status_code")),
        "group_status_code": F.max("status_code").over(wg)})
        .withColumn("group_status", status_name(F.col("group_status_code"))))

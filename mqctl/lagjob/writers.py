"""Outputs of the lag job: date-partitioned Parquet datasets (replaced per date on a re-run),
text files written atomically, the Prometheus textfile and the self-contained HTML report.

The renderers (:func:`render_prometheus`; the page's :func:`render_html` lives in
:mod:`mqctl.lagjob.html`) are pure functions over bounded lists of rows, so they are tested
without Spark.
"""

from __future__ import annotations

import csv
import io
import math
import posixpath
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mqctl.fsutil import atomic_write_text
from mqctl.lagjob.html import render_html as render_html  # the page moved there; re-exported
from mqctl.lagmetrics import (  # the textfile's series (shared with the exporter); re-exported
    BROKER_METRICS as BROKER_METRICS,
)
from mqctl.lagmetrics import GROUP_METRICS as GROUP_METRICS
from mqctl.lagmetrics import RUN_METRICS as RUN_METRICS
from mqctl.lagmetrics import TOPIC_METRICS as TOPIC_METRICS
from mqctl.lagmetrics import render_prometheus as render_prometheus
from mqctl.lagmetrics import topic_kind as topic_kind

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def is_local(path: str) -> bool:
    return path.startswith("file:") or "://" not in path


def utc_day(ms: int) -> str:
    """The UTC date (``yyyy-MM-dd``) of an epoch-ms time: a ``date=`` partition's name."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def day_start_ms(day: str) -> int:
    """The epoch ms of a UTC date's (``yyyy-MM-dd``) first instant."""
    from datetime import UTC, datetime

    return int(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp() * 1000)


def join(base: str, *parts: str) -> str:
    if is_local(base):
        from mqctl.lagjob.inputs import local_path

        return posixpath.join(local_path(base), *parts)
    return base.rstrip("/") + "/" + "/".join(parts)


# --------------------------------------------------------------------------------------------
# Parquet

def _hadoop_fs(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm: Any = spark.sparkContext._jvm
    hp = jvm.org.apache.hadoop.fs.Path(path)
    return hp.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hp


# a small dataset of at most this many rows is written by one task (:func:`write_partitioned`)
ONE_TASK_ROWS = 100_000


def write_partitioned(spark: SparkSession, df: DataFrame, path: str, run_dates: list[str],
                      df_dates: list[str], *, one_file_per_date: bool = False,
                      rows: int | None = None) -> None:
    """Replace the ``date=`` partitions of this run: dynamic partition overwrite for the
    dates that have rows, and removal of this run's dates that no longer have any (e.g. a
    quarantine partition after the bad file was fixed). Other dates are untouched.
    ``one_file_per_date``: each date's rows in one file; ``rows`` (the frame's rows, when
    known) at most :data:`ONE_TASK_ROWS`: written by one task (the writer sorts its rows by
    date: one file per date, as the shuffle by date gives, without the shuffle's job)."""
    for d in sorted(set(run_dates) - set(df_dates)):
        fs, hp = _hadoop_fs(spark, join(path, f"date={d}"))
        if fs.exists(hp):
            fs.delete(hp, True)
    if not df_dates:
        return
    if one_file_per_date:  # small datasets (events, quarantine, ...): no scatter of tiny files
        df = (df.coalesce(1) if rows is not None and rows <= ONE_TASK_ROWS
              else df.repartition("date"))
    (df.write.mode("overwrite").option("partitionOverwriteMode", "dynamic")
     .partitionBy("date").parquet(path))


# --------------------------------------------------------------------------------------------
# text files

def write_text(spark: SparkSession | None, path: str, text: str) -> None:
    """Atomically: a temp file in the same directory, then a rename (local or Hadoop FS)."""
    if is_local(path):
        from mqctl.lagjob.inputs import local_path

        atomic_write_text(local_path(path), text)
        return
    assert spark is not None
    jvm: Any = spark.sparkContext._jvm
    fs, hp = _hadoop_fs(spark, path)
    tmp = jvm.org.apache.hadoop.fs.Path(hp.getParent(), "." + hp.getName() + ".tmp")
    out = fs.create(tmp, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()
    if fs.exists(hp):
        fs.delete(hp, False)
    if not fs.rename(tmp, hp):
        raise OSError(f"cannot rename {tmp} to {path}")


def csv_text(columns: list[str], rows: Iterable[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if r.get(c) is None else _csv_cell(r.get(c)) for c in columns])
    return buf.getvalue()


def _csv_cell(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "" if not math.isfinite(v) else repr(round(v, 6))
    if isinstance(v, (list, tuple)):
        return " ".join(str(x) for x in v)
    return v


def json_text(data: Any) -> str:
    from mqctl.render import to_json

    return to_json(data) + "\n"


# --------------------------------------------------------------------------------------------
# Prometheus textfile: the names, labels, units and the text are in mqctl.lagmetrics (the
# exporter serves the same series without Spark); re-exported above


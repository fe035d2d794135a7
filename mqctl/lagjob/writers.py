"""Outputs of the lag job: date-partitioned Parquet datasets (replaced per date on a re-run),
text files written atomically, the Prometheus textfile and the self-contained HTML report.

The renderers (:func:`render_prometheus`; the page's :func:`render_html` lives in
:mod:`mqctl.lagjob.html`) are pure functions over bounded lists of rows, so they are tested
without Spark.
"""

from __future__ import annotations

import json
import math
import posixpath
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mqctl.fsutil import atomic_write_text
from mqctl.lagjob.html import render_html as render_html  # the page moved there; re-exported

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def is_local(path: str) -> bool:
    return path.startswith("file:") or "://" not in path


def join(base: str, *parts: str) -> str:
    if is_local(base):
        from mqctl.lagjob.inputs import local_path

        return posixpath.join(local_path(base), *parts)
    return base.rstrip("/") + "/" + "/".join(parts)


# --------------------------------------------------------------------------------------------
# Parquet

def partition_dates(df: DataFrame) -> list[str]:
    """The distinct ``date`` values of a dataset (bounded: one per day)."""
    return sorted(r["date"] for r in df.select("date").distinct().collect() if r["date"])


def _hadoop_fs(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm: Any = spark.sparkContext._jvm
    hp = jvm.org.apache.hadoop.fs.Path(path)
    return hp.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hp


def write_partitioned(spark: SparkSession, df: DataFrame, path: str, run_dates: list[str],
                      df_dates: list[str], *, one_file_per_date: bool = False) -> None:
    """Replace the ``date=`` partitions of this run: dynamic partition overwrite for the
    dates that have rows, and removal of this run's dates that no longer have any (e.g. a
    quarantine partition after the bad file was fixed). Other dates are untouched."""
    for d in sorted(set(run_dates) - set(df_dates)):
        fs, hp = _hadoop_fs(spark, join(path, f"date={d}"))
        if fs.exists(hp):
            fs.delete(hp, True)
    if not df_dates:
        return
    if one_file_per_date:  # small datasets (events, quarantine, ...): no scatter of tiny files
        df = df.repartition("date")
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
    import csv
    import io

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
# Prometheus textfile (node_exporter textfile collector: no client-side timestamps)

def _esc(v: Any) -> str:
    return str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(d: dict[str, Any]) -> str:
    return "{" + ",".join(f'{k}="{_esc("" if v is None else v)}"' for k, v in d.items()) + "}"


def _num(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "1" if v else "0"
    f = float(v)
    if not math.isfinite(f):
        return None
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else repr(f)


TOPIC_METRICS = [
    ("mqctl_lag_messages", "total_lag",
     "Messages not yet consumed by the group on the topic (latest capture)."),
    ("mqctl_lag_max_messages", "max_lag", "Largest lag of one queue (latest capture)."),
    ("mqctl_lag_seconds", "lag_seconds",
     "Time lag in seconds of the slowest queue (exact, interpolated or a lower bound)."),
    ("mqctl_lag_seconds_estimated", "estimated",
     "1 when mqctl_lag_seconds is estimated (interpolated or lower bound), 0 when exact."),
    ("mqctl_consume_rate", "consume_rate",
     "Messages consumed per second between the last two captures."),
    ("mqctl_produce_rate", "produce_rate",
     "Messages produced per second between the last two captures."),
    ("mqctl_topic_status", "status_code",
     "Burrow-style status of the group on the topic: 0 OK, 1 WARN, 2 REWIND, 3 STALL, 4 STOP."),
    ("mqctl_window_complete", "complete",
     "Fraction of the queues whose status window is full (0..1)."),
    ("mqctl_lag_capture_timestamp_seconds", "capture_ts_s",
     "When the latest capture of the group on the topic was taken (unix seconds)."),
]
GROUP_METRICS = [
    ("mqctl_group_status", "group_status_code",
     "Burrow-style status of the group (worst topic): 0 OK, 1 WARN, 2 REWIND, 3 STALL, 4 STOP."),
    ("mqctl_group_lag_messages", "total_lag", "Messages not yet consumed by the group."),
    ("mqctl_group_rebalance_events", "rebalances",
     "Rebalance events (per client and topic) of the group in the report's inputs."),
]


def render_prometheus(topic_rows: Iterable[dict[str, Any]], group_rows: Iterable[dict[str, Any]],
                      totals: dict[str, Any], run_ts_ms: int) -> str:
    """The textfile: per group and topic, per group, and run totals; every family has its
    HELP and TYPE lines before its samples."""
    fams: dict[str, list[str]] = {name: [] for name, _, _ in TOPIC_METRICS + GROUP_METRICS}
    for r in topic_rows:
        lab = _labels({"cluster": r.get("cluster") or "", "group": r.get("group"),
                       "topic": r.get("topic")})
        vals = dict(r)
        vals["capture_ts_s"] = (r["capture_ts"] / 1000.0) if r.get("capture_ts") else None
        for name, key, _ in TOPIC_METRICS:
            v = _num(vals.get(key))
            if v is not None:
                fams[name].append(f"{name}{lab} {v}")
    for r in group_rows:
        lab = _labels({"cluster": r.get("cluster") or "", "group": r.get("group")})
        for name, key, _ in GROUP_METRICS:
            v = _num(r.get(key))
            if v is not None:
                fams[name].append(f"{name}{lab} {v}")
    out: list[str] = []
    for name, _, help_ in TOPIC_METRICS + GROUP_METRICS:
        out += [f"# HELP {name} {help_}", f"# TYPE {name} gauge", *fams[name]]
    run = [
        ("mqctl_lag_report_quarantined_records", totals.get("quarantined", 0),
         "Input lines or files the last report could not use (see OUT/quarantine)."),
        ("mqctl_lag_report_rebalance_storms", totals.get("storms", 0),
         "Rebalance storms found by the last report."),
        ("mqctl_lag_report_lock_takeovers", totals.get("lock_takeovers", 0),
         "Queue lock takeovers (expired locks taken by another client) in the last report."),
        ("mqctl_lag_report_threshold_breaches", totals.get("breaches", 0),
         "--fail-on expressions breached by the last report."),
        ("mqctl_lag_report_last_run_timestamp_seconds", run_ts_ms / 1000.0,
         "When the last lag report finished (unix seconds)."),
    ]
    for name, value, help_ in run:
        out += [f"# HELP {name} {help_}", f"# TYPE {name} gauge", f"{name} {_num(value) or 0}"]
    return "\n".join(out) + "\n"


def summary_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"

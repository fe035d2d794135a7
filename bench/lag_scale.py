"""Scale of `mqctl lag report`: the whole job on 1M and 10M canonical snapshot rows, beside
reference queries over the same files measured in the same run.

    python bench/lag_scale.py [--data /tmp/mqctl-bench-lag] [--sizes 1m,10m] [--master local[2]]
                              [--rerun 10] [--no-duckdb]

Sizes: 10k, 1m, 10m, 100m (10x the groups each), and 10m-long (the 1m cluster with 10x the
captures: ``--sizes 1m,10m-long --rerun 10`` compares re-runs over a short and a long history of
the same cluster).

Generates the datasets with bench/gen_exports.py (fixed seed; cached under --data), runs a small
warm-up report first (JVM start and JIT out of the way), then for each size, in one
SparkSession:

* the report (``run_report``), with its per-stage wall times (``ReportResult.timings``) and, from
  Spark's event log, the tasks and executor time of each stage's jobs (job group
  ``mqctl-lag:<stage>``);
* reference 1, DuckDB (2 threads; the ``bench`` extra: ``.venv/bin/pip install -e '.[bench]'``;
  skipped when not installed): read every JSONL file, per-queue lag, the 10-capture window
  (offset moved? lag minimum) and owner changes, aggregated per group/topic/capture and
  written as Parquet;
* reference 2, Spark: a bare schema'd JSON read + one aggregate (sum of lag per
  group/topic/capture) written as Parquet.

It prints the report time as a ratio of each reference: other processes share this machine, so
only ratios measured in the same run mean anything. ``--rerun N`` then adds N new capture files
to each dataset (a copy of the history plus N later captures) and times the incremental re-run
of the report against its kept state, beside the references over the whole (grown) input.
Not run in CI. docs/lag-performance.md has the measured tables.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gen_exports import generate

# groups x topics x queues x captures
SHAPES = {
    "10k": (10, 5, 8, 25),
    "1m": (100, 10, 8, 125),
    "10m": (1000, 10, 8, 125),
    # the 1m cluster with a 10x longer history (a re-run's cost follows the
    # new data, so re-runs of 1m and 10m-long should cost about the same)
    "10m-long": (100, 10, 8, 1250),
    "100m": (10000, 10, 8, 125),
}


def dataset(root: Path, size: str, extra: int = 0) -> tuple[Path, int]:
    """The dataset of ``size`` (cached); ``extra`` > 0: the same history plus ``extra`` later
    captures (the generator is deterministic, so the first captures are the same files)."""
    g, t, q, c = SHAPES[size]
    d = root / (f"snap-{size}" if not extra else f"snap-{size}-plus{extra}")
    marker = d / ".generated.json"
    want = {"groups": g, "topics": t, "queues": q, "captures": c + extra, "seed": 7}
    if marker.exists() and json.loads(marker.read_text()) == want:
        return d, g * t * q * (c + extra)
    if d.exists():
        shutil.rmtree(d)
    st = generate(d, g, t, q, c + extra, seed=7)
    marker.write_text(json.dumps(want))
    print(f"  generated {d.name}: {st.rows:,} rows, {st.bytes / 1e9:.2f} GB in {st.seconds:.0f} s",
          flush=True)
    return d, st.rows


def duckdb_reference(path: Path, out: Path) -> float | None:
    try:
        import duckdb
    except ImportError:
        return None
    files = str(path / "*" / "*.jsonl")
    cols = ("{'capture_ts': 'BIGINT', 'group': 'VARCHAR', 'topic': 'VARCHAR', "
            "'broker': 'VARCHAR', 'queue_id': 'INTEGER', 'broker_offset': 'BIGINT', "
            "'consumer_offset': 'BIGINT', 'owner': 'VARCHAR'}")
    q = f"""
    COPY (
      WITH s AS (
        SELECT capture_ts, "group", topic, broker, queue_id, broker_offset, consumer_offset,
               owner, greatest(broker_offset - consumer_offset, 0) AS lag
        FROM read_json('{files}', format='newline_delimited', columns={cols})
      ), w AS (
        SELECT *,
          min(consumer_offset) OVER win AS c_min, max(consumer_offset) OVER win AS c_max,
          min(lag) OVER win AS lag_min,
          lag(owner) OVER (PARTITION BY "group", topic, broker, queue_id ORDER BY capture_ts)
            AS prev_owner
        FROM s
        WINDOW win AS (PARTITION BY "group", topic, broker, queue_id ORDER BY capture_ts
                       ROWS BETWEEN 9 PRECEDING AND CURRENT ROW)
      )
      SELECT "group", topic, capture_ts, sum(lag) AS total_lag, max(lag) AS max_lag,
             min(lag_min) AS window_min_lag,
             sum(CASE WHEN c_min = c_max THEN 1 ELSE 0 END) AS stalled,
             sum(CASE WHEN prev_owner IS NOT NULL AND owner IS DISTINCT FROM prev_owner
                 THEN 1 ELSE 0 END) AS owner_changes
      FROM w GROUP BY ALL
    ) TO '{out}' (FORMAT parquet)"""
    if out.exists():
        out.unlink()
    con = duckdb.connect()
    con.execute("SET threads = 2")
    t0 = time.perf_counter()
    con.execute(q)
    dt = time.perf_counter() - t0
    con.close()
    return dt


def spark_reference(spark: Any, path: Path, out: Path) -> float:
    from pyspark.sql import functions as F

    from mqctl.lagjob import schemas

    if out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    spark.sparkContext.setJobGroup("reference", "reference", interruptOnCancel=False)
    (spark.read.schema(schemas.SNAPSHOT_JSON).json(str(path / "*" / "*.jsonl"))
     .groupBy("group", "topic", "capture_ts").agg(F.sum("lag").alias("total_lag"))
     .write.parquet(str(out)))
    return time.perf_counter() - t0


def event_log_stats(log_dir: Path, t_from: float, t_to: float) -> dict[str, dict[str, float]]:
    """Per job group (the report's stages), from Spark's event log: jobs, stages, tasks,
    executor run time (s) of the jobs submitted between ``t_from`` and ``t_to`` (epoch s)."""
    job_group: dict[int, str] = {}
    stage_job: dict[int, int] = {}
    out: dict[str, dict[str, float]] = {}
    for f in sorted(glob.glob(str(log_dir / "**" / "*"), recursive=True)):
        if os.path.isdir(f) or os.path.basename(f).startswith(("appstatus", ".")):
            continue
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                ev = json.loads(line)
                kind = ev.get("Event")
                if kind == "SparkListenerJobStart":
                    t = ev.get("Submission Time", 0) / 1000
                    if not t_from <= t <= t_to:
                        continue
                    grp = (ev.get("Properties") or {}).get("spark.jobGroup.id") or "other"
                    grp = grp.removeprefix("mqctl-lag:")
                    job_group[ev["Job ID"]] = grp
                    for sid in ev.get("Stage IDs", []):
                        stage_job[sid] = ev["Job ID"]
                    out.setdefault(grp, {"jobs": 0, "stages": 0, "tasks": 0, "run_s": 0.0})
                    out[grp]["jobs"] += 1
                elif kind == "SparkListenerStageCompleted":
                    info = ev["Stage Info"]
                    job = stage_job.get(info["Stage ID"])
                    if job is None:
                        continue
                    s = out[job_group[job]]
                    s["stages"] += 1
                    s["tasks"] += info.get("Number of Tasks", 0)
                    for acc in info.get("Accumulables", []):
                        if acc.get("Name") == "internal.metrics.executorRunTime":
                            s["run_s"] += float(acc.get("Value", 0)) / 1000
    return out


def print_stages(timings: dict[str, float], ev: dict[str, dict[str, float]]) -> None:
    print(f"    {'stage':28s} {'wall s':>8s} {'jobs':>5s} {'stages':>6s} {'tasks':>6s} "
          f"{'exec s':>7s}")
    for name, sec in timings.items():
        e = ev.get(name, {})
        print(f"    {name:28s} {sec:8.2f} {int(e.get('jobs', 0)):5d} "
              f"{int(e.get('stages', 0)):6d} {int(e.get('tasks', 0)):6d} "
              f"{e.get('run_s', 0.0):7.2f}")
    rest = {k: v for k, v in ev.items() if k not in timings and k != "reference"}
    for name, e in rest.items():
        print(f"    {name:28s} {'':8s} {int(e['jobs']):5d} {int(e['stages']):6d} "
              f"{int(e['tasks']):6d} {e['run_s']:7.2f}")


def peak_resident_gb(pid: int) -> str:
    """The driver JVM's peak resident memory so far (Linux ``/proc/PID/status`` VmHWM: the
    high-water mark since it started; the sizes run smallest first, so after a size's
    report it is that report's peak unless an earlier one was larger)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GB"
    except OSError:
        pass
    return "-"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="/tmp/mqctl-bench-lag")
    p.add_argument("--sizes", default="1m,10m")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--rerun", type=int, default=10,
                   help="new captures for the incremental re-run (0: skip it)")
    p.add_argument("--no-duckdb", action="store_true")
    p.add_argument("--stages", action="store_true", help="print the per-stage table")
    a = p.parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("SPARK_LOCAL_HOSTNAME", "localhost")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = Path(a.data)
    root.mkdir(parents=True, exist_ok=True)
    sizes = [s.strip().lower() for s in a.sizes.split(",") if s.strip()]
    engines = ["kernel"]  # (the report's one engine; the results are keyed size/engine)
    print(f"mqctl lag report scale bench: {a.master}, driver memory {a.driver_memory}, "
          f"{os.cpu_count()} cores (ratios are against references run in this same process)",
          flush=True)
    data = {s: dataset(root, s) for s in ["10k", *sizes]}
    grown = {s: dataset(root, s, a.rerun) for s in sizes} if a.rerun else {}

    from spark_common import bench_session

    from mqctl.lagjob import run_report

    ev_dir = root / "eventlog"
    if ev_dir.exists():
        shutil.rmtree(ev_dir)
    ev_dir.mkdir()
    spark = bench_session("mqctl-lag-scale", a.master, a.driver_memory, conf={
        "spark.eventLog.enabled": "true", "spark.eventLog.dir": ev_dir.as_uri(),
        "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"})
    jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    results: dict[str, tuple[int, float]] = {}
    spans: dict[str, tuple[float, float, dict[str, float]]] = {}
    reruns: dict[str, float] = {}
    summary: list[str] = []
    try:
        for size in ["10k", *sizes]:
            src, rows = data[size]
            # the report reads a hard-linked copy, so that the re-run sees the same files (same
            # paths, sizes and times) plus the new captures: what a cron job sees
            path = root / f"live-{size}"
            if path.exists():
                shutil.rmtree(path)
            shutil.copytree(src, path, copy_function=os.link)
            ref_spark: float | None = None
            ref_duck: float | None = None
            for engine in engines:
                key = f"{size}/{engine}"
                out = root / f"out-{size}-{engine}"
                if out.exists():
                    shutil.rmtree(out)
                w0 = time.time()
                t0 = time.perf_counter()
                res = run_report([str(path)], str(out), spark=spark, tz="UTC")
                dt = time.perf_counter() - t0
                spans[key] = (w0, time.time(), res.timings)
                results[key] = (rows, dt)
                label = "warm-up" if size == "10k" else "report"
                print(f"  {label:8s} {size:>5s} {engine:10s}: {rows:>11,} rows  {dt:7.1f} s  "
                      f"{rows / dt:>10,.0f} rows/s  (lag rows {res.counts['lag_rows']:,}, "
                      f"events {res.counts['rebalance_events']:,}, storms "
                      f"{res.counts['storms']}, quarantined {res.quarantined}); JVM peak "
                      f"resident so far {peak_resident_gb(jvm)}", flush=True)
                if size == "10k":
                    continue
                if ref_spark is None:  # (once per size: the references read the same files)
                    ref_spark = spark_reference(spark, path, root / f"ref-spark-{size}")
                    ref_duck = (None if a.no_duckdb else
                                duckdb_reference(path, root / f"ref-{size}.parquet"))
                line = (f"  {size} {engine}: report {dt:.1f} s; spark read+aggregate "
                        f"{ref_spark:.1f} s (x{dt / ref_spark:.2f})")
                if ref_duck is not None:
                    line += f"; duckdb {ref_duck:.1f} s (x{dt / ref_duck:.2f})"
                print(line, flush=True)
                summary.append(line)
            if a.rerun and size != "10k":
                gsrc, _ = grown[size]
                for f in sorted(gsrc.rglob("*.jsonl")):  # the N new captures join the input
                    dst = path / f.relative_to(gsrc)
                    if not dst.exists():
                        dst.parent.mkdir(parents=True, exist_ok=True)
                        os.link(f, dst)
                ref2_spark = spark_reference(spark, path, root / f"ref-spark-{size}-plus")
                ref2_duck = (None if a.no_duckdb else
                             duckdb_reference(path, root / f"ref-{size}-plus.parquet"))
                for engine in engines:
                    # the state of the first run is kept under its out directory; the re-run
                    # parses the new files (a bounded re-run)
                    key = f"{size}/{engine}"
                    t0 = time.perf_counter()
                    res2 = run_report([str(path)], str(root / f"out-{size}-{engine}"),
                                      spark=spark, tz="UTC")
                    dt2 = time.perf_counter() - t0
                    line = (f"  {size} {engine} + {a.rerun} captures, re-run: report "
                            f"{dt2:.1f} s; spark read+aggregate {ref2_spark:.1f} s "
                            f"(x{dt2 / ref2_spark:.2f})")
                    if ref2_duck is not None:
                        line += f"; duckdb {ref2_duck:.1f} s (x{dt2 / ref2_duck:.2f})"
                    print(line + f"  (lag rows {res2.counts['lag_rows']:,}; JVM peak resident "
                          f"so far {peak_resident_gb(jvm)})", flush=True)
                    summary.append(line)
                    reruns[key] = dt2
                    if a.stages:
                        print("    re-run stages:")
                        print_stages(res2.timings, {})
    finally:
        spark.stop()
    if a.stages:
        for size in [f"{s}/{e}" for s in sizes for e in engines]:
            if size in spans:
                w0, w1, timings = spans[size]
                print(f"  stages, {size} (wall s from the job's timer; jobs/tasks/executor s "
                      "from the event log):")
                print_stages(timings, event_log_stats(ev_dir, w0, w1))
    for e in engines:
        measured = [f"{s}/{e}" for s in sizes if f"{s}/{e}" in results]
        for small, big in itertools.pairwise(measured):
            (r1, t1), (r2, t2) = results[small], results[big]
            print(f"growth {small} -> {big}: rows x{r2 / r1:.1f}, time x{t2 / t1:.2f}, "
                  f"throughput x{(r2 / t2) / (r1 / t1):.2f}")
        for small, big in itertools.pairwise([f"{s}/{e}" for s in sizes if f"{s}/{e}" in reruns]):
            print(f"re-run growth {small} -> {big}: time x{reruns[big] / reruns[small]:.2f}")
    print("summary:\n" + "\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())

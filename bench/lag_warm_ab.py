"""Two variants of the small lag report, warm and interleaved in ONE session: a change measured
without the machine's drift between processes.

On this 2-core machine the same warm report varies by 10-20% between processes (and between
hours); a change worth 5% shows only when both variants run in the same JVM, alternately.
This runs ``run_report`` over the demo's data once to warm the JVM, then ``--rounds`` rounds
of the baseline and the candidate (the order alternates each round; every run writes a fresh
output directory, so none reuses another's state), and prints each run, the medians, the
ratio candidate / baseline and the Py4J commands of each variant's last run by kind.

    python bench/lag_warm_ab.py --lookups [--rounds 4] [--data DIR]
    python bench/lag_warm_ab.py --conf spark.sql.shuffle.partitions=2
    python bench/lag_warm_ab.py --reasons [--data DIR]
    python bench/lag_warm_ab.py --collects [--data DIR]
    python bench/lag_warm_ab.py --page [--data DIR]
    python bench/lag_warm_ab.py --persist [--data DIR]

* ``--lookups``: the baseline makes PySpark's Java look-ups as PySpark does (a ``JVMView``
  that keeps nothing); the candidate keeps them (:mod:`mqctl.lagjob.lookups`, as every report
  now runs).
* ``--reasons``: the baseline works out every bad line's reason on the first read of the
  snapshot files too (``check_snapshot_records`` with its reasons everywhere, as before the
  twentieth pass); the candidate only flags them there, as every report now runs. Both must
  give the same counts, summary, group rows and quarantine (exit 1 if not).
* ``--collects``: the baseline makes the report's closing collects one job each (the summary
  rows, the group rows, the quarantine's reasons, the page's first collect; the per-broker
  rows' first capture and their keys by a broadcast join), checks two cuts for rows with
  a job of its own and dates the quarantine's lines by a broadcast join, as before the
  twenty-first pass; the candidate as every report now runs.
  Both must give the same results (exit 1 if not).
* ``--page``: the baseline makes the page's second collect (the charted queues' lines, the
  owner changes, the marks, the overview) a job of its own after the summary collect, as
  before the twenty-fourth pass; the candidate makes it in the summary collect when every
  group is charted, as every report now runs. Both must give the same results and the same
  page (exit 1 if not).
* ``--persist``: the candidate makes each of the report's cuts (``Runner.cut``: a
  ``localCheckpoint``) a lazy ``persist`` instead, computed by the first action that reads
  it (the cuts that count rows stay checkpoints: their count is read at once); the baseline
  as every report now runs. The alternative ("no checkpoint whose
  only purpose is to cut a long plan"); not taken (docs/lag-performance.md, twenty-fourth
  pass). Both must give the same results (exit 1 if not).
* ``--conf K=V`` (repeatable): the candidate runs with these session settings, the baseline
  without (both after the report's own settings: a setting the report sizes is overridden).

``--data DIR``: ``DIR/snapshots`` and, when there is one, ``DIR/logs`` (a test-sized input:
``python bench/gen_exports.py DIR/snapshots --groups 7 --topics 2 --queues 3 --captures 5``,
210 rows). Without --data, the demo's timeline (3 simulated hours, a snapshot every 2 minutes, as
bench/lag_small.py) is captured once into a temporary directory first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import demo_data


def next_job(spark: Any) -> int:
    """The id the driver gives its next Spark job (the DAG scheduler's counter): the jobs a run
    started are the difference (-1 where the counter cannot be read)."""
    try:
        n = spark.sparkContext._jsc.sc().dagScheduler().nextJobId()  # (an AtomicInteger:
        return int(n if isinstance(n, int) else n.get())  # Py4J may give its value)
    except Exception:
        return -1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="a directory with snapshots/ and, optionally, logs/ "
                    "(mqctl demo --out; bench/gen_exports.py DIR/snapshots)")
    ap.add_argument("--rounds", type=int, default=4)
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--lookups", action="store_true",
                      help="baseline: PySpark's look-ups as PySpark makes them")
    what.add_argument("--reasons", action="store_true",
                      help="baseline: the first read of the snapshots names every reason")
    what.add_argument("--collects", action="store_true",
                      help="baseline: the closing collects and two checks one job each")
    what.add_argument("--page", action="store_true",
                      help="baseline: the page's second collect a job of its own")
    what.add_argument("--persist", action="store_true",
                      help="candidate: every cut a lazy persist, not a checkpoint")
    what.add_argument("--conf", action="append", metavar="K=V",
                      help="the candidate's session settings")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    confs = dict(kv.split("=", 1) for kv in args.conf or [])
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import py4j.java_gateway as jg
    from pyspark import SparkContext

    from mqctl.lagjob import lookups
    from mqctl.lagjob import stages as ST
    from mqctl.lagjob import summaries as SU
    from mqctl.lagjob import transforms as X
    from mqctl.lagjob.job import run_report
    from mqctl.lagjob.run import Run
    from mqctl.lagjob.session import driver_java_options, driver_memory, spark_session
    from mqctl.lagjob.transforms import snapshot as snapshot_checks

    sent: Counter[str] = Counter()
    orig_send = jg.GatewayClient.send_command

    def send_command(self: Any, command: str, *a: Any, **k: Any) -> Any:
        parts = command.split("\n", 2)
        sent[" ".join(parts[:2]) if parts[0] in ("r", "m") else parts[0]] += 1
        return orig_send(self, command, *a, **k)

    jg.GatewayClient.send_command = send_command  # type: ignore[method-assign]
    real_install = lookups.install
    kept: list[Any] = [None]

    checks = snapshot_checks.check_snapshot_records

    def every_reason(parsed: Any, run_ms: Any = None, *, reasons: bool = True) -> Any:
        return checks(parsed, run_ms)

    one_job, counted, per_broker = SU.summary_rows, Run.cut_counting, X.latest_per_broker
    literal_files = ST.LITERAL_FILES

    def rows_apart(rep: Any, more: dict[str, Any], limit: int, said: Any) -> Any:
        return ([said(r.asDict()) for r in rep.latest.orderBy(*SU._latest_order())
                 .limit(limit).collect()],
                [said(r.asDict()) for r in rep.groups.orderBy(*SU._groups_order())
                 .limit(limit).collect()],
                {k: df.collect() for k, df in more.items()})

    def checked_apart(self: Any, df: Any, name: str, where: Any, *,
                      keep_partitioning: bool = False) -> Any:
        out = self.cut(df, name, keep_partitioning=keep_partitioning)
        with self.stage(name):
            return out, int(not out.filter(where).isEmpty())

    def joined(lag: Any, latest: Any, rows: Any = None) -> Any:
        return per_broker(lag, latest)

    def page_apart(rep: Any, more: dict[str, Any], limit: int, said: Any) -> Any:
        return one_job(rep, {k: v for k, v in more.items() if k != "p"}, limit, said)

    checkpoint = Run.cut

    def persisted(self: Any, df: Any, name: str, *, keep_partitioning: bool = False) -> Any:
        with self.stage(name):
            return self.keep(df)

    def counting_checkpoint(self: Any, df: Any, name: str, where: Any, *,
                            keep_partitioning: bool = False) -> Any:
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        seen = Observation(f"mqctl-{name}")
        out = checkpoint(self, df.observe(seen, F.count(F.when(where, F.lit(1))).alias("n")),
                         name, keep_partitioning=keep_partitioning)
        return out, int(seen.get["n"])

    @contextmanager
    def variant(candidate: bool, spark: Any) -> Any:
        if args.page or args.persist:
            if args.page and not candidate:
                SU.summary_rows = page_apart  # type: ignore[method-assign]
            if args.persist and candidate:
                Run.cut = persisted  # type: ignore[method-assign]
                Run.cut_counting = counting_checkpoint  # type: ignore[method-assign]
            try:
                yield
            finally:
                SU.summary_rows = one_job  # type: ignore[method-assign]
                Run.cut = checkpoint  # type: ignore[method-assign]
                Run.cut_counting = counted  # type: ignore[method-assign]
            return
        if args.collects:
            if not candidate:
                ST.LITERAL_FILES = 0  # (the quarantine's broadcast join, its job)
                SU.summary_rows = rows_apart  # type: ignore[method-assign]
                Run.cut_counting = checked_apart  # type: ignore[method-assign]
                X.latest_per_broker = joined  # type: ignore[assignment]
            try:
                yield
            finally:
                ST.LITERAL_FILES = literal_files
                SU.summary_rows = one_job  # type: ignore[method-assign]
                Run.cut_counting = counted  # type: ignore[method-assign]
                X.latest_per_broker = per_broker  # type: ignore[assignment]
            return
        if args.reasons:
            X.check_snapshot_records = checks if candidate else every_reason  # type: ignore
            try:
                yield
            finally:
                X.check_snapshot_records = checks  # type: ignore[assignment]
            return
        if args.lookups:
            view = SparkContext._jvm
            if isinstance(view, lookups.CachedView):
                kept[0] = view
            plain = view._mqctl_of if isinstance(view, lookups.CachedView) else view
            if not candidate:  # PySpark's own view, and no report installs ours
                SparkContext._jvm = spark._jvm = plain
                lookups.install = lambda _spark: None  # type: ignore[assignment]
            elif kept[0] is not None:  # what the earlier runs kept, as in one process
                SparkContext._jvm = spark._jvm = kept[0]
            try:
                yield
            finally:
                lookups.install = real_install  # type: ignore[assignment]
            return
        before = {k: spark.conf.get(k, None) for k in confs}
        if candidate:
            for k, v in confs.items():
                spark.conf.set(k, v)
        try:
            yield
        finally:
            for k, v in before.items():
                if v is None:
                    spark.conf.unset(k)
                else:
                    spark.conf.set(k, v)

    with tempfile.TemporaryDirectory(prefix="mqctl-bench-ab-") as tmp:
        data = demo_data(args.data, tmp)
        snaps, logs = data / "snapshots", data / "logs"
        size = sum(f.stat().st_size for d in (snaps, logs) for f in d.rglob("*") if f.is_file())
        conf = {"spark.ui.enabled": "false", "spark.driver.memory": driver_memory(size)}
        inputs = [f"snapshot={snaps}"] + ([str(logs)] if logs.is_dir() else [])
        times: dict[bool, list[float]] = {False: [], True: []}
        results: dict[bool, set[str]] = {False: set(), True: set()}
        commands: dict[bool, Counter[str]] = {}
        with spark_session("local[*]", conf=conf, java_opts=driver_java_options(size)) as h:
            spark, n = h.spark, 0
            if confs:  # the report sets its sized settings per run: apply after them
                from mqctl.lagjob import session as S

                sized = S.sized_settings

                def sized_then_ours(*a: Any, **k: Any) -> dict[str, str]:
                    out = sized(*a, **k)
                    return {k2: v for k2, v in out.items() if k2 not in confs}

                S.sized_settings = sized_then_ours  # type: ignore[assignment]
            t = time.perf_counter()
            run_report(inputs, str(Path(tmp, "warm")), spark=spark)
            print(f"warm-up run: {time.perf_counter() - t:.1f} s")
            for r in range(args.rounds):
                for candidate in ((False, True) if r % 2 == 0 else (True, False)):
                    n += 1
                    with variant(candidate, spark):
                        j0 = next_job(spark)
                        sent.clear()
                        t = time.perf_counter()
                        res = run_report(inputs, str(Path(tmp, f"r{n}")), spark=spark)
                        dt = time.perf_counter() - t
                        n_jobs = next_job(spark) - j0
                    page = (re.sub(r"generated [^;<]*", "", Path(
                        tmp, f"r{n}", "report.html").read_text(encoding="utf-8"))
                        if args.page else None)
                    results[candidate].add(json.dumps(
                        [res.counts, res.summary, res.groups, res.quarantine, page],
                        sort_keys=True, default=str))
                    times[candidate].append(dt)
                    commands[candidate] = Counter(sent)
                    print(f"round {r + 1}: {'candidate' if candidate else 'baseline '} "
                          f"{dt:6.2f} s  ({sum(sent.values())} Py4J commands, {n_jobs} Spark "
                          "jobs)")
        base, cand = statistics.median(times[False]), statistics.median(times[True])
        label = ("PySpark's look-ups kept once per name" if args.lookups else
                 "bad lines only flagged on the first read" if args.reasons else
                 "the closing collects in one job" if args.collects else
                 "the page's second collect in the summary collect" if args.page else
                 "every cut a lazy persist" if args.persist else
                 " ".join(f"{k}={v}" for k, v in confs.items()))
        print(f"\ncandidate: {label}")
        print(f"baseline median {base:.2f} s, candidate median {cand:.2f} s: "
              f"x{cand / base:.3f}")
        kinds = sorted(set(commands[False]) | set(commands[True]),
                       key=lambda k: -commands[False][k])
        print("Py4J commands of the last run, by kind: baseline / candidate")
        for k in kinds:
            print(f"  {k:6} {commands[False][k]:7d} {commands[True][k]:7d}")
        if (args.reasons or args.collects or args.page or args.persist
                ) and len(results[False] | results[True]) != 1:
            print("the two variants' results differ", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

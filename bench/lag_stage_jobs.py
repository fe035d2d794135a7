"""Spark jobs and Py4J calls per stage of a small lag report: the demo's data, a warm run.

Small inputs cost little more than the session: a tiny report pays for
every Spark job (0.1-0.5 s each) and every Py4J call (each builds or reads a Java object).
This runs ``run_report`` twice in one session (the first one warms the JVM; both go to
fresh output directories, so neither reuses the other's state) and prints, for the second:

  * the Spark jobs of each stage (job group ``mqctl-lag:<stage>``: ``Run.stage``), from the
    status tracker;
  * the Py4J calls made while each function of ``mqctl/lagjob/stages.py`` (else of the run's
    own modules: ``run.py``, ``reading.py``, ``outputs.py``, ``summaries.py``, ``derived.py``)
    was on the stack, innermost first (py4j's
    ``GatewayClient.send_command`` counted): where the expressions are built;
  * the wall seconds of the run and the CPU seconds of Python and of its JVM.

    python bench/lag_stage_jobs.py [--data DIR] [--stages logs,unowned,...]

Without --data, the demo's timeline (3 simulated hours, a snapshot every 2 minutes, as
bench/lag_small.py) is captured once into a temporary directory first.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import demo_data

REBALANCE = ("logs", "owner track", "unowned", "unowned from logs", "unowned from captures",
             "resets", "log changes", "captured changes", "change hits", "changes", "events",
             "moves", "rounds", "storms", "locks")


def _stage_of_frame(stages_file: str, run_files: dict[str, str]) -> str:
    f = sys._getframe(2)
    run_name = None
    while f is not None:
        fn = f.f_code.co_filename
        if fn == stages_file:
            return "stages." + f.f_code.co_name
        if run_name is None and fn in run_files:
            run_name = run_files[fn] + "." + f.f_code.co_name
        f = f.f_back
    return run_name or "other"


def process_cpu_s(pid: int) -> float:
    """A process's user + system CPU seconds (Linux ``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="a directory with snapshots/ and logs/ (mqctl demo --out)")
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import py4j.java_gateway as jg

    from mqctl.lagjob import derived, outputs, reading, summaries
    from mqctl.lagjob import run as R
    from mqctl.lagjob import stages as S
    from mqctl.lagjob.job import run_report
    from mqctl.lagjob.session import driver_java_options, driver_memory, spark_session

    calls: Counter[str] = Counter()
    waited: Counter[str] = Counter()
    counting = [False]
    orig = jg.GatewayClient.send_command
    stages_file = S.__file__
    run_files = {m.__file__: m.__name__.rsplit(".", 1)[1]
                 for m in (R, reading, outputs, summaries, derived)}

    def send_command(self, *a, **k):  # type: ignore[no-untyped-def]
        if not counting[0]:
            return orig(self, *a, **k)
        where = _stage_of_frame(stages_file, run_files)
        calls[where] += 1
        t = time.perf_counter()
        try:
            return orig(self, *a, **k)
        finally:
            waited[where] += time.perf_counter() - t

    jg.GatewayClient.send_command = send_command  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory(prefix="mqctl-bench-stages-") as tmp:
        data = demo_data(args.data, tmp)
        snaps, logs = data / "snapshots", data / "logs"
        size = sum(f.stat().st_size for d in (snaps, logs) for f in d.rglob("*") if f.is_file())
        conf = {"spark.ui.enabled": "false", "spark.driver.memory": driver_memory(size)}
        with spark_session("local[*]", conf=conf, java_opts=driver_java_options(size)) as h:
            spark = h.spark
            inputs = [f"snapshot={snaps}", str(logs)]
            warm = run_report(inputs, str(Path(tmp, "warm")), spark=spark)
            tracker = spark.sparkContext.statusTracker()
            names = set(warm.timings) | set(REBALANCE) | {"other"}

            def jobs() -> dict[str, set[int]]:
                return {g: set(tracker.getJobIdsForGroup(f"mqctl-lag:{g}")) for g in names}

            before = jobs()
            jvm = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
            counting[0] = True
            t0, c0, j0 = time.perf_counter(), time.process_time(), process_cpu_s(jvm)
            res = run_report(inputs, str(Path(tmp, "measured")), spark=spark)
            wall, cpu, jcpu = (time.perf_counter() - t0, time.process_time() - c0,
                               process_cpu_s(jvm) - j0)
            counting[0] = False
            names |= set(res.timings)
            after = jobs()
            per = Counter({g: len(after[g] - before.get(g, set())) for g in names})
    total = sum(per.values())
    print(f"\nrun: {wall:.1f} s wall, {cpu:.1f} s Python CPU, {jcpu:.1f} s JVM CPU, "
          f"{total} Spark jobs, {sum(calls.values())} Py4J calls")
    print("\nSpark jobs and wall seconds per stage (job group mqctl-lag:<stage>; "
          "ReportResult.timings)")
    for name, n in per.most_common():
        if n or name in res.timings:
            mark = "  (rebalance)" if name in REBALANCE else ""
            secs = res.timings.get(name)
            shown = f"{secs:6.2f} s" if secs is not None else "       -"
            print(f"  {name:24s} {n:4d} {shown}{mark}")
    print(f"  rebalance stages total   {sum(per[n] for n in REBALANCE):4d}")
    print("\nPy4J calls and the wall seconds spent in them (a Spark job's wait included) per "
          "function on the stack (innermost stages.py, else job.py)")
    for name, n in calls.most_common():
        print(f"  {name:32s} {n:6d} {waited[name]:7.2f} s")
    print(f"  {'total':32s} {sum(calls.values()):6d} {sum(waited.values()):7.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

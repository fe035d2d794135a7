"""A small input's own settings against a larger input's, for the same small report, warm and
interleaved in ONE session: the wall time and the CPU time (the JVM's and Python's) of each.

Below ``session.ONE_TASK_INPUT_BYTES`` a run gets one shuffle partition and no adaptive
execution (``session.sized_settings``). This generates snapshot captures of the size asked
(bench/gen_exports.py, fixed seed), warms the JVM with one report, then runs ``--rounds``
rounds of the baseline (the settings an input at the bound gets: four shuffle partitions on
two cores, adaptive execution) and the candidate (the input's own settings), the order
alternating each round, each into a fresh output directory, and prints each run, the medians
and the ratios candidate / baseline. Both variants must give the same counts, summary and
group rows; a difference is printed and exits 1.

    python bench/lag_tiny_ab.py [--shape 7,2,3,5] [--rounds 5] [--below]

``--shape G,T,Q,C``: groups, topics, queues per topic, captures (about 650 bytes a row):
``10,5,8,8`` is 3,200 rows (2 MB), ``20,5,8,8`` 6,400 (4.2 MB), ``20,5,8,15`` 12,000 (7.8 MB).
``--below``: the candidate gets the settings of an input just below the bound whatever the
input's size (what the bound keeps from larger inputs). CPU is read from ``/proc`` (Linux).
docs/lag-performance.md ("Nineteenth pass") has the measured table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gen_exports import generate
from lag_stage_jobs import process_cpu_s


def _py_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="7,2,3,5", help="groups,topics,queues,captures")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--below", action="store_true",
                    help="the candidate: the settings of an input just below the bound")
    args = ap.parse_args(argv)
    try:
        groups, topics, queues, captures = (int(x) for x in args.shape.split(","))
    except ValueError:
        ap.error("--shape is four integers: groups,topics,queues,captures")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from mqctl.lagjob import session as S
    from mqctl.lagjob.job import run_report

    sized = S.sized_settings
    baseline = [False]

    def settings(input_bytes: int, parallelism: int, local: bool) -> dict[str, str]:
        # the baseline: what an input at the bound gets (every other setting is the same)
        if baseline[0]:
            input_bytes = max(input_bytes, S.ONE_TASK_INPUT_BYTES)
        elif args.below:
            input_bytes = min(input_bytes, S.ONE_TASK_INPUT_BYTES - 1)
        return sized(input_bytes, parallelism, local)

    S.sized_settings = settings  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="mqctl-bench-tiny-") as tmp:
        snaps = Path(tmp, "snapshots")
        st = generate(snaps, groups, topics, queues, captures)
        size = sum(f.stat().st_size for f in snaps.rglob("*") if f.is_file())
        print(f"{st.rows} snapshot rows in {st.files} captures, {size / 2**20:.2f} MB "
              f"(the bound: {S.ONE_TASK_INPUT_BYTES / 2**20:.0f} MB)")
        conf = {"spark.ui.enabled": "false", "spark.driver.memory": S.driver_memory(size)}
        inputs = [f"snapshot={snaps}"]
        res: dict[bool, dict[str, list[float]]] = {
            v: {"wall": [], "cpu": []} for v in (False, True)}
        ref: str | None = None
        differ = False
        with S.spark_session("local[*]", conf=conf,
                             java_opts=S.driver_java_options(size)) as h:
            spark = h.spark
            pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
            t = time.perf_counter()
            run_report(inputs, str(Path(tmp, "warm")), spark=spark, incremental=False)
            print(f"warm-up run: {time.perf_counter() - t:.1f} s")
            n = 0
            for r in range(args.rounds):
                for candidate in ((False, True) if r % 2 == 0 else (True, False)):
                    n += 1
                    baseline[0] = not candidate
                    c0, p0, t0 = process_cpu_s(pid), _py_cpu(), time.perf_counter()
                    out: Any = run_report(inputs, str(Path(tmp, f"r{n}")), spark=spark,
                                          incremental=False)
                    wall = time.perf_counter() - t0
                    cpu = process_cpu_s(pid) - c0 + _py_cpu() - p0
                    res[candidate]["wall"].append(wall)
                    res[candidate]["cpu"].append(cpu)
                    key = json.dumps([out.counts, out.summary, out.groups], sort_keys=True,
                                     default=str)
                    ref = ref or key
                    same = key == ref
                    differ = differ or not same
                    print(f"round {r + 1}: {'candidate' if candidate else 'baseline '} "
                          f"{wall:6.2f} s, CPU {cpu:6.2f} s{'' if same else '  DIFFERENT'}")
    med = {v: {k: statistics.median(x) for k, x in d.items()} for v, d in res.items()}
    print(f"\nbaseline (the settings at {S.ONE_TASK_INPUT_BYTES / 2**20:.0f} MB): "
          f"wall {med[False]['wall']:.2f} s, CPU {med[False]['cpu']:.2f} s (medians)")
    whose = "an input just below the bound" if args.below else "this input"
    print(f"candidate ({whose}'s settings): wall {med[True]['wall']:.2f} s, "
          f"CPU {med[True]['cpu']:.2f} s")
    print(f"candidate / baseline: wall x{med[True]['wall'] / med[False]['wall']:.2f}, "
          f"CPU x{med[True]['cpu'] / med[False]['cpu']:.2f}")
    if differ:
        print("the variants' counts, summary or group rows differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A bounded re-run of `mqctl lag report` as cron runs it: a fresh process (a fresh JVM) each time.

`bench/lag_scale.py` times the bounded re-run warm, in the session that made the first run; a
cron job starts a new JVM for every run, which compiles Spark's code again. This measures that,
through the CLI, over the bench's 1M-row history (bench/gen_exports.py, seed 7, as
lag_scale.py) and its N new captures:

  1. one first run over the history, untimed for the comparison (it also writes the JVM's
     class archive into the bench's own cache directory, as a user's first run does);
  2. the re-run after the new captures, from a copy of that first run's output and state each
     time, interleaved (the order reversed every other round), N rounds each:
       * ours: as mqctl runs it (a likely bounded re-run sizes the JVM's compilers by the
         files it parses: mqctl/lagjob/job.py ``_work_bytes``);
       * whole: the same command with the JVM options of the whole input's size (the large
         input's options, forced by giving them as ``spark.driver.extraJavaOptions``);
       * floor: a fresh process that starts a session with the same settings and runs
         lag_scale.py's Spark reference (a schema'd read of every file, history and new
         captures, and one aggregate written as Parquet);

and prints each time, the medians and the ratios ours / floor and ours / whole.

    python bench/lag_cron.py [--data /tmp/mqctl-bench-lag] [--size 1m] [--new 10] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lag_scale import dataset

# the floor, as a process of its own: Spark's start with the report's settings, then the
# reference query over the same files (argv: bench dir, input, output)
FLOOR = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from pyspark.sql import SparkSession
from mqctl.lagjob.session import JVM_OPTS, default_conf
from lag_scale import spark_reference
b = SparkSession.builder
for k, v in default_conf("local[2]").items():
    b = b.config(k, v)
spark = (b.master("local[2]").config("spark.driver.memory", "6g")
         .config("spark.driver.extraJavaOptions", JVM_OPTS)
         .config("spark.ui.enabled", "false").getOrCreate())
spark_reference(spark, Path(sys.argv[2]), Path(sys.argv[3]))
spark.stop()
"""


def floor(inp: Path, out: Path, env: dict[str, str]) -> float:
    """The floor's wall time (:data:`FLOOR`), start to exit, as the report's."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR, str(Path(__file__).resolve().parent),
                    str(inp), str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   check=True, env=env)
    return time.perf_counter() - t


def report(inp: Path, out: Path, env: dict[str, str], *extra: str,
           bounded: bool = False) -> float:
    """The command's wall time; ``bounded``: it must have been a bounded re-run (its
    progress says so), else the comparison would time something else."""
    cmd = [sys.executable, "-m", "mqctl", "lag", "report", str(inp), "--out", str(out),
           "-o", "plain", *extra]
    t = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=True, env=env)
    took = time.perf_counter() - t
    if bounded and "lag report: a bounded re-run:" not in done.stderr:
        raise SystemExit("lag_cron: the re-run was not a bounded one:\n" + done.stderr[-2000:])
    return took


def main(argv: list[str] | None = None) -> int:
    from mqctl.lagjob.session import JVM_OPTS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="/tmp/mqctl-bench-lag")
    p.add_argument("--size", default="1m")
    p.add_argument("--new", type=int, default=10, help="new captures after the history")
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args(argv)
    root = Path(a.data)
    hist, _ = dataset(root, a.size)
    grown, _ = dataset(root, a.size, a.new)
    work = Path(tempfile.mkdtemp(prefix="mqctl-bench-cron-"))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "XDG_CACHE_HOME": str(work / "cache")}
    env.pop("MQCTL_CLASS_ARCHIVE", None)
    try:
        inp = work / "in"
        # the history's files as they are (hard links: the same size and modification time,
        # which the state's manifest records), then the new captures' beside them
        shutil.copytree(hist, inp, copy_function=os.link,
                        ignore=shutil.ignore_patterns(".generated.json"))
        have = {f.relative_to(inp) for f in inp.rglob("*.jsonl")}
        new = [f for f in grown.rglob("*.jsonl") if f.relative_to(grown) not in have]
        print(f"first run over {a.size} ({len(have)} capture files) ...", flush=True)
        out = work / "out"  # (the state's manifest names its --out: every run uses this one)
        first = report(inp, out, env)
        print(f"  {first:.1f} s (with writing the JVM's class archive)", flush=True)
        shutil.copytree(out, work / "base", symlinks=True)
        for f in new:
            os.link(f, inp / f.relative_to(grown))
        times: dict[str, list[float]] = {"ours": [], "whole": [], "floor": []}
        extra = {"ours": [], "whole": ["--conf", f"spark.driver.extraJavaOptions={JVM_OPTS}"]}
        for r in range(a.rounds):
            for name in (("ours", "whole", "floor") if r % 2 == 0
                         else ("floor", "whole", "ours")):
                if name == "floor":
                    shutil.rmtree(work / "ref", ignore_errors=True)
                    times[name].append(floor(inp, work / "ref", env))
                    print(f"  round {r + 1} {name}: {times[name][-1]:.1f} s", flush=True)
                    continue
                shutil.rmtree(out, ignore_errors=True)
                shutil.copytree(work / "base", out, symlinks=True)
                times[name].append(report(inp, out, env, *extra[name], bounded=True))
                print(f"  round {r + 1} {name}: {times[name][-1]:.1f} s", flush=True)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"bounded re-run after {len(new)} new captures, a fresh process each:")
        for k, v in times.items():
            print(f"  {k:5s} median {med[k]:.1f} s ({', '.join(f'{x:.1f}' for x in v)})")
        print(f"  ours / floor: x{med['ours'] / med['floor']:.2f}; "
              f"ours / whole: x{med['ours'] / med['whole']:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

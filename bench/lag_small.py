"""A small lag report end to end: the demo's data through `mqctl lag report`, as a user runs it.

Small inputs fast: a tiny report should cost little more than Spark's own
start. Runs, interleaved, N times each, every one a fresh process (so a fresh JVM):
  * floor: the session mqctl starts for this input (same JVM options) and one trivial job;
  * ours: `mqctl lag report` over the demo's snapshots and logs (the JVM options mqctl picks
    for the input's size: the quick compiler and the serial collector below 128 MB);
  * before: the same command with the settings mqctl uses for large inputs (what every run
    used before): the JVM options, forced by giving any `spark.driver.extraJavaOptions`, and
    whole-stage code generation on;
  * floor and ours again without the JVM's class archive (`MQCTL_CLASS_ARCHIVE=off`:
    mqctl/lagjob/classcache.py); the others map the archive that one untimed run of ours
    writes first, in a temporary directory;
and prints the medians and the ratios ours / floor, ours / before and the class archive's
share.

    python bench/lag_small.py [--rounds 3] [--data DIR]

Without --data, the demo's timeline (3 simulated hours, a snapshot every 2 minutes) is
captured once into a temporary directory first (the simulated cluster; no Spark).
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

from sim_common import demo_data

FLOOR = '''
import sys
from mqctl.lagjob.session import driver_java_options, driver_memory, spark_session
size = int(sys.argv[1])
conf = {"spark.ui.enabled": "false", "spark.driver.memory": driver_memory(size)}
with spark_session("local[*]", conf=conf, java_opts=driver_java_options(size)) as h:
    h.spark.range(1000).selectExpr("sum(id)").collect()
'''


def input_bytes(*dirs: Path) -> int:
    return sum(f.stat().st_size for d in dirs for f in d.rglob("*") if f.is_file())


def timed(cmd: list[str], env: dict[str, str]) -> float:
    time.sleep(3)  # the previous JVM's exit must not share the cores with this run
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=env)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", help="a directory with snapshots/ and logs/ (mqctl demo --out)")
    args = ap.parse_args(argv)
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    with tempfile.TemporaryDirectory(prefix="mqctl-bench-small-") as tmp:
        data = demo_data(args.data, tmp)
        snaps, logs = data / "snapshots", data / "logs"
        size = input_bytes(snaps, logs)
        out = Path(tmp, "report")
        report = [sys.executable, "-m", "mqctl", "-q", "lag", "report", str(snaps), str(logs),
                  "--out", str(out)]
        floor = [sys.executable, "-c", FLOOR, str(size)]
        cmds = {
            "floor": floor,
            "ours": report,
            "before": report + ["--conf", "spark.driver.extraJavaOptions=-Dmqctl.bench=1",
                                "--conf", "spark.sql.codegen.wholeStage=true"],
            "floor-nocds": floor,
            "ours-nocds": report,
        }
        runs: dict[str, list[float]] = {k: [] for k in cmds}
        cds = dict(env, MQCTL_CLASS_ARCHIVE=str(Path(tmp, "jvm")))
        envs = {k: dict(env, MQCTL_CLASS_ARCHIVE="off") if k.endswith("-nocds") else cds
                for k in cmds}
        t_write = timed(report, cds)  # (writes the class archive as its JVM exits)
        print(f"input: {size / 1e6:.1f} MB; the run that wrote the class archive "
              f"{t_write:.1f} s; {args.rounds} round(s), each a fresh process")
        for i in range(args.rounds):
            order = list(cmds) if i % 2 == 0 else list(reversed(cmds))
            for name in order:
                shutil.rmtree(out, ignore_errors=True)
                runs[name].append(timed(cmds[name], envs[name]))
            print("  round", i + 1, " ".join(f"{k} {runs[k][-1]:.1f} s" for k in cmds))
        med = {k: statistics.median(v) for k, v in runs.items()}
        print(f"median: floor (Spark start + one job) {med['floor']:.1f} s; "
              f"mqctl lag report {med['ours']:.1f} s; with the large-input settings "
              f"{med['before']:.1f} s; without the class archive: floor "
              f"{med['floor-nocds']:.1f} s, ours {med['ours-nocds']:.1f} s")
        print(f"ours / floor = x{med['ours'] / med['floor']:.2f}; "
              f"ours / before = x{med['ours'] / med['before']:.2f}; "
              f"ours / ours without the archive = x{med['ours'] / med['ours-nocds']:.2f}; "
              f"ours / floor without the archive (both) = "
              f"x{med['ours-nocds'] / med['floor-nocds']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

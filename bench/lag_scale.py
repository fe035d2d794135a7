"""Scale of `mqctl lag report`: the whole job on 1M and 10M canonical snapshot rows.

    python bench/lag_scale.py [--data /tmp/mqctl-bench-lag] [--sizes 1m,10m] [--master local[2]]

Generates the datasets with bench/gen_exports.py (fixed seed; cached under --data), runs a small
warm-up report first (JVM start and JIT out of the way), then each size in the same
SparkSession, and prints wall time, rows/s and the growth ratio between sizes (time ratio vs row
ratio: 1.0 per 10x would be perfectly linear; below means fixed costs dominate). Not run in CI.
Reference (docs environment notes, a simpler query on Parquet, local[2]): 21.5 s on 1M rows,
20.4 s on 10M, 54 s on 100M.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gen_exports import generate

# groups x topics x queues x captures
SHAPES = {
    "10k": (10, 5, 8, 25),
    "1m": (100, 10, 8, 125),
    "10m": (1000, 10, 8, 125),
    "100m": (10000, 10, 8, 125),
}


def dataset(root: Path, size: str) -> tuple[Path, int]:
    g, t, q, c = SHAPES[size]
    d = root / f"snap-{size}"
    marker = d / ".generated.json"
    want = {"groups": g, "topics": t, "queues": q, "captures": c, "seed": 7}
    if marker.exists() and json.loads(marker.read_text()) == want:
        return d, g * t * q * c
    if d.exists():
        shutil.rmtree(d)
    st = generate(d, g, t, q, c, seed=7)
    marker.write_text(json.dumps(want))
    print(f"  generated {size}: {st.rows:,} rows, {st.bytes / 1e9:.2f} GB in {st.seconds:.0f} s",
          flush=True)
    return d, st.rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="/tmp/mqctl-bench-lag")
    p.add_argument("--sizes", default="1m,10m")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--driver-memory", default="6g")
    a = p.parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("SPARK_LOCAL_HOSTNAME", "localhost")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = Path(a.data)
    root.mkdir(parents=True, exist_ok=True)
    sizes = [s.strip().lower() for s in a.sizes.split(",") if s.strip()]
    print(f"mqctl lag report scale bench: {a.master}, driver memory {a.driver_memory}, "
          f"{os.cpu_count()} cores", flush=True)
    data = {s: dataset(root, s) for s in ["10k", *sizes]}

    from pyspark.sql import SparkSession

    from mqctl.lagjob import run_report

    spark = (SparkSession.builder.master(a.master).appName("mqctl-lag-scale")
             .config("spark.driver.memory", a.driver_memory)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "8")
             .config("spark.log.level", "WARN")
             .getOrCreate())
    results: dict[str, tuple[int, float]] = {}
    try:
        for size in ["10k", *sizes]:
            path, rows = data[size]
            out = root / f"out-{size}"
            if out.exists():
                shutil.rmtree(out)
            t0 = time.perf_counter()
            res = run_report([str(path)], str(out), spark=spark, tz="UTC")
            dt = time.perf_counter() - t0
            results[size] = (rows, dt)
            label = "warm-up" if size == "10k" else "run"
            print(f"  {label:8s} {size:>5s}: {rows:>11,} rows  {dt:7.1f} s  "
                  f"{rows / dt:>10,.0f} rows/s  (lag rows {res.counts['lag_rows']:,}, "
                  f"events {res.counts['rebalance_events']:,}, storms {res.counts['storms']}, "
                  f"quarantined {res.quarantined})", flush=True)
    finally:
        spark.stop()
    measured = [s for s in sizes if s in results]
    for small, big in itertools.pairwise(measured):
        (r1, t1), (r2, t2) = results[small], results[big]
        print(f"growth {small} -> {big}: rows x{r2 / r1:.1f}, time x{t2 / t1:.2f}, "
              f"throughput x{(r2 / t2) / (r1 / t1):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

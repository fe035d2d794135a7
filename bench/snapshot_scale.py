"""Snapshot of a simulated cluster of 32 brokers x 64 queues x 200 groups: concurrent
(bounded fan-out, the default --concurrency 16) against the same requests sent one after
another (--concurrency 1), in the same process. The cluster runs in its own process; with
``--latency-ms`` every broker answer is delayed, as a network round trip would be.

Then the capture file, written from that capture in each format (``--compress none`` and
gzip at levels 1 and 6, 6 being ``mqctl snapshot``'s): write time (best of ``--repeat``) and
size, as ratios against the plain file and against the capture's own time, so the cost of
compression at capture time is measured side by side with what it saves on disk.

With ``--spark-read N``, the other side: N captures (the same rows at N capture times) in
each format, read by Spark (local[2]) as the lag report's first step does (the text of every
line, then the JSON of every line); best of 3 after a warm-up, as a ratio gzip / plain.

    python bench/snapshot_scale.py [--brokers 32] [--groups 200] [--concurrency 16]
                                   [--latency-ms 1] [--repeat 5] [--skip-sequential]
                                   [--spark-read 20]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import SimProcess, large_scenario

import mqctl.snapshot as snapshot_mod
from mqctl.admin import Admin
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.snapshot import Snapshot, capture, discover_groups, read_rows, write


async def run_capture(namesrv: str, concurrency: int
                      ) -> tuple[float, int, int, int, Snapshot]:
    async with RemotingClient(ClientOptions(timeout=60, max_in_flight=concurrency)) as client:
        admin = Admin(client, namesrv, concurrency=concurrency)
        groups = await discover_groups(admin)
        before = client.requests_sent
        t0 = time.perf_counter()
        snap = await capture(admin, groups, namesrv=namesrv)
        elapsed = time.perf_counter() - t0
        return (elapsed, len(snap.rows), client.requests_sent - before,
                client.max_seen_in_flight, snap)


def time_write(snap: Snapshot, compress: str, level: int, repeat: int
               ) -> tuple[float, int, Any]:
    """Best-of-``repeat`` time of :func:`write` (atomic write, fsync included) and the size."""
    old = snapshot_mod.GZIP_LEVEL
    snapshot_mod.GZIP_LEVEL = level
    best, size, path = float("inf"), 0, None
    try:
        with tempfile.TemporaryDirectory(prefix="mqctl-bench-snap-") as tmp:
            for i in range(repeat):
                t0 = time.perf_counter()
                path = write(snap, Path(tmp) / str(i), compress=compress)
                best = min(best, time.perf_counter() - t0)
                assert path is not None
                size = path.stat().st_size
            assert path is not None
            rows = read_rows(path)  # the file reads back to the capture's rows
            assert rows == snap.rows, "a capture file did not read back to its rows"
            if compress == "gzip":
                gzip.decompress(path.read_bytes())
    finally:
        snapshot_mod.GZIP_LEVEL = old
    return best, size, path


def compression_table(snap: Snapshot, capture_s: float, repeat: int) -> None:
    plain_s, plain_b, _ = time_write(snap, "none", 0, repeat)
    print(f"capture file of {len(snap.rows)} rows, write time best of {repeat} (atomic, "
          "fsync'ed), ratios against the plain file and the capture's time:")
    print(f"{'format':<16}{'write s':>9}{'x plain':>9}{'% of capture':>14}{'bytes':>12}"
          f"{'size x plain':>14}")
    print(f"{'none (.jsonl)':<16}{plain_s:9.3f}{1:9.2f}{100 * plain_s / capture_s:13.1f}%"
          f"{plain_b:12d}{1:14.3f}")
    for level in (1, 6):
        s, b, _ = time_write(snap, "gzip", level, repeat)
        mark = " (default)" if level == snapshot_mod.GZIP_LEVEL else ""
        print(f"{f'gzip -{level}':<16}{s:9.3f}{s / plain_s:9.2f}{100 * s / capture_s:13.1f}%"
              f"{b:12d}{b / plain_b:14.3f}{mark}")
        print(f"  extra time per capture over plain: {s - plain_s:+.3f} s "
              f"({100 * (s - plain_s) / (capture_s + plain_s):+.1f}% of capture + write)")


def spark_read(snap: Snapshot, n: int) -> None:
    """Spark reading N captures plain and gzip (the lag report's input side)."""
    from dataclasses import replace

    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("mqctl bench snapshot read")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "2g")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        with tempfile.TemporaryDirectory(prefix="mqctl-bench-read-") as tmp:
            sizes: dict[str, int] = {}
            for fmt in ("none", "gzip"):
                total = 0
                for i in range(n):
                    ts = snap.capture_ts + i * 60_000
                    rows = [dict(r, capture_ts=ts) for r in snap.rows]
                    p = write(replace(snap, capture_ts=ts, rows=rows), Path(tmp) / fmt,
                              compress=fmt)
                    assert p is not None
                    total += p.stat().st_size
                sizes[fmt] = total

            def timed(fmt: str, how: str) -> float:
                best = float("inf")
                for _ in range(3):
                    t0 = time.perf_counter()
                    reader = spark.read.option("recursiveFileLookup", "true")
                    df = reader.text(f"{tmp}/{fmt}") if how == "text" else \
                        reader.json(f"{tmp}/{fmt}")
                    count = df.count()
                    best = min(best, time.perf_counter() - t0)
                assert count == n * len(snap.rows), (fmt, how, count)
                return best

            timed("none", "text")  # warm-up: JIT, class loading
            print(f"Spark (local[2]) reading {n} captures of {len(snap.rows)} rows, best of 3:")
            for how in ("text", "json"):
                plain_s, gz_s = timed("none", how), timed("gzip", how)
                print(f"  {how:<5}: plain {plain_s:6.2f} s ({sizes['none']} bytes), gzip "
                      f"{gz_s:6.2f} s ({sizes['gzip']} bytes): gzip / plain = "
                      f"{gz_s / plain_s:.2f}")
    finally:
        spark.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=32)
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency-ms", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5, help="writes per format (best is shown)")
    ap.add_argument("--skip-sequential", action="store_true",
                    help="skip the --concurrency 1 capture (only the file formats)")
    ap.add_argument("--spark-read", type=int, default=0, metavar="N",
                    help="also time Spark reading N captures plain and gzip")
    args = ap.parse_args()
    doc = large_scenario(args.brokers, 16, 4, args.groups, 2)
    with SimProcess(doc, latency_ms=args.latency_ms) as sim:
        fast, rows, reqs, peak, snap = asyncio.run(run_capture(sim.namesrv_addr,
                                                               args.concurrency))
        if not args.skip_sequential:
            slow, rows1, reqs1, peak1, _ = asyncio.run(run_capture(sim.namesrv_addr, 1))
    print(f"cluster: {args.brokers} brokers x 64 queues x {args.groups} groups, "
          f"{args.latency_ms:g} ms per broker answer, server in its own process")
    print(f"concurrent (--concurrency {args.concurrency}): {fast:7.2f} s, {rows} rows, "
          f"{reqs} requests, peak {peak} in flight")
    if not args.skip_sequential:
        print(f"one at a time (--concurrency 1)   : {slow:7.2f} s, {rows1} rows, "
              f"{reqs1} requests, peak {peak1} in flight")
        print(f"speed-up: {slow / fast:.1f}x")
    compression_table(snap, fast, args.repeat)
    if args.spark_read:
        spark_read(snap, args.spark_read)


if __name__ == "__main__":
    main()

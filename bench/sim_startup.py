"""How long a large simulated cluster takes to start (requirement: 32 brokers x 64 queues x
200 groups in under 5 s), next to a one-broker baseline in the same process.

    python bench/sim_startup.py [--brokers 32] [--groups 200]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import large_scenario

from mqctl.sim import SimCluster


async def start_stop(doc: dict) -> tuple[float, int]:
    t0 = time.perf_counter()
    cluster = SimCluster(doc, clock="manual")
    await cluster.start()
    elapsed = time.perf_counter() - t0
    queues = sum(len(b.logs) for b in cluster.brokers.values())
    await cluster.stop()
    return elapsed, queues


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=32)
    ap.add_argument("--groups", type=int, default=200)
    args = ap.parse_args()
    base, _ = asyncio.run(start_stop(large_scenario(1, 16, 4, 1, 1)))
    big, queues = asyncio.run(start_stop(large_scenario(args.brokers, 16, 4, args.groups, 2)))
    print(f"baseline 1 broker x 64 queues x 1 group : {base:.3f} s")
    print(f"{args.brokers} brokers x 64 queues x {args.groups} groups ({queues} queues incl. "
          f"retry, {args.groups * 2} consumers): {big:.3f} s "
          f"(requirement < 5 s; {big / base:.1f}x the baseline)")


if __name__ == "__main__":
    main()

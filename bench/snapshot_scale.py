"""Snapshot of a simulated cluster of 32 brokers x 64 queues x 200 groups: concurrent
(bounded fan-out, the default --concurrency 16) against the same requests sent one after
another (--concurrency 1), in the same process. The cluster runs in its own process; with
``--latency-ms`` every broker answer is delayed, as a network round trip would be.

    python bench/snapshot_scale.py [--brokers 32] [--groups 200] [--concurrency 16]
                                   [--latency-ms 1]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import SimProcess, large_scenario

from mqctl.admin import Admin
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.snapshot import capture, discover_groups


async def run_capture(namesrv: str, concurrency: int) -> tuple[float, int, int, int]:
    async with RemotingClient(ClientOptions(timeout=60, max_in_flight=concurrency)) as client:
        admin = Admin(client, namesrv, concurrency=concurrency)
        groups = await discover_groups(admin)
        before = client.requests_sent
        t0 = time.perf_counter()
        snap = await capture(admin, groups, namesrv=namesrv)
        elapsed = time.perf_counter() - t0
        return elapsed, len(snap.rows), client.requests_sent - before, client.max_seen_in_flight


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=32)
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency-ms", type=float, default=1.0)
    args = ap.parse_args()
    doc = large_scenario(args.brokers, 16, 4, args.groups, 2)
    with SimProcess(doc, latency_ms=args.latency_ms) as sim:
        fast, rows, reqs, peak = asyncio.run(run_capture(sim.namesrv_addr, args.concurrency))
        slow, rows1, reqs1, peak1 = asyncio.run(run_capture(sim.namesrv_addr, 1))
    print(f"cluster: {args.brokers} brokers x 64 queues x {args.groups} groups, "
          f"{args.latency_ms:g} ms per broker answer, server in its own process")
    print(f"concurrent (--concurrency {args.concurrency}): {fast:7.2f} s, {rows} rows, "
          f"{reqs} requests, peak {peak} in flight")
    print(f"one at a time (--concurrency 1)   : {slow:7.2f} s, {rows1} rows, {reqs1} requests, "
          f"peak {peak1} in flight")
    print(f"speed-up: {slow / fast:.1f}x")


if __name__ == "__main__":
    main()

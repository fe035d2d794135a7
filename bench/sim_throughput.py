"""Requests per second one simulated broker answers from one mqctl client (requirement:
>= 5,000 small requests/s on this 2-core machine), one at a time and pipelined.

    python bench/sim_throughput.py [--requests 20000] [--in-flight 64]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from mqctl.remoting.client import RemotingClient
from mqctl.remoting.codes import RequestCode
from mqctl.sim import SimThread

DOC = {"name": "bench", "clock": {"mode": "manual"}, "brokers": ["broker-a"],
       "topics": [{"name": "T", "queues": 8, "rate": 10, "history": "1h"}]}


async def sequential(addr: str, n: int) -> float:
    async with RemotingClient() as c:
        await c.invoke(addr, RequestCode.GET_MAX_OFFSET, {"topic": "T", "queueId": 0})
        t0 = time.perf_counter()
        for i in range(n):
            await c.invoke(addr, RequestCode.GET_MAX_OFFSET, {"topic": "T", "queueId": i % 8})
        return n / (time.perf_counter() - t0)


async def pipelined(addr: str, n: int, in_flight: int) -> float:
    async with RemotingClient() as c:
        await c.invoke(addr, RequestCode.GET_MAX_OFFSET, {"topic": "T", "queueId": 0})
        sem = asyncio.Semaphore(in_flight)

        async def one(i: int) -> None:
            async with sem:
                await c.invoke(addr, RequestCode.GET_MAX_OFFSET, {"topic": "T", "queueId": i % 8})

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--in-flight", type=int, default=64)
    args = ap.parse_args()
    with SimThread(DOC, clock="manual") as sim:
        addr = sim.cluster.broker_addr("broker-a")
        seq = asyncio.run(sequential(addr, args.requests))
        sim.clear_request_log()
        pipe = asyncio.run(pipelined(addr, args.requests, args.in_flight))
    print(f"one at a time : {seq:8.0f} requests/s (GET_MAX_OFFSET, {args.requests} requests)")
    print(f"{args.in_flight} in flight  : {pipe:8.0f} requests/s ({pipe / seq:.1f}x one at a "
          "time; requirement >= 5,000/s)")


if __name__ == "__main__":
    main()

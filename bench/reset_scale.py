"""Reset of 4,096 queues over 32 simulated brokers (one topic with 128 queues per broker),
planned and executed by mqctl with its bounded fan-out (--concurrency 16), next to the same
reset sent one request at a time (--concurrency 1). The cluster runs in its own process;
every broker answer is delayed by ``--latency-ms`` as a network round trip would be.

    python bench/reset_scale.py [--brokers 32] [--queues-per-broker 128] [--latency-ms 1]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import SimProcess

from mqctl.admin import Admin
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.reset import Target, apply_plan, make_plan, summarize, verify


def scenario(brokers: int, queues: int) -> dict:
    return {"name": "reset-bench", "clock": {"mode": "manual"},
            "brokers": [f"broker-{i:02d}" for i in range(brokers)],
            "topics": [{"name": "TopicBig", "queues": queues, "rate": 5, "history": "1h"}],
            "groups": [{"name": "GID_BIG", "topics": ["TopicBig"], "initial_lag": 100}]}


async def reset(namesrv: str, concurrency: int, target: Target) -> tuple[float, float, dict]:
    async with RemotingClient(ClientOptions(timeout=60, max_in_flight=concurrency)) as client:
        admin = Admin(client, namesrv, concurrency=concurrency)
        t0 = time.perf_counter()
        plan = await make_plan(admin, "GID_BIG", "TopicBig", target)
        t1 = time.perf_counter()
        results = await verify(admin, plan, await apply_plan(admin, plan,
                                                             concurrency=concurrency))
        t2 = time.perf_counter()
        assert not plan.refusals, plan.refusals
        return t1 - t0, t2 - t1, summarize(results)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=32)
    ap.add_argument("--queues-per-broker", type=int, default=128)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency-ms", type=float, default=1.0)
    args = ap.parse_args()
    n = args.brokers * args.queues_per_broker
    with SimProcess(scenario(args.brokers, args.queues_per_broker),
                    latency_ms=args.latency_ms) as sim:
        # two different targets so that the second run has real work to do
        p1, a1, s1 = asyncio.run(reset(sim.namesrv_addr, args.concurrency, Target("earliest")))
        p2, a2, s2 = asyncio.run(reset(sim.namesrv_addr, 1, Target("latest")))
    print(f"reset of {n} queues over {args.brokers} brokers, {args.latency_ms:g} ms per answer")
    print(f"--concurrency {args.concurrency}: plan {p1:6.2f} s, apply+verify {a1:6.2f} s, "
          f"total {p1 + a1:6.2f} s  {s1}")
    print(f"--concurrency 1 : plan {p2:6.2f} s, apply+verify {a2:6.2f} s, total {p2 + a2:6.2f} s"
          f"  {s2}")
    print(f"speed-up: {(p2 + a2) / (p1 + a1):.1f}x")


if __name__ == "__main__":
    main()

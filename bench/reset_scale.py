"""Reset of 4,096 queues over 32 simulated brokers (one topic with 128 queues per broker),
planned, applied and verified by mqctl with its bounded fan-out (--concurrency 16), next to the
same reset sent one request at a time (--concurrency 1), from the same starting offsets. The
cluster runs in its own process (a broker answer is delayed by ``--latency-ms``, as a network
round trip would be); the group is offline, so every broker takes the server-side path with one
INVOKE_BROKER_TO_RESET_OFFSET per queue.

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

GROUP, TOPIC = "GID_BIG", "TopicBig"


def scenario(brokers: int, queues: int) -> dict:
    return {"name": "reset-bench", "clock": {"mode": "manual"},
            "brokers": [f"broker-{i:02d}" for i in range(brokers)],
            "topics": [{"name": TOPIC, "queues": queues, "rate": 5, "history": "1h"}],
            "groups": [{"name": GROUP, "topics": [TOPIC], "initial_lag": 100}]}


async def reset(namesrv: str, concurrency: int, target: Target
                ) -> tuple[float, float, float, dict, int, dict]:
    """(plan s, apply s, verify s, summary, requests sent, previous offsets)."""
    async with RemotingClient(ClientOptions(timeout=60, max_in_flight=concurrency)) as client:
        admin = Admin(client, namesrv, concurrency=concurrency)
        t0 = time.perf_counter()
        plan = await make_plan(admin, GROUP, TOPIC, target)
        assert not plan.refusals, plan.refusals
        t1 = time.perf_counter()
        results = await apply_plan(admin, plan, concurrency=concurrency)
        t2 = time.perf_counter()
        results = await verify(admin, plan, results)
        t3 = time.perf_counter()
        before = {q.mq: q.current for q in plan.queues}
        return t1 - t0, t2 - t1, t3 - t2, summarize(results), client.requests_sent, before


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=32)
    ap.add_argument("--queues-per-broker", type=int, default=128)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency-ms", type=float, default=1.0)
    args = ap.parse_args()
    n = args.brokers * args.queues_per_broker
    target = Target("earliest")
    with SimProcess(scenario(args.brokers, args.queues_per_broker),
                    latency_ms=args.latency_ms) as sim:
        ns = sim.namesrv_addr
        # baseline: one request at a time
        p1, a1, v1, s1, r1, before = asyncio.run(reset(ns, 1, target))
        # put the original offsets back (not measured), then the same reset, concurrently
        restore = Target("plan", text="restore", plan={mq: v for mq, v in before.items()
                                                       if v is not None})
        asyncio.run(reset(ns, args.concurrency, restore))
        p2, a2, v2, s2, r2, again = asyncio.run(reset(ns, args.concurrency, target))
        assert again == before, "the second run did not start from the same offsets"
    base, fast = p1 + a1 + v1, p2 + a2 + v2
    print(f"reset of {n} queues over {args.brokers} brokers to the earliest offset, "
          f"{args.latency_ms:g} ms per broker answer, cluster in its own process")
    print(f"--concurrency 1 : plan {p1:6.2f} s, apply {a1:6.2f} s, verify {v1:5.2f} s, "
          f"total {base:6.2f} s, {r1} requests  {s1}")
    print(f"--concurrency {args.concurrency}: plan {p2:6.2f} s, apply {a2:6.2f} s, "
          f"verify {v2:5.2f} s, total {fast:6.2f} s, {r2} requests  {s2}")
    print(f"speed-up: {base / fast:.1f}x (apply alone {a1 / a2:.1f}x)")


if __name__ == "__main__":
    main()

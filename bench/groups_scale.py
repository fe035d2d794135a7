"""``mqctl groups`` on a simulated cluster of 32 brokers x 1,000 groups: the
all-groups capture (three requests per broker answer for every group:
GET_ALL_SUBSCRIPTIONGROUP_CONFIG, GET_BROKER_CONSUME_STATS and GET_ALL_TOPIC_CONFIG; then per
group the connection list, the clients' running info and the time spans of lagging queues,
concurrent and bounded) against the serial per-group baseline measured in the same run: what a
per-group tool does (mqadmin consumerProgress -g G for each group: the retry topic's route,
GET_CONSUME_STATS on every broker of it, the connection list, the time spans), one request after
another.

The cluster runs in its own process (``mqctl sim up``, the bundled ``large`` generator with a
manual clock); ``--latency-ms`` delays every broker answer as a network round trip would.

    python bench/groups_scale.py [--brokers 32] [--groups 1000] [--consumers 1]
                                 [--concurrency 16] [--latency-ms 1] [--lagging-every 10]
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
from mqctl.views.groups import capture_groups, capture_groups_serial


async def parallel(namesrv: str, concurrency: int, clients: bool, time_lag: bool = True
                   ) -> tuple[float, dict[str, int | None], int]:
    async with RemotingClient(ClientOptions(timeout=60, max_in_flight=concurrency)) as client:
        admin = Admin(client, namesrv, concurrency=concurrency)
        before = client.requests_sent
        t0 = time.perf_counter()
        c = await capture_groups(admin, clients=clients, time_lag=time_lag)
        elapsed = time.perf_counter() - t0
        return elapsed, {s.group: s.lag for s in c.groups}, client.requests_sent - before


async def serial(namesrv: str, groups: list[str]) -> tuple[float, dict[str, int], int]:
    async with RemotingClient(ClientOptions(timeout=60, max_in_flight=1)) as client:
        admin = Admin(client, namesrv, concurrency=1)
        before = client.requests_sent
        t0 = time.perf_counter()
        lags = await capture_groups_serial(admin, groups)
        elapsed = time.perf_counter() - t0
        return elapsed, lags, client.requests_sent - before


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=32)
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--consumers", type=int, default=1, help="consumers per group")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency-ms", type=float, default=1.0)
    ap.add_argument("--lagging-every", type=int, default=10, metavar="N",
                    help="every N-th group lags (the generator's initial lag), the others are "
                    "caught up; 1: every group lags on every broker (the worst case for the "
                    "time lag, one QUERY_CONSUME_TIME_SPAN per group and broker)")
    args = ap.parse_args()
    doc = large_scenario(args.brokers, 16, 4, args.groups, args.consumers)
    for i, g in enumerate(doc["groups"]):
        if i % args.lagging_every:
            g["initial_lag"] = 0
        # the steady state of a running group: its clients committed their %RETRY% queues (0)
        # within 5 s of start; the manual clock never gets there, so the offsets are given
        retry = "%RETRY%" + g["name"]
        doc["topics"].append({"name": retry, "queues": 1, "rate": 0, "max_offset": 0})
        g["topics"] = [*g["topics"], retry]
    with SimProcess(doc, latency_ms=args.latency_ms) as sim:
        asyncio.run(parallel(sim.namesrv_addr, args.concurrency, False))  # warm-up, not timed
        fast, lags, reqs = asyncio.run(parallel(sim.namesrv_addr, args.concurrency, True))
        light, _, reqs_light = asyncio.run(parallel(sim.namesrv_addr, args.concurrency, False))
        bare, _, reqs_bare = asyncio.run(parallel(sim.namesrv_addr, args.concurrency, False,
                                                  False))
        slow, lags1, reqs1 = asyncio.run(serial(sim.namesrv_addr, sorted(lags)))
    lagging = sum(1 for v in lags.values() if v)
    print(f"cluster: {args.brokers} brokers x 64 queues x {len(lags)} groups "
          f"({args.consumers} consumer(s) each, {lagging} lagging), {args.latency_ms:g} ms per "
          "broker answer, server in its own process")
    print(f"mqctl groups (--concurrency {args.concurrency})          : {fast:7.2f} s, "
          f"{reqs} requests")
    print(f"mqctl groups --no-clients                      : {light:7.2f} s, "
          f"{reqs_light} requests")
    print(f"mqctl groups --no-clients --no-time-lag        : {bare:7.2f} s, "
          f"{reqs_bare} requests")
    print(f"serial per-group baseline (consumerProgress -g): {slow:7.2f} s, {reqs1} requests")
    print(f"speed-up: {slow / fast:.1f}x ({slow / light:.1f}x with --no-clients, "
          f"{slow / bare:.1f}x with --no-clients --no-time-lag)")
    # the sim's clock is manual, so the offsets stand still between the runs: both captures
    # must see the same lag per group
    same = sum(1 for g, v in lags1.items() if lags.get(g) == v)
    print(f"lag per group equal in both: {same} of {len(lags1)}")


if __name__ == "__main__":
    main()

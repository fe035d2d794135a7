"""Requests per second one simulated broker answers from one mqctl RemotingClient
(requirement: >= 5,000 small requests/s on this 2-core machine), one at a time and pipelined.

Three arrangements, all with the same client and the same request (GET_MAX_OFFSET):

* the cluster in its own process (``mqctl sim up``): client and broker each get a core, as a
  client and a real broker would;
* the cluster in a background thread of the client's process (``SimThread``, how the tests
  run it; client and broker share one interpreter);
* baseline, in the same arrangement as the thread run: a bare server with the same codec
  that answers every request with a fixed response (no simulation work), so the ratio shows
  what the simulation itself costs.

    python bench/sim_throughput.py [--requests 20000] [--in-flight 64]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import SimProcess

from mqctl.remoting import fastjson
from mqctl.remoting.client import RemotingClient
from mqctl.remoting.codes import RequestCode
from mqctl.remoting.frame import encode
from mqctl.remoting.protocol import FrameReader
from mqctl.sim import SimThread

DOC: dict[str, Any] = {"name": "bench", "clock": {"mode": "manual"}, "brokers": ["broker-a"],
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


def measure(addr: str, n: int, in_flight: int) -> tuple[float, float]:
    return asyncio.run(sequential(addr, n)), asyncio.run(pipelined(addr, n, in_flight))


class BareServer:
    """The codec alone: decode each frame, answer ``{"offset": "0"}`` (baseline)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.addr = ""
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        frames = FrameReader()
        while data := await reader.read(65536):
            for cmd in frames.feed(data):
                writer.write(encode(cmd.response(0, None, {"offset": 0})))
        writer.close()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.addr = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
        self._ready.set()
        self.loop.run_forever()

    def __enter__(self) -> BareServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


async def broker_addr(namesrv: str) -> str:
    async with RemotingClient() as c:
        r = await c.invoke(namesrv, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "T"})
        return str(fastjson.loads(r.body)["brokerDatas"][0]["brokerAddrs"]["0"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--in-flight", type=int, default=64)
    args = ap.parse_args()
    n, k = args.requests, args.in_flight
    with SimProcess(DOC) as proc:
        own = measure(asyncio.run(broker_addr(proc.namesrv_addr)), n, k)
    with SimThread(DOC, clock="manual") as sim:
        thread = measure(sim.cluster.broker_addr("broker-a"), n, k)
    with BareServer() as bare:
        base = measure(bare.addr, n, k)
    print(f"GET_MAX_OFFSET x {n}, one at a time / {k} in flight (requests per second):")
    print(f"  sim in its own process : {own[0]:8.0f} / {own[1]:8.0f}   (requirement >= 5,000/s)")
    print(f"  sim in a thread        : {thread[0]:8.0f} / {thread[1]:8.0f}")
    print(f"  baseline (codec only)  : {base[0]:8.0f} / {base[1]:8.0f}   in a thread")
    print(f"  sim / baseline, thread : {thread[0] / base[0]:8.2f} / {thread[1] / base[1]:8.2f}")
    print(f"  pipelining gain        : {own[1] / own[0]:8.1f}x own process, "
          f"{thread[1] / thread[0]:.1f}x thread")


if __name__ == "__main__":
    main()

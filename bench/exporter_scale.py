"""``mqctl exporter`` on a simulated cluster of 200 groups x 32 queues (8 brokers x 4 queues
of each group's topic): the round time against the interval, the exporter's resident memory
against the same process before its first round, and the scrape time against
node_exporter's own scrape (where ``prometheus-node-exporter`` is installed), all measured
in this run. The cluster and the exporter each run in their own process.

    python bench/exporter_scale.py [--brokers 8] [--groups 200] [--queues 4]
                                   [--interval 30] [--rounds 3] [--scrapes 50]

Targets (docs/exporter.md): a round within the interval, under 200 MB resident, a scrape
under 50 ms.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import SimProcess, large_scenario

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024  # type: ignore[union-attr]


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.read().decode()


def value(text: str, name: str) -> float:
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else float("nan")


def scrape_ms(url: str, n: int) -> float:
    """The median time of ``n`` scrapes (after one to warm up)."""
    get(url)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        get(url)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def node_exporter_ms(n: int) -> float | None:
    path = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if path is None:
        return None
    port = free_port()
    p = subprocess.Popen([path, f"--web.listen-address=127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                get(f"http://127.0.0.1:{port}/metrics")
                break
            except OSError:
                time.sleep(0.1)
        return scrape_ms(f"http://127.0.0.1:{port}/metrics", n)
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--brokers", type=int, default=8)
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--queues", type=int, default=4, help="queues per broker of each topic")
    ap.add_argument("--interval", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scrapes", type=int, default=50)
    a = ap.parse_args()
    doc = large_scenario(brokers=a.brokers, topics=16, queues_per_topic=a.queues,
                         groups=a.groups)
    with SimProcess(doc) as sim:
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
        p = subprocess.Popen([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr,
                              "exporter", "--listen", "127.0.0.1:0", "--interval",
                              f"{a.interval:g}s"], stderr=subprocess.PIPE, text=True, env=env)
        try:
            assert p.stderr is not None
            # "listening on HOST:PORT, ...": imported and bound (an ephemeral port), no round yet
            where = re.search(r"listening on (\S+),", p.stderr.readline())
            assert where, "the exporter did not start"
            base_rss = rss_mb(p.pid)
            url = f"http://{where.group(1)}/metrics"
            rounds: list[float] = []
            peak = base_rss
            while len(rounds) < a.rounds:
                try:
                    text = get(url)
                except OSError:
                    time.sleep(0.2)
                    continue
                done = int(value(text, "mqctl_exporter_rounds_total"))
                if done > len(rounds):
                    rounds.append(value(text, "mqctl_exporter_round_duration_seconds"))
                    peak = max(peak, rss_mb(p.pid))
                time.sleep(0.5)
            queues = value(text, "mqctl_exporter_round_queues")
            scrape = scrape_ms(url, a.scrapes)
            size = len(get(url).encode())
            peak = max(peak, rss_mb(p.pid))
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
    node = node_exporter_ms(a.scrapes)
    worst = max(rounds)
    print(f"cluster: {a.groups} groups, {a.brokers} brokers x {a.queues} queues per topic "
          f"({a.brokers * a.queues} queues per group); the exporter held {queues:.0f} queue rows")
    print(f"round: worst {worst:.2f}s of {len(rounds)} (first {rounds[0]:.2f}s); "
          f"ratio to the {a.interval:g}s interval {worst / a.interval:.3f} (target < 1)")
    print(f"memory: {peak:.1f} MB resident after {len(rounds)} rounds, {base_rss:.1f} MB "
          f"before the first: ratio {peak / base_rss:.2f}; target < 200 MB: "
          f"{'met' if peak < 200 else 'NOT met'}")
    print(f"scrape: median {scrape:.2f} ms of {a.scrapes} ({size / 1024:.0f} KiB); target "
          f"< 50 ms: {'met' if scrape < 50 else 'NOT met'}")
    if node is None:
        print("node_exporter: not installed (install prometheus-node-exporter for the ratio)")
    else:
        print(f"node_exporter's own scrape (default collectors): median {node:.2f} ms; "
              f"ratio exporter / node_exporter {scrape / node:.2f}")


if __name__ == "__main__":
    main()

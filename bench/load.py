"""Load: (1) `mqctl snapshot --all-groups` of a simulated cluster with 1,000 groups: time,
peak requests in flight against the --concurrency bound, peak open file descriptors and peak
RSS of the mqctl process; (2) `mqctl group progress --watch` for 10 simulated minutes on an
accelerated clock: RSS at the start and at the end of the run.

The cluster runs in its own process (`mqctl sim up`); mqctl runs as a separate process whose
/proc entries are sampled.

    python bench/load.py [--groups 1000] [--concurrency 16] [--watch-minutes 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_common import SimProcess, large_scenario


def status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


class Sampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.05):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int, int]] = []  # (t, rss kB, fds)
        self.stop = threading.Event()

    def run(self) -> None:
        t0 = time.monotonic()
        while not self.stop.wait(self.every):
            rss, n = status_kb(self.pid, "VmRSS"), fds(self.pid)
            if rss:
                self.samples.append((time.monotonic() - t0, rss, n))


def run_sampled(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str],
                                                                Sampler, float, int]:
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    s = Sampler(p.pid)
    s.start()
    out, err = p.communicate(timeout=3600)
    hwm = status_kb(p.pid, "VmHWM")  # gone after exit; the sampler's max is the measure
    s.stop.set()
    s.join()
    return (subprocess.CompletedProcess(cmd, p.returncode, out, err), s,
            time.perf_counter() - t0, hwm)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--brokers", type=int, default=8)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--watch-minutes", type=float, default=10.0)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    doc = large_scenario(args.brokers, 16, 4, args.groups, 1)
    with SimProcess(doc) as sim, tempfile.TemporaryDirectory() as out:
        env["NAMESRV_ADDR"] = sim.namesrv_addr
        r, s, took, _ = run_sampled([sys.executable, "-m", "mqctl", "-q", "--timeout", "30",
                                     "snapshot", "--out", out, "--all-groups",
                                     "--concurrency", str(args.concurrency), "-o", "json"], env)
        rows = __import__("json").loads(r.stdout)["rows"] if r.returncode == 0 else 0
        print(f"snapshot of {args.groups} groups on {args.brokers} brokers: exit {r.returncode}, "
              f"{took:.1f} s, {rows} rows")
        print(f"  peak RSS {max(x[1] for x in s.samples) / 1024:.1f} MiB, peak open fds "
              f"{max(x[2] for x in s.samples)} (--concurrency {args.concurrency}; one "
              f"connection per broker and name server)")

    speed = 6.0  # 10 simulated minutes take 100 s: ~1,000 refreshes
    watch_doc = large_scenario(2, 4, 4, 4, 2, clock="accelerated")
    watch_doc["clock"]["speed"] = speed
    seconds = args.watch_minutes * 60 / speed
    with SimProcess(watch_doc) as sim:
        env["NAMESRV_ADDR"] = sim.namesrv_addr
        count = int(seconds / 0.1)
        r, s, took, _ = run_sampled([sys.executable, "-m", "mqctl", "group", "progress",
                                     "GID_000", "--watch", "0.1", "--count", str(count),
                                     "-o", "plain"], env)
        n = len(s.samples)
        first = s.samples[: max(1, n // 10)]
        last = s.samples[-max(1, n // 10):]
        a = sum(x[1] for x in first) / len(first) / 1024
        b = sum(x[1] for x in last) / len(last) / 1024
        print(f"group progress --watch for {args.watch_minutes:g} simulated minutes "
              f"({count} refreshes in {took:.1f} s, clock x{speed:g}): exit {r.returncode}")
        print(f"  RSS first 10% {a:.1f} MiB, last 10% {b:.1f} MiB, growth {b - a:+.1f} MiB "
              f"({(b - a) / a * 100:+.1f}%)")


if __name__ == "__main__":
    main()

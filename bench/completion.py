"""What a TAB costs with cluster completion, against a baseline measured in
the same run: completing a sub-command name, which never asks the cluster.

Each case is what bash runs on TAB (``_MQCTL_COMPLETE=complete_bash _MQCTL_COMP_LINE=LINE
mqctl``, a new process), median of ``--repeat`` runs, each with a fresh cache unless the case
is about the cache:

* baseline: ``mqctl offsets roll<TAB>`` (static: start-up and Typer only);
* live, uncached: ``mqctl group progress <TAB>`` against the simulated demo cluster;
* live, cached: the same within the 60 s cache;
* refused: a name server port nobody listens on;
* hung, first: a server that accepts and never answers (the 1 s deadline ends it);
* hung, again: the same within 10 s (not asked again).

    python bench/completion.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from mqctl.sim import SimThread


def tab(line: str, cache: Path) -> float:
    # what `mqctl completion bash`'s script sends: the line up to the cursor
    env = dict(os.environ, _MQCTL_COMP_LINE=line, _MQCTL_COMPLETE="complete_bash",
               XDG_CACHE_HOME=str(cache))
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mqctl"], env=env, capture_output=True, timeout=60,
                   check=True)
    return time.perf_counter() - t


def median(line: str, repeat: int, *, fresh: bool, warm: bool = False) -> float:
    times = []
    for _ in range(repeat):
        cache = Path(tempfile.mkdtemp(prefix="mqctl-bench-cache-"))
        try:
            if warm:
                tab(line, cache)
            times.append(tab(line, cache))
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        if not fresh:
            break
    return statistics.median(times)


def hung_server() -> tuple[str, threading.Event]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    stop = threading.Event()
    held: list[socket.socket] = []

    def run() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue
        for c in held:
            c.close()
        srv.close()

    threading.Thread(target=run, daemon=True).start()
    return f"127.0.0.1:{srv.getsockname()[1]}", stop


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"
    hung, stop = hung_server()
    with SimThread("demo", clock="manual") as sim:
        ns = sim.namesrv_addr
        cases = [
            ("baseline (static: offsets roll<TAB>)", "mqctl offsets roll", False),
            ("live, uncached", f"mqctl -n {ns} group progress ", False),
            ("live, cached", f"mqctl -n {ns} group progress ", True),
            ("refused port", f"mqctl -n {closed} group progress ", False),
            ("hung server, first TAB", f"mqctl -n {hung} --timeout 30 group progress ", False),
            ("hung server, next TAB (<10 s)", f"mqctl -n {hung} --timeout 30 group progress ",
             True),
        ]
        results = [(name, median(line, args.repeat, fresh=True, warm=warm))
                   for name, line, warm in cases]
    stop.set()
    base = results[0][1]
    print(f"one TAB, median of {args.repeat} (new process each, as the shell runs it)")
    for name, t in results:
        print(f"{name:34s} {t * 1000:7.0f} ms  {t / base:5.2f}x baseline  "
              f"(+{(t - base) * 1000:5.0f} ms)")


if __name__ == "__main__":
    main()

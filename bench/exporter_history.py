"""The exporter's owner history (mqctl/exporter/history.py) at its steady state, without a
cluster: 200 groups x 40 queue rows (8,000, as bench/exporter_scale.py's cluster with its
retry topics) fed a round every 30 s until the history holds its horizon (2 x 10 min + 1 min:
42 rounds), one member in ten moving a queue per round. Prints the time of one round's
``add`` + ``verdicts`` against the interval, and the memory the history holds (tracemalloc)
against the queue windows' bound (queues x window x 2 samples).

    python bench/exporter_history.py [--groups 200] [--queues 40] [--rounds 60]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mqctl.exporter.history import OwnerHistory


def rows(groups: int, queues: int, k: int, rng: random.Random) -> list[dict]:
    out = []
    for g in range(groups):
        for q in range(queues):
            owner = f"10.0.{g % 250}.{(q + (k if rng.random() < 0.1 else 0)) % 4}@1"
            out.append({"cluster": "C", "group": f"GID_{g:03d}", "topic": f"T{g:03d}",
                        "broker": f"broker-{q % 8}", "queue_id": q // 8, "owner": owner,
                        "owner_unknown": False, "online": True, "consumer_offset": 1000 + k})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--queues", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=60)
    a = ap.parse_args()
    rng = random.Random(5)
    tracemalloc.start()
    h = OwnerHistory()
    times = []
    for k in range(a.rounds):
        batch = rows(a.groups, a.queues, k, rng)
        t0 = time.perf_counter()
        h.add(k * 30_000, batch)
        h.verdicts([{"cluster": "C", "group": f"GID_{g:03d}", "capture_ts": k * 30_000,
                     "group_status_code": 0, "queues": a.queues, "online": True}
                    for g in range(a.groups)])
        times.append(time.perf_counter() - t0)
        del batch
    held, _ = tracemalloc.get_traced_memory()
    steady = sorted(times[-10:])[len(times[-10:]) // 2]
    print(f"rounds held {max(len(g.rounds) for g in h.groups.values())}, "
          f"changes, resets and owner points held {h.held()}")
    print(f"a round's history: {steady:.2f} s median of the last 10 "
          f"({steady / 30:.3f} of a 30 s interval)")
    print(f"memory held: {held / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()

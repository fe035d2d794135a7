# ruff: noqa: UP031 - one printf template per row is the fastest writer for millions of rows
"""Generate large synthetic canonical snapshot datasets (docs/exports.md section 1) for scale tests.

    python bench/gen_exports.py OUT --groups 100 --topics 10 --queues 8 --captures 125

writes ``OUT/<date>/mqctl-snapshot-<cluster>-<stamp>.jsonl``, one file per capture, exactly as
``mqctl snapshot`` names them: groups x topics x queues rows per capture. Deterministic for a seed.

The data behaves like a cluster: every queue has its own production rate (some bursty), most
groups keep up, some fall behind, a few stall (offset frozen) or go offline (no members), owners
change when members join or leave (rebalances), and about half of the rows carry the exact
``delay_ms`` while the rest need interpolation. Importable: :func:`generate`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

START_TS = 1717200000000  # 2024-06-01T00:00:00Z


@dataclass(frozen=True, slots=True)
class GenStats:
    files: int
    rows: int
    bytes: int
    seconds: float


def _stamp(ts: int) -> tuple[str, str, str]:
    dt = datetime.fromtimestamp(ts / 1000, tz=UTC)
    iso = dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts % 1000:03d}Z"
    return dt.strftime("%Y-%m-%d"), iso, iso.replace("-", "").replace(":", "")


def generate(out_dir: str | os.PathLike[str], groups: int, topics: int, queues: int,
             captures: int, *, seed: int = 7, start_ts: int = START_TS,
             interval_ms: int = 60_000, brokers: int = 2, cluster: str = "bench",
             members_per_group: int = 3) -> GenStats:
    """Write ``captures`` snapshot files of ``groups * topics * queues`` rows each."""
    t0 = time.perf_counter()
    rng = random.Random(seed)
    out = Path(out_dir)
    broker_names = [f"broker-{chr(97 + b % 26)}{b // 26 or ''}" for b in range(brokers)]
    topic_names = [f"Topic_{t:04d}" for t in range(topics)]
    group_names = [f"GID_{g:05d}" for g in range(groups)]
    qkeys = [(t, broker_names[q % brokers], q // brokers) for t in range(topics)
             for q in range(queues)]
    rate = {k: rng.choice((0.5, 2.0, 10.0, 50.0)) for k in qkeys}  # messages/s
    bursty = {k: rng.random() < 0.2 for k in qkeys}
    max_off = {k: rng.randrange(0, 100_000) for k in qkeys}
    # per (group, queue): how it consumes
    kind: dict[int, str] = {}
    for g in range(groups):
        r = rng.random()
        kind[g] = ("stall" if r < 0.03 else "offline" if r < 0.05 else
                   "slow" if r < 0.25 else "ok")
    cons = {(g, k): max(0, max_off[k] - rng.randrange(0, 500)) for g in range(groups)
            for k in qkeys}
    speed = {(g, k): (0.8 if kind[g] == "slow" else 1.5) for g in range(groups) for k in qkeys}
    members = {g: [f"10.0.{g % 250}.{m}@{1000 + m}#{g}" for m in range(members_per_group)]
               for g in range(groups)}
    exact = {g: rng.random() < 0.5 for g in range(groups)}
    files = rows = size = 0
    for c in range(captures):
        ts = start_ts + c * interval_ms
        day, iso, stamp = _stamp(ts)
        dt_s = interval_ms / 1000.0
        for k in qkeys:
            burst = 6.0 if bursty[k] and rng.random() < 0.1 else 1.0
            max_off[k] += int(rate[k] * dt_s * burst * rng.uniform(0.5, 1.5))
        # membership changes now and then: a rebalance
        for g in range(groups):
            if kind[g] != "offline" and rng.random() < 0.02:
                rng.shuffle(members[g])
        path = out / day / f"mqctl-snapshot-{cluster}-{stamp}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name("." + path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for g in range(groups):
                online = kind[g] != "offline"
                mem = sorted(members[g]) if online else []
                mem_json = json.dumps(mem, separators=(",", ":"))
                gname = group_names[g]
                for i, k in enumerate(qkeys):
                    t, broker, qid = k
                    mo = max_off[k]
                    key = (g, k)
                    if kind[g] == "ok" or kind[g] == "slow":
                        cons[key] = min(mo, cons[key] + int(rate[k] * dt_s * speed[key]
                                                            * rng.uniform(0.7, 1.3)))
                    co = cons[key]
                    lag = mo - co
                    owner = members[g][i % len(members[g])] if online else None
                    delay = (int(lag / rate[k] * 1000) if lag > 0 else 0) if exact[g] else None
                    fh.write(  # printf-style: the fastest way to write millions of rows
                        '{"schema":"mqctl.snapshot/1","capture_ts":%d,"capture_time":"%s",'
                        '"cluster":"%s","namesrv":"127.0.0.1:9876","group":"%s","topic":"%s",'
                        '"broker":"%s","queue_id":%d,"broker_offset":%d,"min_offset":0,'
                        '"consumer_offset":%d,"pull_offset":%d,"lag":%d,"inflight":0,'
                        '"last_timestamp":%s,"max_timestamp":%d,"delay_ms":%s,"owner":%s,'
                        '"owners":%s,"locked":null,"last_lock_ts":null,"members":%s,'
                        '"online":%s,"consume_type":"CONSUME_PASSIVELY",'
                        '"message_model":"CLUSTERING","orderly":false}\n' % (
                            ts, iso, cluster, gname, topic_names[t], broker, qid, mo, co, co,
                            lag, ts - 1000 if co else "null", ts - 500,
                            "null" if delay is None else delay,
                            json.dumps(owner) if owner else "null",
                            f'["{owner}"]' if owner else "[]", mem_json,
                            "true" if online else "false"))
                    rows += 1
        os.replace(tmp, path)
        files += 1
        size += path.stat().st_size
    return GenStats(files, rows, size, time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--groups", type=int, default=100)
    p.add_argument("--topics", type=int, default=10)
    p.add_argument("--queues", type=int, default=8)
    p.add_argument("--captures", type=int, default=125)
    p.add_argument("--brokers", type=int, default=2)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--interval", type=int, default=60, help="seconds between captures")
    a = p.parse_args(argv)
    st = generate(a.out, a.groups, a.topics, a.queues, a.captures, seed=a.seed,
                  brokers=a.brokers, interval_ms=a.interval * 1000)
    sys.stdout.write(f"{st.rows} rows in {st.files} files, {st.bytes / 1e6:.1f} MB, "
                     f"{st.seconds:.1f} s ({st.rows / st.seconds:,.0f} rows/s)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Parse speed of mqctl's fastjson reader on a broker's consume stats of every group
(GET_BROKER_CONSUME_STATS, what ``mqctl groups`` reads from each broker), against the standard
library's C parser on the same data written as standard JSON (queue keys as strings), in the
same run.

    python bench/fastjson_parse.py [--groups 1000] [--queues 16] [--runs 5]

Prints the best CPU time of each and the ratio (ours / C json). Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mqctl.remoting import fastjson


def body(groups: int, queues: int, fastjson_keys: bool) -> str:
    parts = []
    for g in range(groups):
        entries = []
        for q in range(queues):
            key = (f'{{"brokerName":"broker-{g % 32}","queueId":{q},"topic":"Topic{g % 50}"}}'
                   if fastjson_keys else f'"Topic{g % 50}@broker-{g % 32}@{q}"')
            entries.append(f'{key}:{{"brokerOffset":{100000 + q},"consumerOffset":{99000 + q},'
                           f'"lastTimestamp":1700000000000,"pullOffset":{99500 + q}}}')
        parts.append(f'{{"GID_{g}":[{{"consumeTps":1.5,"offsetTable":{{{",".join(entries)}}}}}]}}')
    return ('{"brokerAddr":"127.0.0.1:10911","consumeStatsList":[' + ",".join(parts)
            + '],"totalDiff":12345}')


def best(fn, text: str, runs: int) -> float:
    out = []
    for _ in range(runs):
        t0 = time.process_time()
        fn(text)
        out.append(time.process_time() - t0)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", type=int, default=1000)
    ap.add_argument("--queues", type=int, default=16)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    fj, std = body(a.groups, a.queues, True), body(a.groups, a.queues, False)
    ours = best(fastjson.loads, fj, a.runs)
    base = best(json.loads, std, a.runs)
    print(f"consume stats of {a.groups} groups x {a.queues} queues: {len(fj) / 1e6:.2f} MB")
    print(f"C json on the standard form : {base * 1000:8.1f} ms")
    print(f"mqctl fastjson.loads        : {ours * 1000:8.1f} ms ({ours / base:.1f}x C json)")


if __name__ == "__main__":
    main()

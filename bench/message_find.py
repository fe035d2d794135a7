"""What `mqctl message find --key` costs as a queue grows, against a baseline measured in the
same run: the same search on a queue of 1,000 messages.

The simulated broker's index (mqctl/sim/index.py) turns a key back into the offsets that carry
it, as a real IndexService looks a key up by hash: the cost follows the matches (capped at 64
per broker), not the messages held. Each case runs ``mqctl message find -t T --key K`` in
process, median of ``--repeat`` runs:

* baseline: a queue of 1,000 messages, a key on one message;
* 10 million messages, a key on one message;
* 10 million messages, a key on 100 of them (the broker returns 64, mqctl shows --limit 20).

Printed: each median and its ratio to the baseline (a ratio near 1: the cost does not follow
the queue's size).

    python bench/message_find.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import time

from mqctl.cli import main
from mqctl.sim import SimThread
from mqctl.timeparse import set_clock


def scenario(messages: int) -> dict:
    return {"name": "find", "clock": {"mode": "manual"}, "brokers": [{"name": "broker-a"}],
            "topics": [{"name": "T", "queues": 1, "rate": 0, "max_offset": messages,
                        "history": "7d"}], "groups": []}


def mqctl(*args: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(args))
    assert code == 0, code
    return json.loads(out.getvalue())


def median_find(messages: int, key_of: str, repeat: int) -> tuple[float, int]:
    with SimThread(scenario(messages), clock="manual") as s:
        set_clock(s.cluster.clock.now_ms)
        ns = s.namesrv_addr
        shown = mqctl("-n", ns, "-o", "json", "message", "show", "-t", "T", "-b", "broker-a",
                      "-q", "0", "--offset", "42")
        key = shown["keys"][0 if key_of == "own" else 1]
        mqctl("-n", ns, "-o", "json", "message", "find", "-t", "T", "--key", key)  # warm-up
        times, found = [], 0
        for _ in range(repeat):
            t = time.perf_counter()
            doc = mqctl("-n", ns, "-o", "json", "message", "find", "-t", "T", "--key", key)
            times.append(time.perf_counter() - t)
            found = doc["found"]
        set_clock(None)
        return statistics.median(times), found


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    base, _ = median_find(1_000, "own", a.repeat)
    print(f"baseline  1k messages, 1 match     {base * 1000:8.1f} ms")
    for label, n, key in (("10M messages, 1 match  ", 10_000_000, "own"),
                          ("10M messages, 100 match", 10_000_000, "order")):
        t, found = median_find(n, key, a.repeat)
        print(f"{label}   {t * 1000:8.1f} ms  ratio {t / base:5.2f}  (found {found})")


if __name__ == "__main__":
    main_()

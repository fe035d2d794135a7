"""Consistent-hash allocation of a big group: one pass vs. the Java per-consumer loop.

The Java strategy (``AllocateMessageQueueConsistentHash``) answers for one consumer: it builds
the ring of every consumer's virtual nodes and routes every queue, then keeps its own. A tool
that shows the whole group that way repeats it per consumer: O(C x (C*V + Q) log). mqctl builds
the ring once and routes each queue once: O((C*V + Q) log).

Runs both over the same input (16,384 queues on 16 brokers, 2,000 consumers, 10 virtual
nodes, fixed seed), checks they agree, and prints the times and the ratio. The per-consumer
loop runs in full unless ``--naive-consumers N`` limits it to the first N consumers, in which
case its time is extrapolated linearly (each consumer's call costs the same) and the output
says so.

    python bench/allocate_consistent_hash.py [--queues 16384] [--consumers 2000]
                                             [--naive-consumers N] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from mqctl.allocate import compute_allocation, sort_inputs
from mqctl.allocate.builtin import ConsistentHash
from mqctl.allocate.reference import RefConsistentHash
from mqctl.models import MessageQueue


def inputs(n_queues: int, n_consumers: int, seed: int = 4) -> tuple[list, list]:
    rng = random.Random(seed)
    brokers = 16
    per = n_queues // brokers
    queues = [MessageQueue("TopicBench", f"broker-{b:02d}", q) for b in range(brokers)
              for q in range(per)]
    queues += [MessageQueue("TopicBench", "broker-00", per + i)
               for i in range(n_queues - len(queues))]
    consumers = [f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}@"
                 f"{rng.randint(1, 99999)}#{rng.randint(10**11, 10**13)}"
                 for _ in range(n_consumers)]
    rng.shuffle(queues)
    return queues, consumers


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queues", type=int, default=16_384)
    ap.add_argument("--consumers", type=int, default=2_000)
    ap.add_argument("--virtual-nodes", type=int, default=10)
    ap.add_argument("--naive-consumers", type=int, default=None,
                    help="run the per-consumer loop for only this many consumers and "
                         "extrapolate (default: all of them)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    queues, consumers = inputs(args.queues, args.consumers)
    v = args.virtual_nodes
    times = []
    result = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        result = compute_allocation("consistent-hash", queues, consumers, virtual_nodes=v)
        times.append(time.perf_counter() - t0)
    assert result is not None
    one_pass = statistics.median(times)
    print(f"input: {len(queues)} queues, {len(consumers)} consumers, {v} virtual nodes")
    print(f"one pass (mqctl, incl. sorting):   median {one_pass:8.3f} s over {args.repeat} runs"
          f" (min {min(times):.3f} s)  {'OK' if one_pass < 1 else 'OVER'} the 1 s target")

    mq_all, cid_all = sort_inputs(queues, consumers)
    members = list(dict.fromkeys(cid_all))
    n = len(members) if args.naive_consumers is None else min(args.naive_consumers,
                                                               len(members))
    ref = RefConsistentHash(virtual_nodes=v)
    t0 = time.perf_counter()
    agree = True
    for cid in members[:n]:
        mine = ref.allocate("G", cid, mq_all, cid_all)
        agree &= sorted(mine) == sorted(result.assignments[cid])
    naive_run = time.perf_counter() - t0
    naive = naive_run * len(members) / n
    how = ("ran in full" if n == len(members)
           else f"EXTRAPOLATED from {n} of {len(members)} consumers ({naive_run:.2f} s)")
    print(f"per-consumer Java-style loop:      {naive:8.3f} s  ({how})")
    print(f"results agree: {agree}")
    print(f"ratio per-consumer / one pass: {naive / one_pass:,.0f}x")
    # the ring itself, for reference
    t0 = time.perf_counter()
    ConsistentHash(virtual_nodes=v).ring(cid_all)
    print(f"ring build alone: {time.perf_counter() - t0:.3f} s "
          f"({len(cid_all) * v} virtual nodes)")


if __name__ == "__main__":
    main()

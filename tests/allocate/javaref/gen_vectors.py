"""Regenerate ``tests/allocate/data/java_vectors.json`` by running RocketMQ's own Java classes.

The expected outputs in that file were produced by the real strategy classes of apache/rocketmq
(commit 8fc57f1468d182eea11c01e089c0250d647dc5f3), not by mqctl. To regenerate (needs a JDK):

    SRC=/path/to/rocketmq
    mkdir -p /tmp/jr/src && cd "$SRC" && for f in \\
      client/src/main/java/org/apache/rocketmq/client/consumer/rebalance/*.java \\
      client/src/main/java/org/apache/rocketmq/client/consumer/AllocateMessageQueueStrategy.java \\
      common/src/main/java/org/apache/rocketmq/common/consistenthash/*.java \\
      common/src/main/java/org/apache/rocketmq/common/message/MessageQueue.java; do
        mkdir -p /tmp/jr/src/$(dirname ${f#*/java/}); cp $f /tmp/jr/src/${f#*/java/}; done
    javac -d /tmp/jr/classes $(find /tmp/jr/src tests/allocate/javaref -name '*.java')
    python tests/allocate/javaref/gen_vectors.py --classes /tmp/jr/classes

``shim/`` replaces the three tiny library helpers the classes import (commons-lang3
``StringUtils``, commons-collections ``CollectionUtils``, RocketMQ's shaded slf4j logger);
``Harness.java`` feeds the cases below and prints each consumer's share. Nothing from
RocketMQ is stored in this repository: only the cases and the answers.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "java_vectors.json"


def realistic_ids(rng: random.Random, n: int) -> list[str]:
    ids = []
    for _ in range(n):
        ip = f"10.{rng.randint(0, 3)}.{rng.randint(0, 9)}.{rng.randint(1, 254)}"
        kind = rng.random()
        if kind < 0.5:
            ids.append(f"{ip}@{rng.randint(1, 99999)}#{rng.randint(10**11, 10**13)}")
        elif kind < 0.8:
            ids.append(f"{ip}@{rng.randint(1, 99999)}")
        else:
            ids.append(f"{ip}@DEFAULT")
    return ids


def queues(rng: random.Random, brokers: list[str], per: list[int], topic: str = "TopicTest"
           ) -> list[list]:
    out = [[topic, b, q] for b, n in zip(brokers, per, strict=True) for q in range(n)]
    return out


def cases() -> list[dict]:
    rng = random.Random(20261122)
    out: list[dict] = []

    def add(name: str, strategy: str, params: dict, qs: list[list], cids: list[str]) -> None:
        qs = list(qs)
        cids = list(cids)
        rng.shuffle(qs)
        rng.shuffle(cids)
        out.append({"id": f"{len(out):03d}-{name}", "strategy": strategy, "params": params,
                    "queues": qs, "consumers": cids})

    # the protocol notes' vector (docs: rocketmq-protocol.md section 10)
    doc_c = ["10.0.0.5@12345#1", "10.0.0.6@23456#2", "10.0.0.7@34567#3"]
    doc_q = queues(rng, ["broker-a", "broker-b"], [4, 4], "TopicOrder")
    for s in ("avg", "avg-by-circle", "consistent-hash"):
        add("doc-vector", s, {}, doc_q, doc_c)
    # RocketMQ's unit tests' inputs
    cp = [f"CID_PREFIX{i}" for i in range(4)]
    add("java-test-avg", "avg", {}, queues(rng, ["brokerName"], [10], "topic"), cp)
    add("java-test-circle", "avg-by-circle", {}, queues(rng, ["brokerName"], [10], "topic"), cp)
    room_q = [["topic", "room1@broker-a" if i < 5 else "room2@broker-b", i] for i in range(10)]
    add("java-test-room", "machine-room", {"rooms": ["room1"]}, room_q, cp[:2])
    for qn, cn in ((20, 10), (10, 20)):
        add("java-test-hash3", "consistent-hash", {"virtual_nodes": 3},
            queues(rng, ["brokerName"], [qn], "topic_test"), [f"CID-{i}" for i in range(cn)])

    # random: avg / circle / consistent hash, duplicates sometimes
    for i in range(150):
        nb = rng.randint(1, 4)
        brokers = [f"broker-{chr(97 + j)}" for j in range(nb)]
        per = [rng.randint(0 if nb > 1 else 1, 16) for _ in brokers]
        topic = rng.choice(["TopicTest", "TopicOrder", "%RETRY%GID_X", "orders.v2"])
        qs = queues(rng, brokers, per, topic)
        if rng.random() < 0.15:  # two topics in one list (not what a client does, still exact)
            qs += queues(rng, ["broker-a"], [rng.randint(1, 6)], "AnotherTopic")
        if not qs:
            qs = [[topic, "broker-a", 0]]
        cids = realistic_ids(rng, rng.randint(1, 24))
        if rng.random() < 0.25:  # pid collision: the same client id twice
            cids.append(rng.choice(cids))
        s = ["avg", "avg-by-circle", "consistent-hash"][i % 3]
        params = {}
        if s == "consistent-hash":
            params = {"virtual_nodes": rng.choice([0, 1, 2, 3, 10, 10, 10, 32])}
        add(f"random-{s}", s, params, qs, cids)

    # Java String order (UTF-16 code units) vs code points, and UTF-8 hashing
    uni = ["a\uffff@1", "a\U0001F600@2", "\u6d88\u8d39\u8005@3", "b@4", "A@5"]
    for s in ("avg", "avg-by-circle", "consistent-hash"):
        add("unicode", s, {}, queues(rng, ["broker-\u00e9", "broker-a"], [5, 3], "T\u00f6pic"),
            uni)

    # machine room: Java split semantics
    names = ["hz@broker-a", "sh@broker-b", "a@", "@", "@b", "r@b@c", "broker-c", "hz@broker-d",
             "bj@broker-e"]
    for _i in range(30):
        bs = rng.sample(names, rng.randint(1, len(names)))
        qs = queues(rng, bs, [rng.randint(1, 8) for _ in bs])
        rooms = rng.sample(["hz", "sh", "bj", "r", "a"], rng.randint(1, 3))
        cids = realistic_ids(rng, rng.randint(1, 12))
        if rng.random() < 0.2:
            cids.append(cids[0])
        add("random-room", "machine-room", {"rooms": sorted(rooms)}, qs, cids)

    # machine room nearby
    rooms = ["hz", "sh", "bj", "gz"]
    for i in range(45):
        brooms = rng.sample(rooms, rng.randint(1, 4))
        bs = [f"{r}-broker-{j}" for r in brooms for j in range(rng.randint(1, 2))]
        qs = queues(rng, bs, [rng.randint(1, 8) for _ in bs])
        crooms = rng.sample(rooms, rng.randint(1, 4))
        cids = [f"{rng.choice(crooms)}-{c}" for c in realistic_ids(rng, rng.randint(1, 14))]
        if rng.random() < 0.15:
            cids.append(cids[-1])
        inner = ["avg", "avg-by-circle", "consistent-hash"][i % 3]
        params: dict = {"inner": inner}
        if inner == "consistent-hash":
            params["virtual_nodes"] = rng.choice([3, 10])
        add(f"random-nearby-{inner}", "machine-room-nearby", params, qs, cids)
    # nearby with custom regexes: room from the IP's third octet, broker prefix before '_'
    for _i in range(10):
        bs = [f"idc{r}_broker{j}" for r in rng.sample(range(4), rng.randint(1, 4))
              for j in range(2)]
        qs = queues(rng, bs, [rng.randint(1, 6) for _ in bs])
        cids = [f"10.0.{rng.randint(0, 3)}.{rng.randint(1, 200)}@{rng.randint(1, 999)}"
                for _ in range(rng.randint(1, 10))]
        add("nearby-regex", "machine-room-nearby",
            {"inner": "avg", "broker_room_regex": r"idc(\d+)_",
             "consumer_room_regex": r"\d+\.\d+\.(\d+)\."}, qs, cids)
    # nearby errors: an empty room (Java throws IllegalArgumentException)
    add("nearby-empty-broker-room", "machine-room-nearby", {"inner": "avg"},
        queues(rng, ["-broker-a", "hz-broker-b"], [2, 2]), ["hz-c1", "hz-c2"])
    add("nearby-no-consumer-room", "machine-room-nearby",
        {"inner": "avg", "consumer_room_regex": r"(\w+)-"},
        queues(rng, ["hz-broker-a"], [3]), ["hz-c1", "nodash"])
    return out


def harness_input(cs: list[dict]) -> str:
    lines = []
    for c in cs:
        p = c["params"]
        s = c["strategy"]
        if s == "avg":
            spec = "avg"
        elif s == "avg-by-circle":
            spec = "circle"
        elif s == "consistent-hash":
            spec = f"hash {p.get('virtual_nodes', 10)}"
        elif s == "machine-room":
            spec = "room " + ",".join(p["rooms"])
        else:
            inner = {"avg": "avg", "avg-by-circle": "circle", "consistent-hash": "hash"}[p["inner"]]
            spec = (f"nearby {inner} {p.get('virtual_nodes', 10)} "
                    f"{p.get('broker_room_regex', '([^-]*)')} "
                    f"{p.get('consumer_room_regex', '([^-]*)')}")
        lines += [f"CASE {c['id']}", f"STRATEGY {spec}", "CIDS " + "\t".join(c["consumers"])]
        lines += [f"MQ {t}\t{b}\t{q}" for t, b, q in c["queues"]]
        lines.append("END")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--classes", required=True, help="javac output: RocketMQ classes + shims")
    args = ap.parse_args()
    cs = cases()
    proc = subprocess.run(["java", "-cp", args.classes, "Harness"], input=harness_input(cs),
                          capture_output=True, text=True, encoding="utf-8", check=True)
    by_id = {c["id"]: c for c in cs}
    cur = None
    sorted_cache: dict[str, list] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("CASE "):
            cur = by_id[line[5:]]
            cur["expected"] = {}
            sorted_cache[cur["id"]] = java_sorted(cur["queues"])
        elif line.startswith("C "):
            assert cur is not None
            cid, _, idx = line[2:].partition("\t")
            mq_all = sorted_cache[cur["id"]]
            got = [mq_all[int(i)] for i in idx.split()] if idx else []
            assert len({tuple(q) for q in got}) == len(got), "a queue twice in one share"
            cur["expected"][cid] = got
        elif line.startswith("ERR "):
            assert cur is not None
            cur.pop("expected", None)
            cur["error"] = line[4:]
    for c in cs:
        assert "expected" in c or "error" in c, c["id"]
    doc = {"source": "apache/rocketmq 8fc57f1468d182eea11c01e089c0250d647dc5f3 strategy classes "
                     "run by tests/allocate/javaref/Harness.java",
           "cases": cs}
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n",
                   encoding="utf-8")
    print(f"{len(cs)} cases -> {OUT}")


def java_sorted(qs: list[list]) -> list[list]:
    """``Collections.sort`` of MessageQueue: String.compareTo is UTF-16 code-unit order."""
    def key(q: list) -> tuple:
        return (q[0].encode("utf-16-be"), q[1].encode("utf-16-be"), q[2])

    return sorted(qs, key=key)


if __name__ == "__main__":
    main()

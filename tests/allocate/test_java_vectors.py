"""Every strategy against answers produced by RocketMQ's own Java classes.

``data/java_vectors.json`` holds 248 cases (inputs shuffled; expected shares computed by the
apache/rocketmq strategy classes themselves, @8fc57f1, run once in a scratch workspace: by the
project's rule, no build recipe for third-party code is kept in the repository): the protocol
notes' vector, the inputs of RocketMQ's unit tests, random groups with pid collisions, Java
String order for non-ASCII ids, MACHINE_ROOM broker names that ``String.split`` treats oddly,
and MACHINE_ROOM_NEARBY with default and custom room regexes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqctl.allocate import compute_allocation
from mqctl.allocate.base import sort_inputs, sort_queues
from mqctl.allocate.reference import (
    JavaCheckError,
    RefAveragely,
    RefAveragelyByCircle,
    RefByMachineRoom,
    RefConsistentHash,
    RefMachineRoomNearby,
    reference_loop,
)
from mqctl.errors import UsageError
from mqctl.models import MessageQueue

DATA = json.loads((Path(__file__).parent / "data" / "java_vectors.json").read_text("utf-8"))
CASES = DATA["cases"]


def mq(t: list) -> MessageQueue:
    return MessageQueue(t[0], t[1], t[2])


def expected(case: dict) -> dict[str, list[MessageQueue]]:
    return {c: sort_queues(mq(q) for q in qs) for c, qs in case["expected"].items()}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_whole_group_matches_java(case):
    queues = [mq(q) for q in case["queues"]]
    if "error" in case:
        with pytest.raises(UsageError, match="machine room is empty"):
            compute_allocation(case["strategy"], queues, case["consumers"], **case["params"])
        return
    got = compute_allocation(case["strategy"], queues, case["consumers"], **case["params"])
    assert got.assignments == expected(case)


def _reference(case: dict):
    p = case["params"]
    s = case["strategy"]
    simple = {"avg": RefAveragely, "avg-by-circle": RefAveragelyByCircle,
              "consistent-hash": RefConsistentHash}
    if s in simple:
        return simple[s](**p)
    if s == "machine-room":
        return RefByMachineRoom(**p)
    rest = {k: v for k, v in p.items() if k != "inner"}
    return RefMachineRoomNearby(inner=simple[p["inner"]](**rest), **rest)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_per_consumer_reference_matches_java(case):
    """The statement-by-statement transliteration agrees too (so the bench baseline is fair)."""
    mq_all, cid_all = sort_inputs([mq(q) for q in case["queues"]], case["consumers"])
    ref = _reference(case)
    if "error" in case:
        with pytest.raises(JavaCheckError, match="Machine room is null"):
            reference_loop(ref, "G", mq_all, cid_all)
        return
    assert reference_loop(ref, "G", mq_all, cid_all) == expected(case)


def test_vectors_cover_what_they_claim():
    kinds = {c["strategy"] for c in CASES}
    assert kinds == {"avg", "avg-by-circle", "consistent-hash", "machine-room",
                     "machine-room-nearby"}
    assert any(len(set(c["consumers"])) < len(c["consumers"]) for c in CASES)
    assert any("error" in c for c in CASES)
    assert any(c["params"].get("virtual_nodes") == 0 for c in CASES)

"""Allocate part: --virtual-nodes is capped (MAX_VIRTUAL_NODES) with a
usage error, before any ring is built; the ring's total size is capped as well."""

from __future__ import annotations

import time

import pytest
from conftest import run_cli

from mqctl.allocate.builtin import MAX_RING_ENTRIES, MAX_VIRTUAL_NODES, ConsistentHash
from mqctl.errors import UsageError


def test_huge_virtual_node_count_is_a_usage_error_at_once():
    t = time.perf_counter()
    r = run_cli(["allocate", "--strategy", "consistent-hash", "--virtual-nodes", "100000000",
                 "--queues", "broker-a:8", "--consumers", "2"])
    took = time.perf_counter() - t
    assert r.exit_code == 2, r.stderr
    assert f"at most {MAX_VIRTUAL_NODES:,}" in r.stderr and "hint:" in r.stderr
    assert "Traceback" not in r.stderr and took < 10


def test_the_cap_itself_is_accepted_and_one_more_is_not():
    r = run_cli(["allocate", "--strategy", "consistent-hash", "--virtual-nodes",
                 str(MAX_VIRTUAL_NODES), "--queues", "broker-a:8", "--consumers", "2", "-o",
                 "json"])
    assert r.exit_code == 0, r.stderr
    got = sorted(q for c in r.json["consumers"] for q in c["queues"]) if isinstance(
        r.json, dict) and "consumers" in r.json else None
    assert got is None or len(got) == 8
    with pytest.raises(UsageError, match="virtual node count"):
        ConsistentHash(virtual_nodes=MAX_VIRTUAL_NODES + 1)


def test_ring_size_is_capped():
    s = ConsistentHash(virtual_nodes=MAX_VIRTUAL_NODES)
    n = MAX_RING_ENTRIES // MAX_VIRTUAL_NODES + 1
    with pytest.raises(UsageError, match="ring entries"):
        s.ring([f"c{i}" for i in range(n)])
    assert len(s.ring(["a", "b"])) == 2 * MAX_VIRTUAL_NODES

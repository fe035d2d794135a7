"""The consistent-hash ring of ``AllocateMessageQueueConsistentHash``, built once per group.

Facts from apache/rocketmq ``common/.../consistenthash/ConsistentHashRouter.java`` (and
``VirtualNode.java``), read for behaviour only:

* the ring is a ``TreeMap<Long, VirtualNode>``; physical nodes are added in ``cidAll`` order,
  each with ``virtualNodeCnt`` virtual nodes whose key is ``"<clientId>-<replicaIndex>"``;
* ``replicaIndex`` starts at ``getExistingReplicas(node)``: the number of ring entries that
  already belong to a node with the same key, so a duplicate client id continues at ``-10``,
  ``-11``, ... instead of re-inserting the same keys;
* ``ring.put`` overwrites an equal hash: a later virtual node wins a collision;
* ``MD5Hash.hash`` is the first four bytes of MD5 over the UTF-8 bytes, big-endian, unsigned;
* ``routeNode(key)``: ``tailMap(hash(key))``'s first entry, wrapping to the ring's first.

The Java strategy rebuilds this ring and routes every queue once per consumer (O(C x Q) for a
group); here the ring is built once and every queue is routed once (O((C*V + Q) log(C*V))).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable

HashFunction = Callable[[str], int]


def md5_hash(key: str) -> int:
    """``ConsistentHashRouter.MD5Hash.hash``: first 4 MD5 bytes, big-endian, unsigned.

    Java's ``getBytes(UTF_8)`` turns a lone surrogate into ``?``; ``errors="replace"`` does too.
    """
    return int.from_bytes(hashlib.md5(key.encode("utf-8", "replace")).digest()[:4], "big")


class HashRing:
    """An immutable ring over physical node keys (client ids)."""

    __slots__ = ("_keys", "_owners", "_hash")

    def __init__(self, nodes: Iterable[str], virtual_nodes: int,
                 hash_function: HashFunction | None = None) -> None:
        if virtual_nodes < 0:
            # ConsistentHashRouter.addNode: "illegal virtual node counts :" + vNodeCount
            raise ValueError(f"illegal virtual node counts: {virtual_nodes}")
        h = hash_function or md5_hash
        ring: dict[int, str] = {}
        live: Counter[str] = Counter()  # ring entries per physical key (getExistingReplicas)
        for node in nodes:
            existing = live[node]
            for i in range(virtual_nodes):
                key = h(f"{node}-{i + existing}")
                prev = ring.get(key)
                if prev is not None:
                    live[prev] -= 1
                ring[key] = node
                live[node] += 1
        self._keys = sorted(ring)
        self._owners = [ring[k] for k in self._keys]
        self._hash = h

    def __len__(self) -> int:
        return len(self._keys)

    def route(self, object_key: str) -> str | None:
        """``routeNode``: the owner of the first ring entry at or after the key's hash."""
        if not self._keys:
            return None
        i = bisect_left(self._keys, self._hash(object_key))
        return self._owners[i if i < len(self._keys) else 0]

    def entries(self) -> list[tuple[int, str]]:
        """(hash, owner) in ring order."""
        return list(zip(self._keys, self._owners, strict=True))

"""``sticky``: a balanced allocation that keeps queues where they are.

Given the previous assignment (``previous={client_id: [MessageQueue]}``), the queue set and the
consumer list:

1. every consumer keeps the queues it had that still exist (a queue that two consumers claim
   stays with the first in client-id order);
2. the ``Q mod C`` consumers that keep the most get a quota of ``ceil(Q/C)``, the others
   ``floor(Q/C)`` -- this choice makes the excess (queues that must be given up) minimal;
3. a consumer over its quota gives up its last queues (in queue order);
4. free queues (new, orphaned or given up) go, in queue order, to the consumer furthest below
   its quota (ties: client-id order).

So counts differ by at most one, and no balanced allocation moves fewer queues.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Any

from mqctl.allocate import AllocationStrategy
from mqctl.models import MessageQueue

__version__ = "0.1.0"
__all__ = ["StickyStrategy", "__version__"]


class StickyStrategy(AllocationStrategy):
    name = "sticky"
    description = "balanced (counts differ by <= 1), keeps queues in place (--previous FILE)"
    uses_previous = True

    def __init__(self, previous: Mapping[str, Sequence[MessageQueue]] | None = None,
                 **params: Any) -> None:
        super().__init__(previous=previous, **params)
        self.previous = {str(c): list(qs) for c, qs in (previous or {}).items()}

    def allocate_group(self, group: str, mq_all: Sequence[MessageQueue],
                       cid_all: Sequence[str]) -> dict[str, list[MessageQueue]]:
        members = list(dict.fromkeys(cid_all))  # cid_all arrives sorted
        out: dict[str, list[MessageQueue]] = {c: [] for c in members}
        if not members or not mq_all:
            return out
        order = {c: i for i, c in enumerate(members)}
        position = {mq: i for i, mq in enumerate(mq_all)}  # mq_all arrives sorted

        # 1. keep what is still there
        claimed: set[MessageQueue] = set()
        kept: dict[str, list[MessageQueue]] = {}
        for c in members:
            mine = sorted({q for q in self.previous.get(c, ()) if q in position},
                          key=position.__getitem__)
            kept[c] = [q for q in mine if q not in claimed]
            claimed.update(kept[c])

        # 2. quotas: the remainder goes to those who keep the most
        base, extra = divmod(len(mq_all), len(members))
        by_kept = sorted(members, key=lambda c: (-len(kept[c]), order[c]))
        quota = {c: base + (1 if i < extra else 0) for i, c in enumerate(by_kept)}

        # 3. give up the excess
        free: list[MessageQueue] = [q for q in mq_all if q not in claimed]
        for c in members:
            if len(kept[c]) > quota[c]:
                free.extend(kept[c][quota[c]:])
                kept[c] = kept[c][:quota[c]]
        free.sort(key=position.__getitem__)

        # 4. fill the deficits, largest first
        heap = [(-(quota[c] - len(kept[c])), order[c], c) for c in members
                if quota[c] > len(kept[c])]
        heapq.heapify(heap)
        for q in free:
            neg, i, c = heapq.heappop(heap)
            kept[c].append(q)
            if neg + 1 < 0:
                heapq.heappush(heap, (neg + 1, i, c))
        for c in members:
            out[c] = sorted(kept[c], key=position.__getitem__)
        return out

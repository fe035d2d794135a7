"""``mqctl route`` and ``mqctl cluster``: the rows of a topic's route and of the cluster's
brokers (pure)."""

from __future__ import annotations

from typing import Any

from mqctl.models import (
    TopicRoute,
)


def route_rows(route: TopicRoute) -> list[dict[str, Any]]:
    from mqctl.models import decode_perm

    qd = {q.broker_name: q for q in route.queues}
    rows = []
    for b in route.brokers:
        q = qd.get(b.broker_name)
        for bid, addr in sorted(b.addrs.items()):
            rows.append({"cluster": b.cluster, "broker": b.broker_name, "broker_id": bid,
                         "role": "master" if bid == 0 else "slave", "addr": addr,
                         "read_queues": q.read_queue_nums if q else 0,
                         "write_queues": q.write_queue_nums if q else 0,
                         "perm": q.perm if q else None,
                         "perm_flags": decode_perm(q.perm) if q else ""})
    return rows

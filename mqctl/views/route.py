"""``mqctl route`` and ``mqctl cluster``: the rows of a topic's route and of the cluster's
brokers (pure)."""

from __future__ import annotations

from typing import Any

from mqctl.models import ClusterInfo, TopicRoute, decode_perm
from mqctl.render import Column, Result, Table


def route_rows(route: TopicRoute) -> list[dict[str, Any]]:
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


def route_result(topic: str, r: TopicRoute) -> Result:
    """``mqctl route``: the route's rows, its JSON and the note on the readable queues."""
    rows = route_rows(r)
    readable = sum(q.read_queue_nums for q in r.queues if q.readable)
    data = {"topic": topic, **r.to_dict(),
            "brokers": rows, "subscribeQueues": readable,
            "totals": {"brokers": len(r.brokers),
                       "readQueues": sum(q.read_queue_nums for q in r.queues),
                       "writeQueues": sum(q.write_queue_nums for q in r.queues)}}
    cols = [Column("cluster", "CLUSTER"), Column("broker", "BROKER"),
            Column("broker_id", "ID", "right"), Column("role", "ROLE"), Column("addr", "ADDR"),
            Column("read_queues", "READ Q", "right"), Column("write_queues", "WRITE Q", "right"),
            Column("perm", "PERM", "right"), Column("perm_flags", "FLAGS")]
    return Result([Table(cols, rows, title=f"route of {topic}")], data=data,
                  notes=[f"{len(r.brokers)} broker(s); {readable} readable queue(s) for the "
                         "consumers to share"])


def cluster_result(info: ClusterInfo) -> Result:
    """``mqctl cluster``: one row per broker address, as the name server knows them."""
    rows = []
    for cname, bnames in sorted(info.clusters.items()):
        for bn in bnames:
            b = info.brokers.get(bn)
            for bid, addr in sorted((b.addrs if b else {}).items()):
                rows.append({"cluster": cname, "broker": bn, "broker_id": bid,
                             "role": "master" if bid == 0 else "slave", "addr": addr})
    return Result([Table([Column("cluster", "CLUSTER"), Column("broker", "BROKER"),
                          Column("broker_id", "ID", "right"), Column("role", "ROLE"),
                          Column("addr", "ADDR")], rows, name="brokers")])

"""Helpers for the lock-view tests: hand-built running infos and group captures."""

from __future__ import annotations

from mqctl.models import (
    BrokerData,
    ConsumerConnection,
    ConsumerRunningInfo,
    MessageQueue,
    ProcessQueueInfo,
    Subscription,
)
from mqctl.views.members import ClientView, GroupMembers

AVG = "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely@1a2b"
CIRCLE = "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle@9"
NOW = 1_700_000_000_000


def mq(q: str, topic: str = "T") -> MessageQueue:
    broker, qid = q.rsplit(":", 1)
    return MessageQueue(topic, broker, int(qid))


def pq(locked: bool = True, age: int | None = 1000, *, now: int = NOW, dropped: bool = False,
       tries: int = 0) -> ProcessQueueInfo:
    return ProcessQueueInfo(locked=locked, last_lock_timestamp=(now - age) if age is not None
                            else 0, dropped=dropped, try_unlock_times=tries)


def running(table: dict[MessageQueue, ProcessQueueInfo], *, orderly: bool = True,
            strategy: str = AVG, topics: tuple[str, ...] = ("T",),
            consume_type: str = "CONSUME_PASSIVELY",
            start_ts: int | None = None) -> ConsumerRunningInfo:
    props = {"allocateMessageQueueStrategy": strategy,
             "PROP_CONSUMEORDERLY": "true" if orderly else "false",
             "PROP_CONSUME_TYPE": consume_type}
    if start_ts is not None:
        props["PROP_CONSUMER_START_TIMESTAMP"] = str(start_ts)
    return ConsumerRunningInfo(
        properties=props,
        subscriptions=tuple(Subscription(t, "*") for t in topics), mq_table=table)


def capture(clients: dict[str, ConsumerRunningInfo | str], *, members: list[str] | None = None,
            model: str = "CLUSTERING", consume_type: str = "CONSUME_PASSIVELY",
            connections: dict[str, int] | None = None, group: str = "G",
            topics: tuple[str, ...] = ("T",),
            addrs: dict[str, str] | None = None) -> GroupMembers:
    """A GroupMembers as capture_members would build it; a str value = running-info error;
    ``addrs``: a client's clientAddr list as the member lists show it (ClientView.addr)."""
    views: dict[str, ClientView] = {}
    ids = list(clients) if members is None else members
    for cid in dict.fromkeys(ids):
        cv = ClientView(cid, brokers=["broker-a"])
        info = clients.get(cid)
        if isinstance(info, ConsumerRunningInfo):
            cv.running = info
        else:
            cv.running_error = info or "timeout"
        cv.connections = (connections or {}).get(cid, 1)
        cv.addr = (addrs or {}).get(cid, "")
        views[cid] = cv
    raw: list[str] = []
    for cid in dict.fromkeys(ids):
        raw += [cid] * (connections or {}).get(cid, 1)
    conn = (ConsumerConnection((), consume_type, model, "CONSUME_FROM_LAST_OFFSET",
                               {t: Subscription(t, "*") for t in topics}) if views else None)
    brokers = [BrokerData("c", "broker-a", {0: "127.0.0.1:10911"}),
               BrokerData("c", "broker-b", {0: "127.0.0.1:10921"})]
    return GroupMembers(group, brokers, {"broker-a": raw, "broker-b": list(raw)}, conn, views,
                        {t: 8 for t in topics}, [])


def queues(n_per_broker: int = 4, topic: str = "T") -> list[MessageQueue]:
    return [MessageQueue(topic, b, i) for b in ("broker-a", "broker-b")
            for i in range(n_per_broker)]


def lock_crash_scenario(version: int, **o2: object) -> dict:
    """The real lock-crash setup (../shared/samples/real/<v>/lock-crash): orderly group LC_G on
    LC_T (4 queues on each of two brokers), consumers o1 and o2 of ``version``; ``o2`` adds
    behaviour to o2 (crash_at, hang_at, leave_at, restart_at, ...)."""
    return {"name": "lc", "running_info_timeout": 0.3,
            "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
            "topics": [{"name": "LC_T", "queues": 4, "rate": 1, "history": "10m"}],
            "groups": [{"name": "LC_G", "orderly": True, "topics": ["LC_T"], "consume_from":
                        "CONSUME_FROM_LAST_OFFSET",
                        "consumers": [{"id": "127.0.1.91@o1", "version": version},
                                      {"id": "127.0.1.92@o2", "version": version, **o2}]}]}


def lock_crash_show(cli, sim, state_dir, group: str = "LC_G") -> dict:
    """``locks show`` of the lock-crash group as JSON, with its state in ``state_dir``."""
    r = cli(["--timeout", "3", "locks", "show", "-n", sim.namesrv_addr, "--group", group,
             "--state-dir", str(state_dir), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    return r.json


def rows_by_queue(d: dict) -> dict[str, dict]:
    """``locks show -o json``'s queues by their ``broker:id``."""
    return {q["queue"]: q for q in d["queues"]}

"""An ``Admin`` stand-in that answers with the bodies real 4.9.3 / 5.3.3 brokers sent
(../shared/samples/real/<v>/...): for the view tests over the real corpus.

Only what a view asks is served; a request the corpus did not record raises, so a test can
never pass on an invented answer by accident (answers derived from corpus values are built
by the test itself, in plain sight).
"""

from __future__ import annotations

import json
from typing import Any

from conftest import REAL_CORPUS

from mqctl.admin import NotFoundError
from mqctl.errors import BrokerError
from mqctl.models import (
    BrokerData,
    ClusterInfo,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    MessageQueue,
    QueueTimeSpan,
    TopicRoute,
    TopicStats,
)
from mqctl.remoting import fastjson

REAL = REAL_CORPUS
VERSIONS = ("4.9.3", "5.3.3")


def exchange(version: str, rel: str) -> dict[str, Any]:
    return json.loads((REAL / version / rel).read_text())


def body(version: str, rel: str) -> Any:
    """The response body as mqctl parses it (fastjson: object keys that are objects)."""
    return fastjson.loads(exchange(version, rel)["response"]["body_text"].encode())


def sent_at(version: str, rel: str) -> int:
    return int(exchange(version, rel)["request"]["_sent_at_ms"])


class CorpusAdmin:
    """Serves parsed corpus bodies, keyed by broker name (addresses come from the real 106)."""

    concurrency = 4

    def __init__(self, version: str, *, stats: dict[str, Any] | None = None,
                 spans: dict[str, Any] | None = None, tstats: dict[str, Any] | None = None,
                 routes: dict[str, Any] | None = None, connection: Any = None,
                 running: dict[str, Any] | None = None, min_offsets: dict[MessageQueue, int]
                 | None = None, brokers: tuple[str, ...] = ("broker-a", "broker-b"),
                 topics: list[str] | None = None, no_topic: dict[str, Any] | None = None,
                 no_retry_route: tuple[str, ...] = ()):
        self.version = version
        self.info = ClusterInfo.from_body(body(version,
                                               "other-requests/106_getBrokerClusterInfo"
                                               ".namesrv.json"))
        self.brokers = [self.info.brokers[b] for b in brokers]
        self.by_addr = {b.master_addr: b.broker_name for b in self.brokers}
        self.stats, self.spans, self.tstats = stats or {}, spans or {}, tstats or {}
        # GET_CONSUME_STATS without a topic, per broker (default: the same as with one)
        self.no_topic = no_topic
        self.routes = routes or {}
        self.connection = connection
        self.running = running or {}
        self.mins = min_offsets or {}
        self.topics = topics or []
        self.no_retry_route = no_retry_route
        self.calls: list[tuple[Any, ...]] = []

    def _broker(self, addr: str) -> str:
        return self.by_addr[addr]

    # -- the never-committed rule (mqctl.views.offsets.committed_offsets)

    async def query_offset(self, group: str, mq: MessageQueue, addr: str) -> int | None:
        """QUERY_CONSUMER_OFFSET as recorded (never-committed/14_*): code 22 = None."""
        self.calls.append(("query_offset", mq))
        rel = (f"never-committed/14_queryConsumerOffset_{group}_{self._broker(addr)}_"
               f"q{mq.queue_id}.json")
        if not (REAL / self.version / rel).is_file():
            raise BrokerError(1, f"no recorded QUERY_CONSUMER_OFFSET {rel}", addr)
        resp = exchange(self.version, rel)["response"]
        if resp["code"] == 22:  # QUERY_NOT_FOUND
            return None
        return int(resp["extFields"]["offset"])

    async def broker_version(self, addr: str) -> int | None:
        """GET_BROKER_RUNTIME_INFO's brokerVersion: recorded on broker-a only; both brokers of
        a corpus cluster run the same release (README), so broker-b answers the same."""
        self.calls.append(("broker_version", self._broker(addr)))
        table = body(self.version, "other-requests/28_getBrokerRuntimeInfo.broker-a.json")
        return int(table["table"]["brokerVersion"])

    async def all_consumer_offsets(self, addr: str) -> Any:
        """GET_ALL_CONSUMER_OFFSET: broker-a's recorded answer (other-requests/43_*);
        broker-b's was not recorded, so its offset table is the file its
        ConsumerOffsetManager persisted (store-files/broker-b_consumerOffset.json: the same
        ``encode()`` GET_ALL_CONSUMER_OFFSET returns, copied at 21:03 after every scenario)."""
        from mqctl.remoting import fastjson

        broker = self._broker(addr)
        self.calls.append(("all_consumer_offset", broker))
        if broker == "broker-a":
            text = exchange(self.version,
                            "other-requests/43_getAllConsumerOffset.broker-a.json"
                            )["response"]["body_text"]
        else:
            text = (REAL / self.version / "store-files" /
                    f"{broker}_consumerOffset.json").read_text()
        return fastjson.loads(text.encode())

    async def group_brokers(self, group: str, topics: Any = ()) -> list[BrokerData]:
        return list(self.brokers)

    async def cluster_info(self) -> ClusterInfo:
        return self.info

    async def topic_list(self) -> list[str]:
        return sorted(self.topics)

    async def topic_route(self, topic: str, *, cached: bool = True) -> TopicRoute:
        if topic not in self.routes:
            raise NotFoundError(f"topic {topic!r} has no route on the name server")
        r = TopicRoute.from_body(topic, self.routes[topic])
        keep = {b.broker_name for b in self.brokers}  # the brokers this fake serves
        return TopicRoute(topic, tuple(b for b in r.brokers if b.broker_name in keep),
                          tuple(q for q in r.queues if q.broker_name in keep))

    async def group_route(self, group: str) -> TopicRoute | None:
        """``%RETRY%<group>``'s route: a recorded one; None where the corpus shows there is
        none (``no_retry_route``: mqadmin ``consumerProgress -g NC_NEVER`` fails with "No
        topic route info in name server for the topic: %RETRY%NC_NEVER", both versions);
        else it was not recorded (an error: the view must treat it as unknown)."""
        topic = "%RETRY%" + group
        if topic in self.routes:
            return await self.topic_route(topic)
        if group in self.no_retry_route:
            return None
        raise BrokerError(1, f"no recorded route of {topic}", "namesrv")

    async def consumer_connection(self, group: str, target: Any) -> ConsumerConnection | None:
        return (ConsumerConnection.from_body(self.connection) if self.connection is not None
                else None)

    async def running_infos(self, group: str, client_ids: Any, brokers: Any
                            ) -> dict[str, ConsumerRunningInfo]:
        return {c: ConsumerRunningInfo.from_body(self.running[c]) for c in client_ids}

    async def consume_stats(self, group: str, addr: str, topic: str | None = None
                            ) -> ConsumeStats:
        self.calls.append(("consume_stats", self._broker(addr), topic))
        if topic is None and self.no_topic is not None:
            return ConsumeStats.from_body(self.no_topic[self._broker(addr)])
        return ConsumeStats.from_body(self.stats[self._broker(addr)])

    async def time_spans(self, topic: str, group: str, addr: str) -> list[QueueTimeSpan]:
        self.calls.append(("time_spans", self._broker(addr)))
        b = self._broker(addr)
        if b not in self.spans:
            raise BrokerError(1, f"no recorded QUERY_CONSUME_TIME_SPAN for {b}", addr)
        return [QueueTimeSpan.from_body(s) for s in self.spans[b]["consumeTimeSpanSet"]]

    async def topic_stats(self, topic: str, addr: str) -> TopicStats:
        self.calls.append(("topic_stats", self._broker(addr)))
        b = self._broker(addr)
        if b not in self.tstats:
            raise BrokerError(1, f"no recorded GET_TOPIC_STATS_INFO for {b}", addr)
        return TopicStats.from_body(self.tstats[b])

    async def min_offset(self, mq: MessageQueue, addr: str) -> int:
        self.calls.append(("min_offset", mq))
        return self.mins[mq]

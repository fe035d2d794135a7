"""The simulated broker alone, with no cluster and no simulated consumer: a fake of its port
(``mqctl.sim.ports.BrokerSite``: the clock, the servers' addresses, the retry topics) and fake
clients on its channels (``SimClient``) are all it needs."""

from __future__ import annotations

from typing import Any

from mqctl.models import MessageQueue
from mqctl.sim.broker import CHANNEL_EXPIRED_MS, LOCK_LEASE_MS, SimBroker
from mqctl.sim.clock import SimClock
from mqctl.sim.ports import Channel

START = 1_700_000_000_000
ADDR = "10.0.0.1:10911"


class FakeServer:
    def __init__(self, addr: str):
        self.addr = addr


class FakeSite:
    """BrokerSite: a manual clock, one listening server, and the retry topics asked for."""

    def __init__(self) -> None:
        self.clock = SimClock("manual", start_ms=START)
        self.scenario: Any = None  # only request handlers read it
        self.servers = {"broker-a": FakeServer(ADDR)}
        self.retry_topics_for: list[str] = []

    def ensure_retry_topic(self, group: str, broker: str | None = None) -> None:
        self.retry_topics_for.append(group)


class FakeClient:
    """SimClient: records the broker's NOTIFY_CONSUMER_IDS_CHANGED."""

    hung = False
    spec: Any = None

    def __init__(self) -> None:
        self.notified: list[str] = []

    def notify_ids_changed(self, broker_addr: str = "") -> None:
        self.notified.append(broker_addr)

    def running_info(self) -> dict[str, Any]:
        raise AssertionError("not asked here")

    def reset_offset(self, broker_addr: str, topic: str, timestamp: int,
                     table: dict[MessageQueue, int]) -> None:
        raise AssertionError("not asked here")


def channel(cid: str, client: FakeClient, *, model: str = "CLUSTERING",
            at: int = START) -> Channel:
    return Channel(0, cid, "10.0.0.9:50000", "JAVA", 479, "CONSUME_PASSIVELY", model,
                   "CONSUME_FROM_LAST_OFFSET", {"T": {"subString": "*", "subVersion": 1}}, at,
                   consumer=client)


def test_membership_notifies_through_the_port():
    site = FakeSite()
    b = SimBroker(site, "broker-a")
    c1, c2 = FakeClient(), FakeClient()

    assert b.register("G", channel("c1", c1)) is True
    assert c1.notified == [ADDR]  # a new channel: every member, itself included
    assert site.retry_topics_for == ["G"]
    assert b.register("G", channel("c1", c1)) is False  # the same client's next heartbeat
    assert c1.notified == [ADDR] and site.retry_topics_for == ["G"]

    assert b.register("G", channel("c2", c2)) is True
    assert b.consumer_ids("G") == ["c1", "c2"]
    assert (c1.notified, c2.notified) == ([ADDR, ADDR], [ADDR])
    assert site.retry_topics_for == ["G", "G"]

    assert b.unregister("G", consumer=c2) is True
    assert b.consumer_ids("G") == ["c1"]
    assert (c1.notified, c2.notified) == ([ADDR, ADDR, ADDR], [ADDR])

    c3 = FakeClient()
    assert b.register("B", channel("c3", c3, model="BROADCASTING")) is True
    assert c3.notified == [] and site.retry_topics_for == ["G", "G"]


def test_locks_and_expiry_follow_the_ports_clock():
    site = FakeSite()
    b = SimBroker(site, "broker-a")
    mq = MessageQueue("T", "broker-a", 0)
    assert b.try_lock_batch("G", [mq], "c1") == {mq}
    assert b.try_lock_batch("G", [mq], "c2") == set()
    site.clock.set_manual(START + LOCK_LEASE_MS)
    assert b.try_lock_batch("G", [mq], "c2") == set()  # 60 s is still within the lease
    site.clock.set_manual(START + LOCK_LEASE_MS + 1)
    assert b.try_lock_batch("G", [mq], "c2") == {mq}
    assert b.locks["G"][mq].client_id == "c2"

    c1, c2 = FakeClient(), FakeClient()
    now = site.clock.now_ms()
    b.register("G", channel("c1", c1, at=now))
    b.register("G", channel("c2", c2, at=now + 1))
    site.clock.set_manual(now + CHANNEL_EXPIRED_MS + 1)
    b.scan_expired()  # c1 silent for more than 120 s; no CHANGE event on this path
    assert b.consumer_ids("G") == ["c2"]
    assert c2.notified == [ADDR]

"""The narrow interfaces between the simulator's parts, so that each reads and tests alone.

The cluster (:mod:`mqctl.sim.cluster`) builds the brokers and the simulated clients and wires
them together; the broker and the client never import each other or the cluster. Each sees only
what it uses, as in RocketMQ, where a broker knows a client by its channel
(``ClientChannelInfo`` in ``ConsumerManager``) and a client knows a broker by its address:

* a broker (:class:`mqctl.sim.broker.SimBroker`) sees the cluster it runs in as a
  :class:`BrokerSite` (the clock, the scenario, the servers' addresses, the retry topics), and
  each simulated client in its registry of channels (:class:`Channel`) as a :class:`SimClient`;
* a client (:class:`mqctl.sim.consumer.SimConsumer`) sees the cluster as a
  :class:`ConsumerSite` (the clock and its timers, the route, the brokers' up/down state) and
  each broker as a :class:`BrokerLink`: its requests as direct calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mqctl.models import MessageQueue

if TYPE_CHECKING:
    from mqctl.sim.clock import _Event
    from mqctl.sim.server import ServerConn
    from mqctl.sim.spec import ConsumerSpec, GroupSpec, Scenario


@dataclass
class Channel:
    """One client connection in a broker's registry of a group's consumers
    (``ClientChannelInfo``): a simulated client, or an external one connected over TCP."""

    key: int
    client_id: str
    addr: str
    language: str
    version: int
    consume_type: str
    message_model: str
    consume_from_where: str
    subscriptions: dict[str, dict[str, Any]]  # topic -> SubscriptionData dict
    last_update: int
    consumer: SimClient | None = None  # a simulated client
    conn: ServerConn | None = None  # an external client connected over TCP


# ---------------------------------------------------------------------- shared

class Clock(Protocol):
    """Simulated time in epoch milliseconds (:class:`mqctl.sim.clock.SimClock`)."""

    @property
    def start_ms(self) -> int: ...

    def now_ms(self) -> int: ...


class Timers(Protocol):
    """Callbacks on simulated time (:class:`mqctl.sim.clock.Scheduler`)."""

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> _Event: ...

    def call_every(self, period_ms: int, fn: Callable[[], None], *,
                   first_delay_ms: int | None = None) -> _Event: ...


class Addressed(Protocol):
    """A listening server: its ``host:port``."""

    @property
    def addr(self) -> str: ...


# ---------------------------------------------------------------------- the broker's view

class SimClient(Protocol):
    """What a broker sees of a simulated client behind one of its channels: what
    ``Broker2Client`` can ask of it (NOTIFY_CONSUMER_IDS_CHANGED, GET_CONSUMER_RUNNING_INFO,
    RESET_CONSUMER_CLIENT_OFFSET) and whether it still answers."""

    @property
    def hung(self) -> bool: ...

    @property
    def silent(self) -> bool: ...  # its running info goes unanswered (scenario silent_at)

    @property
    def callbacks_busy(self) -> bool: ...  # every callback thread holds a pushed reset

    @property
    def spec(self) -> ConsumerSpec: ...

    def notify_ids_changed(self, broker_addr: str = "") -> None: ...

    def running_info(self) -> dict[str, Any]: ...

    def reset_offset(self, broker_addr: str, topic: str, timestamp: int,
                     table: dict[MessageQueue, int]) -> None: ...

    def wake_pulls(self, mqs: list[MessageQueue]) -> None: ...


class BrokerSite(Protocol):
    """What a broker sees of the cluster it runs in."""

    @property
    def clock(self) -> Clock: ...

    @property
    def scenario(self) -> Scenario: ...

    @property
    def servers(self) -> Mapping[str, Addressed]: ...

    @property
    def scheduler(self) -> Timers: ...

    def ensure_retry_topic(self, group: str, broker: str | None = None) -> None: ...

    def ensure_topic(self, topic: str, broker: str) -> None: ...


# ---------------------------------------------------------------------- the client's view

class BrokerLink(Protocol):
    """What a simulated client sees of one broker: the requests it sends, as direct calls."""

    @property
    def name(self) -> str: ...

    def register(self, group: str, ch: Channel) -> bool: ...

    def unregister(self, group: str, *, consumer: SimClient | None = None,
                   conn: ServerConn | None = None, client_id: str | None = None,
                   notify: bool = True) -> bool: ...

    def consumer_ids(self, group: str) -> list[str]: ...

    def max_offset(self, topic: str, qid: int) -> int: ...

    def min_offset(self, topic: str, qid: int) -> int: ...

    def search(self, topic: str, qid: int, ts: int, boundary: str = "LOWER") -> int: ...

    def query_offset(self, group: str, topic: str, qid: int) -> int: ...

    def commit(self, group: str, topic: str, qid: int, offset: int) -> bool: ...

    def pop_offset(self, group: str, topic: str, qid: int) -> int | None: ...

    def pull(self, group: str, topic: str, qid: int, offset: int,
             commit: int | None = None, *, pop: bool = False, reader: str = "") -> int: ...

    def try_lock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str
                       ) -> set[MessageQueue]: ...

    def unlock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> None: ...

    def consume_enabled(self, group: str) -> bool: ...

    def send_back(self, group: str, n: int, times: int, max_times: int, *,
                  retry_topic: str | None = None, delay_ms: int | None = None,
                  origins: Sequence[tuple[str, int, int] | None] = ()) -> None: ...

    def reconsume_times(self, topic: str, qid: int, start: int, n: int
                        ) -> list[tuple[int, int]]: ...

    def original_of(self, topic: str, qid: int, offset: int
                    ) -> tuple[str, int, int] | None: ...


class WatchedClient(SimClient, Protocol):
    """A client whose connections the cluster closes once idle (``SimCluster.watch_idle``)."""

    @property
    def group(self) -> GroupSpec: ...

    @property
    def traffic(self) -> dict[str, int]: ...


class ConsumerSite(Protocol):
    """What a simulated client sees of the cluster: the clock and its timers, the name
    server's route, which brokers are up, and the brokers themselves."""

    @property
    def clock(self) -> Clock: ...

    @property
    def scheduler(self) -> Timers: ...

    @property
    def scenario(self) -> Scenario: ...

    @property
    def log_dir(self) -> str | None: ...

    @property
    def namesrv_addr(self) -> str: ...

    @property
    def brokers(self) -> Mapping[str, BrokerLink]: ...

    @property
    def servers(self) -> Mapping[str, Addressed]: ...

    def broker_up(self, name: str) -> bool: ...

    def topic_brokers(self, topic: str) -> list[str]: ...

    def subscribe_queues(self, topic: str) -> list[MessageQueue]: ...

    def watch_idle(self, consumer: WatchedClient) -> None: ...

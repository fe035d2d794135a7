"""The per-broker fan-out: one call on the master of every broker, concurrent and bounded, with
each broker's failure returned next to the others' answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from mqctl.admin.failures import BrokerFailure
from mqctl.errors import ConnectError
from mqctl.models import BrokerData, TopicRoute
from mqctl.remoting.client import fan_out

T = TypeVar("T")


def broker_addr(b: BrokerData) -> str | None:
    """The address a request to broker ``b`` goes to: its master, else any replica
    (``BrokerData.selectBrokerAddr``); None when it has none."""
    return b.master_addr or b.select_addr()


def require_addr(b: BrokerData, where: str = "") -> str:
    """:func:`broker_addr`, or a ConnectError ``broker <name> has no address<where>``."""
    addr = broker_addr(b)
    if addr is None:
        raise ConnectError(f"broker {b.broker_name} has no address{where}")
    return addr


async def per_broker(brokers: Sequence[BrokerData] | TopicRoute,
                     fn: Callable[[str], Awaitable[T]], *,
                     concurrency: int) -> dict[str, T | BrokerFailure]:
    """``fn(master address)`` on every broker, concurrently and bounded; a broker that
    fails (or has no address) maps to a :class:`BrokerFailure` instead of a value."""
    blist = list(brokers.brokers) if isinstance(brokers, TopicRoute) else list(brokers)

    async def one(b: BrokerData) -> T:
        return await fn(require_addr(b, " in the route"))

    out: dict[str, T | BrokerFailure] = {}
    for o in await fan_out(blist, one, concurrency=concurrency):
        if o.ok:
            out[o.item.broker_name] = o.value  # type: ignore[assignment]
        else:
            assert o.error is not None
            out[o.item.broker_name] = BrokerFailure(o.item.broker_name, o.item.master_addr,
                                                    o.error)
    return out

"""Whether the cluster knows a group (read-only), for a view that found nothing of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.admin import (
    Admin,
    NotFoundError,
)
from mqctl.errors import MqctlError
from mqctl.remoting.client import fan_out

if TYPE_CHECKING:
    from mqctl.views.progress import GroupProgress


async def group_exists(admin: Admin, group: str) -> bool | None:
    """Whether the cluster knows ``group``: its ``%RETRY%`` topic has a route, or a master
    keeps its subscription group (brokers create both when the group's first consumer
    registers, autoCreateSubscriptionGroup). ``None`` when it cannot tell (the name server
    or a master did not answer). Read-only."""
    try:
        if await admin.group_route(group) is not None:
            return True
        info = await admin.cluster_info()
    except MqctlError:
        return None
    masters = [b.master_addr for b in info.brokers.values() if b.master_addr]
    outs = await fan_out(masters, admin.subscription_groups, concurrency=admin.concurrency)
    if any(o.ok and group in (o.value or []) for o in outs):
        return True
    return None if any(not o.ok for o in outs) or not masters else False


def read_nothing_of(p: GroupProgress) -> bool:
    """The capture shows nothing of the group itself: no online member, no failure, and no
    queue with a committed offset (or one that may have it). That is how a group no broker
    knows reads, with a topic too: a broker answers GET_CONSUME_STATS with a topic for any
    group name, with 0 everywhere (corpus
    other-requests/208_getConsumeStats_NO_SUCH_GROUP), so its queues show up as never
    committed. The views then ask :func:`require_group` (the same rule with
    and without ``-t``)."""
    online = p.members is not None and p.members.online_state
    return not p.failures and not online and all(q.committed is False for q in p.queues)


async def require_group(admin: Admin, group: str) -> None:
    """For a command that found nothing: a usage error (exit 2) when no broker knows the
    group; nothing when it is known or when that cannot be told."""
    if await group_exists(admin, group) is False:
        raise NotFoundError(f"group {group!r} is not known to any broker (no member, no "
                            "committed offset, no subscription group)",
                            hint="check the name (it is case-sensitive); brokers create a "
                            "group when its first consumer starts")

"""``mqctl group config GROUP``: the group's SubscriptionGroupConfig on every broker (read-only).

Each master of the cluster is asked for GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) and the group's
entry is taken from the table, as mqadmin does (``DefaultMQAdminExtImpl.
examineSubscriptionGroupConfig``, 4.9.3 and 5.3.3). GET_SUBSCRIPTIONGROUP_CONFIG (352, 5.x only)
is NOT used: ``AdminBrokerProcessor.getSubscriptionGroup`` calls
``SubscriptionGroupManager.findSubscriptionGroupConfig``, which creates (and persists) a group
it does not know when ``autoCreateSubscriptionGroup`` is on, the default.

Fields (remoting/.../subscription/SubscriptionGroupConfig.java): 4.9.3 has groupName,
consumeEnable, consumeFromMinEnable, consumeBroadcastEnable, retryQueueNums, retryMaxTimes,
brokerId, whichBrokerWhenConsumeSlowly, notifyConsumerIdsChangedEnable (corpus
4.9.3/other-requests/201_*); 5.x adds groupSysFlag, consumeTimeoutMinute, groupRetryPolicy,
consumeMessageOrderly and (5.1.3) attributes (corpus 5.3.3/other-requests/201_*). A field a
broker does not send is unknown there, not a disagreement.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.admin import BrokerFailure, NotFoundError, NothingRead

if TYPE_CHECKING:
    from mqctl.admin import Admin

# (field, what it means) in the order shown
FIELDS: tuple[tuple[str, str], ...] = (
    ("consumeEnable", "false: the broker refuses the group's pulls (NO_PERMISSION)"),
    ("consumeFromMinEnable", "a new group may start from the min offset"),
    ("consumeBroadcastEnable", "BROADCASTING consumers allowed"),
    ("consumeMessageOrderly", "5.x: orderly (pop/gRPC consumers, retry as orderly)"),
    ("retryQueueNums", "queues of %RETRY%<group> per broker"),
    ("retryMaxTimes", "deliveries before a message goes to %DLQ%<group>"),
    ("groupRetryPolicy", "5.x: the retry delay policy"),
    ("brokerId", "broker id to pull from when slaveReadEnable (0 = master)"),
    ("whichBrokerWhenConsumeSlowly", "broker id to pull from when consuming slowly"),
    ("notifyConsumerIdsChangedEnable", "members are told when the group changes"),
    ("consumeTimeoutMinute", "5.x: consume timeout (minutes)"),
    ("groupSysFlag", "5.x: system flags"),
    ("attributes", "5.1.3+: extra attributes"),
)


@dataclass
class GroupConfigView:
    group: str
    configs: dict[str, dict[str, Any] | None]  # broker -> its entry (None: no such group there)
    failures: list[BrokerFailure] = field(default_factory=list)

    @property
    def brokers(self) -> list[str]:
        return sorted(self.configs)

    @property
    def holders(self) -> list[str]:
        return [b for b in self.brokers if self.configs[b] is not None]

    @property
    def missing_on(self) -> list[str]:
        return [b for b in self.brokers if self.configs[b] is None]

    @property
    def not_included(self) -> list[str]:
        return sorted({f.broker for f in self.failures})


def value_text(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return str(v)


@dataclass(frozen=True, slots=True)
class FieldRow:
    name: str
    meaning: str
    values: dict[str, Any]  # broker -> value; a broker that does not send it is left out
    unknown_on: tuple[str, ...]  # brokers holding the group that do not send this field
    agree: bool | None  # None: no broker sent it

    @property
    def differs(self) -> bool:
        return self.agree is False


def compare(view: GroupConfigView) -> list[FieldRow]:
    """One row per field, with each broker's value and whether the brokers that sent it
    agree. Fields no broker sent are left out; unknown fields of newer brokers are added
    after the known ones."""
    holders = view.holders
    names = [f for f, _ in FIELDS]
    extra = sorted({k for b in holders for k in (view.configs[b] or {})}
                   - set(names) - {"groupName", "subscriptionDataSet"})
    meaning = dict(FIELDS)
    rows = []
    for name in names + extra:
        values = {b: (view.configs[b] or {})[name] for b in holders
                  if name in (view.configs[b] or {})}
        if not values:
            continue
        unknown = tuple(b for b in holders if b not in values)
        distinct = {value_text(v) for v in values.values()}
        rows.append(FieldRow(name, meaning.get(name, ""), values, unknown,
                             len(distinct) <= 1))
    return rows


async def capture_group_config(admin: Admin, group: str) -> GroupConfigView:
    """The group's entry on every master the name server knows."""
    info = await admin.cluster_info()
    brokers = [info.brokers[k] for k in sorted(info.brokers)]
    got = await admin._per_broker(brokers, admin.subscription_group_table)
    failures = [v for v in got.values() if isinstance(v, BrokerFailure)]
    if got and len(failures) == len(got):
        raise NothingRead(f"the subscription groups (for {group})", failures)
    configs: dict[str, dict[str, Any] | None] = {}
    for b, table in got.items():
        if isinstance(table, BrokerFailure):
            continue
        entry = table.get(group)
        configs[b] = dict(entry) if isinstance(entry, dict) else None
    view = GroupConfigView(group, configs, failures)
    if not view.holders and not failures:
        raise NotFoundError(f"no broker has a subscription group {group!r}",
                            hint="check the name (it is case-sensitive); `mqctl consumers "
                                 "GROUP` and `mqctl topic consumers TOPIC` show live groups")
    return view


__all__ = ["FIELDS", "FieldRow", "GroupConfigView", "capture_group_config", "compare",
           "value_text"]

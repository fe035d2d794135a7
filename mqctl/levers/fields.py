"""The fields of RocketMQ's ``SubscriptionGroupConfig`` that ``group config set`` changes: their
type, range and the release that has them (pure).

remoting/.../subscription/SubscriptionGroupConfig.java: 4.9.3 has groupName, consumeEnable,
consumeFromMinEnable, consumeBroadcastEnable, retryQueueNums, retryMaxTimes, brokerId,
whichBrokerWhenConsumeSlowly, notifyConsumerIdsChangedEnable; 5.0.0 adds groupSysFlag,
consumeTimeoutMinute, groupRetryPolicy (GroupRetryPolicy: type CUSTOMIZED | EXPONENTIAL with
customizedRetryPolicy / exponentialRetryPolicy) and consumeMessageOrderly; 5.1.3 attributes.
UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (AdminBrokerProcessor.updateAndCreateSubscriptionGroup)
decodes the whole config from the body and replaces the broker's: a field left out takes the
Java default, so every change sends the config as read with only its fields changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mqctl.errors import UsageError
from mqctl.versions import V5_0_0, V5_1_3, version_name

JAVA_INT_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    kind: str  # bool | int | object
    since: int | None = None  # the release that has it (None: every supported one)
    low: int = 0
    high: int = JAVA_INT_MAX
    default: Any = None  # SubscriptionGroupConfig's default (a group created with --create)


FIELDS: dict[str, Field] = {f.name: f for f in (
    Field("consumeEnable", "bool", default=True),
    Field("consumeFromMinEnable", "bool", default=True),
    Field("consumeBroadcastEnable", "bool", default=True),
    Field("retryQueueNums", "int", default=1),
    # MixAll / SubscriptionGroupConfig: retryMaxTimes 16; -1 is what 5.x orderly groups use
    # for "retry forever" (ConsumeMessageOrderlyService.getMaxReconsumeTimes)
    Field("retryMaxTimes", "int", low=-1, default=16),
    Field("brokerId", "int", default=0),
    Field("whichBrokerWhenConsumeSlowly", "int", default=1),
    Field("notifyConsumerIdsChangedEnable", "bool", default=True),
    Field("consumeMessageOrderly", "bool", since=V5_0_0, default=False),
    Field("consumeTimeoutMinute", "int", since=V5_0_0, low=1, default=15),
    Field("groupRetryPolicy", "object", since=V5_0_0, default={"type": "CUSTOMIZED"}),
    Field("groupSysFlag", "int", since=V5_0_0, default=0),
    Field("attributes", "object", since=V5_1_3, default={}),
)}

RETRY_POLICY_TYPES = ("CUSTOMIZED", "EXPONENTIAL")  # GroupRetryPolicyType (5.x)
HINT = ("KEY=VALUE with a SubscriptionGroupConfig field: " + ", ".join(FIELDS)
        + " (booleans true/false, whole numbers, objects as JSON)")


def parse_value(f: Field, text: str) -> Any:
    """``text`` as the field's type, or UsageError naming the field."""
    t = text.strip()
    if f.kind == "bool":
        if t.lower() not in ("true", "false"):
            raise UsageError(f"{f.name} takes true or false, not {text!r}", hint=HINT)
        return t.lower() == "true"
    if f.kind == "int":
        sign, digits = (t[0], t[1:]) if t[:1] in "+-" else ("", t)
        if not digits.isdigit() or not digits.isascii():
            raise UsageError(f"{f.name} takes a whole number, not {text!r}", hint=HINT)
        n = int(sign + digits)
        if not f.low <= n <= f.high:
            raise UsageError(f"{f.name} must be {f.low}..{f.high} ({n})", hint=HINT)
        return n
    try:
        v = json.loads(t)
    except ValueError:
        raise UsageError(f"{f.name} takes a JSON object, not {text!r}", hint=HINT) from None
    if not isinstance(v, dict):
        raise UsageError(f"{f.name} takes a JSON object, not {text!r}", hint=HINT)
    if f.name == "groupRetryPolicy" and v.get("type") not in RETRY_POLICY_TYPES:
        raise UsageError(f"groupRetryPolicy.type must be one of {', '.join(RETRY_POLICY_TYPES)} "
                         f"({v.get('type')!r})", hint=HINT)
    if f.name == "attributes" and not all(isinstance(x, str) for x in v.values()):
        raise UsageError("attributes takes an object of strings", hint=HINT)
    return v


def parse_assignments(items: list[str]) -> dict[str, Any]:
    """``["retryMaxTimes=3", ...]`` as {field: typed value}, checked before any I/O."""
    if not items:
        raise UsageError("nothing to set", hint=HINT)
    out: dict[str, Any] = {}
    for item in items:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq:
            raise UsageError(f"{item!r} is not KEY=VALUE", hint=HINT)
        if key == "groupName":
            raise UsageError("groupName cannot be set (it is the group)", hint=HINT)
        f = FIELDS.get(key)
        if f is None:
            raise UsageError(f"{key!r} is not a SubscriptionGroupConfig field", hint=HINT)
        if key in out:
            raise UsageError(f"{key} given twice", hint=HINT)
        out[key] = parse_value(f, text)
    return out


def not_on(fields: dict[str, Any], version: int | None) -> list[str]:
    """The fields a broker of ``version`` does not have (``version`` None: unknown, so the
    newer fields are refused too)."""
    return [k for k in fields if (f := FIELDS[k]).since is not None
            and (version is None or version < f.since)]


def since_text(name: str) -> str:
    f = FIELDS[name]
    return version_name(f.since).removeprefix("V").replace("_", ".") if f.since else "4.x"


def defaults(group: str, version: int | None) -> dict[str, Any]:
    """A new group's config as the broker's version has it (``--create``)."""
    out: dict[str, Any] = {"groupName": group}
    for f in FIELDS.values():
        if f.since is None or (version is not None and version >= f.since):
            out[f.name] = json.loads(json.dumps(f.default))
    return out


__all__ = ["FIELDS", "HINT", "Field", "defaults", "not_on", "parse_assignments", "parse_value",
           "since_text"]

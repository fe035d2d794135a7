"""Preflight as ordered small rules returning new frozen results: the plan given is left as it
was, each broker's path is decided by the first broker rule that applies, and the rules that
read the decided paths see them."""

from __future__ import annotations

import dataclasses

import pytest

from mqctl.models import MessageQueue
from mqctl.reset.preflight import BROKER_RULES, Checks, Facts, decide_path, preflight
from mqctl.reset.types import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, Target

MQ = MessageQueue("T", "broker-a", 0)


def plan(path: Path_ | None, *, online: bool = True, reachable: bool = True,
         group_known: bool | None = None, target: Target | None = None) -> Plan:
    b = BrokerPlan("broker-a", "x:1", path, "config", reachable=reachable,
                   error=None if reachable else "refused", group_known=group_known)
    st = ConsumerState(online, ["c@1"] if online else [], False, False, "CONSUME_PASSIVELY",
                       "CLUSTERING", min_version=479 if online else None)
    return Plan("G", "T", target or Target("offset", 3), 0, "ns",
                [QueuePlan(MQ, 0, 10, 5, 3)], {"broker-a": b}, st)


def test_the_plan_given_is_left_as_it_was():
    before = plan(Path_.LEGACY_PUSH, online=False)
    broker = before.brokers["broker-a"]
    after = preflight(before, force=False, scoped=False)
    assert after is not before
    assert after.brokers["broker-a"].path == Path_.LEGACY_UPDATE  # offline: per-queue writes
    assert broker.path == Path_.LEGACY_PUSH and before.brokers["broker-a"] is broker
    assert before.refusals == [] and before.warnings == [] and before.notes == []
    refused = preflight(plan(Path_.LEGACY_PUSH), force=False, scoped=False)
    assert refused.refusals and "live consumers overwrite" in refused.refusals[0]


def test_the_first_broker_rule_that_applies_decides():
    """An unreachable broker of a group it does not know: only the broker's unreachability is
    said (its other facts were not read), as the rules are ordered."""
    p = plan(Path_.SERVER_SIDE, reachable=False, group_known=False)
    v = decide_path(Facts(p, False, False), p.brokers["broker-a"])
    assert len(v.checks.refusals) == 1 and "not reachable" in v.checks.refusals[0]
    p = plan(None, group_known=False)
    v = decide_path(Facts(p, False, False), p.brokers["broker-a"])
    assert "does not exist on broker" in v.checks.refusals[0] and len(v.checks.refusals) == 1
    names = [r.__name__ for r in BROKER_RULES]
    assert names.index("unreachable") < names.index("group_unknown_there") < names.index(
        "path_unknown") < names.index("server_side")


def test_a_push_by_time_is_said_with_its_order():
    """The rules after the paths read them: a legacy push by time warns with the 10 s pause,
    the same plan by explicit offsets refuses instead (and warns nothing of a push)."""
    pushed = preflight(plan(Path_.LEGACY_PUSH, target=Target("time", 1)), force=False,
                       scoped=False)
    assert pushed.refusals == [] and any("10 s pause" in w for w in pushed.warnings)
    explicit = preflight(plan(Path_.LEGACY_PUSH), force=False, scoped=False)
    assert not any("10 s pause" in w for w in explicit.warnings)


def test_checks_are_frozen_and_add_up_in_order():
    a, b = Checks(refusals=("r1",), warnings=("w1",)), Checks(refusals=("r2",), notes=("n",))
    assert a + b == Checks(("r1", "r2"), ("w1",), ("n",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.refusals = ()  # type: ignore[misc]

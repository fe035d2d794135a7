"""The SubscriptionGroupConfig fields `group config set` takes: typed, ranged, by release
(pure)."""

from __future__ import annotations

import pytest

from mqctl.errors import UsageError
from mqctl.levers.fields import FIELDS, defaults, not_on, parse_assignments
from mqctl.versions import V4_9_3, V5_0_0, V5_1_3


def test_values_are_parsed_by_the_fields_type():
    got = parse_assignments(["retryMaxTimes=3", "consumeBroadcastEnable=FALSE",
                             'groupRetryPolicy={"type":"EXPONENTIAL"}', "brokerId=+1"])
    assert got == {"retryMaxTimes": 3, "consumeBroadcastEnable": False,
                   "groupRetryPolicy": {"type": "EXPONENTIAL"}, "brokerId": 1}


@pytest.mark.parametrize("item, says", [
    ("retryMaxTimes=three", "whole number"),
    ("retryMaxTimes=-2", "must be -1.."),
    ("consumeTimeoutMinute=0", "must be 1.."),
    ("consumeEnable=yes", "true or false"),
    ("groupRetryPolicy=[1]", "JSON object"),
    ('groupRetryPolicy={"type":"LINEAR"}', "CUSTOMIZED, EXPONENTIAL"),
    ("groupName=X", "cannot be set"),
    ("retryMaxTime=3", "not a SubscriptionGroupConfig field"),
    ("retryMaxTimes", "not KEY=VALUE"),
    ("retryMaxTimes=٣", "whole number"),  # a non-ASCII digit
])
def test_bad_values_are_refused_naming_the_field(item, says):
    with pytest.raises(UsageError) as exc:
        parse_assignments([item])
    assert says in exc.value.message


def test_a_field_given_twice_or_none_is_refused():
    with pytest.raises(UsageError, match="twice"):
        parse_assignments(["retryMaxTimes=1", "retryMaxTimes=2"])
    with pytest.raises(UsageError, match="nothing to set"):
        parse_assignments([])


def test_fields_by_release():
    assert not_on({"groupRetryPolicy": {}, "retryMaxTimes": 1}, V4_9_3) == ["groupRetryPolicy"]
    assert not_on({"groupRetryPolicy": {}}, V5_0_0) == []
    assert not_on({"attributes": {}}, V5_0_0) == ["attributes"]
    assert not_on({"attributes": {}}, V5_1_3) == []
    assert not_on({"consumeTimeoutMinute": 3}, None) == ["consumeTimeoutMinute"]  # unknown


def test_a_new_groups_defaults_are_its_releases():
    old, new = defaults("G", V4_9_3), defaults("G", V5_1_3)
    assert set(old) == {"groupName", *(f for f, d in FIELDS.items() if d.since is None)}
    assert set(new) == {"groupName", *FIELDS}
    assert old["retryMaxTimes"] == 16 and old["consumeEnable"] is True

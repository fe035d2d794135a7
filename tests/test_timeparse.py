from __future__ import annotations

from datetime import timedelta, timezone

import pytest

from mqctl.errors import TimeParseError
from mqctl.timeparse import format_duration, format_ms, parse_duration_ms, parse_time

NOW = 1_717_200_000_000  # 2024-06-01T00:00:00Z
UTC8 = timezone(timedelta(hours=8))


@pytest.mark.parametrize("text, expected", [
    ("now", NOW),
    ("NOW", NOW),
    ("1717200000123", 1717200000123),
    ("2024-06-01T00:00:00Z", NOW),
    ("2024-06-01T08:00:00+08:00", NOW),
    ("2024-06-01 08:00:00.500+08:00", NOW + 500),
    ("-2h", NOW - 7_200_000),
    ("2h", NOW - 7_200_000),
    ("30m", NOW - 1_800_000),
    ("+10m", NOW + 600_000),
    ("1d", NOW - 86_400_000),
    ("1h30m", NOW - 5_400_000),
    ("-PT2H", NOW - 7_200_000),
    ("P1DT1H", NOW - 90_000_000),
    ("500ms", NOW - 500),
])
def test_forms(text, expected):
    assert parse_time(text, now=NOW) == expected


def test_zone_less_forms_use_the_given_local_zone():
    assert parse_time("2024-06-01T08:00:00", now=NOW, tz=UTC8) == NOW
    assert parse_time("2024-06-01 08:00", now=NOW, tz=UTC8) == NOW
    assert parse_time("2024-06-01", now=NOW, tz=UTC8) == NOW - 8 * 3_600_000
    assert parse_time("2024-06-01#08:00:00:250", now=NOW, tz=UTC8) == NOW + 250


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"),
    ("yesterday", "cannot parse time 'yesterday'"),
    ("1717200000", "looks like epoch seconds"),
    ("2024-13-01T00:00:00", "cannot parse time"),
    ("2024-02-30#00:00:00:000", "day is out of range"),
    ("-2x", "cannot parse time"),
])
def test_bad_input_explains_the_accepted_forms(text, fragment):
    with pytest.raises(TimeParseError) as ei:
        parse_time(text, now=NOW)
    assert fragment in ei.value.message
    assert "accepted forms" in (ei.value.hint or "") or "append 000" in (ei.value.hint or "")


def test_durations():
    assert parse_duration_ms("-2h") == -7_200_000
    assert parse_duration_ms("90s") == 90_000
    assert parse_duration_ms("PT1M30S") == 90_000
    with pytest.raises(TimeParseError):
        parse_duration_ms("two hours")


def test_formatting():
    assert format_ms(NOW + 5) == "2024-06-01T00:00:00.005Z"
    assert format_ms(0) == ""
    assert format_duration(450) == "450ms"
    assert format_duration(3_723_000) == "1h 2m"
    assert format_duration(-61_000) == "-1m 1s"

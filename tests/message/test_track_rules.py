"""The scheduled-retry rule of `message track` (mqctl.message.track), case by case without a
cluster: a copy waiting in SCHEDULE_TOPIC_XXXX for the group's retry topic, which yields to
the retry copy once it is delivered, and says when it is past due."""

from __future__ import annotations

from mqctl.message.track import DELAY_LEVELS_MS, Copy, GroupReading, track_row
from mqctl.remoting.message import StoredMessage

S = 1000
T0 = 1_700_000_000_000


def msg() -> StoredMessage:
    return StoredMessage(1, 0, 0, 0, 0, 50, 5000, 0, T0 - 1, "10.0.0.1:1", T0,
                         "10.0.0.9:10911", 0, 0, b"", "T", {"UNIQ_KEY": "U"}, "ID")


def scheduled(times: int, at: int) -> Copy:
    level = 2 + times
    return Copy("SCHEDULE_TOPIC_XXXX", "broker-a", level - 1, 7, at, times, "S", None, level,
                at + DELAY_LEVELS_MS[level - 1])


def retry(times: int, at: int, consumed: bool | None = False) -> Copy:
    return Copy("%RETRY%G", "broker-a", 0, 3, at, times, "R", consumed)


def reading(**kw) -> GroupReading:
    return GroupReading("G", online=True, queue_read=True, committed=60, owner="c1", **kw)


def test_a_pending_copy_is_scheduled_with_its_level_and_due_time():
    row = track_row(msg(), reading(retry=(retry(1, T0 + 10 * S, True),),
                                   scheduled=(scheduled(1, T0), scheduled(2, T0 + 12 * S))),
                    T0 + 20 * S)
    assert row.state == "retrying" and row.evidence.startswith(
        "scheduled in SCHEDULE_TOPIC_XXXX broker-a/3 offset 7, reconsumeTimes 2, delay level "
        "4 (30s), due at ~2023-11-14T22:14:02.000Z, for %RETRY%G")
    assert row.detail["dueAt"] == T0 + 42 * S and row.detail["delayLevel"] == 4
    assert "past due" not in row.evidence
    late = track_row(msg(), reading(scheduled=(scheduled(1, T0),)), T0 + 60 * S)
    assert "past due: ScheduleMessageService has not delivered it yet" in late.evidence


def test_a_delivered_copy_yields_to_the_retry_copy():
    """The retry topic holds the copy of those reconsume times: the retry rules judge it."""
    r = reading(retry=(retry(1, T0 + 10 * S),), scheduled=(scheduled(1, T0),))
    row = track_row(msg(), r, T0 + 20 * S)
    assert row.state == "retrying" and row.evidence.startswith("a copy in %RETRY%G")
    done = reading(retry=(retry(1, T0 + 10 * S, True),), scheduled=(scheduled(1, T0),))
    assert track_row(msg(), done, T0 + 600 * S).state == "consumed"


def test_no_scheduled_copy_read_leaves_the_other_rules():
    for sched in (None, ()):
        row = track_row(msg(), reading(retry=(), dlq=(), scheduled=sched), T0 + 20 * S)
        assert row.state == "consumed"

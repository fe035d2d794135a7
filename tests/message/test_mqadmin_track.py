"""mqctl's track states next to mqadmin's MessageTrack rules (DefaultMQAdminExtImpl.
messageTrackDetail), on the same readings: where they agree, and where mqctl says more."""

from __future__ import annotations

import mqctl
from mqctl.message.find import FindRequest
from mqctl.message.mqadmin_track import (
    AGREES,
    CONSUME_BROADCASTING,
    CONSUMED,
    CONSUMED_BUT_FILTERED,
    NOT_CONSUME_YET,
    NOT_ONLINE,
    PULL,
    UNKNOWN,
    mqadmin_track,
)
from mqctl.message.track import GroupReading, track_row
from mqctl.remoting.message import StoredMessage

MQADMIN = {"G_CONSUMED": CONSUMED, "G_WAITING": NOT_CONSUME_YET,
           "G_FILTERED": CONSUMED_BUT_FILTERED, "G_RETRYING": CONSUMED, "G_DEAD": CONSUMED,
           "G_BROADCAST": CONSUME_BROADCASTING, "G_OFFLINE": NOT_ONLINE,
           "G_POP": CONSUMED}


def _readings(world):
    s, offset = world
    with mqctl.Cluster(s.cluster.namesrv_addr) as c:
        shown = c.message("T", "broker-a", 0, offset)
        return c.track_message(FindRequest(msg_id=shown.message.msg_id))


def test_both_rules_on_the_same_readings(world):
    res = _readings(world)
    m = res.found.message
    java = {r.group: mqadmin_track(m, r) for r in res.readings}
    ours = {r.group: track_row(m, r, res.now).state for r in res.readings}
    assert java == MQADMIN
    # mqctl says more where a copy exists: mqadmin calls a sent-back message consumed
    assert ours["G_RETRYING"] == "retrying" and ours["G_DEAD"] == "dead-lettered"
    for g, state in ours.items():
        if state in ("retrying", "dead-lettered") or g == "G_POP":
            # a pop consumer's offset moves when it pops: mqadmin calls it consumed
            assert java[g] == CONSUMED
        else:
            assert java[g] in AGREES[state], (g, state, java[g])


def _msg(offset: int = 10, tags: str = "TagA") -> StoredMessage:
    return StoredMessage(1, 0, 0, 0, 0, offset, 5000, 0, 1, "10.0.0.1:1", 2, "10.0.0.9:10911",
                         0, 0, b"x", "T", {"TAGS": tags, "UNIQ_KEY": "U"}, "ID")


def _online(**kw) -> GroupReading:
    base = {"online": True, "consume_type": "CONSUME_PASSIVELY", "queue_read": True}
    return GroupReading("G", **{**base, **kw})


def test_filtered_not_yet_reached_is_not_consume_yet_for_mqadmin():
    """The tag is out of the subscription and the offset has not reached it: mqadmin waits
    for it (NOT_CONSUME_YET); it will never be delivered."""
    r = _online(committed=5, consume_stats_offset=5, expression="TagB", tags=("TagB",))
    assert mqadmin_track(_msg(), r) == NOT_CONSUME_YET
    assert track_row(_msg(), r, 10_000).state == "filtered"


def test_never_committed_reads_as_zero_for_mqadmin():
    r = _online(committed=None, consume_stats_offset=0)
    assert mqadmin_track(_msg(offset=0), r) == NOT_CONSUME_YET
    row = track_row(_msg(offset=0), r, 10_000)
    assert row.state == "waiting" and "consumeFromWhere" in row.evidence


def test_a_pull_consumer_and_a_4x_broadcasting_group():
    assert mqadmin_track(_msg(), _online(consume_type="CONSUME_ACTIVELY")) == PULL
    bc = _online(broadcasting=True, committed=50, consume_stats_offset=50)
    assert mqadmin_track(_msg(), bc, v5=False) == CONSUMED  # 4.9.3 reads the brokers'
    assert mqadmin_track(_msg(), bc) == CONSUME_BROADCASTING
    assert track_row(_msg(), bc, 10_000).state == "broadcast: unknown"


def test_a_group_not_read_is_unknown_for_both():
    r = GroupReading("G", error="timeout")
    assert mqadmin_track(_msg(), r) == UNKNOWN
    assert track_row(_msg(), r, 10_000).state == "unknown"


def _copy(times: int, store_ts: int, consumed: bool | None, topic: str = "%RETRY%G"):
    from mqctl.message.track import Copy

    return Copy(topic, "broker-a", 0, 7, store_ts, times, "CID", consumed)


def test_a_consumed_retry_copy_is_consumed_only_once_a_new_failure_would_be_back():
    """reconsumeTimes 2: a next failure waits delay level 5 (1 min) in SCHEDULE_TOPIC_XXXX."""
    m = _msg()
    young = _online(committed=50, retry=(_copy(2, 100_000, True),), dlq=())
    assert track_row(m, young, 100_000 + 59_000).state == "retrying"
    assert track_row(m, young, 100_000 + 61_000).state == "consumed"
    assert "after 2 retries" in track_row(m, young, 100_000 + 61_000).evidence
    waiting = _online(committed=50, retry=(_copy(2, 100_000, False),), dlq=())
    row = track_row(m, waiting, 10**9)
    assert row.state == "retrying" and row.detail["nextDelayLevel"] == 5
    # mqadmin sees the original offset only
    assert mqadmin_track(m, waiting) == CONSUMED


def test_the_newest_copy_decides_and_a_dead_letter_outranks_every_retry():
    m = _msg()
    r = _online(committed=50, retry=(_copy(1, 1_000, True), _copy(3, 5_000, False)),
                dlq=(_copy(4, 9_000, None, "%DLQ%G"),))
    assert track_row(m, r, 10_000).state == "dead-lettered"
    r2 = _online(committed=50, retry=(_copy(1, 1_000, True), _copy(3, 5_000, False)), dlq=())
    row = track_row(m, r2, 10_000)
    assert row.state == "retrying" and row.detail["copy"]["reconsumeTimes"] == 3

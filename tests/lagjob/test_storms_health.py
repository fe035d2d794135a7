"""Storms and group health as pure transforms: storms that catch sustained churn (the long-round
rule next to the rounds rule), and the group health that a storm or unowned queues make ERR
while the lag status stays OK; a group seen only in logs is listed, not lost."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from mqctl.lagjob import transforms as X

S = 1000
MIN = 60 * S
EV = ("ts long, cluster string, `group` string, topic string, client string, n_gained int, "
      "n_lost int, cause string")


def events(spark, times_s, group="G", clients=None):
    clients = clients or [f"c{i % 3}" for i in range(len(times_s))]
    return spark.createDataFrame([(int(t * S), "c", group, "T", cl, 1, 1, "rebalance")
                                  for t, cl in zip(times_s, clients, strict=True)], EV)


def storms(spark, times_s, **kw):
    rounds = X.rebalance_rounds(events(spark, times_s, **kw), 20 * S)
    # the defaults: 3 rounds within 10 minutes, or one round longer than 1 minute
    return [r.asDict() for r in X.rebalance_storms(rounds, 3, 10 * MIN, MIN)
            .orderBy("start_ts").collect()]


def test_three_rounds_in_ten_minutes_is_a_storm(spark):
    # three members restart one after the other, 3 minutes apart: each is a round of the three
    # clients re-balancing within 4 s
    times = [t0 + d for t0 in (0, 180, 360) for d in (0, 2, 4)]
    got = storms(spark, times)
    assert [(s["start_ts"], s["end_ts"], s["rounds"], s["events"], s["rule"]) for s in got] == [
        (0, 364 * S, 3, 9, "rounds")]


def test_a_single_deploy_is_one_round_not_a_storm(spark):
    # every client of a group restarted at once: 12 events within 18 s, one round
    assert storms(spark, [i * 1.5 for i in range(13)],
                  clients=[f"c{i}" for i in range(13)]) == []


def test_a_group_that_rebalances_once_an_hour_has_no_storm(spark):
    times = [h * 3600 + d for h in range(6) for d in (0, 3)]
    assert storms(spark, times) == []


def test_endless_churn_is_a_storm_even_as_one_round(spark):
    """The demo's GID_MIXED: members whose views disagree take the queues from each other on
    every 20-s tick: each event is 20 s after the previous one, so all of them are one round
    (the rounds rule never fires: it used to say `0 storm(s)`); a round of 10
    minutes is a storm by the long-round rule."""
    times = [i * 20 for i in range(31)]  # 0..600 s
    rounds = X.rebalance_rounds(events(spark, times), 20 * S).collect()
    assert len(rounds) == 1 and rounds[0]["end_ts"] == 600 * S
    got = storms(spark, times)
    assert [(s["start_ts"], s["end_ts"], s["rounds"], s["events"], s["rule"]) for s in got] == [
        (0, 600 * S, 1, 31, "long-round")]
    # the long-round rule off (--storm-round-max 0): the old answer, no storm
    r = X.rebalance_rounds(events(spark, times), 20 * S)
    assert X.rebalance_storms(r, 3, 10 * MIN, 0).count() == 0


def test_both_rules_merge_into_one_storm(spark):
    # a long round, then two short ones within 10 minutes: one storm, both rules named
    times = [i * 15 for i in range(9)] + [300, 302, 500]
    got = storms(spark, times)
    assert [(s["start_ts"], s["end_ts"], s["rounds"], s["rule"]) for s in got] == [
        (0, 500 * S, 3, "long-round+rounds")]


GROUPS = ("cluster string, `group` string, capture_ts long, group_status_code int, "
          "queues long, online boolean, message_model string")
STORMS = ("cluster string, `group` string, start_ts long, end_ts long, rounds long, "
          "events long, rule string")
UNOWNED = ("cluster string, `group` string, topic string, broker string, queue_id int, "
           "start_ts long, end_ts long")


def health(spark, groups, storm_rows=(), unowned_rows=(), window=10 * MIN, unowned_max=0.1):
    g = spark.createDataFrame(list(groups), GROUPS)
    out = X.group_health(g, spark.createDataFrame(list(storm_rows), STORMS),
                         spark.createDataFrame(list(unowned_rows), UNOWNED), window,
                         unowned_max)
    return {r["group"]: r.asDict() for r in out.collect()}


def test_health_is_err_in_a_storm_while_the_status_is_ok(spark):
    t = 180 * MIN
    h = health(spark, [("c", "MIXED", t, 0, 4, True, "CLUSTERING"),
                       ("c", "CALM", t, 0, 4, True, "CLUSTERING"),
                       ("c", "OLD", t, 0, 4, True, "CLUSTERING"),
                       ("c", "SLOW", t, 1, 4, True, "CLUSTERING"),
                       ("c", "STUCK", t, 3, 4, True, "CLUSTERING")],
               [("c", "MIXED", 0, t, 1, 540, "long-round"),
                # a storm that ended an hour before the latest capture: counted, not "in" it
                ("c", "OLD", 60 * MIN, 70 * MIN, 3, 9, "rounds")])
    assert (h["MIXED"]["health"], h["MIXED"]["in_storm"], h["MIXED"]["storms"],
            h["MIXED"]["storm_rule"], h["MIXED"]["storm_events"]) == (
        "ERR", True, 1, "long-round", 540)
    assert (h["OLD"]["health"], h["OLD"]["in_storm"], h["OLD"]["storms"]) == ("OK", False, 1)
    assert [h[g]["health"] for g in ("CALM", "SLOW", "STUCK")] == ["OK", "WARN", "ERR"]


def test_health_counts_unowned_queue_time_in_the_window(spark):
    t = 100 * MIN
    h = health(spark, [("c", "A", t, 0, 4, True, None), ("c", "B", t, 0, 4, True, None),
                       ("c", "OFF", t, 4, 4, False, None)],
               unowned_rows=[
                   # A: one queue unowned for the last 5 of the 10 minutes and still open,
                   # another for 2 minutes long before the window: 5/40 = 12.5% >= 10%
                   ("c", "A", "T", "b", 0, t - 5 * MIN, None),
                   # the same period seen again (another source): counted once
                   ("c", "A", "T", "b", 0, t - 4 * MIN, t - MIN),
                   ("c", "A", "T", "b", 1, 10 * MIN, 12 * MIN),
                   # B: 3 minutes of 40 in the window (7.5%), over by the latest capture
                   ("c", "B", "T", "b", 0, t - 20 * MIN, t - 7 * MIN),
                   # an offline group: STOP says it, unowned is no extra verdict
                   ("c", "OFF", "T", "b", 0, 0, None)])
    a, b = h["A"], h["B"]
    assert (a["unowned_ms"], a["unowned_share"], a["unowned_now"], a["health"]) == (
        5 * MIN, 0.125, 1, "ERR")
    assert (b["unowned_ms"], b["unowned_share"], b["unowned_now"], b["health"]) == (
        3 * MIN, 0.075, 0, "OK")
    assert h["OFF"]["health"] == "ERR" and h["OFF"]["unowned_share"] == 0.25


def test_broadcast_and_log_only_groups_are_listed_with_their_reason(spark):
    t = 10 * MIN
    groups = spark.createDataFrame([("c", "NEWS", t, None, 2, True, "BROADCASTING"),
                                    ("c", "PAY", t, 0, 4, True, "CLUSTERING")], GROUPS)
    ev = events(spark, [1, 2], group="LOGONLY").unionByName(events(spark, [3], group="PAY"))
    unseen = X.unseen_groups(groups, (ev, "ts"))
    assert [(r["group"], r["capture_ts"], r["reason"]) for r in unseen.collect()] == [
        ("LOGONLY", 2 * S, X.LOGS_ONLY_REASON)]
    every = groups.unionByName(unseen, allowMissingColumns=True)
    h = {r["group"]: r.asDict() for r in X.group_health(
        every, spark.createDataFrame([], STORMS), spark.createDataFrame([], UNOWNED), 10 * MIN,
        0.1).collect()}
    assert (h["NEWS"]["health"], h["NEWS"]["reason"]) == (None, X.BROADCAST_REASON)
    assert (h["LOGONLY"]["health"], h["LOGONLY"]["reason"]) == (None, X.LOGS_ONLY_REASON)
    assert (h["PAY"]["health"], h["PAY"]["reason"]) == ("OK", None)


UN_COLS = ("cluster string, `group` string, topic string, broker string, queue_id int, "
           "since_ts long, start_ts long, end_ts long, duration_ms long, open boolean, "
           "source_kind string")


def test_an_open_log_interval_ends_where_a_capture_shows_an_owner(spark):
    """Two containers with one client id (the demo's GID_DUP): the logs see one holder, so the
    one container's crash reads as the queue's loss, and the interval stays open; every capture
    after it shows the queue owned. It ends at the first such capture (more than --align after
    it began); without captures of an owner it stays open."""
    logged = spark.createDataFrame([
        ("c", "DUP", "T", "b", 0, 0, 0, None, None, True, "client-log"),
        ("c", "DUP", "T", "b", 1, 0, 0, None, None, True, "client-log")], UN_COLS)
    captured = spark.createDataFrame([], UN_COLS)
    owned = spark.createDataFrame([("c", "DUP", "T", "b", 0, ts) for ts in (5 * S, 120 * S,
                                                                           240 * S)],
                                  "cluster string, `group` string, topic string, "
                                  "broker string, queue_id int, capture_ts long")
    got = {r["queue_id"]: (r["end_ts"], r["open"], r["duration_ms"]) for r in
           X.merge_unowned_sources(captured, logged, 10 * S, owned).collect()}
    # queue 0: the capture at 5 s is within --align of the loss; the one at 120 s ends it
    assert got == {0: (120 * S, False, 120 * S), 1: (None, True, None)}

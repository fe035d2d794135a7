"""``--watch``'s rounds and deltas without a cluster (mqctl.views.watch): the lag's change and
rates between reads, changed states highlighted for a few rounds, a broker that did not answer
shown stale with the age of its last good value (never blank, never fresh), rows that left
forgotten; rounds never overlap and a slow read says so."""

from __future__ import annotations

from mqctl.views.watch import HIGHLIGHT_ROUNDS, SPECS, Deltas, WatchRound, run_watch

S = 1000
PROGRESS = SPECS["group progress"]


def q(qid, lag, offset, owner="c1", broker="broker-a"):
    return {"topic": "T", "broker": broker, "queue_id": qid, "lag": lag,
            "consumer_offset": offset, "owner": owner}


def by_queue(out):
    return {(d["broker"], d["queue_id"]): d for d in out}


def test_lag_change_and_rates_between_reads():
    d = Deltas(PROGRESS)
    first = by_queue(d.update([q(0, 100, 1000)], [], 0))
    assert first[("broker-a", 0)]["count_change"] is None  # nothing to compare with yet
    got = by_queue(d.update([q(0, 70, 1150)], [], 10 * S))[("broker-a", 0)]
    assert got["count_change"] == -30 and got["count_per_s"] == -3.0
    assert got["rate_per_s"] == 15.0 and got["stale"] is False


def test_a_changed_owner_is_highlighted_for_a_few_rounds():
    d = Deltas(PROGRESS)
    d.update([q(0, 1, 10, owner="c1")], [], 0)
    seen = [by_queue(d.update([q(0, 1, 10, owner="c2")], [], S))[("broker-a", 0)]["changed"]]
    for i in range(HIGHLIGHT_ROUNDS):
        seen.append(by_queue(d.update([q(0, 1, 10, owner="c2")], [], (2 + i) * S))[
            ("broker-a", 0)]["changed"])
    assert seen[0] == ["owner"]
    assert seen[:HIGHLIGHT_ROUNDS] == [["owner"]] * HIGHLIGHT_ROUNDS
    assert seen[HIGHLIGHT_ROUNDS] == []


def test_a_broker_that_did_not_answer_is_stale_with_the_age_of_its_last_good_value():
    d = Deltas(PROGRESS)
    d.update([q(0, 5, 10), q(0, 7, 20, broker="broker-b")], [], 0)
    # broker-b's queue missing, broker-a's answered
    out = by_queue(d.update([q(0, 4, 11)], ["broker-b"], 30 * S))
    b = out[("broker-b", 0)]
    assert b["stale"] and b["stale_age_s"] == 30.0 and b["row"]["lag"] == 7
    assert not out[("broker-a", 0)]["stale"]
    # listed with unknown values: the same
    out = by_queue(d.update([q(0, 4, 12), q(0, None, None, broker="broker-b")], ["broker-b"],
                            45 * S))
    assert out[("broker-b", 0)]["stale"] and out[("broker-b", 0)]["stale_age_s"] == 45.0
    # back: fresh again, its change measured against the last good value
    back = by_queue(d.update([q(0, 4, 13), q(0, 2, 25, broker="broker-b")], [], 60 * S))
    assert back[("broker-b", 0)]["stale"] is False
    assert back[("broker-b", 0)]["count_change"] == -5


def test_a_row_that_left_is_forgotten():
    d = Deltas(PROGRESS)
    d.update([q(0, 5, 10), q(1, 5, 10)], [], 0)
    out = d.update([q(0, 5, 10)], [], S)
    assert [x["queue_id"] for x in out] == [0] and len(d.seen) == 1


def test_a_view_without_a_broker_column_goes_stale_on_any_failure():
    d = Deltas(SPECS["groups"])
    d.update([{"group": "G", "lag": 10, "state": "OK", "members": 1}], [], 0)
    out = d.update([{"group": "G", "lag": None, "state": "UNKNOWN", "members": 1}],
                   ["broker-a"], 5 * S)
    assert out[0]["stale"] and out[0]["row"]["lag"] == 10


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_rounds_never_overlap_and_a_slow_read_says_so():
    clock, log, rounds = Clock(), [], []

    def fetch():
        log.append(("start", clock.t))
        reads = sum(k == "start" for k, _ in log)
        clock.t += 3.0 if reads == 2 else 0.5  # the second read is slow
        log.append(("end", clock.t))
        return []

    def wait(seconds: float) -> bool:
        log.append(("wait", seconds))
        clock.t += seconds
        return False

    n = run_watch(fetch, lambda v: v, PROGRESS, 2.0, rounds.append, count=3,
                  now_ms=lambda: int(clock.t * 1000), wait=wait, monotonic=clock)
    assert n == 3 and [r.n for r in rounds] == [1, 2, 3]
    starts = [t for k, t in log if k == "start"]
    ends = [t for k, t in log if k == "end"]
    assert all(s >= e for s, e in zip(starts[1:], ends, strict=False))  # never overlapping
    assert [r.late for r in rounds] == [False, True, False]
    assert [w for k, w in log if k == "wait"] == [1.5, 0.0]
    assert rounds[1].note() and "longer than the 2s interval" in rounds[1].note()


def test_a_stop_while_waiting_ends_the_watch():
    rounds: list[WatchRound] = []
    n = run_watch(lambda: [], lambda v: v, PROGRESS, 1.0, rounds.append,
                  wait=lambda s: True)
    assert n == 1 and len(rounds) == 1

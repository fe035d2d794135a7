"""The capture alignment rule (mqctl/lagjob/alignment.py; pure, no Spark): a capture's span
is bounded by its first time, it never holds one key at two times, the walk opens a capture
only where it must, and the captures from any capture start on do not depend on what came
before (what makes a bounded re-run's look-back find the full run's captures)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqctl.lagjob.alignment import Close, align, align_chains, shared_times, warnings

S = 1000


def captures(records: list[tuple[int, str]], align_ms: int) -> dict[int, int]:
    """time -> capture_ts for ``records`` ((t, key)) of one cluster."""
    times = shared_times(records)
    return dict(zip([t for t, _ in times], align(times, align_ms).starts, strict=True))


def test_four_snapshots_seven_seconds_apart_are_four_captures():
    # `snapshot --all-groups` every 7 s: the same queues each time
    recs = [(t * S, q) for t in (0, 7, 14, 21) for q in ("a:0", "a:1", "b:0")]
    got = align(shared_times(recs), 10 * S)
    assert got.starts == [0, 7 * S, 14 * S, 21 * S]
    assert got.close == Close(shared=3, closest_ms=7 * S, spans=0)


def test_per_broker_exports_of_one_run_are_one_capture():
    # consumerOffset.json of broker-a at 0 s, broker-b at 3 s, broker-c at 8 s; again 60 s on
    recs = [(0, "a:0"), (3 * S, "b:0"), (8 * S, "c:0"),
            (60 * S, "a:0"), (63 * S, "b:0"), (68 * S, "c:0")]
    assert captures(recs, 10 * S) == {0: 0, 3 * S: 0, 8 * S: 0,
                                      60 * S: 60 * S, 63 * S: 60 * S, 68 * S: 60 * S}
    assert align(shared_times(recs), 10 * S).close == Close()


def test_alignment_never_chains():
    # every gap is 6 s, under --align 10s: the span is bounded by the first time
    recs = [(t * S, f"q{t}") for t in (0, 6, 12, 18, 24)]
    assert captures(recs, 10 * S) == {0: 0, 6 * S: 0, 12 * S: 12 * S, 18 * S: 12 * S,
                                      24 * S: 24 * S}
    assert align(shared_times(recs), 10 * S).close == Close(spans=2)


def test_a_key_seen_again_opens_the_next_capture_and_the_rest_follow_it():
    # b:0 at 0 s and again at 4 s: 4 s opens a capture, and a:0 at 6 s joins that one
    recs = [(0, "a:0"), (0, "b:0"), (4 * S, "b:0"), (6 * S, "a:0")]
    assert captures(recs, 10 * S) == {0: 0, 4 * S: 4 * S, 6 * S: 4 * S}


def test_align_zero_is_exact_times_and_nothing_is_close():
    recs = [(0, "a"), (1, "a"), (2, "b")]
    got = align(shared_times(recs), 0)
    assert got.starts == [0, 1, 2] and got.close == Close()


def test_times_must_be_ascending():
    with pytest.raises(ValueError, match="ascending"):
        align([(5, None), (5, None)], 10)


def test_align_chains_counts_from_a_bound_and_names_the_moved_times():
    rows = [("c", 0, t * S, s) for t, s in ((0, None), (7, 0), (14, 7 * S))]
    rows += [("c", 1, 100 * S, None), ("c", 1, 103 * S, None), ("d", 0, 5, None)]
    moved, close = align_chains(rows, 10 * S, count_from=14 * S)
    assert moved == [("c", 103 * S, 100 * S)]
    assert close == {"c": Close(shared=1, closest_ms=7 * S)}


def test_warnings_name_the_cluster_and_the_closest_gap():
    w = warnings({"prod": Close(shared=3, closest_ms=6_900, spans=1)}, 10 * S, 10)
    assert w[0].startswith("3 capture(s) of cluster prod came within --align 10s of the "
                           "previous one (closest 6.9s apart)")
    assert "--window 10 captures" in w[0]
    assert w[1].startswith("1 capture(s) of cluster prod began within --align 10s of the "
                           "previous capture's last record but more than --align after its "
                           "first")
    assert warnings({}, 10 * S, 10) == []


def test_close_round_trips_through_the_manifest():
    c = Close(shared=2, closest_ms=4000, spans=1)
    assert Close.from_json(c.to_json()) == c
    assert Close.from_json({"shared": "x"}) == Close()


# ---- properties --------------------------------------------------------------------------

records_st = st.lists(st.tuples(st.integers(0, 60), st.sampled_from("abcde")), max_size=40)
align_st = st.sampled_from([0, 1, 3, 5, 10])


@settings(max_examples=300, deadline=None)
@given(records=records_st, align_ms=align_st)
def test_each_capture_is_bounded_and_holds_a_key_once(records, align_ms):
    got = captures(records, align_ms)
    keys_at: dict[int, dict[str, int]] = {}
    for t, k in records:
        c = got[t]
        assert c <= t <= c + align_ms  # the span, from the capture's first time
        seen = keys_at.setdefault(c, {})
        assert seen.setdefault(k, t) == t  # one time per key in a capture


@settings(max_examples=300, deadline=None)
@given(records=records_st, align_ms=align_st)
def test_a_capture_opens_only_where_the_previous_one_cannot_take_the_time(records, align_ms):
    got = captures(records, align_ms)
    times = sorted(got)
    keys: dict[int, set[str]] = {}
    for t, k in records:
        keys.setdefault(t, set()).add(k)
    for prev, t in itertools.pairwise(times):
        if got[t] != t:
            continue
        start = got[prev]
        held = set().union(*(keys[x] for x in times if got[x] == start))
        assert t - start > align_ms or keys[t] & held  # (the walk had to open one here)


@settings(max_examples=300, deadline=None)
@given(records=records_st, align_ms=align_st)
def test_the_captures_from_a_capture_start_on_do_not_depend_on_earlier_times(records,
                                                                            align_ms):
    got = captures(records, align_ms)
    full = align(shared_times(records), align_ms)
    starts = sorted(set(got.values()))
    for s in starts:
        later = [(t, k) for t, k in records if t >= s]
        assert captures(later, align_ms) == {t: c for t, c in got.items() if t >= s}
    assert full.starts == [got[t] for t in sorted(got)]
    # a look-back from the capture before the new ones counts the new ones' close captures
    # as the whole walk does (what a bounded re-run adds to the earlier runs' counts)
    for prev, s in itertools.pairwise(starts):
        look_back = shared_times([(t, k) for t, k in records if t >= prev])
        assert (align(look_back, align_ms, count_from=s).close
                == align(shared_times(records), align_ms, count_from=s).close)


@settings(max_examples=200, deadline=None)
@given(records=records_st)
def test_shared_times_is_the_latest_earlier_time_of_a_common_key(records):
    keys: dict[int, set[str]] = {}
    for t, k in records:
        keys.setdefault(t, set()).add(k)
    for t, shared in shared_times(records):
        earlier = [u for u in keys if u < t and keys[u] & keys[t]]
        assert shared == (max(earlier) if earlier else None)

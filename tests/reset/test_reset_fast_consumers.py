"""Resets that fast consumers replay between two reads.

Real 4.9.3 and 5.3.3 clients re-consume a rewind and commit their old position again well
under verify's 1 s poll: 5.3.3 push (server-side) and pop groups, and a 4.9.3 legacy push. The
simulated cluster reproduces it (a fast consumer takes a server-side reset at its next pull,
a legacy push after its 10 s pause, and replays the rewind in the same instant), so these
tests read the verdicts verify gives when the target is never seen: the broker's answer
(server-side, pop), the owners' process queues (legacy push), ``unknown`` otherwise; and
what `offsets rollback` says right after such a replay, and of a file whose queues were all
``none``.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import time

import pytest
from sim_reset import offsets, reset_on_manual_clock

from mqctl.models import MessageQueue
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.codes import RequestCode
from mqctl.reset import Status, Target, verify

MQ = MessageQueue
WRITES = {RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, RequestCode.UPDATE_CONSUMER_OFFSET}


def scenario(version: str, *, pop: bool = False, consumers: int = 1, rate: float = 2.5,
             consumer_rate: float | None = None, clock: str = "manual") -> dict:
    """Two masters of ``version``, T with 4 queues each written at ``rate`` msg/s per queue
    (the issue's 20 msg/s over 8 queues), group G caught up. 4.x brokers reset the legacy way."""
    cons = [{"id": f"10.9.0.{i + 1}@c{i + 1}", "version": version,
             **({"rate": consumer_rate} if consumer_rate is not None else {})}
            for i in range(consumers)]
    return {"name": "fast-" + version, "clock": {"mode": clock},
            "brokers": [{"name": "broker-a", "version": version},
                        {"name": "broker-b", "version": version}],
            "topics": [{"name": "T", "queues": 4, "rate": rate, "history": "10m"}],
            "groups": [{"name": "G", "topics": ["T"], "initial_lag": 0,
                        **({"consume_type": "CONSUME_POP"} if pop else {}),
                        "consumers": cons}]}


def consumed(s, group="G"):
    return s.call(lambda c: sum(x.consumed_total for x in c.consumers(group)))


# ------------------------------------------------------------ 5.x: server-side, push and pop

@pytest.mark.parametrize("pop", [False, True])
def test_a_5x_server_side_reset_replayed_before_any_read_is_verified_by_the_answer(
        sim_factory, pop):
    """5.3.3 (useServerSideResetOffset=true): the fast consumers take the reset at their next
    pull (pop: their next pop, the broker commits the reset offset itself) and re-consume
    the rewind before verify's first read, which sees the group past the old offsets. The
    broker wrote the offset before answering: verified, 'applied by the broker', and no re-run
    advice (`broker-a:2 not-taken (offset is 140, expected 0)`, exit 8)."""
    s = sim_factory(scenario("V5_3_3", pop=pop, consumers=2 if pop else 1))
    s.advance(6)  # up, caught up, committing
    before, ate = offsets(s), consumed(s)
    assert min(before.values()) > 1000
    plan, res, seen = reset_on_manual_clock(s, Target("time", s.clock.now_ms() - 60_000,
                                                      text="-1m"))
    rewind = {q.mq: q.replay for q in plan.queues}
    assert all(130 <= n <= 160 for n in rewind.values()), rewind  # ~150 per queue
    # the target was never there to be read: the group was past its old offsets at once
    assert seen and all(o[mq] >= v for o in seen for mq, v in before.items()), (before, seen)
    assert [r.status for r in res] == [Status.VERIFIED] * 8
    for r in res:
        assert r.detail.startswith(f"applied by the broker (it wrote {r.plan.target} before "
                                   "answering"), r.detail
        assert f"next {'pop' if pop else 'pull'} takes it); the group has re-consumed to " \
            f"{r.now}" in r.detail
        assert r.now >= r.plan.current and r.lowest >= r.plan.current
    # and the group did re-consume every queue's rewind (plus what was produced meanwhile)
    assert consumed(s) - ate >= sum(rewind.values())


def test_an_old_5x_client_replaying_unseen_is_unknown_not_failed():
    """A client before 5.2.0 commits its old offset with the pull that takes the reset and
    writes the new one 10 s later: a read past the old offset does not tell applied from not
    ('where nothing proves it either way, the verdict is unknown')."""
    from mqctl.reset import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, QueueResult
    from mqctl.reset.apply import _server_side_verdict

    q = QueuePlan(MQ("T", "broker-a", 0), 0, 500, 300, 100)
    for version, status in ((479, Status.VERIFIED), (V5_1_0 := 441, Status.UNKNOWN),
                            (None, Status.UNKNOWN)):
        st = ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY", "CLUSTERING",
                           min_version=version)
        plan = Plan("G", "T", Target("offset", 100), 0, "ns", [q],
                    {"broker-a": BrokerPlan("broker-a", "a", Path_.SERVER_SIDE, "t")}, st)
        r = QueueResult(q, Status.APPLIED, "server-side reset", now=320)
        r = _server_side_verdict(plan, r)
        assert r.status == status, (version, r.detail)
        if status == Status.UNKNOWN:
            assert "a client older than 5.2.0" in r.detail and "read 320 (old offset 300)" \
                in r.detail
    assert V5_1_0 < 470
    # below the target: not the consumers' doing
    r = QueueResult(q, Status.APPLIED, "server-side reset", now=50)
    r = _server_side_verdict(plan, r)
    assert r.status == Status.NOT_TAKEN


@pytest.mark.parametrize("fix_ms,status", [(1_500, Status.VERIFIED), (60_000, Status.UNKNOWN)])
def test_a_forward_server_side_reset_read_before_the_client_writes_it_is_not_another_writer(
        sim_factory, monkeypatch, fix_ms, status):
    """The pull that takes a server-side reset commits the client's old position
    (PullMessageProcessor: queryThenEraseResetOffset, then the pull's commitOffset); the 5.2.0+
    client writes the reset offset one round trip later. A forward reset (a rollback of a
    rewind, --to-latest) read in between shows the group where it was, below the target: it
    was called ``moved by another writer`` (a fresh-clone CI run: `offsets rollback` exit 8,
    "7 of 8 queue(s) were moved by another writer ... now 24 (target 1509)"). The sim's client
    write is delayed here so verify's read falls in between: verify reads on until the write
    lands (verified), and a write that never lands within the bound is unknown, not moved."""
    import mqctl.sim.consumer.consume as simconsumer

    monkeypatch.setattr(simconsumer, "CURRENT_CLIENT_FIX_MS", fix_ms)
    # the consumer (1 msg/s) falls behind the producers (2.5 msg/s per queue)
    # (its pulls run on the 1 s consume tick: the next one half-way through verify's 1 s wait)
    s = sim_factory(scenario("V5_3_3", consumer_rate=1))
    s.advance(60.5)
    plan, res, seen = reset_on_manual_clock(s, Target("latest", text="latest"))
    assert all(q.current is not None and q.target > q.current for q in plan.queues), plan.queues
    # verify read the group's own old positions after the pulls took the reset
    first = seen[0]
    window = [q.mq for q in plan.queues if q.current <= first[q.mq] < q.target]
    assert len(window) >= 4, [(first[q.mq], q.current, q.target) for q in plan.queues]
    assert [r.status for r in res] == [status] * 8, [(r.status, r.detail) for r in res]
    for r in res:
        assert "another writer" not in r.detail.split("or another writer set it")[0]
        if status == Status.VERIFIED:
            assert r.now >= r.goal, r.detail
        else:
            assert r.plan.current <= r.now < r.goal
            assert r.detail.startswith(f"offset is {r.now}, below the target {r.goal} and at "
                                       f"or past where the group was ({r.plan.current})")
            assert "still read so 5 s after the wait" in r.detail, r.detail
    # the 1 s wait, then reads every 0.25 s: until the writes landed (1.5 s after the pulls),
    # or for the 5 s bound (20 reads, and one for what rounding leaves of it)
    reads = (3, 8) if status == Status.VERIFIED else (21, 22)
    assert reads[0] <= len(seen) <= reads[1], len(seen)


@pytest.mark.parametrize("now,pop,status", [
    (600, False, Status.UNKNOWN),   # at or past where the group was: its own pull's commit
    (500, False, Status.UNKNOWN),
    (400, False, Status.MOVED),     # below where the group was: something else wrote it
    (600, True, Status.MOVED),      # a pop commits the reset offset itself: no such window
])
def test_a_forward_target_read_once_without_a_wait(now, pop, status):
    """--verify-wait 0: one read, no reads after it. A forward target read back where the
    group was is the group's own pull-with-commit as much as another writer: unknown, and
    the detail says it was read with no wait; below where the group was, moved."""
    from types import SimpleNamespace
    from typing import Any

    from mqctl.reset import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, QueueResult
    from mqctl.versions import V5_2_0

    q = QueuePlan(MQ("T", "broker-a", 0), 0, 2000, 500, 900)

    class FakeAdmin:
        concurrency = 1

        async def consume_stats(self, group, addr, topic):
            return SimpleNamespace(offsets={q.mq: SimpleNamespace(consumer_offset=now)})

    st = ConsumerState(True, ["c@1"], False, pop, "CONSUME_PASSIVELY", "CLUSTERING",
                       min_version=V5_2_0)
    plan = Plan("G", "T", Target("latest"), 0, "ns", [q],
                {"broker-a": BrokerPlan("broker-a", "a:1", Path_.SERVER_SIDE, "t")}, st)
    admin: Any = FakeAdmin()
    (r,) = asyncio.run(verify(admin, plan, [QueueResult(q, Status.APPLIED, "written")],
                              wait_s=0, owners=None))
    assert r.status == status, r.detail
    if status == Status.UNKNOWN:
        assert r.detail.startswith(f"offset is {now}, below the target 900 and at or past "
                                   "where the group was (500)"), r.detail
        assert "read so with no wait (--verify-wait 0)" in r.detail
    else:
        assert r.detail.startswith(f"moved by another writer (now {now})"), r.detail


def test_a_window_read_says_how_long_it_was_read_not_how_long_it_could_have_been():
    """The extra reads of a queue in the pull's window stop when a re-read fails (here: the
    other broker's): the detail says what was read (at the end of the wait, not again), not
    the 5 s bound it did not read for, nor --verify-wait 0."""
    from types import SimpleNamespace
    from typing import Any

    from mqctl.errors import ConnectError
    from mqctl.reset import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, QueueResult
    from mqctl.versions import V5_2_0

    qa = QueuePlan(MQ("T", "broker-a", 0), 0, 2000, 500, 900)
    qb = QueuePlan(MQ("T", "broker-b", 0), 0, 2000, 500, 900)

    class FakeAdmin:
        concurrency = 1

        async def consume_stats(self, group, addr, topic):
            if addr == "b:1":
                raise ConnectError("broker-b is down")
            return SimpleNamespace(offsets={qa.mq: SimpleNamespace(consumer_offset=600)})

    async def no_wait(_s: float) -> None:
        return None

    st = ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY", "CLUSTERING",
                       min_version=V5_2_0)
    plan = Plan("G", "T", Target("latest"), 0, "ns", [qa, qb],
                {"broker-a": BrokerPlan("broker-a", "a:1", Path_.SERVER_SIDE, "t"),
                 "broker-b": BrokerPlan("broker-b", "b:1", Path_.SERVER_SIDE, "t")}, st)
    admin: Any = FakeAdmin()
    ra, rb = asyncio.run(verify(admin, plan, [QueueResult(qa, Status.APPLIED, "written"),
                                              QueueResult(qb, Status.APPLIED, "written")],
                                wait_s=1.0, waiter=no_wait, owners=None))
    assert rb.status == Status.UNVERIFIED
    assert ra.status == Status.UNKNOWN, ra.detail
    assert "read so at the end of the wait, and not again" in ra.detail, ra.detail
    assert "5 s after the wait" not in ra.detail and "--verify-wait 0" not in ra.detail


def test_the_window_verdict_docs_quote_is_what_verify_says():
    """docs/reset-result.md quotes the ``unknown`` detail of a queue still read in the pull's window
    (target 1509, the group at 24, read so 5 s after the wait): the code's words."""
    from pathlib import Path

    from mqctl.reset import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, QueueResult
    from mqctl.reset.apply import OWN_PULL_SETTLE_S, _server_side_verdict
    from mqctl.versions import V5_2_0

    q = QueuePlan(MQ("T", "broker-a", 1), 0, 2000, 24, 1509)
    st = ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY", "CLUSTERING",
                       min_version=V5_2_0)
    plan = Plan("G", "T", Target("rollback"), 0, "ns", [q],
                {"broker-a": BrokerPlan("broker-a", "a:1", Path_.SERVER_SIDE, "t")}, st)
    r = QueueResult(q, Status.APPLIED, "server-side reset", now=24, settled_s=OWN_PULL_SETTLE_S)
    r = _server_side_verdict(plan, r)
    assert r.status == Status.UNKNOWN
    said = r.detail.split("; nothing read tells")[0] + "; nothing read tells ..."
    doc = " ".join((Path(__file__).parents[2] / "docs" / "reset-result.md").read_text().split())
    assert f"`unknown` (`{said}`), never `moved`" in doc, said


# ------------------------------------------------------------ 4.x: legacy push

def test_a_4x_legacy_push_replayed_between_two_reads_is_proven_by_the_process_queues(
        sim_factory):
    """4.9.3, two fast consumers, two brokers: each client applies the pushes one after the
    other, 10 s apart; after the last one it re-consumes the rewind before any read (broker-b:1 and
    :3 `not-taken "offset is 290, expected 108"`). The owners' running info,
    read right after the push and at the end, shows each such queue's process queue
    re-created after the push: verified, never not-taken."""
    s = sim_factory(scenario("V4_9_3", consumers=2))
    s.advance(6)
    before, ate = offsets(s), consumed(s)
    plan, res, seen = reset_on_manual_clock(s, Target("time", s.clock.now_ms() - 120_000,
                                                      text="-2m"))
    assert {b.path.value for b in plan.brokers.values()} == {"legacy-push"}
    assert [r.status for r in res] == [Status.VERIFIED] * 8, [r.detail for r in res]
    unseen = [r for r in res if all(o[r.plan.mq] >= before[r.plan.mq] for o in seen)]
    assert unseen, "some queues must replay before any read (the second push)"
    for r in unseen:
        assert r.taken_after_ms is None and r.lowest >= r.plan.current
        assert r.detail.startswith("applied by the clients: 10.9.0."), r.detail
        assert "re-created its process queue after the push" in r.detail
        assert r.detail.endswith(f"the group has re-consumed to {r.now}")
    assert consumed(s) - ate >= sum(q.replay for q in plan.queues)


def test_a_4x_legacy_push_a_client_never_applied_is_not_taken(sim_factory):
    """The same, but the clients never get the push (a lost oneway RESET_CONSUMER_CLIENT_OFFSET):
    the owners still hold the process queues they had before it, 25 s later: not-taken, with
    that evidence (the only case a re-run is advised)."""
    s = sim_factory(scenario("V4_9_3", consumers=2))
    s.advance(6)
    for c in s.call(lambda c: c.consumers("G")):
        c.reset_offset = lambda *a, **kw: None  # the push never arrives
    before = offsets(s)
    _plan, res, seen = reset_on_manual_clock(s, Target("time", s.clock.now_ms() - 120_000,
                                                      text="-2m"))
    assert [r.status for r in res] == [Status.NOT_TAKEN] * 8
    assert all("not applied: 10.9.0." in r.detail and "still has the process queue it had "
               "before the push" in r.detail for r in res), res[0].detail
    assert all(o[mq] >= v for o in seen for mq, v in before.items())


def test_a_4x_legacy_push_without_owner_evidence_is_unknown(sim_factory):
    """Without the owners' running info (not readable), a rewind never read at its target is
    unknown: neither verified nor not-taken."""
    from mqctl.reset.evidence import OwnerRead

    s = sim_factory(scenario("V4_9_3", consumers=1))
    s.advance(6)

    async def unreadable(admin, plan):
        return OwnerRead(0, error="GET_CONSUMER_RUNNING_INFO timed out")

    _plan, res, _ = reset_on_manual_clock(s, Target("time", s.clock.now_ms() - 120_000,
                                                   text="-2m"), owners=unreadable)
    unseen = [r for r in res if r.taken_after_ms is None]
    assert unseen and {r.status for r in unseen} == {Status.UNKNOWN}
    assert all("does not say whether it took" in r.detail and "timed out" in r.detail
               for r in unseen)


A0 = MQ("T", "broker-a", 0)


def seen_(cid="c@1", created=1000, dropped=False, orderly=False, started="s1"):
    from mqctl.reset.evidence import SeenQueue

    return SeenQueue(cid, started, orderly, created, dropped)


@pytest.mark.parametrize("base, final, verdict, text", [
    # a concurrent consumer's ProcessQueue re-created since the push: applied
    ([{}], [{"created": 12_000}], "applied", "re-created its process queue"),
    # the very same ProcessQueue 25 s after the push: not applied
    ([{}], [{}], "not-applied", "still has the process queue it had before"),
    # still dropped: the client is in its 10 s pause
    ([{"dropped": True}], [{"dropped": True}], "unknown", "still applying it"),
    # orderly: lockAll renews lastLockTimestamp, nothing to tell
    ([{"orderly": True}], [{"orderly": True, "created": 12_000}], "unknown", "is orderly"),
    # a restarted process (same id, another start): not the same process queue's story
    ([{}], [{"started": "s2", "created": 12_000}], "unknown", "another owner or process"),
    # nobody held it when the push came: no client applies it
    ([], [], "not-applied", "no online consumer held this queue"),
])
def test_legacy_evidence_per_queue(base, final, verdict, text):
    from mqctl.reset.evidence import OwnerRead, legacy_evidence

    b = OwnerRead(500, {A0: [seen_(**x) for x in base]} if base else {}, members=("c@1",))
    f = OwnerRead(25_000, {A0: [seen_(**x) for x in final]} if final else {},
                  members=("c@1",))
    got, why = legacy_evidence(A0, b, f, pushed_ms=0, pushes=1)
    assert got == verdict and text in why, why


def test_legacy_evidence_needs_a_read_before_the_clients_apply():
    from mqctl.reset.evidence import OwnerRead, legacy_evidence

    late = OwnerRead(9_500, {A0: [seen_(created=9_000)]}, members=("c@1",))
    f = OwnerRead(25_000, {A0: [seen_(created=9_000)]}, members=("c@1",))
    got, why = legacy_evidence(A0, late, f, pushed_ms=0, pushes=1)
    assert got == "unknown" and "read too late" in why
    # too early to judge a client that has not applied yet (2 pushes: 20 s + margin)
    b = OwnerRead(100, {A0: [seen_()]}, members=("c@1",))
    got, why = legacy_evidence(A0, b, OwnerRead(15_000, {A0: [seen_()]}), pushed_ms=0,
                               pushes=2)
    assert got == "unknown" and "had not applied it yet" in why


# ------------------------------------------------------------ what the CLI says

def test_rerun_hint_names_only_the_queues_the_evidence_says_did_not_take():
    from mqctl.reset import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, QueueResult
    from mqctl.reset.outcome import rerun_hint

    qs = [QueuePlan(MQ("T", "broker-b", i), 0, 500, 290, 108) for i in range(4)]
    plan = Plan("G", "T", Target("time", 1717200000000, "-2m"), 0, "ns", qs,
                {"broker-b": BrokerPlan("broker-b", "b", Path_.LEGACY_PUSH, "t")},
                ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY", "CLUSTERING"))
    bad = [QueueResult(qs[1], Status.UNKNOWN, "x"), QueueResult(qs[3], Status.UNKNOWN, "x")]
    h = rerun_hint(plan, bad, "rb.json", True)
    assert "--queues" not in h and "re-run for only" not in h
    assert "broker-b:1,3: not known whether the reset took" in h and "do not re-run" in h
    h = rerun_hint(plan, [*bad, QueueResult(qs[2], Status.NOT_TAKEN, "x")], "rb.json", True)
    assert "--queues broker-b:2 " in h and "--queues broker-b:1" not in h


def test_done_summary_counts_a_legacy_push_as_pushed_until_read_taken():
    from mqctl.reset import BrokerPlan, ConsumerState, Path_, Plan, QueuePlan, QueueResult
    from mqctl.reset.outcome import done_summary

    qs = [QueuePlan(MQ("T", "broker-a", i), 0, 500, 290, 140) for i in range(2)]
    plan = Plan("G", "T", Target("time", 1, "-2m"), 0, "ns", qs,
                {"broker-a": BrokerPlan("broker-a", "a", Path_.LEGACY_PUSH, "t")},
                ConsumerState(True, ["c@1"], False, False, "CONSUME_PASSIVELY", "CLUSTERING"))
    text = done_summary(plan, [QueueResult(q, Status.APPLIED, "pushed") for q in qs])
    assert text.startswith("0 of 2 queue(s) were reset: 0 message(s) rewound")
    assert "2 pushed to the clients and not applied yet" in text and "300 to be rewound" in text
    text = done_summary(plan, [QueueResult(qs[0], Status.VERIFIED, ""),
                               QueueResult(qs[1], Status.UNKNOWN, "")])
    assert text == ("1 of 2 queue(s) were reset: 150 message(s) rewound (to be consumed "
                    "again), 0 skipped; 1 unknown (see DETAIL)")
    # a queue without a committed offset: its change is not known, counted apart, never as 0
    none = [QueuePlan(MQ("T", "broker-a", 2), 0, 500, None, 140)]
    plan = Plan("G", "T", Target("time", 1, "-2m"), 0, "ns", qs + none, plan.brokers,
                plan.consumers)
    text = done_summary(plan, [QueueResult(q, Status.APPLIED, "pushed") for q in qs + none])
    assert ("3 pushed to the clients and not applied yet (the clients apply a pushed reset "
            "about 10 s after the push, one broker after another: 300 to be rewound, 0 skipped "
            "once they do; 1 queue(s) without a committed offset before: not counted, their "
            "change is not known)") in text, text


LEGACY_ON = {"name": "legacy-on", "clock": {"mode": "manual"},
             "brokers": [{"name": "broker-a", "config": {"useServerSideResetOffset": False}}],
             "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "1h"}],
             "groups": [{"name": "G", "topics": ["T"], "initial_lag": 0,
                         "consumers": [{"id": "10.9.0.1@1"}]}]}


def test_interrupted_online_legacy_reset_says_pushed_not_applied_and_an_undo_that_works(
        cli, sim_factory, tmp_path):
    """Ctrl-C while verify waits for the clients of a legacy push: nothing is applied yet (the
    clients apply it 10 s after the push), so the output says pushed, not '2 of 2 queue(s)
    were reset'; the undo is the rollback after stopping the consumers (a legacy broker takes
    explicit offsets only from an offline group: run while they are online it is refused,
    exit 6), and run as printed it restores the offsets."""
    import signal

    from cli_process import finish, spawn, wait_for

    s = sim_factory(LEGACY_ON)
    s.advance(3)
    before = offsets(s)
    rb = tmp_path / "rb.json"
    proc = spawn(s, ["offsets", "reset", "-g", "G", "-t", "T", "--by-duration", "-10m",
                     "--execute", "--rollback-file", str(rb)], tmp_path)
    wait_for(proc, lambda: any(r.code == RequestCode.INVOKE_BROKER_TO_RESET_OFFSET
                               for r in s.request_log), "the push")
    # verify has begun: it reads the owners' process queues right after the push

    def read_after_push() -> bool:
        codes = [r.code for r in s.request_log]
        push = codes.index(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET)
        return RequestCode.GET_CONSUMER_RUNNING_INFO in codes[push:]

    wait_for(proc, read_after_push, "verify's first read")
    time.sleep(0.3)  # verify waits (wall clock) for the clients
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 130, err
    result = out.split("# result", 1)[1]
    rows = [ln.split() for ln in result.splitlines() if ln.startswith("broker-a")]
    assert [x[4:6] for x in rows] == [["-", "applied"]] * 2  # NOW unknown: not read
    assert "interrupted by SIGINT during verify: every request was sent: 2 pushed to the " \
           "clients, not applied yet (they apply it about 10 s after the push" in err
    assert "0 of 2 queue(s) were reset: 0 message(s) rewound (to be consumed again), 0 " \
           "skipped; 2 pushed to the clients and not applied yet" in result
    assert "pushed: the clients of G apply the pushed reset about 10 s after the push" in result
    (line,) = [ln for ln in result.splitlines() if ln.startswith("undo it: ")]
    first, _, cmd = line[len("undo it: "):].partition(": mqctl ")
    assert first.startswith("stop the consumers of G first (broker(s) broker-a take explicit "
                            "offsets only from an offline group")
    assert f"undo: {first}: mqctl {cmd}" in err
    undo = ["mqctl", *shlex.split(cmd)]
    assert undo[-3:] == ["rollback", str(rb), "--execute"]
    # run while the consumers are online, the rollback is refused: that is why the stop
    r = cli([*undo[1:], "--verify-wait", "0"])
    assert r.exit_code == 6 and "live consumers overwrite" in r.stderr
    # as printed: stop the consumers (before their pause ends), then the rollback
    s.call(lambda c: c.consumer("10.9.0.1@1").leave())
    r = cli([*undo[1:], "--verify-wait", "0", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert offsets(s) == before


# ------------------------------------------------------------ rollback after a replay

def _reset_then_wait(cli, s, rb, duration: str, until) -> dict:
    r = cli(["-n", s.namesrv_addr, "offsets", "reset", "-g", "G", "-t", "T", "--by-duration",
             duration, "--execute", "--rollback-file", str(rb), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(rb.read_text())["queues"]
    saved = {(q["broker"], q["queue_id"]): q["offset"] for q in doc}
    wrote = {(q["broker"], q["queue_id"]): q["reset_to"] for q in doc}
    deadline = time.monotonic() + 20
    while not until(saved, wrote) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert until(saved, wrote)
    return saved


def _live(s):
    return {(mq.broker_name, mq.queue_id): v for mq, v in offsets(s).items()}


def test_rollback_right_after_a_replayed_rewind_says_so_and_names_force(cli, sim_factory,
                                                                         tmp_path):
    """5.3.3: right after an online rewind the fast consumer has replayed it and moved on: the
    rollback file is this group's own, and the refusal says the replay is complete and how
    many messages a rollback would replay again, with --force for who wants that ("is it another
    group's or an older reset's file?")."""
    s = sim_factory(scenario("V5_3_3", clock="accelerated"), clock="accelerated", speed=10)
    time.sleep(0.5)
    rb = tmp_path / "rb.json"
    saved = _reset_then_wait(cli, s, rb, "-1m",
                             lambda sv, _w: all(_live(s)[k] > v for k, v in sv.items()))
    r = cli(["-n", s.namesrv_addr, "offsets", "rollback", str(rb), "--execute", "-o", "json"])
    assert r.exit_code == 6, r.stderr
    d = r.json
    (ref,) = d["refusals"]
    assert "another group's" not in ref
    assert "group G has replayed this reset's rewind and consumed past the saved offsets on " \
           "8 queue(s)" in ref
    again = sum(q["current"] - saved[(q["broker"], q["queue_id"])] for q in d["queues"])
    assert f"the replay is complete there, so the saved offsets are behind the group and a " \
           f"rollback would rewind it again, replaying {again} message(s)" in ref
    assert "--force to rewind to the saved offsets anyway" in ref
    assert not [x for x in s.request_log if x.code in WRITES and "rollback" in str(x)]
    r = cli(["-n", s.namesrv_addr, "offsets", "rollback", str(rb), "--execute", "--force",
             "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert any("(--force)" in w and "replay is complete" in w for w in r.json["warnings"])


def test_rollback_while_the_replay_is_in_progress_is_allowed_and_says_how_far(
        cli, sim_factory, tmp_path):
    """A slow consumer (rate 20 msg/s) is still replaying a 10-minute rewind: the rollback
    skips the rest and says how far the replay got; it is not refused."""
    s = sim_factory(scenario("V5_3_3", clock="accelerated", consumer_rate=20),
                    clock="accelerated", speed=10)
    time.sleep(0.5)
    rb = tmp_path / "rb.json"
    # until the consumer replayed a little on at least 4 queues (and far from all of it)
    _reset_then_wait(cli, s, rb, "-10m",
                     lambda sv, wrote: sum(_live(s)[k] > wrote[k] + 2 for k in sv) >= 4)
    r = cli(["-n", s.namesrv_addr, "offsets", "rollback", str(rb), "--execute", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    (w,) = [x for x in r.json["warnings"] if "is replaying this reset's rewind" in x]
    assert re.search(r"broker-[ab]:\d replayed \d+ of \d+", w)
    assert "the rollback puts them back at the saved offsets and skips the" in w
    assert not r.json["refusals"]


# ------------------------------------------------------------ never-committed groups

NEVER = {"name": "never", "clock": {"mode": "manual"},
         "brokers": [{"name": "broker-a", "version": "V4_9_3"}],
         "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "10m"}],
         "groups": [{"name": "G_NEW", "topics": []},
                    {"name": "G_ON", "topics": ["T"], "initial_lag": 0,
                     "consumers": [{"id": "10.9.0.1@1", "version": "V4_9_3"}]}]}


def test_a_4x_reset_by_time_of_a_group_without_offsets_fails_before_the_online_check(
        sim_factory):
    """4.9.3's Broker2Client.resetOffset answers SYSTEM_ERROR `THe consumer group <G> not
    exist` as soon as a write queue has no committed offset, before the CONSUMER_NOT_ONLINE
    check that makes mqadmin fall back to ResetOffsetByTimeOldCommand: `mqadmin
    resetOffsetByTime` of such a group fails with CODE: 1. docs/reset.md says so (it said the
    fallback resets a never-consumed group per read queue)."""
    from pathlib import Path

    from mqctl.errors import BrokerError

    s = sim_factory(NEVER)
    s.advance(3)
    addr = s.cluster.broker_addr("broker-a")

    async def reset(group: str) -> tuple[int, str]:
        async with RemotingClient(ClientOptions(timeout=5)) as client:
            try:
                await client.invoke(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
                    "topic": "T", "group": group, "timestamp": 0, "isForce": True})
            except BrokerError as exc:
                return exc.code, exc.remark or ""
            return 0, ""

    assert asyncio.run(reset("G_NEW")) == (1, "THe consumer group <G_NEW> not exist")
    # with offsets on every write queue the online check comes next (mqadmin's fallback)
    s.call(lambda c: c.consumer("10.9.0.1@1").leave())
    code, remark = asyncio.run(reset("G_ON"))
    assert code == 206 and remark.startswith("Consumer not online, so can not reset offset")
    doc = (Path(__file__).parents[2] / "docs" / "reset.md").read_text()
    section = " ".join(doc[doc.index("## Compared with mqadmin `resetOffsetByTime`"):].split())
    assert "per read queue from the topic stats, which on 4.x list only the write queues" \
        not in section
    assert ("`Broker2Client.resetOffset` answers SYSTEM_ERROR `THe consumer group <G> not "
            "exist` as soon as a write queue's `queryOffset` is -1, before it checks whether "
            "the group is online") in section
    assert "CODE: 1 DESC: THe consumer group <G> not exist" in section

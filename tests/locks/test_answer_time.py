"""Lock ages are measured when each client's answer arrived, and a client's clock that is ahead
cannot stretch a lease (pure, and the admin fan-out over a fake transport).

Real 5.3.3 (two orderly clients, go1 SIGSTOPped): the survivor go2 renewed every 20.0 s
(lastLockTimestamp 23:49:12.524, :32.524, :52.524, 23:50:12.520), yet mqctl showed its queues
`expiring`, "renewal overdue: last renewal 26s ago", at three polls: the capture waited ~11 s
for go1's running info to time out and then measured go2's locks at its end. And a client whose
clock was 5 h 45 m ahead read LEASE LEFT `5h 46m` for a 60 s lease.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from types import SimpleNamespace

import pytest

from locks.helpers import NOW, capture, pq, queues, running
from mqctl import timeparse
from mqctl.admin import Admin
from mqctl.errors import RequestTimeout
from mqctl.locks import BROKER_LEASE_MS, LockState, build_view
from mqctl.locks.rows import view_result
from mqctl.models import BrokerData
from mqctl.remoting.codes import RequestCode
from mqctl.remoting.frame import RemotingCommand
from mqctl.render import emit

QS = queues(1)                     # broker-a:0, broker-b:0
GO1, GO2 = "10.0.0.1@go1", "10.0.0.2@go2"
STRETCH = 11_000                   # go1's running-info timeout, inside the same capture


def survivor_answer(received: int, renewed: int):
    """go2's running info: both queues locked, renewed at ``renewed``, received at
    ``received`` (what Admin.running_info stamps)."""
    info = running({q: pq(True, received - renewed, now=received) for q in QS})
    return replace(info, received_ts=received)


def test_the_survivor_is_held_at_its_own_answer_time_not_expiring_at_the_captures_end():
    renewed = NOW                        # its lockAll ran at NOW (every 20 s)
    received = NOW + 18_000              # its answer came 18 s later, 2 s before the next one
    end = received + STRETCH             # go1 timed out 11 s after that
    view, state = build_view(capture({GO2: survivor_answer(received, renewed)}), now=end,
                             queues_by_topic={"T": QS})
    for q in view.queues:
        assert (q.state, q.owner) == (LockState.HELD, GO2), q.reason
        assert q.lock_age_ms == 18_000 and q.trusted is True
        assert q.lease_left_ms == BROKER_LEASE_MS - 18_000
        assert q.subject is not None and q.subject.observed_ts == received
    # the state file records when it answered, not when the capture ended
    assert state[GO2].observed_ts == received


def test_an_answer_without_a_receive_time_is_taken_at_the_capture_time():
    info = running({q: pq(True, 29_000) for q in QS})          # received_ts 0
    view, _ = build_view(capture({GO2: info}), now=NOW, queues_by_topic={"T": QS})
    assert {q.state for q in view.queues} == {LockState.EXPIRING}
    assert all(q.lock_age_ms == 29_000 for q in view.queues)


class SlowTransport:
    """The remoting client under a real Admin: go2's GET_CONSUMER_RUNNING_INFO answers at
    once, go1's times out after STRETCH ms of mqctl's clock."""

    options = SimpleNamespace(timeout=3.0)

    def __init__(self, clock: dict[str, int], body: bytes) -> None:
        self.clock = clock
        self.body = body

    async def invoke(self, addr, code, ext=None, body=b"", **kw):
        assert code == RequestCode.GET_CONSUMER_RUNNING_INFO
        if ext["clientId"] == GO1:
            await asyncio.sleep(0.01)
            self.clock["now"] += STRETCH
            raise RequestTimeout("wait response timeout", addr)
        await asyncio.sleep(0)
        return RemotingCommand(0, body=self.body)


@pytest.fixture
def clock():
    t = {"now": NOW + 18_000}
    timeparse.set_clock(lambda: t["now"])
    yield t
    timeparse.set_clock(None)


def test_the_admin_fan_out_stamps_each_answer_when_it_arrives(clock):
    body = json.dumps({"properties": {"PROP_CONSUMEORDERLY": "true"}, "subscriptionSet": [],
                       "mqTable": {}}).encode()
    admin = Admin(SlowTransport(clock, body), "127.0.0.1:9876")  # type: ignore[arg-type]
    got = asyncio.run(admin.running_infos("G", [GO1, GO2],
                                          [BrokerData("c", "broker-a", {0: "127.0.0.1:10911"})]))
    assert isinstance(got[GO1], RequestTimeout)
    assert got[GO2].received_ts == NOW + 18_000           # before go1's timeout moved time
    assert clock["now"] == NOW + 18_000 + STRETCH


def test_lease_left_is_at_most_a_lease_and_the_clock_disagreement_is_noted():
    """The client's lastLockTimestamp is 5 h 45 m after its answer arrived: its renewal is
    taken as made when it answered, LEASE LEFT is at most 60 s, and the view says so in the
    table's notes and in JSON."""
    ahead = (5 * 3600 + 45 * 60) * 1000
    info = replace(running({q: pq(True, -ahead) for q in QS}), received_ts=NOW)
    view, _ = build_view(capture({GO2: info}), now=NOW, queues_by_topic={"T": QS})
    for q in view.queues:
        assert q.state is LockState.HELD
        assert q.lease_left_ms == BROKER_LEASE_MS and q.lock_age_ms == 0
        assert q.clock_ahead_ms == ahead
        d = q.to_dict()
        assert d["lease_left_ms"] == BROKER_LEASE_MS and d["clock_ahead_ms"] == ahead
        assert d["lease_end_ts"] == NOW + BROKER_LEASE_MS
    note = next(n for n in view.notes if "clock of" in n)
    assert GO2 in note and "5h 45m" in note and "60 s" in note
    import io
    buf = io.StringIO()
    emit(view_result(view), "plain", buf)
    text = buf.getvalue()
    assert "5h 46m" not in text and "5h 45m" in text
    rows = [ln for ln in text.splitlines() if ln.startswith("T ")]
    assert len(rows) == 2 and all("1m 0s" in ln for ln in rows)     # LEASE LEFT: 60 s
    out = io.StringIO()
    emit(view_result(view), "json", out)
    d = json.loads(out.getvalue())
    assert all(r["lease_left_s"] == 60.0 for r in d["queues"])
    assert any("clock of" in n for n in d["notes"])


def test_a_remembered_claim_of_a_client_whose_clock_was_ahead_does_not_block_for_hours():
    """A crashed client that reported renewals an hour ahead: its lease ends within a minute
    of its last renewals (the one it reported, counted at its answer, and those it may have
    made until it was found gone), not an hour later."""
    ahead = 3_600_000
    info = replace(running({q: pq(True, -ahead) for q in QS}), received_ts=NOW)
    _, state = build_view(capture({GO2: info}), now=NOW, queues_by_topic={"T": QS})
    later = NOW + 10_000
    view, _ = build_view(capture({GO1: running({})}), now=later, queues_by_topic={"T": QS},
                         previous=state)
    for q in view.queues:
        assert (q.state, q.owner) == (LockState.STALE, GO2)
        d = q.to_dict()
        assert d["frees_at_ts"] == NOW + BROKER_LEASE_MS
        assert d["frees_at_latest_ts"] <= later + BROKER_LEASE_MS
        assert q.lease_left_ms <= BROKER_LEASE_MS

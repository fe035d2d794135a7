"""Pure: a kill -9 and a restart with the same client id, replayed from what
the real 4.9.3 and 5.3.3 clients answered (../shared/samples/real/<v>/lock-crash and the
consumerStatus dump files mqadmin wrote during it: each is a client's ConsumerRunningInfo).

Real timeline (actions.txt): o2 killed (4.9.3 20:57:04.4, 5.3.3 20:57:30.6), restarted with the
same id (20:58:44.4 / 20:59:13.0), SIGSTOPped 40 s later. The dumps were taken before the kill
(o1 and o2), after the kill (o1 only: o2 left the group at once) and after the restart (o1 and
the new o2, whose PROP_CONSUMER_START_TIMESTAMP is new while o1's is unchanged; it had locked
its queues again a second after it started). mqctl must not apply what the killed process
reported to the new one: before the fix it said "does not answer (last seen <before the
kill>; its lease lapsed at <60 s after the killed process's last renewal>)" with LOCK AGE from
the killed process's renewal, about a process that had locked them anew and was renewing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import REAL_CORPUS, needs_corpus

from locks.helpers import capture
from mqctl.locks import LockState, StoredClient, build_view
from mqctl.models import ConsumerRunningInfo, MessageQueue, ProcessQueueInfo, Subscription

DUMPS = {"4.9.3": ("1795467421130", "1795467516157", "1795467535243"),
         "5.3.3": ("1795467447406", "1795467543020", "1795467583607")}
IP = {"4.9.3": "127.0.1", "5.3.3": "127.0.2"}
T = "LC_T"


def _root(v: str) -> Path:
    return REAL_CORPUS / v / "mqadmin-outputs" / "consumerStatus_dump_files"


pytestmark = needs_corpus(_root("4.9.3"))
VERSIONS = pytest.mark.parametrize("v", ["4.9.3", "5.3.3"])


def _ts(s: str) -> int:
    """``yyyyMMddHHmmssSSS`` (ProcessQueueInfo.toString, UtilAll.timeMillisToHumanString: the
    host's zone, UTC here)."""
    dt = datetime.strptime(s, "%Y%m%d%H%M%S%f").replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def dump(v: str, folder: str, cid: str) -> ConsumerRunningInfo:
    """A consumerStatus dump file as the running info it prints."""
    text = (_root(v) / folder / cid).read_text()
    props = dict(re.findall(r"^(\S+)\s+: (.*)$", text.split("#Consumer Subscription#")[0],
                            re.M))
    table = {}
    for topic, broker, qid, body in re.findall(
            r"^(\S+)\s+(broker-\S+)\s+(\d+)\s+ProcessQueueInfo \[(.*)\]$", text, re.M):
        f = dict(kv.split("=", 1) for kv in body.split(", "))
        table[MessageQueue(topic, broker, int(qid))] = ProcessQueueInfo(
            locked=f["locked"] == "true", last_lock_timestamp=_ts(f["lastLockTimestamp"]),
            dropped=f["droped"] == "true", try_unlock_times=int(f["tryUnlockTimes"]))
    return ConsumerRunningInfo(properties=props, subscriptions=(Subscription(T, "*"),),
                               mq_table=table)


def ids(v: str) -> tuple[str, str]:
    return f"{IP[v]}.91@o1", f"{IP[v]}.92@o2"


def b_qs() -> list[MessageQueue]:
    return [MessageQueue(T, "broker-b", i) for i in range(4)]


def run(v: str, now: int, previous, **clients):
    qs = [MessageQueue(T, b, i) for b in ("broker-a", "broker-b") for i in range(4)]
    m = capture(clients, group="LC_G", topics=(T,))
    return build_view(m, now=now, queues_by_topic={T: qs}, previous=previous)


def first_two_runs(v: str) -> dict[str, StoredClient]:
    """mqctl before the kill (both answer) and after it (o1 holds o2's queues again: the
    killed process's lease lapsed 60 s after its last renewal)."""
    o1, o2 = ids(v)
    before, after_kill, _ = DUMPS[v]
    _, s1 = run(v, int(before), {}, **{o1: dump(v, before, o1), o2: dump(v, before, o2)})
    assert all(c.locked for c in s1[o2].claims)
    view, s2 = run(v, int(after_kill), s1, **{o1: dump(v, after_kill, o1)})
    assert s2[o2].gone_ts == int(after_kill)                # mqctl found it gone
    for mq in b_qs():
        x = view.queue(mq)
        assert x is not None and (x.state, x.owner) == (LockState.HELD, o1)
    return s2


@VERSIONS
def test_the_start_timestamp_names_the_process(v):
    """The real fact mqctl relies on: PROP_CONSUMER_START_TIMESTAMP (DefaultMQPushConsumerImpl
    .consumerStartTimestamp) changed with o2's restart and did not change for o1."""
    o1, o2 = ids(v)
    before, after_kill, restarted = DUMPS[v]
    start = {(f, c): int(dump(v, f, c).properties["PROP_CONSUMER_START_TIMESTAMP"])
             for f in DUMPS[v] for c in (o1, o2) if (_root(v) / f / c).exists()}
    assert start[(before, o1)] == start[(after_kill, o1)] == start[(restarted, o1)]
    assert start[(restarted, o2)] > int(after_kill) > start[(before, o2)]
    acts = (REAL_CORPUS / v / "lock-crash" / "actions.txt").read_text()
    m = re.search(r"^(\S+)Z restart lc-o2", acts, re.M)
    assert m
    restart = int(datetime.fromisoformat(m.group(1) + "+00:00").timestamp() * 1000)
    assert 0 <= start[(restarted, o2)] - restart < 2_000


@VERSIONS
def test_restarted_client_that_does_not_answer_is_not_judged_by_the_killed_process(v):
    o1, o2 = ids(v)
    state = first_two_runs(v)
    _, _, restarted = DUMPS[v]
    killed_lock = max(c.last_lock_ts for c in state[o2].claims if c.mq.topic == T)
    new_lock = max(p.last_lock_timestamp for mq, p in dump(v, restarted, o2).mq_table.items()
                   if mq.topic == T)
    assert new_lock > killed_lock + 60_000           # the new process locked them anew
    # 20 s after the restart dump: o2 is SIGSTOPped, still a member, does not answer
    now = int(restarted) + 20_000
    view, after = run(v, now, state, **{o1: dump(v, restarted, o1), o2: "timeout"})
    for mq in b_qs():
        x = view.queue(mq)
        assert x is not None
        assert (x.state, x.owner) == (LockState.UNKNOWN, o2), x.reason
        assert x.claims == () and x.lock_age_ms is None and x.lease_end is None
        assert "lapsed" not in x.hint and "last seen" not in x.hint
        assert "connected anew" in x.hint
    c2 = next(c for c in view.clients if c.client_id == o2)
    assert c2.last_seen_ts is None and "left the group" in (c2.reconnected or "")
    assert o2 not in after


@VERSIONS
def test_restarted_client_that_answers_is_named_and_its_lock_age_restarts(v):
    o1, o2 = ids(v)
    state = first_two_runs(v)
    _, _, restarted = DUMPS[v]
    now = int(restarted)
    view, after = run(v, now, state, **{o1: dump(v, restarted, o1), o2: dump(v, restarted, o2)})
    new = dump(v, restarted, o2)
    for mq in b_qs():
        x = view.queue(mq)
        assert x is not None and (x.state, x.owner) == (LockState.HELD, o2)
        assert x.lock_age_ms == now - new.mq_table[mq].last_lock_timestamp
        assert x.lock_age_ms < 20_000                # renewed by the new process
    c2 = next(c for c in view.clients if c.client_id == o2)
    assert c2.start_ts == int(new.properties["PROP_CONSUMER_START_TIMESTAMP"])
    assert "restarted at" in (c2.reconnected or "")
    assert next(c for c in view.clients if c.client_id == o1).reconnected is None
    assert after[o2].start_ts == c2.start_ts and after[o2].gone_ts == 0


# ------------------------------------------------------------------ the stop unlocks


def test_a_graceful_stop_unlocks_every_queue_at_once_on_the_real_5x_broker():
    """The fact behind the evidence rule (docs/locks.md, "Evidence"): the real 5.3.3 orderly
    consumer 127.0.2.62@rio (running-info/, group RI_OG) was stopped gracefully ("stop both");
    its shutdown (ConsumeMessageOrderlyService.shutdown -> RebalanceImpl.unlockAll) released
    every queue it had locked, one UNLOCK_BATCH_MQ per broker, seconds later, long before its
    60 s lease would have ended. The lock lines of RI_OG ran alongside lock-crash
    (README: filter.log is cut by position); the 4.9.3 excerpt ends before its stop."""
    v = REAL_CORPUS / "5.3.3"
    acts = (v / "running-info" / "actions.txt").read_text()
    m = re.search(r"^(\S+)Z stop both", acts, re.M)
    assert m
    stop = int(datetime.fromisoformat(m.group(1) + "+00:00").timestamp() * 1000)
    gmt8 = 8 * 3600 * 1000
    for broker in ("broker-a", "broker-b"):
        text = (v / "lock-crash" / f"kill_{broker}_filter.log").read_text()
        lines = [x for x in text.splitlines() if "group=RI_OG" in x]
        locked = {_mq_of(x) for x in lines if "tryLockBatch" in x}
        unlocks = [x for x in lines if "unlockBatch: unlock mq" in x]
        assert all("clientId=127.0.2.62@rio" in x for x in unlocks)
        unlocked = {_mq_of(x): int(datetime.strptime(x[:19], "%Y-%m-%d %H:%M:%S")
                                   .replace(tzinfo=UTC).timestamp() * 1000) - gmt8
                    for x in unlocks}
        assert len(locked) == 5 and set(unlocked) == locked     # 4 RI_OT queues + the retry
        assert all(0 <= t - stop < 5_000 for t in unlocked.values())
        # one request per broker: one broker thread logs them all
        assert len({x.split(" - ")[0].split()[-1] for x in unlocks}) == 1


def _mq_of(line: str) -> tuple[str, ...]:
    m = re.search(r"topic=(\S+), brokerName=\S+, queueId=(\d+)", line)
    assert m, line
    return m.groups()

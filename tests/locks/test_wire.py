"""``mqctl locks`` end to end over TCP against the lock-aware mini cluster (manual clock).

Each state appears in a scenario (crash -> stale with free-up time, no state -> lock-failed,
hang -> stale then unknown, split strategies -> contested/unowned), in every output format;
release frees a stale lock and the new owner then reports it locked; show is read-only.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml

from locks.mini_cluster import LEASE_MS, Consumer, MiniCluster
from mqctl.allocate import allocate_group
from mqctl.models import MessageQueue
from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode

G, T = "GID_ORDER", "TopicOrder"
A, B, C = "10.0.0.5@111", "10.0.0.6@222", "10.0.0.7@333"


def cluster(*ids: str, strategies: dict[str, str] | None = None, **kw) -> MiniCluster:
    consumers = [Consumer(cid, strategy=(strategies or {}).get(cid, "AVG")) for cid in ids]
    return MiniCluster(group=G, topic=T, consumers=consumers, **kw)


def show(cli, mc: MiniCluster, state_dir, *extra: str, fmt: str = "json"):
    args = ["--timeout", "3", "locks", "show", "-n", mc.namesrv, "--group", G,
            "--state-dir", str(state_dir), "-o", fmt, *extra]
    return cli(args)


def by_queue(d: dict) -> dict[str, dict]:
    return {q["queue"]: q for q in d["queues"]}


def share(mc: MiniCluster, cid: str) -> list[MessageQueue]:
    return sorted(mc.consumers[cid].table)


def assert_read_only(mc: MiniCluster) -> None:
    codes = {r.code for r in mc.requests}
    assert codes, "no request recorded"
    assert not codes & set(MUTATING_REQUESTS), codes & set(MUTATING_REQUESTS)
    for code in (RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ,
                 RequestCode.HEART_BEAT):
        assert code not in codes


def test_healthy_group_all_held_and_read_only(cli, tmp_path):
    with cluster(A, B, C) as mc:
        mc.advance(5)
        r = show(cli, mc, tmp_path)
        assert r.exit_code == 0, r.stderr
        d = r.json
        assert d["summary"]["held"] == 8 and sum(d["summary"].values()) == 8
        for cid in (A, B, C):
            for mq in share(mc, cid):
                row = by_queue(d)[mq.short]
                assert row["owner"] == cid and row["predicted"] == [cid]
                assert row["lock_age_ms"] == 5000  # locked at start, clock advanced 5 s
                assert row["lease_left_ms"] == LEASE_MS - 5000
                assert mc.holder(mq) == cid  # the broker agrees
        assert d["capture_ts"] == mc.now
        assert d["hints"] == []
        assert_read_only(mc)


def test_crashed_consumer_makes_its_queues_stale_until_the_lease_ends(cli, tmp_path):
    with cluster(A, B, C) as mc:
        mc.advance(12)                       # lockAll has not run yet: last renewal at t=0
        assert show(cli, mc, tmp_path).exit_code == 0   # the observation the state file keeps
        lost = share(mc, B)
        renewed = mc.locks[lost[0].broker_name][lost[0]][1]
        mc.crash(B)
        mc.advance(3)
        mc.clear_requests()
        r = show(cli, mc, tmp_path)
        assert r.exit_code == 0, r.stderr
        d = r.json
        rows = by_queue(d)
        predicted_now = allocate_group("AVG", mc.queues, [A, C])
        for mq in lost:
            row = rows[mq.short]
            assert row["state"] == "stale", row
            assert row["owner"] == B and row["source"] == "unknown"
            assert row["frees_at_ts"] == renewed + LEASE_MS
            assert mc.holder(mq) == B        # the broker really still holds it for B
            assert row["predicted"] == [c for c in (A, C) if mq in predicted_now[c]]
        assert d["summary"]["stale"] == len(lost)
        gone = {c["client_id"]: c for c in d["unanswered"]}
        assert gone[B]["member"] is False
        assert any("blocked until" in h and f"because {B} stopped renewing" in h
                   for h in d["hints"])
        assert_read_only(mc)
        # after the lease and the next rebalance the new owners hold them
        mc.advance(60)
        d = show(cli, mc, tmp_path).json
        for mq in lost:
            row = by_queue(d)[mq.short]
            assert row["state"] == "held" and row["owner"] == row["predicted"][0]
        assert d["unanswered"] == []  # B forgotten once its leases lapsed


def test_without_state_a_crash_shows_lock_failed(cli, tmp_path):
    with cluster(A, B) as mc:
        lost = share(mc, B)
        mc.crash(B)
        mc.advance(1)
        r = cli(["locks", "show", "-n", mc.namesrv, "-g", G, "--no-state", "-o", "json"])
        assert r.exit_code == 0, r.stderr
        rows = by_queue(r.json)
        for mq in lost:
            assert rows[mq.short]["state"] == "lock-failed"
            assert rows[mq.short]["owner"] == A
        assert not (tmp_path / "mqctl").exists()


def test_hung_consumer_stale_then_unknown(cli, tmp_path):
    with cluster(A, B) as mc:
        mc.advance(1)
        show(cli, mc, tmp_path)
        mine = share(mc, B)
        mc.hang(B)
        mc.advance(40)                         # A renewed at t=20 and t=40; B did not
        d = show(cli, mc, tmp_path).json
        for mq in mine:
            row = by_queue(d)[mq.short]
            assert row["state"] == "stale" and row["owner"] == B
            assert "does not answer" in row["reason"]
            assert row["frees_at_ts"] == mc.locks[mq.broker_name][mq][1] + LEASE_MS
        assert [c["client_id"] for c in d["unanswered"]] == [B]
        assert d["unanswered"][0]["member"] is True
        assert "timeout" in d["unanswered"][0]["error"]
        mc.advance(30)                         # B's lease lapsed; it is still a member
        d = show(cli, mc, tmp_path).json
        assert {by_queue(d)[mq.short]["state"] for mq in mine} == {"unknown"}
        assert {by_queue(d)[mq.short]["state"] for mq in share(mc, A)} == {"held"}


def test_split_strategies_contested_and_unowned(cli, tmp_path):
    with cluster(A, B, strategies={A: "AVG", B: "AVG_BY_CIRCLE"}) as mc:
        mc.advance(1)
        d = show(cli, mc, tmp_path).json
        avg = set(allocate_group("AVG", mc.queues, [A, B])[A])
        circle = set(allocate_group("AVG_BY_CIRCLE", mc.queues, [A, B])[B])
        rows = by_queue(d)
        for mq in avg & circle:
            assert rows[mq.short]["state"] == "contested"
            assert rows[mq.short]["owner"] == mc.holder(mq)
        for mq in set(mc.queues) - avg - circle:
            assert rows[mq.short]["state"] == "unowned"
        assert d["summary"]["contested"] == len(avg & circle) > 0
        assert d["summary"]["unowned"] == len(set(mc.queues) - avg - circle) > 0


def test_expiring_when_renewal_is_overdue(cli, tmp_path):
    with cluster(A) as mc:
        mc.consumers[A].next_lock = mc.now + 10 ** 9   # renewals stop, client still answers
        mc.advance(40)
        d = show(cli, mc, tmp_path).json
        assert set(d["summary"].items()) >= {("expiring", 8)}
        row = d["queues"][0]
        assert row["trusted"] is False and row["lease_left_ms"] == 20_000


FORMATS = ["table", "plain", "json", "yaml", "csv"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_states_in_every_format(cli, tmp_path, fmt):
    with cluster(A, B, C) as mc:
        mc.advance(1)
        show(cli, mc, tmp_path)
        lost = share(mc, B)
        mc.crash(B)
        mc.advance(1)
        r = show(cli, mc, tmp_path, fmt=fmt)
        assert r.exit_code == 0, r.stderr
        out = r.stdout
        q = lost[0].short
        if fmt == "json":
            assert by_queue(json.loads(out))[q]["state"] == "stale"
        elif fmt == "yaml":
            assert by_queue(yaml.safe_load(out))[q]["state"] == "stale"
        elif fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(out.split("\n\n")[0])))
            row = next(x for x in rows if x["queue"] == q)
            assert row["state"] == "stale" and row["owner"] == B
            assert float(row["lease_left_s"]) == 58.0  # locked at t=0, now t=2 s
        else:
            line = next(x for x in out.splitlines() if q in x and "stale" in x)
            assert B in line
            assert f"stale: {len(lost)} queue(s)" in out
            assert "blocked until" in out


def test_release_frees_a_stale_lock_and_the_new_owner_takes_it(cli, tmp_path):
    with cluster(A, B) as mc:
        mc.advance(1)
        show(cli, mc, tmp_path)
        target = share(mc, B)[0]
        mc.crash(B)
        mc.advance(2)
        base = ["locks", "release", "-n", mc.namesrv, "-g", G, "--queue", target.short,
                "--state-dir", str(tmp_path), "-o", "json"]
        mc.clear_requests()
        r = cli(base)                                         # plan only
        assert r.exit_code == 0, r.stderr
        assert r.json["executed"] is False and r.json["plan"]["holder"] == B
        assert r.json["before"]["state"] == "stale"
        assert_read_only(mc)
        assert mc.holder(target) == B
        r = cli([*base, "--execute"])
        assert r.exit_code == 0, r.stderr
        unlocks = [x for x in mc.requests if x.code == RequestCode.UNLOCK_BATCH_MQ]
        assert len(unlocks) == 1 and unlocks[0].server == target.broker_name
        assert json.loads(unlocks[0].body) == {
            "consumerGroup": G, "clientId": B, "mqSet": [target.to_dict()],
            "onlyThisBroker": False}
        assert mc.holder(target) is None                      # the broker entry is gone
        assert r.json["executed"] is True
        assert r.json["after"]["state"] in ("lock-failed", "held")
        mc.advance(20)                                        # A's next rebalance
        assert mc.holder(target) == A
        d = show(cli, mc, tmp_path).json
        row = by_queue(d)[target.short]
        assert (row["state"], row["owner"], row["locked"]) == ("held", A, True)


def test_release_refuses_a_live_renewing_holder(cli, tmp_path):
    with cluster(A, B) as mc:
        target = share(mc, A)[0]
        base = ["locks", "release", "-n", mc.namesrv, "-g", G, "--queue", target.short,
                "--state-dir", str(tmp_path)]
        r = cli([*base, "--execute"])
        assert r.exit_code == 6
        assert "alive and renewing" in r.stderr and "--force" in r.stderr
        assert mc.holder(target) == A
        assert not [x for x in mc.requests if x.code == RequestCode.UNLOCK_BATCH_MQ]
        r = cli([*base, "--execute", "--force", "-o", "json"])
        assert r.exit_code == 0, r.stderr
        assert mc.holder(target) is None
        mc.advance(20)                                        # A re-locks at lockAll
        assert mc.holder(target) == A


def test_release_errors(cli, tmp_path):
    with cluster(A) as mc:
        base = ["locks", "release", "-n", mc.namesrv, "-g", G, "--state-dir", str(tmp_path)]
        r = cli([*base, "--queue", "broker-z:0"])
        assert r.exit_code == 2 and "no queue broker-z:0" in r.stderr
        r = cli([*base, "--queue", "broker-a:x"])
        assert r.exit_code == 2 and "expected BROKER:QUEUE_ID" in r.stderr


def test_unknown_group_exit_2(cli, tmp_path):
    with cluster(A, other_groups=("GID_OTHER",)) as mc:
        r = cli(["locks", "show", "-n", mc.namesrv, "-g", "GID_NOPE",
                 "--state-dir", str(tmp_path)])
        assert r.exit_code == 2
        assert r.stderr.splitlines()[0] == ("mqctl: error: group 'GID_NOPE' is not known to "
                                            "any broker")
        assert_read_only(mc)


def test_offline_group_says_so(cli, tmp_path):
    with cluster(other_groups=()) as mc:
        r = cli(["locks", "show", "-n", mc.namesrv, "-g", G, "--state-dir", str(tmp_path),
                 "-o", "json"])
        assert r.exit_code == 0, r.stderr
        assert r.json["online"] is False and r.json["kind"] == "offline"
        assert any("offline" in n for n in r.json["notes"])


@pytest.mark.parametrize("kw,word", [
    ({"consumers_orderly": False}, "consumes concurrently"),
    ({"model": "BROADCASTING"}, "BROADCASTING"),
    ({"consume_type": "CONSUME_POP"}, "pop"),
])
def test_groups_that_do_not_lock_are_refused(cli, tmp_path, kw, word):
    orderly = kw.pop("consumers_orderly", True)
    mc = MiniCluster(group=G, topic=T, consumers=[Consumer(A, orderly=orderly)], **kw)
    with mc:
        r = cli(["locks", "show", "-n", mc.namesrv, "-g", G, "--state-dir", str(tmp_path)])
        assert r.exit_code == 6
        assert word in r.stderr.splitlines()[0]
        assert_read_only(mc)


def test_watch_with_count_refreshes(cli, tmp_path):
    with cluster(A) as mc:
        r = show(cli, mc, tmp_path, "--watch", "0.1", "--count", "2", fmt="plain")
        assert r.exit_code == 0, r.stderr
        assert r.stdout.count("--- ") == 2
        assert r.stdout.count("# locks of GID_ORDER") == 2
        r = show(cli, mc, tmp_path, "--count", "1", "--watch", fmt="plain")
        assert r.exit_code == 0, r.stderr
        assert_read_only(mc)

"""`offsets clone` on the simulated cluster: the plan, CLONE_GROUP_OFFSET per broker, the
read-back, and the rollback file `offsets rollback` restores."""

from __future__ import annotations

import json

from mqctl.remoting.codes import RequestCode as C


def offsets(sim, group, topic="TopicPay"):
    return sim.call(lambda c: {(b, q): o for b in sorted(c.brokers)
                               for (t, g), qs in c.brokers[b].offsets.items()
                               if t == topic and g == group for q, o in qs.items()})


def test_clone_copies_the_offsets_and_the_rollback_file_restores_them(cli, sim, tmp_path):
    src = offsets(sim, "GID_REPLAY")
    assert src
    from mqctl.sim.broker import GroupConf

    def new_group(c):  # the migration's target group exists, with an offset of its own
        for b in c.brokers.values():
            b.groups["GID_COPY"] = GroupConf("GID_COPY")
            b.offsets[("TopicPay", "GID_COPY")] = {0: 1}

    sim.call(new_group)
    before = offsets(sim, "GID_COPY")
    n = "-n", sim.namesrv_addr
    r = cli([*n, "offsets", "clone", "--from", "GID_REPLAY", "--to", "GID_COPY", "-t",
             "TopicPay", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert offsets(sim, "GID_COPY") == before  # a plan changes nothing
    rb = tmp_path / "rb.json"
    sim.clear_request_log()
    r = cli([*n, "offsets", "clone", "--from", "GID_REPLAY", "--to", "GID_COPY", "-t",
             "TopicPay", "--offline", "--execute", "--yes", "--rollback-file", str(rb),
             "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert {q["status"] for q in r.json["queues"]} <= {"verified", "unchanged"}
    clones = [x for x in sim.request_log if x.code == C.CLONE_GROUP_OFFSET]
    assert {x.ext_fields["srcGroup"] for x in clones} == {"GID_REPLAY"}
    got = offsets(sim, "GID_COPY")
    assert all(got[k] == v for k, v in src.items())
    doc = json.loads(rb.read_text())
    assert doc["schema"] == "mqctl.rollback/1" and doc["group"] == "GID_COPY"
    r = cli([*n, "offsets", "rollback", str(rb), "--execute", "--yes", "--verify-wait", "0",
             "-o", "json"])
    assert r.exit_code in (0, 8), r.stderr
    # (a server-side reset is pending until the group pulls: committed() reads it first)
    restored = sim.call(lambda c: {(b, q): c.brokers[b].committed("GID_COPY", "TopicPay", q)
                                   for (b, q) in before})
    assert restored == before


def test_clone_to_a_group_the_brokers_do_not_know_says_so(cli, sim):
    r = cli(["-n", sim.namesrv_addr, "offsets", "clone", "--from", "GID_REPLAY", "--to",
             "GID_BRAND_NEW", "-t", "TopicPay", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert any("GID_BRAND_NEW has no subscription group" in n for n in r.json["notes"])
    assert {q["before"] for q in r.json["queues"]} == {"none"}
    assert {q["status"] for q in r.json["queues"]} == {"planned"}

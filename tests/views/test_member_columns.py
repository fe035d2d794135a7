"""The columns derived from a group's members, in `groups`, `consumers` and `allocate`:

* a member that does not answer its running info (the sim's ``silent_at``: it stays a member
  and keeps consuming, its GET_CONSUMER_RUNNING_INFO times out, as a real 4.9.3 consumer
  stalled ~40 s did) leaves TYPE, ORDERLY and STRATEGY partial: the others' value with
  ``(N unread)``, null in JSON, the member named, exit 8; never the others' value alone;
* a member list that could not be read is named and partial (exit 8), never a quiet UNKNOWN;
* a pop group (real 5.3.3: 2 remoting push consumers, ``setConsumeMode -m POP``,
  ``setClientRebalance(false)``; each was assigned queue -1 of both brokers by
  QueryAssignmentProcessor.allocate4Pop and consumed from all 8 queues) has no per-queue
  allocation: `allocate` predicts none and shows what each client pops from, `groups` shows
  STRATEGY ``pop``, `consumers` calls them pop consumers (not gRPC). They heartbeat and
  report CONSUME_PASSIVELY: only their running info's mqPopTable says that they pop.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import sim_cli
from readonly import assert_read_only
from sim_fixtures import running_sim

from mqctl.models import ConsumerRunningInfo, MessageQueue, pop_queue_text
from mqctl.remoting.codes import RequestCode, ResponseCode

A, B, SILENT = "10.0.0.1@1", "10.0.0.2@2", "10.0.0.3@3"
P1, P2 = "10.0.1.1@1", "10.0.1.2@2"

SCENARIO = {
    "name": "member-columns", "clock": {"mode": "manual"}, "running_info_timeout": "0.3s",
    "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
    "topics": [{"name": "T", "queues": 4, "rate": 1, "history": "1h"}],
    "groups": [
        # the third member runs AVG_BY_CIRCLE and stops answering its running info at 40 s
        {"name": "GM", "topics": ["T"], "consumers": [
            {"id": A}, {"id": B},
            {"id": SILENT, "strategy": "AVG_BY_CIRCLE", "silent_at": "40s"}]},
        {"name": "GP", "consume_type": "CONSUME_POP", "topics": ["T"],
         "consumers": [{"id": P1}, {"id": P2}]}]}


@pytest.fixture(scope="module")
def msim():
    """Every member answers (20 s in)."""
    with running_sim(SCENARIO) as s:
        s.advance(20)
        yield s


@pytest.fixture(scope="module")
def silent_sim():
    """60 s in: GM's third member does not answer its running info (a member still: it
    heartbeats and consumes)."""
    with running_sim(SCENARIO) as s:
        s.advance(60)
        yield s


cli = sim_cli


def groups_json(sim: Any) -> tuple[int, dict[str, Any], Any]:
    r = cli(sim, "groups", "-o", "json")
    doc = json.loads(r.stdout)
    return r.exit_code, {g["group"]: g for g in doc["groups"]}, r


def test_every_member_answers_the_columns_are_whole(msim):
    code, g, _ = groups_json(msim)
    assert code == 0
    gm = g["GM"]
    assert gm["strategy"] == "mixed: AVG, AVG_BY_CIRCLE" and gm["members_unread"] == []
    assert gm["consume_type"] == "push" and gm["orderly"] is False


def test_pop_group_agrees_in_allocate_groups_and_consumers(msim):
    # the sim's pop clients are what real 5.3.3 remoting pop clients are on the wire
    conn = msim.call(lambda c: c.brokers["broker-a"].group_info["GP"].consume_type)
    assert conn == "CONSUME_PASSIVELY"
    infos = msim.call(lambda c: {cs.client_id: cs.running_info() for cs in c.consumers("GP")})
    for body in infos.values():
        assert body["properties"]["PROP_CONSUME_TYPE"] == "CONSUME_PASSIVELY"
        assert body["properties"]["clientRebalance"] == "false"
        assert {(mq.broker_name, mq.queue_id) for mq in body["mqPopTable"]} == {
            ("broker-a", -1), ("broker-b", -1)}

    msim.clear_request_log()
    r = cli(msim, "allocate", "-g", "GP", "-t", "T", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["strategy"] == "pop" and d["assignments"] == {P1: [], P2: []}
    for cid in (P1, P2):
        assert sorted((q["brokerName"], q["queueId"]) for q in d["pop"][cid]) == [
            ("broker-a", -1), ("broker-b", -1)]
    assert any("queue allocation does not apply" in n for n in d["notes"])
    plain = cli(msim, "allocate", "-g", "GP", "-t", "T").stdout
    assert "every queue of broker-a, broker-b" in plain and "broker-a:0-3" not in plain

    _, g, _ = groups_json(msim)
    assert g["GP"]["consume_type"] == "pop" and g["GP"]["strategy"] == "pop"
    assert g["GP"]["strategies"] == ["AVG"]  # what the clients report, kept

    c = cli(msim, "consumers", "GP", "-o", "json")
    assert c.exit_code == 0
    doc = json.loads(c.stdout)
    assert {x["client_id"]: x["pops"] for x in doc["clients"]} == {P1: True, P2: True}
    (pop,) = [f for f in doc["findings"] if f["check"] == "pop"]
    assert "gRPC" not in pop["message"] and "queue allocation does not apply" in pop["message"]
    assert "pop from T: every queue of broker-a, broker-b" in pop["message"]
    assert_read_only(msim)


def test_a_member_that_does_not_answer_leaves_the_columns_partial(silent_sim):
    msim = silent_sim
    code, g, r = groups_json(msim)
    assert code == 8, r.stderr
    gm = g["GM"]
    assert gm["members"] == 3 and gm["members_unread"] == [SILENT]
    assert gm["strategy"] is None and gm["strategies"] == ["AVG"]
    assert gm["consume_type"] is None and gm["orderly"] is None
    assert gm["strategy_cell"] == "AVG (1 unread)"
    assert gm["consume_type_cell"] == "push (1 unread)"
    assert gm["orderly_cell"] == "false (1 unread)"
    assert g["GP"]["members_unread"] == [] and g["GP"]["strategy"] == "pop"
    assert "did not answer GET_CONSUMER_RUNNING_INFO during groups: GM 10.0.0.3@3" in r.stderr

    plain = cli(msim, "groups")
    assert plain.exit_code == 8
    row = next(ln for ln in plain.stdout.splitlines() if ln.startswith("GM "))
    assert "AVG (1 unread)" in row and "false (1 unread)" in row
    assert "GM: 10.0.0.3@3" in plain.stdout  # the note names the silent member

    csv_ = cli(msim, "groups", "-o", "csv")
    head, *rows = csv_.stdout.splitlines()
    cols = head.split(",")
    gm_row = dict(zip(cols, next(x for x in rows if x.startswith("GM,")).split(","),
                      strict=False))
    assert gm_row["strategy"] == "" and gm_row["orderly"] == ""  # unknown: empty


def test_consumers_with_a_member_that_does_not_answer_is_partial(silent_sim):
    msim = silent_sim
    r = cli(msim, "consumers", "GM", "-o", "json")
    assert r.exit_code == 8
    doc = json.loads(r.stdout)
    row = {x["client_id"]: x for x in doc["clients"]}[SILENT]
    assert row["strategy"] is None and row["orderly"] is None and row["consume_type"] is None
    silent = [f for f in doc["findings"] if f["check"] == "no-running-info"]
    assert len(silent) == 1 and "cover the 2 of 3 member(s) that answered" in silent[0][
        "message"]
    # the strategy check saw AVG only: no strategy finding, which is why it is named partial
    assert not [f for f in doc["findings"] if f["check"] == "strategy"]
    plain = cli(msim, "consumers", "GM").stdout
    line = next(ln for ln in plain.splitlines() if ln.startswith(SILENT))
    assert line.split()[4:7] == ["-", "-", "-"]  # TYPE, ORDERLY, STRATEGY


def test_a_member_list_that_could_not_be_read_is_partial(msim):
    for b in ("broker-a", "broker-b"):
        msim.call(lambda c, b=b: c.faults.error(b, RequestCode.GET_CONSUMER_CONNECTION_LIST,
                                                ResponseCode.SYSTEM_ERROR, "boom"))
    try:
        code, g, r = groups_json(msim)
    finally:
        msim.call(lambda c: c.faults.clear())
    assert code == 8
    assert g["GP"]["members"] is None and g["GP"]["state"] == "UNKNOWN"
    assert "broker request(s) failed during groups" in r.stderr and "boom" in r.stderr


# ------------------------------------------------------------------------------ pure


def _info(props: dict[str, str], pop: dict[MessageQueue, Any]) -> ConsumerRunningInfo:
    return ConsumerRunningInfo(props, (), {}, pop)


def test_a_client_pops_by_its_pop_table_not_its_consume_type():
    minus = {MessageQueue("T", "broker-a", -1): {"waitAckCount": 3}}
    remoting_pop = _info({"PROP_CONSUME_TYPE": "CONSUME_PASSIVELY",
                          "clientRebalance": "false"}, minus)
    push = _info({"PROP_CONSUME_TYPE": "CONSUME_PASSIVELY", "clientRebalance": "true"}, {})
    assert remoting_pop.pops and not push.pops
    assert remoting_pop.client_rebalance is False and push.client_rebalance is True
    assert remoting_pop.pop_queues("T") == [MessageQueue("T", "broker-a", -1)]
    assert remoting_pop.pop_queues("U") == []
    assert pop_queue_text([MessageQueue("T", "b", -1), MessageQueue("T", "a", -1)]) == (
        "every queue of a, b")
    assert pop_queue_text([MessageQueue("T", "a", 2)]) == "a:2"


def test_groups_cells_name_the_unread_members():
    from mqctl.render import Result
    from mqctl.views.groups import GroupsCapture, GroupSummary
    from mqctl.views.groups_rows import groups_result

    s = GroupSummary("G", members=3, consume_type="push", orderly=True, strategies=["AVG"],
                     unread_members={"c3": "timeout"}, client_ids=["c1", "c2", "c3"])
    none = GroupSummary("H", members=2, unread_members={"d1": "timeout", "d2": "timeout"},
                        consume_type="push", client_ids=["d1", "d2"])
    res: Result = groups_result(GroupsCapture(0, [s, none], ["broker-a"], [], []))
    rows = {r["group"]: r for r in res.tables[0].rows}
    assert (rows["G"]["strategy_cell"], rows["G"]["orderly_cell"],
            rows["G"]["consume_type_cell"]) == ("AVG (1 unread)", "true (1 unread)",
                                                "push (1 unread)")
    assert rows["G"]["strategy"] is None and rows["G"]["orderly"] is None
    assert rows["H"]["strategy_cell"] == "- (2 unread)"
    assert any("G: c3; H: d1, d2" in n for n in res.notes)
    assert GroupsCapture(0, [s], [], [], []).unread_members == [("G c3", "timeout")]


def test_group_progress_with_a_member_that_does_not_answer_is_partial(silent_sim):
    r = cli(silent_sim, "group", "progress", "GM")
    assert r.exit_code == 8
    assert "OWNER unknown on" in r.stdout and SILENT in r.stdout
    assert f"did not answer GET_CONSUMER_RUNNING_INFO during group progress GM: {SILENT}" in (
        r.stderr)
    ok = cli(silent_sim, "group", "progress", "GP")
    assert ok.exit_code == 0, ok.stderr

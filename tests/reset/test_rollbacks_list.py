"""`mqctl offsets rollbacks`: the saved rollback files, whether a rollback
restored them since, where the group is now (--check, read-only), and `offsets rollback NAME`."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
import yaml
from rollback_files import write

from mqctl.models import MessageQueue
from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode, ResponseCode
from mqctl.reset.files import (
    ROLLBACK_SCHEMA,
    RollbackInfo,
    find_rollback,
    list_rollbacks,
    live_state,
    rollback_dir,
)

MQ = MessageQueue
RESET = ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay"]




# ------------------------------------------------------------------------------ pure

def test_listing_links_rollbacks_to_the_files_they_restored(tmp_path):
    a = write(tmp_path / "G-T-a.json", 3000)
    write(tmp_path / "G-T-b.json", 1000, reason="to earliest")
    write(tmp_path / "G-T-c.json", 5000, reason=f"from rollback file {a}",
          rollback_of=str(a.resolve()))
    # an older file without rollback_of: its reason names the file as the user typed it
    write(tmp_path / "G-T-d.json", 7000, reason="from rollback file ./G-T-b.json")
    write(tmp_path / "H-T-e.json", 2000, group="H")
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"schema": "something/1"}))
    (tmp_path / "G-T-a.remaining.csv").write_text("group,topic\n")
    (tmp_path / "notes.txt").write_text("ignored")
    infos = {i.name: i for i in list_rollbacks(tmp_path)}
    order = [i.name for i in list_rollbacks(tmp_path)]
    assert order == ["G-T-b.json", "H-T-e.json", "G-T-a.json", "G-T-c.json", "G-T-d.json",
                     "broken.json", "other.json"]  # by time; files without one last
    assert [b.name for b in infos["G-T-a.json"].rolled_back_by] == ["G-T-c.json"]
    assert [b.name for b in infos["G-T-b.json"].rolled_back_by] == ["G-T-d.json"]
    assert [b.name for b in infos["G-T-b.json"].later] == ["G-T-a.json", "G-T-c.json"]
    assert infos["H-T-e.json"].later == [] and infos["H-T-e.json"].rolled_back_by == []
    assert infos["G-T-a.json"].remaining == tmp_path / "G-T-a.remaining.csv"
    assert infos["G-T-c.json"].rolled_back_by == [] and infos["G-T-c.json"].queues == 2
    assert "cannot be read" in (infos["broken.json"].error or "")
    assert "not an mqctl rollback file" in (infos["other.json"].error or "")
    assert list_rollbacks(tmp_path / "missing") == []


def test_a_none_offset_is_not_a_queue_to_restore(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"schema": ROLLBACK_SCHEMA, "group": "G", "topic": "T",
                             "created_ts": 1, "queues": [
                                 {"broker": "b", "queue_id": 0, "offset": "none",
                                  "reset_to": 5},
                                 {"broker": "b", "queue_id": 1, "offset": 7, "reset_to": 5}]}))
    (i,) = list_rollbacks(tmp_path)
    assert i.queues == 1 and i.offsets == {MQ("T", "b", 1): 7}


def test_live_state_never_matches_an_unknown():
    info = RollbackInfo(Path("x.json"), offsets={MQ("T", "b", 0): 100, MQ("T", "b", 1): 200},
                        reset_to={MQ("T", "b", 0): 90, MQ("T", "b", 1): 190})
    q0, q1 = MQ("T", "b", 0), MQ("T", "b", 1)
    assert live_state(info, {q0: 100, q1: 200}) == "at the saved offsets"
    assert live_state(info, {q0: 90, q1: 190}) == "at the reset's offsets"
    # a group that replays the rewind is not "elsewhere"
    assert live_state(info, {q0: 100, q1: 195}) == (
        "2 queue(s): 1 at the saved offsets, 1 replaying the rewind (5 of 10 message(s) "
        "replayed)")
    assert live_state(info, {q0: 150, q1: 250}) == (
        "2 queue(s): 2 replayed past the saved offsets (a rollback would replay again)")
    assert live_state(info, {q0: 80, q1: 190}) == (
        "2 queue(s): 1 at the reset's offsets, 1 elsewhere (behind the reset's offsets: "
        "another change?)")
    assert live_state(info, {q0: 100}) == "unknown (1 of 2 queue(s) not read)"
    assert live_state(info, {q0: 100, q1: None}) == "unknown (1 of 2 queue(s) not read)"


def test_find_rollback_by_name(tmp_path, monkeypatch):
    root = rollback_dir()
    root.mkdir(parents=True)
    f = write(root / "G-T-20261122T133018.745Z.json", 1)
    assert find_rollback(f.name) == str(f)
    assert find_rollback("G-T-20261122T133018.745Z") == str(f)
    assert find_rollback("no-such") == "no-such"
    monkeypatch.chdir(tmp_path)
    (tmp_path / f.name).write_text("local")  # a path that exists wins over the directory
    assert find_rollback(f.name) == f.name


# ------------------------------------------------------------------------------ sim

def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def mutating(sim):
    return [r for r in sim.request_log if r.code in MUTATING_REQUESTS]


@pytest.fixture
def history(cli, sim):
    """Two resets of GID_REPLAY/TopicPay, the second rolled back by NAME."""
    one = run(cli, sim, *RESET, "--shift-by", "-100", "--execute", "-o", "json")
    sim.advance(2)
    two = run(cli, sim, *RESET, "--shift-by", "-50", "--execute", "-o", "json")
    sim.advance(2)
    assert one.exit_code == 0 and two.exit_code == 0, one.stderr + two.stderr
    name = Path(two.json["rollback_file"]).name
    back = run(cli, sim, "offsets", "rollback", name.removesuffix(".json"), "--execute",
               "-o", "json")
    assert back.exit_code == 0, back.stderr
    assert back.json["target"] == f"from rollback file {rollback_dir() / name}"
    sim.advance(2)
    return [Path(one.json["rollback_file"]).name, name,
            Path(back.json["rollback_file"]).name]


def test_list_says_what_was_rolled_back(cli, sim, history):
    first, second, third = history
    before = len(sim.request_log)
    r = run(cli, sim, "offsets", "rollbacks", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert len(sim.request_log) == before  # reads files only
    rows = {x["name"]: x for x in r.json["rollbacks"]}
    assert [x["name"] for x in r.json["rollbacks"]] == [first, second, third]
    assert rows[first]["rolled_back"] == "no" and rows[first]["later_changes"] == [second, third]
    assert rows[second]["rolled_back_by"] == [third]
    assert rows[second]["rolled_back"].startswith("yes, ")
    assert rows[third]["undoes"] == f"rollback of {second}"
    assert {x["queues"] for x in rows.values()} == {8}
    assert rows[first]["group"] == "GID_REPLAY" and rows[first]["reason"] == "shift by -100"
    assert r.json["directory"] == str(rollback_dir())


def test_check_compares_with_the_cluster_read_only(cli, sim, history):
    first, second, third = history
    n = len(mutating(sim))
    r = run(cli, sim, "offsets", "rollbacks", "--check", "-o", "json")
    assert r.exit_code == 0, r.stderr
    live = {x["name"]: x["live"] for x in r.json["rollbacks"]}
    # GID_REPLAY is offline: the -50 shift was undone, so the group is where the first reset
    # put it, which is also where the second one started
    assert live == {first: "at the reset's offsets", second: "at the saved offsets",
                    third: "at the reset's offsets"}
    assert len(mutating(sim)) == n
    assert RequestCode.GET_CONSUME_STATS in {x.code for x in sim.request_log[-8:]}


@pytest.mark.parametrize("fmt", ["table", "plain", "yaml", "csv"])
def test_every_format(cli, sim, history, fmt):
    r = run(cli, sim, "offsets", "rollbacks", "-g", "GID_REPLAY", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    if fmt == "yaml":
        assert len(yaml.safe_load(r.stdout)["rollbacks"]) == 3
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        assert [x["name"] for x in rows] == history and rows[1]["rolled_back"].startswith("yes")
    else:
        assert all(n in r.stdout for n in history) and "3 rollback file(s)" in r.stdout


def test_filters_and_an_empty_directory(cli, sim, history, tmp_path):
    assert run(cli, sim, "offsets", "rollbacks", "-g", "GID_PAY", "-o", "json").json[
        "rollbacks"] == []
    r = run(cli, sim, "offsets", "rollbacks", "--dir", str(tmp_path / "none"))
    assert r.exit_code == 0 and "0 rollback file(s)" in r.stdout


def test_check_with_a_broker_not_answering_is_partial(cli, sim, history):
    sim.call(lambda c: c.faults.error("broker-b", RequestCode.GET_CONSUME_STATS,
                                      ResponseCode.SYSTEM_BUSY, "busy"))
    r = run(cli, sim, "offsets", "rollbacks", "--check", "-o", "json")
    assert r.exit_code == 8, r.stderr
    assert {x["live"] for x in r.json["rollbacks"]} == {"unknown (not read)"}
    assert "could not be checked" in r.stderr and "SYSTEM_BUSY" in r.stderr


def test_rollback_of_an_unknown_name(cli, sim):
    r = run(cli, sim, "offsets", "rollback", "GID_REPLAY-TopicPay-nope")
    assert r.exit_code == 2 and "rollback file not found: GID_REPLAY-TopicPay-nope" in r.stderr
    assert "mqctl offsets rollbacks" in r.stderr


def test_interrupted_run_is_noted(cli, sim, history):
    first = history[0]
    (rollback_dir() / first.replace(".json", ".remaining.csv")).write_text("x\n")
    r = run(cli, sim, "offsets", "rollbacks", "-o", "json")
    row = next(x for x in r.json["rollbacks"] if x["name"] == first)
    assert row["interrupted_remaining"].endswith(".remaining.csv")
    assert "interrupted" in row["note"]
    assert os.path.exists(row["path"])

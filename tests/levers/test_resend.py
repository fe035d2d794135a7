"""`mqctl group dlq resend` against the simulated cluster: the plan is read-only, --execute
sends each selected dead letter once and reads it back, a journal makes a second run send
nothing, a run killed mid-batch (SIGKILL) is finished by --resume with each message stored
exactly once, interrupts are reported, a concurrent run and a non-TTY run without --yes are
refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from cli_process import finish
from conftest import ROOT
from message.helpers import TRACK_SCENARIO
from readonly import assert_read_only
from test_levers_confirm import on_terminal

from mqctl.interrupt import change_lock
from mqctl.levers.resend_select import RESENT_FROM
from mqctl.remoting.codes import RequestCode
from mqctl.sim.index import stored_message

GROUP = "G_DEAD"
RETRY = "%RETRY%G_DEAD"
SENDS = (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2)


@pytest.fixture
def dead(tmp_path, monkeypatch):
    from sim_fixtures import running_sim

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    with running_sim(TRACK_SCENARIO) as s:
        s.advance(30)
        yield s


def resent(sim, topic=RETRY):
    """The resent copies stored in ``topic``: unique key -> how many."""
    def read(c):
        out = Counter()
        for (t, _q), msgs in c.brokers["broker-a"].sent.items():
            if t == topic:
                out.update(m.properties["UNIQ_KEY"] for m in msgs.values()
                           if RESENT_FROM in m.properties)
        return out
    return sim.call(read)


def resend(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, "-o", "json", "group", "dlq", "resend", GROUP, *args])


def test_the_plan_lists_the_dead_letters_and_sends_nothing(cli, dead):
    dead.clear_request_log()
    r = resend(cli, dead, "--all", "--limit", "4")
    assert r.exit_code == 0, r.stderr
    assert_read_only(dead)
    assert not [x for x in dead.request_log if x.code in SENDS]
    d = json.loads(r.stdout)
    held = dead.call(lambda c: c.brokers["broker-a"].max_offset("%DLQ%G_DEAD", 0))
    assert d["selected"] == 4 and d["held"] == held > 4 and d["stopped"] is True
    assert any(f"stopped at 4 of {held}" in n for n in d["notes"])
    for m in d["messages"]:
        assert m["unique_key"] and m["original_topic"] == "T" and m["storeTime"]
        assert m["original_id"] and m["original_id"] != m["dlq_msg_id"]
        assert m["destination"] == RETRY and m["status"] == "planned"
        assert m["reconsume"] >= 1
    assert resent(dead) == Counter()


def test_execute_sends_each_once_verifies_and_a_second_run_sends_none(cli, dead, tmp_path):
    journal = tmp_path / "j.jsonl"
    dead.clear_request_log()
    r = resend(cli, dead, "--all", "--limit", "5", "--execute", "--yes", "--journal",
               str(journal))
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    keys = [m["unique_key"] for m in d["messages"]]
    assert [m["status"] for m in d["messages"]] == ["verified"] * 5
    assert resent(dead) == Counter({k: 1 for k in keys})  # count in destination = selection
    assert len([x for x in dead.request_log if x.code == RequestCode.SEND_MESSAGE_V2]) == 5
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    assert lines[0]["schema"] == "mqctl.dlq-resend-journal/1" and lines[0]["group"] == GROUP
    events = [x["event"] for x in lines[1:]]
    assert events == ["sending", "sent"] * 5
    # the resent copy keeps the body and the unique key, drops the retry markers
    stored = dead.call(lambda c: [m for (t, _), ms in c.brokers["broker-a"].sent.items()
                                  if t == RETRY for m in ms.values()])
    assert all(m.properties["RETRY_TOPIC"] == "T" and "REAL_TOPIC" not in m.properties
               and m.properties["CLUSTER"] for m in stored)
    originals = dead.call(lambda c: {
        m.properties["UNIQ_KEY"]: m for m in (stored_message(c.brokers["broker-a"],
                                                             "%DLQ%G_DEAD", 0, o)
                                              for o in range(5))})
    for m in stored:  # body, flag, born time and the producer's properties as they were
        o = originals[m.properties["UNIQ_KEY"]]
        assert (m.body, m.flag, m.born_ts) == (o.body, o.flag, o.born_ts)
        assert m.properties["KEYS"] == o.properties["KEYS"]
        assert m.properties[RESENT_FROM].endswith(f"{o.commit_log_offset:016X}")
    dead.clear_request_log()
    again = resend(cli, dead, "--resume", str(journal), "--execute", "--yes")
    assert again.exit_code == 0, again.stderr
    assert {m["status"] for m in json.loads(again.stdout)["messages"]} == {"skipped"}
    assert not [x for x in dead.request_log if x.code in SENDS]
    assert resent(dead) == Counter({k: 1 for k in keys})


def test_the_group_consumes_what_was_resent(cli, dead):
    r = resend(cli, dead, "--all", "--limit", "3", "--execute", "--yes")
    assert r.exit_code == 0, r.stderr
    mx = dead.call(lambda c: c.brokers["broker-a"].max_offset(RETRY, 0))
    dead.advance(60)
    done = dead.call(lambda c: c.brokers["broker-a"].committed(GROUP, RETRY, 0))
    assert done is not None and done >= mx > 0


def test_select_by_msg_id_and_to_original(cli, dead):
    plan = json.loads(resend(cli, dead, "--all", "--limit", "3").stdout)["messages"]
    ids = [plan[0]["dlq_msg_id"], plan[2]["unique_key"]]
    r = resend(cli, dead, "--msg-id", ids[0], "--msg-id", ids[1], "--to", "original",
               "--execute", "--yes")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert [m["dlq_msg_id"] for m in d["messages"]] == [plan[0]["dlq_msg_id"],
                                                       plan[2]["dlq_msg_id"]]
    assert {m["destination"] for m in d["messages"]} == {"T"}
    assert resent(dead, "T") == Counter({plan[0]["unique_key"]: 1, plan[2]["unique_key"]: 1})
    stored = dead.call(lambda c: [m for (t, _), ms in c.brokers["broker-a"].sent.items()
                                  if t == "T" for m in ms.values()])
    assert all("RETRY_TOPIC" not in m.properties for m in stored)


def test_bad_selections_are_usage_errors(cli, dead):
    for args in ([], ["--all", "--since", "-1h"], ["--all", "--to", "nowhere"],
                 ["--all", "--rate", "fast"]):
        r = resend(cli, dead, *args)
        assert r.exit_code == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and "hint:" in r.stderr


def test_without_a_terminal_execute_needs_yes(cli, dead):
    dead.clear_request_log()
    r = resend(cli, dead, "--all", "--execute")
    assert r.exit_code == 6 and "--yes" in r.stderr
    assert not [x for x in dead.request_log if x.code in SENDS]


def test_a_concurrent_change_of_the_group_is_refused(cli, dead):
    dead.clear_request_log()
    with change_lock([dead.namesrv_addr], GROUP, "mqctl group pause G_DEAD"):
        r = resend(cli, dead, "--all", "--execute", "--yes")
    assert r.exit_code == 6 and f"another mqctl run is changing group {GROUP}" in r.stderr
    assert not [x for x in dead.request_log if x.code in SENDS]


def _spawn(sim, tmp_path, args, env=None):
    e = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="250",
             XDG_STATE_HOME=str(tmp_path / "state"), **(env or {}))
    return subprocess.Popen([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, "-o",
                             "json", "group", "dlq", "resend", GROUP, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e,
                            cwd=tmp_path)


def _sent_lines(journal):
    if not journal.exists():
        return 0
    return sum(1 for x in journal.read_text().splitlines() if '"event":"sent"' in x)


def test_a_run_killed_mid_batch_is_finished_once_by_resume(dead, tmp_path):
    journal = tmp_path / "j.jsonl"
    p = _spawn(dead, tmp_path, ["--all", "--limit", "8", "--rate", "4", "--execute", "--yes",
                                "--journal", str(journal)])
    deadline = time.monotonic() + 40
    while _sent_lines(journal) < 3 and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=20)
    before = _sent_lines(journal)
    assert 3 <= before < 8, before
    p = _spawn(dead, tmp_path, ["--resume", str(journal), "--execute", "--yes"])
    code, out, err = finish(p, 60)
    assert code == 0, err
    d = json.loads(out)
    assert len(d["messages"]) == 8
    assert d["counts"].get("skipped", 0) + d["counts"].get("found", 0) >= before
    counts = resent(dead)
    assert sorted(counts.values()) == [1] * 8  # each unique key stored exactly once
    assert set(counts) == {m["unique_key"] for m in d["messages"]}


def test_a_message_sent_but_not_recorded_is_found_not_resent(cli, dead, tmp_path):
    """A `sending` without `sent` (killed between the send and the record): --resume looks
    for it in the destination by its unique key and records it `sent (found)`."""
    journal = tmp_path / "j.jsonl"
    r = resend(cli, dead, "--all", "--limit", "2", "--execute", "--yes", "--journal",
               str(journal))
    assert r.exit_code == 0, r.stderr
    lines = journal.read_text().splitlines()
    cut = [x for x in lines if not (json.loads(x).get("event") == "sent"
                                    and json.loads(x)["dlq_msg_id"] == json.loads(
                                        lines[0])["messages"][1]["dlq_msg_id"])]
    journal.write_text("\n".join(cut) + "\n" + '{"event":"sen')  # and a line cut short
    again = resend(cli, dead, "--resume", str(journal), "--execute", "--yes")
    assert again.exit_code == 0, again.stderr
    d = json.loads(again.stdout)
    assert [m["status"] for m in d["messages"]] == ["skipped", "found"]
    assert any("cut short" in n for n in d["notes"])
    assert sorted(resent(dead).values()) == [1, 1]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_an_interrupt_stops_between_messages_and_names_the_resume(dead, tmp_path, sig):
    journal = tmp_path / "j.jsonl"
    p = _spawn(dead, tmp_path, ["--all", "--limit", "4", "--execute", "--yes", "--journal",
                                str(journal)], {"MQCTL_TEST_SIGNAL_AT": f"message-done:{sig}"})
    code, out, err = finish(p, 60)
    assert code == 130, err
    assert f"interrupted by {sig} during send: 1 message(s) sent" in err
    assert "--resume" in err and str(journal) in err and "Traceback" not in err
    d = json.loads(out)
    assert [m["status"] for m in d["messages"]] == ["verified"] + ["not-sent"] * 3
    assert sum(resent(dead).values()) == 1


def test_two_brokers_dead_letters_of_both_sent_round_robin(cli, sim_factory, tmp_path,
                                                           monkeypatch):
    """The diagnose scenario's failing group has dead letters on two brokers: every one is
    selected, and the sends go round the writable queues of %RETRY%GID_FAIL's route."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    s = sim_factory("diagnose")
    s.advance(150)
    held = s.call(lambda c: {b: c.brokers[b].max_offset("%DLQ%GID_FAIL", 0)
                             for b in ("broker-a", "broker-b")})
    assert all(n > 0 for n in held.values())
    r = cli(["-n", s.namesrv_addr, "-o", "json", "group", "dlq", "resend", "GID_FAIL",
             "--all", "--limit", "4", "--execute", "--yes"])
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["held"] == sum(held.values()) and d["selected"] == 4
    sent = [m for m in d["messages"] if m["status"] == "verified"]
    assert len(sent) == 4 and [m["queue"] for m in sent] == [
        ("broker-a/0", "broker-b/0")[i % 2] for i in range(len(sent))]


@pytest.mark.parametrize("answer, code", [("y", 0), ("n", 6)])
def test_a_terminal_is_shown_the_plan_and_asked(dead, tmp_path, answer, code):
    journal = tmp_path / "j.jsonl"
    got, out = on_terminal(dead, ["group", "dlq", "resend", GROUP, "--all", "--limit", "2",
                                  "--execute", "--journal", str(journal)], tmp_path, answer)
    assert got == code, out
    assert "%RETRY%G_DEAD" in out and f"the journal is written first: {journal}" in out
    assert "About to send 2 dead letter(s) of G_DEAD to %RETRY%G_DEAD" in out
    assert journal.exists() == (answer == "y")
    assert sum(resent(dead).values()) == (2 if answer == "y" else 0)

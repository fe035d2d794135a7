"""`mqctl message find` and `mqctl group dlq` against the simulated cluster: each way to
search, bounded reads, read-only requests, every output format."""

from __future__ import annotations

import base64
import csv
import io
import json

import pytest
import yaml
from readonly import assert_read_only

from mqctl.remoting.codes import RequestCode as C

FORMATS = ["table", "plain", "json", "yaml", "csv"]


def run(cli, s, *args):
    return cli(["-n", s.namesrv_addr, *args])


def _show(cli, s, offset):
    r = run(cli, s, "-o", "json", "message", "show", "-t", "T", "-b", "broker-a", "-q", "0",
            "--offset", str(offset))
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("fmt", FORMATS)
def test_find_by_key_in_every_format_is_read_only(cli, world, fmt):
    s, offset = world
    key = _show(cli, s, offset)["keys"][0]
    s.clear_request_log()
    r = run(cli, s, "-o", fmt, "message", "find", "-t", "T", "--key", key)
    assert r.exit_code == 0, r.stderr
    assert_read_only(s)
    assert {x.code for x in s.request_log} >= {C.QUERY_MESSAGE}
    if fmt == "json":
        doc = json.loads(r.stdout)
        assert [m["queueOffset"] for m in doc["messages"]] == [offset]
        assert doc["found"] == 1 and doc["stopped"] is False and doc["cappedBy"] == []
        assert doc["brokers"][0]["cap"] == 64
    elif fmt == "yaml":
        assert yaml.safe_load(r.stdout)["messages"][0]["keys"][0] == key
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        assert [int(x["offset"]) for x in rows] == [offset]
    else:
        assert key in r.stdout and "QUERY_MESSAGE on 1 broker(s)" in r.stdout


def test_unique_key_and_msg_id_find_the_same_record(cli, world):
    s, offset = world
    shown = _show(cli, s, offset)
    by_u = json.loads(run(cli, s, "-o", "json", "message", "find", "-t", "T", "--unique-key",
                          shown["properties"]["UNIQ_KEY"]).stdout)
    by_id = json.loads(run(cli, s, "-o", "json", "message", "find", "--msg-id",
                           shown["msgId"]).stdout)
    assert by_u["brokers"][0]["cap"] == 32
    assert [m["msgId"] for m in by_u["messages"]] == [shown["msgId"]]
    assert [m["msgId"] for m in by_id["messages"]] == [shown["msgId"]]
    assert by_id["messages"][0]["brokerName"] == "broker-a"


def test_a_shared_key_stops_at_the_limit_and_says_so(cli, world):
    s, offset = world
    order = _show(cli, s, offset)["keys"][1]  # ORD-nnnnn: every 100000th offset shares it
    r = run(cli, s, "-o", "json", "message", "find", "-t", "T", "--key", order, "--limit", "1")
    doc = json.loads(r.stdout)
    assert doc["shown"] == 1 and doc["limit"] == 1
    assert doc["found"] >= 1
    if doc["found"] > 1:
        assert doc["stopped"] is True
        plain = run(cli, s, "-o", "plain", "message", "find", "-t", "T", "--key", order,
                    "--limit", "1").stdout
        assert f"stopped at 1 of {doc['found']}" in plain


def test_a_time_range_is_read_with_pulls_that_commit_nothing(cli, world):
    s, offset = world
    ts = _show(cli, s, offset)["storeTimestamp"]
    s.clear_request_log()
    r = run(cli, s, "-o", "json", "message", "find", "-t", "T", "-b", "broker-a", "-q", "0",
            "--time", f"{ts}..{ts + 3000}", "--limit", "2")
    doc = json.loads(r.stdout)
    assert_read_only(s)
    assert doc["shown"] == 2 and doc["stoppedBy"] == "limit"
    assert doc["messages"][0]["queueOffset"] == offset
    assert all(ts <= m["storeTimestamp"] <= ts + 3000 for m in doc["messages"])
    pulls = [x for x in s.request_log if x.code == C.PULL_MESSAGE]
    assert len(pulls) == 1 and int(pulls[0].ext_fields["maxMsgNums"]) <= 3


@pytest.mark.parametrize("args, needle", [
    (["--key", "K"], "needs the topic"),
    (["-t", "T"], "nothing to search by"),
    (["-t", "T", "--key", "K", "--msg-id", "AB"], "give one of"),
    (["--msg-id", "nothex"], "not an offset message id"),
    (["-t", "T", "-b", "broker-a", "-q", "0", "--time", "yesterday"], "FROM..TO"),
])
def test_bad_requests_are_one_line_errors(cli, world, args, needle):
    s, _ = world
    r = run(cli, s, "message", "find", *args)
    assert r.exit_code == 2 and needle in r.stderr and "Traceback" not in r.stderr


def test_an_id_that_names_no_record_is_not_found(cli, world):
    s, offset = world
    msg_id = _show(cli, s, offset)["msgId"]
    missing = msg_id[:-4] + "FF00"  # the commit-log offset of no record
    r = run(cli, s, "message", "find", "--msg-id", missing)
    assert r.exit_code == 2 and "holds no message at commit-log offset" in r.stderr


def test_a_key_nobody_set_finds_nothing(cli, world):
    s, _ = world
    doc = json.loads(run(cli, s, "-o", "json", "message", "find", "-t", "T", "--key",
                         "no-such-key").stdout)
    assert doc["messages"] == [] and doc["found"] == 0


def test_group_dlq_lists_the_dead_letters_by_original_topic(cli, world):
    s, _ = world
    s.clear_request_log()
    r = run(cli, s, "-o", "json", "group", "dlq", "G_DEAD", "--last", "3")
    assert r.exit_code == 0, r.stderr
    assert_read_only(s)
    doc = json.loads(r.stdout)
    held = s.call(lambda c: c.brokers["broker-a"].max_offset("%DLQ%G_DEAD", 0))
    assert doc["count"] == held > 3
    assert len(doc["last"]) == 3 and doc["lastAsked"] == 3
    assert [t["topic"] for t in doc["byOriginalTopic"]] == ["T"]
    assert doc["oldestStoreTimestamp"] <= doc["newestStoreTimestamp"]
    assert all(x["original_topic"] == "T" and x["original_id"] for x in doc["last"])
    plain = run(cli, s, "-o", "plain", "group", "dlq", "G_DEAD").stdout
    assert f"%DLQ%G_DEAD: {held} dead letter(s)" in plain


def test_group_dlq_of_a_group_without_dead_letters(cli, world):
    s, _ = world
    doc = json.loads(run(cli, s, "-o", "json", "group", "dlq", "G_CONSUMED").stdout)
    assert doc["count"] == 0 and doc["last"] == [] and doc["oldestStoreTimestamp"] is None


def test_message_show_names_the_original_of_a_dead_letter(cli, world):
    s, _ = world
    r = run(cli, s, "-o", "json", "message", "show", "-t", "%DLQ%G_DEAD", "-b", "broker-a",
            "-q", "0", "--offset", "0")
    doc = json.loads(r.stdout)
    assert doc["originalTopic"] == "T" and doc["originalMsgId"]
    table = run(cli, s, "message", "show", "-t", "%DLQ%G_DEAD", "-b", "broker-a", "-q", "0",
                "--offset", "0").stdout
    assert "original topic" in table and doc["originalMsgId"] in table


def test_a_key_on_millions_of_messages_is_bounded_by_the_index_and_the_limit(cli, sim_factory):
    """One key every 100000 offsets of a 7-million-message queue: 70 messages carry it; the
    broker's index gives 64 (maxMsgsNumBatch), the newest; --limit shows 5 and says it
    stopped, and that the broker may hold more."""
    s = sim_factory({"name": "many", "clock": {"mode": "manual"},
                     "brokers": [{"name": "broker-a"}],
                     "topics": [{"name": "BIG", "queues": 1, "rate": 0,
                                 "max_offset": 7_000_000, "history": "7d"}],
                     "groups": []})
    r = run(cli, s, "-o", "json", "message", "show", "-t", "BIG", "-b", "broker-a", "-q", "0",
            "--offset", "42")
    order = json.loads(r.stdout)["keys"][1]
    s.clear_request_log()
    r = run(cli, s, "-o", "json", "message", "find", "-t", "BIG", "--key", order, "--limit", "5")
    doc = json.loads(r.stdout)
    assert_read_only(s)
    assert doc["found"] == 64 and doc["shown"] == 5 and doc["stopped"] is True
    assert doc["cappedBy"] == ["broker-a"]
    offsets = [m["queueOffset"] for m in doc["messages"]]
    assert offsets == sorted(offsets, reverse=True) and offsets[0] >= 6_900_000
    plain = run(cli, s, "-o", "plain", "message", "find", "-t", "BIG", "--key", order,
                "--limit", "5").stdout
    assert "stopped at 5 of 64+" in plain and "broker-a returned as many as it may" in plain


@pytest.mark.parametrize("fmt", ["csv", "yaml", "plain"])
def test_track_and_dlq_in_every_format(cli, world, fmt):
    s, offset = world
    msg_id = _show(cli, s, offset)["msgId"]
    tr = run(cli, s, "-o", fmt, "message", "track", "--msg-id", msg_id)
    dl = run(cli, s, "-o", fmt, "group", "dlq", "G_DEAD", "--last", "2")
    assert tr.exit_code == 0 and dl.exit_code == 0, (tr.stderr, dl.stderr)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(tr.stdout)))
        assert {x["group"]: x["state"] for x in rows}["G_DEAD"] == "dead-lettered"
        assert len(list(csv.DictReader(io.StringIO(dl.stdout)))) == 2
    elif fmt == "yaml":
        assert yaml.safe_load(tr.stdout)["states"]["dead-lettered"] == 1
        assert yaml.safe_load(dl.stdout)["byOriginalTopic"][0]["topic"] == "T"
    else:
        assert "dead-lettered" in tr.stdout and "%DLQ%G_DEAD" in dl.stdout


def test_body_writes_the_bytes_the_producer_sent_and_never_replaces_a_file(cli, world,
                                                                          tmp_path):
    s, offset = world
    shown = _show(cli, s, offset)
    out = tmp_path / "body.bin"
    r = run(cli, s, "-o", "json", "message", "find", "--msg-id", shown["msgId"], "--body",
            str(out))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    head = base64.b64decode(shown["bodyHeadBase64"])
    assert out.read_bytes().startswith(head) and len(out.read_bytes()) == shown["bodySize"]
    assert doc["bodyBytesWritten"] == shown["bodySize"]
    again = run(cli, s, "message", "find", "--msg-id", shown["msgId"], "--body", str(out))
    assert again.exit_code == 2 and "exists: not replaced" in again.stderr

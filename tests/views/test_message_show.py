"""`mqctl message show` and the simulated broker's PULL_MESSAGE.

The real corpus has no PULL_MESSAGE exchange (README: none recorded), so the sim's answers are
checked against PullMessageProcessor / DefaultMessageStore.getMessage as cited in
mqctl/sim/broker/pull_message_processor.py h_pull, and the decoder against records built byte
by byte.
"""

from __future__ import annotations

import asyncio
import csv
import io
import struct
import zlib

import pytest
import yaml
from readonly import assert_read_only
from wire_capture_helpers import Msg, assert_clean_error, encode_message

from mqctl.models import MessageQueue
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R
from mqctl.remoting.codes import is_mutating
from mqctl.remoting.message import decode_messages
from mqctl.views.message import (
    READ_SYS_FLAG,
    TOOLS_CONSUMER_GROUP,
    body_head,
    parse_pull,
    printable,
    read_pull_fields,
)

FORMATS = ["table", "plain", "json", "yaml", "csv"]
SHOW = ["message", "show", "-t", "TopicPay", "-b", "broker-a", "-q", "1"]

SCENARIO = {  # 4.9.3 and 5.3.3 brokers; a queue whose first messages were removed (min 100)
    "name": "pull", "clock": {"mode": "manual"},
    "brokers": [{"name": "b493", "version": "V4_9_3"}, {"name": "b533", "version": "V5_3_3"}],
    "topics": [{"name": "T", "queues": 2, "rate": 2.0, "history": "10m", "min_offset": 100},
               {"name": "Z", "queues": 1, "rate": 1.0, "history": "10m"},
               {"name": "E", "queues": 1, "rate": 0.0, "history": "0s"}],
    "groups": [{"name": "G", "topics": ["T"], "initial_lag": 10}],
}


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def store_ts(sim, broker, topic, q, offset):
    return sim.call(lambda c: c.brokers[broker].qlog(topic, q).store_ts(offset))


def pull(sim, broker, topic, q, offset, *, sys_flag=READ_SYS_FLAG, group=TOOLS_CONSUMER_GROUP,
         commit=0, max_nums=1):
    ext = dict(read_pull_fields(MessageQueue(topic, broker, q), offset, max_nums))
    ext.update({"sysFlag": sys_flag, "consumerGroup": group, "commitOffset": commit})
    addr = sim.cluster.servers[broker].addr

    async def go():
        async with RemotingClient(ClientOptions(timeout=5)) as c:
            return await c.invoke(addr, C.PULL_MESSAGE, ext, check=False)
    return asyncio.run(go())


@pytest.mark.parametrize("fmt", FORMATS)
def test_message_show_every_format(cli, sim, fmt):
    sim.advance(5)
    sim.clear_request_log()
    r = run(cli, sim, *SHOW, "--offset", "7", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    ts = store_ts(sim, "broker-a", "TopicPay", 1, 7)
    if fmt == "json":
        d = r.json
        assert (d["topic"], d["brokerName"], d["queueId"], d["queueOffset"]) == (
            "TopicPay", "broker-a", 1, 7)
        assert d["storeTimestamp"] == ts and d["bornTimestamp"] <= ts
        assert d["keys"][0] == "TopicPay-broker-a-1-7" and d["tags"] in ("TagA", "TagB", "TagC")
        assert d["properties"]["CLUSTER"] == "DefaultCluster"
        assert d["bodySize"] == d["bodyHeadBytes"] == len(d["bodyHead"])
        assert '"offset":7' in d["bodyHead"] and d["bodyTruncated"] is False
        assert d["readWith"] == {"request": "PULL_MESSAGE", "consumerGroup": "TOOLS_CONSUMER",
                                 "sysFlag": 4, "commitOffset": False,
                                 "broker": sim.cluster.broker_addr("broker-a")}
        host = sim.cluster.broker_addr("broker-a")
        assert d["storeHost"] == host
        ip, port = host.split(":")
        assert d["msgId"].startswith(bytes(map(int, ip.split("."))).hex().upper()
                                     + f"{int(port):08X}")
    elif fmt == "yaml":
        assert yaml.safe_load(r.stdout)["queueOffset"] == 7
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        fields = {x["field"]: x["value"] for x in rows if x.get("field")}
        assert fields["queue offset"] == "7" and "TopicPay-broker-a-1-7" in fields["keys"]
    else:
        assert "TopicPay-broker-a-1-7" in r.stdout and "TOOLS_CONSUMER" in r.stdout
        assert "store time" in r.stdout and "UNIQ_KEY" in r.stdout
    pulls = [x for x in sim.request_log if x.code == C.PULL_MESSAGE]
    assert len(pulls) == 1
    assert pulls[0].ext_fields["consumerGroup"] == "TOOLS_CONSUMER"
    assert pulls[0].ext_fields["sysFlag"] == "4" and pulls[0].ext_fields["maxMsgNums"] == "1"
    assert not is_mutating(pulls[0].code, pulls[0].ext_fields)
    assert_read_only(sim)


def test_body_bytes_limits_the_head(cli, sim):
    r = run(cli, sim, *SHOW, "--offset", "3", "--body-bytes", "10", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["bodyHeadBytes"] == 10 and d["bodyTruncated"] is True
    assert d["bodyHead"] == '{"topic":"'
    r = run(cli, sim, *SHOW, "--offset", "3", "--body-bytes", "10", "-o", "plain")
    assert '{"topic":" … (10 of ' in r.stdout


@pytest.mark.parametrize("offset", ["-1", "99999999"])
def test_offset_out_of_range_is_refused_before_any_pull(cli, sim, offset):
    sim.clear_request_log()
    r = run(cli, sim, *SHOW, "--offset", offset)
    if offset == "-1":  # typer's min=0
        assert r.exit_code == 2 and "Traceback" not in r.stderr
    else:
        assert_clean_error(r, 2, "offset 99999999 is not in queue broker-a/1 of TopicPay")
        assert "holds offsets 0 to" in r.stderr
    assert not [x for x in sim.request_log if x.code == C.PULL_MESSAGE]


def test_offset_at_max_is_not_a_message_yet(cli, sim):
    mx = sim.call(lambda c: c.brokers["broker-a"].max_offset("TopicPay", 1))
    r = run(cli, sim, *SHOW, "--offset", str(mx))
    assert_clean_error(r, 2, f"holds offsets 0 to {mx - 1}")


def test_bad_broker_and_queue(cli, sim):
    assert_clean_error(run(cli, sim, "message", "show", "-t", "TopicPay", "-b", "nope", "-q",
                           "0", "--offset", "1"), 2, "broker 'nope' does not serve topic")
    assert_clean_error(run(cli, sim, *SHOW[:-1], "8", "--offset", "1"), 2,
                       "queue 8 does not exist on broker-a")
    assert_clean_error(run(cli, sim, "message", "show", "-t", "NoSuch", "-b", "broker-a", "-q",
                           "0", "--offset", "1"), 2, "topic 'NoSuch' has no route")


def test_broker_down_is_a_connection_error(cli, sim):
    sim.call(lambda c: c.faults.broker_down("broker-a"))
    sim.advance(0.1)
    r = run(cli, sim, "--timeout", "1", *SHOW, "--offset", "1")
    assert r.exit_code == 3 and "Traceback" not in r.stderr


def test_o_stays_the_output_format(cli, sim):
    r = run(cli, sim, *SHOW, "-o", "5")
    assert r.exit_code == 2  # -o is --output everywhere: 5 is not a format
    r = run(cli, sim, *SHOW, "--offset", "5", "-o", "json")
    assert r.exit_code == 0 and r.json["queueOffset"] == 5


# ------------------------------------------------------------------- the sim's PULL_MESSAGE

@pytest.fixture
def psim(sim_factory):
    s = sim_factory(SCENARIO)
    s.advance(2)
    return s


@pytest.mark.parametrize("broker", ["b493", "b533"])
def test_sim_pull_found_decodes_and_commits_nothing(psim, broker):
    mx = psim.call(lambda c: c.brokers[broker].max_offset("T", 0))
    groups = psim.call(lambda c: set(c.brokers[broker].groups))
    resp = pull(psim, broker, "T", 0, 150, max_nums=3)
    a = parse_pull(resp)
    assert (a.code, a.status) == (R.SUCCESS, "FOUND")
    assert (a.next_begin_offset, a.min_offset, a.max_offset) == (153, 100, mx)
    assert [m.queue_offset for m in a.messages] == [150, 151, 152] and a.decode_error is None
    assert [m.store_timestamp for m in a.messages] == [
        store_ts(psim, broker, "T", 0, o) for o in (150, 151, 152)]
    m = a.messages[0]
    assert m.body_crc == zlib.crc32(m.body) & 0x7FFFFFFF and m.topic == "T"
    assert resp.ext("suggestWhichBrokerId") == "0"
    assert (resp.ext("groupSysFlag") is not None) == (broker == "b533")  # 5.x header fields
    assert pull(psim, broker, "T", 0, 150, max_nums=3).body == resp.body  # deterministic
    assert psim.call(lambda c: c.brokers[broker].committed(TOOLS_CONSUMER_GROUP, "T", 0)) is None
    assert psim.call(lambda c: set(c.brokers[broker].groups)) == groups  # nothing created


@pytest.mark.parametrize("broker,badly_next", [("b493", "max"), ("b533", "max")])
def test_sim_pull_statuses(psim, broker, badly_next):
    mx = psim.call(lambda c: c.brokers[broker].max_offset("T", 0))
    small = parse_pull(pull(psim, broker, "T", 0, 5))
    assert (small.code, small.status, small.next_begin_offset) == (
        R.PULL_OFFSET_MOVED, "OFFSET_TOO_SMALL", 100)
    one = parse_pull(pull(psim, broker, "T", 0, mx))
    assert (one.code, one.status, one.next_begin_offset, one.messages) == (
        R.PULL_NOT_FOUND, "OFFSET_OVERFLOW_ONE", mx, ())
    bad = parse_pull(pull(psim, broker, "T", 0, mx + 50))
    assert (bad.code, bad.status, bad.next_begin_offset) == (
        R.PULL_OFFSET_MOVED, "OFFSET_OVERFLOW_BADLY", mx)
    # a queue with min offset 0: 4.9.3 corrects an overflow to the min offset, 5.x to the max
    zmx = psim.call(lambda c: c.brokers[broker].max_offset("Z", 0))
    z = parse_pull(pull(psim, broker, "Z", 0, zmx + 50))
    assert z.next_begin_offset == (0 if broker == "b493" else zmx)
    empty = parse_pull(pull(psim, broker, "E", 0, 0))
    assert (empty.code, empty.status) == (R.PULL_NOT_FOUND, "NO_MESSAGE_IN_QUEUE")
    assert parse_pull(pull(psim, broker, "E", 0, 3)).code == R.PULL_OFFSET_MOVED


def test_sim_pull_commits_only_with_the_commit_flag(psim):
    before = psim.call(lambda c: c.brokers["b533"].committed("G", "T", 1))
    pull(psim, "b533", "T", 1, 120, group="G", commit=123)  # no flag
    assert psim.call(lambda c: c.brokers["b533"].committed("G", "T", 1)) == before
    pull(psim, "b533", "T", 1, 120, group="G", commit=123, sys_flag=READ_SYS_FLAG | 1)
    assert psim.call(lambda c: c.brokers["b533"].committed("G", "T", 1)) == 123


def test_sim_pull_refusals(psim):
    r = pull(psim, "b493", "NoSuch", 0, 0)
    assert r.code == R.TOPIC_NOT_EXIST and r.remark.startswith("topic[NoSuch] not exist")
    r = pull(psim, "b493", "T", 7, 0)
    assert r.code == R.INVALID_PARAMETER and "queueId[7] is illegal" in r.remark
    r = pull(psim, "b493", "T", 0, 120, sys_flag=0)  # no subscription in the request
    assert r.code == R.SUBSCRIPTION_NOT_EXIST
    psim.call(lambda c: setattr(c.brokers["b493"].groups["G"], "consume_enable", False))
    r = pull(psim, "b493", "T", 0, 120, group="G")
    assert (r.code, r.remark) == (R.NO_PERMISSION, "subscription group no permission, G")


def test_message_show_on_both_versions_and_a_queue_with_removed_messages(cli, psim):
    for broker in ("b493", "b533"):
        r = run(cli, psim, "message", "show", "-t", "T", "-b", broker, "-q", "0", "--offset",
                "100", "-o", "json")
        assert r.exit_code == 0, r.stderr
        assert r.json["queueOffset"] == 100 and r.json["queueMinOffset"] == 100
        r = run(cli, psim, "message", "show", "-t", "T", "-b", broker, "-q", "0", "--offset",
                "99")
        assert_clean_error(r, 2, "holds offsets 100 to")
    assert_read_only(psim)


# ------------------------------------------------------------------------- pure rendering

def test_printable_escapes_what_could_drive_a_terminal():
    assert printable(b"plain text") == "plain text"
    assert printable("Zürich ☃".encode()) == "Zürich ☃"
    assert printable(b"a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert printable(b"\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert printable(b"back\\slash") == "back\\\\slash"
    assert printable(b"\xff\xfe\x00ok") == "\\xff\\xfe\\x00ok"
    assert printable("\u202e".encode()) == "\\u202e"  # bidi override is not printable
    assert printable(b"\xe2\x98") == "\\xe2\\x98"  # a cut UTF-8 sequence


def test_body_head_of_compressed_and_binary_bodies():
    raw = encode_message(Msg("T", 0, 5, 1_700_000_000_000, body=b"\x00\x01hello" * 100,
                             compress=True))
    (m,), err = decode_messages(raw)
    assert err is None and m.compressed and m.compression == "ZLIB"
    h = body_head(m, 12)
    assert h["bodyHead"] == "\\x00\\x01hello\\x00\\x01hel" and h["bodyTruncated"] is True
    assert h["bodyHeadBytes"] == 12
    # a 5.x LZ4 body (compression type 1 in sys flag bits 8-10): not uncompressed, said so
    lz4 = bytearray(raw)
    flag_at = 4 + 4 + 4 + 4 + 4 + 8 + 8
    (flag,) = struct.unpack_from(">i", lz4, flag_at)
    struct.pack_into(">i", lz4, flag_at, flag | (1 << 8))
    (m4,), _ = decode_messages(bytes(lz4))
    h4 = body_head(m4, 12)
    assert h4["bodyHead"] is None and "LZ4" in h4["bodyNote"]


# ----------------------------------------------------------- offsets reset --show-messages

RESET = ["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay"]


@pytest.mark.parametrize("fmt", ["json", "plain", "csv"])
def test_reset_plan_shows_the_message_at_each_target(cli, sim, fmt):
    sim.advance(5)
    sim.clear_request_log()
    asked = sim.call(lambda c: c.clock.now_ms()) - 600_000
    r = run(cli, sim, *RESET, "--by-duration", "-10m", "--show-messages", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    if fmt == "json":
        qs = r.json["queues"]
        assert len(qs) == 8
        for q in qs:
            tm = q["target_message"]
            assert tm["target_message"] == "found"
            assert tm["target_store_ts"] == store_ts(sim, q["broker"], "TopicPay",
                                                     q["queue_id"], q["target"])
            assert tm["target_keys_list"][0] == (f"TopicPay-{q['broker']}-{q['queue_id']}-"
                                                 f"{q['target']}")
            # a time reset's target is the first message stored at or after the time
            assert tm["target_store_ts"] >= asked
            assert store_ts(sim, q["broker"], "TopicPay", q["queue_id"], q["target"] - 1) < asked
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        assert all(x["target_store_time"].endswith("Z") for x in rows if x.get("broker"))
    else:
        assert "TARGET STORED" in r.stdout and "TARGET KEYS" in r.stdout
    pulls = [x for x in sim.request_log if x.code == C.PULL_MESSAGE]
    assert len(pulls) == 8 and all(not is_mutating(x.code, x.ext_fields) for x in pulls)
    assert_read_only(sim)  # a plan without --execute changes nothing


def test_reset_to_latest_has_no_message_at_the_target(cli, sim):
    sim.clear_request_log()
    r = run(cli, sim, *RESET, "--to-latest", "--show-messages", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {q["target_message"]["target_message"] for q in r.json["queues"]} == {"end"}
    assert not [x for x in sim.request_log if x.code == C.PULL_MESSAGE]
    r = run(cli, sim, *RESET, "--to-latest", "--show-messages", "-o", "plain")
    assert "no message yet" in r.stdout


def test_reset_without_show_messages_pulls_nothing(cli, sim):
    sim.clear_request_log()
    r = run(cli, sim, *RESET, "--to-earliest", "-o", "json")
    assert r.exit_code == 0 and "target_message" not in r.json["queues"][0]
    assert not [x for x in sim.request_log if x.code == C.PULL_MESSAGE]


def test_reset_execute_with_show_messages_still_applies(cli, sim, tmp_path):
    r = run(cli, sim, *RESET, "--to-earliest", "--show-messages", "--execute", "--yes",
            "--rollback-file", str(tmp_path / "rb.json"), "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {q["target_message"]["target_message"] for q in r.json["queues"]} == {"found"}
    assert sim.call(lambda c: c.brokers["broker-a"].committed("GID_REPLAY", "TopicPay", 0)) == 0


def test_a_pending_server_side_reset_survives_message_show(cli, sim, tmp_path):
    """A pull takes the PULLING group's pending reset only (queryThenEraseResetOffset is keyed
    by topic@group): a group's reset waits for its own consumers after message show."""
    r = run(cli, sim, *RESET, "--to-earliest", "--execute", "--yes", "--queues", "broker-a:0",
            "--rollback-file", str(tmp_path / "rb.json"))
    assert r.exit_code == 0, r.stderr
    pending = sim.call(lambda c: dict(c.brokers["broker-a"].resets[("TopicPay", "GID_REPLAY")]))
    assert pending == {0: 0}
    r = run(cli, sim, *SHOW[:-1], "0", "--offset", "3")
    assert r.exit_code == 0, r.stderr
    assert sim.call(lambda c: dict(c.brokers["broker-a"].resets[("TopicPay", "GID_REPLAY")])) \
        == pending
    # the group's own pull takes it (PULL_OFFSET_MOVED, OFFSET_RESET, nextBeginOffset = 0)
    a = parse_pull(pull(sim, "broker-a", "TopicPay", 0, 35000, group="GID_REPLAY"))
    assert (a.code, a.status, a.next_begin_offset) == (R.PULL_OFFSET_MOVED, "OFFSET_RESET", 0)
    assert ("TopicPay", "GID_REPLAY") not in sim.call(lambda c: set(c.brokers["broker-a"].resets))


def test_a_queue_that_changed_after_the_range_check_is_the_brokers_answer(cli, sim):
    """The message went between GET_MAX_OFFSET and the pull (retention, a race): the broker's
    code and remark, exit 5, no traceback."""
    sim.call(lambda c: c.faults.error("broker-a", C.PULL_MESSAGE, R.PULL_NOT_FOUND,
                                      remark="OFFSET_FOUND_NULL", times=1))
    r = run(cli, sim, *SHOW, "--offset", "3")
    assert r.exit_code == 5 and "Traceback" not in r.stderr
    assert "PULL_NOT_FOUND (19)" in r.stderr and "try again" in r.stderr


def test_a_refused_pull_is_a_broker_error(cli, sim):
    sim.call(lambda c: c.faults.error("broker-a", C.PULL_MESSAGE, R.NO_PERMISSION,
                                      remark="subscription group no permission, TOOLS_CONSUMER",
                                      times=1))
    r = run(cli, sim, *SHOW, "--offset", "3")
    assert_clean_error(r, 5, "NO_PERMISSION (16)")

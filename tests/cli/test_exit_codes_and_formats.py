"""The CLI boundary: exit codes, one-line errors, output formats, wire decode, time, config."""

from __future__ import annotations

import json
import os
import struct

import pytest
from conftest import SAMPLES

from mqctl import __version__
from mqctl.remoting.frame import RemotingCommand, encode


def assert_clean_error(r, code, fragment):
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert len(lines) == 1 and fragment in lines[0], r.stderr


def test_version_and_help(cli):
    r = cli(["--version"])
    assert r.exit_code == 0 and r.stdout.strip() == f"mqctl {__version__}"
    r = cli(["--help"])
    assert r.exit_code == 0 and "consumer groups" in r.stdout
    for group in ("config", "wire", "time"):
        assert group in r.stdout


def test_unknown_command_is_a_usage_error(cli):
    r = cli(["frobnicate"])
    assert_clean_error(r, 2, "No such command")
    assert "hint: see 'mqctl --help'" in r.stderr


@pytest.mark.parametrize("fmt", ["json", "yaml", "csv", "plain", "table"])
def test_wire_decode_formats(cli, fmt):
    r = cli(["wire", "decode", str(SAMPLES / "wire/newlife_rocketmq_response_extfields.hex"),
             "-o", fmt])
    assert r.exit_code == 0, r.stderr
    assert "6379881" in r.stdout
    if fmt == "json":
        d = r.json
        assert d["code"] == 0 and d["opaque"] == 1576 and d["language"] == "JAVA"
        assert d["version"] == 373 and d["flag"] == 1 and d["remark"] is None
        assert d["extFields"]["queueOffset"] == "6379881" and d["body"] is None


def test_wire_decode_json_body_and_raw_frame(cli, tmp_path):
    r = cli(["wire", "decode", str(SAMPLES / "wire/newlife_json_request_HEART_BEAT.hex"),
             "-o", "json"])
    d = r.json
    assert d["code"] == 34 and d["codeName"] == "HEART_BEAT" and d["language"] == "DOTNET"
    assert d["body"]["ClientID"] == "10.7.69.205@63284"
    raw = tmp_path / "frame.bin"
    raw.write_bytes(encode(RemotingCommand.request(30, {"topic": "T", "queueId": 1})))
    d = cli(["wire", "decode", str(raw), "-o", "json"]).json
    assert d["code"] == 30 and d["extFields"] == {"topic": "T", "queueId": "1"}
    assert d["language"] == "PYTHON" and d["version"] == 479


def test_wire_decode_bare_body_and_stdin(cli):
    r = cli(["wire", "decode", str(SAMPLES / "synthetic/consume_stats.json"), "-o", "json"])
    body = r.json["body"]
    key = "MessageQueue [topic=TopicOrder, brokerName=broker-a, queueId=1]"
    assert body["offsetTable"][key]["consumerOffset"] == 1498
    r = cli(["wire", "decode", "-", "-o", "json"], stdin='{"brokerAddrs":{0:"a:1"}}')
    assert r.json == {"body": {"brokerAddrs": {"0": "a:1"}}}


def test_wire_decode_unknown_response_code_is_named(cli, tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(encode(RemotingCommand(code=9999, flag=1, opaque=3, remark="odd")))
    d = cli(["wire", "decode", str(p), "-o", "json"]).json
    assert d["code"] == 9999 and d["codeName"] == "UNKNOWN_RESPONSE_9999"


def test_wire_decode_errors(cli, tmp_path):
    trunc = tmp_path / "trunc.hex"
    text = (SAMPLES / "wire/newlife_rocketmq_response_extfields.hex").read_text()
    trunc.write_text(text[:-6])  # cut mid-line
    assert_clean_error(cli(["wire", "decode", str(trunc)]), 4, "truncated")
    odd = tmp_path / "odd.hex"
    odd.write_text("00 00 00 19 0")
    assert_clean_error(cli(["wire", "decode", str(odd)]), 4, "odd number of digits")
    bad = tmp_path / "bad.bin"
    bad.write_bytes(struct.pack(">ii", 8, 500) + b"abcd")
    assert_clean_error(cli(["wire", "decode", str(bad)]), 4, "header length 500 exceeds")
    body = tmp_path / "body.json"
    body.write_text('{"a":')
    assert_clean_error(cli(["wire", "decode", str(body)]), 4, "cannot parse body")
    assert_clean_error(cli(["wire", "decode", str(tmp_path / "missing.hex")]), 2,
                       "file not found")


def test_time_command(cli):
    r = cli(["time", "-o", "json", "--", "2024-06-01T00:00:00Z", "1717200000123"])
    assert r.exit_code == 0, r.stderr
    assert [row["epoch_ms"] for row in r.json["times"]] == [1717200000000, 1717200000123]
    assert r.json["times"][0]["utc"] == "2024-06-01T00:00:00.000Z"
    r = cli(["time", "bogus"])
    assert_clean_error(r, 2, "cannot parse time 'bogus'")
    assert "accepted forms" in r.stderr


def test_time_command_reads_negative_durations_without_a_double_dash(cli):
    # Click would read -2h as the options -2 and -h (help)
    r = cli(["time", "-2h", "1717200000123", "-o", "json", "-PT30M"])
    assert r.exit_code == 0, r.stderr
    got = [(row["input"], row["offset_from_now_s"]) for row in r.json["times"]]
    assert [g[0] for g in got] == ["-2h", "1717200000123", "-PT30M"]
    assert got[0][1] == -7200 and got[2][1] == -1800
    r = cli(["time", "now", "--bogus"])
    assert_clean_error(r, 2, "No such option: --bogus")


def test_a_global_option_after_the_command_gets_a_hint_to_move_it(cli):
    # -q, --debug, --timeout and --tz are accepted after the command (tests/cli/test_help.py)
    r = cli(["snapshot", "--out", "x", "--all-groups", "--access-key", "k"])
    assert_clean_error(r, 2, "No such option: --access-key")
    assert ("hint: --access-key is a global option: give it before the command "
            "('mqctl --access-key VALUE snapshot ...')") in r.stderr
    r = cli(["group", "progress", "G", "--tls-insecure"])
    assert "('mqctl --tls-insecure group progress ...')" in r.stderr
    r = cli(["allocate", "--queues", "b:2", "--consumers", "1", "--config", "x.yaml"])
    assert "('mqctl --config VALUE allocate ...')" in r.stderr
    r = cli(["group", "progress", "G", "--quite"])  # not a global option: the usual hint
    assert "hint: see 'mqctl group progress --help'" in r.stderr


def test_config_show_redacts_and_reports_sources(cli, tmp_path):
    creds = tmp_path / "c.yaml"
    creds.write_text("access_key: ak1\nsecret_key: VERY-SECRET-42\n")
    os.chmod(creds, 0o644)
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"current_profile: p\nprofiles:\n  p:\n    namesrv: 10.0.0.1:9876\n"
                   f"    acl: {{credentials_file: {creds}}}\n")
    r = cli(["--config", str(cfg), "config", "show", "-o", "json"],
            env={"MQCTL_TIMEOUT": "9"})
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["namesrv"] == {"value": "10.0.0.1:9876", "source": "profile p"}
    assert d["timeout"] == {"value": 9, "source": "env MQCTL_TIMEOUT"}  # a number
    assert d["acl.secret_key"]["value"] == "<redacted>"
    assert "VERY-SECRET-42" not in r.stdout + r.stderr
    assert "readable by group or others" in r.stderr
    r = cli(["--config", str(cfg), "-n", "1.1.1.1:1", "config", "show", "-o", "json"])
    assert r.json["namesrv"] == {"value": "1.1.1.1:1", "source": "flag"}


def test_config_errors_are_one_line(cli, tmp_path):
    r = cli(["config", "show"], env={"MQCTL_CONFIG": str(tmp_path / "none.yaml")})
    assert_clean_error(r, 2, "config file not found")
    bad = tmp_path / "bad.yaml"
    bad.write_text("profiles:\n  p: {namesrv: [\n")
    r = cli(["--config", str(bad), "config", "show"])
    assert_clean_error(r, 2, "is not valid YAML at line")


def test_output_flag_validation(cli):
    r = cli(["config", "show", "-o", "xml"])
    assert r.exit_code == 2 and "Traceback" not in r.stderr


def test_json_output_is_valid_and_stable(cli):
    r = cli(["-o", "json", "config", "show"])
    assert r.exit_code == 0
    assert list(json.loads(r.stdout))[:3] == ["profile", "config_file", "namesrv"]

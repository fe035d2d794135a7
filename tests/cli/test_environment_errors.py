"""Bounded time and memory on every input, and environment problems
named (one-line error, hint, documented exit code), never reported as bugs."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from conftest import ROOT, run_cli
from tcp_peer import TcpPeer

from mqctl.errors import ExitCode

PY = [sys.executable, "-m", "mqctl"]


def _error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    return lines[0]


def _named(r, code: int, *parts: str) -> str:
    """The command failed with exit ``code``, one error line holding ``parts``, and a hint."""
    line = _error_line(r.stderr)
    assert r.exit_code == code, (r.exit_code, r.stderr)
    for p in parts:
        assert p in line, (p, line)
    assert "\nhint: " in "\n" + r.stderr, r.stderr
    return line


# ------------------------------------------------------------------------------------------
# --timeout / MQCTL_TIMEOUT / profile timeout: finite, 0.1 .. 3600 s


@pytest.mark.parametrize("value", ["inf", "nan", "1e308", "-inf", "0.01", "3601"])
def test_timeout_flag_must_be_finite_and_in_range(value):
    r = run_cli(["--timeout", value, "config", "show", "-o", "json"])
    _named(r, ExitCode.USAGE, "timeout (flag):", "0.1 to 3600 seconds")


@pytest.mark.parametrize("value", ["inf", "NaN", "1e308"])
def test_timeout_env_must_be_finite(value):
    r = run_cli(["config", "show"], env={"MQCTL_TIMEOUT": value})
    _named(r, ExitCode.USAGE, "timeout (env MQCTL_TIMEOUT):", "0.1 to 3600 seconds")


@pytest.mark.parametrize("value", [".inf", ".nan", "1e308", "inf"])
def test_timeout_profile_must_be_finite(tmp_path, value):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"current_profile: p\nprofiles:\n  p:\n    timeout: {value}\n")
    # checked even when a flag overrides it: a bad profile value is an error
    r = run_cli(["--config", str(cfg), "--timeout", "5", "config", "show"])
    _named(r, ExitCode.USAGE, "timeout (profile p):", "0.1 to 3600 seconds")


def test_timeout_bounds_are_accepted():
    for value in ("0.1", "3600", "2.5"):
        r = run_cli(["--timeout", value, "config", "show", "-o", "json"])
        assert r.exit_code == 0, r.stderr
        import json

        assert float(json.loads(r.stdout)["timeout"]["value"]) == float(value)


def test_wire_decode_dev_zero_reads_at_most_one_frame():
    """`wire decode -` on an endless binary stream stops after the 16 MiB frame limit."""
    p = subprocess.Popen([*PY, "wire", "decode", "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    written = 0
    chunk = b"\0" * (1 << 20)

    def feed() -> None:
        nonlocal written
        try:
            while written < (64 << 20):
                assert p.stdin is not None
                p.stdin.write(chunk)
                written += len(chunk)
            p.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    try:
        p.wait(timeout=60)
    finally:
        p.kill()
    t.join(5)
    assert p.stderr is not None
    err_s = p.stderr.read().decode()
    line = _error_line(err_s)
    assert p.returncode == ExitCode.USAGE, err_s
    assert "larger than 16777216 bytes" in line, line
    assert "hint:" in err_s
    # the reader stopped near 16 MiB: the writer could not push the whole 64 MiB
    assert written < 32 << 20, written


def test_wire_decode_dev_zero_file():
    t0 = time.monotonic()
    r = run_cli(["wire", "decode", "/dev/zero"])
    _named(r, ExitCode.USAGE, "/dev/zero", "larger than 16777216 bytes")
    assert time.monotonic() - t0 < 20


def test_wire_decode_capture_cap(tmp_path, monkeypatch):
    """Text and pcap captures may hold many frames: they are capped at MAX_CAPTURE_INPUT."""
    from mqctl import wire

    monkeypatch.setattr(wire, "MAX_CAPTURE_INPUT", 4096)
    big = tmp_path / "cap.txt"
    line = "\t0x0000:  4500 0034 0000 4000 4006 0000 7f00 0001  E..4..@.@.......\n"
    big.write_text(line * (4096 // len(line) + 2))
    r = run_cli(["wire", "decode", str(big)])
    _named(r, ExitCode.USAGE, "larger than 4096 bytes")
    # a capture under the cap is read whole (and decoded or refused on its own merits)
    small = tmp_path / "ok.txt"
    small.write_text(line)
    r = run_cli(["wire", "decode", str(small)])
    assert "larger than" not in r.stderr
    assert wire.read_input(str(small)) == line.encode()


# ------------------------------------------------------------------------------------------
# times outside 1970-01-01 .. 9999-12-31 are refused; the epoch itself renders


@pytest.mark.parametrize("text, part", [
    ("0001-01-01T00:00:00Z", "before 1970-01-01T00:00:00Z"),
    ("1969-12-31T23:59:59Z", "before 1970-01-01T00:00:00Z"),
    ("-9999999999999999999h", "before 1970-01-01T00:00:00Z"),
    ("9" * 400 + "h", "before 1970-01-01T00:00:00Z"),
    ("+" + "9" * 400 + "h", "after 9999-12-31"),
    ("-P99999999999999999999W", "before 1970-01-01T00:00:00Z"),
    ("+99999999999h", "after 9999-12-31"),
])
def test_time_out_of_range_is_a_usage_error(text, part):
    r = run_cli(["time", "--", text])
    _named(r, ExitCode.USAGE, "cannot parse time", part)


def test_time_refusals_from_the_parser():
    from mqctl.errors import TimeParseError
    from mqctl.timeparse import parse_time

    with pytest.raises(TimeParseError, match="before 1970"):
        parse_time("1960-01-01#00:00:00:000")
    with pytest.raises(TimeParseError, match="before 1970"):
        parse_time("-2h", now=3_600_000)
    assert parse_time("-1h", now=3_600_000) == 0


def test_time_epoch_zero_and_year_rendering():
    import json

    from mqctl.timeparse import format_ms

    r = run_cli(["time", "1970-01-01T00:00:00Z", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    row = json.loads(r.stdout)["times"][0]
    assert row["epoch_ms"] == 0 and row["utc"] == "1970-01-01T00:00:00.000Z"
    assert format_ms(0, zero_unknown=False) == "1970-01-01T00:00:00.000Z"
    assert format_ms(0) == ""  # RocketMQ's "no timestamp" stays unknown by default
    assert format_ms(None, zero_unknown=False) == ""
    assert format_ms(-62135596800000) == "0001-01-01T00:00:00.000Z"
    assert format_ms(253402300799999) == "9999-12-31T23:59:59.999Z"
    assert format_ms(-1) == "1969-12-31T23:59:59.999Z"


# ------------------------------------------------------------------------------------------
# sim up on a port that cannot be used


def test_sim_up_port_range_beyond_65535():
    r = run_cli(["sim", "up", "--port", "65535"])
    _named(r, ExitCode.USAGE, "--port 65535", "4 consecutive ports (65535-65538)")


def test_sim_up_port_in_use_names_the_port():
    import re
    import socket

    # the port below ours is free when it is picked, but another test's ephemeral socket
    # can take it before the sim binds it: then the error (rightly) names that port, and
    # the test tries again with other ports
    for _attempt in range(5):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        try:
            port = s.getsockname()[1]
            r = run_cli(["sim", "up", "--port", str(port - 1)])
            named = re.search(r"address \('127\.0\.0\.1', (\d+)\)", r.stderr)
            if named and int(named.group(1)) == port - 1:
                continue  # (taken by another process meanwhile)
            _named(r, ExitCode.USAGE, "cannot listen", str(port), "in use")
            return
        finally:
            s.close()
    pytest.fail("the port below an ephemeral one was taken by another process five times")


def test_sim_up_privileged_port(monkeypatch):
    """As root the bind succeeds, so the refusal is simulated at the bind."""
    import errno

    from mqctl.sim import SimCluster

    async def refuse(self):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(SimCluster, "start", refuse)
    r = run_cli(["sim", "up", "--port", "80"])
    line = _named(r, ExitCode.USAGE, "cannot listen", "Permission denied")
    assert "1024" in r.stderr, (line, r.stderr)


# ------------------------------------------------------------------------------------------
# stdout that cannot encode the data


@pytest.mark.parametrize("fmt", ["plain", "table", "csv", "json", "yaml"])
def test_non_ascii_on_an_ascii_stdout(tmp_path, fmt):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("profiles:\n  生产é:\n    namesrv: 127.0.0.1:9876\n", encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    p = subprocess.run([*PY, "--config", str(cfg), "--profile", "生产é", "config", "show",
                        "-o", fmt], capture_output=True, env=env, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode("ascii")  # every byte is ASCII
    if fmt in ("json", "yaml"):  # exact: escaped, not replaced
        import yaml

        assert yaml.safe_load(out)["profile"]["value"] == "生产é"
    else:
        assert "???" in out and "127.0.0.1:9876" in out, out


# ------------------------------------------------------------------------------------------
# peers that are not what -n says


class _Peer(TcpPeer):
    """A peer that answers every connection with ``reply`` (after its first byte)."""

    def __init__(self, reply: bytes, linger: float = 5):
        import asyncio

        async def handle(reader, writer):
            await reader.read(1)
            writer.write(reply)
            await writer.drain()
            await asyncio.sleep(linger)

        super().__init__(handle)


def _frame(header: bytes, declared: int | None = None) -> bytes:
    total = 4 + len(header) if declared is None else declared
    return total.to_bytes(4, "big") + len(header).to_bytes(4, "big") + header


@pytest.mark.parametrize("reply, part", [
    (b"\x7f\xff\xff\xff" + b"\0" * 16, "exceeds the 16777216-byte limit"),
    (_frame(b"{not a json header"), "JSON header cannot be parsed"),
    (b"\x80\0\0\0" + b"\0" * 16, "smaller than 4"),
], ids=["2GB-length", "bad-json-header", "negative-length"])
def test_protocol_errors_from_the_peer_exit_4(reply, part):
    peer = _Peer(reply)
    try:
        t0 = time.monotonic()
        r = run_cli(["-n", peer.addr, "--timeout", "3", "cluster"])
        line = _named(r, ExitCode.PROTOCOL, peer.addr, part)
        assert time.monotonic() - t0 < 3, line  # the error ends the wait, not the timeout
    finally:
        peer.close()


def test_a_peer_that_drops_mid_frame_is_a_connection_error_with_a_hint():
    peer = _Peer(_frame(b'{"code":0}')[:9], linger=0)
    try:
        r = run_cli(["-n", peer.addr, "--timeout", "3", "cluster"])
        _named(r, ExitCode.CONNECTION, peer.addr, "closed by peer while waiting")
    finally:
        peer.close()


def test_tls_record_from_the_peer_suggests_tls():
    # a TLS alert record (content type 21, version 3.3): what a TLS-only server may send
    peer = _Peer(b"\x15\x03\x03\x00\x02\x02\x28")
    try:
        r = run_cli(["-n", peer.addr, "--timeout", "3", "cluster"])
        _named(r, ExitCode.PROTOCOL, peer.addr, "TLS")
        assert "--tls" in r.stderr.split("hint:", 1)[1]
    finally:
        peer.close()


def test_plain_connection_to_the_sims_tls_server_suggests_tls(sim_factory):
    from mqctl.sim import load_scenario
    from mqctl.sim.scenario import TlsSpec

    s = sim_factory(load_scenario("demo", tls=TlsSpec(True)))
    r = run_cli(["-n", s.cluster.namesrv_addr, "--timeout", "3", "cluster"])
    _named(r, ExitCode.CONNECTION, s.cluster.namesrv_addr)
    assert "--tls" in r.stderr.split("hint:", 1)[1], r.stderr
    ok = run_cli(["-n", s.cluster.namesrv_addr, "--tls-ca", s.cluster.tls_cert_file, "cluster"])
    assert ok.exit_code == 0, ok.stderr


def test_namesrv_with_a_scheme_is_a_usage_error():
    r = run_cli(["-n", "http://host:9876", "cluster"])
    line = _named(r, ExitCode.USAGE, "http://host:9876", "drop the scheme")
    assert "-n host:9876" in r.stderr, line
    r = run_cli(["cluster"], env={"NAMESRV_ADDR": "https://10.0.0.1:9876"})
    _named(r, ExitCode.USAGE, "drop the scheme")


def test_namesrv_pointing_at_a_broker_says_so(sim):
    broker = sim.cluster.servers["broker-a"].addr
    for args in (["cluster"], ["route", "TopicPay"], ["group", "progress", "GID_PAY"]):
        r = run_cli(["-n", broker, *args])
        _named(r, ExitCode.USAGE, broker, "looks like a broker, not a name server",
               "REQUEST_CODE_NOT_SUPPORTED (3)")
        assert "9876" in r.stderr.split("hint:", 1)[1]


def test_dns_failure_names_the_host():
    r = run_cli(["-n", "no-such-host.invalid:9876", "--timeout", "5", "cluster"])
    _named(r, ExitCode.CONNECTION, "cannot resolve host 'no-such-host.invalid'")


def test_duration_out_of_range_is_short_and_named():
    from mqctl.errors import TimeParseError
    from mqctl.timeparse import parse_duration_ms

    with pytest.raises(TimeParseError) as ei:
        parse_duration_ms("9" * 400 + "h")
    assert "out of range" in ei.value.message and len(ei.value.message) < 160
    assert ei.value.hint

"""A hostile-input catalogue: cluster data cannot drive the terminal,
and no message contradicts itself.

Escaping: a client id (any application's instanceName), a group name or a group read from a
rollback file holding ESC sequences (CSI colour, OSC title/clipboard), C1 controls, bidi
overrides/isolates or a newline is escaped in every human format (table, plain, notes,
warnings, errors) by the one function :func:`mqctl.render.printable`, kept raw in JSON, YAML
and CSV, and widths are counted after escaping.

Self-contradiction: one reproduction per message that said something the command had just disproved.
Each test failed on the code before its fix (checked by running this file against that tree).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Callable, Iterator

import pytest
import yaml
from conftest import run_cli
from sim_fixtures import running_sim
from tcp_peer import Handler, TcpPeer

from mqctl.errors import ExitCode
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.render import Column, Table, fit_table, printable

# an instanceName that colours the terminal red, sets the window title (OSC 0, BEL), reverses
# what follows (U+202E) and starts a fake row
EVIL_ID = "10.0.0.1@1#\x1b[31mRED\x1b]0;pwned\x07\u202eXX\nFAKE ROW"
# a group (created on the broker by a non-Java client or UPDATE_AND_CREATE_SUBSCRIPTIONGROUP):
# clear screen, OSC 52 (write the clipboard), C1 CSI, a right-to-left isolate, a fake line
EVIL_GROUP = "GID_\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b1m\u2067EVIL\nFAKE GROUP"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2067")

SCENARIO = {
    "name": "hostile", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
    "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "1h"}],
    "groups": [{"name": "G", "orderly": True, "topics": ["T"],
                "consumers": [{"id": EVIL_ID}, {"id": "10.0.0.2@2"}]}],
}


def assert_inert(text: str) -> None:
    """Nothing in ``text`` can drive a terminal, and no line was forged by a newline."""
    assert not [c for c in RAW if c in text], repr(text)
    assert not [ln for ln in text.splitlines() if ln.lstrip().startswith("FAKE")], text


@pytest.fixture(scope="module")
def hostile() -> Iterator[object]:
    from mqctl.sim.broker import GroupConf

    with running_sim(SCENARIO) as s:
        s.cluster.brokers["broker-a"].groups[EVIL_GROUP] = GroupConf(EVIL_GROUP)
        s.advance(30)
        yield s


def ns(sim: object) -> dict[str, str]:
    return {"NAMESRV_ADDR": sim.namesrv_addr}  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------ escaping

def test_printable_escapes_every_terminal_control_and_keeps_text():
    assert printable("plain 中文 Zürich ☃ 🙂") == "plain 中文 Zürich ☃ 🙂"
    assert printable("\x1b[31mred") == "\\x1b[31mred"
    assert printable("t\x1b]0;title\x07") == "t\\x1b]0;title\\x07"
    assert printable("\x9b1m\x7f\x00") == "\\x9b1m\\x7f\\x00"  # C1 CSI, DEL, NUL
    assert printable("a\u202eb\u2066c\u2069\u200f") == "a\\u202eb\\u2066c\\u2069\\u200f"
    assert printable("a\nb\rc\td\u2028") == "a\\nb\\rc\\td\\u2028"
    assert printable("back\\slash") == "back\\slash"  # table cells: as they are
    assert printable("back\\slash", backslash=True) == "back\\\\slash"  # message bodies


CLIENT_VIEWS = [
    ["consumers", "G"],
    ["group", "progress", "G"],
    ["locks", "show", "-g", "G"],
    ["allocate", "-g", "G", "-t", "T"],
    ["allocate", "-g", "G", "-t", "T", "--against-live"],
]


@pytest.mark.parametrize("fmt", ["table", "plain", "wide"])
@pytest.mark.parametrize("cmd", CLIENT_VIEWS, ids=[" ".join(c[:2]) for c in CLIENT_VIEWS])
def test_a_hostile_client_id_is_escaped_in_human_output(hostile, cmd, fmt):
    r = run_cli([*cmd, "-o", fmt], env=ns(hostile))
    assert r.exit_code == 0, r.stderr
    assert_inert(r.stdout + r.stderr)
    assert "\\x1b[31mRED\\x1b]0;pwned\\x07\\u202eXX\\nFAKE ROW" in r.stdout


@pytest.mark.parametrize("fmt", ["table", "plain"])
@pytest.mark.parametrize("cmd", [["groups"], ["groups", "--include-system"]])
def test_a_hostile_group_name_is_escaped_in_groups(hostile, cmd, fmt):
    r = run_cli([*cmd, "-o", fmt], env=ns(hostile))
    assert r.exit_code in (0, 8), r.stderr
    assert_inert(r.stdout + r.stderr)
    assert "GID_\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07\\x9b1m\\u2067EVIL\\nFAKE GROUP" in r.stdout


def test_a_hostile_group_name_is_escaped_in_errors_and_notes(hostile):
    for cmd in (["group", "config", EVIL_GROUP], ["consumers", EVIL_GROUP],
                ["group", "progress", EVIL_GROUP], ["offsets", "show", "-g", EVIL_GROUP]):
        r = run_cli([*cmd, "-o", "plain"], env=ns(hostile))
        assert_inert(r.stdout + r.stderr)
        assert "EVIL" in r.stdout + r.stderr, (cmd, r.stdout, r.stderr)


def test_machine_formats_keep_the_raw_value(hostile):
    r = run_cli(["consumers", "G", "-o", "json"], env=ns(hostile))
    assert EVIL_ID in {c["client_id"] for c in r.json["clients"]}
    r = run_cli(["consumers", "G", "-o", "yaml"], env=ns(hostile))
    assert EVIL_ID in {c["client_id"] for c in yaml.safe_load(r.stdout)["clients"]}
    r = run_cli(["locks", "show", "-g", "G", "-o", "csv"], env=ns(hostile))
    assert EVIL_ID in {row["owner"] for row in csv.DictReader(io.StringIO(r.stdout))}
    r = run_cli(["groups", "--include-system", "-o", "json"], env=ns(hostile))
    assert EVIL_GROUP in {g["group"] for g in r.json["groups"]}


def test_width_is_counted_after_escaping(hostile):
    t = Table([Column("id", "CLIENT ID", kind="id"), Column("n", "N", "right")],
              [{"id": EVIL_ID, "n": 1}, {"id": "10.0.0.2@2", "n": 2}])
    f = fit_table(t, None)
    assert f.widths[0] == len(printable(EVIL_ID))
    assert f.cells[0][0] == printable(EVIL_ID)
    # on the terminal: the next column starts at the same place in both rows
    r = run_cli(["consumers", "G", "-o", "table"], env=ns(hostile))
    lines = r.stdout.splitlines()
    evil = next(ln for ln in lines if "pwned" in ln)
    other = next(ln for ln in lines if ln.startswith("10.0.0.2@2"))
    assert evil.index("10.0.0.1:") == other.index("10.0.0.2:"), r.stdout


@pytest.mark.parametrize("fmt", ["table", "plain", "wide"])
def test_a_header_from_the_cluster_is_escaped(fmt):
    """`group config` has a column per broker, headed by the broker's name."""
    from mqctl.render import Result, emit

    out = io.StringIO()
    t = Table([Column("field", "FIELD"), Column("b", "BROKER\x1b[2J\u202e\nFAKE")],
              [{"field": "retryMaxTimes", "b": 16}], title=EVIL_GROUP)
    emit(Result([t], notes=[f"group {EVIL_GROUP}"]), fmt, out)
    assert_inert(out.getvalue())
    assert "BROKER\\x1b[2J\\u202e\\nFAKE" in out.getvalue()


def _rollback_file(path, group: str) -> None:
    from mqctl.reset.files import ROLLBACK_SCHEMA

    path.write_text(json.dumps({
        "schema": ROLLBACK_SCHEMA, "group": group, "topic": "T", "namesrv": "ns:9876",
        "reason": "shift by -10", "created_ts": 1_700_000_000_000,
        "queues": [{"broker": "broker-a", "queue_id": 0, "offset": 100, "reset_to": 90}]}))


@pytest.mark.parametrize("fmt", ["table", "plain"])
def test_a_group_name_from_a_rollback_file_is_escaped(hostile, tmp_path, fmt):
    f = tmp_path / "evil.json"
    _rollback_file(f, EVIL_GROUP)
    r = run_cli(["offsets", "rollbacks", "--dir", str(tmp_path), "-o", fmt])
    assert r.exit_code == 0, r.stderr
    assert_inert(r.stdout + r.stderr)
    assert "\\u2067EVIL\\nFAKE GROUP" in r.stdout
    raw = run_cli(["offsets", "rollbacks", "--dir", str(tmp_path), "-o", "json"])
    assert raw.json["rollbacks"][0]["group"] == EVIL_GROUP
    # the plan of restoring it, against the cluster: the group appears in the plan or error
    r = run_cli(["offsets", "rollback", str(f), "-o", fmt], env=ns(hostile))
    assert_inert(r.stdout + r.stderr)
    assert "EVIL" in r.stdout + r.stderr


def test_a_broker_remark_is_escaped_in_the_error_line(sim_factory):
    s = sim_factory(SCENARIO)
    s.advance(30)
    for b in ("broker-a", "broker-b"):
        s.call(lambda c, b=b: c.faults.error(b, RequestCode.GET_CONSUMER_LIST_BY_GROUP,
                                             ResponseCode.SYSTEM_ERROR, "\x1b]0;owned\x07\u202e"))
    r = run_cli(["consumers", "G"], env=ns(s))
    assert r.exit_code == ExitCode.BROKER, r.stderr
    assert_inert(r.stderr)
    assert "\\x1b]0;owned\\x07\\u202e" in r.stderr


# -------------------------------------------------------------------- self-contradiction

PARTIAL_VIEWS = [
    ["groups"],
    ["consumers", "GID_PAY"],
    ["group", "progress", "GID_PAY"],
    ["offsets", "show", "-g", "GID_PAY", "-t", "TopicPay"],
    ["topic", "consumers", "TopicPay"],
    ["topic", "status", "TopicPay"],
]


@pytest.fixture
def hung_b(sim):
    """broker-b answers nothing within the 2 s timeout (it takes 8 s); broker-a answers."""
    sim.advance(30)
    sim.call(lambda c: c.faults.latency("broker-b", 8_000))
    return sim


@pytest.mark.parametrize("cmd", [*PARTIAL_VIEWS, ["snapshot", "-g", "GID_PAY"]],
                         ids=lambda c: " ".join(c[:2]))
def test_one_broker_hung_the_hint_says_the_others_answered(hung_b, tmp_path, cmd):
    if cmd[0] == "snapshot":
        cmd = [*cmd, "--out", str(tmp_path)]
    r = run_cli(["--timeout", "2", *cmd], env=ns(hung_b))
    assert r.exit_code == ExitCode.PARTIAL, r.stderr
    hint = r.stderr.split("\nhint: ", 1)[1]
    assert "no broker could be reached" not in hint
    assert "did not answer in time while the others answered" in hint, hint
    if cmd[0] == "snapshot":
        assert str(next(tmp_path.rglob("*.jsonl.gz"))) in hint  # the file that holds the rest


def test_one_broker_down_the_hint_says_the_others_answered(sim):
    sim.advance(30)
    sim.call(lambda c: c.faults.broker_down("broker-b"))
    sim.advance(0.1)
    r = run_cli(["--timeout", "1", "group", "progress", "GID_PAY"], env=ns(sim))
    assert r.exit_code == ExitCode.PARTIAL, r.stderr
    assert "no broker could be reached" not in r.stderr
    assert "could not be reached while the others answered" in r.stderr


def test_snapshot_of_an_unknown_group_exits_2_like_group_progress(sim, tmp_path):
    sim.advance(30)
    gp = run_cli(["group", "progress", "GID_TYPO"], env=ns(sim))
    r = run_cli(["snapshot", "-g", "GID_TYPO", "--out", str(tmp_path)], env=ns(sim))
    assert gp.exit_code == r.exit_code == ExitCode.USAGE, r.stderr
    assert r.stdout == "" and not list(tmp_path.rglob("*.jsonl*"))
    assert "GID_TYPO" in r.stderr and "not known to any broker" in r.stderr
    assert "the file holds" not in r.stderr and "no file was written" in r.stderr
    # with a group that exists: that one is captured, the unknown one is still exit 2
    r = run_cli(["snapshot", "-g", "GID_TYPO", "-g", "GID_PAY", "--out", str(tmp_path),
                 "-o", "json"], env=ns(sim))
    assert r.exit_code == ExitCode.USAGE, r.stderr
    path = r.json["file"]
    assert path and f"the file {path} holds the rest of the capture" in r.stderr


def test_empty_queues_is_a_usage_error_not_the_route(sim):
    for spec in ("", ",", " , "):
        r = run_cli(["offsets", "reset", "-g", "GID_REPLAY", "-t", "TopicPay", "--to-latest",
                     "--queues", spec], env=ns(sim))
        assert r.exit_code == ExitCode.USAGE, r.stderr
        assert f"--queues {spec!r} names no queue" in r.stderr
        assert "readable" not in r.stderr and "route" not in r.stderr


def test_sim_up_names_an_unusable_log_dir_not_the_port(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    r = run_cli(["sim", "up", "--port", "0", "--log-dir", str(blocker / "logs")])
    assert r.exit_code == ExitCode.USAGE, r.stderr
    line = next(ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:"))
    assert "log directory (--log-dir)" in line and str(blocker / "logs") in line
    assert "listen" not in r.stderr and "--port" not in r.stderr.split("hint:", 1)[1]


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()


async def _silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while await reader.read(65536):
        pass


@pytest.fixture
def server() -> Iterator[Callable[[Handler], TcpPeer]]:
    """Peers on ephemeral ports: an echo service, one that never answers."""
    started: list[TcpPeer] = []

    def make(handle: Handler) -> TcpPeer:
        started.append(TcpPeer(handle))
        return started[-1]

    yield make
    for s in started:
        s.close()


def test_an_echo_server_as_name_server_is_not_called_a_broker(server):
    echo = server(_echo)
    for cmd in (["cluster"], ["group", "progress", "G"]):
        r = run_cli(["-n", echo.addr, "--timeout", "3", *cmd])
        assert r.exit_code == ExitCode.PROTOCOL, r.stderr
        assert "looks like a broker" not in r.stderr
        assert "not a RocketMQ name server or broker" in r.stderr and echo.addr in r.stderr


def test_tls_against_a_plain_server_gives_the_reason(sim):
    for flags, env in ((["--tls-insecure"], {}), ([], {"MQCTL_TLS_INSECURE": "1"})):
        r = run_cli(["-n", sim.namesrv_addr, *flags, "--timeout", "3", "cluster"], env=env)
        assert r.exit_code == ExitCode.CONNECTION, r.stderr
        line = next(ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:"))
        assert not line.rstrip().endswith(":"), line  # a reason, never empty
        assert "TLS handshake" in line and "does not speak TLS" in line
        assert "--tls" in r.stderr.split("hint:", 1)[1]


def test_a_timed_out_name_server_gets_a_name_server_hint(server):
    quiet = server(_silent)
    r = run_cli(["-n", quiet.addr, "--timeout", "0.3", "cluster"])
    assert r.exit_code == ExitCode.CONNECTION, r.stderr
    hint = r.stderr.split("hint:", 1)[1]
    assert "broker" not in hint and f"the name server {quiet.addr}" in hint


def test_config_show_names_each_acl_and_tls_fields_source(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("current_profile: p\nprofiles:\n  p:\n    tls: {ca_file: /no/ca.pem}\n"
                   "    acl: {access_key: prof-ak, secret_key: prof-sk}\n")
    cfg.chmod(0o600)
    r = run_cli(["--config", str(cfg), "--access-key", "flag-ak", "--tls-insecure", "config",
                 "show", "-o", "json"], env={"MQCTL_SECURITY_TOKEN": "tok-9f2e"})
    assert r.exit_code == 0, r.stderr
    src = {k: v["source"] for k, v in r.json.items()}
    assert src["acl.access_key"] == "flag"
    assert src["acl.secret_key"] == "profile p"  # a secret never comes from a flag
    assert src["acl.security_token"] == "env MQCTL_SECURITY_TOKEN"
    assert src["tls.ca_file"] == "profile p" and src["tls.insecure"] == "flag"
    assert "tok-9f2e" not in r.stdout and "prof-sk" not in r.stdout


def test_config_show_shows_the_effective_confirm_above():
    from mqctl.reset.guards import DEFAULT_CONFIRM_ABOVE

    r = run_cli(["config", "show", "-o", "json"])
    assert r.json["confirm_above"]["value"] == DEFAULT_CONFIRM_ABOVE == 10_000
    assert r.json["confirm_above"]["source"] == "default"


@pytest.mark.parametrize("args, part", [
    (["-o", "TABLE", "config", "show"], "'TABLE' is not one of 'table'"),
    (["groups", "--sort", "SIZE"], "'SIZE' is not one of"),
    (["--timeout", "config", "show"], "'config' is not a number (is the value missing?"),
    (["--timeout", "abc", "config", "show"], "'abc' is not a number"),
    (["offsets", "reset", "-g", "G", "-t", "T", "--to-offset", "1.5"],
     "'1.5' is not a whole number"),
    (["groups", "--watch", "-1"], "'--watch' / '-w': must be 0.1 or more, not -1"),
    (["groups", "--lag-threshold", "0"], "must be 1 or more, not 0"),
])
def test_option_errors_are_in_mqctls_words(args, part):
    r = run_cli(args)
    assert r.exit_code == ExitCode.USAGE, r.stderr
    line = next(ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:"))
    assert part in line, line
    for leak in ("Value error", "Input should be", "No such option: -1", "unable to parse"):
        assert leak not in r.stderr

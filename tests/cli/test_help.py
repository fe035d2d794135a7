"""Help texts, and global options after the command."""

from __future__ import annotations

import re

import pytest
from typer.main import get_command

from mqctl.cli.app import COMMAND_ORDER, app, arrange_args

TYPE_METAVAR = re.compile(r"<(?:list\[)?(?:str|int|float|path|int range|float range)")


def all_paths() -> list[list[str]]:
    root = get_command(app)
    out: list[list[str]] = [[]]

    def walk(cmd, path):
        for name, sub in getattr(cmd, "commands", {}).items():
            out.append([*path, name])
            walk(sub, [*path, name])

    walk(root, [])
    return out


@pytest.mark.parametrize("path", all_paths(), ids=lambda p: " ".join(p) or "mqctl")
def test_help_shows_no_python_types(cli, path):
    r = cli([*path, "--help"])
    assert r.exit_code == 0, r.stderr
    assert not TYPE_METAVAR.search(r.stdout), r.stdout
    assert "<str>" not in r.stdout and "<list[" not in r.stdout


def test_metavars_name_what_they_take(cli):
    text = cli(["group", "progress", "--help"]).stdout
    assert "Usage: mqctl group progress [OPTIONS] [GROUP]" in text
    assert "-g, --group GROUP" in text
    assert "--sort {queue|lag|time-lag|owner}" in text
    assert "-o, --output {table|" in text
    text = cli(["time", "--help"]).stdout
    assert "Usage: mqctl time [OPTIONS] TIME..." in text
    text = cli(["offsets", "reset", "--help"]).stdout
    assert "--to-time TIME" in text and "--rollback-file FILE" in text
    assert "--by-duration DURATION" in text
    text = cli(["--help"]).stdout
    assert "--tz ZONE" in text and "--config FILE" in text and "--timeout SECONDS" in text


def test_no_arguments_prints_the_help_and_exits_0(cli):
    r = cli([])
    assert r.exit_code == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: mqctl [OPTIONS] COMMAND [ARGS]...")
    r = cli(["locks"])
    assert r.exit_code == 0 and "Usage: mqctl locks [OPTIONS] COMMAND" in r.stdout
    assert "error" not in r.stderr


def test_commands_are_listed_read_only_views_first(cli):
    text = cli(["--help"]).stdout
    listed = re.findall(r"^  (\w+)\s", text.split("Commands:")[1], re.M)
    known = [c for c in listed if c in COMMAND_ORDER]
    assert known == [c for c in COMMAND_ORDER if c in listed]
    assert listed[:4] == ["cluster", "topics", "route", "consumers"]
    assert listed.index("locks") < listed.index("snapshot") < listed.index("sim")
    assert listed[-1] == "demo"


@pytest.mark.parametrize("args, expected", [
    (["snapshot", "--out", "x", "-q"], ["-q", "snapshot", "--out", "x"]),
    (["group", "progress", "G", "--timeout", "5", "--debug"],
     ["--timeout", "5", "--debug", "group", "progress", "G"]),
    (["time", "-2h", "--tz=UTC"], ["--tz=UTC", "time", "-2h"]),
    (["-n", "h:1", "locks", "show", "G", "--tz", "Asia/Shanghai"],
     ["--tz", "Asia/Shanghai", "-n", "h:1", "locks", "show", "G"]),
    # a subcommand's own option of the same name stays its own: message show -q QUEUE_ID,
    # lag report --tz (the zone of its inputs)
    (["message", "show", "-t", "T", "-b", "b", "-q", "0", "--offset", "1"], None),
    (["lag", "report", "in", "--out", "o", "--tz", "UTC"], None),
    # after --, nothing moves; an option's value is not taken for an option
    (["time", "--", "-q"], None),
    (["topics", "--match", "-q"], None),
])
def test_global_options_after_the_command_move_to_the_front(args, expected):
    root = get_command(app)
    ctx = root.make_context("mqctl", ["--help"], resilient_parsing=True)
    assert arrange_args(root, ctx, list(args)) == (expected or args)


def test_global_options_after_the_command_take_effect(cli):
    r = cli(["time", "2024-06-01T00:00:00Z", "-o", "json", "--tz", "+08:00"])
    assert r.exit_code == 0, r.stderr
    assert r.json["times"][0]["local"] == "2024-06-01 08:00:00 +08:00"
    r = cli(["time", "30m", "-o", "json", "-q"])
    assert r.exit_code == 0, r.stderr
    r = cli(["-n", "127.0.0.1:1", "cluster", "--timeout", "0"])
    assert r.exit_code == 2 and "timeout (flag): 0.0 is out of range" in r.stderr


def test_config_show_notes(cli, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("current_profile: p\nprofiles:\n  p:\n    version: 373\n"
                   f"    tls: {{enabled: true, ca_file: {tmp_path / 'missing-ca.pem'}}}\n")
    r = cli(["--config", str(cfg), "config", "show", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["version"] == {"value": 373, "source": "profile p",
                            "note": "V4_8_0: the RocketMQ version requests announce"}
    assert d["tls.ca_file"]["note"] == "FILE NOT FOUND"
    assert d["output"] == {"value": "auto", "source": "default",
                           "note": "auto (table on a terminal, else plain)"}
    assert d["tls.enabled"]["value"] is True and d["concurrency"]["value"] == 16
    assert d["acl.secret_key"]["value"] is None
    r = cli(["config", "show"], env={"NAMESRV_ADDR": ""})
    assert r.exit_code == 2 and "NAMESRV_ADDR is set but empty" in r.stderr
    r = cli(["config", "show", "-o", "json"],
            env={"NAMESRV_ADDR": "10.0.0.2:9876", "MQCTL_NAMESRV": "10.0.0.1:9876"})
    assert r.json["namesrv"] == {"value": "10.0.0.1:9876", "source": "env MQCTL_NAMESRV"}


def test_wire_decode_names_the_version(cli):
    from conftest import SAMPLES

    path = SAMPLES / "wire" / "newlife_json_request_HEART_BEAT.hex"
    r = cli(["wire", "decode", str(path), "-o", "plain"])
    assert r.exit_code == 0, r.stderr
    assert re.search(r"^version\s+373 \(V4_8_0\)$", r.stdout, re.M)
    r = cli(["wire", "decode", str(path), "-o", "json"])
    assert r.json["version"] == 373 and r.json["versionName"] == "V4_8_0"

"""Every command's `-o csv` loads: ONE table (one header row, every row as wide as it), and
its number columns hold numbers only.

CASES lists one invocation per command, after its setup (``["@advance", "150"]``: simulated
seconds; placeholders: {ns} the simulated name server, {tmp} a
temporary directory, {samples} tests/samples). A command the app has and CASES does not name
fails test_every_command_has_a_csv_case: add its invocation here (or to SKIPPED, with why).
The Result each run printed is caught at the renderer, so the number columns checked are the
ones the command declares (Column.role == "number"), not a list kept here.
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import pytest
from conftest import SAMPLES, run_cli

from mqctl import render

REPLAY = ["-g", "GID_REPLAY", "-t", "TopicPay", "--by-duration", "-30m"]
# command path -> (setup invocations, the invocation whose CSV is loaded)
CASES: dict[str, tuple[list[list[str]], list[str]]] = {
    "cluster": ([], ["cluster"]),
    "topics": ([], ["topics", "--kind", "all"]),
    "route": ([], ["route", "TopicPay"]),
    "consumers": ([], ["consumers", "GID_MIXED"]),
    "diagnose": ([], ["diagnose", "GID_PAY"]),
    "group progress": ([], ["group", "progress", "GID_AUDIT"]),
    "group config show": ([], ["group", "config", "show", "GID_PAY"]),
    "group config set": ([], ["group", "config", "set", "GID_PAY", "retryMaxTimes=5"]),
    "group config rollback": ([["group", "config", "set", "GID_PAY", "retryMaxTimes=5",
                                "--execute", "--yes", "--undo-file", "{tmp}/undo.json"]],
                              ["group", "config", "rollback", "{tmp}/undo.json"]),
    "group pause": ([], ["group", "pause", "GID_PAY"]),
    "group resume": ([], ["group", "resume", "GID_PAY"]),
    "offsets clone": ([], ["offsets", "clone", "--from", "GID_PAY", "--to", "GID_REPLAY",
                           "-t", "TopicPay"]),
    "groups": ([], ["groups"]),
    "topic status": ([], ["topic", "status", "TopicPay"]),
    "topic consumers": ([], ["topic", "consumers", "TopicPay"]),
    "message show": ([], ["message", "show", "-t", "TopicPay", "-b", "broker-a", "-q", "0",
                          "--offset", "10"]),
    "message find": ([], ["message", "find", "-t", "TopicPay", "--key",
                          "TopicPay-broker-a-0-10"]),
    "message track": ([], ["message", "track", "-t", "TopicPay", "--key",
                           "TopicPay-broker-a-0-10"]),
    "group dlq show": ([], ["group", "dlq", "GID_PAY"]),
    "group dlq resend": ([], ["group", "dlq", "resend", "GID_PAY", "--all"]),
    "locks show": ([], ["locks", "show", "--group", "GID_ORDER"]),
    "locks release": ([["@advance", "150"]], ["locks", "release", "--group", "GID_ORDER", "--queue",
                           "broker-b:2", "--client", "10.0.3.33@4303#demo09"]),
    "allocate": ([], ["allocate", "-g", "GID_PAY", "-t", "TopicPay", "--add-consumer",
                      "10.0.1.99@99"]),
    "offsets show": ([], ["offsets", "show", "-g", "GID_PAY"]),
    "offsets reset": ([], ["offsets", "reset", *REPLAY]),
    "offsets rollback": ([["offsets", "reset", *REPLAY, "--execute", "--rollback-file",
                           "{tmp}/rb.json"]], ["offsets", "rollback", "{tmp}/rb.json"]),
    "offsets rollbacks": ([["offsets", "reset", *REPLAY, "--execute", "--rollback-file",
                            "{tmp}/rb.json"]], ["offsets", "rollbacks"]),
    "snapshot": ([], ["snapshot", "--out", "{tmp}/snaps", "--all-groups"]),
    "lag prune": ([["snapshot", "--out", "{tmp}/snaps", "--all-groups"]],
                  ["lag", "prune", "--snapshots", "{tmp}/snaps", "--keep", "30d"]),
    "time": ([], ["time", "now", "-2h", "2024-06-01T10:00:00Z"]),
    "config show": ([], ["config", "show"]),
    "config profiles": ([], ["config", "profiles"]),
    "sim scenarios": ([], ["sim", "scenarios"]),
    "wire decode": ([], ["wire", "decode", "{samples}/wire/newlife_json_request_HEART_BEAT.hex"]),
}
# more invocations of one command (other tables, other inputs)
EXTRA: dict[str, tuple[list[list[str]], list[str]]] = {
    "allocate offline": ([], ["allocate", "--strategy", "avg", "--queues",
                              "broker-a:8,broker-b:8", "--consumers", "3"]),
    "allocate by queue": ([], ["allocate", "-g", "GID_PAY", "-t", "TopicPay",
                               "--add-consumer", "10.0.1.99@99", "--by-queue"]),
    "allocate counts": ([], ["allocate", "-g", "GID_PAY", "-t", "TopicPay", "--add-consumer",
                             "10.0.1.99@99", "--table", "counts"]),
    "allocate against live": ([], ["allocate", "-g", "GID_MIXED", "-t", "TopicMixed",
                                   "--against-live"]),
    "allocate strategies": ([], ["allocate", "--list-strategies"]),
    "group progress topics": ([], ["group", "progress", "GID_AUDIT", "--table", "topics"]),
    "locks show clients": ([], ["--table", "clients", "locks", "show", "--group",
                                "GID_ORDER"]),
    "consumers findings": ([], ["consumers", "GID_MIXED", "--table", "findings"]),
    "diagnose checks": ([], ["diagnose", "GID_PAY", "--table", "checks"]),
    "wire decode body": ([], ["wire", "decode",
                              "{samples}/bodies/topic_stats_table.fastjson.rocketmq-rust-"
                              "test.json"]),
    "wire decode frame with ext fields": ([], ["wire", "decode", "{samples}/wire/newlife_"
                                               "rocketmq_response_extfields.hex"]),
}
SKIPPED = {
    "lag report": "Spark (a session start per run); its CSV is summary.csv, a file "
                  "(tests/lagjob/test_job.py)",
    "demo": "runs the Spark report over hours of simulated time",
    "completion": "prints a shell script (tests/cli/test_completion_scripts.py)",
    "lag job-path": "prints a path (tests/test_wheel.py)",
    "sim up": "runs a cluster in the foreground until Ctrl-C",
    "exporter": "a long-running HTTP server: its output is /metrics (tests/exporter)",
}


def leaf_commands() -> list[str]:
    import typer.main

    from mqctl.cli import app

    out: list[str] = []

    def walk(cmd: Any, path: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
        else:
            out.append(" ".join(path))

    walk(typer.main.get_command(app), [])
    return sorted(out)


def test_every_command_has_a_csv_case():
    missing = [c for c in leaf_commands() if c not in CASES and c not in SKIPPED]
    assert missing == [], f"add an -o csv invocation to tests/cli/test_csv_output.py for {missing}"


def _fill(args: list[str], sim: Any, tmp: Any) -> list[str]:
    return [a.format(ns=sim.namesrv_addr, tmp=tmp, samples=SAMPLES) for a in args]


def _number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def run_csv(sim: Any, tmp: Any, monkeypatch: Any, setup: list[list[str]], args: list[str]
            ) -> tuple[Any, list[render.Table]]:
    for s in setup:
        if s[0] == "@advance":  # simulated seconds (demo09 crashes 2 minutes in)
            sim.advance(float(s[1]))
            continue
        r = run_cli(["-n", sim.namesrv_addr, *_fill(s, sim, tmp)])
        assert r.exit_code == 0, (s, r.stderr)
    printed: list[list[render.Table]] = []
    real = render.select_tables

    def spy(result: render.Result, name: str | None, fmt: str) -> list[render.Table]:
        tables = real(result, name, fmt)
        printed.append(tables)
        return tables

    monkeypatch.setattr(render, "select_tables", spy)
    r = run_cli(["-n", sim.namesrv_addr, *_fill(args, sim, tmp), "-o", "csv"])
    monkeypatch.setattr(render, "select_tables", real)
    assert r.exit_code == 0, r.stderr
    assert len(printed) == 1, "one result per run"
    return r, printed[0]


@pytest.mark.parametrize("case", sorted(CASES) + sorted(EXTRA))
def test_csv_loads_as_one_table(case, sim, tmp_path, monkeypatch):
    setup, args = CASES.get(case) or EXTRA[case]
    if case in CASES and case not in leaf_commands():
        pytest.skip(f"{case}: not a command of this build")
    r, tables = run_csv(sim, tmp_path, monkeypatch, setup, args)
    assert len(tables) == 1, f"-o csv printed {len(tables)} tables"
    table = tables[0]
    records = list(csv.reader(io.StringIO(r.stdout)))
    header = [c.csv_key for c in table.columns]
    assert records and records[0] == header
    body = records[1:]
    assert len(body) == len(table.rows)
    # one header only: no blank line (a second table) and every row as wide as the header
    assert all(len(row) == len(header) for row in body), [row for row in body
                                                          if len(row) != len(header)]
    numeric = [i for i, c in enumerate(table.columns) if c.role == "number"]
    for row in body:
        for i in numeric:
            assert row[i] == "" or _number(row[i]), (header[i], row[i])
    # the rows are the command's: the CSV holds what the renderer was given, cell by cell
    for row, src in zip(body, table.rows, strict=True):
        for i, c in enumerate(table.columns):
            v = src.get(c.csv_key)
            if i in numeric and v is not None and not isinstance(v, str):
                assert float(row[i]) == pytest.approx(float(v)), (header[i], row[i], v)


def test_allocate_counts_are_plain_signed_numbers(sim, tmp_path, monkeypatch):
    r, _ = run_csv(sim, tmp_path, monkeypatch, [], EXTRA["allocate counts"][1])
    rows = {x["consumer"]: x for x in csv.DictReader(io.StringIO(r.stdout))}
    new = rows["10.0.1.99@99"]
    # unknown before (a consumer that does not exist yet) is empty, never "-" or 0
    assert new["before"] == "" and int(new["after"]) == int(new["delta"]) > 0
    for x in rows.values():
        if x["before"] and x["after"]:
            assert int(x["delta"]) == int(x["after"]) - int(x["before"])
    assert sum(int(x["delta"]) for x in rows.values() if x["after"] and x["before"]) \
        == -int(new["after"])


def test_bad_table_name_lists_the_choices(sim, cli):
    r = cli(["-n", sim.namesrv_addr, "group", "progress", "GID_AUDIT", "-o", "csv",
             "--table", "nope"])
    assert r.exit_code == 2 and r.stdout == ""
    assert "mqctl: error: --table 'nope'" in r.stderr
    assert "hint: choose one of: queues (default), topics" in r.stderr


def test_table_picks_the_table_in_every_format(sim, cli):
    base = ["-n", sim.namesrv_addr, "group", "progress", "GID_AUDIT", "--table", "topics"]
    j = cli([*base, "-o", "json"]).json["topics"]
    assert j and all(set(t) >= {"topic", "lag", "queues"} for t in j)
    plain = cli([*base, "-o", "plain"]).stdout
    assert "# per topic" in plain and "# progress of" not in plain
    rows = list(csv.DictReader(io.StringIO(cli([*base, "-o", "csv"]).stdout)))
    assert {x["topic"]: int(x["lag"]) for x in rows} == {t["topic"]: t["lag"] for t in j}


def test_quiet_prints_nothing_but_errors(sim, cli):
    ok = cli(["-q", "-n", sim.namesrv_addr, "group", "progress", "GID_AUDIT"])
    assert ok.exit_code == 0 and ok.stdout == "" and ok.stderr == ""
    after = cli(["-n", sim.namesrv_addr, "group", "progress", "GID_AUDIT", "-o", "csv", "-q"])
    assert after.exit_code == 0 and after.stdout == ""
    bad = cli(["-q", "-n", sim.namesrv_addr, "group", "progress", "GID_NOPE"])
    assert bad.exit_code != 0 and bad.stdout == "" and "mqctl: error:" in bad.stderr


def test_quiet_silences_warnings(sim, cli, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("current_profile: p\nprofiles:\n  p:\n    acl: {access_key: ak, "
                   "secret_key: sk}\n")
    cfg.chmod(0o644)  # a secret readable by others: a warning on every run
    loud = cli(["--config", str(cfg), "-n", sim.namesrv_addr, "topics"])
    assert loud.exit_code == 0 and "mqctl: warning: config file" in loud.stderr
    quiet = cli(["--config", str(cfg), "-n", sim.namesrv_addr, "topics", "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""


def test_wire_body_and_frame_keep_their_body(cli):
    body = cli(["wire", "decode", str(SAMPLES / "bodies" / "reset_offset_body.fastjson."
                                       "rocketmq-client-go-test.json"), "-o", "csv"])
    assert body.exit_code == 0, body.stderr
    rows = list(csv.DictReader(io.StringIO(body.stdout)))
    j = cli(["wire", "decode", str(SAMPLES / "bodies" / "reset_offset_body.fastjson."
                                    "rocketmq-client-go-test.json"), "-o", "json"]).json
    assert {x["path"]: int(x["value"]) for x in rows} == {
        f"offsetTable.{k}": v for k, v in j["body"]["offsetTable"].items()}
    frame = cli(["wire", "decode", str(SAMPLES / "wire" / "newlife_json_request_HEART_BEAT.hex"),
                 "-o", "csv"])
    fields = {x["field"]: x["value"] for x in csv.DictReader(io.StringIO(frame.stdout))}
    fj = cli(["wire", "decode", str(SAMPLES / "wire" / "newlife_json_request_HEART_BEAT.hex"),
              "-o", "json"]).json
    assert fields["codeName"] == "HEART_BEAT"
    assert fields["body.ClientID"] == fj["body"]["ClientID"]
    assert [fields[f"body.ProducerDataSet[{i}].GroupName"]
            for i in range(len(fj["body"]["ProducerDataSet"]))] == [
        p["GroupName"] for p in fj["body"]["ProducerDataSet"]]

"""Every path a command is given goes through one check (``mqctl.fsutil.PathRule`` /
``path_error``), declared on the parameter (``mqctl.cli.common.PathParser``).

* The command tree is walked: a parameter that names a file or a directory (its metavar, its
  name or its help says so) must be declared through the mechanism, with the direction its
  name implies; the few that only look like paths are listed with the reason.
* Every declared path parameter of every command is run in-process through the CLI with
  hostile paths (a name too long for the file system, a path longer than PATH_MAX, a NUL
  byte, a symlink as the final component of an output, a dangling link, a link loop, a FIFO,
  a device, a directory for a file, a file for a directory, a regular file above it): exit
  2, one error line, a hint, no traceback, and what was there is left as it was.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

# ------------------------------------------------------------------------------ the walk


def _tree() -> Any:
    from typer.main import get_command

    from mqctl.cli.app import _set_metavars, app

    root = get_command(app)
    _set_metavars(root, set())  # (what the first parse sets: FILE, DIR, ...)
    return root


def walk(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for p in cmd.params:
        yield path, p
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from walk(sub, (*path, name))


def rule_of(param: Any) -> Any:
    from mqctl.cli.common import PathParser
    from mqctl.cli.typer_compat import param_parser

    parser = param_parser(param)
    return parser.rule if isinstance(parser, PathParser) else None


PATHY_HELP = re.compile(r"\b(file|files|directory|dir|path|folder)\b", re.IGNORECASE)
PATHY_NAME = re.compile(r"(file|dir|directory|path)$|^(out|config|topology|previous|scenario|"
                        r"inputs|state|snapshots|export|tls_ca|log)$")
PATHY_METAVAR = ("FILE", "DIR", "DIRECTORY", "NAME|FILE", "INPUT")

# parameters whose name or help mentions a file or directory, and that are not a path
NOT_PATHS = {
    ("", "profile"): "a profile's name (inside the config file)",
    ("", "access_key"): "an ACL access key (the help names the credentials file)",
    ("snapshot", "compress"): "a choice: gzip or none (the capture file's format)",
    ("snapshot", "keep"): "a duration (capture files older than it are deleted)",
    ("lag prune", "keep"): "a duration (partitions older than it are deleted)",
    ("lag report", "tz"): "a time zone (of timestamps in paths)",
    ("lag report", "cluster"): "a cluster name (for inputs that carry none)",
    ("offsets reset", "verify_wait"): "seconds (the help names the rollback file)",
    ("offsets rollback", "verify_wait"): "seconds",
}

# what each written path is (the rest are read)
OUTPUTS = {("snapshot", "out"), ("demo", "out"), ("locks show", "state_dir"),
           ("locks release", "state_dir"), ("lag report", "out"), ("lag report", "prom_file"),
           ("lag report", "state"), ("sim up", "log_dir"), ("offsets reset", "export"),
           ("offsets reset", "rollback_file"), ("group pause", "undo_file"),
           ("group resume", "undo_file"), ("group config set", "undo_file"),
           ("group config rollback", "undo_file"), ("offsets clone", "rollback_file"),
           ("message find", "body"), ("group dlq resend", "journal")}


def path_params() -> list[tuple[str, Any, Any]]:
    out = []
    for path, p in walk(_tree()):
        rule = rule_of(p)
        if rule is not None:
            out.append((" ".join(path), p, rule))
    return out


def test_every_path_parameter_is_declared_through_the_path_rule():
    missing, wrong, stale = [], [], set(NOT_PATHS)
    for path, p in walk(_tree()):
        if getattr(p, "is_flag", False) or getattr(p, "count", False):
            continue
        key = (" ".join(path), p.name)
        looks = (p.metavar in PATHY_METAVAR or bool(PATHY_HELP.search(p.help or ""))
                 or bool(PATHY_NAME.search(p.name or "")))
        rule = rule_of(p)
        if key in NOT_PATHS:
            stale.discard(key)
            assert rule is None, f"{key} is declared a path but listed in NOT_PATHS"
            continue
        if looks and rule is None:
            missing.append(key)
        if rule is not None and rule.output != (key in OUTPUTS):
            wrong.append((key, rule.role))
    assert not missing, f"path parameters not declared through PathParser: {missing}"
    assert not wrong, f"path parameters declared in the wrong direction: {wrong}"
    assert not stale, f"NOT_PATHS entries that no longer exist: {sorted(stale)}"


def test_the_walk_finds_the_path_parameters_of_every_kind():
    found = {(c, p.name): r.role for c, p, r in path_params()}
    assert found[("", "config")] == "input file"
    assert found[("lag report", "prom_file")] == "output file"
    assert found[("offsets rollback", "file")] == "input file"
    assert found[("sim up", "log_dir")] == "output directory"
    assert found[("diagnose", "state_dir")] == "input directory"
    assert len(found) >= 22


# ------------------------------------------------------------------------------ hostile paths

# a command line reaching each command's parser with everything else valid ({v}: the value)
BASE = {
    "": ["time", "now"],
    "snapshot": ["snapshot", "-g", "G", "--out", "{out}"],
    "allocate": ["allocate", "--queues", "b:4", "--consumers", "2"],
    "demo": ["demo", "--hours", "0.1"],
    "diagnose": ["diagnose", "G"],
    "wire decode": ["wire", "decode", "{in}"],
    "group progress": ["group", "progress", "G"],
    "locks show": ["locks", "show", "G"],
    "locks release": ["locks", "release", "G", "--queue", "b:0"],
    "lag report": ["lag", "report", "{in}", "--out", "{out}"],
    "lag prune": ["lag", "prune", "--keep", "1d", "--out", "{out}"],
    "sim up": ["sim", "up", "--port", "0"],
    "offsets reset": ["offsets", "reset", "G", "-t", "T", "--to-latest"],
    "offsets rollback": ["offsets", "rollback", "{in}"],
    "offsets rollbacks": ["offsets", "rollbacks"],
    "group pause": ["group", "pause", "G"],
    "group resume": ["group", "resume", "G"],
    "group config set": ["group", "config", "set", "G", "retryMaxTimes=3"],
    "group config rollback": ["group", "config", "rollback", "{in}"],
    "offsets clone": ["offsets", "clone", "--from", "A", "--to", "B", "-t", "T"],
    "message find": ["message", "find", "--msg-id", "0" * 32],
    "group dlq resend": ["group", "dlq", "resend", "G", "--all"],
}


def command_line(cmd: str, param: Any, value: str, tmp: Path) -> list[str]:
    assert cmd in BASE, f"add a command line for `mqctl {cmd}` to BASE"
    good_in = tmp / "good.yaml"
    good_in.write_text("x: 1\n")
    (tmp / "good-out").mkdir(exist_ok=True)
    base = [a.replace("{out}", str(tmp / "good-out")).replace("{in}", str(good_in))
            for a in BASE[cmd]]
    if param.param_type_name == "argument":
        # the argument's slot in the base line: the value given for it there
        slot = str(good_in) if str(good_in) in base else None
        if slot is None:
            return [*base, value]
        return [value if a == slot else a for a in base]
    opt = param.opts[0]
    if opt in base:
        i = base.index(opt)
        return [*base[:i + 1], value, *base[i + 2:]]
    if cmd == "":
        return [opt, value, *base]
    return [*base, opt, value]


def make(kind: str, tmp: Path) -> tuple[str, Path | None]:
    """A hostile path of ``kind`` under ``tmp``: (the value to give, what must stay there)."""
    if kind == "name-too-long":
        return str(tmp / ("n" * 300)), None
    if kind == "path-too-long":
        return str(tmp / "/".join(["d" * 200] * 25)), None
    if kind == "nul-byte":
        return str(tmp / "a\0b"), None
    if kind == "symlink-to-file":
        (tmp / "real.txt").write_text("keep me\n")
        (tmp / "link").symlink_to(tmp / "real.txt")
        return str(tmp / "link"), tmp / "real.txt"
    if kind == "dangling-link":
        (tmp / "link").symlink_to(tmp / "nowhere" / "x")
        return str(tmp / "link"), tmp / "link"
    if kind == "link-loop":
        (tmp / "a").symlink_to("b")
        (tmp / "b").symlink_to("a")
        return str(tmp / "a"), tmp / "a"
    if kind == "fifo":
        os.mkfifo(tmp / "fifo")
        return str(tmp / "fifo"), tmp / "fifo"
    if kind == "dev-null":
        return "/dev/null", Path("/dev/null")
    if kind == "directory":
        (tmp / "dir").mkdir()
        return str(tmp / "dir"), tmp / "dir"
    if kind == "regular-file":
        (tmp / "file").write_text("keep me\n")
        return str(tmp / "file"), tmp / "file"
    if kind == "under-a-file":
        (tmp / "file").write_text("keep me\n")
        return str(tmp / "file" / "x"), tmp / "file"
    raise AssertionError(kind)


def expected_refusal(rule: Any, kind: str) -> bool:
    """Whether ``kind`` is refused for ``rule`` (exit 2), else it is not hostile for it (a
    link to a file one reads, a directory where one is wanted, ...) and is not run."""
    if kind in ("name-too-long", "path-too-long", "nul-byte"):
        return True
    if rule.directory is None:  # the lag report's inputs: its listing quarantines the rest
        return False
    if kind in ("dangling-link", "link-loop", "under-a-file"):
        return True
    if kind == "symlink-to-file":  # a link to a file: refused where it would be written
        return rule.output or bool(rule.directory)
    if kind in ("fifo", "dev-null"):
        return not rule.stream  # (wire decode reads FIFOs and devices on purpose)
    if kind == "directory":
        return not rule.directory
    if kind == "regular-file":
        return bool(rule.directory)
    raise AssertionError(kind)


KINDS = ["name-too-long", "path-too-long", "nul-byte", "symlink-to-file", "dangling-link",
         "link-loop", "fifo", "dev-null", "directory", "regular-file", "under-a-file"]


def _cases() -> list[Any]:
    out = []
    for cmd, param, rule in path_params():
        for kind in KINDS:
            if expected_refusal(rule, kind):
                out.append(pytest.param(cmd, param.name, kind,
                                        id=f"{cmd or 'mqctl'} {param.opts[0]} {kind}"))
    return out


def _lkind(p: Path) -> str:
    st = os.lstat(p)
    return stat.filemode(st.st_mode)[0]


@pytest.mark.parametrize("cmd, name, kind", _cases())
def test_hostile_path_is_refused_in_one_line_with_a_hint(tmp_path, cmd, name, kind):
    param, rule = next((p, r) for c, p, r in path_params() if c == cmd and p.name == name)
    value, kept = make(kind, tmp_path)
    before = _lkind(kept) if kept is not None else None
    content = kept.read_bytes() if kept is not None and kept.is_file() and not \
        kept.is_symlink() else None
    args = command_line(cmd, param, value, tmp_path)
    listing = sorted(os.listdir(tmp_path))
    r = run_cli(args)
    assert r.exit_code == 2, (kind, r.exit_code, r.stderr, r.stdout)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert len(errors) == 1, r.stderr
    assert re.search(r"^hint: \S", r.stderr, re.MULTILINE), r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert rule.what in errors[0], (rule.what, errors[0])
    assert len(errors[0]) < 600, errors[0]  # (a 5,000-byte path is shortened)
    if kept is not None:  # what was there is left as it was
        assert _lkind(kept) == before
        if content is not None:
            assert kept.read_bytes() == content
    assert sorted(os.listdir(tmp_path)) == listing  # nothing created beside it


def test_every_command_with_a_path_is_in_the_table():
    assert {c for c, _p, _r in path_params()} <= set(BASE)


# ------------------------------------------------------------------------------ the rule


def test_a_linked_directory_for_an_output_directory_is_followed(tmp_path):
    from mqctl.fsutil import PathRule, path_error

    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to("real")
    assert path_error(str(tmp_path / "out"), PathRule("d", output=True, directory=True)) is None
    assert path_error(str(tmp_path / "out" / "f.prom"), PathRule("f", output=True)) is None


def test_a_link_to_an_input_file_is_read(tmp_path):
    from mqctl.fsutil import PathRule, path_error

    (tmp_path / "c.yaml").write_text("x: 1\n")
    (tmp_path / "link.yaml").symlink_to("c.yaml")  # (a ConfigMap mounts its files as links)
    assert path_error(str(tmp_path / "link.yaml"), PathRule("config file")) is None


def test_a_missing_output_directory_is_refused_only_where_it_is_not_created(tmp_path):
    from mqctl.fsutil import PathRule, path_error

    where = str(tmp_path / "no" / "such" / "x.prom")
    assert path_error(where, PathRule("f", output=True)) is None
    err = path_error(where, PathRule("Prometheus file", output=True, create_parent=False))
    assert err is not None and "does not exist" in err.message


def test_names_and_stdin_are_not_paths():
    from mqctl.fsutil import PathRule, path_error

    assert path_error("-", PathRule("topology file", stdin=True)) is None
    assert path_error("-", PathRule("plan file")) is None  # (a file named '-' may not exist)
    assert path_error("demo", PathRule("scenario file", name=lambda v: "/" not in v)) is None


def test_the_name_limit_is_the_file_systems():
    from mqctl.fsutil import PathRule, path_error

    err = path_error("/tmp/" + "x" * 256, PathRule("f"))
    assert err is not None and "256 bytes long" in err.message and "NAME_MAX" in err.message
    assert path_error("/tmp/" + "x" * 255, PathRule("f")) is None


# ------------------------------------------------------------------------------ replacing files

UNREACHABLE = ["-n", "127.0.0.1:1"]  # a refused connection: exit 3 once mqctl connects


def test_export_over_a_file_mqctl_did_not_write_is_refused_without_force(tmp_path):
    # reproduction: --export over a copy of /etc/passwd replaced it with a plan, silently
    victim = tmp_path / "passwd.csv"
    victim.write_text("root:x:0:0:root:/root:/bin/bash\n")
    args = [*UNREACHABLE, "offsets", "reset", "G", "-t", "T", "--to-latest", "--export",
            str(victim)]
    r = run_cli(args)
    assert r.exit_code == 2, r.stderr  # (before connecting: not 3)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert errors == [f"mqctl: error: cannot write plan file {victim}: a file that mqctl did "
                      "not write is there"], r.stderr
    assert "--force" in r.stderr and "group,topic,broker,queue_id" in r.stderr
    assert victim.read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    assert run_cli([*args, "--force"]).exit_code == 3  # accepted: it went on to connect


@pytest.mark.parametrize("text", ["group,topic,broker,queue_id,current,target,min,max,"
                                  "target_time\nG,T,b,0,1,2,0,9,\n",
                                  '{\n  "schema": "mqctl.reset-plan/1",\n  "queues": []\n}\n',
                                  ""], ids=["csv", "json", "empty"])
def test_export_over_mqctl_own_plan_needs_no_force(tmp_path, text):
    plan = tmp_path / ("p.json" if text.startswith("{") else "p.csv")
    plan.write_text(text)
    r = run_cli([*UNREACHABLE, "offsets", "reset", "G", "-t", "T", "--to-latest", "--export",
                 str(plan)])
    assert r.exit_code == 3, r.stderr  # accepted: it went on to connect


def test_report_outputs_that_are_not_mqctl_are_refused_without_force(tmp_path):
    from mqctl.errors import UsageError
    from mqctl.lagjob.guards import check_outputs as _check_outputs

    out = tmp_path / "home"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")  # --out ~ by mistake: its lag/, summary.csv...
    with pytest.raises(UsageError, match="it holds files and is not mqctl's"):
        _check_outputs(str(out), None)
    _check_outputs(str(out), None, force=True)
    (out / ".mqctl-lag.lock").write_text("")  # a directory a report ran into
    _check_outputs(str(out), None)
    prom = tmp_path / "node.prom"
    prom.write_text("# HELP node_load1 1m load average.\nnode_load1 0.5\n")
    with pytest.raises(UsageError, match="a file that mqctl did not write"):
        _check_outputs(str(tmp_path / "fresh"), str(prom))
    assert prom.read_text().startswith("# HELP node_load1")
    prom.write_text("# HELP mqctl_group_lag x\n" + "x 1\n" * 30_000
                    + "# HELP mqctl_lag_report_groups Groups in the last report.\n")
    _check_outputs(str(tmp_path / "fresh"), str(prom))  # mqctl's own (its run series last)
    state = tmp_path / "state"
    state.mkdir()
    (state / "other").write_text("x")
    with pytest.raises(UsageError, match="cannot write state directory"):
        _check_outputs(str(tmp_path / "fresh"), None, str(state))
    (state / "manifest.json").write_text("{}")
    _check_outputs(str(tmp_path / "fresh"), None, str(state))


def test_lag_report_refuses_a_foreign_out_before_spark(tmp_path, monkeypatch):
    import mqctl.lagjob.session as S

    def boom(*a, **k):
        raise AssertionError("Spark was started before the outputs were checked")
    monkeypatch.setattr(S, "spark_session", boom)
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    (snaps / "mqctl-snapshot-c1-20240601T100000.000Z.jsonl").write_text("{}\n")
    r = run_cli(["lag", "report", str(snaps), "--out", str(tmp_path)])
    assert r.exit_code == 2, r.stderr
    assert f"cannot write report directory {tmp_path}: it holds files and is not mqctl's" in \
        r.stderr and "hint:" in r.stderr


def test_demo_refuses_a_foreign_out_before_the_simulation(tmp_path, monkeypatch):
    import mqctl.demo

    def boom(*a, **k):
        raise AssertionError("the simulation started before --out was checked")
    monkeypatch.setattr(mqctl.demo, "capture_timeline", boom)
    (tmp_path / "thesis.tex").write_text("x")
    r = run_cli(["demo", "--out", str(tmp_path), "--hours", "0.1"])
    assert r.exit_code == 2, r.stderr
    assert "cannot write the demo directory" in r.stderr and "not mqctl's" in r.stderr


def test_locks_show_says_on_stderr_when_it_cannot_keep_its_state(cli, sim, tmp_path):
    # reproduction: a --state-dir that saves nothing said so only in a note, exit 0 (a file,
    # /dev/null, a FIFO or a loop are refused up front: the table above)
    from mqctl.locks.store import namesrv_hash

    state = tmp_path / "state"
    state.mkdir()
    (state / namesrv_hash(sim.namesrv_addr)).write_text("a file where its directory goes\n")
    r = cli(["-n", sim.namesrv_addr, "locks", "show", "GID_ORDER", "--state-dir", str(state)])
    assert r.exit_code in (0, 8), r.stderr
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: warning:")]
    assert any("cannot write lock state" in w and "cannot recall" in w for w in warnings), \
        r.stderr

"""Numbers, durations and queue lists on the command line are ASCII digits and bounded.

Python's ``int()``, ``float()``, ``str.isdigit()`` and a regex's ``\\d`` take every Unicode
digit (``-٣m`` was 3 minutes ago, ``broker-a:٣`` queue 3), and ``float('inf')`` an
unbounded wait (``--verify-wait inf``). Every option in seconds is bounded; every duration
option goes through one parser (``mqctl.timeparse.parse_duration_option``); the source holds
no ``\\d`` and no ``isdigit()`` without ``isascii()``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

UNREACHABLE = ["-n", "127.0.0.1:1"]
HUGE = "9" * 5000


def one_error(r, *fragments: str) -> str:
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert len(errors) == 1 and len(errors[0]) < 400, r.stderr
    assert re.search(r"^hint: \S", r.stderr, re.MULTILINE), r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    for f in fragments:
        assert f in errors[0], (f, errors[0])
    return errors[0]


# ------------------------------------------------------------------------------ the source


def _sources() -> list[Path]:
    return sorted((ROOT / "mqctl").rglob("*.py")) + sorted((ROOT / "plugins").rglob("*.py"))


def test_no_regex_in_the_source_takes_unicode_digits():
    found = []
    for f in _sources():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    re.search(r"(?<!\\)\\d", node.value):
                found.append(f"{f.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"\\d matches every Unicode digit: write [0-9] ({found})"


def test_no_isdigit_without_isascii():
    found = []
    for f in _sources():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("isdigit", "isdecimal", "isnumeric")):
                continue
            recv = ast.unparse(node.func.value)
            up, guarded = parents.get(node), False
            while up is not None and not guarded:
                if isinstance(up, ast.BoolOp):
                    guarded = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                  and n.func.attr == "isascii"
                                  and ast.unparse(n.func.value) == recv
                                  for n in ast.walk(up))
                up = parents.get(up)
            if not guarded:
                found.append(f"{f.relative_to(ROOT)}:{node.lineno} {recv}.{node.func.attr}()")
    assert not found, f"str.isdigit() takes '٣': use mqctl.timeparse.is_digits ({found})"


# ------------------------------------------------------------------------------ seconds

# float options bounded by their command's own check instead of a declared max (each refuses
# inf with its own message, run below)
BOUNDED_ELSEWHERE = {("", "timeout"): "0.1 to 3600 (mqctl.config)",
                     ("demo", "hours"): "at most 10,000 snapshots (mqctl.demo.demo_steps)",
                     ("sim up", "speed"): "0.001 to 1000 (mqctl.sim.clock)"}
FLOAT_LINES = {
    ("", "timeout"): ["--timeout", "{v}", "cluster"],
    ("groups", "time_lag_threshold"): ["groups", "--time-lag-threshold", "{v}"],
    ("groups", "watch"): ["groups", "--watch", "{v}"],
    ("demo", "hours"): ["demo", "--hours", "{v}"],
    ("diagnose", "sample"): ["diagnose", "G", "--sample", "{v}"],
    ("group pause", "sample"): ["group", "pause", "G", "--sample", "{v}"],
    ("group progress", "watch"): ["group", "progress", "G", "--watch", "{v}"],
    ("locks show", "watch"): ["locks", "show", "G", "--watch", "{v}"],
    ("consumers", "watch"): ["consumers", "G", "--watch", "{v}"],
    ("topic status", "watch"): ["topic", "status", "T", "--watch", "{v}"],
    ("diagnose", "watch"): ["diagnose", "G", "--watch", "{v}"],
    ("exporter", "allowed_lag_seconds"): ["exporter", "--allowed-lag-seconds", "{v}"],
    ("lag report", "allowed_lag_seconds"): ["lag", "report", "x", "--out", "o",
                                            "--allowed-lag-seconds", "{v}"],
    ("lag report", "unowned_max"): ["lag", "report", "x", "--out", "o", "--unowned-max",
                                    "{v}"],
    ("sim up", "speed"): ["sim", "up", "--port", "0", "--clock", "accelerated", "--speed",
                          "{v}"],
    ("offsets reset", "verify_wait"): ["offsets", "reset", "G", "-t", "T", "--to-latest",
                                       "--verify-wait", "{v}"],
    ("offsets rollback", "verify_wait"): ["offsets", "rollback", "x.json", "--verify-wait",
                                          "{v}"],
}


def _float_params():
    from typer.main import get_command

    from mqctl.cli.app import app

    def walk(cmd, path=()):
        for p in cmd.params:
            if getattr(getattr(p, "type_descriptor", None), "annotation", None) is float:
                yield " ".join(path), p
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, (*path, name))
    return list(walk(get_command(app)))


def test_every_option_in_seconds_or_a_fraction_is_bounded():
    params = _float_params()
    assert params
    unbounded = [(c, p.name) for c, p in params
                 if getattr(p, "max", None) is None and (c, p.name) not in BOUNDED_ELSEWHERE]
    assert not unbounded, f"float options without max= (inf is an unbounded wait): {unbounded}"
    assert {(c, p.name) for c, p in params} <= set(FLOAT_LINES), "add a line to FLOAT_LINES"


@pytest.fixture
def nothing_starts(monkeypatch):
    import mqctl.demo

    def boom(*a, **k):
        raise AssertionError("work started before the value was checked")
    monkeypatch.setattr(mqctl.demo, "capture_timeline", boom)


@pytest.mark.parametrize("key", list(FLOAT_LINES), ids=[" ".join(k) for k in FLOAT_LINES])
@pytest.mark.parametrize("value", ["inf", "nan", "1e999", "-inf", "٣", HUGE])
def test_a_float_option_refuses_unbounded_and_unicode_values(key, value, nothing_starts):
    # reproduction: --verify-wait inf was accepted (an unbounded wait) where --timeout inf
    # was refused
    r = run_cli([*UNREACHABLE, *[a.replace("{v}", value) for a in FLOAT_LINES[key]]])
    one_error(r)


# ------------------------------------------------------------------------------ text parsers

TEXT_LINES = [
    # (what, command line with {v}, hostile values)
    ("--by-duration", ["offsets", "reset", "G", "-t", "T", "--by-duration", "{v}"],
     ["-٣m", "٣m", "-３m", "-PT٣M", "-inf", "-1e9m", f"-{HUGE}m"]),
    ("--to-time", ["offsets", "reset", "G", "-t", "T", "--to-time", "{v}"],
     ["٢٠٢٤-٠٦-٠١", "2024-06-0١", "١٧١٧٢٠٠٠٠٠٠٠٠", "-٣h", HUGE]),
    ("reset --queues", ["offsets", "reset", "G", "-t", "T", "--to-latest", "--queues", "{v}"],
     ["broker-a:٣", "broker-a:0-٣", "broker-a:３", f"broker-a:{HUGE}", f"broker-a:0-{HUGE}"]),
    ("locks release --queue", ["locks", "release", "G", "--queue", "{v}"],
     ["b:٣", "b:³", f"b:{HUGE}"]),
    ("allocate --queues", ["allocate", "--queues", "{v}", "--consumers", "2"],
     ["b:٣", f"b:{HUGE}"]),
    ("allocate --consumers", ["allocate", "--queues", "b:4", "--consumers", "{v}"],
     ["٣", HUGE]),
    ("snapshot --keep", ["snapshot", "-g", "G", "--out", "{tmp}/s", "--keep", "{v}"],
     ["٣d", "inf", "1e9d", f"{HUGE}d"]),
    ("lag prune --keep", ["lag", "prune", "--out", "{tmp}", "--keep", "{v}"],
     ["٣d", "nan"]),
    ("demo --interval", ["demo", "--interval", "{v}"], ["٣s", "inf", "nan", "1e3", "-1s"]),
    ("lag report --align", ["lag", "report", "x", "--out", "{tmp}/o", "--align", "{v}"],
     ["٣", "٣s", "inf", "nan", "1e999", "-5s", f"{HUGE}s"]),
    ("lag report --storm-window", ["lag", "report", "x", "--out", "{tmp}/o", "--storm-window",
                                   "{v}"], ["١٠m", "inf"]),
    ("time", ["time", "{v}"], ["٣m", "+٣m", "١٧١٧٢٠٠٠٠٠٠٠٠"]),
    ("-n", ["-n", "{v}", "cluster"], ["host:٩٨٧٦", "127.0.0.1:９８７６"]),
]


@pytest.mark.parametrize("what, args, value", [
    pytest.param(w, a, v, id=f"{w} {v[:12]}") for w, a, vs in TEXT_LINES for v in vs])
def test_a_number_in_text_is_ascii_and_bounded(tmp_path, what, args, value, nothing_starts):
    r = run_cli([*([] if args[0] == "-n" else UNREACHABLE),
                 *[a.replace("{v}", value).replace("{tmp}", str(tmp_path)) for a in args]])
    one_error(r)


def test_ascii_values_still_parse():
    from mqctl.reset import parse_queue_scope
    from mqctl.timeparse import parse_duration_ms, parse_duration_option, parse_time

    assert parse_duration_ms("-3m") == -180_000
    assert parse_queue_scope(["broker-a:0-2"]) == {("broker-a", 0), ("broker-a", 1),
                                                   ("broker-a", 2)}
    assert parse_time("1717200000000") == 1717200000000
    assert parse_duration_option("1.5", "--align") == 1500
    assert parse_duration_option("PT2M", "--max-skew") == 120_000


def test_the_number_parsers():
    from mqctl.errors import UsageError
    from mqctl.timeparse import is_digits, parse_duration_option, parse_int, parse_number

    assert is_digits("0123") and not is_digits("٣") and not is_digits("³") and not is_digits("")
    assert parse_int(" -12 ", "x") == -12
    assert parse_number("2.5e1", "x", lo=0, hi=100) == 25.0
    for bad in ("٣", "1.5", "", HUGE):
        with pytest.raises(UsageError):
            parse_int(bad, "x")
    for bad in ("inf", "nan", "٣", "1e999", "101"):
        with pytest.raises(UsageError):
            parse_number(bad, "x", lo=0, hi=100)
    with pytest.raises(UsageError, match="out of range"):
        parse_duration_option("2h", "--x", hi_ms=3_600_000)
    with pytest.raises(UsageError, match="has no unit"):
        parse_duration_option("7", "--keep", bare_seconds=False)
    assert parse_duration_option("-2h", "--by", signed=True) == -7_200_000


def test_a_plan_file_cell_is_ascii(tmp_path):
    plan = tmp_path / "p.csv"
    plan.write_text("broker,queue_id,target\nb,0,١٠\n", encoding="utf-8")
    r = run_cli([*UNREACHABLE, "offsets", "reset", "G", "-t", "T", "--from-file", str(plan)])
    one_error(r, "target must be a whole number", "ASCII")

"""Every option of the lag report is declared once (mqctl/lagoptions.py), and
the CLI, the spark-submit parser, the docs and the state's fingerprint follow the declaration.
No Spark here."""

from __future__ import annotations

import dataclasses
import re
from datetime import timedelta, tzinfo
from typing import Any

import pytest
from conftest import ROOT, run_cli

from mqctl.errors import UsageError
from mqctl.lagoptions import RUN_SPECS, Kind, Options, declared, flag_specs, option


def other_value(spec: Any, current: Any) -> Any:
    """A valid value of the option other than ``current``."""
    return {Kind.INT: lambda v: v + 1, Kind.FLOAT: lambda v: v / 2 if v else 0.5,
            Kind.DURATION: lambda v: v + 1000, Kind.TEXT: lambda v: v + "x",
            Kind.ZONE: lambda v: "+03:00" if str(v) != "+03:00" else "UTC",
            Kind.TIME: lambda v: "2024-06-01T00:00:00Z" if v is None else None}[spec.kind](
        current)


def result_options() -> list[str]:
    return [f.name for f, spec in declared() if not spec.output_only]


@pytest.mark.parametrize("name", result_options())
def test_every_result_option_changes_the_fingerprint(name):
    """A re-run whose options differ from the state's in any option that changes a result
    computes everything again: each such option, changed alone, changes the fingerprint. (Before
    the declaration, --storm-round-max and --unowned-max were left out of the hand-written list:
    a re-run with another value reused what was computed with the old one.)"""
    base = Options()
    spec = dict(declared())[next(f for f, _s in declared() if f.name == name)]
    change: dict[str, Any] = {name: other_value(spec, getattr(base, name))}
    changed = dataclasses.replace(base, **change)
    assert getattr(changed, name) != getattr(base, name)
    assert changed.fingerprint() != base.fingerprint(), name


def test_output_only_options_leave_the_fingerprint_alone():
    """Only the sizes of what every run writes anew (summary rows, HTML charts) are left out;
    and they are few, declared so by name."""
    out = sorted(f.name for f, spec in declared() if spec.output_only)
    assert out == ["chart_groups", "chart_points", "summary_limit", "timeline_events"]
    base = Options()
    for name in out:
        seven: dict[str, Any] = {name: 7}
        assert dataclasses.replace(base, **seven).fingerprint() == base.fingerprint()


def test_a_new_field_counts_in_the_fingerprint_unless_declared_output_only():
    @dataclasses.dataclass(frozen=True, slots=True)
    class More(Options):
        extra: int = option(1, "--extra", "A new option.")

    @dataclasses.dataclass(frozen=True, slots=True)
    class MoreOutput(Options):
        rows: int = option(1, None, "A new output size.", output_only=True)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Plain(Options):  # a field without a declaration counts too
        undeclared: int = 0

    base = Options().fingerprint()
    assert More().fingerprint() != base and Plain().fingerprint() != base
    assert More(extra=2).fingerprint() != More().fingerprint()
    assert MoreOutput().fingerprint() == base
    assert [f.name for f, _s in declared(More)][-1] == "extra"


def test_the_same_options_give_the_same_fingerprint():
    assert Options().fingerprint() == Options().fingerprint()
    a = Options.from_values({"window": 3, "tz": "UTC", "max_skew_ms": "2m"})
    b = Options(window=3, tz="UTC", max_skew_ms=120_000)
    assert a == b and a.fingerprint() == b.fingerprint()


def test_values_are_read_and_checked_once():
    o = Options.from_values({"max_skew_ms": "2m", "storm_round_max_ms": "0", "tz": "UTC",
                             "broker_log_tz": None, "since": "2024-06-01T00:00:00Z",
                             "out": "ignored: not an option"})
    assert (o.max_skew_ms, o.storm_round_max_ms, o.since_ms) == (120_000, 0, 1717200000000)
    assert isinstance(o.tz_info, tzinfo)
    assert o.broker_log_tz_info.utcoffset(None) == timedelta(hours=8)
    defaults = Options()
    assert (defaults.max_skew_ms, defaults.align_ms, defaults.storm_window_ms,
            defaults.storm_round_max_ms, defaults.window) == (300_000, 10_000, 600_000, 60_000, 10)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"window": 0}, "--window must be at least 1 (got 0)"),
        ({"storm_rounds": 0}, "--storm-rounds must be at least 1"),
        ({"unowned_max": 1.5}, "--unowned-max must be from 0 to 1 (got 1.5)"),
        ({"allowed_lag": -1}, "--allowed-lag must be at least 0"),
        ({"max_skew_ms": "-5m"}, "must not be negative"),
        ({"tz": "Mars/Olympus"}, "unknown time zone"),
        ({"since": "2024-06-03", "until": "2024-06-02"}, "--since is after")]
    for bad, said in cases:
        with pytest.raises(UsageError) as e:
            Options.from_values(bad)
        assert said in e.value.message, (bad, e.value.message)


# ---- the CLI, the spark-submit parser and the docs follow the declaration --------------------

def shown_default(spec: Any) -> str | None:
    if spec.kind in (Kind.FLAG, Kind.LIST) or spec.default in (None, ""):
        return None
    return str(spec.default)


def test_every_option_is_in_lag_report_help_with_its_default():
    r = run_cli(["lag", "report", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.stderr
    options = r.stdout.split("\nOptions:")[1]
    # each option's block: from its line ("  --flag METAVAR  help") to the next option's
    blocks = {m.group(1): re.sub(r"\s+", " ", m.group(0)) for m in re.finditer(
        r"^  (?:-\w, )?(--[a-z-]+).*?(?=^  -|\Z)", options, re.M | re.S)}
    for spec in flag_specs():
        flag = spec.flag or ""
        m = re.fullmatch(rf" ?{re.escape(flag)}(?: {re.escape(spec.metavar or '')})? "
                         r"(.*)", blocks.get(flag, ""))
        assert m, (spec.flag, blocks.get(spec.flag))
        said = m.group(1)
        assert spec.help.split(" (")[0][:40] in said, spec.flag
        default = shown_default(spec)
        if default is not None:
            assert f"[default: {default}" in said, (spec.flag, said)
    library_only = [f.name for f, s in declared() if s.flag is None]
    assert library_only == ["move_window_ms", "round_gap_ms", "summary_limit", "chart_groups",
                            "chart_points", "timeline_events"]


def test_the_spark_submit_parser_takes_every_option_with_the_same_default():
    from mqctl.lagjob.job import build_parser

    p = build_parser()
    by_flag = {a.option_strings[0]: a for a in p._actions if a.option_strings}
    for spec in flag_specs():
        action = by_flag[spec.flag]
        assert action.dest == spec.name and action.help == spec.help
        want = [] if spec.kind is Kind.LIST else spec.submit
        assert action.default == want, spec.flag
    assert by_flag["--master"].default is None  # spark-submit's own master
    args = vars(p.parse_args(["in", "--out", "o", "--storm-round-max", "0", "--unowned-max",
                              "0.5", "--limit", "5", "--full"]))
    o = Options.from_values(args)
    assert (o.storm_round_max_ms, o.unowned_max) == (0, 0.5)
    assert (args["limit"], args["full"], args["fail_on"]) == (5, True, [])


def test_the_docs_list_every_option_with_its_default():
    """docs/lag-report.md has a table of every option: flag, default, and whether a
    change makes the next run compute everything again."""
    text = (ROOT / "docs" / "lag-report.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2).strip() for m in re.finditer(
        r"^\| `(--[a-z-]+)`[^|]*\| ([^|]*)\|", text, re.M)}
    for spec in flag_specs():
        assert spec.flag in rows, spec.flag
        default = shown_default(spec)
        if default is not None:
            assert f"`{default}`" in rows[spec.flag], (spec.flag, rows[spec.flag])
    run = {s.flag for s in RUN_SPECS}
    for line in text.splitlines():
        m = re.match(r"^\| `(--[a-z-]+)`.*\| (yes|no) \|$", line)
        if m and m.group(1) in {s.flag for s in flag_specs()}:
            assert (m.group(2) == "no") == (m.group(1) in run), line

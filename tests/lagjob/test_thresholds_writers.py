"""--fail-on grammar, Prometheus textfile format and the self-contained HTML (no Spark)."""

from __future__ import annotations

import re

import pytest

from mqctl.errors import ExitCode, UsageError
from mqctl.lagjob.thresholds import glob_regex, parse_threshold
from mqctl.lagjob.writers import csv_text, render_html, render_prometheus

# ---- thresholds ------------------------------------------------------------------------------


def test_threshold_grammar():
    t = parse_threshold("lag_seconds>300")
    assert (t.metric, t.op, t.value, t.scope, t.column) == ("lag_seconds", ">", 300.0, (),
                                                           "lag_seconds")
    t = parse_threshold("group=GID_*:topic=T?:lag >= 1000")
    assert t.scope == (("group", "GID_*"), ("topic", "T?")) and t.column == "total_lag"
    assert parse_threshold("max_lag_seconds>5m").value == 300.0  # durations for *_seconds
    t = parse_threshold("status>=WARN")
    assert (t.column, t.value, t.shown_value()) == ("status_code", 1.0, "WARN")
    assert parse_threshold("group_status==stop").value == 4.0
    assert parse_threshold("quarantined>0").metric == "quarantined"
    assert parse_threshold("consume_rate<0.5").compare(0.25)
    assert not parse_threshold("lag=10").compare(11)


@pytest.mark.parametrize("text", [
    "lag", "lag>>3", "nosuch>3", "lag>abc", "status>=BAD", "lag>5m", "group:lag>1",
    "partition=1:lag>1", "group=G:quarantined>0", "lag>nan",
])
def test_bad_thresholds_are_usage_errors(text):
    with pytest.raises(UsageError) as e:
        parse_threshold(text)
    assert e.value.exit_code == ExitCode.USAGE
    assert "fail-on" in e.value.message and e.value.hint


def test_glob_regex():
    rx = re.compile(glob_regex("GID_*.x?"))
    assert rx.match("GID_abc.x1") and not rx.match("GID_abcXx1") and not rx.match("xGID_.x1")


# ---- prometheus ------------------------------------------------------------------------------

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                     r'(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)?\})? '
                     r'(-?[0-9.e+-]+|NaN|[+-]Inf)$')


def validate_exposition(text: str) -> dict[str, list[str]]:
    """The text exposition format, strictly: HELP then TYPE before each family's samples, every
    family contiguous and declared once, valid names, labels and values, no timestamps."""
    assert text.endswith("\n")
    families: dict[str, list[str]] = {}
    current = None
    seen_types: set[str] = set()
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            assert name not in families, f"family {name} declared twice"
            families[name] = []
            current = name
        elif line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ")
            assert name == current and typ == "gauge"
            seen_types.add(name)
        else:
            m = _SAMPLE.match(line)
            assert m, f"bad sample line: {line!r}"
            assert m.group(1) == current and current in seen_types
            families[current].append(line)
    return families


def test_prometheus_textfile_format_and_values():
    topic_rows = [{"cluster": "c1", "group": "GID_A", "topic": "T", "total_lag": 120,
                   "max_lag": 100, "lag_seconds": 42.5, "estimated": True, "consume_rate": 3.0,
                   "produce_rate": None, "status_code": 1, "complete": 0.5,
                   "capture_ts": 1717236000000},
                  {"cluster": "", "group": 'we"ird\\g\nx', "topic": "T2", "total_lag": 0,
                   "max_lag": 0, "lag_seconds": float("nan"), "estimated": False,
                   "consume_rate": 0.0, "produce_rate": 0.0, "status_code": 0, "complete": 1.0,
                   "capture_ts": 1717236000000}]
    group_rows = [{"cluster": "c1", "group": "GID_A", "group_status_code": 4, "total_lag": 120,
                   "rebalances": 3}]
    text = render_prometheus(topic_rows, group_rows, {"quarantined": 2, "storms": 1,
                                                      "lock_takeovers": 0, "breaches": 1},
                             1717236060000)
    fam = validate_exposition(text)
    assert 'mqctl_lag_messages{cluster="c1",group="GID_A",topic="T"} 120' in fam[
        "mqctl_lag_messages"]
    assert 'mqctl_lag_seconds{cluster="c1",group="GID_A",topic="T"} 42.5' in fam[
        "mqctl_lag_seconds"]
    # NaN and None values are left out rather than exported as fake numbers
    assert len(fam["mqctl_lag_seconds"]) == 1 and len(fam["mqctl_produce_rate"]) == 1
    assert 'group="we\\"ird\\\\g\\nx"' in fam["mqctl_lag_messages"][1]
    assert fam["mqctl_group_status"] == ['mqctl_group_status{cluster="c1",group="GID_A"} 4']
    assert fam["mqctl_lag_report_quarantined_records"] == ["mqctl_lag_report_quarantined_records 2"]
    assert fam["mqctl_lag_report_last_run_timestamp_seconds"] == [
        "mqctl_lag_report_last_run_timestamp_seconds 1717236060"]
    assert fam["mqctl_lag_capture_timestamp_seconds"][0].endswith(" 1717236000")


def test_csv_text_cells():
    out = csv_text(["a", "b", "c", "d"], [{"a": True, "b": 1.23456789, "c": None, "d": ["x", "y"]}])
    assert out == "a,b,c,d\ntrue,1.234568,,x y\n"


# ---- html ------------------------------------------------------------------------------------

def test_html_is_self_contained_and_escapes_broker_data():
    series = [{"group": "GID_A", "ts": 1717236000000 + i * 60000, "total_lag": i * 10,
               "lag_seconds": float(i)} for i in range(3)]
    series.append({"group": "</script><b>x", "ts": 1717236000000, "total_lag": 1,
                   "lag_seconds": 1.0})
    events = [{"ts": 1717236060000, "group": "GID_A", "client": "c@1", "topic": "T",
               "n_gained": 2, "n_lost": 0, "source_kind": "snapshot"}]
    storms = [{"group": "GID_A", "start_ts": 1717236000000, "end_ts": 1717236120000,
               "rounds": 3}]
    rows = [{"cluster": "c1", "group": "<script>alert(1)</script>", "topic": "T",
             "status": "WARN", "total_lag": 20, "lag_seconds": 2.0}]
    page = render_html(series=series, events=events, storms=storms, status_rows=rows,
                       meta={"title": "t", "subtitle": "s", "notes": ["n1"]})
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)  # nothing loaded from outside
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']https?:", page, re.I)
    assert "Plotly" in page and len(page) > 1_000_000  # plotly.js is inlined
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    assert "<b>x" not in page and page.count("</script>") == page.count("<script")
    assert page.count("Plotly.newPlot") == 3  # lag, time lag, rebalance timeline
    assert 'class="st-WARN"' in page

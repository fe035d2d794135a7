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
    """Prometheus' conventions (units in the names, no _total on gauges, an
    _info series, the status and the health as enums with one series per state), the broker
    label, retry and DLQ backlogs apart from the lag, members and online per group, unknown as
    NaN (never a missing series, never 0), and the report's own health."""
    topic_rows = [{"cluster": "c1", "group": "GID_A", "topic": "T", "total_lag": 120,
                   "max_lag": 100, "lag_seconds": 42.5, "status_code": 1, "complete": 0.5,
                   "capture_ts": 1717236000000},
                  {"cluster": "c1", "group": "GID_A", "topic": "%RETRY%GID_A", "total_lag": 7,
                   "max_lag": 7, "lag_seconds": 0.0, "status_code": 0, "complete": 0.5,
                   "capture_ts": 1717236000000},
                  {"cluster": "", "group": 'we"ird\\g\nx', "topic": "T2", "total_lag": 0,
                   "max_lag": 0, "lag_seconds": float("nan"), "status_code": None,
                   "complete": None, "capture_ts": 1717236000000},
                  # a group seen only in logs: no topic rows of its own
                  {"cluster": "", "group": "LOGONLY", "topic": None}]
    broker_rows = [{"cluster": "c1", "group": "GID_A", "topic": "T", "broker": "broker-a",
                    "total_lag": 100, "lag_seconds": 42.5, "estimated": True,
                    "consume_rate": 3.0, "produce_rate": None},
                   {"cluster": "c1", "group": "GID_A", "topic": "T", "broker": "broker-b",
                    "total_lag": 20, "lag_seconds": None, "estimated": None,
                    "consume_rate": 1.0, "produce_rate": 2.0},
                   {"cluster": "c1", "group": "GID_A", "topic": "%RETRY%GID_A",
                    "broker": "broker-a", "total_lag": 7},
                   {"cluster": "c1", "group": "GID_A", "topic": "%DLQ%GID_A",
                    "broker": "broker-a", "total_lag": 3}]
    group_rows = [{"cluster": "c1", "group": "GID_A", "group_status": "STOP",
                   "group_status_code": 4, "health": "ERR", "health_code": 2, "total_lag": 120,
                   "retry_lag": 7, "dlq_lag": None, "members": 0, "online": False,
                   "rebalances": 3, "storms": 1, "in_storm": True, "unowned_share": 0.25,
                   "consume_type": "CONSUME_PASSIVELY", "message_model": "CLUSTERING",
                   "capture_ts": 1717236000000},
                  {"cluster": "", "group": "LOGONLY", "reason": "seen only in logs"}]
    text = render_prometheus(topic_rows, group_rows, {"quarantined": 2, "storms": 1,
                                                      "lock_takeovers": 0, "breaches": 1,
                                                      "groups": 2, "duration_s": 61.5,
                                                      "last_capture_s": 1717236000.0},
                             1717236060000, broker_rows)
    fam = validate_exposition(text)
    assert not [n for n in fam if n.endswith("_total")]  # every family is a gauge
    assert fam["mqctl_consumer_lag_messages"] == [
        'mqctl_consumer_lag_messages{cluster="c1",group="GID_A",topic="T",broker="broker-a"} 100',
        'mqctl_consumer_lag_messages{cluster="c1",group="GID_A",topic="T",broker="broker-b"} 20']
    # unknown is NaN, and an estimate's flag is NaN where there is no time lag
    assert fam["mqctl_consumer_lag_seconds"][1].endswith('broker="broker-b"} NaN')
    assert [x.rsplit(" ", 1)[1] for x in fam["mqctl_consumer_lag_seconds_estimated"]] == [
        "1", "NaN"]
    # retry and DLQ backlogs are their own metrics, never in the lag
    assert fam["mqctl_consumer_retry_lag_messages"] == [
        'mqctl_consumer_retry_lag_messages{cluster="c1",group="GID_A",topic="%RETRY%GID_A",'
        'broker="broker-a"} 7']
    assert len(fam["mqctl_consumer_dlq_lag_messages"]) == 1
    assert fam["mqctl_group_retry_lag_messages"][0].endswith(" 7")
    assert fam["mqctl_group_dlq_lag_messages"][0].endswith(" NaN")  # no DLQ topic: unknown
    assert 'group="we\\"ird\\\\g\\nx"' in fam["mqctl_consumer_max_lag_messages"][2]
    assert fam["mqctl_consumer_status_severity"][2].endswith(" NaN")
    # the status and the health as enums: one series per state, 1 for the current one
    st = {x.split('status="')[1].split('"')[0]: x.rsplit(" ", 1)[1]
          for x in fam["mqctl_group_status"] if 'group="GID_A"' in x}
    assert st == {"OK": "0", "WARN": "0", "REWIND": "0", "STALL": "0", "STOP": "1",
                  "UNKNOWN": "0"}
    assert 'mqctl_group_status{cluster="",group="LOGONLY",status="UNKNOWN"} 1' in fam[
        "mqctl_group_status"]
    assert 'mqctl_group_health{cluster="c1",group="GID_A",health="ERR"} 1' in fam[
        "mqctl_group_health"]
    assert fam["mqctl_group_info"][0] == (
        'mqctl_group_info{cluster="c1",group="GID_A",consume_type="CONSUME_PASSIVELY",'
        'message_model="CLUSTERING"} 1')
    assert fam["mqctl_group_members"] == ['mqctl_group_members{cluster="c1",group="GID_A"} 0',
                                          'mqctl_group_members{cluster="",group="LOGONLY"} NaN']
    assert fam["mqctl_group_online"][0].endswith(" 0")
    assert fam["mqctl_group_rebalance_storm"][0].endswith(" 1")
    assert fam["mqctl_group_unowned_ratio"][0].endswith(" 0.25")
    assert fam["mqctl_lag_report_quarantined_records"] == ["mqctl_lag_report_quarantined_records 2"]
    assert fam["mqctl_lag_report_last_success_timestamp_seconds"] == [
        "mqctl_lag_report_last_success_timestamp_seconds 1717236060"]
    assert fam["mqctl_lag_report_duration_seconds"] == ["mqctl_lag_report_duration_seconds 61.5"]
    assert fam["mqctl_consumer_capture_timestamp_seconds"][0].endswith(" 1717236000")


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
    # no script at all (plotly.js was 4.8 MB of the 5.4 MB demo page)
    assert "<script" not in page and len(page) < 100_000
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)" in page
    assert "<b>x" not in page
    # lag, time lag and the rebalance timeline, drawn as SVG
    assert page.count('<svg class="overview') == 3
    assert 'class="st-WARN"' in page


def test_health_and_storm_thresholds():
    """the group health, the storm flag and the unowned share are --fail-on
    metrics (health in Burrow's group words)."""
    t = parse_threshold("health>=WARN")
    assert (t.column, t.value, t.shown_value()) == ("health_code", 1.0, "WARN")
    assert parse_threshold("group=GID_*:health==err").value == 2.0
    assert parse_threshold("in_storm==1").column == "in_storm"
    assert parse_threshold("unowned_share>=0.1").column == "unowned_share"
    with pytest.raises(UsageError) as e:
        parse_threshold("health>=STALL")  # a status word is not a health word
    assert "health must be one of OK, WARN, ERR" in e.value.message


def test_verdict_words():
    """a status says how many queues are in it and when it rests on a partial
    window; a group's health says why, worst first (mqctl/lagjob/verdicts.py)."""
    from mqctl.lagjob import verdicts as V

    dup = {"status": "STALL", "status_queues": 3, "queues": 8, "window_samples": 10,
           "complete": 1.0}
    assert V.status_text(dup, 10) == "STALL (3 of 8 queues)"
    one = {"status": "OK", "status_queues": 32, "queues": 32, "window_samples": 1,
           "complete": 0.0}
    assert V.status_text(one, 10) == "OK (window 1 of 10)"
    assert V.status_text({"status": None}, 10) is None
    # a group row counts the queues of its topics in that state, not its retry topic's
    grp = {"group_status": "STALL", "status_queues": 3, "queues": 10, "status_queues_of": 8}
    assert V.status_text(grp, None, "group_status") == "STALL (3 of 8 queues)"
    mixed = {"group_status": "OK", "in_storm": True, "storm_rule": "long-round",
             "storm_start_ts": 1717236000000, "storm_end_ts": 1717239600000, "storm_rounds": 1,
             "storm_events": 1686, "unowned_share": 0.27, "unowned_ms": 600_000,
             "unowned_now": 1, "online": True, "window_samples": 10, "complete": 1.0}
    assert V.health_reasons(mixed, window=10, storm_window_ms=600_000, round_max_ms=60_000,
                            storm_rounds=3, unowned_max=0.1) == [
        "rebalance storm from 2024-06-01 10:00:00 UTC to 2024-06-01 11:00:00 UTC: 1 round(s), "
        "1,686 event(s) (a round longer than 1m)",
        "queues unowned 27% of the time in the last 10m, 1 unowned at the latest capture"]
    # a little unowned time (a deploy) is no reason; an offline group's is STOP's
    calm = {**mixed, "in_storm": False, "unowned_share": 0.02, "unowned_now": 0}
    assert V.health_reasons(calm, unowned_max=0.1) == []
    assert V.health_reasons({"group_status": "STOP", "status_queues": 8, "queues": 8,
                             "unowned_share": 1.0, "unowned_ms": 1, "online": False},
                            unowned_max=0.1) == ["STOP (8 of 8 queues)"]
    assert V.health_reasons({"consume_type": "CONSUME_POP", "group_status": "OK"}) == [
        V.POP_NOTE]

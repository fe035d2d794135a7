"""report.html: the page (pure, mqctl.lagjob.html.render_html) on hand-built sections, and the
Spark half (collect_report_data) on small DataFrames with known owners, marks and bounds."""

from __future__ import annotations

import re

import pytest

from mqctl.lagjob import html as H
from mqctl.lagjob.html import sections, svg
from mqctl.lagjob.sqltext import sql_text
from mqctl.lagjob.verdicts import fmt_duration

T0 = 1717236000000  # 2024-06-01T10:00:00Z
MIN = 60_000
EVIL = '<img src=x onerror="alert(1)">'


def _queue(topic, broker, qid, rank, lags, secs=None):
    secs = secs or [float(v) / 10 for v in lags]
    return {"topic": topic, "broker": broker, "queue_id": qid, "rank": rank,
            "peak": max(v for v in lags if v is not None),
            "points": [(T0 + i * MIN, v, s)
                       for i, (v, s) in enumerate(zip(lags, secs, strict=True))]}


def sample_groups() -> tuple[list[dict], list[dict], list[dict]]:
    """Two groups a million apart (the demo's GID_AUDIT and GID_PAY), one hostile name:
    (groups, status_rows, series)."""
    big = [1_000_000 + i * 1000 for i in range(10)]
    small = [40, 40, 480, 480, 40, 40, 40, None, 40, 40]  # a spike, then one unknown capture
    series = ([{"group": "GID_AUDIT", "_gi": 0, "ts": T0 + i * MIN, "total_lag": v,
                "lag_seconds": 600.0 + i, "status_code": 4} for i, v in enumerate(big)]
              + [{"group": EVIL, "_gi": 1, "ts": T0 + i * MIN, "total_lag": v,
                  "lag_seconds": None if v is None else 1.0,
                  "status_code": 0 if i < 2 else 1} for i, v in enumerate(small)])
    status_rows = [
        {"cluster": "c1", "group": "GID_AUDIT", "topic": "TopicAudit", "status": "STOP",
         "total_lag": big[-1], "max_lag": 500_000, "lag_seconds": 609.0,
         "lag_seconds_source": "exact", "capture_ts": T0 + 9 * MIN},
        {"cluster": "c1", "group": EVIL, "topic": "TopicPay", "status": "WARN",
         "total_lag": 40, "max_lag": 20, "lag_seconds": None,
         "lag_seconds_source": "unknown", "capture_ts": T0 + 9 * MIN},
    ]
    audit = {
        "cluster": "c1", "group": "GID_AUDIT",
        "latest": {"group_status": "STOP", "total_lag": big[-1], "lag_seconds": 609.0,
                   "members": 0, "capture_ts": T0 + 9 * MIN},
        "totals": [s for s in series if s["_gi"] == 0],
        "queues": [_queue("TopicAudit", "broker-a", 0, 1, [v // 2 for v in big])],
        "lanes": [{"topic": "TopicAudit", "broker": "broker-a", "queue_id": 0, "rank": 1,
                   "runs": []}],
        "queue_count": 1, "runs_total": 0, "events": [], "storms": [], "takeovers": [],
        "unowned": [{"topic": "TopicAudit", "broker": "broker-a", "queue_id": 0,
                     "ts": T0, "end_ts": None, "n1": None, "other": "snapshot"}],
        "totals_by_kind": {"unowned": 1},
    }
    pay = {
        "cluster": "c1", "group": EVIL,
        "latest": {"group_status": "WARN", "total_lag": 40, "lag_seconds": None, "members": 2,
                   "capture_ts": T0 + 9 * MIN},
        "totals": [s for s in series if s["_gi"] == 1],
        "queues": [_queue("TopicPay", "broker-a", 0, 1, [20, 20, 240, 240, 20, 20, 20, 20,
                                                         20, 20]),
                   _queue("TopicPay", "broker-a", 1, 2, [20] * 10)],
        "lanes": [{"topic": "TopicPay", "broker": "broker-a", "queue_id": 0, "rank": 1,
                   "runs": [(T0, T0 + 4 * MIN, "10.0.0.1@1"),
                            (T0 + 5 * MIN, T0 + 9 * MIN, EVIL)]},
                  {"topic": "TopicPay", "broker": "broker-a", "queue_id": 1, "rank": 2,
                   "runs": [(T0, T0 + 9 * MIN, "10.0.0.1@1")]}],
        "queue_count": 5, "runs_total": 3,
        "events": [{"ts": T0 + 5 * MIN, "topic": "TopicPay", "client": EVIL, "n1": 1, "n2": 0,
                    "other": "rebalance"}],
        "storms": [{"ts": T0 + 3 * MIN, "end_ts": T0 + 6 * MIN, "n1": 3, "n2": 6,
                    "other": "a@1, b@2"}],
        "takeovers": [{"ts": T0 + 5 * MIN, "topic": "TopicPay", "broker": "broker-a",
                       "queue_id": 0, "client": EVIL, "other": "10.0.0.1@1"}],
        "unowned": [{"topic": "TopicPay", "broker": "broker-a", "queue_id": 0,
                     "ts": T0 + 4 * MIN, "end_ts": T0 + 5 * MIN, "n1": T0 + 3 * MIN,
                     "other": "snapshot"},
                    {"topic": "TopicPay", "broker": "broker-b", "queue_id": 3,
                     "ts": T0 + 4 * MIN, "end_ts": T0 + 5 * MIN, "n1": T0 + 3 * MIN,
                     "other": "client-log"}],
        "totals_by_kind": {"event": 250, "storm": 1, "unowned": 2, "takeover": 1},
    }
    return [audit, pay], status_rows, series


def sample_page() -> str:
    groups, status_rows, series = sample_groups()
    events = [{"ts": T0 + 5 * MIN, "group": EVIL, "client": "c@1", "topic": "TopicPay",
               "n_gained": 1, "n_lost": 0, "source_kind": "snapshot", "cause": "rebalance"}]
    storms = [{"group": EVIL, "start_ts": T0 + 3 * MIN, "end_ts": T0 + 6 * MIN, "rounds": 3}]
    return H.render_html(series=series, events=events, storms=storms, status_rows=status_rows,
                         meta={"title": "mqctl lag report", "subtitle": "generated now",
                               "first_ts": T0, "last_ts": T0 + 9 * MIN, "captures": 10,
                               "window": 10, "notes": ["n1"]},
                         groups=groups, limits=H.HtmlLimits())


def _section(page: str, gi: int) -> str:
    m = re.search(rf'<section class="group[^"]*" id="g-{gi}">(.*?)</section>', page, re.S)
    assert m, f"no section g-{gi}"
    return m.group(1)


def _ys(section: str, cls: str) -> list[list[float]]:
    """The y values of each polyline segment (or single point) of a line group."""
    g = re.search(rf'<g class="{re.escape(cls)}">(.*?)</g>', section, re.S)
    assert g, cls
    segs = [[float(p.split(",")[1]) for p in pts.split()]
            for pts in re.findall(r'points="([^"]+)"', g.group(1))]
    segs += [[float(cy)] for cy in re.findall(r'<circle cx="[^"]+" cy="([^"]+)"', g.group(1))]
    return segs


def test_header_legend_and_status_rows():
    page = sample_page()
    assert ("Captures from <b>2024-06-01 10:00:00 UTC</b> to <b>2024-06-01 10:09:00 UTC</b> "
            "(9m 0s, 10 capture(s))") in page
    legend = re.search(r'<section id="legend">(.*?)</section>', page, re.S).group(1)
    for status in ("STOP", "STALL", "REWIND", "WARN", "OK"):
        assert f'<span class="badge st-{status}">{status}</span>' in legend
    for col in ("lag", "max lag", "time lag", "time lag source", "complete", "capture"):
        assert f"<dt>{col}</dt>" in legend
    table = re.search(r'<table class="status">(.*?)</table>', page, re.S).group(1)
    rows = re.findall(r"<tr( class=\"[^\"]*\")?>", table.split("<tbody>")[1])
    assert rows == [' class="st-STOP"', ' class="st-WARN"']  # a colour per row
    assert '<td class="num" title="609.0 s">10m 9s</td>' in table  # not "lag s 609.0"
    assert "<td class=\"num\">1,009,000</td>" in table
    # an unknown time lag is "-", never 0
    assert re.search(r"<td>unknown</td>", table) and '<td class="num">-</td>' in table


def test_one_timeline_per_group_on_per_group_log_scales():
    page = sample_page()
    assert page.count('<svg class="timeline"') == 2
    audit, pay = _section(page, 0), _section(page, 1)
    assert ">1M</text>" in audit and ">1M</text>" not in pay  # each group its own scale
    assert ">1k</text>" in pay
    # GID_PAY's spike 40 -> 480 spans a third of its panel: visible, not flattened by 1M
    (seg1, seg2) = _ys(pay, "lag total")  # the unknown capture breaks the line in two
    assert len(seg1) == 7 and len(seg2) == 2
    assert min(seg1) < seg1[0] - 35  # y grows downwards
    assert seg2[0] == pytest.approx(seg1[0])
    # a group's lag line sits in its own panel (the top tick is above its maximum)
    top = float(re.search(r'<line class="grid" x1="\d+" x2="\d+" y1="([\d.]+)"[^>]*/>'
                          r'<text class="tick"[^>]*>1M</text>', audit).group(1))
    assert min(y for seg in _ys(audit, "lag total") for y in seg) >= top


def test_owners_unowned_marks_and_bounds():
    pay = _section(sample_page(), 1)
    owners = re.findall(r'<rect class="own"[^>]*fill="([^"]+)"', pay)
    assert len(owners) == 3 and len(set(owners)) == 2  # two clients, two colours
    assert pay.count('<rect class="unowned"') == 1  # broker-b:3 has no lane: listed instead
    assert pay.count('<path class="event cause-rebalance"') == 1
    assert pay.count('<path class="takeover"') == 1
    assert pay.count('<rect class="storm"') == 1
    statuses = re.findall(r'<rect class="status st-(\w+)"', pay)
    assert statuses == ["OK", "WARN"]  # runs of one status merge into one rectangle
    bounds = re.search(r'<p class="bounds">(.*?)</p>', pay).group(1)
    assert "lines: 2 of 5 queue(s), highest peak lag first" in bounds
    assert "rebalance events: the latest 1 of 250" in bounds
    assert "1 unowned period(s) on queues without a lane" in bounds
    assert "<summary>Unowned periods (2)</summary>" in pay
    assert "<summary>Lock takeovers (1)</summary>" in pay


def test_hostile_names_are_escaped_everywhere():
    page = sample_page()
    assert "<img" not in page
    assert 'onerror="alert' not in page
    assert page.count("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;") >= 5
    assert page.count("</script>") == page.count("<script")
    ids = re.findall(r'id="([^"]+)"', page)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids)  # never from a name


def test_page_without_sections_and_without_captures():
    page = H.render_html(series=[], events=[], storms=[], status_rows=[],
                         meta={"title": "t", "subtitle": "s"})
    assert "No capture in the inputs" in page and '<svg class="timeline"' not in page
    assert "(none)" in page


@pytest.mark.parametrize(("seconds", "text"), [
    (None, "-"), (0, "0s"), (1.25, "1.2s"), (59, "59s"), (60, "1m 0s"), (5550.5, "1h 32m"),
    (10900, "3h 1m"), (90000, "1d 1h"), (float("nan"), "-")])
def test_fmt_duration(seconds, text):
    assert fmt_duration(seconds) == text


def test_downsample_keeps_each_buckets_maximum():
    rows = [{"ts": i * 1000, "total_lag": i, "lag_seconds": None if i % 2 else float(i),
             "status_code": 1 if i == 5 else 0} for i in range(100)]
    out = sections.downsample(rows, 10)
    assert len(out) == 10
    assert [r["total_lag"] for r in out] == [9, 19, 29, 39, 49, 59, 69, 79, 89, 99]
    assert [r["lag_seconds"] for r in out] == [8.0, 18.0, 28.0, 38.0, 48.0, 58.0, 68.0, 78.0,
                                               88.0, 98.0]
    assert [r["status_code"] for r in out][:2] == [1, 0]
    assert sections.downsample(rows[:5], 10) == rows[:5]


# ---- the Spark half --------------------------------------------------------------------------

LAG_SCHEMA = ("cluster string, `group` string, topic string, broker string, queue_id int, "
              "capture_ts long, lag long, lag_seconds double, owner string")
GT_SCHEMA = ("cluster string, `group` string, topic string, capture_ts long, total_lag long, "
             "lag_seconds double, group_status_code int")
EV_SCHEMA = ("ts long, cluster string, `group` string, topic string, client string, "
             "n_gained int, n_lost int, cause string, source_kind string")
ST_SCHEMA = ("cluster string, `group` string, start_ts long, end_ts long, rounds long, "
             "events long, clients array<string>")
UN_SCHEMA = ("cluster string, `group` string, topic string, broker string, queue_id int, "
             "since_ts long, start_ts long, end_ts long, source_kind string")
LK_SCHEMA = ("ts long, cluster string, `group` string, topic string, broker string, "
             "queue_id int, client string, prev_client string, takeover boolean")


def test_collect_report_data_bounds_and_owner_runs(spark):
    pytest.importorskip("pyspark")
    lag, gt = [], []
    for c in range(6):  # 6 captures; G_A: 3 queues, G_B (no cluster): 1 queue never owned
        ts = T0 + c * MIN
        for qid, scale in ((0, 100), (1, 1), (2, 10)):
            owner = ("a@1" if c < 2 else None if c == 2 else "b@2") if qid == 0 else "a@1"
            lag.append(("c1", "G_A", "T", "bk", qid, ts, scale * (c + 1), float(c), owner))
        lag.append((None, "G_B", "T", "bk", 0, ts, 5, None, None))
        gt.append(("c1", "G_A", "T", ts, 111 * (c + 1), float(c), 1))
        gt.append((None, "G_B", "T", ts, 5, None, 4))
    lag.append(("c1", "G_OTHER", "T", "bk", 0, T0, 7, 1.0, "x@1"))  # not charted
    gt.append(("c1", "G_OTHER", "T", T0, 7, 1.0, 0))
    events = [(T0 + i * 1000, "c1", "G_A", "T", f"e{i}@1", 1, 0, "rebalance", "snapshot")
              for i in range(5)]
    unowned = [("c1", "G_A", "T", "bk", 0, T0 + MIN, T0 + 2 * MIN, T0 + 3 * MIN, "snapshot"),
               (None, "G_B", "T", "bk", 0, None, T0, None, "snapshot")]
    locks = [(T0 + 3 * MIN, "c1", "G_A", "T", "bk", 0, "b@2", "a@1", True),
             (T0 + 3 * MIN, "c1", "G_A", "T", "bk", 1, "a@1", None, False)]
    storms = [("c1", "G_A", T0, T0 + 2 * MIN, 3, 5, ["a@1", "b@2"])]
    df = spark.createDataFrame
    groups = [{"cluster": None, "group": "G_B", "group_status": "STOP"},
              {"cluster": "c1", "group": "G_A", "group_status": "WARN"},
              {"cluster": "c1", "group": "G_OTHER", "group_status": "OK"}]
    data = H.collect_report_data(
        spark, gt=df(gt, GT_SCHEMA), lag=df(lag, LAG_SCHEMA), events=df(events, EV_SCHEMA),
        storms=df(storms, ST_SCHEMA), unowned=df(unowned, UN_SCHEMA),
        locks=df(locks, LK_SCHEMA), group_rows=groups,
        limits=H.HtmlLimits(groups=2, lines=2, lanes=3, marks=3, timeline_events=4))
    # G_OTHER is not charted, so the range comes from every group's captures
    assert (data.first_ts, data.last_ts, data.captures) == (T0, T0 + 5 * MIN, 6)
    b, a = data.groups
    assert (b["group"], b["cluster"], a["group"]) == ("G_B", "", "G_A")
    assert [s["total_lag"] for s in a["totals"]] == [111 * (c + 1) for c in range(6)]
    assert [s["status_code"] for s in b["totals"]] == [4] * 6
    # lines: the 2 queues with the highest peak lag; lanes: all 3
    assert [(q["queue_id"], q["peak"]) for q in a["queues"]] == [(0, 600), (2, 60)]
    assert [p[1] for p in a["queues"][0]["points"]] == [100, 200, 300, 400, 500, 600]
    assert a["queue_count"] == 3 and len(a["lanes"]) == 3
    lane0 = next(ln for ln in a["lanes"] if ln["queue_id"] == 0)
    # a@1 until the capture without owner, then b@2 to the last capture
    assert lane0["runs"] == [(T0, T0 + 2 * MIN, "a@1"), (T0 + 3 * MIN, T0 + 5 * MIN, "b@2")]
    lane1 = next(ln for ln in a["lanes"] if ln["queue_id"] == 1)
    assert lane1["runs"] == [(T0, T0 + 5 * MIN, "a@1")]
    assert b["lanes"][0]["runs"] == [] and len(b["unowned"]) == 1  # never owned: unowned
    # marks: per group the latest `marks` of each kind, with how many there were
    assert [e["client"] for e in a["events"]] == ["e2@1", "e3@1", "e4@1"]
    assert a["totals_by_kind"]["event"] == 5
    assert [(k["client"], k["other"]) for k in a["takeovers"]] == [("b@2", "a@1")]
    assert [(s["n1"], s["other"]) for s in a["storms"]] == [(3, "a@1, b@2")]
    # the overview keeps the latest `timeline_events` of all groups
    assert [e["client"] for e in data.events] == ["e4@1", "e3@1", "e2@1", "e1@1"]
    assert [s["rounds"] for s in data.storms] == [3]
    page = H.render_html(series=data.series, events=data.events, storms=data.storms,
                         status_rows=[], meta={"first_ts": data.first_ts,
                                               "last_ts": data.last_ts},
                         groups=data.groups)
    assert page.count('<svg class="timeline"') == 2


@pytest.mark.parametrize("vmax", [0, 1, 40, 480, 832_000, 1e15, 2.0**63 - 1])
def test_log_axis_covers_the_maximum_with_few_labels(vmax):
    ticks = svg.lag_ticks(vmax)
    assert ticks[0] == (0, "0") and ticks[-1][0] >= vmax
    assert 2 <= len(ticks) <= 9
    assert len({label for _, label in ticks}) == len(ticks)
    secs = svg.sec_ticks(vmax)
    assert secs[0] == (0, "0") and (secs[-1][0] >= vmax or secs[-1][1] == "100d")


def test_owner_lane_shows_an_unknown_owner_as_such(spark):
    """a capture where the owner did not answer (lag/ owner_unknown) is an
    unknown-owner run in the lane (not a gap read as no owner), and the page says why."""
    lag, gt = [], []
    for c in range(4):
        ts = T0 + c * MIN
        lag.append(("c1", "G", "T", "bk", 0, ts, 5, 1.0, None if c == 2 else "a@1", c == 2))
        gt.append(("c1", "G", "T", ts, 5, 1.0, 0))
    df = spark.createDataFrame
    data = H.collect_report_data(
        spark, gt=df(gt, GT_SCHEMA), lag=df(lag, LAG_SCHEMA + ", owner_unknown boolean"),
        events=df([], EV_SCHEMA), storms=df([], ST_SCHEMA), unowned=df([], UN_SCHEMA),
        locks=df([], LK_SCHEMA), group_rows=[{"cluster": "c1", "group": "G",
                                              "group_status": "OK"}])
    (g,) = data.groups
    assert g["lanes"][0]["runs"] == [(T0, T0 + 2 * MIN, "a@1"),
                                     (T0 + 2 * MIN, T0 + 3 * MIN, H.OWNER_UNKNOWN),
                                     (T0 + 3 * MIN, T0 + 3 * MIN, "a@1")]
    page = H.render_html(series=data.series, events=data.events, storms=data.storms,
                         status_rows=[], meta={"first_ts": data.first_ts,
                                               "last_ts": data.last_ts}, groups=data.groups)
    assert page.count('class="own-unknown"') == 1 and "did not answer" in page
    assert "owner-unknown" not in page.split("owners:", 1)[-1].split("</div>", 1)[0]


@pytest.mark.parametrize("text", ["plain", "o'brien", "back\\slash", "\\'", "'; DROP x --",
                                  "\\u0041 stays", "tab\there\nnewline", "\u0001sep\u0001",
                                  "%_like", "日本語", ""])
def test_sql_text_reads_back_as_the_same_string(spark, text):
    key = "spark.sql.parser.escapedStringLiterals"  # a session may set it: the same either way
    before = spark.conf.get(key)
    try:
        for escaped in ("false", "true"):
            spark.conf.set(key, escaped)
            assert spark.sql("SELECT " + sql_text(text) + " AS v").first()["v"] == text
            # as a pattern too (the snapshot checks' regular expressions)
            assert spark.sql(f"SELECT {sql_text(text)} RLIKE {sql_text(re.escape(text))} AS m"
                             ).first()["m"] is True
    finally:
        spark.conf.set(key, before)


def test_names_with_quotes_and_backslashes_are_picked_and_ranked(spark):
    """The page picks groups and ranks queues with SQL text (collect._map_sql): a name that
    holds a quote or a backslash (RocketMQ forbids both; a snapshot may still carry them)
    finds its own rows, not another's and not none."""
    cl, grp, topic, broker = "c'1", "G\\'A", "T'\\", "b\\k'"
    lag, gt = [], []
    for c in range(3):
        ts = T0 + c * MIN
        for qid in (0, 1):
            lag.append((cl, grp, topic, broker, qid, ts, (qid + 1) * (c + 1), 1.0, "a@1"))
        lag.append((cl, "G\\A", topic, broker, 0, ts, 99, 1.0, "z@1"))  # one quote less
        gt.append((cl, grp, topic, ts, 3 * (c + 1), 1.0, 0))
        gt.append((cl, "G\\A", topic, ts, 99, 1.0, 0))
    df = spark.createDataFrame
    data = H.collect_report_data(
        spark, gt=df(gt, GT_SCHEMA), lag=df(lag, LAG_SCHEMA), events=df([], EV_SCHEMA),
        storms=df([], ST_SCHEMA), unowned=df([], UN_SCHEMA), locks=df([], LK_SCHEMA),
        group_rows=[{"cluster": cl, "group": grp, "group_status": "OK"}])
    (g,) = data.groups
    assert (g["group"], g["cluster"]) == (grp, cl)
    assert [s["total_lag"] for s in g["totals"]] == [3, 6, 9]
    assert [(q["queue_id"], q["peak"]) for q in g["queues"]] == [(1, 6), (0, 3)]
    assert [p[1] for p in g["queues"][0]["points"]] == [2, 4, 6]
    assert {ln["queue_id"] for ln in g["lanes"]} == {0, 1}

"""report.html carries no raw control or bidi character from cluster data: a client id with
ESC, BEL, a C1 control, an OSC 52 clipboard write or U+202E (a real client id can be anything
the application sets) is escaped in the page as the terminal shows it (``\\x1b``,
``\\u202e``: mqctl.render.printable), in every table, tooltip (SVG ``<title>``), label and
note. Pure: the page is rendered from hand-built sections, no Spark."""

from __future__ import annotations

import re
import unicodedata

import pytest

from mqctl.lagjob import html as H

T0 = 1717236000000
MIN = 60_000
OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # writes "rm -rf ~" to the terminal's clipboard
HOSTILE = {
    "esc": "\x1b[31mred\x1b[0m",
    "bel": "ding\x07",
    "c1": "csi\x9b2J",
    "osc52": OSC52,
    "rlo": "abc\u202edcba",
    "isolate": "x\u2066y\u2069",
    "line-sep": "a\u2028b",
    "del": "d\x7fel",
    "nul": "n\x00ul",
    "zwj-bom": "z\u200dw\ufeffj",
}


def page_with(name: str) -> str:
    """The page with ``name`` in every place cluster text goes: cluster, group, topic,
    broker, client ids (owners, events, takeovers, storms), notes."""
    def q(qid, rank, lags):
        return {"topic": f"T{name}", "broker": f"b{name}", "queue_id": qid, "rank": rank,
                "peak": max(lags), "points": [(T0 + i * MIN, v, v / 10.0)
                                              for i, v in enumerate(lags)]}

    group = f"G{name}"
    client = f"10.0.0.1@1{name}"
    series = [{"group": group, "_gi": 0, "ts": T0 + i * MIN, "total_lag": 10 + i,
               "lag_seconds": 1.0 + i, "status_code": 1} for i in range(5)]
    status_rows = [{"cluster": f"c{name}", "group": group, "topic": f"T{name}",
                    "status": "WARN", "total_lag": 14, "max_lag": 7, "lag_seconds": 5.0,
                    "lag_seconds_source": "exact", "capture_ts": T0 + 4 * MIN,
                    "health": "WARN", "health_reasons": f"status WARN {name}"}]
    g = {
        "cluster": f"c{name}", "group": group,
        "latest": {"group_status": "WARN", "total_lag": 14, "lag_seconds": 5.0, "members": 2,
                   "capture_ts": T0 + 4 * MIN, "health": "WARN"},
        "totals": series,
        "queues": [q(0, 1, [5, 6, 7, 8, 9]), q(1, 2, [5, 5, 5, 5, 5])],
        "lanes": [{"topic": f"T{name}", "broker": f"b{name}", "queue_id": 0, "rank": 1,
                   "runs": [(T0, T0 + 2 * MIN, client), (T0 + 2 * MIN, T0 + 4 * MIN, None),
                            (T0 + 3 * MIN, T0 + 4 * MIN, f"other{name}")]}],
        "queue_count": 2, "runs_total": 3,
        "events": [{"ts": T0 + 2 * MIN, "topic": f"T{name}", "client": client, "n1": 1,
                    "n2": 0, "other": f"rebalance{name}"}],
        "storms": [{"ts": T0 + MIN, "end_ts": T0 + 3 * MIN, "n1": 3, "n2": 6,
                    "other": f"{client}, b@2"}],
        "takeovers": [{"ts": T0 + 3 * MIN, "topic": f"T{name}", "broker": f"b{name}",
                       "queue_id": 0, "client": client, "other": f"x{name}"}],
        "unowned": [{"topic": f"T{name}", "broker": f"b{name}", "queue_id": 1,
                     "ts": T0 + MIN, "end_ts": T0 + 2 * MIN, "n1": T0, "other": f"s{name}"}],
        "totals_by_kind": {"event": 1, "storm": 1, "unowned": 1, "takeover": 1},
    }
    events = [{"ts": T0 + 2 * MIN, "group": group, "client": client, "topic": f"T{name}",
               "n_gained": 1, "n_lost": 0, "source_kind": "snapshot", "cause": "rebalance"}]
    storms = [{"group": group, "start_ts": T0 + MIN, "end_ts": T0 + 3 * MIN, "rounds": 3}]
    return H.render_html(series=series, events=events, storms=storms, status_rows=status_rows,
                         meta={"title": f"mqctl lag report {name}", "subtitle": f"sub {name}",
                               "first_ts": T0, "last_ts": T0 + 4 * MIN, "captures": 5,
                               "window": 10, "notes": [f"note about {client}"]},
                         groups=[g], limits=H.HtmlLimits())


def raw_controls(page: str) -> list[str]:
    """Every character of the page that could drive a terminal or reorder text: C0 controls
    but the newline the page is laid out with, DEL, C1, line and paragraph separators, and
    the format characters (bidi overrides and isolates, zero-width ones, BOM)."""
    return [f"U+{ord(c):04X}" for c in page if c != "\n" and (
        ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F
        or unicodedata.category(c) in ("Cf", "Zl", "Zp", "Cc", "Cs"))]


@pytest.mark.parametrize("kind", HOSTILE)
def test_no_raw_control_or_bidi_character_anywhere_in_the_page(kind):
    page = page_with(HOSTILE[kind])
    assert raw_controls(page) == [], kind
    # the name is still there, escaped as the terminal shows it
    from mqctl.render import printable

    shown = printable(HOSTILE[kind]).replace("&", "&amp;").replace("<", "&lt;")
    assert shown in page
    assert page.count(shown) >= 8  # tables, tooltips, labels, the legend, the notes


def test_osc52_cannot_write_the_clipboard_from_the_page():
    page = page_with(OSC52)
    assert "\x1b]" not in page and "\x07" not in page
    assert "\\x1b]52;c;cm0gLXJmIH4K\\x07" in page
    tooltips = re.findall(r"<title>(.*?)</title>", page, re.S)
    assert any("\\x1b]52" in t for t in tooltips)


def test_the_page_escape_is_the_terminals_then_html():
    from mqctl.lagjob.html.text import E

    assert E('<a href="x">\x1b[2J\u202e') == "&lt;a href=&quot;x&quot;&gt;\\x1b[2J\\u202e"
    assert E("GID_PAY") == "GID_PAY"
    assert E("组") == "组"  # printable text stays as it is

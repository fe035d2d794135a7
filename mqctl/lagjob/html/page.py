"""The lag report's page (``DIR/report.html``, pure): a header with the first and last
capture, a legend of the statuses and columns, the status table (a colour per row: the
group's health; the status cell coloured by status), a section per group with its timeline
(:mod:`.charts`) and what the bounds left out, and the overview charts of every charted
group. One self-contained file: no script, nothing fetched."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mqctl.lagjob.html.charts import group_timeline, overview_lines, overview_timeline
from mqctl.lagjob.html.data import OWNER_UNKNOWN, HtmlLimits
from mqctl.lagjob.html.palette import CAUSE_COLOURS, HEALTH_COLOURS, PALETTE, STATUS_COLOURS
from mqctl.lagjob.html.svg import lag_ticks, sec_ticks
from mqctl.lagjob.html.text import E, fmt_count, qid, qname, utc_text
from mqctl.lagjob.verdicts import fmt_duration

HEALTH_MEANING = {
    "ERR": "The status is REWIND, STALL or STOP, or the group is in a rebalance storm, or its "
           "queues were unowned for --unowned-max of the time in the last --storm-window "
           "(the why column says which).",
    "WARN": "The status is WARN: the consumers move but fall behind.",
    "OK": "The status is OK, no storm, queues owned.",
    "-": "Unknown: the report cannot judge the group (a BROADCASTING group keeps its offsets "
         "in the clients; a group seen only in logs has no offsets in the inputs).",
}
STATUS_MEANING = {
    "OK": "Caught up at some capture of the window (lag <= --allowed-lag, or time lag <= "
          "--allowed-lag-seconds), or consuming with the lag going down.",
    "WARN": "The consumer moves, but the lag never went down between two captures of the "
            "window: it is falling behind.",
    "REWIND": "The committed offset went backwards in the window (an offset reset, or a "
              "re-commit after a rebalance) and did not get back: messages are read again.",
    "STALL": "The group is online but the committed offset did not move over the whole "
             "window while messages wait: the consumers are stuck.",
    "STOP": "Nobody consumes: the group has no members, or (membership unknown) the offset "
            "did not move over the window while the lag grew.",
}
COLUMN_MEANING = [
    ("cluster, group, topic", "What was measured; one row per group and topic."),
    ("health", "The group's health (legend above): its status, rebalance storms and unowned "
               "queues together; the row has its colour."),
    ("status", "The worst status of the topic's queues at the latest capture (legend above), "
               "with how many queues are in it (STALL, 3 of 8 queues) and, hatched, when it "
               "rests on fewer captures than the window (window 1 of 10)."),
    ("lag", "Messages not yet consumed, summed over the topic's queues: broker max offset "
            "minus the group's committed offset. A queue the group never committed (consumer "
            "offset none) counts its whole queue, as mqadmin's Diff does: where its consumers "
            "would start depends on their consumeFromWhere (the notes count such queues)."),
    ("max lag", "The largest lag of a single queue."),
    ("time lag", "How old the oldest unconsumed message is (the slowest queue): how far "
                 "behind the group is in time."),
    ("time lag source", "exact: the broker measured it (QUERY_CONSUME_TIME_SPAN); "
                        "interpolated: dated from the captured max-offset history; "
                        "lower_bound: older than the first capture, so at least this; "
                        "unknown: nothing to date it with."),
    ("consume/s, produce/s", "Messages per second consumed and produced since the previous "
                             "capture, summed over the queues."),
    ("complete", "Fraction of the queues whose status window is full (1 = a full window of "
                 "captures seen)."),
    ("capture", "When the latest capture of the group and topic was taken (UTC)."),
    ("why", "What makes the group's health what it is, and what the report cannot judge."),
    ("-", "Unknown: mqctl could not know the value (never shown as 0)."),
]
# the owner of a lane run whose owner could not be read (snapshot owner_unknown)

# --------------------------------------------------------------------------------------------
# the page

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:1.2em 1.6em;color:#222;
max-width:1200px}
h1{font-size:1.45em;margin-bottom:.2em} h2{font-size:1.2em;margin-top:1.6em;
border-bottom:1px solid #ddd;padding-bottom:.15em} h3{font-size:1.05em;margin:.2em 0}
table{border-collapse:collapse;font-size:.85em} td,th{border:1px solid #ddd;padding:3px 6px}
th{background:#f4f4f4;text-align:left} td.num{text-align:right;font-variant-numeric:tabular-nums}
td.time,td.num{white-space:nowrap}
.meta{color:#555;font-size:.9em;margin:.2em 0} .range{font-size:1.05em;margin:.3em 0}
.warnings{border:1px solid #c99700;background:#fff6d8;padding:.3em .8em;margin:.6em 0}
.warnings li{margin:.2em 0}
tr.st-OK td{background:#eef8ee} tr.st-WARN td{background:#fff6d8}
tr.st-REWIND td{background:#ffead6} tr.st-STALL td{background:#ffe1d6}
tr.st-STOP td{background:#ffd6da}
tr.h-OK td{background:#eef8ee} tr.h-WARN td{background:#fff6d8} tr.h-ERR td{background:#ffd6da}
tr.unknown td{background:#f0f0f0;color:#555}
td.status.st-OK{color:#1f6b1f} td.status.st-WARN{color:#8a6700}
td.status.st-REWIND,td.status.st-STALL,td.status.st-STOP{color:#a01020;font-weight:600}
td.status.partial{background-image:repeating-linear-gradient(135deg,transparent 0 5px,
rgba(0,0,0,.07) 5px 8px)}
td.health{font-weight:700} td.h-OK{color:#1f6b1f} td.h-WARN{color:#8a6700}
td.h-ERR{color:#a01020} td.why{font-size:.85em;min-width:16em;max-width:30em}
td.status{white-space:nowrap}
.badge.h-OK{background:#3a9d3a} .badge.h-WARN{background:#c99700}
.badge.h-ERR{background:#c0162c} .badge.h-none{background:#888}
ul.why{font-size:.86em;margin:.1em 0 .4em;padding-left:1.2em;color:#5a0010}
svg .pop-note{fill:#444;font-size:10px;font-style:italic}
.badge{display:inline-block;padding:0 .45em;border-radius:3px;color:#fff;font-weight:600;
font-size:.85em}
.badge.st-OK{background:#3a9d3a} .badge.st-WARN{background:#c99700}
.badge.st-REWIND{background:#e07b00} .badge.st-STALL{background:#d2502a}
.badge.st-STOP{background:#c0162c} .badge.st-none{background:#888}
dl.legend{display:grid;grid-template-columns:max-content 1fr;gap:.2em .8em;font-size:.88em;
margin:.4em 0} dl.legend dt{font-weight:600} dl.legend dd{margin:0}
section.group{border:1px solid #ddd;border-left:6px solid #888;border-radius:4px;
padding:.5em .8em;margin:1em 0}
section.group.st-OK{border-left-color:#3a9d3a} section.group.st-WARN{border-left-color:#c99700}
section.group.st-REWIND{border-left-color:#e07b00}
section.group.st-STALL{border-left-color:#d2502a} section.group.st-STOP{border-left-color:#c0162c}
.facts{font-size:.88em;margin:.2em 0 .4em} .bounds{font-size:.8em;color:#666;margin:.3em 0}
svg.timeline{width:100%;height:auto;display:block;font-size:10px}
svg .grid{stroke:#e8e8e8} svg .vgrid{stroke:#efefef} svg .axis{stroke:#888}
svg .tick{fill:#555;font-size:9px} svg .plabel{fill:#222;font-size:10px;font-weight:600}
svg .lane{fill:#333;font-size:9px}
.keys{font-size:.8em;display:flex;flex-wrap:wrap;gap:.2em 1em;margin:.2em 0}
.sw{display:inline-block;width:.9em;height:.9em;vertical-align:-.1em;margin-right:.25em;
border-radius:2px} .sw.line{height:.25em;vertical-align:.2em}
nav.toc a{margin-right:.7em;white-space:nowrap;font-size:.9em}
details{font-size:.88em;margin:.2em 0} summary{cursor:pointer}
section.group.h-ERR{border-left-color:#c0162c} section.group.h-WARN{border-left-color:#c99700}
svg.overview{width:100%;height:auto;display:block;font-size:10px}
div.scroll{overflow-x:auto}
"""


def _health_badge(health: Any) -> str:
    name = str(health) if health in HEALTH_COLOURS else None
    return (f'<span class="badge h-{name}">{name}</span>' if name
            else '<span class="badge h-none">-</span>')


def _badge(status: Any) -> str:
    name = str(status) if status in STATUS_COLOURS else None
    return (f'<span class="badge st-{name}">{name}</span>' if name
            else '<span class="badge st-none">-</span>')


_STATUS_COLUMNS: list[tuple[str, str, str]] = [
    ("cluster", "cluster", "text"), ("group", "group", "text"), ("topic", "topic", "text"),
    ("health", "health", "health"), ("status", "status", "status"),
    ("total_lag", "lag", "count"),
    ("max_lag", "max lag", "count"), ("lag_seconds", "time lag", "duration"),
    ("lag_seconds_source", "time lag source", "text"), ("consume_rate", "consume/s", "rate"),
    ("produce_rate", "produce/s", "rate"), ("complete", "complete", "fraction"),
    ("health_reasons", "why", "reasons"), ("capture_ts", "capture", "time"),
]


def _cell(kind: str, v: Any, row: dict[str, Any] | None = None) -> str:
    """One cell of the status table, by the column's kind (:data:`_STATUS_COLUMNS`)."""
    if kind == "reasons":  # the first reason; all of them in the tooltip and the section
        items = [str(x) for x in (v or [])]
        more = f" (+{len(items) - 1})" if len(items) > 1 else ""
        return (f'<td class="why" title="{E("; ".join(items))}">{E(items[0])}{E(more)}</td>'
                if items else "<td></td>")
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return '<td class="num">-</td>' if kind not in ("text", "status", "health") \
            else "<td>-</td>"
    if kind == "status":  # with the queues in it and the window it rests on
        text = str((row or {}).get("status_text") or v)
        partial = " partial" if "window " in text else ""
        return f'<td class="status st-{E(str(v))}{partial}">{E(text)}</td>'
    fmt = _CELLS.get(kind)
    if fmt is not None:
        return fmt(v)
    if isinstance(v, (list, tuple)):
        v = " ".join(str(x) for x in v)
    return f"<td>{E(str(v))}</td>"


# a known value of each simple kind of cell
_CELLS: dict[str, Callable[[Any], str]] = {
    "health": lambda v: f'<td class="health h-{E(str(v))}">{E(str(v))}</td>',
    "count": lambda v: f'<td class="num">{fmt_count(v)}</td>',
    "duration": lambda v: f'<td class="num" title="{float(v):.1f} s">{E(fmt_duration(v))}</td>',
    "rate": lambda v: f'<td class="num">{float(v):,.1f}</td>',
    # epoch ms, or an ISO string (capture_time) as given
    "time": lambda v: f'<td class="time">{E(v if isinstance(v, str) else utc_text(v))}</td>',
    "fraction": lambda v: f'<td class="num">{float(v):.2f}</td>',
}


def _status_table(rows: list[dict[str, Any]]) -> str:
    tips = {c: m for cs, m in COLUMN_MEANING for c in cs.split(", ")}
    # one cluster: no cluster column (its name is in the header of every group section)
    columns = [c for c in _STATUS_COLUMNS
               if c[0] != "cluster" or len({r.get("cluster") for r in rows if r.get("cluster")})
               > 1]
    head = "".join(f'<th title="{E(tips.get(h, ""))}">{E(h)}</th>' for _, h, _ in columns)
    body = []
    for r in rows:
        # the row's colour: the group's health (a storm makes an OK status red), else the
        # status; a row that cannot be judged is grey ("unknown")
        h, st = r.get("health"), r.get("status")
        cls = (f"h-{h}" if h in HEALTH_COLOURS else f"st-{st}" if st in STATUS_COLOURS
               else "unknown")
        body.append(f'<tr class="{E(cls)}">' + "".join(
            _cell(kind, r.get(k) if k != "capture_ts" else r.get(k, r.get("capture_time")), r)
            for k, _, kind in columns) + "</tr>")
    if not rows:
        body.append(f'<tr><td colspan="{len(columns)}">(none)</td></tr>')
    return (f'<div class="scroll"><table class="status"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _legend(window: Any) -> str:
    w = f"the last {window} captures" if window else "the status window"
    st = "".join(f"<dt>{_badge(s)}</dt><dd>{E(STATUS_MEANING[s])}</dd>"
                 for s in ("STOP", "STALL", "REWIND", "WARN", "OK"))
    hl = "".join(f"<dt>{_health_badge(h if h != '-' else None)}</dt><dd>{E(m)}</dd>"
                 for h, m in HEALTH_MEANING.items())
    cols = "".join(f"<dt>{E(c)}</dt><dd>{E(m)}</dd>" for c, m in COLUMN_MEANING)
    return ('<section id="legend"><h2>Legend</h2>'
            f"<p class=\"meta\">Status per queue over {E(w)} (Burrow's rules, "
            "docs/exports.md section 4); a topic has its worst queue's status, a group its "
            "worst topic's. Severity: OK &lt; WARN &lt; REWIND &lt; STALL &lt; STOP.</p>"
            f'<dl class="legend status-legend">{st}</dl>'
            "<h3>Health</h3><p class=\"meta\">One verdict per group in Burrow's group words; "
            "it also counts what the lag status does not see (docs/exports.md section "
            "4.1).</p>"
            f'<dl class="legend health-legend">{hl}</dl>'
            f'<h3>Columns</h3><dl class="legend column-legend">{cols}</dl>'
            "<h3>Group timelines</h3>"
            '<dl class="legend timeline-legend">'
            "<dt>lag, time lag</dt><dd>Black: the group (total lag; time lag of its slowest "
            "queue). Coloured: its queues with the highest peak lag. Log scales, so 40 "
            "messages and a million are both readable; a gap in a line is an unknown value."
            "</dd><dt>status</dt><dd>The group's status at each capture.</dd>"
            "<dt>owners</dt><dd>One lane per queue, coloured by the client that owned it, "
            "from the first capture that showed that owner to the first that did not. A "
            "dashed red box: nobody owned the queue (rebalance/unowned). A dotted grey box: "
            "the owner is unknown, a member did not answer its running info (not a loss: "
            "the previous owner is carried across). An empty lane: no owner was reported "
            "(unknown). A pop group has no lanes: the broker hands out messages of every "
            "queue to whichever client pops, so no client owns a queue.</dd>"
            "<dt>marks</dt><dd>Triangles: rebalance events of a client, coloured by cause "
            "here and in the overview (blue rebalance, grey stop, red crash, purple offset "
            "reset); orange diamonds: lock takeovers; shaded red bands: rebalance storms. "
            "Hover any mark for details.</dd></dl></section>")


def _group_section(gi: int, g: dict[str, Any], status_rows: list[dict[str, Any]],
                   t0: int, t1: int, lim: HtmlLimits | None) -> str:
    """One group's section: its badges and facts, why its health is what it is, its
    timeline with the keys of its lines and owners, what the bounds left out, and the
    unowned periods and lock takeovers as tables."""
    latest = g.get("latest") or {}
    status = latest.get("group_status")
    name = str(status) if status in STATUS_COLOURS else "none"
    health = latest.get("health")
    hname = str(health) if health in HEALTH_COLOURS else "none"
    clients: list[str] = []
    for ln in g["lanes"]:
        for _, _, owner in ln["runs"]:
            if str(owner) not in clients and owner != OWNER_UNKNOWN:
                clients.append(str(owner))
    owner_colour = {c: PALETTE[i % len(PALETTE)] for i, c in enumerate(clients)}
    cl = f' <span class="meta">cluster {E(g["cluster"])}</span>' if g["cluster"] else ""
    parts = [f'<section class="group st-{name} h-{hname}" id="g-{gi}">',
             f"<h3>{_health_badge(health)} {_badge(status)} "
             f"<span class=\"gname\">{E(str(g['group']))}</span>{cl}</h3>",
             f'<p class="facts">{E(" · ".join(_facts(g, latest, status_rows)))}</p>']
    why = [str(x) for x in latest.get("health_reasons") or []]
    if why:
        parts.append('<ul class="why">' + "".join(f"<li>{E(x)}</li>" for x in why) + "</ul>")
    parts.append(group_timeline(gi, g, t0, t1, owner_colour))
    parts += _keys(g, clients, owner_colour)
    bounds = _bounds(g, latest, lim)
    if bounds:
        parts.append(f'<p class="bounds">Shown: {E("; ".join(bounds))}.</p>')
    parts += _mark_tables(g)
    parts.append("</section>")
    return "\n".join(parts)


def _facts(g: dict[str, Any], latest: dict[str, Any],
           status_rows: list[dict[str, Any]]) -> list[str]:
    """The group's numbers at its latest capture, its topics and its marks."""
    topics = [r for r in status_rows if r.get("group") == g["group"]
              and (r.get("cluster") or "") == g["cluster"]]
    topic_txt = ", ".join(f"{r.get('topic')} ({r.get('status_text') or r.get('status') or '-'})"
                          for r in topics if r.get("topic") is not None)
    tk = g.get("totals_by_kind", {})
    facts = [f"lag {fmt_count(latest.get('total_lag'))} messages",
             f"time lag {fmt_duration(latest.get('lag_seconds'))}",
             f"members {fmt_count(latest.get('members'))}",
             f"latest capture {utc_text(latest.get('capture_ts'))}",
             f"rebalance events {tk.get('event', 0)}", f"storms {tk.get('storm', 0)}",
             f"unowned periods {tk.get('unowned', 0)}",
             f"lock takeovers {tk.get('takeover', 0)}"]
    if topic_txt:
        facts.insert(3, f"topics: {topic_txt}")
    return facts


def _keys(g: dict[str, Any], clients: list[str], owner_colour: dict[str, str]) -> list[str]:
    """The keys under the timeline: the group's and its queues' lines, the owners."""
    keys = ['<span><span class="sw line" style="background:#111"></span>group</span>']
    for i, q in enumerate(g["queues"]):
        peak = q.get("peak")
        keys.append(f'<span><span class="sw line" style="background:{PALETTE[i % len(PALETTE)]}">'
                    f"</span>{E(qname(q))} "
                    f"(peak {fmt_count(peak)})</span>")
    out = ['<div class="keys queue-keys">' + "".join(keys) + "</div>"]
    if clients:
        out.append('<div class="keys owner-keys">owners: ' + "".join(
            f'<span><span class="sw" style="background:{owner_colour[c]}"></span>{E(c)}</span>'
            for c in clients) + "</div>")
    return out


_MARK_KINDS = (("event", "rebalance events", "events"), ("storm", "storms", "storms"),
               ("unowned", "unowned periods", "unowned"),
               ("takeover", "lock takeovers", "takeovers"))


def _bounds(g: dict[str, Any], latest: dict[str, Any], lim: HtmlLimits | None) -> list[str]:
    """What the bounds left out, said on the page."""
    bounds = []
    nq = g.get("queue_count") or 0
    if nq:
        bounds.append(f"lines: {len(g['queues'])} of {nq} queue(s), highest peak lag first")
        if latest.get("consume_type") != "CONSUME_POP":  # (a pop group has no lanes)
            bounds.append(f"owner lanes: {len(g['lanes'])} of {nq} queue(s)")
    if g.get("runs_total") and lim and g["runs_total"] > lim.runs:
        bounds.append(f"owner changes: the first {lim.runs} of {g['runs_total']}")
    tk = g.get("totals_by_kind", {})
    for kind, label, key in _MARK_KINDS:
        shown = len(g[key])
        if tk.get(kind, 0) > shown:
            bounds.append(f"{label}: the latest {shown} of {tk[kind]}")
    hidden = sum(1 for u in g["unowned"] if (str(u["topic"]), str(u["broker"]), u["queue_id"])
                 not in {(str(ln["topic"]), str(ln["broker"]), ln["queue_id"])
                         for ln in g["lanes"]})
    if hidden:
        bounds.append(f"{hidden} unowned period(s) on queues without a lane (listed below)")
    return bounds


def _mark_tables(g: dict[str, Any]) -> list[str]:
    """The unowned periods and the lock takeovers, as tables under a summary."""
    out = []
    if g["unowned"]:
        rows = "".join(
            f"<tr><td>{E(str(u['topic']))}</td><td>{E(qid(u))}</td>"
            f"<td>{E(utc_text(u['n1']))}</td><td>{E(utc_text(u['ts']))}</td>"
            f"<td>{E(utc_text(u['end_ts']) if u['end_ts'] is not None else 'still unowned')}"
            f"</td><td>{E(str(u['other'] or '-'))}</td></tr>" for u in g["unowned"])
        out.append(f"<details><summary>Unowned periods ({len(g['unowned'])})</summary>"
                   "<table><thead><tr><th>topic</th><th>queue</th><th>last owned</th>"
                   "<th>first seen unowned</th><th>owned again</th><th>seen in</th></tr>"
                   f"</thead><tbody>{rows}</tbody></table></details>")
    if g["takeovers"]:
        rows = "".join(
            f"<tr><td>{E(utc_text(k['ts']))}</td><td>{E(str(k['topic']))}</td>"
            f"<td>{E(qid(k))}</td><td>{E(str(k['other'] or '-'))}"
            f"</td><td>{E(str(k['client'] or '-'))}</td></tr>" for k in g["takeovers"])
        out.append(f"<details><summary>Lock takeovers ({len(g['takeovers'])})</summary>"
                   "<table><thead><tr><th>time</th><th>topic</th><th>queue</th>"
                   "<th>expired holder</th><th>new holder</th></tr></thead>"
                   f"<tbody>{rows}</tbody></table></details>")
    return out


def _cause_keys() -> str:
    return ('<div class="keys cause-keys">' + "".join(
        f'<span><span class="sw" style="background:{c}"></span>{E(k)}</span>'
        for k, c in CAUSE_COLOURS.items())
        + '<span><span class="sw" style="background:#e02020;opacity:.35"></span>storm</span>'
        "</div>")


def _overview(series: list[dict[str, Any]], events: list[dict[str, Any]],
              storms: list[dict[str, Any]], t0: int | None, t1: int | None) -> list[str]:
    if t0 is None or t1 is None:
        return ['<p class="meta">No capture in the inputs.</p>']
    lo = min([t0] + [e["ts"] for e in events] + [s["start_ts"] for s in storms])
    hi = max([t1] + [e["ts"] for e in events]
             + [s["end_ts"] for s in storms if s.get("end_ts") is not None])
    out = []
    lag_max = max([float(r["total_lag"]) for r in series if r.get("total_lag") is not None]
                  + [1.0])
    tl_max = max([float(r["lag_seconds"]) for r in series if r.get("lag_seconds") is not None]
                 + [1.0])
    for key, title, ticks, unit, cls in (
            ("total_lag", "Lag per group (messages, log scale)", lag_ticks(lag_max),
             "total lag (messages)", "olag"),
            ("lag_seconds", "Time lag per group (slowest queue, log scale)",
             sec_ticks(tl_max), "time lag of the slowest queue (s)", "otimelag")):
        chart, keys = overview_lines(series, key, t0, t1, "", ticks, unit, cls)
        out += [f"<h3>{E(title)}</h3>", chart, '<div class="keys group-keys">' + "".join(
            f'<span><span class="sw line" style="background:{c}"></span>{E(g)}</span>'
            for g, c in keys) + "</div>"]
    out += ["<h3>Rebalance timeline (every group; marks coloured by cause)</h3>",
            overview_timeline(events, storms, lo, hi), _cause_keys()]
    return out


def render_html(*, series: list[dict[str, Any]], events: list[dict[str, Any]],
                storms: list[dict[str, Any]], status_rows: list[dict[str, Any]],
                meta: dict[str, Any], groups: list[dict[str, Any]] | None = None,
                limits: HtmlLimits | None = None) -> str:
    """One self-contained page, no script and nothing fetched: it opens offline.
    ``series`` rows: ``group, ts, total_lag, lag_seconds``; ``events``: ``ts, group, client,
    topic, n_gained, n_lost, cause``; ``storms``: ``group, start_ts, end_ts, rounds``;
    ``groups``: the per-group sections of :func:`collect_report_data`. ``meta``: ``title``,
    ``subtitle``, ``warnings`` (at the top), ``notes``, ``first_ts``/``last_ts`` (the
    captures covered), ``captures``, ``window``."""
    title = str(meta.get("title", "mqctl lag report"))
    first, last, rng = _captures(meta, series)
    groups = groups or []
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        f"<title>{E(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head><body>",
        f'<header><h1>{E(title)}</h1><p class="range">{rng}</p>',
        f"<p class=\"meta\">{E(str(meta.get('subtitle', '')))}</p>",
    ]
    warnings = meta.get("warnings") or []
    if warnings:  # (what the page rests on but cannot show: first, before any verdict)
        parts.append('<section class="warnings" id="warnings"><b>Warning</b><ul>' + "".join(
            f"<li>{E(str(w))}</li>" for w in warnings) + "</ul></section>")
    parts.append("</header>")
    if groups:
        parts.append('<nav class="toc">Groups: ' + "".join(
            f'<a href="#g-{i}">{_health_badge((g.get("latest") or {}).get("health"))} '
            f"{E(str(g['group']))}</a>" for i, g in enumerate(groups)) + "</nav>")
    parts += [
        '<section id="status"><h2>Groups and topics (latest capture)</h2>',
        _status_table(status_rows), "</section>",
        _legend(meta.get("window")),
    ]
    if groups and first is not None:
        parts.append('<section id="groups"><h2>Per group</h2>')
        parts.append('<p class="meta">One timeline per group (worst first), all on the same '
                     f"time axis (UTC), from {E(utc_text(first))} to {E(utc_text(last))}.</p>")
        for i, g in enumerate(groups):
            parts.append(_group_section(i, g, status_rows, int(first), int(last or first),
                                        limits))
        parts.append("</section>")
    parts.append('<section id="overview"><h2>All groups</h2>')
    parts += _overview(series, events, storms, first, last)
    parts.append("</section>")
    notes = meta.get("notes") or []
    if notes:
        parts.append('<section id="notes"><h2>Notes</h2><ul>' + "".join(
            f"<li>{E(str(n))}</li>" for n in notes) + "</ul></section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _captures(meta: dict[str, Any], series: list[dict[str, Any]]
              ) -> tuple[Any, Any, str]:
    """The first and last capture the page covers (``meta``, else the series'), and the
    header's line that says so."""
    first, last = meta.get("first_ts"), meta.get("last_ts")
    if first is None and series:
        first, last = min(r["ts"] for r in series), max(r["ts"] for r in series)
    if first is None or last is None:
        return first, last, "No capture in the inputs"
    n = meta.get("captures")
    caps = f", {n} capture(s)" if n else ""
    return first, last, (f"Captures from <b>{E(utc_text(first))}</b> to "
                         f"<b>{E(utc_text(last))}</b> "
                         f"({E(fmt_duration((last - first) / 1000))}{E(caps)})")

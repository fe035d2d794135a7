"""The figures of the lag report's page, drawn with :mod:`.svg`: each group's timeline (lag
and time lag per queue on log scales, status per capture, owners per queue, unowned
periods, rebalance events, lock takeovers and storms on one time axis) and the overview
charts of every charted group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mqctl.lagjob.html.data import OWNER_UNKNOWN
from mqctl.lagjob.html.palette import CAUSE_COLOURS, PALETTE, STATUS_COLOURS
from mqctl.lagjob.html.svg import (
    LEFT,
    Svg,
    axis,
    document,
    lag_ticks,
    sec_ticks,
    time_grid,
    value_panel,
)
from mqctl.lagjob.html.text import (
    E,
    event_text,
    mid,
    qname,
    status_name,
    storm_text,
    takeover_text,
    unknown_owner_text,
    unowned_text,
    utc_text,
)
from mqctl.lagjob.verdicts import POP_NOTE

# ------------------------------------------------------------------- one group's timeline

_LAG_H, _TL_H, _LANE_H, _STRIP_H = 120.0, 96.0, 13.0, 10.0


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where each panel of a group's timeline starts (top to bottom): lag, time lag, status
    strip, owner lanes, marks, axis."""

    y0: float
    y_lag: float
    y_tl: float
    y_st: float
    y_ln: float
    y_mk: float
    y_ax: float
    height: float

    @classmethod
    def of(cls, n_lanes: int) -> _Layout:
        y0 = 8.0
        y_lag = y0
        y_tl = y_lag + _LAG_H + 16
        y_st = y_tl + _TL_H + 12
        y_ln = y_st + _STRIP_H + 16
        y_mk = y_ln + n_lanes * _LANE_H + 8
        y_ax = y_mk + 2 * 14 + 4
        return cls(y0, y_lag, y_tl, y_st, y_ln, y_mk, y_ax, y_ax + 18)


def group_timeline(gi: int, g: dict[str, Any], t0: int, t1: int,
                   owner_colour: dict[str, str]) -> str:
    """One group's timeline (``g``: a section of :func:`.sections.build_sections`)."""
    svg = Svg(t0, t1)
    topics = {str(q["topic"]) for q in g["queues"]} | {str(ln["topic"]) for ln in g["lanes"]}

    def qlabel(d: dict[str, Any]) -> str:
        base = f"{d['broker']}:{d['queue_id']}"
        return base if len(topics) <= 1 else f"{d['topic']} {base}"

    # a pop group: the broker hands out every queue's messages to whichever client pops, so
    # no client owns a queue: no lanes (empty ones would read as "owner unknown"), a note
    pop = (g.get("latest") or {}).get("consume_type") == "CONSUME_POP"
    lanes = [] if pop else g["lanes"]
    lay = _Layout.of(max(1, len(lanes)))
    # storms behind everything, across every panel
    for s in g["storms"]:
        xa, xb = svg.x(s["ts"]), svg.x(s["end_ts"] if s["end_ts"] is not None else s["ts"])
        svg.add(f'<rect class="storm" x="{xa}" y="{lay.y0}" width="{max(2.0, xb - xa):.1f}" '
                f'height="{lay.y_ax - lay.y0:.0f}" fill="#e02020" fill-opacity="0.13"><title>'
                f"{E(storm_text(s))}</title></rect>")
    time_grid(svg, t0, t1, lay.y0, lay.y_ax)
    _lag_panels(svg, g, lay)
    _status_strip(svg, g["totals"], lay.y_st)
    _owner_lanes(svg, lanes, lay.y_ln, pop, qlabel, owner_colour)
    _unowned_boxes(svg, g["unowned"], lanes, lay.y_ln, t1)
    _marks(svg, g, lay.y_mk)
    axis(svg, lay.y_ax)
    return document(svg, f'class="timeline" id="svg-{gi}"', lay.height,
                    f"timeline of {g['group']}")


def _lag_panels(svg: Svg, g: dict[str, Any], lay: _Layout) -> None:
    """Lag and time lag: the group's total (black) and its drawn queues (coloured)."""
    totals = g["totals"]
    qcol = {id(q): PALETTE[i % len(PALETTE)] for i, q in enumerate(g["queues"])}
    lag_max = max([v for _, v in ((s["ts"], s.get("total_lag")) for s in totals)
                   if v is not None] + [p[1] for q in g["queues"] for p in q["points"]
                                        if p[1] is not None] + [1])
    value_panel(svg, lay.y_lag, _LAG_H, "lag (messages, log)", lag_ticks(float(lag_max)),
                [(s["ts"], s.get("total_lag")) for s in totals],
                f"{g['group']}: total lag", [
                    ([(p[0], p[1]) for p in q["points"]], qcol[id(q)],
                     f"{q['topic']} {q['broker']}:{q['queue_id']} lag") for q in g["queues"]],
                "lag")
    tl_max = max([s.get("lag_seconds") for s in totals if s.get("lag_seconds") is not None]
                 + [p[2] for q in g["queues"] for p in q["points"] if p[2] is not None] + [1])
    value_panel(svg, lay.y_tl, _TL_H, "time lag (log)", sec_ticks(float(tl_max)),
                [(s["ts"], s.get("lag_seconds")) for s in totals],
                f"{g['group']}: time lag of the slowest queue (s)", [
                    ([(p[0], p[2]) for p in q["points"]], qcol[id(q)],
                     f"{q['topic']} {q['broker']}:{q['queue_id']} time lag (s)")
                    for q in g["queues"]], "timelag")


def _status_strip(svg: Svg, totals: list[dict[str, Any]], y_st: float) -> None:
    """Status per capture: a strip of colours (a segment lasts until the next capture)."""
    svg.add(f'<text class="plabel" x="6" y="{y_st + 9:.0f}">status</text>')
    i = 0
    while i < len(totals):  # one rectangle per run of captures with the same status
        name = status_name(totals[i].get("status_code"))
        j = i + 1
        while j < len(totals) and status_name(totals[j].get("status_code")) == name:
            j += 1
        if name is not None:
            start = totals[i]["ts"]
            end = totals[j]["ts"] if j < len(totals) else totals[j - 1]["ts"]
            xa, xb = svg.x(start), svg.x(end)
            what = f"{name} from {utc_text(start)}" + (
                f" until {utc_text(end)}" if j < len(totals)
                else f" to {utc_text(end)} (the last capture)")
            svg.add(f'<rect class="status st-{name}" x="{xa}" y="{y_st}" '
                    f'width="{max(2.0, xb - xa):.1f}" height="{_STRIP_H}" '
                    f'fill="{STATUS_COLOURS[name]}"><title>{E(what)}</title></rect>')
        i = j


def _owner_lanes(svg: Svg, lanes: list[dict[str, Any]], y_ln: float, pop: bool,
                 qlabel: Any, owner_colour: dict[str, str]) -> None:
    """Owners per queue: a lane per queue, a box per run of one owner (dotted grey: the owner
    is unknown)."""
    svg.add(f'<text class="plabel" x="6" y="{y_ln - 3:.0f}">owners per queue</text>')
    if pop:
        svg.add(f'<text class="pop-note" x="{LEFT + 6}" y="{y_ln + 10:.0f}">{E(POP_NOTE)}</text>')
    elif not lanes:
        svg.add(f'<text class="tick" x="{LEFT + 6}" y="{y_ln + 10:.0f}">no owner reported in the '
                "captures (owners are unknown, not absent)</text>")
    for i, ln in enumerate(lanes):
        ly = y_ln + i * _LANE_H
        svg.add(f'<text class="lane" x="{LEFT - 4}" y="{ly + 10:.1f}" text-anchor="end">'
                f"<title>{E(qname(ln))}</title>"
                f"{E(mid(qlabel(ln), 30))}</text>")
        for start, end, owner in ln["runs"]:
            xa, xb = svg.x(start), svg.x(end)
            if owner == OWNER_UNKNOWN:
                svg.add(f'<rect class="own-unknown" x="{xa}" y="{ly + 1:.1f}" '
                        f'width="{max(1.5, xb - xa):.1f}" height="{_LANE_H - 3}" '
                        'fill="#dddddd" stroke="#888888" stroke-dasharray="1,2"><title>'
                        f"{E(unknown_owner_text(qlabel(ln), start, end))}</title></rect>")
                continue
            svg.add(f'<rect class="own" x="{xa}" y="{ly + 1:.1f}" '
                    f'width="{max(1.5, xb - xa):.1f}" height="{_LANE_H - 3}" '
                    f'fill="{owner_colour.get(str(owner), "#999")}"><title>'
                    f"{E(f'{owner} owned {qlabel(ln)} from {utc_text(start)} to {utc_text(end)}')}"
                    "</title></rect>")


def _unowned_boxes(svg: Svg, unowned: list[dict[str, Any]], lanes: list[dict[str, Any]],
                   y_ln: float, t1: int) -> None:
    """A dashed red box on a queue's lane while nobody owned it."""
    lane_of = {(str(ln["topic"]), str(ln["broker"]), ln["queue_id"]): i
               for i, ln in enumerate(lanes)}
    for u in unowned:
        li = lane_of.get((str(u["topic"]), str(u["broker"]), u["queue_id"]))
        if li is None:
            continue
        ly = y_ln + li * _LANE_H
        end = u["end_ts"] if u["end_ts"] is not None else t1
        xa, xb = svg.x(u["ts"]), svg.x(end)
        what = "still unowned" if u["end_ts"] is None else f"until {utc_text(u['end_ts'])}"
        svg.add(f'<rect class="unowned" x="{xa}" y="{ly + 1:.1f}" '
                f'width="{max(2.0, xb - xa):.1f}" height="{_LANE_H - 3}" fill="#ffffff" '
                f'stroke="#d00000" stroke-width="1.2" stroke-dasharray="3,2"><title>'
                f"{E(unowned_text(u, what))}</title></rect>")


def _marks(svg: Svg, g: dict[str, Any], y_mk: float) -> None:
    """Rebalance events (coloured by cause) and lock takeovers."""
    ym1, ym2 = y_mk + 7, y_mk + 21
    svg.add(f'<text class="plabel" x="6" y="{ym1 + 4:.0f}">rebalances, resets</text>'
            f'<text class="plabel" x="6" y="{ym2 + 4:.0f}">lock takeovers</text>')
    for e in g["events"]:
        xx, cause = svg.x(e["ts"]), str(e["other"] or "rebalance")
        svg.add(f'<path class="event cause-{E(cause if cause in CAUSE_COLOURS else "other")}" '
                f'd="M{xx},{ym1 - 5} l4,8 l-8,0 z" fill="{CAUSE_COLOURS.get(cause, "#333")}">'
                f"<title>{E(event_text(e, cause))}</title></path>")
    for k in g["takeovers"]:
        xx = svg.x(k["ts"])
        svg.add(f'<path class="takeover" d="M{xx},{ym2 - 5} l4,5 l-4,5 l-4,-5 z" '
                f'fill="#e67e00"><title>'
                f"{E(takeover_text(k))}</title></path>")


# ------------------------------------------------------------------- every charted group

def overview_lines(series: list[dict[str, Any]], key: str, t0: int, t1: int,
                    label: str, ticks: list[tuple[float, str]], unit: str, cls: str
                    ) -> tuple[str, list[tuple[str, str]]]:
    """One chart of every charted group: a line per group on a log scale (``key`` of the
    series rows per capture); returns the SVG and the (group, colour) legend entries."""
    svg = Svg(t0, t1)
    top, height = 10.0, 170.0
    by_group: dict[str, list[dict[str, Any]]] = {}
    for r in series:
        by_group.setdefault(str(r["group"]), []).append(r)
    lines, keys = [], []
    for i, (g, rows) in enumerate(sorted(by_group.items())):
        colour = PALETTE[i % len(PALETTE)]
        rows = sorted(rows, key=lambda x: x["ts"])
        lines.append(([(x["ts"], x.get(key)) for x in rows], colour, f"{g}: {unit}"))
        keys.append((g, colour))
    y_ax = top + height + 8
    time_grid(svg, t0, t1, top, y_ax)
    value_panel(svg, top, height, label, ticks, [], "", lines, cls)
    axis(svg, y_ax)
    return document(svg, f'class="overview {cls}"', y_ax + 18, label), keys


def overview_timeline(events: list[dict[str, Any]], storms: list[dict[str, Any]], t0: int,
                       t1: int) -> str:
    """Rebalance timeline of every group: a lane per group, its storms as red bands, its
    events as marks coloured by cause (the per-group timelines' colours), one mark per cause
    and pixel column (its tooltip counts the events there)."""
    groups = sorted({str(e["group"]) for e in events} | {str(s["group"]) for s in storms})
    if not groups:
        return '<p class="meta">No rebalance event in the inputs.</p>'
    svg = Svg(t0, t1)
    lane_h, top = 16.0, 4.0
    lane = {g: i for i, g in enumerate(groups)}
    y_ax = top + len(groups) * lane_h + 4
    time_grid(svg, t0, t1, top, y_ax)
    for g, i in lane.items():
        ly = top + i * lane_h
        svg.add(f'<text class="lane" x="{LEFT - 4}" y="{ly + 11:.1f}" text-anchor="end">'
                f"<title>{E(g)}</title>{E(mid(g, 30))}</text>")
    for st in storms:
        ly = top + lane[str(st["group"])] * lane_h
        xa = svg.x(st["start_ts"])
        xb = svg.x(st["end_ts"] if st.get("end_ts") is not None else st["start_ts"])
        what = (f"rebalance storm of {st['group']} {utc_text(st['start_ts'])} to "
                f"{utc_text(st.get('end_ts'))}: {st.get('rounds')} round(s)")
        svg.add(f'<rect class="ostorm" x="{xa}" y="{ly:.1f}" width="{max(2.0, xb - xa):.1f}" '
                f'height="{lane_h}" fill="#e02020" fill-opacity="0.18"><title>{E(what)}'
                "</title></rect>")
    cells: dict[tuple[str, float, str], list[dict[str, Any]]] = {}
    for e in events:
        cause = str(e.get("cause") or "rebalance")
        cells.setdefault((str(e["group"]), round(svg.x(e["ts"])), cause), []).append(e)
    for (g, xx, cause), evs in sorted(cells.items()):
        ly = top + lane[g] * lane_h + lane_h / 2
        first, last = min(e["ts"] for e in evs), max(e["ts"] for e in evs)
        what = (f"{g}: {len(evs)} {cause} event(s) {utc_text(first)}"
                + (f" to {utc_text(last)}" if last != first else ""))
        colour = CAUSE_COLOURS.get(cause, "#333")
        key = cause if cause in CAUSE_COLOURS else "other"
        svg.add(f'<path class="oevent cause-{E(key)}" d="M{xx},{ly - 5} l4,8 l-8,0 z" '
                f'fill="{colour}"><title>{E(what)}</title></path>')
    axis(svg, y_ax)
    return document(svg, 'class="overview rebalance"', y_ax + 18,
                    "rebalance timeline of every group")


"""A small SVG chart library for the lag report's page (no JavaScript, nothing fetched): a
time scale, log-scale value panels with their ticks, lines that break at unknown values,
the time grid and axis. The figures drawn with it are in :mod:`.charts`.

Every text put in an SVG goes through :data:`mqctl.lagjob.html.text.E`; ``<title>`` elements
are the tooltips.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from mqctl.lagjob.html.text import E

# the drawing's width, its left margin (labels) and right margin; the plot width between
WIDTH, LEFT, RIGHT = 1000, 178, 14
PLOT_W = WIDTH - LEFT - RIGHT


class Svg:
    def __init__(self, t0: int, t1: int) -> None:
        self.t0, self.t1 = t0, t1
        self.parts: list[str] = []

    def x(self, ts: Any) -> float:
        if self.t1 <= self.t0:
            return LEFT + PLOT_W / 2
        f = (float(ts) - self.t0) / (self.t1 - self.t0)  # logs may reach past the captures
        return round(LEFT + min(1.0, max(0.0, f)) * PLOT_W, 1)

    def add(self, s: str) -> None:
        self.parts.append(s)


def symlog(v: float) -> float:
    return math.log10(1 + max(0.0, v))


def lag_ticks(vmax: float) -> list[tuple[float, str]]:
    """0, then powers of ten up to the first at or above ``vmax`` (1 is left out on a tall
    scale: it would sit on top of 0)."""
    top = max(1, math.ceil(math.log10(max(vmax, 1.0))))
    step = max(1, math.ceil(top / 7))  # at most about 7 labels in the panel
    ks = [k for k in range(0 if top < 3 else 1, top + 1) if (top - k) % step == 0]
    return [(0, "0")] + [(10.0 ** k, short(10.0 ** k)) for k in ks]


_SEC_TICKS = [(1, "1s"), (10, "10s"), (60, "1m"), (600, "10m"), (3600, "1h"), (36000, "10h"),
              (86400, "1d"), (864000, "10d"), (8640000, "100d")]


def sec_ticks(vmax: float) -> list[tuple[float, str]]:
    out: list[tuple[float, str]] = [(0, "0")]
    for v, label in _SEC_TICKS:
        out.append((v, label))
        if v >= vmax:
            break
    if len(out) > 4:  # 1s would sit on top of 0
        del out[1]
    return out


def time_ticks(t0: int, t1: int) -> list[tuple[int, str]]:
    span = max(1, t1 - t0)
    steps = [60_000 * m for m in (1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880,
                                  10080)]
    step = next((s for s in steps if span / s <= 8), steps[-1])
    first = (t0 + step - 1) // step * step
    fmt = "%H:%M" if span < 86_400_000 else "%m-%d %H:%M"
    return [(t, datetime.fromtimestamp(t / 1000, tz=UTC).strftime(fmt))
            for t in range(first, t1 + 1, step)]


def polyline(svg: Svg, pts: list[tuple[Any, Any]], y: Any, colour: str, width: float,
              title: str, cls: str) -> None:
    """A line through the known points; an unknown value (None) breaks it: a gap, not 0."""
    segs: list[list[str]] = [[]]
    for ts, v in pts:
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            if segs[-1]:
                segs.append([])
            continue
        segs[-1].append(f"{svg.x(ts)},{y(float(v)):.1f}")
    body = []
    for seg in segs:
        if len(seg) == 1:
            cx, cy = seg[0].split(",")
            body.append(f'<circle cx="{cx}" cy="{cy}" r="2" fill="{colour}"/>')
        elif seg:
            body.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke="{colour}" '
                        f'stroke-width="{width}" stroke-linejoin="round"/>')
    if body:
        svg.add(f'<g class="{cls}"><title>{E(title)}</title>{"".join(body)}</g>')


def value_panel(svg: Svg, top: float, height: float, label: str,
                ticks: list[tuple[float, str]], total: list[tuple[Any, Any]], total_title: str,
                queues: list[tuple[list[tuple[Any, Any]], str, str]], cls: str) -> None:
    """A value panel on a log scale: its label, the ticks' grid lines, a line per queue
    (``(points, colour, tooltip)``) and the total on top."""
    bottom = top + height
    ymax = max(symlog(ticks[-1][0]), 1e-9)

    def y(v: float) -> float:  # beyond the last tick (over 100 days): at the top
        return bottom - min(1.0, symlog(v) / ymax) * height

    svg.add(f'<text class="plabel" x="6" y="{top + 10:.0f}">{E(label)}</text>')
    for v, t in ticks:
        yy = y(v)
        svg.add(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{yy:.1f}" '
                f'y2="{yy:.1f}"/>'
                f'<text class="tick" x="{LEFT - 4}" y="{yy + 3:.1f}" text-anchor="end">{E(t)}'
                "</text>")
    for pts, colour, title in queues:
        polyline(svg, pts, y, colour, 1.2, title, cls + " queue")
    polyline(svg, total, y, "#111", 2.2, total_title, cls + " total")


def short(v: Any) -> str:
    """Axis labels: 1k, 10k, 1M."""
    for div, suf in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:g}{suf}"
    return f"{v:g}"


def time_grid(svg: Svg, t0: int, t1: int, top: float, y_ax: float) -> None:
    """Vertical grid lines from ``top`` to the axis at ``y_ax``, with the time labels under
    it (UTC)."""
    for t, label in time_ticks(t0, t1):
        xx = svg.x(t)
        svg.add(f'<line class="vgrid" x1="{xx}" x2="{xx}" y1="{top}" y2="{y_ax}"/>'
                f'<text class="tick" x="{xx}" y="{y_ax + 12:.0f}" text-anchor="middle">'
                f"{E(label)}</text>")


def axis(svg: Svg, y_ax: float) -> None:
    """The time axis line."""
    svg.add(f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y_ax}" y2="{y_ax}"/>')


def document(svg: Svg, head: str, height: float, label: str) -> str:
    """The ``<svg>`` element: ``head`` holds its class (and id) attributes."""
    return (f'<svg {head} xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {WIDTH} {height:.0f}" role="img" aria-label="{E(label)}">'
            + "".join(svg.parts) + "</svg>")

"""The words of the lag report's page and of its charts' tooltips: times, counts, queue names
and what each mark says. Every piece of broker data goes through :func:`E` where it is put in
the page."""

from __future__ import annotations

import html
import math
from typing import Any

from mqctl.lagjob.html.palette import STATUS_ORDER
from mqctl.lagjob.verdicts import utc
from mqctl.render import printable


def E(text: Any, quote: bool = True) -> str:  # (the page's one escape, named short)
    """The one escaping of the page, for every text in it (broker data: group, topic, client
    ids): first as the terminal shows cluster text (:func:`mqctl.render.printable`: ESC, BEL,
    the C1 controls, DEL, line separators and the bidi overrides and isolates written as
    ``\\x1b``, ``\\u202e``, ...: an OSC 52 in a client id must not reach the clipboard of
    whoever runs ``cat report.html``, a U+202E must not reverse what a tooltip says), then
    HTML-escaped (``<``, ``>``, ``&``, quotes)."""
    return html.escape(printable(str(text)), quote)


def utc_text(ms: Any) -> str:
    """The page's one time format (the header, the tables, the tooltips, the generated stamp):
    ``2024-06-01 10:00:00 UTC``."""
    return utc(ms)


def fmt_count(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.1f}"
    return f"{int(v):,}"



def mid(s: str, n: int) -> str:
    """Shorten in the middle (labels in the SVG; the full text is in its tooltip)."""
    return s if len(s) <= n else s[: n // 2 - 1] + "…" + s[-(n - n // 2):]


def status_name(code: Any) -> str | None:
    if code is None:
        return None
    try:
        return STATUS_ORDER[int(code)]
    except (ValueError, IndexError):
        return None


def qid(d: dict[str, Any]) -> str:
    return f"{d['broker']}:{d['queue_id']}"


def qname(d: dict[str, Any]) -> str:
    return f"{d['topic']} {qid(d)}"


def storm_text(s: dict[str, Any]) -> str:
    return (f"rebalance storm {utc_text(s['ts'])} to {utc_text(s['end_ts'])}: {s['n1']} rounds, "
            f"{s['n2']} events; clients {s['other'] or '-'}")


def unknown_owner_text(queue: str, start: Any, end: Any) -> str:
    return (f"owner of {queue} unknown from {utc_text(start)} to {utc_text(end)}: a member did not "
            "answer its running info (not a loss: the previous owner is carried across)")


def unowned_text(u: dict[str, Any], what: str) -> str:
    return f"no owner of {qname(u)} from {utc_text(u['ts'])} {what} (seen in {u['other']})"


def event_text(e: dict[str, Any], cause: str) -> str:
    return f"{utc_text(e['ts'])} {cause}: {e['client']} {e['topic']} +{e['n1']} -{e['n2']}"


def takeover_text(k: dict[str, Any]) -> str:
    return (f"{utc_text(k['ts'])} lock of {qname(k)} taken over by {k['client']} from "
            f"{k['other']}")


"""The words of the lag report's verdicts, for people (pure, no Spark): the status with the
queues in it and the window it rests on (``STALL (3 of 8 queues)``, ``OK (window 1 of 10)``),
and why a group's health is what it is. The terminal summary, ``summary.json``,
``summary.csv`` and the HTML page all say the same words (docs/exports.md section 4.1).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

POP_NOTE = ("pop: no queue owners (the broker hands out messages of every queue to whichever "
            "client pops)")
STATUSES = ("OK", "WARN", "REWIND", "STALL", "STOP")


def utc(ms: Any) -> str:
    """The page's and the summaries' one time format: ``2024-06-01 10:00:00 UTC``; ``-``."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def fmt_duration(seconds: Any) -> str:
    """``3h 2m``, ``5m 3s``, ``12.3s``; ``-`` when unknown."""
    if seconds is None or (isinstance(seconds, float) and not math.isfinite(seconds)):
        return "-"
    s = float(seconds)
    if s < 60:
        return f"{s:.1f}s" if s < 10 and not s.is_integer() else f"{s:.0f}s"
    n = int(round(s))
    d, rem = divmod(n, 86400)
    h, rem = divmod(rem, 3600)
    m, sec = divmod(rem, 60)
    if d:
        return f"{d}d {h}h"
    if h:
        return f"{h}h {m}m"
    return f"{m}m {sec}s"


def duration(ms: Any) -> str:
    """A setting's length in milliseconds as the reasons say it: ``10m``, ``1m 30s``, ``20s``."""
    text = fmt_duration(None if ms is None else float(ms) / 1000)
    return text[:-3] if text.endswith("m 0s") else text


def partial_window(row: dict[str, Any], window: int | None) -> str | None:
    """``window 1 of 10``: the status rests on fewer captures than the window (Burrow's
    ``complete`` below 1); None when the window is full or unknown."""
    samples = row.get("window_samples")
    complete = row.get("complete")
    if not window or samples is None:
        return None
    if int(samples) >= int(window) and (complete is None or float(complete) >= 1.0):
        return None
    return f"window {int(samples)} of {int(window)}"


def status_text(row: dict[str, Any], window: int | None, key: str = "status") -> str | None:
    """``STALL (3 of 8 queues)``; ``OK (window 1 of 10)``; ``-`` when unknown. ``key``:
    ``status`` (a topic's) or ``group_status``."""
    status = row.get(key)
    if status is None:
        return None
    parts = []
    # a group row counts the queues of its topics in that state (status_queues_of)
    n, total = row.get("status_queues"), row.get("status_queues_of") or row.get("queues")
    if status != "OK" and n is not None and total:
        parts.append(f"{int(n)} of {int(total)} queue{'s' if int(total) != 1 else ''}")
    part = partial_window(row, window)
    if part:
        parts.append(part)
    return f"{status} ({', '.join(parts)})" if parts else str(status)


def health_reasons(row: dict[str, Any], *, window: int | None = None,
                   storm_window_ms: int | None = None, round_max_ms: int | None = None,
                   storm_rounds: int | None = None, unowned_max: float = 0.0) -> list[str]:
    """Why a group's health is what it is, worst first, each a short sentence; the group's
    note (broadcast, pop, seen only in logs) last. ``row``: a group or a group/topic row of
    the summary (``group_status``, ``status_queues``, ``queues``, the health columns)."""
    out: list[str] = []
    st = row.get("group_status")
    if st in STATUSES[1:]:
        out.append(status_text(row, None, "group_status") or st)
    if row.get("in_storm"):
        rules = []
        for r in str(row.get("storm_rule") or "").split("+"):
            if r == "rounds" and storm_rounds and storm_window_ms:
                rules.append(f"{storm_rounds} or more rounds within {duration(storm_window_ms)}")
            elif r == "long-round" and round_max_ms:
                rules.append(f"a round longer than {duration(round_max_ms)}")
        rounds, events = row.get("storm_rounds"), row.get("storm_events")
        what = f"rebalance storm from {utc(row.get('storm_start_ts'))} to " \
               f"{utc(row.get('storm_end_ts'))}"
        if rounds is not None:
            what += f": {int(rounds):,} round(s), {int(events or 0):,} event(s)"
        if rules:
            what += f" ({'; '.join(rules)})"
        out.append(what)
    share = row.get("unowned_share")
    if (share and (row.get("unowned_ms") or 0) > 0 and row.get("online") is not False
            and (float(share) >= unowned_max or row.get("unowned_now"))):
        within = f" in the last {duration(storm_window_ms)}" if storm_window_ms else ""
        text = f"queues unowned {float(share):.0%} of the time{within}"
        if row.get("unowned_now"):
            text += f", {int(row['unowned_now'])} unowned at the latest capture"
        out.append(text)
    part = partial_window(row, window)
    if part and st is not None:
        out.append(f"status over an incomplete {part} captures")
    note = row.get("reason")
    if note:
        out.append(str(note))
    if row.get("consume_type") == "CONSUME_POP":
        out.append(POP_NOTE)
    return out

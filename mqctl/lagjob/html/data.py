"""What the lag report's page shows, bounded: the limits and the collected data that
:mod:`.collect` (Spark) fills and :mod:`.page` (pure) draws."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class HtmlLimits:
    """How much of a run the page shows (bounds on what is collected to the driver)."""

    groups: int = 20  # group sections and overview chart lines (worst groups first)
    points: int = 2000  # points per group in the overview charts
    svg_points: int = 300  # points per line in a group's timeline
    lines: int = 8  # queue lines per group (highest peak lag first)
    lanes: int = 16  # owner lanes per group
    runs: int = 400  # owner runs per group
    marks: int = 200  # per group and kind: events, storms, unowned periods, takeovers
    timeline_events: int = 5000  # overview rebalance timeline
    storms: int = 500  # overview storms
    status_rows: int = 200  # rows of the status table


@dataclass(slots=True)
class ReportData:
    """Everything the page shows, bounded (see :class:`HtmlLimits`)."""

    first_ts: int | None = None
    last_ts: int | None = None
    captures: int = 0
    series: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    storms: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    bucket_ms: int | None = None  # overview charts: maximum per bucket
    svg_bucket_ms: int | None = None  # group timelines: maximum per bucket


# the owner of a lane run whose owner could not be read (snapshot owner_unknown)
OWNER_UNKNOWN = "\u0000owner-unknown"

"""The row orders that ``group progress --sort`` and ``groups --sort`` offer.

Light (the standard library only): the CLI declares these choices while it builds ``--help``,
without loading the views that sort by them.
"""

from __future__ import annotations

from enum import StrEnum


class SortKey(StrEnum):
    """``group progress --sort``."""

    queue = "queue"
    lag = "lag"
    time_lag = "time-lag"
    owner = "owner"


class GroupSort(StrEnum):
    """``groups --sort``."""

    name = "name"
    lag = "lag"
    time_lag = "time-lag"
    tps = "tps"
    members = "members"
    state = "state"
    retry = "retry"
    dlq = "dlq"


__all__ = ["GroupSort", "SortKey"]

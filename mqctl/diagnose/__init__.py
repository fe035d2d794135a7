"""``mqctl diagnose GROUP``: why a group is behind or stuck, with the evidence.

The parts, in the shape of :mod:`mqctl.reset`:

1. **types** (:mod:`mqctl.diagnose.types`): a :class:`Reading` (everything one read returned),
   a :class:`Finding` with its :class:`Evidence`, a :class:`Check`, the :class:`Diagnosis`;
2. **capture** (read-only requests, :mod:`mqctl.diagnose.capture`): :func:`capture_reading`
   calls the views mqctl already has (members, progress, group config, routes, locks) and
   the brokers' runtime info and config, over :class:`mqctl.admin.Admin`;
3. **rules** (pure, :mod:`mqctl.diagnose.rules`): :func:`diagnose` turns one reading (or the
   two of ``--sample``) into ranked findings and the checks, each from what was read, never
   from a guess: a rule whose data was not read is not checked (and the result is partial);
4. **explain** (pure, :mod:`mqctl.diagnose.explain`): the ranking, a finding whose cause
   explains another's evidence before it, the other shown as its consequence.

docs/diagnose.md explains every finding and the RocketMQ class of each threshold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.diagnose import capture
from mqctl.diagnose.capture import capture_reading, is_main_topic, pop_retry_topic, sleep
from mqctl.diagnose.rules import CAUGHT_UP_MS, CODES, ORDER, diagnose
from mqctl.diagnose.types import (
    ERROR,
    INFO,
    SEVERITIES,
    WARNING,
    Check,
    Diagnosis,
    Evidence,
    Finding,
    Reading,
    RetryTopic,
)

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.locks.store import LockStore

__all__ = ["CAUGHT_UP_MS", "CODES", "ERROR", "INFO", "ORDER", "SEVERITIES", "WARNING", "Check",
           "Diagnosis", "Evidence", "Finding", "Reading", "RetryTopic", "capture_reading",
           "diagnose", "is_main_topic", "pop_retry_topic", "run", "sleep"]


async def run(admin: Admin, group: str, *, topic: str | None = None,
              sample_s: float | None = None, store: LockStore | None = None) -> Diagnosis:
    """Read (twice with ``sample_s``, the second read ``sample_s`` seconds after the first)
    and diagnose."""
    first = await capture_reading(admin, group, topic=topic, store=store)
    second = None
    if sample_s:
        await capture.sleep(sample_s)
        second = await capture_reading(admin, group, topic=topic, store=store, first=False)
    return diagnose(first, second, topic=topic)

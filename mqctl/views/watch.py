"""``--watch``: the rounds of a view read again and again, and what changed between them.

:func:`run_watch` is the one loop every view's ``--watch`` runs: a round reads, then waits for
the rest of the interval; rounds never overlap, so a read slower than the interval stretches
it (the round says so: ``late``). :class:`Deltas` remembers each row of the view's main table
between rounds (by the view's :class:`WatchSpec` key) and gives per row: the change of its
count (lag) since the previous read and that change per second, the rate of its position
(messages consumed or produced per second between the reads), the states that changed
(owner, lock state: highlighted for :data:`HIGHLIGHT_ROUNDS` rounds), and, for a row whose
broker did not answer this round, its last good values marked stale with their age (never
shown as blank or 0, never as fresh). Pure but for the clock and the sleep it is given.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mqctl.timeparse import now_ms as clock_ms

# rounds a changed state stays highlighted
HIGHLIGHT_ROUNDS = 3


@dataclass(frozen=True, slots=True)
class WatchSpec:
    """What a view's rows are across rounds: ``keys`` identify a row; ``count`` a number whose
    change is shown (the lag); ``position`` an offset whose rate is shown; ``states`` values
    whose change is highlighted; ``broker`` the column naming the row's broker (or the
    ``BROKER:QUEUE`` column, ``queue``)."""

    keys: tuple[str, ...]
    count: str | None = None
    position: str | None = None
    states: tuple[str, ...] = ()
    broker: str | None = None


SPECS: dict[str, WatchSpec] = {
    "groups": WatchSpec(("group",), count="lag", states=("state", "members")),
    "group progress": WatchSpec(("topic", "broker", "queue_id"), count="lag",
                                position="consumer_offset", states=("owner",), broker="broker"),
    "locks show": WatchSpec(("topic", "queue"), states=("state", "owner", "locked"),
                            broker="queue"),
    "consumers": WatchSpec(("client_id",), states=("brokers", "subscriptions", "strategy")),
    "topic status": WatchSpec(("broker", "queue_id"), count="messages", position="max_offset",
                              broker="broker"),
    "diagnose": WatchSpec(("code",), states=("severity", "rank")),
}


def broker_of(row: dict[str, Any], spec: WatchSpec) -> str | None:
    if spec.broker is None:
        return None
    v = row.get(spec.broker)
    if v is None:
        return None
    return str(v).rpartition(":")[0] if spec.broker == "queue" else str(v)


@dataclass(slots=True)
class _Seen:
    row: dict[str, Any]
    at_ms: int
    changed: dict[str, int] = field(default_factory=dict)  # state -> round it changed in


class Deltas:
    """The rows of the previous rounds, by key, and what changed since."""

    def __init__(self, spec: WatchSpec) -> None:
        self.spec = spec
        self.seen: dict[tuple[Any, ...], _Seen] = {}
        self.round = 0

    def key(self, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row.get(k) for k in self.spec.keys)

    def update(self, rows: Iterable[dict[str, Any]], failed: Iterable[str], now_ms: int
               ) -> list[dict[str, Any]]:
        """One round's rows in (``failed``: the brokers that did not answer); per row out:
        its key columns and ``count_change``, ``count_per_s``, ``rate_per_s``, ``changed``
        (states changed in the last rounds), ``stale`` and ``stale_age_s``; rows of a broker
        that did not answer carry their last good values (``row``)."""
        self.round += 1
        down = set(failed)
        out: list[dict[str, Any]] = []
        present: set[tuple[Any, ...]] = set()
        for row in rows:
            k = self.key(row)
            present.add(k)
            prev = self.seen.get(k)
            b = broker_of(row, self.spec)
            if (prev is not None and down and self._unknown(row)
                    and (b in down or self.spec.broker is None)):
                out.append(self._stale(k, prev, now_ms))
                continue
            out.append(self._fresh(k, row, prev, now_ms))
        for k, prev in list(self.seen.items()):
            if k in present:
                continue
            b = broker_of(prev.row, self.spec)
            if (b is not None and b in down) or (b is None and self.spec.broker is None and down):
                out.append(self._stale(k, prev, now_ms))
            else:
                del self.seen[k]  # gone (a queue or client that left): forgotten
        return out

    def _unknown(self, row: dict[str, Any]) -> bool:
        cols = [c for c in (self.spec.count, self.spec.position) if c]
        return bool(cols) and all(row.get(c) is None for c in cols)

    def _fresh(self, k: tuple[Any, ...], row: dict[str, Any], prev: _Seen | None,
               now_ms: int) -> dict[str, Any]:
        d: dict[str, Any] = dict(zip(self.spec.keys, k, strict=True))
        d.update(count_change=None, count_per_s=None, rate_per_s=None, stale=False,
                 stale_age_s=None)
        changed = dict(prev.changed) if prev else {}
        if prev is not None:
            dt = (now_ms - prev.at_ms) / 1000.0
            c = self.spec.count
            if c and _num(row.get(c)) and _num(prev.row.get(c)):
                d["count_change"] = row[c] - prev.row[c]
                d["count_per_s"] = d["count_change"] / dt if dt > 0 else None
            p = self.spec.position
            if p and _num(row.get(p)) and _num(prev.row.get(p)) and dt > 0:
                d["rate_per_s"] = max(row[p] - prev.row[p], 0) / dt
            for s in self.spec.states:
                if row.get(s) != prev.row.get(s):
                    changed[s] = self.round
        changed = {s: r for s, r in changed.items() if self.round - r < HIGHLIGHT_ROUNDS}
        d["changed"] = sorted(changed)
        self.seen[k] = _Seen(dict(row), now_ms, changed)
        return d

    def _stale(self, k: tuple[Any, ...], prev: _Seen, now_ms: int) -> dict[str, Any]:
        d: dict[str, Any] = dict(zip(self.spec.keys, k, strict=True))
        d.update(count_change=None, count_per_s=None, rate_per_s=None, changed=[],
                 stale=True, stale_age_s=round((now_ms - prev.at_ms) / 1000.0, 3),
                 row=dict(prev.row))
        return d


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass(frozen=True, slots=True)
class WatchRound:
    """One round: its number (from 1), when its read started (ms) and how long it took, the
    interval asked for, whether the read took longer (``late``: the next starts at once), the
    brokers that did not answer, the per-row deltas, and the view's value."""

    n: int
    started_ms: int
    read_s: float
    interval_s: float
    failed: tuple[str, ...]
    deltas: list[dict[str, Any]]
    value: Any

    @property
    def late(self) -> bool:
        return self.read_s > self.interval_s

    def header(self) -> dict[str, Any]:
        return {"round": self.n, "capture_ts": self.started_ms, "interval_s": self.interval_s,
                "read_s": round(self.read_s, 3), "late": self.late,
                "stale_brokers": list(self.failed)}

    def note(self) -> str | None:
        """What the header says of a late round."""
        if not self.late:
            return None
        return (f"the read took {self.read_s:.1f}s, longer than the {self.interval_s:g}s "
                "interval: rounds follow each other without a pause")


def failed_brokers(value: Any) -> tuple[str, ...]:
    """The brokers a view's read says did not answer (its ``failures``)."""
    fs = getattr(value, "failures", None) or ()
    return tuple(sorted({str(getattr(f, "broker", f)) for f in fs}))


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return False


def run_watch(fetch: Callable[[], Any], rows_of: Callable[[Any], list[dict[str, Any]]],
              spec: WatchSpec, interval_s: float, sink: Callable[[WatchRound], None], *,
              count: int | None = None, now_ms: Callable[[], int] | None = None,
              wait: Callable[[float], bool] | None = None,
              monotonic: Callable[[], float] = time.monotonic) -> int:
    """Rounds until ``count`` rounds (or ``wait`` returns True: a stop): each ``fetch()``,
    its rows (``rows_of``) through :class:`Deltas`, then ``sink(round)``; the next round
    starts ``interval_s`` after this one started, or at once when the read took longer.
    Returns the rounds done."""
    now = now_ms or clock_ms
    pause = wait or _sleep
    deltas = Deltas(spec)
    n = 0
    while True:
        t0, started = monotonic(), now()
        value = fetch()
        read_s = monotonic() - t0
        failed = failed_brokers(value)
        n += 1
        sink(WatchRound(n, started, read_s, interval_s, failed,
                        deltas.update(rows_of(value), failed, started), value))
        if count is not None and n >= count:
            return n
        if pause(max(0.0, interval_s - (monotonic() - t0))):
            return n

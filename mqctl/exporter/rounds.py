"""The exporter's rounds: each reads every matching group as ``mqctl snapshot --all-groups``
does (the same requests, read-only), feeds the queue windows, rolls the queues up as the lag
report does and renders the Prometheus text of the lag families (:mod:`mqctl.lagmetrics`).
A scrape serves the text of the last complete round with the exporter's own series
(:meth:`Exporter.metrics`): reading the cluster never happens per scrape.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.errors import MqctlError
from mqctl.exporter.history import OwnerHistory, apply_verdicts
from mqctl.exporter.rollup import broker_rows, group_rows, topic_rows
from mqctl.exporter.window import QueueWindows, RoundRead
from mqctl.laghealth import HealthOptions
from mqctl.lagmetrics import RUN_METRICS, family, lag_families, num
from mqctl.snapshot import capture, discover_groups
from mqctl.timeparse import now_ms, parse_duration_option
from mqctl.views.topics import match_name

if TYPE_CHECKING:
    from mqctl.admin import Admin


@dataclass(frozen=True, slots=True)
class ExporterOptions:
    """``interval_s`` between round starts; ``groups`` (``--groups``: a substring or glob of
    the group names, as the views' ``--match``); the lag report's ``window``, ``allowed_lag``
    and ``allowed_lag_seconds`` (their defaults: mqctl.lagoptions); ``health``: its rebalance
    and health options."""

    interval_s: float = 30.0
    groups: str | None = None
    include_system: bool = False
    window: int = 10
    allowed_lag: int = 0
    allowed_lag_seconds: float = 10.0
    health: HealthOptions = field(default_factory=HealthOptions)

    @classmethod
    def parse(cls, interval: str, **kw: Any) -> ExporterOptions:
        """The options with ``interval`` as given (``30s``, ``2m``; a bare number: seconds)."""
        ms = parse_duration_option(interval, "--interval", lo_ms=100, hi_ms=86_400_000)
        return cls(interval_s=ms / 1000.0, **kw)


@dataclass(frozen=True, slots=True)
class Round:
    """One finished round: when it started (the capture time) and how long it took, the
    groups read, what failed (one line each), and its text (the lag families)."""

    started_ms: int
    duration_s: float
    groups: int
    errors: tuple[str, ...]
    text: str
    queues: int = 0
    storms: int | None = None  # over the groups' history held; None: a group has too little

    @property
    def complete(self) -> bool:
        return not self.errors


@dataclass
class _Counters:
    rounds: int = 0
    round_errors: int = 0
    overruns: int = 0
    last_success_ms: int | None = None
    scrapes: int = 0
    extra: dict[str, float] = field(default_factory=dict)


SELF_METRICS = [
    ("mqctl_exporter_round_timestamp_seconds", "gauge",
     "When the round served started reading the cluster (unix seconds)."),
    ("mqctl_exporter_round_duration_seconds", "gauge",
     "How long the round served took to read the cluster (seconds)."),
    ("mqctl_exporter_round_groups", "gauge", "Groups the round served read."),
    ("mqctl_exporter_round_queues", "gauge", "Queues the round served holds a row of."),
    ("mqctl_exporter_interval_seconds", "gauge", "Time between round starts (--interval)."),
    ("mqctl_exporter_window_samples", "gauge",
     "Samples held in memory over all queues (at most queues x --window x 2)."),
    ("mqctl_exporter_owner_history_entries", "gauge",
     "Owner changes, resets and queue owner points held for the rebalance and health series "
     "(the last 2 x storm window + the longest round)."),
    ("mqctl_exporter_rounds_total", "counter", "Rounds finished since the exporter started."),
    ("mqctl_exporter_round_errors_total", "counter",
     "Rounds that did not read everything (a broker, a group or the name server did not "
     "answer): their unread series are NaN."),
    ("mqctl_exporter_round_overruns_total", "counter",
     "Rounds that took longer than --interval (the next one started late)."),
]


class Exporter:
    """The rounds' state: the queue windows, the last finished round, the counters. Rounds run
    one at a time (:meth:`run_round`); :meth:`metrics` may be called from any thread."""

    def __init__(self, options: ExporterOptions) -> None:
        self.options = options
        self.windows = QueueWindows(options.window, options.allowed_lag,
                                    options.allowed_lag_seconds)
        self.history = OwnerHistory(options.health)
        self.counters = _Counters()
        self.last: Round | None = None
        self._lock = threading.Lock()
        self._known_groups: set[str] = set()
        self._served: bytes | None = None

    def reconfigure(self, options: ExporterOptions) -> None:
        """New options (SIGHUP): a new window length starts the windows afresh."""
        if options.health != self.options.health:
            self.history = OwnerHistory(options.health)
        if options.window != self.options.window:
            self.windows = QueueWindows(options.window, options.allowed_lag,
                                        options.allowed_lag_seconds)
        else:
            self.windows.allowed_lag = options.allowed_lag
            self.windows.allowed_lag_seconds = options.allowed_lag_seconds
        self.options = options

    async def read(self, admin: Admin, namesrv: str) -> tuple[RoundRead, list[str], int]:
        """One read of the cluster: (what was read, the failures, groups)."""
        ts = now_ms()
        errors: list[str] = []
        discovery: list[Any] = []
        try:
            groups = [g for g in await discover_groups(
                admin, include_system=self.options.include_system, failures=discovery)
                if match_name(g, self.options.groups)]
        except MqctlError as exc:
            return RoundRead(ts, [], frozenset(self._known_groups)), [
                f"group list: {exc.message}"], 0
        errors += [f"group list@{f.broker}: {f.message}" for f in discovery]
        snap = await capture(admin, groups, namesrv=namesrv)
        errors += [f"{g}: {m}" for g, m in sorted(snap.group_errors.items())]
        failed: dict[str, set[str]] = {}
        for g, f in snap.failures:
            failed.setdefault(g, set()).add(f.broker)
            errors.append(f"{g}@{f.broker}: {f.message}")
        # a group no longer listed while a master did not list its groups: unknown, not gone
        unread: set[str] = set(snap.group_errors)
        if discovery:
            unread |= self._known_groups - set(groups)
        read = RoundRead(snap.capture_ts, snap.rows, frozenset(unread),
                         {g: frozenset(b) for g, b in failed.items()})
        return read, errors, len(groups)

    def take(self, read: RoundRead, errors: list[str], groups: int, started: float) -> Round:
        """Feed one read into the windows and make it the round served."""
        queues = self.windows.update(read)
        self.history.add(read.capture_ts, read.rows)
        topics = topic_rows(queues)
        grows = group_rows(topics, read.group_errors)
        apply_verdicts(grows, self.history.verdicts(grows))
        self._known_groups = {str(r["group"]) for r in grows}
        brokers = broker_rows(queues)
        text = "\n".join(lag_families(topics, grows, brokers)) + "\n"
        storms: list[int | None] = [g.get("storms") for g in grows if g.get("read", True)]
        known = [s for s in storms if s is not None]
        rnd = Round(read.capture_ts, time.monotonic() - started, groups, tuple(errors), text,
                    len(queues), sum(known) if storms and len(known) == len(storms) else None)
        with self._lock:
            self.last = rnd
            self.counters.rounds += 1
            if errors:
                self.counters.round_errors += 1
            else:
                self.counters.last_success_ms = read.capture_ts
            if rnd.duration_s > self.options.interval_s:
                self.counters.overruns += 1
            self._served = self._serve(rnd)
        return rnd

    async def run_round(self, admin: Admin, namesrv: str) -> Round:
        started = time.monotonic()
        read, errors, groups = await self.read(admin, namesrv)
        return self.take(read, errors, groups, started)

    def fail_round(self, message: str, started: float) -> Round:
        """A round that could not read at all (no connection): every known series unknown."""
        read = RoundRead(now_ms(), [], frozenset(self._known_groups))
        return self.take(read, [message], 0, started)

    def metrics(self) -> str | None:
        """The text a scrape gets: the last round's series, the lag report's run series (as
        the round's) and the exporter's own; None before the first round finished. Made once
        per round (:meth:`take`), so a scrape only copies it."""
        body = self.metrics_bytes()
        return None if body is None else body.decode("utf-8")

    def metrics_bytes(self) -> bytes | None:
        with self._lock:
            if self._served is None:
                return None
            self.counters.scrapes += 1
            return self._served

    def _serve(self, rnd: Round) -> bytes:
        """The whole text of ``rnd`` (under the lock: the counters as they are now)."""
        c = self.counters
        values = {
            "mqctl_exporter_round_timestamp_seconds": rnd.started_ms / 1000.0,
            "mqctl_exporter_round_duration_seconds": rnd.duration_s,
            "mqctl_exporter_round_groups": rnd.groups,
            "mqctl_exporter_round_queues": rnd.queues,
            "mqctl_exporter_interval_seconds": self.options.interval_s,
            "mqctl_exporter_window_samples": self.windows.samples_held(),
            "mqctl_exporter_owner_history_entries": self.history.held(),
            "mqctl_exporter_rounds_total": c.rounds,
            "mqctl_exporter_round_errors_total": c.round_errors,
            "mqctl_exporter_round_overruns_total": c.overruns}
        out = [rnd.text.rstrip("\n")]
        out += run_families(rnd, c.last_success_ms)
        for name, kind, help_ in SELF_METRICS:
            out += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}",
                    f"{name} {num(values[name])}"]
        return ("\n".join(out) + "\n").encode("utf-8")


def run_families(rnd: Round, last_success_ms: int | None) -> list[str]:
    """The lag report's run series, as a round says them (the shipped alerts on a stale or
    missing report then watch the exporter): the last round that read everything, the
    round's duration and capture time, its groups, the storms of the groups' history held;
    nothing is quarantined by a live read; lock takeovers (the broker's lock.log) and
    --fail-on breaches are not judged by the exporter (NaN)."""
    run = {"run_ts_s": None if last_success_ms is None else last_success_ms / 1000.0,
           "duration_s": rnd.duration_s, "last_capture_s": rnd.started_ms / 1000.0,
           "groups": rnd.groups, "quarantined": 0, "storms": rnd.storms}
    out: list[str] = []
    for name, key, help_ in RUN_METRICS:
        if key == "run_ts_s" and last_success_ms is None:
            out += [f"# HELP {name} {help_}", f"# TYPE {name} gauge"]  # absent: none yet
            continue
        out += family(name, help_, [f"{name} {num(run.get(key))}"])
    return out

"""The lag report's options, declared once.

Every option of ``mqctl lag report`` is declared here, with its flag, help text, default (as the
flag takes it: ``5m``), metavar, bounds and how its text is read (a duration, a zone, a time):

* :class:`Options`, the options that shape what the report computes, is the declaration: one
  dataclass field per option, its spec in the field's metadata (:func:`option`);
* :data:`RUN_SPECS` declares the settings of one run that compute nothing (where the output goes,
  Spark's master and settings, thresholds, the terminal's row limit).

From these the rest is derived: the ``mqctl lag report`` command's parameters
(:mod:`mqctl.cli.lag`), the spark-submit entry's parser (:func:`mqctl.lagjob.job.build_parser`)
and :meth:`Options.fingerprint`, the options the state's outputs were computed with: every field
counts unless declared ``output_only`` (it only sizes what every run writes anew: summary rows,
HTML charts). A re-run whose fingerprint differs from the state's computes every capture again.

No Spark and no Typer here: ``mqctl --help`` and ``mqctl lag report --help`` read this module,
and must not import pyspark (tests/test_startup.py, tests/lagjob/test_cli.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import Field, dataclass, field, fields
from datetime import UTC, timedelta, timezone, tzinfo
from enum import StrEnum
from typing import Any

from mqctl.errors import UsageError

# lock.log's and the 5.x client log's logback pattern pins the zone: GMT+8
# (rocketmq-client's rmq.client.logback.xml; broker's rmq.broker.logback.xml)
GMT8 = timezone(timedelta(hours=8))

SPEC = "mqctl.option"  # the key of an option's spec in its field's metadata


# --------------------------------------------------------------------------------------------
# readers of an option's text

def duration_ms(text: str, flag: str = "duration") -> int:
    """A CLI duration: ``10s``, ``5m``, ``1h30m``, ``PT2M``, or a bare number of seconds
    (``0`` turns a feature off); not negative, ASCII digits, bounded
    (:func:`mqctl.timeparse.parse_duration_option`)."""
    from mqctl.timeparse import parse_duration_option

    return parse_duration_option(text, flag)


def zone(value: str | tzinfo | None) -> tzinfo | None:
    if value is None or isinstance(value, tzinfo):
        return value
    return parse_tz(value)


def parse_tz(text: str | None) -> tzinfo | None:
    """``None``/``local`` -> this machine's zone (``None``); ``UTC``, ``+08:00``, ``GMT+8``,
    ``Asia/Shanghai`` -> that zone."""
    if text is None:
        return None
    s = text.strip()
    if s.lower() in ("", "local"):
        return None
    if s.upper() in ("UTC", "Z", "GMT"):
        return UTC
    m = re.fullmatch(r"(?:UTC|GMT)?\s*([+-])([0-9]{1,2})(?::?([0-9]{2}))?", s, re.IGNORECASE)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        h, mi = int(m.group(2)), int(m.group(3) or 0)
        if h > 18 or mi > 59:
            raise UsageError(f"bad time zone offset {text!r}", hint="use e.g. +08:00 or UTC")
        return timezone(sign * timedelta(hours=h, minutes=mi))
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(s)
    except Exception:  # ZoneInfoNotFoundError, ValueError, ...
        raise UsageError(f"unknown time zone {text!r}",
                         hint="use 'local', 'UTC', an offset like +08:00, or an IANA name "
                              "like Asia/Shanghai") from None


def time_ms(text: str | None, flag: str, tz: tzinfo | None) -> int | None:
    if text is None or not str(text).strip():
        return None
    from mqctl.timeparse import parse_time

    try:
        return parse_time(str(text), tz=tz, strict=False)
    except UsageError as exc:
        exc.message = f"{flag}: {exc.message}"
        exc.args = (exc.message,)
        raise



# --------------------------------------------------------------------------------------------
# the declaration

class Kind(StrEnum):
    """How an option's flag text becomes its value."""

    INT = "int"
    FLOAT = "float"
    TEXT = "text"
    FLAG = "flag"  # on when given
    LIST = "list"  # repeatable, each value kept
    DURATION = "duration"  # 10s, 5m, 1h30m, PT2M, or seconds -> ms
    ZONE = "zone"  # local, UTC, +08:00, GMT+8, Asia/Shanghai
    TIME = "time"  # 2024-06-01, 2024-06-01T10:00:00Z, -2h (read in --tz)


# the type of the flag's value, by kind (what the CLI and argparse hand over)
FLAG_TYPES: dict[Kind, type] = {Kind.INT: int, Kind.FLOAT: float, Kind.TEXT: str,
                                Kind.FLAG: bool, Kind.LIST: str, Kind.DURATION: str,
                                Kind.ZONE: str, Kind.TIME: str}


@dataclass(frozen=True, slots=True)
class Spec:
    """One option: its flag (None: the library's only, e.g. chart sizes), help, kind, the
    default as the flag takes it, metavar and bounds; ``output_only``: it only sizes what every
    run writes anew, so it is left out of the fingerprint."""

    flag: str | None
    help: str
    kind: Kind = Kind.TEXT
    default: Any = None
    metavar: str | None = None
    min: float | None = None
    max: float | None = None
    output_only: bool = False
    required: bool = False
    # spark-submit's entry takes a different default (its master comes from spark-submit)
    submit_default: Any = ...
    name: str = ""  # the field's (or run setting's) name: the keyword of run_report

    @property
    def submit(self) -> Any:
        return self.default if self.submit_default is ... else self.submit_default

    def value(self, given: Any) -> Any:
        """The field's value of what the flag (or a library caller) gave: a duration's text in
        ms; anything else as it is."""
        if self.kind is Kind.DURATION and isinstance(given, str):
            return duration_ms(given, self.flag or self.name)
        return given

    def check(self, value: Any) -> None:
        """A value outside the declared bounds is a usage error naming the flag."""
        if value is None or isinstance(value, bool) or not isinstance(value, int | float):
            return
        what = self.flag or self.name
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        if self.min is not None and self.max is not None and not self.min <= value <= self.max:
            raise UsageError(f"{what} must be from {self.min:g} to {self.max:g} (got {shown})",
                             hint=self.help)
        if self.min is not None and value < self.min:
            raise UsageError(f"{what} must be at least {self.min:g} (got {shown})",
                             hint=self.help)


def option(default: Any, flag: str | None, help: str, *, kind: Kind | None = None,
           metavar: str | None = None, min: float | None = None, max: float | None = None,
           output_only: bool = False) -> Any:
    """A field of :class:`Options` declared as an option: ``default`` as the flag takes it
    (``"5m"`` for a duration; the field holds its ms)."""
    if kind is None:
        kind = {bool: Kind.FLAG, int: Kind.INT, float: Kind.FLOAT}.get(type(default), Kind.TEXT)
    spec = Spec(flag, help, kind, default, metavar, min, max, output_only)
    return field(default=spec.value(default), metadata={SPEC: spec})


@dataclass(frozen=True, slots=True)
class Options:
    """What the report computes with. Values as a library caller gives them: counts, fractions,
    durations in ms, zones and times as text (or ``tzinfo``); the zones and times resolved
    (``tz_info``, ``since_ms``, ...) when the options are made. Out-of-bounds values and bad
    zones or times raise :class:`UsageError` naming the flag."""

    window: int = option(10, "--window", "Captures in the status window (Burrow's intervals).",
                         metavar="N", min=1)
    allowed_lag: int = option(0, "--allowed-lag", "Lag still considered caught up (Burrow's "
                              "allowed-lag).", metavar="N", min=0)
    allowed_lag_seconds: float = option(
        10.0, "--allowed-lag-seconds", "Time lag still considered caught up: consumers commit "
        "every 5 s, so healthy groups trail by seconds (0 = Burrow's rule alone).",
        metavar="SECONDS", min=0, max=31_536_000)
    tz: str | tzinfo | None = option(
        None, "--tz", "Time zone of mqadmin dates and of path timestamps without a zone "
        "(default: this machine's).", kind=Kind.ZONE, metavar="ZONE")
    log_tz: str | tzinfo | None = option(
        None, "--log-tz", "Time zone of 4.x client logs (default: this machine's).",
        kind=Kind.ZONE, metavar="ZONE")
    broker_log_tz: str | tzinfo | None = option(
        "+08:00", "--broker-log-tz", "Time zone of lock.log and 5.x client logs (their logback "
        "pattern pins GMT+8).", kind=Kind.ZONE, metavar="ZONE")
    cluster: str = option(
        "", "--cluster", "Cluster name for inputs that carry none (store files, mqadmin "
        "captures, logs). Without it, logs take the cluster of their group's snapshots when "
        "that is one cluster.", metavar="CLUSTER")
    max_skew_ms: int = option(
        "5m", "--max-skew", "How far apart a consumerOffset.json and the topicStatus capture "
        "giving its max offsets may be.", kind=Kind.DURATION, metavar="DURATION")
    align_ms: int = option(
        "10s", "--align", "Records of a cluster within this of a capture's first record are one "
        "capture (per-broker exports of one cron run), unless they observe a queue it already "
        "holds: a capture of the same queues taken again is a capture of its own; 0 = exact "
        "times.", kind=Kind.DURATION, metavar="DURATION")
    move_window_ms: int = option(
        "5m", None, "A queue lost and gained again within this time is one move "
        "(rebalance/moves).", kind=Kind.DURATION)
    round_gap_ms: int = option(
        "20s", None, "Rebalance events less than this apart are one round.",
        kind=Kind.DURATION)
    storm_rounds: int = option(3, "--storm-rounds", "Rebalance rounds within --storm-window "
                               "that make a storm.", metavar="N", min=1)
    storm_window_ms: int = option(
        "10m", "--storm-window", "Storm window; also how far back a group's health looks.",
        kind=Kind.DURATION, metavar="DURATION")
    # a round longer than this is a storm by itself (docs/exports.md section 5); 0: off
    storm_round_max_ms: int = option(
        "1m", "--storm-round-max", "A rebalance round lasting longer than this is a storm by "
        "itself (continuous churn); 0 = off.", kind=Kind.DURATION, metavar="DURATION")
    # group health: ERR at this share of queue time unowned in the storm window
    unowned_max: float = option(
        0.1, "--unowned-max", "Group health ERR when queues were unowned this share of the "
        "queue time in the storm window.", metavar="FRACTION", min=0, max=1)
    since: str | None = option(
        None, "--since", "Report captures and events from this time on (e.g. 2024-06-01, "
        "-24h); earlier captures still feed the status window.", kind=Kind.TIME,
        metavar="TIME")
    until: str | None = option(None, "--until", "Ignore what was captured after this time.",
                               kind=Kind.TIME, metavar="TIME")
    # sizes of what every run writes anew (summary.json's rows, report.html's charts)
    summary_limit: int = option(1000, None, "Rows of summary.json's summary and groups.",
                                min=1, output_only=True)
    chart_groups: int = option(20, None, "Groups charted in report.html.", min=1,
                               output_only=True)
    chart_points: int = option(2000, None, "Points per chart in report.html.", min=1,
                               output_only=True)
    timeline_events: int = option(5000, None, "Events on report.html's timeline.", min=1,
                                  output_only=True)
    # resolved when made (:meth:`__post_init__`): the zones, and the times in ms
    tz_info: tzinfo | None = field(init=False, default=None)
    log_tz_info: tzinfo | None = field(init=False, default=None)
    broker_log_tz_info: tzinfo = field(init=False, default=GMT8)
    since_ms: int | None = field(init=False, default=None)  # from this time on
    until_ms: int | None = field(init=False, default=None)  # nothing observed after it

    def __post_init__(self) -> None:
        for f, spec in declared(type(self)):
            spec.check(getattr(self, f.name))
        tz = zone(self.tz)
        set_ = object.__setattr__  # (frozen)
        set_(self, "tz_info", tz)
        set_(self, "log_tz_info", zone(self.log_tz))
        set_(self, "broker_log_tz_info", zone(self.broker_log_tz) or GMT8)
        set_(self, "since_ms", time_ms(self.since, "--since", tz))
        set_(self, "until_ms", time_ms(self.until, "--until", tz))
        if self.since_ms is not None and self.until_ms is not None \
                and self.since_ms > self.until_ms:
            raise UsageError("--since is after --until", hint="give --since before --until")

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Options:
        """Options from values keyed by field name, as the flags give them (a duration's text
        or its ms); keys that are no option are left out. What is not given is the default."""
        given = {f.name: spec.value(values[f.name]) for f, spec in declared(cls)
                 if f.name in values and values[f.name] is not None}
        # (a None zone or time is the default: this machine's zone, no bound)
        return cls(**given)

    def fingerprint(self) -> str:
        """The options the state's outputs were computed with: every field (given and resolved)
        but the ``output_only`` ones. A re-run whose fingerprint differs from the state's
        computes every capture again."""
        import hashlib

        keep = {f.name: str(getattr(self, f.name)) for f in fields(self)
                if not (f.metadata.get(SPEC) and f.metadata[SPEC].output_only)}
        return hashlib.sha256(repr(sorted(keep.items())).encode()).hexdigest()[:16]


def declared(cls: type[Options] = Options) -> Iterator[tuple[Field[Any], Spec]]:
    """The declared options of ``cls`` (its fields with a spec), in declaration order, each
    spec with its field's name."""
    import dataclasses

    for f in fields(cls):
        spec = f.metadata.get(SPEC)
        if spec is not None:
            yield f, dataclasses.replace(spec, name=f.name)


# the settings of one run that compute nothing (not in the fingerprint), declared like options
RUN_SPECS: tuple[Spec, ...] = (
    Spec("--out", "Output directory (Parquet datasets, summaries, HTML, Prometheus file).",
         metavar="DIR", required=True, name="out"),
    Spec("--master", "Spark master URL (the spark-submit entry: spark-submit's).",
         default="local[*]", metavar="URL", submit_default=None, name="master"),
    Spec("--fail-on", "Threshold that makes the run exit 9 after writing everything, e.g. "
         "'lag_seconds>300', 'group=GID_*:status>=WARN', 'lag>10000' (repeatable).",
         Kind.LIST, metavar="EXPR", name="fail_on"),
    Spec("--prom-file", "Write the Prometheus textfile here (e.g. node_exporter's textfile "
         "directory) instead of OUT/mqctl_lag.prom.", metavar="FILE", name="prom_file"),
    Spec("--conf", "Spark setting KEY=VALUE (repeatable).", Kind.LIST, metavar="KEY=VALUE",
         name="conf"),
    Spec("--limit", "Groups shown here (every group and topic is in summary.csv).", Kind.INT,
         20, metavar="N", min=1, name="limit"),
    Spec("--state", "Where snapshot files are kept parsed between runs (an ingested Parquet "
         "table, its manifest and what later captures need; default OUT/_state): a re-run "
         "parses only new or changed files; new captures after the reported ones are computed "
         "alone and added.", metavar="DIR", name="state"),
    Spec("--full", "Re-parse every input and rewrite every date (rebuilds --state).",
         Kind.FLAG, False, name="full"),
    Spec("--force", "Write into an --out or --state that holds files and is not mqctl's, and "
         "replace a --prom-file that mqctl did not write (docs/errors.md).", Kind.FLAG, False,
         name="force"),
)


def flag_specs() -> list[Spec]:
    """Every option with a flag, in the order help shows them: where the run writes and runs,
    what it computes with, then thresholds and the rest of the run's settings."""
    run = {s.name: s for s in RUN_SPECS}
    return ([run["out"], run["master"]]
            + [s for _f, s in declared() if s.flag is not None]
            + [s for s in RUN_SPECS if s.name not in ("out", "master")])


def spark_conf(pairs: list[str] | None) -> dict[str, str]:
    """``--conf KEY=VALUE`` pairs as Spark settings (a later one wins)."""
    conf: dict[str, str] = {}
    for kv in pairs or []:
        k, sep, v = kv.partition("=")
        if not sep or not k.strip():
            raise UsageError(f"bad --conf {kv!r}", hint="write KEY=VALUE, e.g. "
                             "spark.driver.memory=4g")
        conf[k.strip()] = v
    return conf


__all__ = ["FLAG_TYPES", "GMT8", "RUN_SPECS", "Kind", "Options", "Spec", "declared",
           "duration_ms", "flag_specs", "option", "parse_tz", "spark_conf", "time_ms", "zone"]

"""``--fail-on`` thresholds: ``[cluster=C:][group=G:][topic=T:]METRIC OP VALUE``.

Parsed before Spark starts (a bad expression is a usage error, exit 2) and evaluated on the
latest capture of every group and topic after everything is written; any breach makes the run
exit 9 (:class:`mqctl.errors.ThresholdBreached`) for cron alerting.

Examples: ``lag_seconds>300``, ``group=GID_ORDER:lag>10000``, ``group=GID_*:status>=WARN``,
``max_lag_seconds>5m``, ``quarantined>0``, ``storms>=1``, ``health>=WARN`` (the group health:
status, rebalance storms and unowned queues together), ``in_storm==1``,
``unowned_share>=0.1``.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from mqctl.errors import UsageError
from mqctl.timeparse import parse_duration_ms

# metric -> (column of the latest-status table, kind); kind: number | seconds | status | health
METRICS: dict[str, tuple[str, str]] = {
    "lag": ("total_lag", "number"),
    "total_lag": ("total_lag", "number"),
    "max_lag": ("max_lag", "number"),
    "lag_seconds": ("lag_seconds", "seconds"),
    "max_lag_seconds": ("lag_seconds", "seconds"),
    "peak_lag": ("peak_lag", "number"),
    "peak_lag_seconds": ("peak_lag_seconds", "seconds"),
    "status": ("status_code", "status"),
    "group_status": ("group_status_code", "status"),
    "complete": ("complete", "number"),
    "consume_rate": ("consume_rate", "number"),
    "produce_rate": ("produce_rate", "number"),
    "queues": ("queues", "number"),
    "members": ("members", "number"),
    "rebalances": ("rebalances", "number"),
    "health": ("health_code", "health"),
    "in_storm": ("in_storm", "number"),
    "unowned_share": ("unowned_share", "number"),
    "unowned_now": ("unowned_now", "number"),
}
GLOBAL_METRICS = ("quarantined", "storms", "lock_takeovers")
SCOPES = ("cluster", "group", "topic")
OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
    ">": operator.gt, "<": operator.lt, "=": operator.eq,
}
_EXPR = re.compile(r"^\s*([A-Za-z_]+)\s*(>=|<=|==|!=|>|<|=)\s*(\S+)\s*$")
STATUS_NAMES = ("OK", "WARN", "REWIND", "STALL", "STOP")
# the group health in Burrow's group words (mqctl/lagjob/transforms/health.py)
HEALTH_NAMES = ("OK", "WARN", "ERR")


def _names(kind: str) -> tuple[str, ...]:
    return HEALTH_NAMES if kind == "health" else STATUS_NAMES


@dataclass(frozen=True, slots=True)
class Threshold:
    text: str
    metric: str
    op: str
    value: float
    scope: tuple[tuple[str, str], ...] = ()

    @property
    def column(self) -> str | None:
        m = METRICS.get(self.metric)
        return m[0] if m else None

    def compare(self, actual: float) -> bool:
        return OPS[self.op](actual, self.value)

    def shown_value(self) -> str:
        kind = METRICS.get(self.metric, ("", ""))[1]
        if kind in ("status", "health"):
            return _names(kind)[int(self.value)]
        v = self.value
        return str(int(v)) if float(v).is_integer() else str(v)


@dataclass(frozen=True, slots=True)
class Breach:
    expr: str
    metric: str
    value: Any
    threshold: str
    cluster: str | None = None
    group: str | None = None
    topic: str | None = None
    count: int = 1  # rows breaching this expression (details are capped)

    def to_dict(self) -> dict[str, Any]:
        return {"expr": self.expr, "metric": self.metric, "value": self.value,
                "threshold": self.threshold, "cluster": self.cluster, "group": self.group,
                "topic": self.topic, "count": self.count}


def _bad(text: str, why: str) -> UsageError:
    return UsageError(f"bad --fail-on {text!r}: {why}",
                      hint="write [group=G:][topic=T:]METRIC OP VALUE, e.g. 'lag_seconds>300' or "
                           "'group=GID_*:status>=WARN'; metrics: "
                           + ", ".join([*METRICS, *GLOBAL_METRICS]))


def parse_threshold(text: str) -> Threshold:
    parts = text.strip().split(":")
    body = parts[-1]
    scope: list[tuple[str, str]] = []
    for p in parts[:-1]:
        k, sep, v = p.partition("=")
        k = k.strip().lower()
        if not sep or k not in SCOPES or not v.strip():
            raise _bad(text, f"scope {p!r} is not cluster=, group= or topic=")
        scope.append((k, v.strip()))
    m = _EXPR.match(body)
    if not m:
        raise _bad(text, "expected METRIC OP VALUE")
    metric, op, raw = m.group(1).lower(), m.group(2), m.group(3)
    if metric not in METRICS and metric not in GLOBAL_METRICS:
        raise _bad(text, f"unknown metric {metric!r}")
    if metric in GLOBAL_METRICS and scope:
        raise _bad(text, f"{metric} is a run total and takes no scope")
    kind = METRICS.get(metric, ("", "number"))[1]
    value: float
    if kind in ("status", "health"):
        name, names = raw.upper(), _names(kind)
        if name not in names:
            raise _bad(text, f"{metric} must be one of {', '.join(names)}")
        value = float(names.index(name))
    else:
        try:
            value = float(raw)
        except ValueError:
            if kind != "seconds":
                raise _bad(text, f"{raw!r} is not a number") from None
            try:
                value = parse_duration_ms(raw) / 1000.0
            except UsageError:
                raise _bad(text, f"{raw!r} is neither a number of seconds nor a duration "
                                 "(5m, 1h30m)") from None
        if not math.isfinite(value):
            raise _bad(text, "the value must be finite")
    return Threshold(text.strip(), metric, "==" if op == "=" else op, value, tuple(scope))


def parse_thresholds(texts: Iterable[str]) -> list[Threshold]:
    return [parse_threshold(t) for t in texts]


def glob_regex(pattern: str) -> str:
    """A shell glob (``*``, ``?``) as an anchored Java/Python regex."""
    out = []
    for ch in pattern:
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return "^" + "".join(out) + "$"


def evaluate(thresholds: list[Threshold], latest: Any, totals: dict[str, int],
             detail_limit: int = 20) -> list[Breach]:
    """Breaches of each threshold: group/topic metrics on the ``latest`` DataFrame (bounded:
    a count plus at most ``detail_limit`` rows per expression), run totals from ``totals``."""
    from pyspark.sql import functions as F

    out: list[Breach] = []
    for t in thresholds:
        if t.metric in GLOBAL_METRICS:
            actual = totals.get(t.metric, 0)
            if t.compare(actual):
                out.append(Breach(t.text, t.metric, actual, t.shown_value()))
            continue
        col = t.column
        assert col is not None
        num = F.col(col).cast("double")  # (in_storm is a boolean: 1 or 0)
        cond = num.isNotNull() & _sql_op(num, t.op, t.value)
        for k, v in t.scope:
            cond = cond & F.col(k).rlike(glob_regex(v))
        hits = latest.filter(cond)
        n = hits.count()
        if not n:
            continue
        rows = (hits.orderBy(F.col(col).desc() if t.op in (">", ">=") else F.col(col).asc())
                .select("cluster", "group", "topic", col).limit(detail_limit).collect())
        for r in rows:
            value = r[col]
            kind = METRICS[t.metric][1]
            if kind in ("status", "health"):
                value = _names(kind)[int(value)]
            out.append(Breach(t.text, t.metric, value, t.shown_value(), r["cluster"],
                              r["group"], r["topic"], n))
    return out


def _sql_op(c: Any, op: str, v: float) -> Any:
    return {">": c > v, ">=": c >= v, "<": c < v, "<=": c <= v, "==": c == v, "!=": c != v}[op]

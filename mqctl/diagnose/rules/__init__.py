"""The finding rules of ``mqctl diagnose`` (pure: readings in, findings out).

Each rule looks at what was read (:class:`mqctl.diagnose.types.Reading`; with ``--sample`` the
first and the second read) and returns its findings and one :class:`Check`: found, ok (with
the numbers that say so), not checked (the data it needs could not be read: no finding is
made from a guess), n/a, or needs --sample. The thresholds are RocketMQ's own, read from the
client's running info or the broker's config where they are there, else the defaults of the
RocketMQ class named next to them; docs/diagnose.md explains every finding.

Each finding also declares the facts it shows and the facts its cause explains
(:mod:`mqctl.diagnose.explain`), which rank it: a cause before the findings it explains.

The rules live by subject: :mod:`.membership` (who consumes), :mod:`.locks` (an orderly
group's locks), :mod:`.throughput` (how fast), :mod:`.failures` (messages that fail, offsets
that do not move) and :mod:`.broker` (the brokers' side); :mod:`.common` holds what they share.
:data:`RULES` runs them in one order, which is the order of the checks.
"""

from __future__ import annotations

from typing import Any

from mqctl.admin import dedupe
from mqctl.diagnose import explain as x
from mqctl.diagnose.rules import broker, failures, locks, membership, throughput
from mqctl.diagnose.rules.common import CAUGHT_UP_MS, Ctx, Rule, queue_lag, total_lag
from mqctl.diagnose.types import NOT_CHECKED, OK, SECOND_READ, Check, Diagnosis, Finding, Reading

# every rule in the order it runs, under the code it names its findings and check by: the order
# of the checks, and the last tie-break of the findings (mqctl.diagnose.explain)
RULES: tuple[tuple[str, Rule], ...] = (
    ("offline", membership.offline),
    ("consume-disabled", broker.consume_disabled),
    ("topic-not-readable", broker.topic_not_readable),
    ("client-silent", membership.client_silent),
    ("members", membership.member_checks),
    ("unowned-queues", membership.unowned),
    ("locks", locks.locks),
    ("consume-blocked", throughput.blocked),
    ("flow-control", throughput.flow_control),
    ("threads-saturated", throughput.saturated),
    ("consume-failing", failures.failing),
    ("retry-backlog", failures.retry_backlog),
    ("dlq", failures.dlq),
    ("offset-not-committed", failures.not_committed),
    ("broker", broker.brokers),
    ("pop", throughput.pop),
    ("rebalanced", membership.rebalanced),
    ("skew", throughput.skew),
    ("lag-growing", throughput.lag_growing),
)

# the tie-break among findings none of which explains another (mqctl.diagnose.explain ranks
# by explanation first): within a severity, causes before their effects
ORDER = ("offline", "consume-disabled", "topic-not-readable", "client-silent",
         "duplicate-client-id", "mixed-strategies", "membership-split", "subscription-mismatch",
         "unowned-queues", "lock-hung", "lock-stale", "lock-failed", "duplicates-expected",
         "consume-blocked", "flow-control",
         "threads-saturated", "consume-failing", "retry-backlog", "dlq",
         "offset-not-committed", SECOND_READ, "broker-pull-busy", "broker-page-cache-busy",
         "slave-behind", "pop-flow-control", "pop-retry", "rebalanced", "hot-queue", "broker-skew",
         "idle-consumers", "lag-growing")
CODES = ORDER


# what each check reads (prefixes of Reading.unread keys): a check that found nothing while a
# part it reads was not read is "not checked", not "ok"
NEEDS: dict[str, tuple[str, ...]] = {
    "offline": ("members",),
    "topic-not-readable": ("route of",),
    "client-silent": ("members",),
    "members": ("members", "running info of", "consumer connection on"),
    "unowned-queues": ("members", "offsets", "running info of"),
    "locks": ("members", "running info of"),
    "consume-blocked": ("running info of",),
    "flow-control": ("running info of",),
    "threads-saturated": ("running info of",),
    "consume-failing": ("running info of",),
    "retry-backlog": ("offsets",),
    "offset-not-committed": ("offsets", "running info of"),
    "broker": ("runtime info of", "slave runtime info of", "broker config of"),
    "pop": ("running info of", "stats of"),
    "rebalanced": ("members", "running info of"),
    "skew": ("offsets",),
    "lag-growing": ("offsets", "running info of"),
}


def _partial(check: Check, unread: dict[str, str]) -> Check:
    if check.status != OK:
        return check
    missing = sorted(k for k in unread for p in NEEDS.get(check.code, ()) if k.startswith(p))
    if not missing:
        return check
    return Check(check.code, NOT_CHECKED, "not read: " + "; ".join(missing)
                 + f" (in what was read: {check.detail})")


def summary(ctx: Ctx) -> dict[str, Any]:
    qs = ctx.queues
    tl = [q.delay_ms for q in qs if q.delay_ms is not None]
    topics: dict[str, Any] = {}
    for t in sorted({q.mq.topic for q in qs}):
        tq = [q for q in qs if q.mq.topic == t]
        produce = ctx.progress.produce_tps.get(t) if ctx.progress else None
        topics[t] = {"lag": sum(queue_lag(q) for q in tq), "queues": len(tq),
                     "max_time_lag_ms": max((q.delay_ms for q in tq if q.delay_ms is not None),
                                            default=None),
                     "produce_tps": None if produce is None else round(produce, 3),
                     "consume_tps": (None if (c := ctx.client_tps(t)) is None
                                     else round(c, 3))}
        if ctx.first is not None:
            before = sum(queue_lag(q) for q in ctx.queues_of(ctx.first) if q.mq.topic == t)
            dt = max(1, ctx.now.ts - ctx.first.ts) / 1000
            topics[t]["lag_change"] = topics[t]["lag"] - before
            topics[t]["lag_change_tps"] = round((topics[t]["lag"] - before) / dt, 3)
    # the group's lag is known only where every broker's offsets were read; else the sum
    # over the queues read is a lower bound (`groups`: `>=N`)
    complete = ctx.progress is not None and ctx.progress.complete
    read = total_lag(qs) if ctx.progress else None
    return {"kind": ctx.kind, "online": ctx.online, "clients": len(ctx.clients),
            "lag": read if complete else None,
            "lag_at_least": read if not complete and read else None,
            "max_time_lag_ms": max(tl) if tl else None,
            "time_lag_unknown_queues": sum(1 for q in qs
                                           if q.delay_ms is None and queue_lag(q) > 0),
            "consume_tps_brokers": (round(ctx.progress.consume_tps, 3)
                                    if ctx.progress and ctx.progress.consume_tps is not None
                                    else None),
            # a backlog over no %RETRY% queue read is unknown, not 0, unless the retry topic
            # does not exist (nothing waits)
            "retry_backlog": (None if ctx.progress is None else 0 if not ctx.retry_queues
                              and ctx.progress.retry_topic is False
                              else total_lag(ctx.retry_queues)),
            "topics": topics}


def diagnose(first: Reading, second: Reading | None = None, *,
             topic: str | None = None) -> Diagnosis:
    """Every rule over the reading(s): the ranked findings and the checks."""
    ctx = Ctx(first, second, topic)
    findings: list[Finding] = []
    checks: list[Check] = []
    for code, fn in RULES:
        fs, check = fn(ctx, code)
        findings.extend(fs)
        checks.append(check)
    # a finding whose cause explains another's evidence comes first; then severity and ORDER
    findings = x.rank_findings(findings, ORDER)
    r = ctx.now
    unread = dict(first.unread) if second is None else {**first.unread, **second.unread}
    checks = [_partial(c, unread) for c in checks]

    uniq = dedupe(list(r.failures) if second is None else [*first.failures,
                                                               *second.failures])
    return Diagnosis(ctx.group, topic, r.ts, findings, checks, summary(ctx), uniq, unread,
                     sample_ms=(r.ts - first.ts) if second is not None else None)


__all__ = ["CAUGHT_UP_MS", "CODES", "ORDER", "RULES", "diagnose", "summary"]


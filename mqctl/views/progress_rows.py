"""The rows and notes of ``mqctl group progress`` (pure): a captured
:class:`~mqctl.views.progress.GroupProgress` in, a :class:`mqctl.render.Result` out.

The capture is :mod:`mqctl.views.progress_capture`; the command only parses its options and
renders what this builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from mqctl.models import RETRY_PREFIX
from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_duration, format_local, format_ms
from mqctl.views.progress import (
    DELAY_REASONS,
    NEVER_COMMITTED,
    NO_OFFSET_LAG_CAVEAT,
    NOT_REPORTED,
    known_total,
    no_queue_reason,
)
from mqctl.views.sort import SortKey

if TYPE_CHECKING:
    from mqctl.models import MessageQueue
    from mqctl.views.progress import GroupProgress


def _inflight_cell(n: int | None, source: str | None, lock_owner: str | None = None) -> str:
    if n is None:
        return "-"
    if source == "no-owner":
        # an orderly queue the lock classification gives an owner that does not hold it
        return f"{n} (not held)" if lock_owner else f"{n} (no owner)"
    return f"{n} (client)" if source == "client" else str(n)


def owner_cell(q: Any, owners_unknown: bool) -> str | None:
    """The OWNER cell: an orderly queue's owner in the lock classification of `mqctl locks
    show`, with its state unless it is held (`10.0.0.8@2 (lock-failed)`); else the client whose
    process-queue table holds the queue, `unknown` where a member did not answer."""
    if owners_unknown:
        return None
    if q.lock_state is not None:
        if q.lock_state == "held":
            return q.lock_owner
        return f"{q.lock_owner} ({q.lock_state})" if q.lock_owner else None
    return q.owner or ("unknown" if q.owner_unknown else None)


def _offset_cell(v: int | None) -> str:
    """A committed offset as the views show it: ``none`` where the group has none."""
    return "none" if v is None else str(v)


def unanswered_of(p: GroupProgress) -> list[tuple[str, str]]:
    """(client id, error) of the members whose running info did not answer: what a capture
    leaves partial (OWNER unknown on the queues no other member claims; exit 8)."""
    clients = p.members.clients if p.members is not None else {}
    return [(c, (clients[c].running_error if c in clients else None) or "no answer")
            for c in p.unanswered]


def not_included_note(p: GroupProgress) -> str:
    """`` (not included: broker-b)`` after a total when some brokers' offsets were not read
    (GroupProgress.not_included), else empty: put it next to every total of a capture."""
    return f" (not included: {', '.join(p.not_included)})" if p.not_included else ""


class _Totals(NamedTuple):
    """The group's totals over its main (non-retry) queues; None where unknown, never 0."""

    lag: int | None  # nothing read is not 0
    max_time_lag_s: float | None
    known_time_lag: list[int]
    time_lag_unknown: list[Any]  # the queues whose time lag is unknown
    no_offset: list[Any]  # the queues without a committed offset
    pop_inflight: int | None
    puts: list[float | None]  # produce TPS per topic (%RETRY% apart)
    produce_tps: float | None
    oks: list[float | None]  # the clients' consumed TPS per topic (%RETRY% apart)
    clients_tps: float | None


def _paused_notes(p: GroupProgress) -> list[str]:
    if not p.paused_on:
        return []
    return [f"PAUSED: consumeEnable=false on {', '.join(p.paused_on)}: those brokers answer the "
            "group's pulls NO_PERMISSION (its clients consume only what they had cached)"
            + (f"; {p.paused_by}" if p.paused_by else "")
            + f"; `mqctl group resume {p.group}` lets it consume again"]


def progress_result(p: GroupProgress, *, only_lagging: bool = False,
                    sort: SortKey = SortKey.queue, retry: bool = True) -> Result:
    """``group progress``: the queue table, the per-topic table, the retry and dead-letter
    section (``retry``), the JSON document and the notes."""
    # %RETRY% queues (the group's retry topic, 5.x pop retry topics) are the retry section's
    retry_qs = [q for q in p.queues if q.mq.topic.startswith(RETRY_PREFIX)]
    main_qs = [q for q in p.queues if not q.mq.topic.startswith(RETRY_PREFIX)]
    owners_unknown = _owners_unknown(p)
    rows = [_queue_row(q, owners_unknown) for q in _shown_queues(main_qs, only_lagging, sort)]
    topics = _topic_rows(p, main_qs, owners_unknown)
    tot = _totals(p, main_qs)
    data = _progress_data(p, rows, topics, main_qs, tot)
    data["paused_on"] = p.paused_on
    data["paused_by"] = p.paused_by
    notes = [*_paused_notes(p), _headline(p, main_qs, tot), *_rate_notes(p, topics, tot),
             *_owner_notes(p, tot, owners_unknown), *_queue_notes(p, tot),
             *_no_queue_notes(p)]
    tables = [Table(_queue_columns(), rows, title=f"progress of {p.group}", name="queues"),
              Table(_topic_columns(p), topics, title="per topic", name="topics")]
    if retry:
        rrows, rnotes, rdata = _retry_section(p, retry_qs)
        data.update(rdata)
        notes.extend(rnotes)
        tables.append(_retry_table(rrows))
    return Result(tables, data=data, notes=notes)


def _shown_queues(main_qs: list[Any], only_lagging: bool, sort: SortKey) -> list[Any]:
    """The queue table's queues (``--only-lagging``) in ``--sort`` order."""
    # an unknown lag (broadcasting) is not "lagging" and sorts last, never as 0
    qs = [q for q in main_qs if (q.lag or 0) > 0] if only_lagging else list(main_qs)
    if sort == SortKey.lag:
        qs.sort(key=lambda q: (q.lag is None, -(q.lag or 0), q.mq))
    elif sort == SortKey.time_lag:  # unknown time lags last, not first nor as 0
        qs.sort(key=lambda q: (q.delay_ms is None, -(q.delay_ms or 0), q.mq))
    elif sort == SortKey.owner:
        qs.sort(key=lambda q: (q.owner or "~", q.mq))
    return qs


def _owners_unknown(p: GroupProgress) -> bool:
    """Which queue has no owner is unknown, not "all of them": the member list was not read,
    running info was not asked (--no-clients), or the group pops (no owners at all); and a
    BROADCASTING group's clients each read every queue (no one owner to name)."""
    return bool(p.pop or (p.members is not None and (
        p.members.online_state is None or (not p.running_info and bool(p.members.clients))))
        or p.broadcasting)


def _queue_row(q: Any, owners_unknown: bool) -> dict[str, Any]:
    return {
        "topic": q.mq.topic, "broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
        "broker_offset": q.broker_offset, "consumer_offset": q.current,
        "consumer_offset_cell": "-" if q.offsets_in_clients else _offset_cell(q.current),
        "committed": q.committed, "min_offset": q.min_offset,
        "lag": q.lag, "lag_unknown": q.lag_unknown,
        "inflight": q.inflight, "inflight_source": q.inflight_source,
        "inflight_cell": _inflight_cell(q.inflight, q.inflight_source, q.lock_owner),
        "last_consume": format_local(q.last_timestamp),
        "last_consume_ts": q.last_timestamp or None,
        "last_consume_time": format_ms(q.last_timestamp) or None,
        "time_lag_s": round(q.delay_ms / 1000, 3) if q.delay_ms is not None else None,
        "time_lag": ("-" if q.delay_ms is None else "0" if q.delay_ms == 0
                     else format_duration(q.delay_ms)),
        "time_lag_unknown": q.delay_reason,
        "owner": q.owner if not owners_unknown else None, "owners": list(q.owners),
        # no answering member claims it while a member did not answer its running info:
        # its owner is not known, it is not unowned
        "owner_unknown": q.owner_unknown,
        # an orderly queue: the lock classification of `locks show` (docs/locks.md)
        "lock_state": q.lock_state, "lock_owner": q.lock_owner,
        "owner_cell": owner_cell(q, owners_unknown),
    }


def _topic_rows(p: GroupProgress, main_qs: list[Any],
                owners_unknown: bool) -> list[dict[str, Any]]:
    """One row per topic: queues, lag, max time lag, unowned queues, rates."""
    per_topic: dict[str, dict[str, Any]] = {}
    for q in main_qs:
        t = per_topic.setdefault(q.mq.topic, {
            "topic": q.mq.topic, "queues": 0, "lag": 0, "max_time_lag_s": 0.0,
            "time_lag_unknown": 0, "unowned": 0, "no_offset_queues": 0,
            "pop_inflight": _pop_inflight(p, q.mq.topic),
            "produce_tps": _tps(p.produce_tps.get(q.mq.topic)),
            "consume_tps_clients": _tps(p.client_tps.get(q.mq.topic)),
            "brokers_not_included": p.not_included_by_topic.get(q.mq.topic, [])})
        t["queues"] += 1
        t["lag"] = None if q.lag is None or t["lag"] is None else t["lag"] + q.lag
        t["no_offset_queues"] += q.committed is False
        if q.delay_ms is None:
            t["time_lag_unknown"] += 1
        else:
            t["max_time_lag_s"] = max(t["max_time_lag_s"], q.delay_ms / 1000)
        if t["unowned"] is not None:
            # an orderly queue is unowned when the lock classification says so (no client
            # claims it and none is assigned it), not because nobody holds it now
            nobody = (q.lock_state == "unowned" if q.lock_state is not None
                      else not (q.owners or q.owner_unknown))
            t["unowned"] = None if owners_unknown else t["unowned"] + nobody
    topics = [per_topic[k] for k in sorted(per_topic)]
    for t in topics:
        _topic_cells(p, t)
    return topics


def _topic_cells(p: GroupProgress, t: dict[str, Any]) -> None:
    """A topic row's table cells; JSON/CSV keep the raw numbers beside them."""
    t["not_included"] = ", ".join(t["brokers_not_included"]) or None
    # the table shows the duration as people read it; JSON/CSV keep max_time_lag_s
    t["max_time_lag"] = ("-" if t["time_lag_unknown"] == t["queues"] else
                         format_duration(t["max_time_lag_s"] * 1000) or "0")
    t["produce_tps_cell"] = "-" if t["produce_tps"] is None else f"{t['produce_tps']:.2f}"
    t["consume_tps_cell"] = ("-" if t["consume_tps_clients"] is None
                             else f"{t['consume_tps_clients']:.2f}")
    t["unowned_cell"] = "-" if t["unowned"] is None else str(t["unowned"])
    if p.pop:
        t["pop_inflight_cell"] = "-" if t["pop_inflight"] is None else str(t["pop_inflight"])


def _totals(p: GroupProgress, main_qs: list[Any]) -> _Totals:
    # nothing read is not 0: no queue, no total; no known time lag, no max
    total_lag = known_total(q.lag for q in main_qs)
    known_tl = [q.delay_ms for q in main_qs if q.delay_ms is not None]
    puts = [v for t, v in p.produce_tps.items() if not t.startswith(RETRY_PREFIX)]
    known_put = [v for v in puts if v is not None]
    # two rates, two names: the brokers' (messages handed to the group:
    # pulled into client caches or popped) and the clients' (processed OK), summed over the
    # topics of the group (its %RETRY% topic apart); unknown is None, never a partial sum
    oks = [v for t, v in p.client_tps.items() if not t.startswith(RETRY_PREFIX)]
    return _Totals(
        lag=total_lag, max_time_lag_s=max(known_tl) / 1000 if known_tl else None,
        known_time_lag=known_tl,
        time_lag_unknown=[q for q in main_qs if q.delay_ms is None],
        no_offset=[q for q in main_qs if q.committed is False],
        pop_inflight=sum(p.pop_inflight.values()) if p.pop_inflight is not None else None,
        puts=puts,
        produce_tps=(round(sum(known_put), 3) if puts and len(known_put) == len(puts)
                     else None),
        oks=oks,
        clients_tps=(round(sum(v for v in oks if v is not None), 3)
                     if oks and None not in oks else None))


def _progress_data(p: GroupProgress, rows: list[dict[str, Any]], topics: list[dict[str, Any]],
                   main_qs: list[Any], tot: _Totals) -> dict[str, Any]:
    """The JSON/YAML document of ``group progress``."""
    return {"group": p.group, "capture_ts": p.capture_ts,
            "capture_time": format_ms(p.capture_ts), "cluster": p.cluster,
            "consume_tps": _tps(p.consume_tps), "consume_tps_clients": tot.clients_tps,
            "produce_tps": tot.produce_tps,
            "pop": p.pop, "running_info_asked": p.running_info,
            "queues": rows, "topics": topics,
            "total": {"lag": tot.lag, "max_time_lag_s": tot.max_time_lag_s,
                      "queues": len(main_qs),
                      "time_lag_unknown": len(tot.time_lag_unknown),
                      "no_offset_queues": len(tot.no_offset),
                      "no_offset_lag": sum(q.lag or 0 for q in tot.no_offset),
                      "lag_unknown": p.lag_unknown,
                      "pop_inflight": tot.pop_inflight if p.pop else None,
                      "complete": p.complete, "brokers_not_included": list(p.not_included),
                      "topics_not_covered": dict(p.uncovered)},
            "pop_inflight": ([{"topic": t, "broker": b, "inflight": n}
                              for (t, b), n in sorted(p.pop_inflight.items())]
                             if p.pop and p.pop_inflight is not None else None),
            "online": p.members.online_state if p.members else None,
            "time_lag_unknown_reasons": {k: DELAY_REASONS[k] for k in sorted(
                {q.delay_reason for q in tot.time_lag_unknown if q.delay_reason})},
            "failures": [f.to_dict() for f in p.failures]}


def _queue_columns() -> list[Any]:
    """Width policy (docs/output.md): queue identity, LAG and TIME LAG are never cut; at
    80-120 columns LAST CONSUMED goes first, then INFLIGHT, BROKER OFFSET, CONSUMER OFFSET."""
    return [Column("topic", "TOPIC", kind="key"), Column("broker", "BROKER", kind="key"),
            Column("queue_id", "QID", "right"),
            Column("broker_offset", "BROKER OFFSET", "right", drop=3),
            Column("consumer_offset_cell", "CONSUMER OFFSET", "right", raw="consumer_offset",
                   drop=4),
            Column("lag", "LAG", "right"),
            Column("inflight_cell", "INFLIGHT", "right", raw="inflight", drop=2),
            Column("last_consume", "LAST CONSUMED", raw="last_consume_time", kind="low",
                   drop=1),
            Column("time_lag", "TIME LAG", raw="time_lag_s", kind="key"),
            Column("owner_cell", "OWNER", raw="owner", kind="id")]


def _topic_columns(p: GroupProgress) -> list[Any]:
    tcols = [Column("topic", "TOPIC", kind="key"), Column("queues", "QUEUES", "right"),
             Column("lag", "LAG", "right"),
             Column("max_time_lag", "MAX TIME LAG", "right", raw="max_time_lag_s"),
             Column("time_lag_unknown", "TIME LAG UNKNOWN", "right"),
             Column("unowned_cell", "UNOWNED", "right", raw="unowned"),
             Column("produce_tps_cell", "PRODUCE TPS", "right", raw="produce_tps"),
             Column("consume_tps_cell", "CONSUMED TPS", "right", raw="consume_tps_clients")]
    if p.pop:
        tcols.insert(4, Column("pop_inflight_cell", "INFLIGHT", "right", raw="pop_inflight"))
    if p.not_included:
        tcols.append(Column("not_included", "NOT INCLUDED", raw="brokers_not_included"))
    return tcols


def _retry_table(rrows: list[dict[str, Any]]) -> Any:
    return Table([Column("kind", "KIND"), Column("topic", "TOPIC"),
                  Column("broker", "BROKER"), Column("queue_id", "QID", "right"),
                  Column("min_offset_cell", "MIN OFFSET", "right", raw="min_offset"),
                  Column("max_offset", "MAX OFFSET", "right"),
                  Column("consumer_offset_cell", "CONSUMER OFFSET", "right",
                         raw="consumer_offset"),
                  Column("backlog", "BACKLOG", "right")],
                 rrows, title="retry and dead-letter", name="retry")


def _headline(p: GroupProgress, main_qs: list[Any], tot: _Totals) -> str:
    """``group G: total lag N message(s) ..., max time lag ..., pulled TPS ...``."""
    missing = not_included_note(p)
    no_offset, unknown = tot.no_offset, tot.time_lag_unknown
    tl_text = ("unknown" if tot.max_time_lag_s is None
               else format_duration(tot.max_time_lag_s * 1000) or "0")
    return ((f"group {p.group}: lag UNKNOWN ({p.lag_unknown}: the clients keep the offsets)"
             f", time lag unknown{missing}" if p.lag_unknown else
             f"group {p.group}: total lag {tot.lag} message(s){missing}"
             + (f" ({sum(q.lag or 0 for q in no_offset)} of them in {len(no_offset)} queue(s) "
                "without a committed offset)" if no_offset else "")
             + f", max time lag {tl_text}"
             + (f" ({len(unknown)} queue(s) unknown)" if unknown and tot.known_time_lag
                else "")
             if main_qs else f"group {p.group}: lag unknown: no queue was read{missing}")
            + (f", pulled TPS {p.consume_tps:.2f} (brokers)" if p.consume_tps is not None
               else ", pulled TPS unknown" if not p.queues
               else f", pulled TPS unknown ({', '.join(p.not_included) or 'a broker'} did "
                    "not answer)")
            + (f", consumed TPS {tot.clients_tps:.2f} (clients)"
               if tot.clients_tps is not None
               else ", consumed TPS unknown (a client did not answer its running info)"
               if tot.oks else "")
            + (f", produce TPS {tot.produce_tps:.2f}" if tot.produce_tps is not None else
               ", produce TPS unknown (a broker did not answer it)"
               if tot.puts else ""))


def _rate_notes(p: GroupProgress, topics: list[dict[str, Any]], tot: _Totals) -> list[str]:
    """Pulled vs consumed TPS when they part, and produce TPS a broker did not answer."""
    notes = []
    clients_total = tot.clients_tps
    if (p.consume_tps is not None and clients_total is not None
            and abs(p.consume_tps - clients_total) > max(1.0, 0.1 * clients_total)):
        notes.append(f"pulled TPS {p.consume_tps:.2f} vs consumed TPS {clients_total:.2f}: "
                     "pulled is what the brokers handed the group per second over the last "
                     "minute (GET_CONSUME_STATS consumeTps, mqadmin's \"Consume TPS\"; "
                     "messages fetched into the clients' caches or popped), consumed is what "
                     "the clients processed OK (their running info's consumeOKTPS): "
                     + ("the clients' caches are filling (they process slower than they "
                        "fetch)" if p.consume_tps > clients_total else
                        "the clients are working through messages fetched earlier"))
    partial_put = sorted(t["topic"] for t in topics
                         if t["produce_tps"] is None and t["brokers_not_included"])
    if partial_put:
        notes.append("PRODUCE TPS `-` for " + ", ".join(partial_put) + ": "
                     + ", ".join(p.not_included) + " did not answer; a sum over the brokers "
                     "that answered is not the topic's rate")
    return notes


def _owner_notes(p: GroupProgress, tot: _Totals, owners_unknown: bool) -> list[str]:
    """Pop (no owners, inflight per broker), --no-clients, members that did not answer."""
    notes = []
    if p.pop:
        per = ", ".join(f"{b} {n}" + (f" ({t})" if len({x for x, _ in p.pop_inflight or {}}) > 1
                                      else "")
                        for (t, b), n in sorted((p.pop_inflight or {}).items()))
        notes.append(f"pop: no queue owners: {p.group} consumes with pop (5.x), the broker hands "
                     "messages of every queue to whoever pops; inflight = popped and not yet "
                     "acked (invisible) messages, the pop clients' waitAckCount: "
                     + (f"{tot.pop_inflight} in all ({per or 'none'})"
                        if tot.pop_inflight is not None else
                        "unknown (not every pop client answered its running info)")
                     + "; a pop client counts them per broker (queue id -1), so INFLIGHT per "
                       "queue is `-` where it does")
    elif not p.running_info and p.members is not None and p.members.clients:
        notes.append("--no-clients: OWNER and UNOWNED unknown (no GET_CONSUMER_RUNNING_INFO); "
                     "CONSUMED TPS (the clients' rate) needs the clients too")
    blocked = [q for q in p.queues if q.lock_state not in (None, "held")]
    if blocked and not owners_unknown:
        states = sorted({q.lock_state for q in blocked if q.lock_state})
        notes.append(f"OWNER of the orderly queues: the owner in the lock classification of "
                     f"`mqctl locks show {p.group}` with its state unless held ("
                     + ", ".join(f"{sum(q.lock_state == st for q in blocked)} {st}"
                                 for st in states)
                     + "); see its hints for why and until when")
    unk = sum(1 for q in p.queues if q.owner_unknown and q.lock_state is None)
    if p.unanswered and not owners_unknown and (
            unk or not any(q.lock_state for q in p.queues)):
        notes.append(f"OWNER unknown on {unk} queue(s): {', '.join(p.unanswered)} did not "
                     "answer GET_CONSUMER_RUNNING_INFO (still a member): those queues may be "
                     "theirs, they are not counted as unowned")
    return notes


def _queue_notes(p: GroupProgress, tot: _Totals) -> list[str]:
    """What some queues' cells mean: no committed offset, inflight sources, not covered."""
    notes = []
    no_offset = tot.no_offset
    if no_offset:
        never = sum(1 for q in no_offset if q.delay_reason == NEVER_COMMITTED)
        notes.append(f"{len(no_offset)} queue(s) have no committed offset for {p.group} "
                     "(CONSUMER OFFSET none"
                     + (f"; TIME LAG `-` on {never}: the broker answers delayTime = now - 0 "
                        "there, mqadmin prints N/A" if never else "")
                     + f"): {NO_OFFSET_LAG_CAVEAT}")
    if any(q.inflight_source == "no-owner" and q.lock_owner for q in p.queues):
        notes.append("INFLIGHT 0 (not held): the queue's owner (OWNER) does not hold it in "
                     "its process-queue table: nobody pulls it")
    if any(q.inflight_source == "no-owner" and (q.pull_offset or 0) > q.consumer_offset
           for q in p.queues):
        notes.append("INFLIGHT 0 (no owner): no client holds the queue; a broker pullOffset "
                     "ahead of the committed offset there is what a former owner pulled and "
                     "never committed: the next owner consumes it again")
    if p.uncovered:
        notes.append("not complete: " + "; ".join(f"topic {t}: {why}"
                                                  for t, why in sorted(p.uncovered.items()))
                     + " (its queues on brokers without an offset of the group are not shown)")
    unrep = sum(1 for q in tot.time_lag_unknown if q.delay_reason == NOT_REPORTED)
    if unrep:
        notes.append(f"{unrep} lagging queue(s) have TIME LAG `-`: "
                     f"{DELAY_REASONS[NOT_REPORTED]}")
    if any(q.inflight_source == "client" and not q.pop for q in p.queues):
        notes.append("INFLIGHT (client): the owner's cachedMsgCount from its running info "
                     "(ProcessQueueInfo); the broker does not report pullOffset (before 5.x)")
    if any(q.inflight is None and not q.pop and not q.offsets_in_clients for q in p.queues):
        notes.append("INFLIGHT `-`: unknown (no pullOffset from the broker before 5.x and no "
                     "owner that reported its cache)")
    return notes


def _no_queue_notes(p: GroupProgress) -> list[str]:
    """A BROADCASTING group (nothing committed to the brokers), or no offsets at all."""
    if p.broadcasting:
        return [f"group {p.group} is BROADCASTING: each client keeps its own offsets in a "
                "local file (LocalFileOffsetStore) and commits none to the brokers, and "
                "reads every queue (no one owner), so its committed offsets, lag, time lag "
                "and inflight are unknown (`-`; state UNKNOWN, lag_unknown `broadcasting` "
                "in every view); the broker offsets and rates are real"]
    if p.queues:
        return []
    online = p.members.online_state if p.members else None
    conn = p.members.connection if p.members else None
    subs = sorted(t for t in (conn.subscriptions if conn else {})
                  if not t.startswith(RETRY_PREFIX))
    return [f"no offsets found for group {p.group}"
            + (" (group is offline)" if online is False else "") + not_included_note(p)
            + (" on the topic asked" if subs else "") + ": " + no_queue_reason(subs, None)]


def _pop_inflight(p: GroupProgress, topic: str) -> int | None:
    """A pop group's inflight on one topic (its brokers summed), None when unknown or not pop."""
    if not p.pop or p.pop_inflight is None:
        return None
    return sum(n for (t, _b), n in p.pop_inflight.items() if t == topic)


def _tps(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


def _retry_section(p: GroupProgress, retry_qs: list[Any]
                   ) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """Rows, notes and JSON of the retry and dead-letter section:
    ``%RETRY%<group>`` queues (messages to be redelivered: broker offset - committed offset)
    and ``%DLQ%<group>`` queues (dead letters still stored: max - min offset)."""
    rows: list[dict[str, Any]] = []
    for q in retry_qs:
        rows.append({"kind": "retry", "topic": q.mq.topic, "broker": q.mq.broker_name,
                     "queue_id": q.mq.queue_id, "min_offset": q.min_offset,
                     "min_offset_cell": "-" if q.min_offset is None else str(q.min_offset),
                     "max_offset": q.broker_offset, "consumer_offset": q.current,
                     "consumer_offset_cell": ("-" if q.offsets_in_clients
                                              else _offset_cell(q.current)),
                     "backlog": q.lag})
    for d in p.dlq or []:
        rows.append({"kind": "dlq", "topic": d.mq.topic, "broker": d.mq.broker_name,
                     "queue_id": d.mq.queue_id, "min_offset": d.min_offset,
                     "min_offset_cell": str(d.min_offset), "max_offset": d.max_offset,
                     "consumer_offset": None, "consumer_offset_cell": "-",
                     "backlog": d.messages})
    # a backlog over no %RETRY% queue read is unknown, not 0 (mqctl.views.progress.
    # known_total), unless the retry topic does not exist: then nothing waits
    no_topic = not retry_qs and p.retry_topic is False
    retry_backlog = 0 if no_topic else known_total(q.lag for q in retry_qs)
    dlq_messages = (sum(d.messages for d in p.dlq) if p.dlq is not None else None)
    notes = [(f"retry backlog 0: no %RETRY%{p.group} topic" if no_topic else
              f"retry backlog {retry_backlog} message(s) in {len(retry_qs)} %RETRY% queue(s)"
              if retry_backlog is not None else
              f"retry backlog unknown: no %RETRY%{p.group} queue was read" if not retry_qs
              else f"retry backlog unknown in {len(retry_qs)} %RETRY% queue(s)")
             + (f"; dead letters: {dlq_messages} in %DLQ%{p.group}" if dlq_messages
                else "; no dead letters" if p.dlq == [] else
                "; dead letters unknown" if p.dlq_asked else "")]
    data = {"retry": rows, "retry_total": {"backlog": retry_backlog, "queues": len(retry_qs),
                                           "dlq_messages": dlq_messages if p.dlq_asked
                                           else None}}
    return rows, notes, data


def offsets_result(p: GroupProgress, mins: dict[MessageQueue, int]) -> Result:
    """``mqctl offsets show``: committed offsets per queue with the queue's bounds and lag
    (``mins``: the min offsets the topic stats left out, :func:`capture_offsets
    <mqctl.views.progress_capture.capture_offsets>`)."""
    group = p.group
    # CURRENT "none": the group has no committed offset there (the reset plans' rule), where
    # the broker's GET_CONSUME_STATS says 0
    # CURRENT and LAG "-": unknown, the clients keep the offsets (BROADCASTING)
    rows = [{"topic": q.mq.topic, "broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
             "min": mins.get(q.mq, q.min_offset), "max": q.broker_offset,
             "current": q.current, "current_cell": "-" if q.offsets_in_clients else "none"
             if q.current is None else str(q.current), "committed": q.committed,
             "lag": q.lag, "lag_unknown": q.lag_unknown} for q in p.queues]
    r = Column
    none = [q for q in p.queues if q.committed is False]
    notes = [(f"{len(rows)} queue(s); lag UNKNOWN ({p.lag_unknown}: the clients keep the "
              "offsets)" if p.lag_unknown else
              f"{len(rows)} queue(s); total lag {sum(q.lag or 0 for q in p.queues)}"
              if rows else "no queue read: lag unknown") + not_included_note(p)]
    if p.lag_unknown:
        notes.append(f"group {group} is BROADCASTING: each client keeps its own offsets in a "
                     "local file (LocalFileOffsetStore) and commits none to the brokers: "
                     "CURRENT and LAG `-` (unknown)")
    if none:
        notes.append(f"{len(none)} queue(s) have no committed offset for {group} (CURRENT none, "
                     f"LAG {sum(q.lag or 0 for q in none)} of the total): "
                     f"{NO_OFFSET_LAG_CAVEAT}")
    notes += [f"not complete: topic {t}: {why}" for t, why in sorted(p.uncovered.items())]
    return Result([Table([r("topic", "TOPIC"), r("broker", "BROKER"),
                          r("queue_id", "QID", "right"), r("min", "MIN", "right"),
                          r("max", "MAX", "right"),
                          r("current_cell", "CURRENT", "right", raw="current"),
                          r("lag", "LAG", "right")], rows,
                         title=f"offsets of {group}", name="queues")],
                  notes=notes)

"""The rows and notes of ``mqctl groups`` (pure): a captured
:class:`~mqctl.views.groups.GroupsCapture` in, a :class:`mqctl.render.Result` out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_duration, format_ms
from mqctl.views.groups import STATES
from mqctl.views.progress import NO_OFFSET_LAG_CAVEAT
from mqctl.views.sort import GroupSort

if TYPE_CHECKING:
    from mqctl.views.groups import GroupsCapture, GroupSummary


STATE_ORDER = {"STOPPED": 0, "LAGGING": 1, "UNKNOWN": 2, "OFFLINE": 3, "EMPTY": 4, "OK": 5}


def _sorted(groups: list[GroupSummary], key: GroupSort) -> list[GroupSummary]:
    """Largest first for numbers; unknown values last, never as 0."""
    def num(v: float | int | None) -> tuple[bool, float]:
        return (v is None, -(v or 0))

    if key == GroupSort.lag:
        return sorted(groups, key=lambda s: (*num(s.lag if s.lag is not None
                                                    else (s.lag_at_least or None)), s.group))
    if key == GroupSort.time_lag:
        return sorted(groups, key=lambda s: (*num(s.max_time_lag_ms), s.group))
    if key == GroupSort.tps:
        return sorted(groups, key=lambda s: (-s.consume_tps, s.group))
    if key == GroupSort.members:
        return sorted(groups, key=lambda s: (*num(s.members), s.group))
    if key == GroupSort.retry:
        return sorted(groups, key=lambda s: (*num(s.retry_lag), s.group))
    if key == GroupSort.dlq:
        return sorted(groups, key=lambda s: (*num(s.dlq_messages), s.group))
    if key == GroupSort.state:
        return sorted(groups, key=lambda s: (STATE_ORDER.get(s.state, 9), s.group))
    return sorted(groups, key=lambda s: s.group)


def _num_cell(v: int | None, at_least: int = 0) -> str:
    if v is None:
        return f">={at_least}" if at_least else "-"
    return str(v)


def _unread(s: GroupSummary) -> str:
    """`` (N unread)`` after a value the members that answered gave, when some member did
    not answer its running info (docs/output.md: partial is named), else empty."""
    return f" ({len(s.unread_members)} unread)" if s.unread_members else ""


def _member_cells(s: GroupSummary) -> dict[str, object]:
    """The columns derived from the members' running info (TYPE, ORDERLY, STRATEGY): the
    table cell shows what the members that answered said, `` (N unread)`` when some did not
    (`-` when none did); JSON and CSV carry the group's value only when every member was read
    (else null / empty: unknown), with ``members_unread`` naming the others."""
    unread = bool(s.unread_members)
    orderly = None if s.orderly is None else str(s.orderly).lower()

    def cell(v: str | None) -> str | None:
        if v is None:
            return "-" + _unread(s) if unread else None
        return v + _unread(s)

    return {"consume_type": None if unread else s.consume_type,
            "consume_type_cell": cell(s.consume_type),
            "orderly": None if unread else s.orderly, "orderly_cell": cell(orderly),
            "strategy": s.strategy, "strategy_cell": cell(s.strategy_seen),
            "members_unread": list(s.unread_members)}


def groups_result(c: GroupsCapture, *, only_lagging: bool = False,
                  sort: GroupSort = GroupSort.name) -> Result:
    gs = [s for s in c.groups if s.lagging] if only_lagging else list(c.groups)
    rows = [_group_row(s) for s in _sorted(gs, sort)]
    counts = {st: sum(1 for s in c.groups if s.state == st)
              for st in STATES}
    return Result([Table(_columns(), rows, title="consumer groups", name="groups")],
                  data=_groups_data(c, rows, counts),
                  notes=_groups_notes(c, gs, rows, counts, only_lagging))


def _group_row(s: GroupSummary) -> dict[str, Any]:
    tl = s.max_time_lag_ms
    return {
        "group": s.group, "state": s.state, "reason": s.reason or None,
        "members": s.members, "members_cell": _num_cell(s.members),
        "message_model": s.message_model, **_member_cells(s), "strategies": s.strategies,
        "lag": s.lag, "lag_unknown": s.lag_unknown, "lag_at_least": s.lag_at_least,
        "lag_cell": _num_cell(
            s.lag, s.lag_at_least) + (f" ({len(s.no_offset)} none)" if s.no_offset else ""),
        # queues without a committed offset (``none``) and the lag they count (Diff)
        "no_offset_queues": len(s.no_offset), "no_offset_lag": s.no_offset_lag,
        "topics_not_covered": dict(s.uncovered),
        "max_time_lag_s": round(tl / 1000, 3) if tl is not None else None,
        "max_time_lag": ("-" if tl is None else "0" if tl == 0 else format_duration(tl))
        + (f" ({s.time_lag_unknown} unknown)" if s.time_lag_unknown and tl is not None
           else ""),
        "time_lag_unknown": s.time_lag_unknown,
        "time_lag_pairs_asked": s.time_lag_pairs_asked,
        "time_lag_pairs_skipped": s.time_lag_pairs_skipped,
        # the brokers not included may hand the group messages too: unknown, not a sum;
        # a BROADCASTING group has no offsets, so GET_BROKER_CONSUME_STATS lists none of
        # its topics (fetchAllConsumeStatsInBroker: whichTopicByConsumer): not read
        # and over no queue read (no broker's 317 names the group) it is no rate at all
        "consume_tps": (None if s.not_included or s.lag_unknown or not (s.queues or s.retry)
                        else round(s.consume_tps, 3)),
        "inflight": s.inflight, "inflight_cell": _num_cell(s.inflight),
        "retry_lag": s.retry_lag, "retry_cell": _num_cell(s.retry_lag),
        "retry_queues": len(s.retry),
        "dlq_topic": s.dlq_topic, "dlq_messages": s.dlq_messages,
        "dlq_cell": _num_cell(s.dlq_messages),
        "queues": len(s.queues), "topics": s.topics, "brokers": s.brokers,
        "clients": s.client_ids, "running_info": s.running_info,
        "not_included": s.not_included,
    }


def _columns() -> list[Column]:
    # width policy (docs/output.md): GROUP, STATE, MEMBERS, LAG and MAX TIME LAG are never left
    # out; ORDERLY, STRATEGY, MODEL, TYPE, INFLIGHT, RETRY, DLQ, TPS go in this order
    return [Column("group", "GROUP", kind="key"), Column("state", "STATE", kind="state"),
            Column("members_cell", "MEMBERS", "right", raw="members"),
            Column("consume_type_cell", "TYPE", kind="low", drop=4, raw="consume_type"),
            Column("message_model", "MODEL", kind="low", drop=3),
            Column("orderly_cell", "ORDERLY", kind="low", drop=1, raw="orderly"),
            Column("strategy_cell", "STRATEGY", kind="low", drop=2, raw="strategy"),
            Column("lag_cell", "LAG", "right", raw="lag"),
            Column("max_time_lag", "MAX TIME LAG", raw="max_time_lag_s", kind="key"),
            Column("consume_tps", "TPS", "right", drop=8),
            Column("inflight_cell", "INFLIGHT", "right", raw="inflight", drop=5),
            Column("retry_cell", "RETRY", "right", raw="retry_lag", drop=6),
            Column("dlq_cell", "DLQ", "right", raw="dlq_messages", drop=7)]


def _groups_data(c: GroupsCapture, rows: list[dict[str, Any]], counts: dict[str, int]
                 ) -> dict[str, Any]:
    known = [s.lag for s in c.groups if s.lag is not None]
    return {"capture_ts": c.capture_ts, "capture_time": format_ms(c.capture_ts),
            "groups": rows, "states": counts,
            "total": {"groups": len(c.groups), "shown": len(rows),
                      # an EMPTY group has nothing to count (its own lag is unknown)
                      "lag": sum(known) if known and all(s.lag is not None
                                                         or s.state == "EMPTY"
                                                         for s in c.groups) else None,
                      "lag_at_least": sum(s.lag_at_least for s in c.groups),
                      "complete": not c.stats_failed,
                      "brokers_not_included": c.stats_failed},
            "brokers": c.brokers, "system_groups_hidden": c.hidden_system,
            "clients_asked": c.clients, "time_lag_asked": c.time_lag,
            "failures": [f.to_dict() for f in c.failures]}


def _groups_notes(c: GroupsCapture, gs: list[GroupSummary], rows: list[dict[str, Any]],
                  counts: dict[str, int], only_lagging: bool) -> list[str]:
    notes = [f"{len(c.groups)} group(s) on {len(c.brokers)} broker(s): "
             + ", ".join(f"{n} {st}" for st, n in counts.items() if n)
             + (f"; {len(rows)} shown (--only-lagging)" if only_lagging else "")]
    if c.stats_failed:
        notes.append(f"not included: {', '.join(c.stats_failed)} (GET_BROKER_CONSUME_STATS "
                     "failed): the lag of groups whose topics they host is unknown, `>=N` is "
                     "the lag on the brokers that answered")
    none = [s for s in gs if s.no_offset]
    if none:
        notes.append(f"LAG `(N none)`: {sum(len(s.no_offset) for s in none)} queue(s) of "
                     f"{len(none)} group(s) have no committed offset (`mqctl offsets show -g "
                     f"G` lists them as none): {NO_OFFSET_LAG_CAVEAT}")
    if c.hidden_system:
        notes.append(f"{c.hidden_system} system group(s) hidden (--include-system shows them)")
    if not c.time_lag:
        notes.append("--no-time-lag: MAX TIME LAG not asked (QUERY_CONSUME_TIME_SPAN)")
    unknown_members = [s for s in gs if s.members is None]
    if unknown_members:
        why = ["; ".join(f"{f.broker}: {f.message}" for f in s.member_failures)
               or "no broker answered" for s in unknown_members]
        notes.append(f"MEMBERS `-`: the member list of {len(unknown_members)} group(s) could not "
                     "be read (GET_CONSUMER_CONNECTION_LIST), so every column derived from "
                     "members is unknown: " + "; ".join(
                         f"{s.group} ({w})" for s, w in zip(unknown_members, why, strict=True)))
    unread = [s for s in gs if s.unread_members]
    if unread:
        notes.append("`(N unread)`: N member(s) did not answer GET_CONSUMER_RUNNING_INFO, so "
                     "TYPE, ORDERLY and STRATEGY show what the others said and what they run "
                     "is unknown (JSON null, `members_unread`): "
                     + "; ".join(f"{s.group}: {', '.join(s.unread_members)}" for s in unread))
    if not c.clients:
        notes.append("--no-clients: STRATEGY, ORDERLY and pop INFLIGHT not asked "
                     "(GET_CONSUMER_RUNNING_INFO); TYPE is the connection list's (a 5.x push "
                     "consumer in pop mode shows push there)")
    if any(s.pop for s in c.groups):
        notes.append("pop groups: the broker hands messages of every queue to whoever pops: no "
                     "queue owners, STRATEGY `pop` (the broker assigns each pop client its "
                     "queues, QueryAssignmentProcessor.allocate4Pop: the clients' strategy "
                     "allocates nothing); INFLIGHT = messages popped and not yet acked "
                     "(the clients' waitAckCount)")
    if any(s.inflight is None and s.consume_type not in (None, "pop") for s in c.groups):
        notes.append("INFLIGHT `-` for push/pull groups: GET_BROKER_CONSUME_STATS does not "
                     "report pullOffset (see `mqctl group progress G`)")
    notes.append("RETRY: messages waiting in %RETRY%<group> (and 5.x pop retry topics); DLQ: "
                 "messages held in %DLQ%<group>")
    return notes

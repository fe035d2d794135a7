"""The rows, findings and notes of ``mqctl consumers`` (pure): the captured
:class:`~mqctl.views.members.GroupMembers` in, a :class:`mqctl.render.Result` out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.render import Column, Result, Table
from mqctl.versions import version_name
from mqctl.views.members import check_members

if TYPE_CHECKING:
    from mqctl.views.members import GroupMembers


def members_result(m: GroupMembers) -> Result:
    """The clients as every broker sees them, the consistency check's findings
    (:func:`~mqctl.views.members.check_members`) and the group's JSON."""
    findings = check_members(m)
    conn = m.connection
    rows = []
    for cid, cv in m.clients.items():
        subs = cv.subscriptions
        rows.append({
            "client_id": cid, "addr": cv.addr, "language": cv.language,
            "version": version_name(cv.version) if cv.version else "",
            "version_ordinal": cv.version,
            # the client's own report (a member that did not answer: unknown); TYPE `pop`
            # where it pops (ConsumerRunningInfo.pops: a 5.x push consumer in pop mode
            # reports CONSUME_PASSIVELY)
            "consume_type": ((cv.running.consume_type or (conn.consume_type if conn else None))
                             if cv.running else None),
            "pops": cv.running.pops if cv.running else None,
            "consume_type_cell": ("pop" if cv.running and cv.running.pops
                                  else cv.running.consume_type or (
                                      conn.consume_type if conn else None)
                                  if cv.running else "-"),
            "message_model": conn.message_model if conn else None,
            "consume_from_where": conn.consume_from_where if conn else None,
            "orderly": cv.running.orderly if cv.running else None,
            "strategy": cv.strategy,
            "subscriptions": ([f"{t}={e}" for t, e in sorted(subs.items())]
                              if subs is not None else None),
            "brokers": cv.brokers, "connections": cv.connections,
            "running_info": "ok" if cv.running else (cv.running_error or "not asked"),
        })
    frows = [{"severity": f.severity, "check": f.check, "message": f.message} for f in findings]
    member_rows = [{"broker": b, "members": (len(v) if isinstance(v, list) else None),
                    "status": "ok" if isinstance(v, list) else f"failed: {v.message}"}
                   for b, v in sorted(m.members.items())]
    data = {"group": m.group, "online": m.online_state,
            "consumeType": conn.consume_type if conn else None,
            "messageModel": conn.message_model if conn else None,
            "consumeFromWhere": conn.consume_from_where if conn else None,
            "subscriptions": ({t: s.expression for t, s in sorted(conn.subscriptions.items())}
                              if conn else {}),
            "clients": rows, "brokers": member_rows, "findings": frows,
            "failures": [f.to_dict() for f in m.failures]}
    tables = [
        # width policy (docs/output.md): LANG, VERSION, ORDERLY, ADDR, STRATEGY, TYPE drop
        # in this order; client ids are shortened in the middle only after that
        Table([Column("client_id", "CLIENT ID", kind="id"),
               Column("addr", "ADDR", kind="id", drop=4),
               Column("language", "LANG", kind="low", drop=1),
               Column("version", "VERSION", kind="low", drop=2),
               Column("consume_type_cell", "TYPE", kind="low", drop=6, raw="consume_type"),
               # a member that did not answer its running info: `-` (unknown), not blank
               Column("orderly", "ORDERLY", kind="low", drop=3, unknown="-"),
               Column("strategy", "STRATEGY", kind="low", drop=5, unknown="-"),
               Column("subscriptions", "SUBSCRIPTIONS", unknown="-"),
               Column("brokers", "SEEN BY")], rows, title=f"consumers of {m.group}",
              name="clients"),
        Table([Column("severity", "SEVERITY", kind="state"), Column("check", "CHECK",
                                                                    kind="key"),
               Column("message", "FINDING")], frows, title="consistency check",
              name="findings"),
    ]
    notes = []
    unread = m.unread_brokers
    if conn:
        notes.append(f"group: {conn.message_model}, {conn.consume_type}, "
                     f"{conn.consume_from_where}; {len(m.clients)} client(s) on "
                     f"{len(m.brokers)} broker(s)"
                     + (f" (member list unknown on {', '.join(unread)}: not included)"
                        if unread else ""))
    elif unread:
        notes.append(f"online: unknown ({', '.join(unread)} did not answer the member list)")
    if not findings:
        notes.append("consistency check: no problem found")
    return Result(tables, data=data, notes=notes)

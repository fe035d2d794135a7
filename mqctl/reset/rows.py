"""The rows and notes of ``mqctl offsets rollbacks`` and of a rollback with nothing to restore
(pure: files already read, the CLI renders the Result)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_ms

if TYPE_CHECKING:
    from mqctl.reset.files import RollbackInfo
    from mqctl.reset.types import Target


def nothing_to_restore_result(path: str, group: str, topic: str, target: Target, *,
                              execute: bool) -> Result:
    """A rollback file whose queues all had no committed offset before the reset: what that
    means for the group (nothing is sent)."""
    rows = [{"broker": mq.broker_name, "queue_id": mq.queue_id, "saved": None,
             "reset_to": wrote} for mq, wrote in sorted(target.untouched.items())]
    c = Column
    notes = [
        f"nothing to restore: every queue of {path} ({len(rows)}) had no committed offset for "
        f"{group} before the reset (saved as none), so the rollback sends nothing"
        + (" (--execute included)" if execute else ""),
        "RocketMQ has no request that removes one queue's committed offset (only deleting the "
        "whole subscription group with its offsets, `mqadmin deleteSubGroup -r true`, or the "
        "topic): these queues keep the offset the reset wrote (RESET_TO) until the group "
        "commits another one or is reset again",
        f"a consumer of {group} that starts now begins at that offset: consumeFromWhere "
        "(CONSUME_FROM_LAST_OFFSET, _FIRST_OFFSET, _TIMESTAMP) applies only to a queue "
        "without a committed offset (RebalancePushImpl.computePullFromWhereWithException "
        "reads the broker's offset first), so it no longer decides where these queues start",
        f"to move them: mqctl offsets reset -g {group} -t {topic} --to-latest (where "
        "CONSUME_FROM_LAST_OFFSET starts a new group) or --to-earliest (CONSUME_FROM_FIRST_"
        "OFFSET), plan first, then --execute"]
    return Result([Table([c("broker", "BROKER"), c("queue_id", "QID", "right"),
                          c("saved", "SAVED", "right", unknown="none"),
                          c("reset_to", "RESET_TO", "right")], rows,
                         title=f"rollback of {group} / {topic}: nothing to restore")],
                  data={"rollback_file": path, "group": group, "topic": topic,
                        "execute": execute, "nothing_to_restore": True,
                        "queues": rows},
                  notes=notes)


def rollbacks_result(infos: list[RollbackInfo], root: Path, live: dict[str, str],
                     failures: list[Any], *, here: str | None, check: bool,
                     filtered: bool) -> Result:
    """``offsets rollbacks``: one row per rollback file, oldest first; ``live`` (with
    ``check``) where each file's group stands now, ``here`` the name server it was checked
    against."""
    rows = []
    for i in infos:
        by = i.rolled_back_by[0] if i.rolled_back_by else None
        note = []
        if i.error:
            note.append(i.error)
        if i.remaining:
            note.append(f"interrupted: {i.remaining.name} holds what was not sent")
        if here and i.namesrv and i.namesrv != here:
            note.append(f"written against name server {i.namesrv}, checked against {here}")
        if i.later:
            note.append(f"{len(i.later)} later change(s) of {i.group}/{i.topic}: restoring "
                        "this undoes them too")
        rows.append({"name": i.name, "group": i.group, "topic": i.topic,
                     "created": format_ms(i.created_ts) if i.created_ts else None,
                     "created_ts": i.created_ts, "queues": i.queues,
                     # what restoring it undoes: the reset's target, or "rollback of NAME"
                     "undoes": (f"rollback of {Path(i.rollback_of).name}" if i.rollback_of
                                else i.reason), "reason": i.reason,
                     "rolled_back": (f"yes, {format_ms(by.created_ts)}" if by and by.created_ts
                                     else "yes" if by else "no") if not i.error else None,
                     "rolled_back_by": [b.name for b in i.rolled_back_by],
                     "later_changes": [b.name for b in i.later],
                     "rollback_of": i.rollback_of, "namesrv": i.namesrv,
                     "interrupted_remaining": str(i.remaining) if i.remaining else None,
                     "path": str(i.path), "error": i.error,
                     **({"live": live.get(i.name)} if check else {}),
                     "note": "; ".join(note)})
    c = Column
    columns = [c("name", "NAME", kind="key"), c("group", "GROUP"), c("topic", "TOPIC"),
               c("created", "CREATED (UTC)", kind="low"), c("queues", "QUEUES", "right"),
               c("undoes", "UNDOES", drop=2), c("rolled_back", "ROLLED BACK", kind="state")]
    if check:
        columns.append(c("live", "NOW", kind="state"))
    columns.append(c("note", "NOTE", drop=1))
    notes = [f"{len(rows)} rollback file(s) in {root}"
             + (" (filtered)" if filtered else "")]
    if rows:
        notes.append("restore one: mqctl offsets rollback NAME (the plan), then add --execute")
    notes += [f"not checked: {f}" for f in failures]
    return Result([Table(columns, rows, title="rollback files")], data={
        "directory": str(root), "rollbacks": rows}, notes=notes)

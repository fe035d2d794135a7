"""The rows and notes of ``mqctl offsets reset/rollback`` (the plan, and the result once
executed), of ``mqctl offsets rollbacks`` and of a rollback with nothing to restore (pure:
everything already read, the CLI renders the Result)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.render import Column, Result, Table
from mqctl.reset.apply import summarize
from mqctl.reset.outcome import done_summary, undo_steps
from mqctl.timeparse import format_ms, localize_iso
from mqctl.views.message import plan_message_fields

if TYPE_CHECKING:
    from mqctl.reset.apply import QueueResult
    from mqctl.reset.files import RollbackInfo
    from mqctl.reset.types import Plan, Target
    from mqctl.reset.workflow import Planned, ResetOutcome


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


def plan_result(plan: Plan, results: list[QueueResult] | None, *, execute: bool,
                rollback: str | None, extra_notes: list[str] | None = None,
                plan_shown: bool = False) -> Result:
    """The plan (and the result once executed). ``plan_shown``: the plan table and its notes
    were printed before the apply started; only the result follows (text formats)."""

    c = Column
    # CURRENT "none": the group has no committed offset there (known, not unknown "-")
    rows = [dict(q.row(), current="none") if q.current is None else q.row()
            for q in plan.queues]
    for row in rows:  # the table in the --tz zone; CSV, JSON and plan files keep UTC
        row["target_time_shown"] = localize_iso(row.get("target_time") or "")
    tables = [Table([c("broker", "BROKER"), c("queue_id", "QID", "right"),
                     c("min", "MIN", "right"), c("max", "MAX", "right"),
                     c("current", "CURRENT", "right"), c("target", "TARGET", "right"),
                     c("change", "CHANGE", "right"), c("replay", "REPLAY", "right"),
                     c("skip", "SKIP", "right"),
                     c("target_time_shown", "TARGET TIME", raw="target_time"),
                     c("note", "NOTE")], rows,
                    title=f"reset plan: {plan.group} / {plan.topic} {plan.target.describe()}",
                    name="plan")]
    data = plan.to_dict()
    if plan.messages:  # --show-messages: the message at each target

        for q, row, drow in zip(plan.queues, rows, data["queues"], strict=True):
            cells = plan_message_fields(plan.messages.get(q.mq))
            row.update(cells)
            drow["target_message"] = {k: v for k, v in cells.items()
                                      if k not in ("target_stored", "target_keys")}
        tables[0].columns[-1:-1] = [c("target_stored", "TARGET STORED",
                                      raw="target_store_time"),
                                    c("target_keys", "TARGET KEYS")]
    data["execute"] = execute
    data["rollback_file"] = rollback
    notes = list(extra_notes or [])
    notes += [f"broker {b.name}: {b.path.value if b.path else 'n/a'} ({b.path_source})"
              for b in plan.brokers.values()]
    notes.append(f"consumers: {plan.consumers.describe()}")
    if plan.offsets_read:  # CURRENT (and a rollback file's "before") are as of then
        notes.append(f"committed offsets read at {localize_iso(plan.offsets_read_text())}"
                     + (": another writer can move them before the apply (docs/reset.md "
                        "\"Concurrent changes\")" if execute else ""))
    notes += plan.notes
    notes += [f"warning: {w}" for w in plan.warnings]
    notes += [f"REFUSED: {r}" for r in plan.refusals]
    if results is None:
        replay = sum(q.replay for q in plan.queues)
        skip = sum(q.skip for q in plan.queues)
        unknown = sum(1 for q in plan.queues if q.current is None)
        notes.append(f"{len(plan.queues)} queue(s): {replay} message(s) will be consumed "
                     f"again, {skip} skipped"
                     + (f" ({unknown} queue(s) without a committed offset: not counted, their "
                        "change is not known)" if unknown else ""))
    else:
        notes.append(done_summary(plan, results))
        data["done"] = notes[-1]  # what this run changed (and still holds), in words
    if plan_shown:
        tables, notes = [], list(extra_notes or []) + notes[-1:]
    if results is not None:
        rrows = [r.row() for r in results]
        shown = [dict(x, previous="none") if x["previous"] is None else x for x in rrows]
        tables.append(Table([c("broker", "BROKER"), c("queue_id", "QID", "right"),
                             c("previous", "PREVIOUS", "right"), c("target", "TARGET", "right"),
                             c("now", "NOW", "right"), c("status", "STATUS"),
                             c("detail", "DETAIL")], shown, title="result", name="results"))
        data["results"] = rrows
        data["summary"] = summarize(results)
        notes.append("result: " + ", ".join(f"{v} {k}" for k, v in
                                              sorted(summarize(results).items())))
    elif not execute:
        notes.append("WARN: No action will be performed as the --execute option is missing. "
                     "Review the plan, then re-run with --execute.")
    elif plan.refusals:
        notes.append("nothing was changed (refused)")
    if rollback:
        _, first = undo_steps(plan, rollback)
        notes.append(f"rollback file: {rollback} (written before the first change; restore "
                     + (f"with: {first}: " if first else "with: ")
                     + f"mqctl offsets rollback {rollback} --execute)")
    return Result(tables, data=data, notes=notes)


def ready_result(planned: Planned, rollback: str, message: str | None) -> Result:
    """The plan as it is printed before the change starts (text formats), with what starts
    next (``message``, unless a confirmation comes first)."""
    first = plan_result(planned.plan, None, execute=True, rollback=rollback,
                        extra_notes=list(planned.notes))
    if message:
        first.notes.append(message)
    return first


def outcome_result(o: ResetOutcome, *, plan_shown: bool = False) -> Result:
    """The run's output: the plan and, once executed, the result (``plan_shown``: the plan
    was printed at ``ready``: only what came after it), with the guards' data and what an
    interrupt left."""
    shown = plan_shown and o.ready_notes is not None
    extra = list(o.notes[o.ready_notes or 0:] if shown else o.notes)
    if o.interruption is not None:
        extra += o.interruption.notes
    rb = None if o.declined else o.rollback
    out = plan_result(o.plan, list(o.results) if o.results is not None else None,
                      execute=o.planned.execute, rollback=rb, extra_notes=extra,
                      plan_shown=shown)
    if o.interruption is not None:
        out.data["interrupted"] = dict(o.interruption.data)
    out.data["guards"] = o.planned.guard_data
    return out

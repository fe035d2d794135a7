"""The rows, notes and JSON of a lever's plan and outcome (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.levers.clone import clone_rows, finish_command
from mqctl.levers.effect import effect_notes
from mqctl.levers.workflow import LeverOutcome, command
from mqctl.render import Column, Result, Table
from mqctl.views.group_config import value_text

if TYPE_CHECKING:
    from mqctl.levers.clone import CloneOutcome
    from mqctl.levers.plan import LeverPlan

WHAT = {"pause": "pause", "resume": "resume", "config set": "config change",
        "config rollback": "config rollback"}


def _changes(diff: dict[str, tuple[Any, Any]]) -> str:
    return "; ".join(f"{k}: {value_text(b)} -> {value_text(a)}" for k, (b, a) in diff.items())


def plan_rows(plan: LeverPlan, o: LeverOutcome | None = None) -> list[dict[str, Any]]:
    results = {r.broker: r for r in (o.results or ())} if o is not None else {}
    rows = []
    for c in plan.changes:
        r = results.get(c.broker)
        shown = c.diff() if c.sends else {}
        consume = (c.before or {}).get("consumeEnable") if c.before is not None else None
        rows.append({"broker": c.broker, "version": c.version_text, "action": c.action,
                     "consume_enable": value_text(consume),
                     "changes": _changes(shown) or c.reason or "-",
                     "status": r.status.value if r is not None else "planned" if c.sends
                     else c.action,
                     "detail": r.detail if r is not None else ""})
    return rows


def lever_result(o: LeverOutcome, *, plan_shown: bool = False) -> Result:
    plan = o.plan
    rows = plan_rows(plan, o if o.results is not None else None)
    cols = [Column("broker", "BROKER"), Column("version", "VERSION"),
            Column("action", "ACTION", kind="state"),
            Column("consume_enable", "CONSUME ENABLE"), Column("changes", "CHANGES"),
            Column("status", "STATUS", kind="state"), Column("detail", "DETAIL", drop=1)]
    notes = list(plan.notes) + list(o.notes) + [f"refused: {r}" for r in plan.refusals]
    notes += [f"not read: {f.broker}: {f.message}" for f in plan.failures]
    if o.results is None and not o.declined and not plan.refusals and plan.to_send:
        notes.append(f"plan only: nothing was changed; to apply it: {command(plan)}")
    if o.undo is not None:
        notes.append(f"undo file (the configs before the change): {o.undo}")
    if o.effect is not None:
        notes += effect_notes(o.effect, plan.group)
    fin, undo = o.finish_command(), o.undo_command()
    if o.signal is not None or (o.results and o.left()):
        if fin:
            notes.append(f"finish the change: {fin}")
        if undo:
            notes.append(f"undo it: {undo}")
    elif undo and plan.request.lever != "config rollback":
        notes.append(f"undo: {undo}")
    data = {"group": plan.group, "lever": plan.request.lever, "namesrv": plan.namesrv,
            "execute": plan.request.execute, "phase": o.phase,
            "brokers": [{**row, "before": c.before, "after": c.after,
                         "now": next((r.now for r in o.results or () if r.broker == c.broker),
                                     None)}
                        for row, c in zip(rows, plan.changes, strict=True)],
            "refusals": list(plan.refusals),
            "failures": [f.to_dict() for f in plan.failures],
            "undo_file": o.undo, "declined": o.declined,
            "interrupted": ({"signal": o.signal, "during": o.phase, "finish": fin,
                             "undo": undo} if o.signal else None),
            "finish": fin, "undo": undo,
            "effect": o.effect.to_dict() if o.effect is not None else None}
    title = f"{WHAT[plan.request.lever]} of group {plan.group}" + (
        "" if plan.request.execute else " (plan)")
    return Result([Table(cols, rows, title=title, name="brokers")], data=data, notes=notes)


def ready_result(plan: LeverPlan, undo: str | None) -> Result:
    """The plan as shown before the change starts (text formats)."""
    r = lever_result(LeverOutcome(plan))
    r.notes = [n for n in r.notes if not n.startswith("plan only")]
    if undo:
        r.notes.append(f"the undo file is written first: {undo}")
    return r




def clone_result(o: CloneOutcome) -> Result:
    rows, data = clone_rows(o)
    r = o.plan.request
    cols = [Column("broker", "BROKER"), Column("queue_id", "QUEUE", align="right"),
            Column("from", f"{r.src.upper()} (FROM)"), Column("before", "BEFORE"),
            Column("after", "AFTER"), Column("now", "NOW"),
            Column("status", "STATUS", kind="state")]
    notes = [*o.plan.notes, *o.notes, *(f"refused: {x}" for x in o.plan.refusals)]
    if o.sent is None and not o.plan.refusals:
        notes.append(f"plan only: nothing was changed; to apply it: {finish_command(o.plan)}")
    if o.rollback:
        notes.append(f"rollback file ({r.dest}'s offsets before): {o.rollback}; undo: mqctl "
                     f"-n {o.plan.namesrv} offsets rollback {o.rollback} --execute")
    if o.signal:
        notes.append(f"finish the clone: {finish_command(o.plan)}")
    return Result([Table(cols, rows, title=f"offsets clone {r.src} -> {r.dest} on {r.topic}",
                         name="queues")], data=data, notes=notes)


__all__ = ["clone_result", "lever_result", "plan_rows", "ready_result"]

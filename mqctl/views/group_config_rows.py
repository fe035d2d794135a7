"""The rows and notes of ``mqctl group config`` (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.render import Column, Result, Table
from mqctl.views.group_config import compare, value_text

if TYPE_CHECKING:
    from mqctl.views.group_config import GroupConfigView


def config_result(view: GroupConfigView) -> Result:
    rows_cmp = compare(view)
    holders = view.holders
    rows = []
    for r in rows_cmp:
        row: dict[str, Any] = {"field": r.name,
                               "agree": ("-" if r.agree is None else "yes" if r.agree
                                         else "DIFFERS"),
                               "meaning": r.meaning}
        for b in holders:
            row[b] = value_text(r.values.get(b))
        rows.append(row)
    differs = [r.name for r in rows_cmp if r.differs]
    data = {"group": view.group,
            "brokers": {b: view.configs[b] for b in view.brokers},
            "fields": [{"field": r.name, "values": r.values, "agree": r.agree,
                        "unknownOn": list(r.unknown_on)} for r in rows_cmp],
            "disagreements": differs, "missingOn": view.missing_on,
            "brokers_not_included": view.not_included,
            "failures": [f.to_dict() for f in view.failures]}
    cols = [Column("field", "FIELD")] + [Column(b, b.upper()) for b in holders] + [
        Column("agree", "AGREE", kind="state"), Column("meaning", "MEANING", drop=1)]
    notes = []
    if differs:
        notes.append(f"brokers disagree on {len(differs)} field(s): {', '.join(differs)} (each "
                     "broker applies its own: e.g. retries, consumeEnable and the pull "
                     "target follow the broker a message or pull is on)")
    elif holders:
        notes.append(f"{len(holders)} broker(s) hold group {view.group}; they agree on every "
                     "field")
    if view.missing_on:
        notes.append(f"no subscription group {view.group} on {', '.join(view.missing_on)} "
                     "(created there with the defaults when a consumer of the group first "
                     "reaches it, if autoCreateSubscriptionGroup is on)")
    unknown = [r for r in rows_cmp if r.unknown_on]
    if unknown:
        notes.append("`-`: the broker's version does not have the field ("
                     + "; ".join(f"{r.name} on {', '.join(r.unknown_on)}" for r in unknown[:4])
                     + ")")
    if view.failures:
        notes.append(f"not included: {', '.join(view.not_included)}")
    return Result([Table(cols, rows, title=f"subscription group config of {view.group}",
                         name="fields")], data=data, notes=notes)

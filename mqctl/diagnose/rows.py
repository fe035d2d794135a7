"""The findings, checks and notes of ``mqctl diagnose`` (pure): a
:class:`~mqctl.diagnose.types.Diagnosis` in, a :class:`mqctl.render.Result` out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.diagnose.types import NEEDS_SAMPLE, SECOND_READ
from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_duration, format_local

if TYPE_CHECKING:
    from mqctl.diagnose.types import Diagnosis, Finding


def _refs(d: Diagnosis, ranks: tuple[int, ...]) -> str:
    return ", ".join(f"#{r} {d.findings[r - 1].code}" for r in ranks)


def _link(d: Diagnosis, f: Finding) -> str:
    """What the ranking says of a finding, after its title: the findings that explain it (all
    of its evidence, or part), or those it explains each other with."""
    if f.explained_by:
        return (f"; {'explained' if f.fully_explained else 'partly explained'} by "
                f"{_refs(d, f.explained_by)}")
    if f.mutual:
        return f"; explained together with {_refs(d, f.mutual)} (they explain each other)"
    return ""


def diagnose_result(d: Diagnosis) -> Result:
    rows = [{"rank": i + 1, "severity": f.severity, "code": f.code,
             "finding": f.title + _link(d, f)} for i, f in enumerate(d.findings)]
    crows = [c.to_dict() for c in d.checks]
    notes: list[str] = []
    for i, f in enumerate(d.findings):
        notes.append(f"{i + 1}. [{f.severity}] {f.code}: {f.title}{_link(d, f)}")
        notes.extend(f"   - {e.text} [{e.source}]" for e in f.evidence)
        notes.append(f"   why: {f.why}")
        if f.consequences:
            notes.append(f"   explains: {_refs(d, f.consequences)}")
        them = "it" if len(f.explained_by) == 1 else "them"
        first = (f"act on {_refs(d, f.explained_by)} first (this follows from {them}); "
                 if f.fully_explained else
                 f"act on {_refs(d, f.explained_by)} first ({them} explain part of this); "
                 if f.explained_by else "")
        notes.append(f"   next: {first}{f.next}")
        notes.append("")
    s = d.summary
    facts = [f"{s['clients']} client(s)" if s.get("online") else
             "offline" if s.get("online") is False else "members unknown",
             f"lag {s['lag']:,}" if s.get("lag") is not None else
             f"lag unknown (at least {s['lag_at_least']:,} on the brokers read)"
             if s.get("lag_at_least") else "lag unknown"]
    if s.get("max_time_lag_ms") is not None:
        facts.append(f"max time lag {format_duration(s['max_time_lag_ms']) or '0'}")
    for t, ts in sorted(s.get("topics", {}).items()):
        bits = []
        if ts.get("consume_tps") is not None:
            bits.append(f"consumed {ts['consume_tps']:.1f}/s")
        if ts.get("produce_tps") is not None:
            bits.append(f"produced {ts['produce_tps']:.1f}/s")
        if ts.get("lag_change_tps") is not None:
            bits.append(f"lag {ts['lag_change']:+,} over the sample")
        if bits:
            facts.append(f"{t}: " + ", ".join(bits))
    read = (f"read {format_local(d.capture_ts - d.sample_ms)} and {format_local(d.capture_ts)}"
            if d.sample_ms is not None else f"read {format_local(d.capture_ts)}")
    notes.append(f"{d.group} ({s.get('kind')}, {read}): {d.headline}; " + "; ".join(facts))
    if d.unread:
        notes.append("not read (the checks that need it were not made): "
                     + "; ".join(f"{k}: {v}" for k, v in sorted(d.unread.items())))
    skipped = [c.code for c in d.checks if c.status == NEEDS_SAMPLE]
    if skipped and d.sample_ms is None:
        for f in d.findings:
            if f.code == SECOND_READ:
                notes.append(f"needs a second read: {f.values.get('needs')} is suspected on "
                             f"{f.values.get('queues')} queue(s): `{f.values.get('command')}`")
        notes.append(f"--sample SECONDS also checks: {', '.join(skipped)} (two reads)")
    return Result([
        Table([Column("rank", "#", "right"), Column("severity", "SEVERITY", kind="state"),
               Column("code", "CODE", kind="key"), Column("finding", "FINDING")],
              rows, title=f"findings of {d.group}", name="findings"),
        Table([Column("check", "CHECK", kind="key"), Column("status", "RESULT", kind="state"),
               Column("detail", "DETAIL", kind="low", drop=1)],
              crows, title="checks", name="checks"),
    ], data=d.to_dict(), notes=notes, main="findings")

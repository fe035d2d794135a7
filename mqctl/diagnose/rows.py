"""The findings, checks and notes of ``mqctl diagnose`` (pure): a
:class:`~mqctl.diagnose.types.Diagnosis` in, a :class:`mqctl.render.Result` out."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mqctl.diagnose.types import Diagnosis
    from mqctl.render import Result


def diagnose_result(d: Diagnosis) -> Result:
    from mqctl.render import Column, Result, Table
    from mqctl.timeparse import format_duration, format_local

    rows = [{"rank": i + 1, "severity": f.severity, "code": f.code, "finding": f.title}
            for i, f in enumerate(d.findings)]
    crows = [c.to_dict() for c in d.checks]
    notes: list[str] = []
    for i, f in enumerate(d.findings):
        notes.append(f"{i + 1}. [{f.severity}] {f.code}: {f.title}")
        notes.extend(f"   - {e.text} [{e.source}]" for e in f.evidence)
        notes.append(f"   why: {f.why}")
        notes.append(f"   next: {f.next}")
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
    verdict = {"problems": f"{len(d.problems)} problem(s) found",
               "ok": "nothing wrong found",
               "incomplete": "nothing wrong found in what could be read"}[d.verdict]
    infos = len(d.findings) - len(d.problems)
    if infos:
        verdict += f" ({infos} note(s) above)" if d.verdict != "problems" else (
            f", {infos} note(s)")
    read = (f"read {format_local(d.capture_ts - d.sample_ms)} and {format_local(d.capture_ts)}"
            if d.sample_ms is not None else f"read {format_local(d.capture_ts)}")
    notes.append(f"{d.group} ({s.get('kind')}, {read}): {verdict}; " + "; ".join(facts))
    if d.unread:
        notes.append("not read (the checks that need it were not made): "
                     + "; ".join(f"{k}: {v}" for k, v in sorted(d.unread.items())))
    skipped = [c.code for c in d.checks if c.status == "needs --sample"]
    if skipped and d.sample_ms is None:
        notes.append(f"--sample SECONDS also checks: {', '.join(skipped)} (two reads)")
    return Result([
        Table([Column("rank", "#", "right"), Column("severity", "SEVERITY", kind="state"),
               Column("code", "CODE", kind="key"), Column("finding", "FINDING")],
              rows, title=f"findings of {d.group}", name="findings"),
        Table([Column("check", "CHECK", kind="key"), Column("status", "RESULT", kind="state"),
               Column("detail", "DETAIL", kind="low", drop=1)],
              crows, title="checks", name="checks"),
    ], data=d.to_dict(), notes=notes, main="findings")

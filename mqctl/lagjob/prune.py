"""``mqctl lag prune``: the plan of what retention deletes, and with ``execute`` the deletion,
of the lag report's old ``date=`` partitions (:mod:`mqctl.lagjob.retention`) and of old
capture files (:func:`mqctl.snapshot.plan_prune`), as one result. Pure Python, no Spark."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mqctl.errors import UsageError
from mqctl.lagjob import retention
from mqctl.lagjob.guards import report_lock
from mqctl.render import Result, Table, cols
from mqctl.snapshot import (
    CapturePrunePlan,
    apply_prune,
    human_bytes,
    list_captures,
    parse_keep,
    plan_prune,
    run_lock,
)
from mqctl.timeparse import format_ms, now_ms


def _report_plan(out: str, keep_ms: int, now: int, execute: bool) -> retention.ReportPrunePlan:
    d = retention.local_dir(out, "report directory", "the --out of mqctl lag report")
    plan = retention.plan_report_prune(d, retention.list_partitions(d), keep_ms=keep_ms, now=now)
    if not execute:
        return plan
    with report_lock(str(d)):  # (not under a report run: exit 6 while one writes)
        return dataclasses.replace(plan, delete=retention.apply_report_prune(plan))


def _capture_plan(snapshots: str, keep_ms: int, now: int, execute: bool) -> CapturePrunePlan:
    snap_dir: Path = retention.local_dir(snapshots, "snapshot directory",
                                         "the --out of mqctl snapshot")
    plan = plan_prune(list_captures(snap_dir), keep_ms=keep_ms, now=now)
    if not execute:
        return plan
    # a capture running now is not raced: the snapshot's own lock (exit 6 if held)
    with run_lock(snap_dir):
        plan = plan_prune(list_captures(snap_dir), keep_ms=keep_ms, now=now)
        return dataclasses.replace(plan, delete=apply_prune(plan))


def prune(*, keep: str, out: str | None, snapshots: str | None, execute: bool,
          now: int | None = None) -> Result:
    """The rows of what goes (or went, with ``execute``) and one note saying so; "nothing
    was deleted" unless ``execute``."""
    if out is None and snapshots is None:
        raise UsageError("say what to prune", hint="pass --out REPORT_DIR and/or "
                         "--snapshots SNAPSHOT_DIR")
    keep_ms = parse_keep(keep)
    now = now_ms() if now is None else now
    report_plan = None if out is None else _report_plan(out, keep_ms, now, execute)
    cap_plan = None if snapshots is None else _capture_plan(snapshots, keep_ms, now, execute)
    rows = retention.prune_rows(report_plan, cap_plan, executed=execute)
    gone = [r for r in rows if str(r["action"]).startswith(("delete", "deleted"))]
    nfiles = sum(int(str(r["files"])) for r in gone)
    nbytes = sum(int(str(r["bytes"])) for r in gone)
    cutoff = format_ms(now - keep_ms)
    parts = len([r for r in gone if r["what"] != "snapshots"])
    caps = sum(int(str(r["files"])) for r in gone if r["what"] == "snapshots")
    what = (f"{parts} partition(s) and {caps} capture file(s), {nfiles} file(s), "
            f"{human_bytes(nbytes)}, from before {cutoff}")
    note = (f"deleted {what}" if execute else
            f"plan: would delete {what}; nothing was deleted (re-run with --execute)")
    if not gone:
        note = f"nothing older than {cutoff} to delete"
    data = {"executed": execute, "keep": keep, "cutoff_ms": now - keep_ms,
            "cutoff_time": cutoff, "files": nfiles, "bytes": nbytes, "rows": rows}
    return Result([Table(cols("what", "date", "files", "bytes", "action"), rows)], data=data,
                  notes=[note])

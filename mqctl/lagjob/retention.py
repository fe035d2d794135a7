"""Retention of the lag report's outputs (``mqctl lag prune``): delete old ``date=`` partitions.

The report writes its datasets partitioned by day (``OUT/lag/date=2024-06-01/...``, the list in
:data:`mqctl.lagjob.result.DATASETS`, ``docs/exports.md`` section 6). A partition is deleted when
the whole day lies before the cutoff (``now - keep``), except the newest partition of each
dataset, so a report that stopped running keeps its last day. Only those datasets are touched:
no other directory under ``OUT`` (the run's files, an ingested-state directory, anything a user
put there) is looked at.

Each partition is first renamed to a hidden name in its dataset directory (one ``rename``,
atomic: a reader, Spark included, sees the whole partition or none, and Spark skips names
starting with ``.``), then removed. A prune killed half way leaves only such hidden
directories, which the next prune removes. Pure Python, no Spark.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from mqctl.errors import UsageError
from mqctl.lagjob.inputs import local_path

_PARTITION = re.compile(r"^date=([0-9]{4}-[0-9]{2}-[0-9]{2})$")
_PRUNING = re.compile(r"^\.date=[0-9]{4}-[0-9]{2}-[0-9]{2}\.pruning-[0-9]+$")


@dataclass(frozen=True, slots=True)
class Partition:
    dataset: str  # "lag", "rebalance/events", ...
    day: date
    path: Path
    files: int
    size: int
    leftover: bool = False  # a hidden directory an interrupted prune left


@dataclass(frozen=True, slots=True)
class ReportPrunePlan:
    out: Path
    cutoff_ms: int
    delete: list[Partition]
    kept_newest: list[Partition]  # before the cutoff, but the newest of their dataset
    kept: int  # partitions whose day reaches the cutoff


def local_dir(out: str, what: str, give: str) -> Path:
    """A directory to prune as a local path: ``file:`` URIs are accepted, other URIs
    (``hdfs://``, ``s3a://``) are refused (their file system's own lifecycle rules do this)."""
    p = local_path(out)
    if "://" in p:
        raise UsageError(f"lag prune works on local directories, not {out}",
                         hint="use the storage's own lifecycle rules for hdfs:// or s3a:// "
                              "outputs, or mount it locally")
    d = Path(p)
    if not d.is_dir():
        raise UsageError(f"{what} {out} does not exist or is not a directory",
                         hint=f"give {give}")
    return d


def datasets() -> tuple[str, ...]:
    from mqctl.lagjob.result import DATASETS

    return tuple(DATASETS)


def _size(d: Path) -> tuple[int, int]:
    files = size = 0
    for root, _dirs, names in os.walk(d):
        for n in names:
            with contextlib.suppress(OSError):
                size += os.lstat(os.path.join(root, n)).st_size
                files += 1
    return files, size


def list_partitions(out: Path, names: Sequence[str] | None = None) -> list[Partition]:
    """The ``date=YYYY-MM-DD`` partition directories of each dataset under ``out`` (symlinks
    and other names are never listed), plus hidden leftovers of an interrupted prune."""
    found: list[Partition] = []
    for ds in names if names is not None else datasets():
        d = out / ds
        if d.is_symlink() or not d.is_dir():
            continue
        for child in sorted(d.iterdir()):
            if child.is_symlink() or not child.is_dir():
                continue
            m = _PARTITION.match(child.name)
            leftover = _PRUNING.match(child.name) is not None
            if not m and not leftover:
                continue
            text = m.group(1) if m else child.name[len(".date="):len(".date=") + 10]
            try:
                day = date.fromisoformat(text)
            except ValueError:
                continue
            files, size = _size(child)
            found.append(Partition(ds, day, child, files, size, leftover))
    return found


def _day_end_ms(day: date) -> int:
    end = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
    return int(end.timestamp() * 1000)


def plan_report_prune(out: Path, partitions: Sequence[Partition], *, keep_ms: int,
                      now: int) -> ReportPrunePlan:
    """Partitions whose whole UTC day ends at or before ``now - keep_ms``, except each
    dataset's newest partition; interrupted prunes' leftovers always go."""
    if keep_ms <= 0:
        raise UsageError("--keep must be longer than 0", hint="e.g. --keep 30d")
    cutoff = now - keep_ms
    newest: dict[str, date] = {}
    for p in partitions:
        if not p.leftover:
            newest[p.dataset] = max(newest.get(p.dataset, p.day), p.day)
    delete, kept_newest, kept = [], [], 0
    for p in sorted(partitions, key=lambda q: (q.dataset, q.day, q.path.name)):
        if p.leftover:
            delete.append(p)
        elif _day_end_ms(p.day) > cutoff:
            kept += 1
        elif p.day == newest[p.dataset]:
            kept_newest.append(p)
        else:
            delete.append(p)
    return ReportPrunePlan(out, cutoff, delete, kept_newest, kept)


def apply_report_prune(plan: ReportPrunePlan) -> list[Partition]:
    """Delete the planned partitions: rename out of sight (atomic), then remove. Returns the
    partitions deleted; one already gone is skipped; a rename or removal that fails stops with
    a one-line error naming the partition and how many were deleted before it."""
    done: list[Partition] = []
    for p in plan.delete:
        hidden = p.path
        if not p.leftover:
            hidden = p.path.with_name(f".{p.path.name}.pruning-{os.getpid()}")
            try:
                os.rename(p.path, hidden)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise _error(exc, p, done) from None
        try:
            shutil.rmtree(hidden)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise _error(exc, p, done) from None
        done.append(p)
    return done


def _error(exc: OSError, p: Partition, done: Sequence[Partition]) -> UsageError:
    reason = exc.strerror or str(exc)
    return UsageError(f"cannot delete report partition {p.path}: {reason} "
                      f"({len(done)} deleted before it)",
                      hint="this user may not delete there: run as the user that writes the "
                           "report, or fix the directory's permissions; a re-run finishes it")


def prune_rows(report: ReportPrunePlan | None, captures: object | None, *,
               executed: bool) -> list[dict[str, object]]:
    """One row per dataset and day (capture files counted per day as ``snapshots``): what is
    (or was) deleted and what stays only because it is the newest."""
    from mqctl.snapshot import CapturePrunePlan

    act = "deleted" if executed else "delete"
    rows: list[dict[str, object]] = []
    if report is not None:
        for group, action in ((report.delete, act), (report.kept_newest, "keep (newest)")):
            for p in group:
                rows.append({"what": p.dataset, "date": p.day.isoformat(), "files": p.files,
                             "bytes": p.size, "action": action + (" (interrupted prune)"
                                                                 if p.leftover else ""),
                             "path": str(p.path)})
    if isinstance(captures, CapturePrunePlan):
        for files, action in ((captures.delete, act), (captures.kept_newest, "keep (newest)")):
            days: dict[str, list[int]] = {}
            where: dict[str, str] = {}
            for f in files:
                day = f.path.parent.name
                agg = days.setdefault(day, [0, 0])
                agg[0] += 1
                agg[1] += f.size
                where[day] = str(f.path.parent)
            for day in sorted(days):
                rows.append({"what": "snapshots", "date": day, "files": days[day][0],
                             "bytes": days[day][1], "action": action, "path": where[day]})
    return rows

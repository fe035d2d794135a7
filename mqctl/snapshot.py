"""``mqctl snapshot``: one capture of a cluster's consumer groups in the canonical export format.

One JSON Lines file per capture (``docs/exports.md`` section 1), plain or gzip-compressed,
written atomically, so a cron job can run it every minute and the lag job can read a directory
of them. A lock file in the output directory stops two overlapping runs from interleaving.
Retention (:func:`plan_prune`, :func:`apply_prune`) deletes old capture files by the capture
time in their names, never the newest of a cluster.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import stat
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from mqctl.admin import Admin, BrokerFailure, NotFoundError, NothingRead, failure_hint
from mqctl.errors import MqctlError, PartialFailure, UsageError
from mqctl.fsutil import atomic_writer, dir_lock, local_path_error
from mqctl.models import RETRY_PREFIX, is_system_group
from mqctl.remoting.client import fan_out
from mqctl.render import Result, Table, cols
from mqctl.timeparse import format_ms, now_ms, parse_duration_option
from mqctl.views.existence import group_exists
from mqctl.views.progress import NO_QUEUE_READ, GroupProgress
from mqctl.views.progress_capture import CaptureCache, capture_progress

if TYPE_CHECKING:
    from mqctl.render import Result

# 1.1: owner_unknown and members_unanswered; 1.2: rows of BROADCASTING
# groups (consumer offset, lag and time lag null, ``lag_unknown`` says why: :func:`rows_of`);
# readers take any mqctl.snapshot/1.x
SCHEMA = "mqctl.snapshot/1.2"

# file suffix per --compress choice; Spark (Hadoop's GzipCodec) reads .gz text natively
SUFFIXES = {"gzip": ".jsonl.gz", "none": ".jsonl"}
# zlib level of the capture files: bench/snapshot_scale.py measures plain against levels 1
# and 6 in one run (docs/exports.md section 1.1)
GZIP_LEVEL = 6

@dataclass
class Snapshot:
    capture_ts: int
    namesrv: str
    cluster: str
    groups: list[str]
    rows: list[dict[str, Any]]
    failures: list[tuple[str, BrokerFailure]] = field(default_factory=list)  # (group, failure)
    group_errors: dict[str, str] = field(default_factory=dict)  # groups not read at all
    group_exc: dict[str, MqctlError] = field(default_factory=dict)  # ... and their errors


def rows_of(p: GroupProgress, *, capture_ts: int, cluster: str, namesrv: str
            ) -> list[dict[str, Any]]:
    """Canonical rows (schema ``mqctl.snapshot/1.x``) for one group's capture."""
    members = sorted(p.members.clients) if p.members else []
    unanswered = sorted(p.unanswered)
    online = p.members.online_state if p.members else None
    conn = p.members.connection if p.members else None
    orderly: bool | None = None
    if p.members:
        flags = [cv.running.orderly for cv in p.members.clients.values() if cv.running]
        orderly = any(flags) if flags else None
    out = []
    for q in p.queues:
        out.append({
            "schema": SCHEMA, "capture_ts": capture_ts, "capture_time": format_ms(capture_ts),
            "cluster": cluster, "namesrv": namesrv, "group": p.group, "topic": q.mq.topic,
            "broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
            "broker_offset": q.broker_offset, "min_offset": q.min_offset,
            # null where the group has no committed offset (``committed: false``, the reset
            # plans' rule), not the broker's placeholder 0
            "consumer_offset": q.current, "pull_offset": q.pull_offset,
            "lag": q.lag, "inflight": q.inflight, "inflight_source": q.inflight_source,
            # why lag (and consumer_offset, delay_ms, inflight) is null whatever was read:
            # "broadcasting" (the clients keep the offsets), else null
            "lag_unknown": q.lag_unknown,
            "committed": q.committed,
            "last_timestamp": q.last_timestamp or None, "max_timestamp": q.max_timestamp,
            "delay_ms": q.delay_ms, "delay_unknown": q.delay_reason,
            "owner": q.owner, "owners": list(q.owners), "owner_unknown": q.owner_unknown,
            "locked": q.locked, "last_lock_ts": q.last_lock_ts, "members": members,
            "members_unanswered": unanswered,
            "online": online,
            # CONSUME_POP where the group pops (GroupProgress.pop: a 5.x push consumer in
            # pop mode heartbeats CONSUME_PASSIVELY, its running info says it pops), so the
            # lag report never reads a pop group's queues as unowned
            "consume_type": "CONSUME_POP" if p.pop else conn.consume_type if conn else None,
            "message_model": conn.message_model if conn else None,
            "orderly": orderly,
        })
    return out


def unanswered_notes(rows: Iterable[dict[str, Any]]) -> list[str]:
    """One note per group whose capture has members that did not answer their running info:
    how many of its queues have an unknown owner (``owner_unknown``), and who."""
    who: dict[str, list[str]] = {}
    unknown: dict[str, int] = {}
    for r in rows:
        if r.get("members_unanswered"):
            who[r["group"]] = r["members_unanswered"]
            unknown[r["group"]] = unknown.get(r["group"], 0) + bool(r.get("owner_unknown"))
    return [f"{g}: owner unknown on {unknown[g]} queue(s): {', '.join(m)} did not answer "
            "GET_CONSUMER_RUNNING_INFO (still a member; rows say owner_unknown, not unowned)"
            for g, m in sorted(who.items())]


async def discover_groups(admin: Admin, *, include_system: bool = False,
                          failures: list[BrokerFailure] | None = None) -> list[str]:
    """Every group: ``%RETRY%<group>`` topics on the name server (as mqadmin's
    consumerProgress does) plus each master's subscription group table. Masters that did
    not answer are appended to ``failures`` (their groups without a retry topic are missed)."""
    groups = {t[len(RETRY_PREFIX):] for t in await admin.topic_list() if t.startswith(RETRY_PREFIX)}
    info = await admin.cluster_info()
    masters = {b.master_addr: b.broker_name for b in info.brokers.values() if b.master_addr}
    for o in await fan_out(list(masters), admin.subscription_groups,
                           concurrency=admin.concurrency):
        if o.ok:
            groups.update(o.value or [])
        elif failures is not None and o.error is not None:
            failures.append(BrokerFailure(masters[o.item], o.item, o.error))
    return sorted(g for g in groups if include_system or not is_system_group(g))


async def capture(admin: Admin, groups: Sequence[str], *, namesrv: str,
                  on_group_done: Any = None) -> Snapshot:
    ts = now_ms()
    cache = CaptureCache()

    async def one(group: str) -> GroupProgress:
        return await capture_progress(admin, group, cache=cache)

    results = await fan_out(list(groups), one, concurrency=admin.concurrency,
                            on_done=on_group_done)
    cluster = next((o.value.cluster for o in results if o.ok and o.value and o.value.cluster),
                   None) or namesrv
    snap = Snapshot(ts, namesrv, cluster, list(groups), [])
    for o in results:
        if not o.ok:
            assert o.error is not None
            snap.group_errors[o.item] = o.error.message
            snap.group_exc[o.item] = o.error
            continue
        assert o.value is not None
        snap.rows.extend(rows_of(o.value, capture_ts=ts, cluster=cluster, namesrv=namesrv))
        snap.failures.extend((o.item, f) for f in o.value.failures)
    return snap


def snapshot_path(out_dir: str | os.PathLike[str], cluster: str, capture_ts: int, *,
                  compress: str = "none") -> Path:
    iso = format_ms(capture_ts)  # 2024-06-01T10:00:00.123Z
    day = iso[:10]
    stamp = iso.replace("-", "").replace(":", "")  # 20240601T100000.123Z
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", cluster) or "cluster"
    return Path(out_dir) / day / f"mqctl-snapshot-{safe}-{stamp}{_suffix(compress)}"


def _suffix(compress: str) -> str:
    try:
        return SUFFIXES[compress]
    except KeyError:
        raise UsageError(f"unknown compression {compress!r}",
                         hint="choose one of: " + ", ".join(SUFFIXES)) from None


def encode_rows(rows: Iterable[dict[str, Any]]) -> bytes:
    """The JSON Lines bytes of a capture (compact separators, UTF-8, one row per line)."""
    return "".join(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n"
                   for row in rows).encode("utf-8")


def write(snap: Snapshot, out_dir: str | os.PathLike[str], *, compress: str = "none"
          ) -> Path | None:
    """Write the capture; ``None`` (no file) when it has no row: an empty capture file would
    tell the lag job "no queue" where mqctl read nothing.

    ``compress="gzip"`` writes one gzip member (``.jsonl.gz``) whose header carries the
    capture time and no file name, so the same capture gives the same bytes."""
    if not snap.rows:
        return None
    path = snapshot_path(out_dir, snap.cluster, snap.capture_ts, compress=compress)
    try:
        with atomic_writer(path) as fh:
            if compress == "gzip":
                raw = cast(IO[bytes], fh.buffer)  # type: ignore[attr-defined]
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                   compresslevel=GZIP_LEVEL,
                                   mtime=snap.capture_ts // 1000) as gz:
                    gz.write(encode_rows(snap.rows))
            else:
                for row in snap.rows:
                    fh.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False))
                    fh.write("\n")
    except OSError as exc:  # full disk, read-only: nothing is left half written
        raise local_path_error(exc, path, "the capture file") from None
    return path


def read_rows(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a capture file, plain or gzip (also several gzip members one after the
    other, e.g. captures concatenated with ``cat a.jsonl.gz b.jsonl.gz``)."""
    p = Path(path)
    with (gzip.open(p, "rt", encoding="utf-8") if p.name.endswith(".gz")
          else open(p, encoding="utf-8")) as fh:
        return [json.loads(ln) for ln in fh if ln.strip()]


# --------------------------------------------------------------------------------------------
# retention: mqctl snapshot --keep, mqctl lag prune --snapshots

# OUT/<YYYY-MM-DD>/mqctl-snapshot-<cluster>-<YYYYMMDDTHHMMSS.mmmZ>.jsonl[.gz], as written above;
# the leftover of a killed write is the hidden temporary file of atomic_writer
_CAPTURE_NAME = re.compile(
    r"^mqctl-snapshot-(?P<cluster>[A-Za-z0-9_.-]+)-(?P<stamp>[0-9]{8}T[0-9]{6}\.[0-9]{3}Z)"
    r"\.jsonl(?:\.gz)?$")
_TEMP_NAME = re.compile(r"^\.(?P<name>mqctl-snapshot-.+?\.jsonl(?:\.gz)?)\.[^./]+\.tmp$")
_DAY_DIR = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


@dataclass(frozen=True, slots=True)
class CaptureFile:
    path: Path
    cluster: str
    capture_ts: int
    size: int
    temporary: bool = False  # a killed run's hidden temporary file


def parse_capture_name(name: str) -> tuple[str, int] | None:
    """``mqctl-snapshot-c1-20240601T100000.123Z.jsonl.gz`` -> ``("c1", 1717236000123)``;
    ``None`` for any name mqctl did not give."""
    m = _CAPTURE_NAME.match(name)
    if not m:
        return None
    try:
        dt = datetime.strptime(m.group("stamp"), "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=UTC)
    except ValueError:  # 20241399T..., a name that only looks like ours
        return None
    return m.group("cluster"), int(dt.timestamp() * 1000)


def list_captures(out_dir: str | os.PathLike[str]) -> list[CaptureFile]:
    """The capture files mqctl wrote under ``OUT``: regular files (not symlinks) named as
    :func:`snapshot_path` names them, in the date directory of their capture time, plus the
    hidden temporary files a killed run left there. Anything else is never listed."""
    root = Path(out_dir)
    out: list[CaptureFile] = []
    for day in sorted(root.iterdir()) if root.is_dir() else []:
        if not _DAY_DIR.match(day.name) or day.is_symlink() or not day.is_dir():
            continue
        for f in sorted(day.iterdir()):
            tmp = _TEMP_NAME.match(f.name)
            parsed = parse_capture_name(tmp.group("name") if tmp else f.name)
            if parsed is None or format_ms(parsed[1])[:10] != day.name:
                continue
            try:
                st = f.lstat()
            except FileNotFoundError:  # deleted meanwhile
                continue
            if not _is_regular(st.st_mode):
                continue
            out.append(CaptureFile(f, parsed[0], parsed[1], st.st_size, tmp is not None))
    return out


def delete_error(exc: OSError, path: Path, what: str, done: Sequence[Any]) -> UsageError:
    """A deletion that failed (permissions, a read-only mount): one line naming the file and
    how many were deleted before it, exit 2."""
    reason = exc.strerror or str(exc)
    return UsageError(f"cannot delete {what} {path}: {reason} ({len(done)} deleted before it)",
                      hint="this user may not delete there: run as the user that writes "
                           "these files, or fix the directory's permissions")


def _is_regular(mode: int) -> bool:

    return stat.S_ISREG(mode)


@dataclass(frozen=True, slots=True)
class CapturePrunePlan:
    cutoff_ms: int  # captures before this are deleted
    delete: list[CaptureFile]
    kept_newest: list[CaptureFile]  # older than the cutoff but the newest of their cluster
    kept: int  # files at or after the cutoff


def parse_keep(text: str) -> int:
    """``--keep``: how long to keep files, a duration with a unit (``7d``, ``36h``, ``P7D``)
    longer than 0, in ms."""

    s = text.strip()
    if s.startswith(("-", "+")):
        raise UsageError(f"--keep {text!r} must be a plain duration", hint="e.g. --keep 7d")
    try:
        ms = parse_duration_option(s, "--keep", bare_seconds=False)
    except UsageError as exc:
        exc.hint = "e.g. --keep 7d or --keep 36h"
        raise
    if ms <= 0:
        raise UsageError(f"--keep {text!r} must be longer than 0", hint="e.g. --keep 7d")
    return ms


def plan_prune(files: Sequence[CaptureFile], *, keep_ms: int, now: int | None = None
               ) -> CapturePrunePlan:
    """Which capture files ``--keep`` deletes: those captured before ``now - keep_ms``, except
    the newest capture of each cluster (a cron that stopped a week ago still leaves the lag
    job the last state it saw). Temporary files of killed runs go by the same rule and are
    never anyone's newest."""
    if keep_ms <= 0:
        raise UsageError("--keep must be longer than 0", hint="e.g. --keep 7d")
    cutoff = (now_ms() if now is None else now) - keep_ms
    newest: dict[str, int] = {}
    for f in files:
        if not f.temporary:
            newest[f.cluster] = max(newest.get(f.cluster, f.capture_ts), f.capture_ts)
    delete, kept_newest, kept = [], [], 0
    for f in sorted(files, key=lambda c: (c.capture_ts, str(c.path))):
        if f.capture_ts >= cutoff:
            kept += 1
        elif not f.temporary and f.capture_ts == newest[f.cluster]:
            kept_newest.append(f)
        else:
            delete.append(f)
    return CapturePrunePlan(cutoff, delete, kept_newest, kept)


def apply_prune(plan: CapturePrunePlan) -> list[CaptureFile]:
    """Delete the planned files (each unlink is atomic: a reader sees the whole file or none)
    and the date directories that became empty. Returns what was deleted; a file that is
    already gone is skipped, any other error stops with a one-line error."""
    done: list[CaptureFile] = []
    days: set[Path] = set()
    for f in plan.delete:
        try:
            f.path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise delete_error(exc, f.path, "capture file", done) from None
        done.append(f)
        days.add(f.path.parent)
    for d in sorted(days):
        with contextlib.suppress(OSError):  # not empty (kept files, other files): stays
            d.rmdir()
    return done


def run_lock(out_dir: str | os.PathLike[str]) -> contextlib.AbstractContextManager[None]:
    """An exclusive, non-blocking lock on ``OUT/.mqctl-snapshot.lock`` (overlapping cron runs)."""
    return dir_lock(out_dir, ".mqctl-snapshot.lock",
                    f"another mqctl snapshot is still writing to {Path(out_dir)}",
                    "the previous run has not finished; lower the cron frequency or raise "
                    "--concurrency")


# ------------------------------------------------------------------ the command's rows


def snapshot_result(snap: Snapshot, path: Path | None, missing: list[str],
                    pruned: list[CaptureFile], keep: str | None) -> Result:
    """``mqctl snapshot``'s output: one status row per group asked (``group_status``), the
    file, the failures, and with ``keep`` (``--keep``) the capture files pruned."""

    per_group: dict[str, int] = {}
    for r in snap.rows:
        per_group[r["group"]] = per_group.get(r["group"], 0) + 1
    rows = [group_status(g, per_group.get(g, 0), snap, missing) for g in snap.groups]
    data: dict[str, Any] = {"file": str(path) if path else None,
                            "capture_ts": snap.capture_ts,
            "cluster": snap.cluster, "rows": len(snap.rows), "groups": rows,
            "failures": [{"group": g, "broker": f.broker, "error": f.message}
                         for g, f in snap.failures]}
    notes = [summary(rows, len(snap.rows), path), *unanswered_notes(snap.rows)]
    unknown_lag = [r for r in rows if r.get("lag_unknown")]
    for r in unknown_lag:  # captured, and its lag is still unknown
        notes.append(f"{r['group']}: lag unknown ({r['lag_unknown']}): each client keeps its "
                     "own offsets (LocalFileOffsetStore); its rows carry the broker offsets "
                     f"with lag and consumer_offset null and lag_unknown \"{r['lag_unknown']}\"")
    columns = cols("group", "rows", "status", *(["lag_unknown"] if unknown_lag else []))
    if keep is not None:
        data["pruned"] = [str(f.path) for f in pruned]
        notes.append(prune_note(pruned, keep))
    return Result([Table(columns, rows)], data=data, notes=notes)


def group_status(group: str, n: int, snap: Any, missing: list[str]) -> dict[str, Any]:
    """One group's line: ``failed`` (nothing read: no row, the error in ``error``),
    ``not found``, ``partial`` (some broker failed), ``no queue`` (read, and no queue of it
    found: created by ``updateSubGroup`` and never consumed, so its lag is unknown and the
    capture holds no row of it, not a lag of 0) or ``ok``."""
    if group in snap.group_errors:
        return {"group": group, "rows": n, "status": "failed",
                "error": snap.group_errors[group]}
    if group in missing:
        return {"group": group, "rows": n, "status": "not found"}
    partial = any(f[0] == group for f in snap.failures)
    why = next((r["lag_unknown"] for r in snap.rows
                if r["group"] == group and r.get("lag_unknown")), None)
    return {"group": group, "rows": n,
            "status": "partial" if partial else "no queue" if not n else "ok",
            "lag_unknown": why}


def summary(rows: list[dict[str, Any]], nrows: int, path: Any) -> str:
    """``1 of 2 group(s) captured (12 row(s)) to F; 1 failed; 1 not found (TYPO)``: groups
    that were not read are counted apart, never as captured."""
    captured = [r for r in rows if r["status"] in ("ok", "partial")]
    failed = [r["group"] for r in rows if r["status"] == "failed"]
    unknown = [r["group"] for r in rows if r["status"] == "not found"]
    empty = [r["group"] for r in rows if r["status"] == "no queue"]
    where = f"to {path}" if path else "(no row: no file written)"
    text = f"{len(captured)} of {len(rows)} group(s) captured ({nrows} row(s)) {where}"
    if empty:

        text += (f"; {len(empty)} with no queue ({', '.join(empty)}: {NO_QUEUE_READ}, its "
                 "lag is unknown: no row)")
    if failed:
        text += f"; {len(failed)} failed ({', '.join(failed)})"
    if unknown:
        text += f"; {len(unknown)} not found ({', '.join(unknown)})"
    return text


def prune_note(pruned: list[Any], keep: str) -> str:
    """``--keep 7d: deleted 3 capture file(s) (1.2 MiB) from before 2024-06-01T10:00:00Z``."""
    if not pruned:
        return f"--keep {keep}: no capture file to delete"
    size = sum(f.size for f in pruned)

    last = max(f.capture_ts for f in pruned)
    return (f"--keep {keep}: deleted {len(pruned)} capture file(s) ({human_bytes(size)}), "
            f"the newest of them captured {format_ms(last)}")


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


# ------------------------------------------------------------------ the workflow
# ``mqctl snapshot`` as ordered steps: the request checked (before any I/O), the run lock of
# the output directory (from before the cluster is asked), the groups (given, discovered),
# the capture, the unknown --group names, the file, the retention: a SnapshotOutcome.


@dataclass(frozen=True, slots=True)
class SnapshotRequest:
    """What to capture: ``groups`` (``--group``) and/or every group the cluster knows
    (``all_groups``; RocketMQ's own only with ``include_system``), into ``out`` (files in
    ``OUT/YYYY-MM-DD/``), ``compress`` ``gzip`` or ``none``, ``keep``: delete capture files
    older than this after the capture (``7d``)."""

    out: str
    groups: tuple[str, ...] = ()
    all_groups: bool = False
    include_system: bool = False
    compress: str = "gzip"
    keep: str | None = None

    def keep_ms(self) -> int | None:
        """``keep`` in ms, or None; the request is checked (a usage error before any I/O)."""
        if not self.groups and not self.all_groups:
            raise UsageError("say which groups to capture", hint="pass --group G (repeatable) "
                             "or --all-groups")
        return parse_keep(self.keep) if self.keep is not None else None


@dataclass(frozen=True, slots=True)
class SnapshotOutcome:
    """What a capture did: the capture, the file written (None: no row, no file), the
    ``--group`` names no broker knows, the capture files pruned, the brokers that did not
    list their subscription groups (``--all-groups``)."""

    request: SnapshotRequest
    snap: Snapshot
    path: Path | None
    missing: tuple[str, ...] = ()
    pruned: tuple[CaptureFile, ...] = ()
    discovery: tuple[BrokerFailure, ...] = ()

    @property
    def only_unknown(self) -> bool:
        """Only unknown groups: nothing to show (as ``group progress GID_TYPO``)."""
        s = self.snap
        return bool(self.missing) and not s.rows and not s.group_errors and not self.pruned

    def result(self) -> Result | None:
        """As ``mqctl snapshot`` prints it (None: nothing to show)."""
        if self.only_unknown:
            return None
        return snapshot_result(self.snap, self.path, list(self.missing), list(self.pruned),
                               self.request.keep)

    def error(self) -> MqctlError | None:
        """The error the capture ends with (None: complete): only unknown --group names
        (exit 2, nothing captured); no group read at all (the cause's code: 5 broker error,
        3 unreachable); some unknown (2) or some parts failed (8), with the file kept."""
        snap, missing = self.snap, list(self.missing)
        if self.only_unknown:
            return unknown_groups(missing, [], "nothing was captured: no file was written")
        problems = [(g, e) for g, e in snap.group_errors.items()] + [
            (f"{g}@{f.broker}", f.message) for g, f in snap.failures] + [
            (f"group list@{f.broker}", f.message) for f in self.discovery]
        if snap.groups and len(snap.group_errors) + len(missing) == len(snap.groups) \
                and snap.group_errors:

            return NothingRead(f"for any group to capture ({', '.join(snap.groups)})",
                               [f for e in snap.group_exc.values()
                                for f in getattr(e, "failures", [])]
                               or [BrokerFailure(g, getattr(e, "addr", None), e)
                                   for g, e in snap.group_exc.items()])
        kept = (f"the file {self.path} holds the rest of the capture" if self.path
                else "no row was captured: no file was written")
        if missing:
            return unknown_groups(missing, problems, kept)
        if not problems:
            return None

        errors = [*snap.group_exc.values(), *(f.error for _, f in snap.failures),
                  *(f.error for f in self.discovery)]
        return PartialFailure(f"{len(problems)} part(s) of the capture failed: "
                              + "; ".join(f"{w}: {e}" for w, e in problems[:5]), problems,
                              hint=kept + (f"; {failure_hint(errors, partial=True)}"
                                           if errors else ""))


def unknown_groups(missing: list[str], problems: list[tuple[str, str]], kept: str
                   ) -> MqctlError:
    """A --group no broker knows is bad input (exit 2), as for `group progress GID_TYPO`."""

    also = (f"; also {len(problems)} part(s) of the capture failed: "
            + "; ".join(f"{w}: {e}" for w, e in problems[:3])) if problems else ""
    return NotFoundError(f"{len(missing)} group(s) given with --group not known to any broker "
                         "(no member, no committed offset, no subscription group): "
                         f"{', '.join(missing)}{also}",
                         hint=f"check the name (it is case-sensitive); {kept}")


async def run_snapshot(connect: Callable[[], Awaitable[Admin]], request: SnapshotRequest, *,
                       namesrv: str, on_progress: Callable[[str, int], None] | None = None
                       ) -> SnapshotOutcome:
    """One capture: under the output directory's run lock (overlapping runs refused, exit
    6), ``connect()`` the cluster, capture, write, prune. ``on_progress(step, n)``:
    ``groups`` (n to capture), then ``group-done`` after each."""

    keep_ms = request.keep_ms()
    notify = on_progress or (lambda _s, _n: None)
    with run_lock(request.out):
        admin = await connect()
        discovery: list[BrokerFailure] = []
        groups = sorted(set(request.groups))
        if request.all_groups:
            groups = sorted(set(groups) | set(await discover_groups(
                admin, include_system=request.include_system, failures=discovery)))
        notify("groups", len(groups))
        snap = await capture(admin, groups, namesrv=namesrv,
                             on_group_done=lambda _o: notify("group-done", 1))
        # a --group that gave no row: a typo would otherwise capture nothing every minute
        empty = [g for g in sorted(set(request.groups))
                 if g not in snap.group_errors and not any(r["group"] == g for r in snap.rows)]
        missing = [g for g in empty if await group_exists(admin, g) is False]
        path = write(snap, request.out, compress=request.compress)
        pruned: list[CaptureFile] = []
        if keep_ms is not None:  # under the lock: no capture of an overlapping run half seen
            pruned = apply_prune(plan_prune(list_captures(request.out), keep_ms=keep_ms))
    return SnapshotOutcome(request, snap, path, tuple(missing), tuple(pruned), tuple(discovery))

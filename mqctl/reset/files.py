"""Plan files (``--export`` / ``--from-file``) and rollback files (written before the first
change, read by ``mqctl offsets rollback``). Every write is atomic."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqctl.errors import UsageError
from mqctl.fsutil import (
    INPUT_CAPS,
    atomic_write_text,
    check_output_file,
    file_bytes,
    load_json,
    local_path_error,
    overwrite_error,
    read_text_capped,
)
from mqctl.models import MessageQueue
from mqctl.reset.types import MAX_OFFSET, PLAN_SCHEMA, Plan, Target
from mqctl.timeparse import MAX_DIGITS, format_ms

ROLLBACK_SCHEMA = "mqctl.rollback/1"
# a queue the group had no committed offset for: rollback files write "offset": "none"
# (files of earlier versions hold null, which reads the same); plan files show it as "none"
NO_OFFSET = "none"
PLAN_COLUMNS = ["group", "topic", "broker", "queue_id", "current", "target", "min", "max",
                "target_time"]
PLAN_HINT = ("a plan file is what --export writes: CSV columns group,topic,broker,queue_id,"
             "target (others ignored), or its JSON form")
ROLLBACK_HINT = ("pass a file written by `mqctl offsets reset --execute` (see --rollback-file), "
                 "or a NAME that `mqctl offsets rollbacks` lists")


def _write(path: str | Path, text: str, what: str, mode: int | None = None) -> None:
    try:
        atomic_write_text(path, text, mode=mode)
    except OSError as exc:  # (a device or FIFO there too: fsutil refuses to replace it)
        raise local_path_error(exc, path, what) from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: ``{"target": 35400, "target": 1}`` is
    refused, never read as "the last one wins" (as a duplicate CSV column is refused)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise UsageError(f"key {json.dumps(k)} appears twice in one object",
                             hint="keep one of them: a key appears once in an object, as "
                                  "mqctl writes these files")
        out[k] = v
    return out


def _json(text: str, what: str, invalid: str = "is not valid JSON") -> Any:
    """:func:`mqctl.fsutil.load_json` (every failure a usage error: a nesting too deep for
    the parser, an integer of thousands of digits) that also refuses a key given twice in one
    object."""
    try:
        return load_json(text, what, pairs=_unique_keys)
    except UsageError as exc:
        if exc.message.startswith(f"{what} is not valid JSON: "):
            exc.message = f"{what} {invalid}: " + exc.message[len(f"{what} is not valid JSON: "):]
            exc.args = (exc.message,)
        raise


def _schema(doc: dict[str, Any], known: str, what: str, required: bool) -> None:
    """Refuse a ``schema`` this mqctl does not read (``mqctl.rollback/2``: a newer format
    whose fields may mean something else); a plan may have none (written by hand)."""
    got = doc.get("schema")
    if got == known or (got is None and not required):
        return
    family = known.rsplit("/", 1)[0]
    if isinstance(got, str) and got.startswith(family + "/"):
        raise UsageError(f"{what} has schema {got}: this mqctl reads {known} only",
                         hint="written by another mqctl version: use that version, or "
                              "write the file again with this one")
    raise UsageError(f"{what} is not an mqctl {family.split('.', 1)[1]} file (schema "
                     f"{known}, got {_got(got, json_text=True)})")


def _got(v: Any, *, json_text: bool = False) -> str:
    """What a file held, for an error: as JSON (``["broker-a"]``, ``"1"`` with
    ``json_text``), a CSV cell as it is; never a Python repr; ``missing`` when absent."""
    if v is None:
        return "missing"
    text = v if isinstance(v, str) and not json_text else json.dumps(v, default=str)
    return f"got {text[:60] + '...' if len(text) > 60 else text}"


def _whole(v: Any, what: str) -> int:
    """A whole number from a plan row (CSV text or JSON number), else an error naming the
    field: ``row 1: target must be a whole number (got ten)``."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and _INT.fullmatch(v.strip()):
        if len(v.strip().lstrip("+-")) > MAX_DIGITS:
            raise UsageError(f"{what}: a number of {len(v.strip()):,} digits: mqctl reads "
                             f"integers of at most {MAX_DIGITS} digits")
        return int(v.strip())
    ascii_only = " (only ASCII digits 0-9 are read)" if isinstance(v, str) and any(
        c.isdigit() and not c.isascii() for c in v) else ""
    raise UsageError(f"{what} must be a whole number ({_got(v)}){ascii_only}")


# a whole number in a plan file's cell: ASCII digits (int() also takes '٣')
_INT = re.compile(r"[+-]?[0-9]+")


def _offset(v: Any) -> int:
    """An offset from a file: a non-negative integer up to Long.MAX_VALUE (no bool/float),
    in ASCII digits."""
    if isinstance(v, bool | float):
        raise ValueError
    if isinstance(v, str) and not (_INT.fullmatch(v.strip()) and len(v.strip()) <= 20):
        raise ValueError
    n = int(str(v).strip())
    if n < 0 or n > MAX_OFFSET:
        raise ValueError
    return n


def _csv_rows(text: str, path: str) -> tuple[list[str], list[dict[str, str]]]:
    """CSV rows as dicts; a duplicate column or a row with the wrong number of fields (a cut
    last line, a stray comma) is refused, never read as "the last one wins" or a short row."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    if not rows:
        raise UsageError(f"plan file {path} has no rows")
    header = [c.strip() for c in rows[0]]
    seen: set[str] = set()
    for c in header:
        if c in seen:
            raise UsageError(f"plan file {path}: column {c!r} appears twice",
                             hint="keep one column of each name (as --export writes them)")
        seen.add(c)
    out: list[dict[str, str]] = []
    for i, r in enumerate(rows[1:], 1):
        if len(r) != len(header):
            raise UsageError(f"plan file {path}: row {i} has {len(r)} field(s), the header "
                             f"has {len(header)}: a cut or shifted row is not applied",
                             hint="fix or remove the row (re-export the plan if it was cut)")
        out.append({k: v.strip() for k, v in zip(header, r, strict=True)})
    return header, out


# ------------------------------------------------------------------------------ plan files

def export_format(path: str, *, force: bool | None = None) -> str:
    """``csv`` or ``json`` from the file name; anything else is a usage error, as is a path
    that holds something other than a regular file (checked before any network I/O) and,
    unless ``force`` (None: not checked), a file that is not a plan mqctl wrote
    (:func:`plan_file_is_own`)."""
    ext = Path(path).suffix.lower()
    if ext in (".csv", ".json"):
        check_output_file(path, "plan file")
        if force is not None:
            err = overwrite_error(path, "plan file", own=plan_file_is_own, force=force,
                                  why="a CSV whose first line is its header "
                                  f"'{','.join(PLAN_COLUMNS)}', or JSON with \"schema\": "
                                  f"\"{PLAN_SCHEMA}\"")
            if err is not None:
                raise err
        return ext[1:]
    raise UsageError(f"--export {path}: the file name must end in .csv or .json",
                     hint="e.g. --export plan.csv (edit it, then --from-file plan.csv)")


def plan_file_is_own(path: Path) -> bool:
    """A plan file mqctl wrote (``--export`` replaces it without ``--force``): a CSV whose
    first line is the header :func:`export_plan` writes, or JSON naming the plan schema at
    its start; or an empty file."""
    head = (",".join(PLAN_COLUMNS) + "\n").encode()
    start = file_bytes(path, 4096)
    if start is None:
        return False
    return (not start or start.startswith(head)
            or (start.lstrip().startswith(b"{") and
                f'"schema": "{PLAN_SCHEMA}"'.encode() in start))


def export_plan(plan: Plan, path: str) -> str:
    """Write the plan as CSV or JSON (by extension); returns the format written."""
    fmt = export_format(path)
    rows = [{"group": plan.group, "topic": plan.topic, "broker": q.mq.broker_name,
             "queue_id": q.mq.queue_id,
             "current": NO_OFFSET if q.current is None else q.current, "target": q.target,
             "min": q.min_offset, "max": q.max_offset, "target_time": q.target_time}
            for q in plan.queues]
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=PLAN_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if v is None else v for k, v in r.items()})
        _write(path, buf.getvalue(), "plan file")
    else:
        _write(path, json.dumps({"schema": PLAN_SCHEMA, "group": plan.group,
                                 "topic": plan.topic, "target": plan.target.describe(),
                                 "created": format_ms(plan.created_ms),
                                 "queues": rows}, indent=2) + "\n", "plan file")
    return fmt


def read_plan_file(path: str, group: str, topic: str) -> Target:
    """Read an edited plan (CSV or JSON) into a per-queue target; validates everything."""
    try:
        return _read_plan_file(path, group, topic)
    except UsageError as exc:
        exc.hint = exc.hint or PLAN_HINT
        raise


def _read_plan_file(path: str, group: str, topic: str) -> Target:
    try:
        text = read_text_capped(path, "plan file", encoding="utf-8-sig")
    except FileNotFoundError:
        raise UsageError(f"plan file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read plan file {path}: {exc}") from None
    rows: list[Any]
    if text.lstrip().startswith(("{", "[")):
        doc = _json(text, f"plan file {path}")
        if not isinstance(doc, dict) or not isinstance(doc.get("queues"), list):
            raise UsageError(f"plan file {path} has no 'queues' list")
        _schema(doc, PLAN_SCHEMA, f"plan file {path}", required=False)
        rows = [dict(r, group=r.get("group", doc.get("group")),
                     topic=r.get("topic", doc.get("topic"))) if isinstance(r, dict) else r
                for r in doc["queues"]]
    else:
        header, rows = _csv_rows(text, path)
        have = set(header)
        need = {"broker", "target"}
        if not need <= have or not ({"queue_id", "queue"} & have):
            missing = (need | ({"queue_id"} if not {"queue_id", "queue"} & have else set())) \
                - have
            raise UsageError(f"plan file {path}: missing column(s) "
                             f"{', '.join(sorted(missing))}",
                             hint="columns: group,topic,broker,queue_id,target (others ignored)")
        if not rows:
            raise UsageError(f"plan file {path} has no rows")
    if not rows:
        raise UsageError(f"plan file {path} has no rows")
    plan: dict[MessageQueue, int] = {}
    expected: dict[MessageQueue, int | None] = {}
    for i, r in enumerate(rows, 1):
        if not isinstance(r, dict):
            raise UsageError(f"plan file {path}: row {i} is not an object")
        if r.get("group") not in (None, "", group):
            raise UsageError(f"plan file {path}: row {i} is for group {r.get('group')!r}, "
                             f"not {group!r}")
        if r.get("topic") not in (None, "", topic):
            raise UsageError(f"plan file {path}: row {i} is for topic {r.get('topic')!r}, "
                             f"not {topic!r}")
        b = r.get("broker")
        if b is not None and not isinstance(b, str):
            raise UsageError(f"plan file {path}: row {i}: broker must be a broker name "
                             f"({_got(b)})")
        broker = b or ""
        q = r.get("queue_id", r.get("queue"))
        t = r.get("target")
        qid = _whole(q, f"plan file {path}: row {i}: queue_id")
        tgt = _whole(t, f"plan file {path}: row {i}: target")
        if tgt > MAX_OFFSET:
            raise UsageError(f"plan file {path}: row {i}: target {tgt} is beyond {MAX_OFFSET} "
                             "(the largest offset)")
        cur = r.get("current")
        if not broker or qid < 0 or tgt < 0:
            raise UsageError(f"plan file {path}: row {i}: needs a broker, a queue_id >= 0 and a "
                             "target >= 0")
        mq = MessageQueue(topic, broker, qid)
        if mq in plan:
            raise UsageError(f"plan file {path}: {mq.short} appears twice")
        plan[mq] = tgt
        if cur == NO_OFFSET or (cur is None and "current" in r):
            expected[mq] = None
        elif cur not in (None, ""):  # no CURRENT column (or empty): nothing to check against
            try:
                expected[mq] = _offset(cur)
            except (TypeError, ValueError):
                raise UsageError(f"plan file {path}: row {i}: current must be an offset or "
                                 f"{NO_OFFSET} ({_got(cur)})") from None
    return Target("plan", text=path, plan=plan, expected=expected)


# ------------------------------------------------------------------------------ rollback

def rollback_dir() -> Path:
    """The default directory of rollback files: ``$XDG_STATE_HOME/mqctl/rollback``, else
    ``~/.local/state/mqctl/rollback``."""
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / \
        "mqctl" / "rollback"


def rollback_path(group: str, topic: str, ts: int, base: str | None = None) -> Path:
    """``~/.local/state/mqctl/rollback/<group>-<topic>-<UTC time>.json`` (XDG_STATE_HOME)."""
    root = Path(base) if base else rollback_dir()
    stamp = format_ms(ts).replace(":", "").replace("-", "")
    safe = "".join(c if c.isalnum() or c in "-_%" else "_" for c in f"{group}-{topic}")
    return root / f"{safe}-{stamp}.json"


def free_path(path: Path, what: str = "rollback file") -> Path:
    """``path`` if it does not exist, else ``name.2.json``, ``name.3.json``, ...: a rollback
    file from an earlier run (which may hold the only record of the original offsets) is never
    overwritten. A path that holds no regular file (``/dev/null``, a FIFO, a directory) is
    refused (exit 2), never turned into ``/dev/null.2``."""
    check_output_file(path, what)
    if not path.exists():
        return path
    n = 2
    while True:
        cand = path.with_name(f"{path.stem}.{n}{path.suffix}")
        if not cand.exists():
            return cand
        n += 1


def write_rollback(plan: Plan, path: Path) -> None:
    """Every planned queue's offset before the change (mode 0600, atomic); ``"none"`` for a
    queue without one, which a rollback leaves alone."""
    doc = {"schema": ROLLBACK_SCHEMA, "group": plan.group, "topic": plan.topic,
           "namesrv": plan.namesrv, "created_ts": plan.created_ms,
           "created": format_ms(plan.created_ms), "reason": plan.target.describe(),
           # a rollback's own rollback file names the file it restores: `offsets rollbacks`
           # shows that file as rolled back
           **({"rollback_of": str(Path(plan.target.text).resolve())}
              if plan.target.kind == "rollback" else {}),
           "queues": [{"broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
                       "offset": NO_OFFSET if q.current is None else q.current,
                       "reset_to": q.target} for q in plan.queues]}
    _write(path, json.dumps(doc, indent=2) + "\n", "rollback file", mode=0o600)


def read_rollback(path: str, namesrv: str | None = None
                  ) -> tuple[str, str, Target, list[str]]:
    """(group, topic, per-queue target, notes) from a rollback file; a note when it was
    written against another name server."""
    try:
        return _read_rollback(path, namesrv)
    except UsageError as exc:
        exc.hint = exc.hint or ROLLBACK_HINT
        raise


def _read_rollback(path: str, namesrv: str | None) -> tuple[str, str, Target, list[str]]:
    try:
        text = read_text_capped(path, "rollback file")
    except FileNotFoundError:
        raise UsageError(f"rollback file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"rollback file {path} cannot be read: {exc}") from None
    doc = _json(text, f"rollback file {path}", "cannot be read: it is not valid JSON")
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str) or \
            not doc["schema"].startswith("mqctl.rollback/"):
        raise UsageError(f"{path} is not an mqctl rollback file (schema {ROLLBACK_SCHEMA})")
    _schema(doc, ROLLBACK_SCHEMA, f"rollback file {path}", required=True)
    group, topic = doc.get("group"), doc.get("topic")
    if not isinstance(group, str) or not isinstance(topic, str) or not group or not topic:
        raise UsageError(f"rollback file {path} has no group/topic")
    entries = doc.get("queues")
    if not isinstance(entries, list):
        raise UsageError(f"rollback file {path} has no 'queues' list")
    plan: dict[MessageQueue, int] = {}
    expected: dict[MessageQueue, int | None] = {}
    untouched: dict[MessageQueue, int | None] = {}
    notes: list[str] = []
    for i, q in enumerate(entries, 1):
        where = f"rollback file {path}: entry {i}"
        if not isinstance(q, dict):
            raise UsageError(f"{where} is not an object ({_got(q, json_text=True)})")
        broker = q.get("broker")
        if not isinstance(broker, str) or not broker:
            raise UsageError(f"{where}: broker must be a broker name "
                             f"({_got(broker, json_text=True)})")
        qid = q.get("queue_id")
        if isinstance(qid, bool) or not isinstance(qid, int) or not 0 <= qid <= 65535:
            raise UsageError(f"{where}: queue_id must be a whole number 0..65535 "
                             f"({_got(qid, json_text=True)})")
        mq = MessageQueue(topic, broker, qid)
        off = q.get("offset")
        if off == NO_OFFSET:
            off = None
        if off is not None and (isinstance(off, bool) or not isinstance(off, int)
                                or not 0 <= off <= MAX_OFFSET):
            raise UsageError(f"{where}: offset must be an offset 0..{MAX_OFFSET} or "
                             f"{NO_OFFSET} ({_got(off, json_text=True)})")
        # what the reset wrote (files of earlier versions may lack it: not checked)
        try:
            wrote = None if q.get("reset_to") is None else _offset(q["reset_to"])
        except (TypeError, ValueError):
            raise UsageError(f"{where}: reset_to must be an offset 0..{MAX_OFFSET} "
                             f"({_got(q.get('reset_to'), json_text=True)})") from None
        if mq in plan or mq in untouched:
            raise UsageError(f"rollback file {path}: {mq.short} appears twice")
        if wrote is not None and off is not None:
            expected[mq] = wrote
        if off is None:
            untouched[mq] = wrote
            notes.append(f"{mq.short} had no committed offset before: left as is (it keeps "
                         "the offset the reset wrote)")
            continue
        plan[mq] = int(off)
    if not plan and not untouched:
        raise UsageError(f"rollback file {path} has no queues")
    elsewhere: list[str] = []
    saved_ns = doc.get("namesrv")
    if namesrv and isinstance(saved_ns, str) and saved_ns and saved_ns != namesrv:
        notes.append(f"warning: {path} was written against name server {saved_ns}; this run "
                     f"uses {namesrv}")
        elsewhere.append(f"it was written against name server {saved_ns}")
    created = doc.get("created")
    if isinstance(created, str) and created:
        notes.append(f"restores the offsets saved at {created}, before the reset "
                     f"'{doc.get('reason') or '?'}'")
    return group, topic, Target("rollback", text=path, plan=plan, expected=expected,
                                elsewhere=tuple(elsewhere), untouched=untouched), notes


# ------------------------------------------------------------------------------ listing

def find_rollback(name: str) -> str:
    """``offsets rollback NAME``: an existing path as given; else a name from ``offsets
    rollbacks`` (with or without ``.json``) in the default directory. Unknown names stay as
    given (the reader then says the file is not found)."""
    if os.path.lexists(name) or "/" in name or os.sep in name:
        return name
    root = rollback_dir()
    for cand in (root / name, root / f"{name}.json"):
        if os.path.isfile(cand):  # (never raises: a name too long is not found)
            return str(cand)
    return name


@dataclass(slots=True)
class RollbackInfo:
    """One file of the rollback directory, as ``offsets rollbacks`` lists it."""

    path: Path
    group: str | None = None
    topic: str | None = None
    created_ts: int | None = None
    reason: str | None = None
    namesrv: str | None = None
    queues: int | None = None  # queues with a saved offset (what a rollback restores)
    offsets: dict[MessageQueue, int] = field(default_factory=dict)  # saved, per queue
    reset_to: dict[MessageQueue, int] = field(default_factory=dict)  # what the reset wrote
    rollback_of: str | None = None  # this file was written by a rollback of that file
    rolled_back_by: list[RollbackInfo] = field(default_factory=list)
    later: list[RollbackInfo] = field(default_factory=list)  # later changes, same group/topic
    remaining: Path | None = None  # <name>.remaining.csv: the run was interrupted
    error: str | None = None  # not a readable rollback file

    @property
    def name(self) -> str:
        return self.path.name


def _info(path: Path) -> RollbackInfo:
    info = RollbackInfo(path)
    try:
        if path.stat().st_size > MAX_LISTED_BYTES:
            info.error = f"larger than {MAX_LISTED_BYTES // 1_000_000} MB: not read"
            return info
        doc = json.loads(read_text_capped(path, "rollback file"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        info.error = f"cannot be read: {getattr(exc, 'strerror', None) or exc}"
        return info
    except UsageError as exc:  # (it became a FIFO or grew since it was listed)
        info.error = exc.message
        return info
    if not isinstance(doc, dict) or doc.get("schema") != ROLLBACK_SCHEMA:
        info.error = f"not an mqctl rollback file (schema {ROLLBACK_SCHEMA})"
        return info
    group, topic = doc.get("group"), doc.get("topic")
    info.group = group if isinstance(group, str) else None
    info.topic = topic if isinstance(topic, str) else None
    ts = doc.get("created_ts")
    info.created_ts = ts if isinstance(ts, int) and not isinstance(ts, bool) else None
    info.reason = str(doc["reason"]) if doc.get("reason") is not None else None
    info.namesrv = str(doc["namesrv"]) if doc.get("namesrv") else None
    of = doc.get("rollback_of")
    info.rollback_of = of if isinstance(of, str) and of else None
    if info.rollback_of is None and isinstance(info.reason, str) and \
            info.reason.startswith("from rollback file "):
        # files written before "rollback_of": the reason names the file as it was given
        info.rollback_of = info.reason[len("from rollback file "):]
    entries = doc.get("queues")
    if not isinstance(entries, list) or info.group is None or info.topic is None:
        info.error = "malformed: no group, topic or queues"
        return info
    for q in entries:
        try:
            mq = MessageQueue(info.topic, str(q["broker"]), int(q["queue_id"]))
            off = q.get("offset")
            if off not in (None, NO_OFFSET):
                info.offsets[mq] = _offset(off)
            if q.get("reset_to") is not None:
                info.reset_to[mq] = _offset(q["reset_to"])
        except (KeyError, TypeError, ValueError, AttributeError):
            info.error = "malformed queue entry"
            return info
    info.queues = len(info.offsets)
    return info


# a rollback file of 65,536 queues x 2 brokers is about 10 MB; anything far larger is not one
MAX_LISTED_BYTES = INPUT_CAPS["rollback file"]


def _same_file(ref: str, target: Path) -> bool:
    """Does ``ref`` (a "rollback_of" path, or the path a user gave in an older file's reason)
    name ``target``? Resolved paths compare exactly; a relative one from an older file matches
    by name (it was resolved against a working directory not recorded)."""
    p = Path(ref)
    if p.is_absolute():
        return p == target.resolve()
    return p.name == target.name


def list_rollbacks(root: Path | None = None) -> list[RollbackInfo]:
    """Every ``*.json`` of the rollback directory, oldest first (files without a time last,
    by name), each with the rollbacks that restored it and the later changes of its group and
    topic. Read-only; a missing directory is an empty list."""
    root = root or rollback_dir()
    try:
        paths = sorted(p for p in root.iterdir() if p.suffix == ".json" and p.is_file())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise UsageError(f"cannot list the rollback directory {root}: "
                         f"{exc.strerror or exc}") from None
    infos = [_info(p) for p in paths]
    infos.sort(key=lambda i: (i.created_ts is None, i.created_ts or 0, i.name))
    for info in infos:
        rest = info.path.with_name(f"{info.path.stem}.remaining.csv")
        info.remaining = rest if rest.exists() else None
    for n, a in enumerate(infos):
        if a.error:
            continue
        for b in infos[n + 1:]:
            if b.error or (b.group, b.topic) != (a.group, a.topic):
                continue
            if b.rollback_of and _same_file(b.rollback_of, a.path):
                a.rolled_back_by.append(b)
            else:
                a.later.append(b)
    return infos


def later_changes(path: str) -> list[str]:
    """Names of the later changes of the same group and topic in the rollback file's own
    directory (``offsets rollbacks``' NOTE), oldest first; none when it is not listed there."""
    p = Path(path)
    try:
        infos = list_rollbacks(p.parent)
    except UsageError:
        return []
    me = next((i for i in infos if _same_file(str(i.path.resolve()), p)), None)
    return [b.name for b in me.later] if me is not None else []


def live_state(info: RollbackInfo, current: dict[MessageQueue, int | None]) -> str:
    """Pure: where the group is now, compared with the file (``offsets rollbacks --check``):
    ``at the saved offsets`` (rolled back, or never moved on), ``at the reset's offsets``
    (the reset is in place), or per queue what happened since: the rewind being replayed or
    replayed past the saved offsets, consumed on after a forward move, or elsewhere (another
    change). A queue the brokers did not report is unknown, never a match."""
    mqs = sorted(info.offsets)
    if not mqs:
        return "nothing to compare"
    unknown = [m for m in mqs if current.get(m) is None]
    if unknown:
        return f"unknown ({len(unknown)} of {len(mqs)} queue(s) not read)"
    if all(current[m] == info.offsets[m] for m in mqs):
        return "at the saved offsets"
    if info.reset_to and all(m in info.reset_to and current[m] == info.reset_to[m]
                             for m in mqs):
        return "at the reset's offsets"
    # per queue, the way `offsets rollback` reads it (plan._rollback_drift): a rewind the
    # group is replaying or has replayed past the saved offset, a forward move it consumed on
    # from, or a queue behind what the reset wrote (something else moved it)
    counts = {"saved": 0, "reset": 0, "replaying": 0, "replayed": 0, "consumed": 0, "other": 0}
    done = total = 0
    for m in mqs:
        cur, saved, wrote = current[m], info.offsets[m], info.reset_to.get(m)
        assert cur is not None
        if cur == saved:
            counts["saved"] += 1
        elif cur == wrote:
            counts["reset"] += 1
        elif wrote is None or saved is None or cur < wrote:
            counts["other"] += 1
        elif wrote < saved and cur < saved:
            counts["replaying"] += 1
            done, total = done + cur - wrote, total + saved - wrote
        elif wrote < saved:
            counts["replayed"] += 1
        else:
            counts["consumed"] += 1
    words = {"saved": "at the saved offsets", "reset": "at the reset's offsets",
             "replaying": f"replaying the rewind ({done} of {total} message(s) replayed)",
             "replayed": "replayed past the saved offsets (a rollback would replay again)",
             "consumed": "consumed on from the reset's offsets",
             "other": "elsewhere (behind the reset's offsets: another change?)"}
    return f"{len(mqs)} queue(s): " + ", ".join(f"{n} {words[k]}" for k, n in counts.items()
                                               if n)

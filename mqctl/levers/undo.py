"""The files a lever keeps in mqctl's state directory: the undo file of a config change
(every master's SubscriptionGroupConfig before it, written atomically before the first
request; ``mqctl group config rollback FILE`` restores it) and the audit record of a pause
(who paused the group, when, with which undo file; removed by a resume)."""

from __future__ import annotations

import getpass
import json
import os
import re
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import UsageError
from mqctl.fsutil import atomic_write_text, check_output_file, local_path_error, read_text_capped
from mqctl.interrupt import state_root
from mqctl.timeparse import format_ms, now_ms
from mqctl.views.paused import AUDIT_SCHEMA, audit_path, pause_record

if TYPE_CHECKING:
    from mqctl.levers.plan import LeverPlan

UNDO_SCHEMA = "mqctl.group-config-undo/1"
UNDO_HINT = "pass a file written by `mqctl group pause/resume` or `mqctl group config set " \
            "--execute` (its path is in their output; they live in <state>/levers/undo)"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_%-]", "_", text)[:80]


def undo_dir() -> Path:
    return state_root() / "levers" / "undo"


def undo_path(plan: LeverPlan) -> Path:
    stamp = format_ms(plan.created_ms).replace(":", "").replace("-", "")
    lever = plan.request.lever.replace(" ", "-")
    return undo_dir() / f"{_safe(plan.group)}-{lever}-{stamp}.json"


def free(path: Path, what: str = "undo file") -> Path:
    """``path``, or the next free ``name.N.json``: an undo file (a journal) is never
    overwritten."""
    check_output_file(path, what)
    n, cand = 2, path
    while cand.exists():
        cand = path.with_name(f"{path.stem}.{n}{path.suffix}")
        n += 1
    return cand


def write_undo(plan: LeverPlan, path: Path) -> None:
    """The configs before the change of every broker the plan sends to (mode 0600, atomic)."""
    doc = {"schema": UNDO_SCHEMA, "lever": plan.request.lever, "group": plan.group,
           "namesrv": plan.namesrv, "created_ts": plan.created_ms,
           "created": format_ms(plan.created_ms), "fields": plan.fields,
           **({"undo_of": plan.request.source} if plan.request.source else {}),
           "brokers": [{"broker": c.broker, "addr": c.addr, "config": c.before}
                       for c in plan.to_send]}
    try:
        atomic_write_text(path, json.dumps(doc, indent=2, sort_keys=True) + "\n", mode=0o600)
    except OSError as exc:
        raise local_path_error(exc, path, "undo file") from None


def read_small(path: str, what: str, cap: str, hint: str) -> str:
    """A lever's small input file (an undo file, a journal): missing or unreadable is a usage
    error naming it, with ``hint``."""
    try:
        return read_text_capped(path, cap)
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}", hint=hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} {path} cannot be read: {exc}", hint=hint) from None


def read_undo(path: str) -> tuple[str, dict[str, dict[str, Any] | None], list[str]]:
    """(group, broker -> saved config or None, notes) of an undo file."""
    text = read_small(path, "undo file", "rollback file", UNDO_HINT)
    try:
        doc = json.loads(text)
    except ValueError:
        raise UsageError(f"undo file {path} is not valid JSON", hint=UNDO_HINT) from None
    if not isinstance(doc, dict) or doc.get("schema") != UNDO_SCHEMA:
        raise UsageError(f"{path} is not an mqctl group config undo file (schema "
                         f"{UNDO_SCHEMA})", hint=UNDO_HINT)
    group, brokers = doc.get("group"), doc.get("brokers")
    if not isinstance(group, str) or not group or not isinstance(brokers, list) or not brokers:
        raise UsageError(f"undo file {path} has no group or no brokers", hint=UNDO_HINT)
    saved: dict[str, dict[str, Any] | None] = {}
    for i, b in enumerate(brokers, 1):
        name = b.get("broker") if isinstance(b, dict) else None
        conf = b.get("config") if isinstance(b, dict) else None
        if not isinstance(name, str) or not name or name in saved or \
                (conf is not None and (not isinstance(conf, dict)
                                       or conf.get("groupName") != group)):
            raise UsageError(f"undo file {path}: entry {i} is not a broker with the config of "
                             f"group {group}", hint=UNDO_HINT)
        saved[name] = conf
    notes = [f"restores the config of {group} saved at {doc.get('created') or '?'}, before "
             f"`{doc.get('lever') or '?'}`"]
    return group, saved, notes


# ------------------------------------------------------------------ the pause audit record

def who() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid()) if hasattr(os, "getuid") else "?"
    return f"{user}@{socket.gethostname()}"


def record_pause(plan: LeverPlan, brokers: list[str], undo: str) -> None:
    doc = {"schema": AUDIT_SCHEMA, "group": plan.group, "namesrv": plan.namesrv,
           "by": who(), "at_ms": now_ms(), "at": format_ms(now_ms()), "brokers": brokers,
           "undo": undo}
    path = audit_path(plan.namesrv, plan.group)
    try:
        atomic_write_text(path, json.dumps(doc, indent=2, sort_keys=True) + "\n", mode=0o600)
    except OSError as exc:
        raise local_path_error(exc, path, "pause record") from None


def clear_pause(namesrv: str, group: str) -> bool:
    try:
        audit_path(namesrv, group).unlink()
        return True
    except FileNotFoundError:
        return False


__all__ = ["AUDIT_SCHEMA", "UNDO_SCHEMA", "audit_path", "clear_pause", "free", "pause_record",
           "read_small", "read_undo", "record_pause", "undo_dir", "undo_path", "who", "write_undo"]

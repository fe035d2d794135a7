"""The journal of ``mqctl group dlq resend --execute``: JSON Lines, one record a line,
appended with one ``write`` on an ``O_APPEND`` descriptor and ``fsync``'d before the next
step, so that after a crash (SIGKILL, power) every line that is there is whole and the last
one may only be cut short (ignored when read).

Line 1 is the header: ``{"schema": "mqctl.dlq-resend-journal/1", "group", "namesrv", "to",
"selection", "created", "created_ts", "messages": [...]}`` (the dead letters selected, in
the order they are sent). Then per message, keyed by the dead letter's offset message id
(``dlq_msg_id``):

* ``{"event": "sending", ...}`` before its SEND_MESSAGE (destination, broker, queue);
* ``{"event": "sent", ...}`` after the answer (new_msg_id, queue, offset, status), or with
  ``"found": true`` when a resumed run found it in the destination (it was sent before a
  crash between the two records);
* ``{"event": "failed", ...}`` when the broker refused it (its remark): it was not stored.

A message with ``sent`` is never sent again; one with ``sending`` and no ``sent`` is looked
for in the destination (:mod:`mqctl.levers.resend`) before anything is decided.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqctl.errors import UsageError
from mqctl.fsutil import fsync_dir, local_path_error
from mqctl.interrupt import state_root
from mqctl.levers.undo import free, read_small
from mqctl.timeparse import format_ms, now_ms

JOURNAL_SCHEMA = "mqctl.dlq-resend-journal/1"
JOURNAL_HINT = ("pass a journal written by `mqctl group dlq resend --execute` (its path is in "
                "its output; by default under <state>/levers/resend)")


def journal_path(group: str, created_ms: int) -> Path:
    """``<state>/levers/resend/<group>-<time>.jsonl`` (beside the levers' undo files)."""
    stamp = format_ms(created_ms).replace(":", "").replace("-", "")
    safe = "".join(c if c.isalnum() or c in "-_%" else "_" for c in group)[:80]
    return state_root() / "levers" / "resend" / f"{safe}-{stamp}.jsonl"


def free_journal(path: Path) -> Path:
    """``path``, or the next free ``name.N.jsonl``: a journal is never overwritten."""
    return free(path, "journal file")


class Journal:
    """An open journal: :meth:`append` writes one record and syncs it to disk."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self.fd = path, fd

    @classmethod
    def create(cls, path: Path, header: dict[str, Any]) -> Journal:
        """A new journal holding ``header`` (mode 0600; refused if the file exists)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        except OSError as exc:
            raise local_path_error(exc, path, "journal file") from None
        j = cls(path, fd)
        j.append({"schema": JOURNAL_SCHEMA, **header}, stamp=False)
        fsync_dir(path.parent)
        return j

    @classmethod
    def reopen(cls, path: Path) -> Journal:
        try:
            return cls(path, os.open(path, os.O_WRONLY | os.O_APPEND))
        except OSError as exc:
            raise local_path_error(exc, path, "journal file") from None

    def append(self, record: dict[str, Any], *, stamp: bool = True) -> None:
        if stamp:
            t = now_ms()
            record = {**record, "at_ts": t, "at": format_ms(t)}
        line = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()
        try:
            os.write(self.fd, line)
            os.fsync(self.fd)
        except OSError as exc:
            raise local_path_error(exc, self.path, "journal file") from None

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


@dataclass
class JournalState:
    """What a journal says: its header, and per dead letter (``dlq_msg_id``) its last
    ``sending`` record, its ``sent`` record and its last ``failed`` record."""

    path: str
    header: dict[str, Any]
    sending: dict[str, dict[str, Any]] = field(default_factory=dict)
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: dict[str, dict[str, Any]] = field(default_factory=dict)
    cut: bool = False  # the last line was cut short (the run was killed while writing it)

    @property
    def group(self) -> str:
        return str(self.header.get("group") or "")

    def pending(self, key: str) -> dict[str, Any] | None:
        """The ``sending`` record of a message with no ``sent`` after it (in doubt)."""
        return None if key in self.sent else self.sending.get(key)


def read_journal(path: str) -> JournalState:
    text = read_small(path, "journal", "journal file", JOURNAL_HINT)
    lines = text.split("\n")
    cut = bool(lines and lines[-1].strip())  # no newline at the end: cut short
    whole = lines[:-1]
    try:
        header = json.loads(whole[0]) if whole else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("schema") != JOURNAL_SCHEMA:
        raise UsageError(f"{path} is not an mqctl resend journal (schema {JOURNAL_SCHEMA})",
                         hint=JOURNAL_HINT)
    if not isinstance(header.get("group"), str) or not isinstance(header.get("messages"), list):
        raise UsageError(f"journal {path} has no group or no messages", hint=JOURNAL_HINT)
    st = JournalState(path, header, cut=cut)
    for n, line in enumerate(whole[1:], 2):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise UsageError(f"journal {path}: line {n} is not JSON", hint=JOURNAL_HINT) from None
        key = rec.get("dlq_msg_id") if isinstance(rec, dict) else None
        event = rec.get("event") if isinstance(rec, dict) else None
        if not isinstance(key, str) or event not in ("sending", "sent", "failed"):
            raise UsageError(f"journal {path}: line {n} is not a resend record",
                             hint=JOURNAL_HINT)
        getattr(st, event)[key] = rec
    return st


__all__ = ["JOURNAL_SCHEMA", "Journal", "JournalState", "free_journal", "journal_path",
           "read_journal"]

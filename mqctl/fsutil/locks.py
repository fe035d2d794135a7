"""Lock files in a directory: one holder at a time (``fcntl``), and who holds it, named in the
message of whoever waits."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mqctl.errors import RefusedError
from mqctl.fsutil.files import local_path_error, open_regular, write_target
from mqctl.timeparse import format_ms


@contextlib.contextmanager
def dir_lock(directory: str | os.PathLike[str], name: str, busy: str, hint: str
             ) -> Iterator[None]:
    """An exclusive, non-blocking lock on ``DIR/name`` (``flock``; released when the process
    ends, however it ends): two overlapping cron runs that would write ``DIR`` at once. Held:
    :class:`~mqctl.errors.RefusedError` (exit 6) ``busy``, with ``hint``. Creates ``DIR``."""
    with owned_lock(directory, name, busy, hint):
        yield


@dataclass(frozen=True, slots=True)
class LockHolder:
    """Who holds (or held) an :func:`owned_lock`: recorded in the lock file while it runs."""

    pid: int
    host: str
    started_ms: int
    what: str

    def describe(self) -> str:
        here = "" if self.host == socket.gethostname() else f" on {self.host}"
        return (f"pid {self.pid}{here}, started {format_ms(self.started_ms) or '?'}"
                + (f" ({self.what})" if self.what else ""))

    def alive(self) -> bool | None:
        """Is its pid running (None: another host, or not known)?"""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except OSError:  # EPERM: a process of another user has that pid
            return True
        return True


def _holder(text: str) -> LockHolder | None:
    try:
        d = json.loads(text)
        return LockHolder(int(d["pid"]), str(d.get("host") or ""), int(d["started_ts"]),
                          str(d.get("what") or ""))
    except (ValueError, TypeError, KeyError):
        return None


@contextlib.contextmanager
def owned_lock(directory: str | os.PathLike[str], name: str, busy: str, hint: str, *,
               what: str | None = None, where: str = "to the output directory"
               ) -> Iterator[LockHolder | None]:
    """:func:`dir_lock`, and with ``what`` (this run, for people) the lock file also records
    who holds it (pid, host, start time, ``what``) while it is held: a refusal names the
    holder, and a record left by a holder that ended without releasing it (killed: the kernel
    drops a ``flock`` with the process, the file keeps the record) is taken over and yielded,
    so the caller can say so. Yields None otherwise. Released cleanly, the file is removed
    (a run that opened it meanwhile sees it is gone and opens the new one). ``where`` names
    the directory in an error (it cannot be created or written)."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise local_path_error(exc, d, where) from None
    while True:
        try:
            fh = open_regular(write_target(d / name), "a+", encoding="utf-8")
        except OSError as exc:  # a read-only directory or mount, a full disk, a device
            raise local_path_error(exc, d, where) from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fh) if what is not None else None
            fh.close()
            raise RefusedError(f"{busy}: {holder.describe()}" if holder else busy,
                               hint=hint) from None
        except BaseException:
            fh.close()
            raise
        if what is None or _same_file(fh, d / name):
            break
        fh.close()  # removed by the holder that released it meanwhile: lock the new one
    try:
        if what is None:
            yield None
            return
        stale = _read_holder(fh)
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "started_ts": int(time.time() * 1000), "what": what}) + "\n")
        fh.flush()
        try:
            yield stale
        finally:  # released (also by an error or an interrupt): no record left
            with contextlib.suppress(OSError):
                os.unlink(d / name)
    finally:
        fh.close()


def _same_file(fh: IO[str], path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fh.fileno()), os.stat(path))
    except OSError:
        return False


def _read_holder(fh: IO[str]) -> LockHolder | None:
    try:
        fh.seek(0)
        return _holder(fh.read(4096))
    except (OSError, UnicodeDecodeError):
        return None

"""Atomic file writes: a reader (or a killed run) never sees half a file."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mqctl.errors import UsageError


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int | None = None,
                  encoding: str = "utf-8") -> Iterator[IO[str]]:
    """Write to a hidden temporary file in the same directory, fsync, then rename over
    ``path``. On any exception the temporary file is removed and ``path`` is untouched.

    ``mode`` defaults to what ``open()`` would create (0666 minus the umask), not mkstemp's
    0600: node_exporter's textfile collector and report readers usually run as another user.

    Errors stay ``OSError`` (callers name them with :func:`local_path_error`); directories
    this call created are removed again when the write fails (a full disk leaves nothing)."""
    target = Path(path)
    created = _missing_parents(target.parent)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except BaseException:
        _remove_empty(created)
        raise
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, default_mode() if mode is None else mode)
        os.replace(tmp, target)
        _fsync_dir(target.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _remove_empty(created)
        raise


def _missing_parents(d: Path) -> list[Path]:
    """``d`` and its ancestors that do not exist yet, deepest first."""
    out: list[Path] = []
    while not d.exists() and d != d.parent:
        out.append(d)
        d = d.parent
    return out


def _remove_empty(dirs: list[Path]) -> None:
    for d in dirs:  # deepest first; stops at the first that is not empty
        try:
            d.rmdir()
        except OSError:
            return


# why a local path cannot be written, and what to do (exit 2: a bad local path)
_PATH_HINTS = {
    errno.ENOSPC: "free space on that file system or write elsewhere; nothing was left "
                  "half written",
    errno.EDQUOT: "the disk quota is used up: free space or write elsewhere",
    errno.EROFS: "the file system is mounted read-only: choose a writable directory",
    errno.EACCES: "this user may not write there: choose a writable directory or fix its "
                  "permissions",
    errno.EPERM: "this user may not write there: choose a writable directory or fix its "
                 "permissions",
    errno.ENOTDIR: "a part of the path is a regular file, not a directory: give a "
                   "directory path",
    errno.EEXIST: "a regular file has that name: give a directory path",
    errno.EISDIR: "that path is a directory: give a file path",
    errno.ENAMETOOLONG: "use a shorter path",
}


def local_path_error(exc: OSError, path: str | os.PathLike[str], what: str) -> UsageError:
    """A one-line usage error (exit 2) with a hint for an ``OSError`` from writing ``what``
    at ``path`` (full disk, read-only, a file where a directory is expected, ...)."""
    reason = exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    if exc.errno == errno.EEXIST and Path(path).exists() and not Path(path).is_dir():
        reason = "it is a regular file, not a directory"
    return UsageError(f"cannot write {what} {path}: {reason}{where}",
                      hint=_PATH_HINTS.get(exc.errno or 0, "check the path and its file system"))


@functools.cache
def default_mode() -> int:
    """0666 minus the process umask (read without changing it where Linux allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int | None = None) -> None:
    with atomic_writer(path, mode=mode) as fh:
        fh.write(text)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# free space below which an output location counts as full (a report's summaries, HTML and
# Prometheus file alone need about this much; Parquet needs more, but that fails cleanly)
MIN_FREE_BYTES = 1 << 20


def output_location_error(path: str | os.PathLike[str], what: str, *,
                          directory: bool) -> UsageError | None:
    """Why ``path`` cannot take ``what`` (a directory when ``directory``, else a file), checked
    BEFORE a long job starts, or None when it looks writable.

    Checks, in order: a regular file where a directory is wanted (or a directory where a file
    is); a part of the path that is a regular file; for a file, a missing parent directory (it
    is never created: a typo in a collector's directory must not send output nowhere); that
    this user can create a file in the deepest existing directory (read-only file system,
    permissions: probed with a temporary file that is removed again); and free space
    (``statvfs``; less than :data:`MIN_FREE_BYTES` counts as a full disk, ENOSPC)."""
    target = Path(path)
    if directory and target.exists() and not target.is_dir():
        return local_path_error(OSError(errno.EEXIST, os.strerror(errno.EEXIST), str(target)),
                                path, what)
    if not directory and target.is_dir():
        return local_path_error(OSError(errno.EISDIR, os.strerror(errno.EISDIR), str(target)),
                                path, what)
    probe_dir = target if directory else target.parent
    if not directory and not probe_dir.exists():
        parent_file = next((p for p in [probe_dir, *probe_dir.parents]
                            if p.exists() and not p.is_dir()), None)
        if parent_file is None:
            return UsageError(f"cannot write {what} {path}: its directory {probe_dir} does not "
                              "exist", hint="create it first, or check the path for a typo "
                                            "(mqctl does not create it)")
    while not probe_dir.exists() and probe_dir != probe_dir.parent:
        probe_dir = probe_dir.parent
    if not probe_dir.is_dir():
        return local_path_error(OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR),
                                        str(probe_dir)), path, what)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".mqctl-probe.", suffix=".tmp", dir=probe_dir)
        os.close(fd)
        os.unlink(tmp)
        st = os.statvfs(probe_dir)
    except OSError as exc:  # name the directory, not the probe's random name
        return local_path_error(OSError(exc.errno, exc.strerror, str(probe_dir)), path, what)
    if st.f_bavail * st.f_frsize < MIN_FREE_BYTES:
        return local_path_error(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(probe_dir)),
                                path, what)
    return None


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
        from mqctl.timeparse import format_ms

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
    import json

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
    import fcntl
    import json
    import time

    from mqctl.errors import RefusedError

    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise local_path_error(exc, d, where) from None
    while True:
        try:
            fh = open(d / name, "a+", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:  # a read-only directory or mount, a full disk
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

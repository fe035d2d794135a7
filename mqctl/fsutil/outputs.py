"""Writes: atomic (a reader, or a killed run, never sees half a file), never through a link as
the final component, never over what is not a regular file, and over a file that is not
mqctl's own only with ``--force`` (:func:`overwrite_error`); where an output may go at all
(:func:`output_location_error`)."""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from mqctl.errors import UsageError
from mqctl.fsutil.files import (
    NotRegularFileError,
    local_path_error,
    open_regular,
    shown_path,
    write_target,
)
from mqctl.fsutil.paths import PathRule, path_error


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int | None = None,
                  encoding: str = "utf-8") -> Iterator[IO[str]]:
    """Write to a hidden temporary file in the same directory, fsync, then rename over
    ``path``. On any exception the temporary file is removed and ``path`` is untouched.

    ``mode`` defaults to what ``open()`` would create (0666 minus the umask), not mkstemp's
    0600: node_exporter's textfile collector and report readers usually run as another user.

    A symbolic link at ``path`` is never followed nor replaced, and what is there and is not
    a regular file is never replaced (:class:`NotRegularFileError`); links among the
    directories above it are followed (the temporary file sits in the real directory).

    Errors stay ``OSError`` (callers name them with :func:`local_path_error`); directories
    this call created are removed again when the write fails (a full disk leaves nothing)."""
    target = write_target(path)
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
        fsync_dir(target.parent)
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


def open_append(path: str | os.PathLike[str], what: str) -> IO[str]:
    """A log file opened for appending (created, with its directories, when missing). What is
    there and is not a regular file (a FIFO would block the open, a device swallow the log, a
    symbolic link redirect it) and any other ``OSError`` are a usage error (exit 2)."""
    target = Path(path)
    try:
        target = write_target(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        return open_regular(target, "a", nofollow=True, encoding="utf-8", newline="")
    except OSError as exc:
        raise local_path_error(exc, path, what) from None


def output_file_error(path: str | os.PathLike[str], what: str) -> UsageError | None:
    """Why a file cannot be written at ``path`` (checked before any work starts): what is
    there is not a regular file, is a symbolic link, or the links above it loop or dangle
    (:func:`write_target`). None when it is a regular file or nothing yet; a missing
    directory, a read-only file system or a full disk are :func:`output_location_error`'s or
    the write's to name."""
    try:
        write_target(path)
    except NotRegularFileError as exc:
        return local_path_error(exc, path, what)
    return None


def check_output_file(path: str | os.PathLike[str], what: str) -> None:
    """Raise :func:`output_file_error`'s error, if any (exit 2)."""
    err = output_file_error(path, what)
    if err is not None:
        raise err


# --------------------------------------------------------------------------------------------
# replacing a file that is not mqctl's own

def overwrite_error(path: str | os.PathLike[str], what: str, *, own: Callable[[Path], bool],
                    force: bool, why: str) -> UsageError | None:
    """An existing regular file at ``path`` that is not mqctl's own ``what`` (``own`` says,
    reading at most a bounded part of it) is not replaced without ``--force``: a path mistyped
    or planted (``--export /etc/passwd``) must not lose a file mqctl did not write. ``why``
    says what makes a file mqctl's own (for the hint). None when nothing or mqctl's own file
    is there, or with ``force``."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except (OSError, ValueError):
        return None
    if force or not stat.S_ISREG(st.st_mode) or own(p):
        return None
    return UsageError(f"cannot write {what} {shown_path(path)}: a file that mqctl did not "
                      "write is there", hint=f"mqctl replaces only its own {what} ({why}): "
                      "check the path, move the file away, or give --force to replace it")


def holds_text(path: str | os.PathLike[str], marker: bytes, *, tail: bool = False,
               limit: int = 65536) -> bool:
    """Whether the first (``tail``: last) ``limit`` bytes of the regular file ``path`` hold
    ``marker`` (what makes a file mqctl's own: :func:`overwrite_error`)."""
    data = file_bytes(path, limit, tail=tail)
    return data is not None and marker in data


def file_bytes(path: str | os.PathLike[str], limit: int, *, tail: bool = False
               ) -> bytes | None:
    """The first (``tail``: last) ``limit`` bytes of the regular file ``path``, or None when
    it cannot be read or is not a regular file (never blocks on a FIFO)."""
    try:
        with open_regular(path, "rb") as fh:
            if tail:
                size = os.fstat(fh.fileno()).st_size
                fh.seek(max(0, size - limit))
            data: bytes = fh.read(limit)
            return data
    except OSError:
        return None


def dir_is_own(path: Path, markers: tuple[str, ...]) -> bool:
    """A directory is mqctl's own when it is missing or empty, or holds one of ``markers``
    (paths inside it: the lock file every run of the command leaves, ``.mqctl-lag.lock``)."""
    try:
        with os.scandir(path) as it:
            empty = next(it, None) is None
    except OSError:
        return True  # (missing, or not a readable directory: the other checks name it)
    return empty or any(os.path.lexists(path / m) for m in markers)


def dir_overwrite_error(path: str | os.PathLike[str], what: str, *, markers: tuple[str, ...],
                        force: bool) -> UsageError | None:
    """A directory that holds files but none of mqctl's ``markers`` is not written into
    without ``--force`` (a report run replaces what it writes there: summaries, the page,
    its Parquet datasets)."""
    p = Path(path)
    if force or dir_is_own(p, markers):
        return None
    return UsageError(f"cannot write {what} {shown_path(path)}: it holds files and is not "
                      "mqctl's", hint=f"mqctl writes into an empty or new directory, or one "
                      f"it wrote before (it holds {markers[0]}): give a new directory, or "
                      "--force to write there anyway")


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


def fsync_dir(d: Path) -> None:
    """Sync a directory, so that a file just created in it survives a crash (best effort)."""
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
                          directory: bool, create_parent: bool | None = None
                          ) -> UsageError | None:
    """Why ``path`` cannot take ``what`` (a directory when ``directory``, else a file), checked
    BEFORE a long job starts, or None when it looks writable.

    Checks, in order: :func:`path_error` (its length, what is there, its symlinks, a part of
    the path that is a regular file; for a file, a missing directory, which is never created
    unless ``create_parent``: a typo in a collector's directory must not send output
    nowhere); that this user can create a file in the deepest existing directory (read-only
    file system, permissions: probed with a temporary file that is removed again); and free
    space (``statvfs``; less than :data:`MIN_FREE_BYTES` counts as a full disk, ENOSPC)."""
    rule = PathRule(what, output=True, directory=directory,
                    create_parent=directory if create_parent is None else create_parent)
    err = path_error(str(path), rule)
    if err is not None:
        return err
    target = Path(path) if directory else write_target(path)
    probe_dir = target if directory else target.parent
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

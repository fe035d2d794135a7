"""What every read and write of a user's path starts from (pure of policy): a path as shown in
a message, what is at it (a regular file, a link, a FIFO, a device), an ``OSError`` named as a
usage error with a hint, where a write lands (the final link refused), and opening a regular
file without following a link or blocking on a FIFO."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO, Any

from mqctl.errors import UsageError

# why a local path cannot be written, and what to do (exit 2: a bad local path)
PATH_HINTS = {
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
    at ``path`` (full disk, read-only, a file where a directory is expected, not a regular
    file, a name too long, ...)."""
    reason = exc.strerror or str(exc)
    where = (f" ({shown_path(exc.filename)})" if exc.filename
             and str(exc.filename) != str(path) else "")
    if exc.errno == errno.EEXIST and _isfile(path):
        reason = "it is a regular file, not a directory"
    hint = (exc.hint if isinstance(exc, NotRegularFileError)
            else PATH_HINTS.get(exc.errno or 0, "check the path and its file system"))
    return UsageError(f"cannot write {what} {shown_path(path)}: {reason}{where}", hint=hint)


def _isfile(path: str | os.PathLike[str]) -> bool:
    """``Path.is_file`` that never raises (a name too long, a loop: not a file)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def shown_path(path: str | os.PathLike[str] | bytes) -> str:
    """A path as an error shows it: whole up to 160 characters, else its start and end with
    its length (a 5,000-byte path must not make a 5,000-character error line)."""
    text = os.fsdecode(path) if isinstance(path, bytes) else str(path)
    if len(text) <= 160:
        return text
    return f"{text[:100]}...{text[-40:]} ({len(text.encode('utf-8', 'surrogatepass')):,} bytes)"


# --------------------------------------------------------------------------------------------
# what is at a path

NOT_REGULAR_HINT = ("give the path of a regular file (or of none yet): mqctl replaces a file "
                    "whole and never writes into a device, FIFO, socket or directory")
LINK_HINT = ("give the path the link points to, or remove the link: mqctl never writes "
             "through a symbolic link at the end of a path (one planted there could point at "
             "any file); a link to a directory above the file is fine")


class NotRegularFileError(OSError):
    """What is at an output path is not a regular file (a device, a FIFO, a socket, a
    directory, a symbolic link as its final component), or the symlinks above it loop or
    dangle. ``strerror`` says what it is; ``filename`` the path it concerns; ``hint`` what to
    do."""

    def __init__(self, reason: str, filename: str, code: int = errno.EINVAL,
                 hint: str = NOT_REGULAR_HINT):
        super().__init__(code, reason, filename)
        self.hint = hint


def file_kind(mode: int) -> str:
    """``a directory``, ``a character device``, ... for an ``st_mode`` that is not a regular
    file's."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def link_text(path: str | os.PathLike[str]) -> str:
    try:
        return shown_path(os.readlink(path))
    except OSError:
        return "?"


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` creates or replaces: ``path`` itself, in its directory
    with the symlinks above it followed (a link to a directory is fine). Raises
    :class:`NotRegularFileError` when the final component is a symbolic link (never followed:
    a link planted there could point at any file) or something other than a regular file,
    or when a directory above it is a dangling link or the links loop; other ``OSError`` s (a
    part of the path that is a file, permissions) are left to the write, which names them."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFileError("its symbolic links form a loop", str(path),
                                      errno.ELOOP) from None
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise NotRegularFileError(f"it is a symbolic link (to {link_text(p)})", str(path),
                                  errno.ELOOP, LINK_HINT)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError(f"it is {file_kind(st.st_mode)}, not a regular file",
                                  str(path),
                                  errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL)
    dangling = dangling_parent(p)
    if dangling is not None:
        raise NotRegularFileError(f"its directory {shown_path(dangling)} is a symbolic link to "
                                  f"{link_text(dangling)}, which does not exist",
                                  str(path), errno.ENOENT, DANGLING_HINT)
    return Path(os.path.realpath(p.parent)) / p.name


DANGLING_HINT = ("create the directory the link points to, or fix the link: mqctl does not "
                 "create a link's missing target")


def dangling_parent(p: Path) -> Path | None:
    """The first directory above ``p`` (from the top) that is a symbolic link to nothing, or
    None."""
    for d in reversed(p.parents):
        if d == d.parent:
            continue
        try:
            if os.path.islink(d) and not os.path.exists(d):
                return d
        except (OSError, ValueError):
            return None
    return None


def open_regular(path: str | os.PathLike[str], mode: str, *, nofollow: bool = False,
                 **kw: Any) -> IO[Any]:
    """``open`` that never blocks on a FIFO (``O_NONBLOCK``; a regular file ignores it) and
    refuses what is not a regular file (:class:`NotRegularFileError`): a FIFO or device
    swapped in after a check. ``nofollow`` (a write): a symbolic link swapped in is refused
    too (``O_NOFOLLOW``)."""
    try:
        fh = open(path, mode, opener=nofollow_flags if nofollow else nonblocking_flags, **kw)  # noqa: SIM115
    except OSError as exc:
        if nofollow and exc.errno == errno.ELOOP and os.path.islink(path):
            raise NotRegularFileError(f"it is a symbolic link (to {link_text(path)})",
                                      str(path), errno.ELOOP, LINK_HINT) from None
        raise
    st_mode = os.fstat(fh.fileno()).st_mode
    if not stat.S_ISREG(st_mode):
        fh.close()
        raise NotRegularFileError(f"it is {file_kind(st_mode)}, not a regular file", str(path))
    return fh


def nonblocking_flags(path: str, flags: int) -> int:
    """An ``open`` opener that never blocks on a FIFO (a regular file ignores the flag)."""
    return os.open(path, flags | os.O_NONBLOCK, 0o666)


def nofollow_flags(path: str, flags: int) -> int:
    """:func:`nonblocking_flags` that also refuses a symbolic link as the final component."""
    return os.open(path, flags | os.O_NONBLOCK | os.O_NOFOLLOW, 0o666)

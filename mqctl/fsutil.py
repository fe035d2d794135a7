"""Files mqctl writes and reads, one mechanism for each direction, and one check of every
path a user gives (:class:`PathRule`, :func:`path_error`).

Every path argument of every command is declared with a :class:`PathRule` (what it names,
read or written, a file or a directory) and checked by :func:`path_error` before any work
starts: its length (a component longer than the file system's ``NAME_MAX``, a path longer
than ``PATH_MAX``), what is there (a file, a directory, a FIFO, a device, a socket), its
symlinks (a loop, a dangling link, a link as the final component of an output path) and the
directories above it. ``tests/test_paths.py`` walks the command tree and fails on a path
parameter that is not declared through it.

Writes are atomic (a reader, or a killed run, never sees half a file) and never destroy or
redirect what is at the path: a symlink as the final component of an output path is refused
(a link planted there could point at any file: as root from cron it would clobber it), while
links among the directories above it are followed (node_exporter's textfile directory may be
a link); anything there that is not a regular file (a device such as ``/dev/null`` or
``/dev/full``, a FIFO, a socket, a directory) is refused, exit 2. :func:`atomic_writer`
checks again when it writes. An existing file that is not mqctl's own is replaced only with
``--force`` (:func:`overwrite_error`).

Reads of small input files (config, plan, rollback, topology, scenario, TLS files) go through
:func:`read_text_capped`: a regular file of at most the documented cap of its kind
(:data:`INPUT_CAPS`, docs/errors.md), never a FIFO or device that would block or never end
(``/dev/zero``, ``/dev/urandom``, a named pipe), and text: a gzip, bzip2, xz or zip file, a
UTF-16 or UTF-32 file and a binary file are named as such, never a ``UnicodeDecodeError``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import io
import json
import os
import re
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mqctl.errors import RefusedError, UsageError
from mqctl.timeparse import format_ms


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
    at ``path`` (full disk, read-only, a file where a directory is expected, not a regular
    file, a name too long, ...)."""
    reason = exc.strerror or str(exc)
    where = (f" ({shown_path(exc.filename)})" if exc.filename
             and str(exc.filename) != str(path) else "")
    if exc.errno == errno.EEXIST and _isfile(path):
        reason = "it is a regular file, not a directory"
    hint = (exc.hint if isinstance(exc, NotRegularFileError)
            else _PATH_HINTS.get(exc.errno or 0, "check the path and its file system"))
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


def _link_text(path: str | os.PathLike[str]) -> str:
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
        raise NotRegularFileError(f"it is a symbolic link (to {_link_text(p)})", str(path),
                                  errno.ELOOP, LINK_HINT)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise NotRegularFileError(f"it is {file_kind(st.st_mode)}, not a regular file",
                                  str(path),
                                  errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL)
    dangling = _dangling_parent(p)
    if dangling is not None:
        raise NotRegularFileError(f"its directory {shown_path(dangling)} is a symbolic link to "
                                  f"{_link_text(dangling)}, which does not exist",
                                  str(path), errno.ENOENT, DANGLING_HINT)
    return Path(os.path.realpath(p.parent)) / p.name


DANGLING_HINT = ("create the directory the link points to, or fix the link: mqctl does not "
                 "create a link's missing target")


def _dangling_parent(p: Path) -> Path | None:
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


def open_append(path: str | os.PathLike[str], what: str) -> IO[str]:
    """A log file opened for appending (created, with its directories, when missing). What is
    there and is not a regular file (a FIFO would block the open, a device swallow the log, a
    symbolic link redirect it) and any other ``OSError`` are a usage error (exit 2)."""
    target = Path(path)
    try:
        target = write_target(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        return _open_regular(target, "a", nofollow=True, encoding="utf-8", newline="")
    except OSError as exc:
        raise local_path_error(exc, path, what) from None


def _open_regular(path: str | os.PathLike[str], mode: str, *, nofollow: bool = False,
                  **kw: Any) -> IO[Any]:
    """``open`` that never blocks on a FIFO (``O_NONBLOCK``; a regular file ignores it) and
    refuses what is not a regular file (:class:`NotRegularFileError`): a FIFO or device
    swapped in after a check. ``nofollow`` (a write): a symbolic link swapped in is refused
    too (``O_NOFOLLOW``)."""
    try:
        fh = open(path, mode, opener=_nofollow if nofollow else _nonblocking, **kw)  # noqa: SIM115
    except OSError as exc:
        if nofollow and exc.errno == errno.ELOOP and os.path.islink(path):
            raise NotRegularFileError(f"it is a symbolic link (to {_link_text(path)})",
                                      str(path), errno.ELOOP, LINK_HINT) from None
        raise
    st_mode = os.fstat(fh.fileno()).st_mode
    if not stat.S_ISREG(st_mode):
        fh.close()
        raise NotRegularFileError(f"it is {file_kind(st_mode)}, not a regular file", str(path))
    return fh


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
# one check of every path a user gives

# Linux's limits: a path passed to the kernel is at most PATH_MAX bytes with its NUL, one
# component at most NAME_MAX bytes (ext4, xfs, btrfs, tmpfs; pathconf says where it differs)
PATH_MAX = 4096
NAME_MAX = 255
GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class PathRule:
    """How a path argument is used, for :func:`path_error`: ``what`` names it in errors
    (``Prometheus file``, ``report directory``); ``output``: mqctl writes it (else reads it);
    ``directory``: it is a directory (else a file; None: either, an input its reader lists
    and quarantines what it cannot read, the lag report's: only its length is checked here).

    ``must_exist`` (an input directory): its absence is an error (an input file's absence is
    its reader's to name, in its own words). ``create_parent`` (an output): the directories
    above it that are missing are created (else refused: a typo in a collector's directory
    must not send the output nowhere). ``stdin``: ``-`` is standard input. ``stream`` (an
    input file): a FIFO or character device is read on purpose (``wire decode <(tcpdump
    ...)``). ``remote``: a URI (``hdfs://``) or a glob is passed on as it is, for its reader
    (the lag report's inputs). ``name``: says when the value names something that is not a
    path (a bundled scenario, a rollback file's NAME)."""

    what: str
    output: bool = False
    directory: bool | None = False
    must_exist: bool = False
    create_parent: bool = True
    stdin: bool = False
    stream: bool = False
    remote: bool = False
    name: Callable[[str], bool] | None = None

    @property
    def role(self) -> str:
        """``output file``, ``input directory``, ...: what the rule's docs call it."""
        kind = {True: "directory", False: "file", None: "file or directory"}[self.directory]
        return f"{'output' if self.output else 'input'} {kind}"


@dataclass(frozen=True, slots=True)
class _Problem:
    reason: str
    hint: str
    code: int = errno.EINVAL
    inline: bool = False  # "<what> <path> <reason>" (is a FIFO...), else "...: <reason>"
    subject: bool = True  # (inline) "<what> <path> ...", else "<path> ..." (the reason names it)


def path_error(value: str, rule: PathRule) -> UsageError | None:
    """Why ``value`` cannot be used as ``rule`` says (exit 2, one line and a hint), or None.
    Checked: an empty path, a NUL byte, the path's length and each component's (``PATH_MAX``,
    the file system's ``NAME_MAX``), a part of the path that is a regular file, a directory
    above it that cannot be searched, symbolic links that loop or dangle, a symbolic link as
    the final component of an output file, what is there (an input file that is a
    directory, a FIFO, a device or a socket; an output file that is not a regular file; a
    directory that is not one), and for an output whose directories are not created, that
    they exist. What a write then finds (a read-only file system, a full disk) is its to
    name; what the file holds is its reader's."""
    if rule.stdin and value == "-":
        return None
    if rule.name is not None and rule.name(value):
        return None
    problem = _path_problem(value, rule)
    if problem is None:
        return None
    shown = shown_path(value)
    if rule.output:
        return UsageError(f"cannot write {rule.what} {shown}: {problem.reason}", hint=problem.hint)
    if problem.inline:
        subject = f"{rule.what} {shown}" if problem.subject else shown
        return UsageError(f"{subject} {problem.reason}", hint=problem.hint)
    return UsageError(f"cannot read {rule.what} {shown}: {problem.reason}", hint=problem.hint)


def check_path(value: str, rule: PathRule) -> str:
    """``value`` when :func:`path_error` finds nothing, else its error is raised."""
    err = path_error(value, rule)
    if err is not None:
        raise err
    return value


def _name_max(path: str) -> int:
    """The longest file name (bytes) the file system of ``path``'s deepest existing
    directory takes (NAME_MAX when it cannot be asked)."""
    d = os.path.dirname(os.path.abspath(path)) or "/"
    while True:
        try:
            return int(os.pathconf(d, "PC_NAME_MAX")) or NAME_MAX
        except (OSError, ValueError):
            parent = os.path.dirname(d)
            if parent == d:
                return NAME_MAX
            d = parent


def _length_problem(value: str) -> _Problem | None:
    try:
        raw = os.fsencode(value)
    except UnicodeEncodeError:
        return _Problem("it is not a valid file name (it holds an unpaired surrogate)",
                        "give the path as the shell gives it")
    if b"\0" in raw:
        return _Problem("it holds a NUL byte, which no file name can", "check the path")
    if len(raw) >= PATH_MAX:
        return _Problem(f"the path is {len(raw):,} bytes long, longer than this system takes "
                        f"(at most {PATH_MAX - 1:,}, PATH_MAX)", "use a shorter path",
                        errno.ENAMETOOLONG)
    longest = max(raw.split(b"/"), key=len)
    limit = _name_max(value) if len(longest) > NAME_MAX else NAME_MAX
    if len(longest) > limit:
        return _Problem(f"a part of it ({shown_path(longest[:40])}...) is {len(longest):,} "
                        f"bytes long, longer than a file name can be on this file system "
                        f"(at most {limit}, NAME_MAX)",
                        "use shorter file and directory names", errno.ENAMETOOLONG)
    return None


_ERRNO_REASONS = {
    errno.ENAMETOOLONG: ("the path is too long for this file system", "use a shorter path"),
    errno.ELOOP: ("its symbolic links form a loop", "fix the links: each one must lead to a "
                  "file or directory"),
    errno.EACCES: ("permission denied (a directory above it cannot be searched by this user)",
                   "fix the permissions, or choose another path"),
}


def _stat_problem(exc: OSError, value: str) -> _Problem:
    if exc.errno == errno.ENOTDIR:
        above = _file_above(value)
        return _Problem("Not a directory" + (f" ({shown_path(above)})" if above else ""),
                        _PATH_HINTS[errno.ENOTDIR], errno.ENOTDIR)
    reason, hint = _ERRNO_REASONS.get(exc.errno or 0, (exc.strerror or str(exc),
                                                        "check the path"))
    return _Problem(reason, hint, exc.errno or errno.EINVAL)


def _file_above(value: str) -> str | None:
    """The part of ``value`` that is a regular file where a directory is needed."""
    for d in Path(value).parents:
        if _isfile(d):
            return str(d)
    return None


def _path_problem(value: str, rule: PathRule) -> _Problem | None:
    if not value:
        return _Problem("the path is empty", "give a path")
    problem = _length_problem(value)
    if problem is not None:
        return problem
    if rule.remote and "://" in value:
        return None  # (a URI: its file system checks it when it is written or read)
    if rule.directory is None or (not rule.output and rule.remote and GLOB_CHARS & set(value)):
        return None  # (a glob, or what its reader lists and quarantines)
    try:
        lst: os.stat_result | None = os.lstat(value)
    except FileNotFoundError:
        lst = None
    except OSError as exc:
        return _stat_problem(exc, value)
    if lst is not None and stat.S_ISLNK(lst.st_mode):
        if rule.output and not rule.directory:
            return _Problem(f"it is a symbolic link (to {_link_text(value)})", LINK_HINT,
                            errno.ELOOP)
        try:
            st: os.stat_result | None = os.stat(value)
        except FileNotFoundError:
            return _Problem(f"it is a symbolic link to {_link_text(value)}, which does not "
                            "exist", "fix the link, or give the path it should point to",
                            errno.ENOENT)
        except OSError as exc:
            return _stat_problem(exc, value)
    else:
        st = lst
    if st is None:
        return _missing_problem(value, rule)
    mode = st.st_mode
    if rule.directory:
        if not stat.S_ISDIR(mode):
            kind = "a regular file" if stat.S_ISREG(mode) else file_kind(mode)
            return _Problem(f"{'it ' if rule.output else ''}is {kind}, not a directory",
                            "give a directory path", errno.ENOTDIR, inline=not rule.output)
        return None
    if stat.S_ISDIR(mode):
        if rule.output:
            return _Problem("Is a directory", _PATH_HINTS[errno.EISDIR], errno.EISDIR)
        return _Problem(f"is a directory, not a {rule.what}", f"give the path of a {rule.what}",
                        errno.EISDIR, inline=True, subject=False)
    if stat.S_ISREG(mode):
        return None
    if not rule.output and rule.stream and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        return None
    if rule.output:
        return _Problem(f"it is {file_kind(mode)}, not a regular file", NOT_REGULAR_HINT)
    return _Problem(f"is {file_kind(mode)}, not a regular file",
                    f"mqctl reads a {rule.what} only from a regular file (a FIFO or device "
                    "could block or never end): copy it to a file first", inline=True)


def _missing_problem(value: str, rule: PathRule) -> _Problem | None:
    """Nothing at ``value``: fine for an output whose directories exist or are created, and
    for an input file (its reader names it); else what is wrong above it."""
    p = Path(value)
    dangling = _dangling_parent(p)
    if dangling is not None:
        return _Problem(f"its directory {shown_path(dangling)} is a symbolic link to "
                        f"{_link_text(dangling)}, which does not exist", DANGLING_HINT,
                        errno.ENOENT)
    if not rule.output:
        if rule.directory and rule.must_exist:
            return _Problem("it does not exist", f"give an existing {rule.what}", errno.ENOENT)
        return None
    parent = p.parent if not rule.directory else p
    existing = next((d for d in [parent, *parent.parents] if os.path.lexists(d)), None)
    if existing is not None and not os.path.isdir(existing):
        return _Problem(f"Not a directory ({shown_path(existing)})",
                        _PATH_HINTS[errno.ENOTDIR], errno.ENOTDIR)
    if not rule.create_parent and not rule.directory and not os.path.isdir(p.parent or "."):
        return _Problem(f"its directory {shown_path(p.parent)} does not exist",
                        "create it first, or check the path for a typo (mqctl does not "
                        "create it)", errno.ENOENT)
    return None


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
        with _open_regular(path, "rb") as fh:
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


# --------------------------------------------------------------------------------------------
# bounded reads of small input files

_MB = 1_000_000
# The most mqctl reads of each kind of input file (docs/errors.md, "Input files"). They are
# small: a config with many profiles is a few KB, a plan or rollback file of 65,536 queues on
# each of 2 brokers about 10 MB, a topology of 100,000 consumers a few MB.
INPUT_CAPS: dict[str, int] = {
    "config file": 1 * _MB,
    "credentials file": 1 * _MB,
    "scenario file": 1 * _MB,
    "TLS file": 4 * _MB,
    "topology file": 16 * _MB,
    "completion cache": 16 * _MB,
    "lock state file": 16 * _MB,
    "plan file": 64 * _MB,
    "rollback file": 64 * _MB,
}


def _mb(n: int) -> str:
    return f"{n / _MB:g} MB" if n >= _MB else f"{n:,} bytes"


def input_file_error(path: str | os.PathLike[str], what: str, cap: str | None = None
                     ) -> UsageError | None:
    """Why the input file ``path`` is not read (without opening it): :func:`path_error`'s
    reasons (a name too long, a dangling link, a directory, a FIFO or device that would block
    or never end, ...), or larger than its cap (``INPUT_CAPS[cap or what]``). None when it is
    a regular file within the cap, or when it is missing or ``stat`` fails (the reader names a
    missing file or a permission error in its own words)."""
    limit = INPUT_CAPS[cap or what]
    err = path_error(str(path), PathRule(what))
    if err is not None:
        return err
    try:
        st = os.stat(path)
    except OSError:
        return None
    if st.st_size > limit:
        return _too_large(path, what, cap, limit)
    return None


def _too_large(path: str | os.PathLike[str], what: str, cap: str | None, limit: int
               ) -> UsageError:
    return UsageError(f"{what} {shown_path(path)} is larger than {_mb(limit)}, the most mqctl "
                      f"reads for a {cap or what}",
                      hint="check that it is the right file (docs/errors.md lists the size "
                           "limit of each input file)")


def read_text_capped(path: str | os.PathLike[str], what: str, *, cap: str | None = None,
                     encoding: str = "utf-8") -> str:
    """The text of a small input file, as ``Path.read_text`` gives it (universal newlines, a
    UTF-8 byte order mark dropped), read in one bounded step: what :func:`input_file_error`
    refuses (a FIFO, device or socket, a directory, a name too long, a file larger than its
    cap, ``INPUT_CAPS[cap or what]``) is a usage error (exit 2) before it is read whole, and
    so is a file that is not text in ``encoding`` (:func:`decode_text`: gzip, UTF-16, binary,
    an invalid byte). A missing file or one this user may not read stays
    ``FileNotFoundError`` / ``PermissionError``, for the caller's own message."""
    err = input_file_error(path, what, cap)
    if err is not None:
        raise err
    limit = INPUT_CAPS[cap or what]
    with _open_regular(path, "rb") as fh:
        data = fh.read(limit + 1)  # a file that grew since the check, /proc: still bounded
    if len(data) > limit:
        raise _too_large(path, what, cap, limit)
    return decode_text(data, f"{what} {shown_path(path)}", encoding)


# what the first bytes of a file that is not text say it is (magic numbers: RFC 1952 gzip,
# bzip2, xz, zstd, zip; the byte order marks of UTF-32 before UTF-16, whose BOM they start with)
_NOT_TEXT = (
    (b"\x1f\x8b", "gzip-compressed", "decompress it first (gunzip, or zcat FILE > FILE.txt)"),
    (b"BZh", "bzip2-compressed", "decompress it first (bunzip2)"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first (unxz)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it first (unzstd)"),
    (b"PK\x03\x04", "a zip archive", "extract the file from it first (unzip)"),
    (b"\xff\xfe\x00\x00", "UTF-32 text (little-endian byte order mark)",
     "save it as UTF-8 (iconv -f UTF-32 -t UTF-8 FILE)"),
    (b"\x00\x00\xfe\xff", "UTF-32 text (big-endian byte order mark)",
     "save it as UTF-8 (iconv -f UTF-32 -t UTF-8 FILE)"),
    (b"\xff\xfe", "UTF-16 text (little-endian byte order mark)",
     "save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE)"),
    (b"\xfe\xff", "UTF-16 text (big-endian byte order mark)",
     "save it as UTF-8 (iconv -f UTF-16 -t UTF-8 FILE)"),
)


def decode_text(data: bytes, name: str, encoding: str = "utf-8") -> str:
    """``data`` (the bytes of the input file ``name``, e.g. ``scenario file x.yaml``) as text:
    decoded as a text-mode ``open`` would (universal newlines), a UTF-8 byte order mark
    dropped. What is not text is a usage error naming what it is (exit 2): a gzip, bzip2, xz,
    zstd or zip file, UTF-16 or UTF-32 text (with a byte order mark, or UTF-16 without one:
    every other byte NUL), a binary file (a NUL byte), or a byte that is not ``encoding``
    (where: line and column)."""
    for magic, kind, fix in _NOT_TEXT:
        if data.startswith(magic):
            raise UsageError(f"{name} is {kind}, not {_enc(encoding)} text", hint=fix)
    nul = data.find(b"\x00")
    if nul >= 0:
        head = data[:64]
        if len(head) >= 4 and (head[1::2].count(0) >= len(head) // 4
                               or head[0::2].count(0) >= len(head) // 4):
            raise UsageError(f"{name} looks like UTF-16 text without a byte order mark (every "
                             f"other byte is NUL), not {_enc(encoding)} text",
                             hint="save it as UTF-8 (iconv -f UTF-16LE -t UTF-8 FILE)")
        raise UsageError(f"{name} is a binary file, not text (a NUL byte at offset {nul:,})",
                         hint="check that it is the right file")
    if encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        encoding = "utf-8-sig"
    try:
        return read_stream_text(data, encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UsageError(f"{name} is not {_enc(encoding)} text: byte 0x{data[exc.start]:02x} at "
                         f"line {line} column {col} is not valid {_enc(encoding)}",
                         hint="save it as UTF-8 (iconv -f LATIN1 -t UTF-8 FILE, for a Latin-1 "
                              "file)") from None


def _enc(encoding: str) -> str:
    e = encoding.lower().replace("_", "-")
    return "UTF-8" if e in ("utf-8", "utf8", "utf-8-sig") else encoding


# the longest integer mqctl reads from an input file (an offset is at most 19 digits,
# Long.MAX_VALUE): a longer one is refused naming where, never parsed (Python refuses more
# than 4,300 digits with "use sys.set_int_max_str_digits()", and a long one is slow)
MAX_INT_DIGITS = 40


def _digits_error(name: str, text: str, ndigits: int) -> UsageError:
    m = re.search(f"[0-9]{{{MAX_INT_DIGITS + 1},}}", text)
    where = ""
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        where = f" at line {line} column {col}"
    return UsageError(f"{name}: a number of {ndigits:,} digits{where}: mqctl reads integers of "
                      f"at most {MAX_INT_DIGITS} digits", hint="check that it is the right file, "
                      "and the number (an offset has at most 19 digits)")


def load_json(text: str, name: str, *, pairs: Callable[[list[tuple[str, Any]]], Any] | None
              = None) -> Any:
    """``json.loads`` of an input file's text with every failure a usage error (exit 2)
    naming ``name``: a syntax error, a nesting too deep for the parser (100k ``[``), an
    integer longer than :data:`MAX_INT_DIGITS`; ``pairs`` is the ``object_pairs_hook`` (a
    key given twice: the plan and rollback files refuse it). A :class:`UsageError` from
    ``pairs`` is raised with ``name`` before its message."""
    def bounded_int(digits: str) -> int:
        n = len(digits.lstrip("-"))
        if n > MAX_INT_DIGITS:
            raise _digits_error(name, text, n)
        return int(digits)

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_int=bounded_int)
    except UsageError as exc:
        if exc.message.startswith(name):
            raise
        raise UsageError(f"{name}: {exc.message}", hint=exc.hint) from None
    except RecursionError:
        raise UsageError(f"{name}: JSON nested too deeply") from None
    except ValueError as exc:
        raise UsageError(f"{name} is not valid JSON: {exc}") from None


def _nonblocking(path: str, flags: int) -> int:
    """An ``open`` opener that never blocks on a FIFO (a regular file ignores the flag)."""
    return os.open(path, flags | os.O_NONBLOCK, 0o666)


def _nofollow(path: str, flags: int) -> int:
    """:func:`_nonblocking` that also refuses a symbolic link as the final component."""
    return os.open(path, flags | os.O_NONBLOCK | os.O_NOFOLLOW, 0o666)


def read_stream_capped(stream: IO[str], what: str, *, cap: str) -> str:
    """At most ``INPUT_CAPS[cap]`` characters from a text stream (stdin given as ``-``);
    more is refused (exit 2) without reading the rest."""
    limit = INPUT_CAPS[cap]
    raw = getattr(stream, "buffer", None)
    if raw is not None:  # the bytes, named as a file's are when they are not text
        data = raw.read(limit + 1)
        if len(data) > limit:
            raise _too_large("(stdin)", what, cap, limit)
        return decode_text(data, f"{what} (stdin)")
    text = stream.read(limit + 1)
    if len(text) > limit:
        raise _too_large("(stdin)", what, cap, limit)
    return text


def read_stream_text(data: bytes, encoding: str) -> str:
    """``data`` decoded as a text-mode ``open`` would (universal newlines)."""
    with io.TextIOWrapper(io.BytesIO(data), encoding=encoding) as t:
        return t.read()


def load_yaml(text: str, name: str, hint: str) -> Any:
    """``yaml.safe_load`` of a small input file's text; every failure is a usage error (exit
    2) naming ``name`` (``config file x.yaml``): a syntax error with its line and column, a
    nesting too deep for the parser (10,000 ``[``: RecursionError), and aliases that expand
    to more values than the text could hold without them (:func:`_expands_within`: a
    "billion laughs" of 600 bytes is 10^9 values to whatever walks it, e.g. an error message
    that shows the value)."""
    import yaml

    try:
        doc = yaml.load(text, Loader=_bounded_loader(name))  # (a safe loader)
    except UsageError:
        raise
    except RecursionError:
        raise UsageError(f"{name}: YAML nested too deeply", hint=hint) from None
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's limit
            raise UsageError(f"{name}: YAML nested too deeply", hint=hint) from None
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise UsageError(f"{name} is not valid YAML{where}: {problem}", hint=hint) from None
    limit = YAML_EXPANSION * len(text) + 1000
    if not _expands_within(doc, limit):
        raise UsageError(f"{name}: its YAML aliases (*name) expand to more than {limit:,} "
                         "values", hint="write the values out, or use fewer aliases")
    return doc


def _bounded_loader(name: str) -> Any:
    """A safe YAML loader (libyaml's parser where PyYAML has it: 3-4x faster on a 16 MB
    topology) whose integers are at most :data:`MAX_INT_DIGITS` digits (a longer one is a
    usage error naming its line and column)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    def bounded_int(loader: Any, node: Any) -> Any:
        digits = sum(c.isascii() and c.isdigit() for c in str(node.value))
        if digits > MAX_INT_DIGITS:
            mark = node.start_mark
            raise UsageError(f"{name}: a number of {digits:,} digits at line {mark.line + 1} "
                             f"column {mark.column + 1}: mqctl reads integers of at most "
                             f"{MAX_INT_DIGITS} digits", hint="check that it is the right file")
        return yaml.SafeLoader.construct_yaml_int(loader, node)

    loader: Any = type("BoundedLoader", (base,), {})
    loader.add_constructor("tag:yaml.org,2002:int", bounded_int)
    return loader


# how many values a YAML text may expand to through its aliases, per character of the text
# (a value takes at least one character written out; a profile reused a few times by alias
# stays far below)
YAML_EXPANSION = 10


def _expands_within(doc: Any, limit: int) -> bool:
    """Whether walking ``doc`` as a tree (an alias counted each time it is used) meets at
    most ``limit`` values; stops as soon as it meets more."""
    todo, n = [doc], 0
    while todo:
        v = todo.pop()
        n += 1
        if n > limit:
            return False
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return True


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
            fh = _open_regular(write_target(d / name), "a+", encoding="utf-8")
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

"""The one check of every path a user gives (:class:`PathRule`, :func:`path_error`): its length
(a component longer than the file system's ``NAME_MAX``, a path longer than ``PATH_MAX``),
what is there, its symlinks and the directories above it."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mqctl.errors import UsageError
from mqctl.fsutil.files import (
    DANGLING_HINT,
    LINK_HINT,
    NOT_REGULAR_HINT,
    PATH_HINTS,
    _isfile,
    dangling_parent,
    file_kind,
    link_text,
    shown_path,
)

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
                        PATH_HINTS[errno.ENOTDIR], errno.ENOTDIR)
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
            return _Problem(f"it is a symbolic link (to {link_text(value)})", LINK_HINT,
                            errno.ELOOP)
        try:
            st: os.stat_result | None = os.stat(value)
        except FileNotFoundError:
            return _Problem(f"it is a symbolic link to {link_text(value)}, which does not "
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
            return _Problem("Is a directory", PATH_HINTS[errno.EISDIR], errno.EISDIR)
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
    dangling = dangling_parent(p)
    if dangling is not None:
        return _Problem(f"its directory {shown_path(dangling)} is a symbolic link to "
                        f"{link_text(dangling)}, which does not exist", DANGLING_HINT,
                        errno.ENOENT)
    if not rule.output:
        if rule.directory and rule.must_exist:
            return _Problem("it does not exist", f"give an existing {rule.what}", errno.ENOENT)
        return None
    parent = p.parent if not rule.directory else p
    existing = next((d for d in [parent, *parent.parents] if os.path.lexists(d)), None)
    if existing is not None and not os.path.isdir(existing):
        return _Problem(f"Not a directory ({shown_path(existing)})",
                        PATH_HINTS[errno.ENOTDIR], errno.ENOTDIR)
    if not rule.create_parent and not rule.directory and not os.path.isdir(p.parent or "."):
        return _Problem(f"its directory {shown_path(p.parent)} does not exist",
                        "create it first, or check the path for a typo (mqctl does not "
                        "create it)", errno.ENOENT)
    return None

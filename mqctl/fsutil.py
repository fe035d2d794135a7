"""Files mqctl writes and reads, one mechanism for each direction.

Writes are atomic (a reader, or a killed run, never sees half a file) and never destroy or
redirect what is at the path (issue 26 item 1): a symlink is followed and its final target is
replaced in the target's own directory (so node_exporter's ``link.prom -> real/target.prom``
keeps working); anything there that is not a regular file (a device such as ``/dev/null`` or
``/dev/full``, a FIFO, a socket, a directory) is refused, exit 2. Commands check the paths
they are given before any work starts (:func:`output_file_error`), and :func:`atomic_writer`
checks again when it writes.

Reads of small input files (config, plan, rollback, topology, scenario, TLS files: issue 26
item 5) go through :func:`read_text_capped`: a regular file of at most the documented cap of
its kind (:data:`INPUT_CAPS`, docs/errors.md), never a FIFO or device that would block or
never end (``/dev/zero``, ``/dev/urandom``, a named pipe).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import os
import socket
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mqctl.errors import UsageError


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int | None = None,
                  encoding: str = "utf-8") -> Iterator[IO[str]]:
    """Write to a hidden temporary file in the same directory, fsync, then rename over
    ``path``. On any exception the temporary file is removed and ``path`` is untouched.

    ``mode`` defaults to what ``open()`` would create (0666 minus the umask), not mkstemp's
    0600: node_exporter's textfile collector and report readers usually run as another user.

    A symlink at ``path`` is followed: its final target is replaced, the temporary file sits
    in the target's directory. What is there and is not a regular file is never replaced:
    :class:`NotRegularFileError`.

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
    file, ...)."""
    reason = exc.strerror or str(exc)
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
    if exc.errno == errno.EEXIST and Path(path).exists() and not Path(path).is_dir():
        reason = "it is a regular file, not a directory"
    hint = (NOT_REGULAR_HINT if isinstance(exc, NotRegularFileError)
            else _PATH_HINTS.get(exc.errno or 0, "check the path and its file system"))
    return UsageError(f"cannot write {what} {path}: {reason}{where}", hint=hint)


# --------------------------------------------------------------------------------------------
# what is at a path

NOT_REGULAR_HINT = ("give the path of a regular file (or of none yet): mqctl replaces a file "
                    "whole, following a symlink to its target, and never writes into a device, "
                    "FIFO, socket or directory")


class NotRegularFileError(OSError):
    """What is at an output path (after following symlinks) is not a regular file, or the
    symlinks loop. ``strerror`` says what it is; ``filename`` is the path the links lead to."""

    def __init__(self, reason: str, filename: str, code: int = errno.EINVAL):
        super().__init__(code, reason, filename)


def file_kind(mode: int) -> str:
    """``a directory``, ``a character device``, ... for an ``st_mode`` that is not a regular
    file's."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: symlinks (also in the directories above it) are
    followed to the final target, which is a regular file or not there yet (a dangling
    link's target is created). Raises :class:`NotRegularFileError` when what is there is not
    a regular file or the links loop; other ``OSError`` s (a part of the path that is a
    file, permissions) are left to the write, which names them."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFileError("its symlinks form a loop", str(path),
                                      errno.ELOOP) from None
        st = None
    real = Path(os.path.realpath(path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        shown = str(real) if str(real) != os.path.abspath(path) else str(path)
        kind = file_kind(st.st_mode)
        raise NotRegularFileError(f"it is {kind}, not a regular file", shown,
                                  errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL)
    return real


def open_append(path: str | os.PathLike[str], what: str) -> IO[str]:
    """A log file opened for appending (created, with its directories, when missing): a
    symlink is followed; what is there and is not a regular file (a FIFO would block the
    open, a device swallow the log) and any other ``OSError`` are a usage error (exit 2)."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return _open_regular(write_target(target), "a", encoding="utf-8", newline="")
    except OSError as exc:
        raise local_path_error(exc, path, what) from None


def _open_regular(path: str | os.PathLike[str], mode: str, **kw: Any) -> IO[Any]:
    """``open`` that never blocks on a FIFO (``O_NONBLOCK``; a regular file ignores it) and
    refuses what is not a regular file (:class:`NotRegularFileError`): a FIFO or device
    swapped in after a check."""
    fh = open(path, mode, opener=_nonblocking, **kw)  # noqa: SIM115
    st_mode = os.fstat(fh.fileno()).st_mode
    if not stat.S_ISREG(st_mode):
        fh.close()
        raise NotRegularFileError(f"it is {file_kind(st_mode)}, not a regular file", str(path))
    return fh


def output_file_error(path: str | os.PathLike[str], what: str) -> UsageError | None:
    """Why a file cannot be written at ``path`` (checked before any work starts): what is
    there is not a regular file or its symlinks loop (:func:`write_target`). None when it is
    a regular file, a symlink to one, or nothing yet; a missing directory, a read-only file
    system or a full disk are :func:`output_location_error`'s or the write's to name."""
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
    "plan file": 64 * _MB,
    "rollback file": 64 * _MB,
}


def _mb(n: int) -> str:
    return f"{n / _MB:g} MB" if n >= _MB else f"{n:,} bytes"


def input_file_error(path: str | os.PathLike[str], what: str, cap: str | None = None
                     ) -> UsageError | None:
    """Why the input file ``path`` is not read (without opening it): not a regular file (a
    FIFO or device would block or never end), or larger than its cap (``INPUT_CAPS[cap or
    what]``). None when it is a regular file within the cap, or when ``stat`` fails (the
    reader names a missing file or a permission error in its own words)."""
    limit = INPUT_CAPS[cap or what]
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return None  # the reader's IsADirectoryError: its own words
    if not stat.S_ISREG(st.st_mode):
        return UsageError(f"{what} {path} is {file_kind(st.st_mode)}, not a regular file",
                          hint=f"mqctl reads a {cap or what} only from a regular file of at "
                               f"most {_mb(limit)} (a FIFO or device could block or never "
                               "end): copy it to a file first")
    if st.st_size > limit:
        return _too_large(path, what, cap, limit)
    return None


def _too_large(path: str | os.PathLike[str], what: str, cap: str | None, limit: int
               ) -> UsageError:
    return UsageError(f"{what} {path} is larger than {_mb(limit)}, the most mqctl reads for a "
                      f"{cap or what}",
                      hint="check that it is the right file (docs/errors.md lists the size "
                           "limit of each input file)")


def read_text_capped(path: str | os.PathLike[str], what: str, *, cap: str | None = None,
                     encoding: str = "utf-8") -> str:
    """The text of a small input file, as ``Path.read_text`` gives it (universal newlines),
    read in one bounded step: a FIFO, device or socket, or a file larger than its cap
    (``INPUT_CAPS[cap or what]``) is refused with a usage error (exit 2) before it is read
    whole. Other errors stay as ``Path.read_text`` raises them (``FileNotFoundError``,
    ``IsADirectoryError``, ``PermissionError``, ``UnicodeDecodeError``), for the caller's own
    message."""
    err = input_file_error(path, what, cap)
    if err is not None:
        raise err
    limit = INPUT_CAPS[cap or what]
    with _open_regular(path, "rb") as fh:
        data = fh.read(limit + 1)  # a file that grew since the check, /proc: still bounded
    if len(data) > limit:
        raise _too_large(path, what, cap, limit)
    return read_stream_text(data, encoding)


def _nonblocking(path: str, flags: int) -> int:
    """An ``open`` opener that never blocks on a FIFO (a regular file ignores the flag)."""
    return os.open(path, flags | os.O_NONBLOCK, 0o666)


def read_stream_capped(stream: IO[str], what: str, *, cap: str) -> str:
    """At most ``INPUT_CAPS[cap]`` characters from a text stream (stdin given as ``-``);
    more is refused (exit 2) without reading the rest."""
    limit = INPUT_CAPS[cap]
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

    # libyaml's parser where PyYAML has it (3-4x faster: a 16 MB topology), the same safe
    # constructor either way
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(text, Loader=loader)  # (a safe loader)
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
                          directory: bool) -> UsageError | None:
    """Why ``path`` cannot take ``what`` (a directory when ``directory``, else a file), checked
    BEFORE a long job starts, or None when it looks writable.

    Checks, in order: a regular file where a directory is wanted (or a directory where a file
    is); for a file, anything else that is not a regular file (:func:`output_file_error`; a
    symlink is followed, and the checks below are made where its target is written); a part
    of the path that is a regular file; for a file, a missing parent directory (it is never
    created: a typo in a collector's directory must not send output nowhere); that this user
    can create a file in the deepest existing directory (read-only file system, permissions:
    probed with a temporary file that is removed again); and free space (``statvfs``; less
    than :data:`MIN_FREE_BYTES` counts as a full disk, ENOSPC)."""
    target = Path(path)
    if directory and target.exists() and not target.is_dir():
        return local_path_error(OSError(errno.EEXIST, os.strerror(errno.EEXIST), str(target)),
                                path, what)
    if not directory and target.is_dir():
        return local_path_error(OSError(errno.EISDIR, os.strerror(errno.EISDIR), str(target)),
                                path, what)
    if not directory:  # a device, FIFO, socket, symlink loop; a symlink: its target's place
        err = output_file_error(path, what)
        if err is not None:
            return err
        target = write_target(path)
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

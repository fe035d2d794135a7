"""Input files Spark could not read, found before Spark reads them (pure Python, no Spark).

One file Spark cannot decode fails the whole Spark job that reads it (``FAILED_READ_FILE``:
``java.io.EOFException: Unexpected end of input stream`` for a truncated gzip file,
``IOException: not a gzip file``, ``gzip stream CRC failure``, ``stored gzip size doesn't match
decompressed size``, ``FileNotFoundException`` for a dangling symlink or a file deleted since it
was listed). So every local input is checked while it is listed, and a file that fails is
quarantined (reason ``unreadable file``, the cause in the detail) instead of being given to
Spark (docs/exports.md section 9):

* what is at the path (:func:`stat_problem`): a dangling symlink, a symlink loop, no
  permission, a FIFO, socket or device (opening a FIFO would wait for a writer forever);
* that it opens (permissions, a file deleted since it was listed);
* a gzip file (``.gz``, or gzip's magic bytes), decompressed once as a stream in bounded memory
  (:func:`check_gzip`): one or more whole members, each with its CRC-32 and length checked
  (RFC 1952 section 2.3.1), nothing after the last one. That is what Hadoop's gzip codec (the
  one Spark reads ``.gz`` with) accepts: a truncated file, a bad CRC or length, a header-only or
  empty file and trailing bytes after the last member (zeros too) all fail it (measured with
  Spark 4.0 on each case: tests/lagjob/test_hostile_inputs_lag.py). A valid file of several
  members (``cat a.gz b.gz``) passes, as it reads whole.

A truncated gzip file is quarantined whole, not read up to where it breaks: a capture file is
one observation of the cluster, and part of it would compute a group's total lag from some of
its queues (smaller than it is) with nothing saying that queues are missing. The detail says
how many whole lines the readable part holds (``zcat`` shows them).

Plain files are not read here (Spark reads any bytes); only the gzip check costs a pass over
the data (docs/lag-performance.md, "Checking input files": about 0.1 s per 100 MB of
uncompressed data on this machine).
"""

from __future__ import annotations

import errno
import os
import stat
import zlib
from collections.abc import Callable
from dataclasses import dataclass

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20  # compressed bytes read at once
OUT_CHUNK = 4 << 20  # decompressed bytes held at once (the memory bound)


@dataclass(frozen=True, slots=True)
class GzipCheck:
    """A gzip file's check: ``error`` (None: the file reads whole), the whole lines of its
    readable part and the bytes decompressed."""

    error: str | None
    lines: int
    out_bytes: int


def stat_problem(path: str) -> tuple[os.stat_result | None, str | None]:
    """``(stat, None)`` for a path whose target is a regular file, else ``(lstat or None,
    cause)``: ``dangling symlink (-> target)``, ``symlink loop``, ``permission denied``,
    ``vanished (deleted after it was listed)``, ``not a regular file (FIFO)``, ..."""
    try:
        st = os.stat(path)
    except OSError as exc:
        try:
            lst: os.stat_result | None = os.lstat(path)
        except OSError:
            lst = None
        return lst, open_problem(exc, path, lst)
    if not stat.S_ISREG(st.st_mode):
        return st, f"not a regular file ({_file_kind(st.st_mode)})"
    return st, None


def open_problem(exc: OSError, path: str, lst: os.stat_result | None = None) -> str:
    """The cause of an ``OSError`` from reaching or opening an input file."""
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if exc.errno == errno.ENOENT:
        if lst is not None and stat.S_ISLNK(lst.st_mode):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return f"dangling symlink (-> {target})"
        return "vanished (deleted after it was listed)"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return f"cannot open: {exc.strerror or exc}"


def _file_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    return "special file"


def is_gzip_name(path: str) -> bool:
    return path.endswith(".gz")


def check_gzip(read: Callable[[int], bytes], size: int | None = None) -> GzipCheck:
    """Decompress a gzip stream once (``read(n)`` gives up to ``n`` compressed bytes, ``b""``
    at the end), holding at most :data:`OUT_CHUNK` decompressed bytes at a time, checking every
    member's CRC-32 and length (zlib does, for a gzip wrapper), and count the whole lines of
    what decompressed. ``size``: the file's size, named in the message."""
    lines = out = consumed = members = 0
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    started = False  # bytes of the current member were given to ``d``
    buf = b""

    def fail(what: str) -> GzipCheck:
        return GzipCheck(what, lines, out)

    while True:
        if not buf:
            buf = read(CHUNK)
            if not buf:
                break
        started = True
        try:
            data = d.decompress(buf, OUT_CHUNK)
        except zlib.error as exc:
            text = str(exc).split(": ", 1)[-1]
            if "incorrect header check" in text and members:
                left = f"{size - consumed} byte(s)" if size is not None else "bytes"
                return fail(f"trailing data after gzip member {members}: {left} that are not "
                            "gzip")
            if "incorrect header check" in text:
                return fail("not gzip (no gzip header)")
            member = f"in gzip member {members + 1}"
            if "incorrect data check" in text:
                return fail(f"corrupt gzip: CRC-32 mismatch {member}")
            if "incorrect length check" in text:
                return fail(f"corrupt gzip: length mismatch {member}")
            return fail(f"corrupt gzip: {text} {member}")
        rest = d.unconsumed_tail or d.unused_data
        consumed += len(buf) - len(rest)
        buf = rest
        out += len(data)
        lines += data.count(b"\n")
        if d.eof:  # a whole member, CRC and length checked; another one may follow
            members += 1
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            started = False
    if members == 0 and consumed == 0 and not started:
        return GzipCheck("empty gzip file (0 bytes)", 0, 0)
    if started:
        return fail(f"truncated gzip: the data ends inside gzip member {members + 1}; the "
                    f"readable part holds {lines} whole line(s) ({out} byte(s) uncompressed)")
    return GzipCheck(None, lines, out)


def check_local(path: str, size: int) -> str | None:
    """Why Spark could not read the regular file ``path``, or None: it does not open (no
    permission, deleted since it was listed), or it is gzip (by its name or its first bytes)
    and not a valid gzip file (:func:`check_gzip`)."""
    try:
        with open(path, "rb") as fh:
            if not is_gzip_name(path):
                if fh.read(2) != GZIP_MAGIC:
                    return None
                fh.seek(0)
            return check_gzip(fh.read, size).error
    except OSError as exc:
        return open_problem(exc, path)

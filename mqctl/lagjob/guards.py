"""What the lag report checks before it starts and how it says a failure: the output
locations (:func:`check_outputs`), one run per ``--out`` and ``--state`` at a time
(:func:`report_lock`, :func:`state_lock`), and the one-line errors of a run Spark could not
finish (:func:`spark_failure`, :func:`failed_read`, :func:`java_failure`)."""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from mqctl.errors import MqctlError, UsageError
from mqctl.lagjob.inputs import local_path
from mqctl.lagjob.writers import is_local

# what makes a directory mqctl's own report directory or state (the lock file every run
# leaves, or the state's manifest), and a Prometheus file mqctl's (its run series, with which
# every file it writes ends): docs/errors.md "Files mqctl writes and reads"
REPORT_MARKERS = (".mqctl-lag.lock", "_state/manifest.json")
STATE_MARKERS = (".mqctl-lag.lock", "manifest.json")
PROM_MARKER = b"# HELP mqctl_lag_report_"


def prom_is_own(path: os.PathLike[str]) -> bool:
    """An empty file, or one whose last 64 KiB hold mqctl's run series
    (``mqctl_lag_report_*``, the end of every Prometheus file it writes)."""
    from mqctl.fsutil import holds_text

    try:
        if os.stat(path).st_size == 0:
            return True
    except OSError:
        return False
    return holds_text(path, PROM_MARKER, tail=True)


def check_outputs(out_dir: str, prom_file: str | None, state: str | None = None, *,
                  force: bool = False) -> None:
    """Raise the one-line usage error (exit 2) of an output location that cannot be written
    (a regular file, read-only, no permission, a full disk; a --prom-file whose directory is
    missing, or that is a symbolic link; a --state like --out), or that holds what mqctl did
    not write and ``force`` is not given (an --out or --state with files but none of
    :data:`REPORT_MARKERS` / :data:`STATE_MARKERS`, a --prom-file that is not
    :func:`prom_is_own`). Only local paths: a Hadoop URI is checked by its file system when
    written."""
    from mqctl.fsutil import (
        check_output_file,
        dir_overwrite_error,
        output_location_error,
        overwrite_error,
    )
    checks = [(out_dir, "report directory", True)]
    if prom_file:
        checks.append((prom_file, "Prometheus file", False))
    if state:
        checks.append((state, "state directory", True))
    for path, what, directory in checks:
        if is_local(path):
            err = output_location_error(local_path(path), what, directory=directory)
            if err is not None:
                raise err
    if is_local(out_dir):  # OUT/summary.csv a FIFO, OUT/report.html a directory, ...
        for name in TEXT_OUTPUTS[:-1] if prom_file else TEXT_OUTPUTS:
            check_output_file(os.path.join(local_path(out_dir), name), "report output")
    owned = [dir_overwrite_error(local_path(out_dir), "report directory",
                                 markers=REPORT_MARKERS, force=force) if is_local(out_dir)
             else None]
    if prom_file and is_local(prom_file):
        owned.append(overwrite_error(local_path(prom_file), "Prometheus file", own=prom_is_own,
                                     force=force, why="one that ends with its "
                                     "mqctl_lag_report_* series, or an empty file"))
    if state and is_local(state) and not _under(local_path(state), local_path(out_dir)):
        owned.append(dir_overwrite_error(local_path(state), "state directory",
                                         markers=STATE_MARKERS, force=force))
    for err in owned:
        if err is not None:
            raise err


def _under(path: str, parent: str) -> bool:
    a, b = os.path.abspath(path), os.path.abspath(parent)
    return os.path.commonpath([a, b]) == b


# the report's text outputs in OUT (the last one only without --prom-file)
TEXT_OUTPUTS = ("summary.csv", "summary.json", "report.html", "mqctl_lag.prom")


def check_listing(listing: Any) -> None:
    if not listing.files:
        shown = ", ".join(listing.unmatched[:3])
        raise UsageError(f"no input files found ({shown})",
                         hint="check the paths and globs; hidden files (.name) are skipped")


# what a JVM-side write says when the disk (or the user's quota) is full: Java's IOException
# carries the C library's strerror text (java.io.UnixFileSystem, FileOutputStream natives)
_DISK_FULL = ("No space left on device", "Disk quota exceeded")


def spark_failure(exc: BaseException, stage: str, written: dict[str, str]
                  ) -> UsageError | None:
    """The one-line error (exit 2) of a run that Spark could not finish for lack of memory or
    disk: a task's ``java.lang.OutOfMemoryError``, the JVM gone (Spark's handler stops the JVM
    on an out-of-memory error in a task thread; Python then finds no JVM to talk to), or a
    JVM-side write that found the disk full (a Parquet file of ``--out``, a shuffle or
    checkpoint block in ``spark.local.dir``). None for any other exception, and for a Python
    ``OSError`` (the caller names its file)."""
    text = f"{type(exc).__name__}: {exc}"
    name = type(exc).__name__
    done = ", ".join(written) or "nothing"
    if not isinstance(exc, OSError) and any(m in text for m in _DISK_FULL):
        return UsageError(f"a disk filled up during the lag report's '{stage}' step; already "
                          f"written: {done} (the rest was not)",
                          hint="free space where --out points and in Spark's scratch directory "
                          "(spark.local.dir, /tmp by default), then run the report again: it "
                          "rewrites what it needs")
    oom = "OutOfMemoryError" in text
    gone = (isinstance(exc, ConnectionRefusedError) or name == "Py4JNetworkError"
            or "Answer from Java side is empty" in text)
    if not (oom or gone):
        return None
    what = "Spark ran out of memory" if oom else "Spark's JVM stopped (most often: out of memory)"
    return UsageError(f"{what} in the lag report's '{stage}' step; already written: {done} "
                      "(the rest was not)",
                      hint="give Spark more memory, e.g. --conf spark.driver.memory=8g (on a "
                      "cluster also spark.executor.memory); Spark's log above names the task")


def report_lock(out: str) -> AbstractContextManager[None]:
    """Two report runs into one ``--out`` at once (a cron run that outlasts its interval)
    would interleave their state and appends: the second is refused (exit 6) by a lock on
    ``OUT/.mqctl-lag.lock``, taken before the inputs are listed and the JVM starts, held to
    the end of the run; ``lag prune --out`` takes it too. Local directories only (a Hadoop
    path: no lock)."""
    if not is_local(out):
        return nullcontext()
    from mqctl.fsutil import dir_lock

    d = local_path(out)
    return dir_lock(d, ".mqctl-lag.lock", f"another mqctl lag report is still writing to {d}",
                    "the previous run has not finished; run the report less often (or give "
                    "each run its own --out)")


def state_lock(state: str | None, out: str) -> AbstractContextManager[None]:
    """The same lock on a ``--state`` outside ``--out`` (two reports into different outputs
    sharing one state would interleave its manifest)."""
    if state is None or not is_local(state):
        return nullcontext()
    d, o = local_path(state), local_path(out)
    if _under(d, o):
        return nullcontext()  # (under OUT: OUT's lock covers it)
    from mqctl.fsutil import dir_lock

    return dir_lock(d, ".mqctl-lag.lock", f"another mqctl lag report is still using the state "
                    f"directory {d}", "the previous run has not finished; give each report "
                    "its own --state")


# a run that finds more input files Spark cannot read than this stops (each one costs a start
# over; local files are checked before Spark starts, so this takes remote or changing inputs)
MAX_FAILED_READS = 10
UNREADABLE_HINT = ("check the file (gzip -t FILE for a .gz), then replace or remove it; local "
                   "inputs are checked before Spark starts and quarantined (docs/exports.md "
                   "section 9)")
# Spark's error classes of a file it could not read (Spark 3.4+: FAILED_READ_FILE.*, and
# PATH_NOT_FOUND when a listed file is gone before the scan is planned)
_FAILED_READ = re.compile(r"\[FAILED_READ_FILE[.\w]*\] Encountered error while reading file "
                          r"(\S+?)\.?\s+(?:SQLSTATE|$)", re.MULTILINE)
_PATH_NOT_FOUND = re.compile(r"\[PATH_NOT_FOUND\] Path does not exist: (\S+?)\.?\s*(?:SQLSTATE|$)",
                             re.MULTILINE)
_CAUSE = re.compile(r"^Caused by: (?:[\w$]+\.)*([\w$]+(?:Exception|Error)[^\n]*)", re.MULTILINE)


def failed_read(exc: BaseException) -> tuple[str, str] | None:
    """``(file URI, cause)`` when ``exc`` is Spark failing to read one input file, e.g.
    ``[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:///x.jsonl.gz`` with
    ``Caused by: java.io.EOFException: Unexpected end of input stream`` -> ``("file:///x.jsonl.gz",
    "EOFException: Unexpected end of input stream")``; None for anything else."""
    text = str(exc)
    m = _FAILED_READ.search(text)
    if m is None:
        m = _PATH_NOT_FOUND.search(text)
        if m is None:
            return None
        return m.group(1), "the file does not exist (deleted after it was listed)"
    causes = _CAUSE.findall(text)
    cause = causes[-1].strip() if causes else "unknown cause"
    if "FileNotFoundException" in cause:
        cause = "the file does not exist (deleted after it was listed)"
    return m.group(1), cause[:300]


def java_failure(exc: BaseException, stage: str) -> MqctlError | None:
    """Any other failure Spark reports with a Java stack trace in its message (a bug, or a
    Spark set-up problem): the internal error (exit 1) without the trace, its first line and
    root cause (``mqctl --debug`` prints the whole chain). None for a Python exception."""
    text = str(exc)
    if "\n\tat " not in text:
        return None
    from mqctl.errors import MqctlError

    first = next((ln.strip() for ln in text.splitlines() if ln.strip()
                  and not ln.startswith(("\t", "An error occurred while calling"))), "")
    causes = _CAUSE.findall(text)
    root = f"; caused by {causes[-1].strip()[:300]}" if causes else ""
    return MqctlError(f"Spark failed in the lag report's '{stage}' step: "
                      f"{first.lstrip(': ')[:300]}{root}",
                      hint="this is a bug in mqctl or a problem of the Spark set-up; re-run with "
                      "--debug for Spark's Java stack trace and report it")


def absolute(path: str) -> str:
    """A local path made absolute (a URI as it is): the JVM resolves a relative path against
    its own working directory, which is not this process's once it changed directory after the
    session started (a reused session)."""
    if not is_local(path):
        return path
    return os.path.abspath(local_path(path))

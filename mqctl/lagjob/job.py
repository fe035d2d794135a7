"""The lag report job: read exports, compute lag / time lag / status / rebalance history, write
Parquet datasets, summaries, an HTML report and a Prometheus textfile.

Library entry point: :func:`run_report` (``mqctl lag report`` and ``mqctl demo`` call it; pass
``spark=`` to reuse a session). Also runnable as a job::

    spark-submit "$(mqctl lag job-path)" --out OUT INPUT...   # this file, where installed
    python -m mqctl.lagjob.job --out OUT INPUT...

Exit codes of the job: 0 ok, 2 bad input/usage, 9 a ``--fail-on`` threshold was breached.
"""

from __future__ import annotations

import os
import re
import sys

if __name__ == "__main__" and __package__ in (None, ""):  # spark-submit mqctl/lagjob/job.py
    _here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0]) == _here:
        sys.path.pop(0)  # don't let lagjob/*.py shadow top-level modules
    sys.path.insert(0, os.path.dirname(os.path.dirname(_here)))

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.errors import MqctlError, UsageError
from mqctl.lagjob.alignment import Close
from mqctl.lagjob.inputs import (
    InputSpec,
    Kind,
    local_path,
    parse_input_spec,
)
from mqctl.lagjob.thresholds import Breach, parse_thresholds
from mqctl.lagoptions import Options, duration_ms, spark_conf

__all__ = ["Options", "ReportResult", "build_parser", "duration_ms", "main", "result_view",
           "run_report"]

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame, SparkSession

    from mqctl.lagjob.stages import Earlier, Lagged, Latest, Rebalance, Report
    from mqctl.render import Result

DATASETS = ("lag", "group_status", "rebalance/events", "rebalance/moves", "rebalance/storms",
            "rebalance/unowned", "rebalance/locks", "quarantine")

LAG_COLUMNS = [
    "date", "capture_ts", "capture_time", "observed_ts", "cluster", "group", "topic", "broker",
    "queue_id", "broker_offset", "broker_offset_ts", "min_offset", "consumer_offset",
    "pull_offset", "lag", "inflight", "lag_seconds", "lag_seconds_source", "estimated",
    "lower_bound", "lag_seconds_upper", "delay_ms", "last_timestamp", "owner", "owners",
    "online", "members", "orderly", "consume_enable", "status", "complete", "window_samples",
    "consume_rate", "produce_rate", "source_kind", "source", "committed", "owner_unknown",
    "members_unanswered", "consume_type", "message_model",
]
GROUP_COLUMNS = [
    "date", "capture_ts", "capture_time", "cluster", "group", "topic", "queues", "queues_known",
    "total_lag", "max_lag", "lag_seconds", "lag_seconds_source", "estimated", "consume_rate",
    "produce_rate", "status", "status_code", "group_status", "group_status_code", "complete",
    "online", "members", "never_committed", "owner_unknown", "status_queues", "window_samples",
    "consume_type", "message_model",
]
# the counts a bounded re-run takes from the manifest and adds the new captures' to: what
# would otherwise read lag and group_status whole (:meth:`_Run._with_earlier_counts`)
KEPT_COUNTS = ("lag", "group_status", "owner_unknown", "never_committed")
SUMMARY_COLUMNS = [
    "cluster", "group", "topic", "capture_time", "health", "status", "status_queues",
    "group_status", "total_lag", "max_lag", "lag_seconds", "lag_seconds_source", "peak_lag",
    "peak_lag_seconds", "consume_rate", "produce_rate", "complete", "window_samples", "queues",
    "captures", "online", "members", "rebalances", "storms", "in_storm", "unowned_share",
    "unowned_now", "never_committed", "owner_unknown", "consume_type", "message_model",
    "health_reasons",
]


@dataclass(frozen=True, slots=True)
class ReportResult:
    """What a run produced. ``summary`` holds the latest capture of each group and topic
    (worst first, at most ``summary_limit`` rows; ``truncated`` says when more exist)."""

    summary: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    paths: dict[str, str]
    quarantine: dict[str, int]
    quarantined: int
    breaches: list[Breach]
    counts: dict[str, int]
    inputs: dict[str, int]
    dates: list[str]
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    # what the outputs rest on but may not show (captures closer than --align): on stderr,
    # in summary.json and at the top of report.html
    warnings: list[str] = field(default_factory=list)
    # wall seconds per stage of the run, in order (docs/lag-performance.md; bench/lag_scale.py)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def breached(self) -> bool:
        return bool(self.breaches)

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "groups": self.groups, "paths": self.paths,
                "quarantine": {"total": self.quarantined, "by_reason": self.quarantine},
                "breaches": [b.to_dict() for b in self.breaches], "counts": self.counts,
                "inputs": self.inputs, "dates": self.dates, "truncated": self.truncated,
                "notes": self.notes, "warnings": self.warnings}


def run_report(inputs: Sequence[str | InputSpec], out_dir: str,
               options: Options | None = None, *, master: str | None = "local[*]",
               fail_on: Iterable[str] = (), spark: SparkSession | None = None,
               prom_file: str | None = None, spark_conf: dict[str, str] | None = None,
               progress: Callable[[str], None] | None = None, state: str | None = None,
               incremental: bool = True, full: bool = False, debug: bool = False,
               force: bool = False, **values: Any) -> ReportResult:
    """Run the report over ``inputs`` (paths, globs, directories, URIs, or ``KIND=PATH``) and
    write everything under ``out_dir``. Thresholds are checked after everything is written;
    breaches are returned (``ReportResult.breaches``), not raised.

    ``options``: what the report computes with (:class:`mqctl.lagoptions.Options`: window,
    zones, durations, ...); or give them as keywords (``window=3, tz="UTC"``: the field names
    of :class:`~mqctl.lagoptions.Options`, durations in ms or as text), not both. ``tz``: zone
    of mqadmin dates and of path timestamps without a zone (default: local); ``log_tz``: zone
    of 4.x client logs (default: local); ``broker_log_tz``: zone of lock.log and 5.x client
    logs (their logback pattern pins GMT+8).

    Incremental (``incremental``, the default): snapshot files are parsed once into an ingested
    Parquet table under ``state`` (default ``OUT/_state``) with a manifest (path, size,
    modification time); a re-run parses only new and changed files and rewrites only the
    ``lag``/``group_status`` date partitions from the first date whose observations changed.
    A run whose options differ from the ones the state was computed with (any option that
    changes a result, :meth:`Options.fingerprint`) computes everything again.
    ``full``: rebuild the state and rewrite every date. ``since``/``until``: times
    (``2024-06-01``, ``2024-06-01T10:00:00Z``, ``-2h``) bounding what the run reports.
    ``debug``: Spark's log on stderr keeps the Java stack traces (else one line per message).
    ``force``: write into an ``out_dir`` or ``state`` that holds files and is not mqctl's, and
    replace a ``prom_file`` mqctl did not write (:func:`_check_outputs`; else exit 2).
    """
    if options is not None and values:
        raise TypeError("give run_report options= or option keywords, not both")
    unknown = sorted(set(values) - {f for f, _ in _declared_names()})
    if unknown:
        raise TypeError(f"run_report() got unexpected keyword argument(s): {', '.join(unknown)}")
    opts = options if options is not None else Options.from_values(values)
    specs = [s if isinstance(s, InputSpec) else parse_input_spec(s) for s in inputs]
    if not specs:
        raise UsageError("no inputs given", hint="pass snapshot files, store exports, mqadmin "
                         "captures or logs (paths, globs or directories)")
    if not out_dir:
        raise UsageError("no output directory", hint="pass --out DIR")
    thresholds = parse_thresholds(fail_on)
    say = progress or (lambda _m: None)
    # before the JVM starts: a long run must not end unwritten (errors name the path as given)
    _check_outputs(out_dir, prom_file, state if incremental else None, force=force)
    out_dir = _absolute(out_dir)
    state_dir = None
    if incremental:
        from mqctl.lagjob import writers as W

        state_dir = _absolute(state or W.join(out_dir, "_state"))
    # a second run into the same --out (or --state) is refused now, not after the JVM started
    with report_lock(out_dir), state_lock(state_dir, out_dir):
        return _start(specs, out_dir, state_dir, opts, thresholds, say, master=master,
                      spark=spark, spark_conf=spark_conf, prom_file=prom_file, full=full,
                      debug=debug)


def _declared_names() -> list[tuple[str, Any]]:
    from mqctl.lagoptions import declared

    return [(f.name, spec) for f, spec in declared()]


def _start(specs: list[InputSpec], out_dir: str, state_dir: str | None, opts: Options,
           thresholds: list[Any], say: Callable[[str], None], *, master: str | None,
           spark: SparkSession | None, spark_conf: dict[str, str] | None,
           prom_file: str | None, full: bool, debug: bool) -> ReportResult:
    """List and check the inputs, start (or take) the session, run (the locks are held)."""
    manifest = None if full else _local_manifest(state_dir)
    held = _held(manifest)
    if all(_local(s.path) for s in specs):  # fail fast, before the JVM starts
        from mqctl.lagjob.readers import list_local

        listing = list_local(specs, held)
        _check_listing(listing)
    else:
        listing = None
    from mqctl.lagjob.session import (
        JVM_OPTS,
        driver_java_options,
        driver_memory,
        ensure_workers_import_mqctl,
        require_arrow,
        run_settings,
        run_settings_for,
        spark_session,
        utc_session,
    )

    require_arrow()  # (before the JVM starts)
    session_conf = dict(spark_conf or {})
    java_opts = JVM_OPTS
    # (once: a gzip file's size is read from its trailer)
    size = _input_bytes(listing) if listing is not None else None
    if size is not None and (master is None or master.startswith("local")) \
            and spark is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        # a JVM this call starts, sized for the input (spark-submit sized its own JVM; an
        # active session is used as it is)
        if "spark.driver.extraJavaOptions" not in session_conf:  # (theirs could clash: two GCs)
            java_opts = driver_java_options(_work_bytes(listing, size, manifest, held, opts,
                                                        out_dir, say))
        if "spark.driver.memory" not in session_conf:
            session_conf["spark.driver.memory"] = driver_memory(size)
    with spark_session(master, conf=session_conf, spark=spark, java_opts=java_opts,
                       traces=debug, say=say) as handle, utc_session(handle.spark):
        ensure_workers_import_mqctl(handle.spark)
        from mqctl.lagjob import lookups

        lookups.install(handle.spark)  # PySpark's Java look-ups answered once per name
        if listing is None:
            from mqctl.lagjob.readers import list_inputs

            listing = list_inputs(handle.spark, specs)
            _check_listing(listing)
            size = _input_bytes(listing)
        assert size is not None
        sc = handle.spark.sparkContext
        tuned = run_settings_for(size, sc.defaultParallelism,  # (the user's --conf wins)
                                 (sc.master or "").startswith("local"), spark_conf)
        with run_settings(handle.spark, tuned):
            run = _Run(handle.spark, listing, out_dir, opts, thresholds, prom_file, say)
            run.state, run.full = state_dir, full
            return run.run()


def _input_bytes(listing: Any, skip: Callable[[str, int, int], bool] | None = None) -> int:
    """The input's size, uncompressed, for sizing the session (without the files ``skip``
    names: those the state holds parsed)."""
    return sum(_uncompressed_size(f.path, f.size) for f in listing.files
               if f.ignored is None and f.unreadable is None
               and not (skip is not None and skip(f.path, f.size, f.mtime_ms)))


def _local_manifest(state_dir: str | None) -> Any:
    """The manifest of a local state, read without Spark (None: no local state, none yet, or
    one this version does not read)."""
    if state_dir is None or not _local(state_dir):
        return None
    from mqctl.lagjob.ingest import MANIFEST, Manifest

    try:
        with open(os.path.join(local_path(state_dir), MANIFEST), encoding="utf-8") as fh:
            return Manifest.parse(fh.read())
    except (OSError, UnicodeDecodeError):
        return None


def _held(man: Any) -> Callable[[str, int, int], bool] | None:
    """Whether a local input file is held parsed by the state (the manifest lists it, with its
    size and modification time, without bad lines): the run does not read it again, so the
    listing does not check its gzip data (docs/lag-performance.md, "Checking input files").
    None without a manifest (every file is parsed)."""
    if man is None:
        return None
    held = {p: (m.get("size"), m.get("mtime_ms")) for p, m in man.files.items()
            if not m.get("bad")}
    return lambda path, size, mtime_ms: held.get(path) == (size, mtime_ms)


def bound_possible(man: Any, fp: str, out: str, *, full: bool, only_snapshots: bool,
                   whole_history: bool, lag_written: bool) -> tuple[bool, bool]:
    """(``write_all``, ``try_bound``) of a run with the state's manifest ``man``: the earlier
    dates of lag/group_status are kept only when a run of the same options (fingerprint
    ``fp``) into this ``out`` wrote them and nothing but snapshots feeds them; a bounded re-run
    is tried when, besides, the previous run finished (no pending dates), left its derived
    state, and this one covers the whole history. One definition for the run
    (``_Run._open_state``) and for sizing its JVM before it starts (:func:`_work_bytes`)."""
    write_all = (full or man.fingerprint != fp or man.out != out or not only_snapshots
                 or not lag_written)
    return write_all, (not write_all and bool(man.derived) and not man.pending
                       and whole_history)


def _work_bytes(listing: Any, size: int, man: Any, held: Callable[[str, int, int], bool] | None,
                opts: Options, out_dir: str, say: Callable[[str], None]) -> int:
    """The input bytes that size the driver JVM's compilers (:func:`session.driver_java_options`):
    the whole input (``size``), or, for a run that will likely be a bounded re-run, only the
    files it parses (those the state does not hold). A cron re-run of a 1M-row history with
    10 new captures parses 53 MB of 708 MB; sized by those it took x0.78-0.82 of the time in
    fresh processes (docs/lag-performance.md, "Fourteenth pass"). The guess reads only the
    manifest; a run that then turns out not bounded computes every capture, slower, with the
    same results. The session's memory and Spark's settings stay sized by ``size``."""
    if man is None or held is None or not _local(out_dir):
        return size
    from mqctl.lagjob.readers import Kind

    by_kind = listing.by_kind()
    _, likely = bound_possible(
        man, opts.fingerprint(), out_dir, full=False,
        only_snapshots=set(by_kind) <= {Kind.SNAPSHOT} and not listing.unknown(),
        whole_history=opts.since_ms is None and opts.until_ms is None,
        lag_written=os.path.isdir(os.path.join(local_path(out_dir), "lag")))
    if not likely:
        return size
    new = _input_bytes(listing, skip=held)
    from mqctl.lagjob.session import driver_java_options

    if driver_java_options(new) != driver_java_options(size):
        say(f"lag report: a likely bounded re-run: the JVM is sized for the {new / 1e6:.0f} MB "
            f"it parses, not the whole {size / 1e6:.0f} MB")
    return new


def _uncompressed_size(path: str, size: int) -> int:
    """A file's size as the report reads it. A local gzip file: its trailer's ISIZE (RFC 1952
    section 2.3.1: the uncompressed length of the last member, mod 2^32), at least five times
    its size (a file of several members, or over 4 GiB). A snapshot capture compresses about
    100-fold (docs/exports.md), so counting gzip files at their size on disk would size a
    10M-row run like a small one. Elsewhere, or unreadable: five times its size."""
    if not path.endswith(".gz"):
        return size
    guess = 5 * size
    if not _local(path) or size < 18:  # (a gzip member's header and trailer take 18 bytes)
        return guess
    try:
        with open(local_path(path), "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            isize = int.from_bytes(fh.read(4), "little")
    except OSError:
        return guess
    return max(isize, guess)


def _local(path: str) -> bool:
    return path.startswith("file:") or "://" not in path


def _absolute(path: str) -> str:
    """A local path made absolute (a URI as it is): the JVM resolves a relative path against
    its own working directory, which is not this process's once it changed directory after the
    session started (a reused session)."""
    if not _local(path):
        return path
    return os.path.abspath(local_path(path))


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


def _check_outputs(out_dir: str, prom_file: str | None, state: str | None = None, *,
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
        if _local(path):
            err = output_location_error(local_path(path), what, directory=directory)
            if err is not None:
                raise err
    if _local(out_dir):  # OUT/summary.csv a FIFO, OUT/report.html a directory, ...
        for name in TEXT_OUTPUTS[:-1] if prom_file else TEXT_OUTPUTS:
            check_output_file(os.path.join(local_path(out_dir), name), "report output")
    owned = [dir_overwrite_error(local_path(out_dir), "report directory",
                                 markers=REPORT_MARKERS, force=force) if _local(out_dir)
             else None]
    if prom_file and _local(prom_file):
        owned.append(overwrite_error(local_path(prom_file), "Prometheus file", own=prom_is_own,
                                     force=force, why="one that ends with its "
                                     "mqctl_lag_report_* series, or an empty file"))
    if state and _local(state) and not _under(local_path(state), local_path(out_dir)):
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


def _check_listing(listing: Any) -> None:
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
    if not _local(out):
        return nullcontext()
    from mqctl.fsutil import dir_lock

    d = local_path(out)
    return dir_lock(d, ".mqctl-lag.lock", f"another mqctl lag report is still writing to {d}",
                    "the previous run has not finished; run the report less often (or give "
                    "each run its own --out)")


def state_lock(state: str | None, out: str) -> AbstractContextManager[None]:
    """The same lock on a ``--state`` outside ``--out`` (two reports into different outputs
    sharing one state would interleave its manifest)."""
    if state is None or not _local(state):
        return nullcontext()
    d, o = local_path(state), local_path(out)
    if os.path.commonpath([os.path.abspath(d), os.path.abspath(o)]) == os.path.abspath(o):
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


def _persistent_rdd_ids(spark: SparkSession) -> set[int] | None:
    """Ids of the RDDs the session holds in storage now (None where the JVM is not reachable,
    e.g. Spark Connect)."""
    try:
        return {int(k) for k in spark.sparkContext._jsc.getPersistentRDDs()}
    except Exception:  # best effort; nothing to release then
        return None


def _release_checkpoints(spark: SparkSession, before: set[int] | None) -> None:
    """Free the blocks of this run's ``localCheckpoint`` cuts. ``unpersist`` does not reach them
    (the checkpointed RDD is not in the cache manager), and a long-lived session (tests, a
    notebook, repeated runs) would otherwise keep every run's cuts in storage memory until
    execution memory runs out ("Could not allocate memory to grow BytesToBytesMap")."""
    if before is None:
        return
    try:
        rdds = spark.sparkContext._jsc.getPersistentRDDs()
        for key in list(rdds.keys()):
            if int(key) not in before:
                rdds[key].unpersist(False)
    except Exception:  # freeing memory must never fail a finished run
        pass


class _Run:
    """One run's state; ``run()`` does the work in order."""

    def __init__(self, spark: SparkSession, listing: Any, out: str, opts: Options,
                 thresholds: list[Any], prom_file: str | None,
                 say: Callable[[str], None]) -> None:
        self.spark = spark
        self.listing = listing
        self.out = out
        self.o = opts
        self.thresholds = thresholds
        self.prom_file = prom_file
        self.written: dict[str, str] = {}
        self.say = say
        self.started = 0.0
        self.persisted: list[DataFrame] = []
        self.current = "read"  # the stage running now (named when Spark fails in it)
        self.notes: list[str] = []
        # the captures opened within --align of the previous one, by cluster (with a
        # bounded re-run's earlier ones): :meth:`_close_captures`
        self.close: dict[str, Close] = {}
        self.timings: dict[str, float] = {}
        self.state: str | None = None  # the ingested table's directory (incremental runs)
        self.full = False
        self.touched: set[str] | None = None  # dates whose observations changed (incremental)
        from mqctl.lagjob.ingest import Manifest

        self.manifest = Manifest()
        self.write_all = True
        # a bounded re-run (mqctl/lagjob/bounded.py): allowed (until it turned out impossible),
        # the batch this run ingested whole (None: none, or not whole), the bound when it is one
        self.may_bound = True
        self.new_batch: int | None = None
        self.clean_ingest = False
        self.aged_out: set[str] = set()  # dates of ingested files no longer among the inputs
        self.deferred = False  # their rows were kept in the table (:func:`ingest.age_out`)
        self.try_bound = False
        self.bound: Any = None
        self.obs_times: DataFrame | None = None  # (cluster, observed_ts) of what was read
        self.kept_counts: dict[str, dict[str, int]] = {}  # (the manifest's ``counts``)
        # the page's series and queue peaks (``series``, ``peaks``; ``series_new``: this run's
        # part of the series): :meth:`_page_frames`
        self.page: dict[str, DataFrame] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a stage (wall seconds, added up per name) and label its Spark jobs with it
        (job group ``mqctl-lag:<name>``: the event log and the status tracker show it)."""
        import time

        self._job_group(name)
        self.current = name
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0
            self._job_group("other")

    def _job_group(self, name: str) -> None:
        try:
            self.spark.sparkContext.setJobGroup(f"mqctl-lag:{name}", name,
                                                interruptOnCancel=False)
        except Exception:  # no SparkContext here (Spark Connect): the timer still works
            pass

    def keep(self, df: DataFrame) -> DataFrame:
        """Cache a frame that several later steps read."""
        from pyspark import StorageLevel

        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        self.persisted.append(df)
        return df

    def keep_read(self, df: DataFrame, paths: dict[Kind, list[str]]) -> DataFrame:
        """Cache a frame read from ``paths`` that several later steps read. With no file to
        read, an empty relation (``Filter(false)``) instead, which the optimiser drops from
        every union and join: a cached empty frame costs a job at each use (with adaptive
        execution every scan of a cached frame is a query stage of its own)."""
        from pyspark.sql import functions as F

        return self.keep(df) if any(paths.values()) else df.where(F.lit(False))

    def cut(self, df: DataFrame, name: str, *, keep_partitioning: bool = False
            ) -> DataFrame:
        """Materialise a stage and cut its lineage (``localCheckpoint``): later stages join and
        window over it several times, and without the cut the analysed plans grow with every
        reuse of the same subtree. ``keep_partitioning``: the rows read back keep ``df``'s
        partitioning and order, so the steps after it inside the same partitioning shuffle
        nothing. (In Spark 4.x a checkpoint taken under adaptive execution is read back with
        an unknown partitioning, ``UnknownPartitioning(0)``; adaptive execution is off for
        that cut's own job only.)"""
        from pyspark import StorageLevel

        from mqctl.lagjob.session import run_settings

        aqe_off = {"spark.sql.adaptive.enabled": "false"} if keep_partitioning else {}
        with self.stage(name), run_settings(self.spark, aqe_off):
            return df.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)

    def cut_counting(self, df: DataFrame, name: str, where: SparkColumn, *,
                     keep_partitioning: bool = False) -> tuple[DataFrame, int]:
        """:meth:`cut`, and how many of its rows match ``where``, counted in the cut's own job
        (an observed metric, ``Dataset.observe``: ``CollectMetricsExec`` passes the rows and
        their partitioning through) where a check of the cut rows was a job of its own."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        seen = Observation(f"mqctl-{name}")
        out = self.cut(df.observe(seen, F.count(F.when(where, F.lit(1))).alias("n")), name,
                       keep_partitioning=keep_partitioning)
        return out, int(seen.get["n"])

    def run(self) -> ReportResult:
        import time

        self.started = time.perf_counter()  # (the report's run time, in its Prometheus file)
        before = _persistent_rdd_ids(self.spark)
        try:
            from mqctl.lagjob.bounded import NotBounded

            quarantined = 0
            while True:
                try:
                    return self._run()
                except NotBounded as why:  # (raised before anything is written)
                    self.say(f"lag report: not a bounded re-run ({why}): computing every "
                             "capture")
                    self.may_bound = False
                except Exception as exc:  # a file Spark could not read: quarantined, again
                    if not self._quarantine_failed_read(exc, quarantined):
                        raise
                    quarantined += 1
                self._restart()
        except Exception as exc:
            failed = spark_failure(exc, self.current, self.written)
            if failed is not None:
                raise failed from exc
            if not isinstance(exc, OSError):
                short = java_failure(exc, self.current)
                if short is not None:  # (the Java stack trace: --debug)
                    raise short from exc
                raise
            # e.g. the disk filled up during the run: name what failed
            from mqctl.fsutil import local_path_error

            err = local_path_error(exc, exc.filename or self.out, "report output")
            done = ", ".join(self.written) or "nothing"
            err.message = f"{err.message}; already written: {done} (the rest was not)"
            err.args = (err.message,)
            raise err from exc
        finally:
            self._unpersist()
            _release_checkpoints(self.spark, before)

    def _quarantine_failed_read(self, exc: Exception, done: int) -> bool:
        """Spark failed to read an input file the listing could not check (a remote file, a
        codec Python cannot check, a file changed or deleted after it was listed): mark it
        unreadable (quarantined, :func:`failed_read`) for the run to start over without it
        (the manifest is read again; nothing of this attempt is committed). False for any
        other failure. After :data:`MAX_FAILED_READS` files: the one-line error."""
        found = failed_read(exc)
        if found is None:
            return False
        uri, cause = found
        path = local_path(uri) if _local(uri) else uri
        if done >= MAX_FAILED_READS:
            raise UsageError(f"Spark could not read input file {path}: {cause} (and "
                             f"{done} other file(s) of this run)",
                             hint=UNREADABLE_HINT) from exc
        if not self.listing.mark_unreadable(path, f"Spark could not read it: {cause}"):
            return False
        self.say(f"lag report: {path}: Spark could not read it ({cause}): quarantined; "
                 "computing again without it")
        return True

    def _restart(self) -> None:
        """Forget what an attempt of :meth:`_run` found (the next one reads it all again)."""
        self._unpersist()
        self.bound, self.notes, self.written, self.close = None, [], {}, {}
        self.touched, self.new_batch, self.clean_ingest = None, None, False
        self.aged_out, self.deferred, self.try_bound = set(), False, False

    def _unpersist(self) -> None:
        for df in self.persisted:
            try:
                df.unpersist()
            except Exception:  # the JVM is gone: the error above says so
                pass
        self.persisted = []

    def _snapshots(self, files: list[Any], run_ms: int) -> tuple[DataFrame, DataFrame]:
        """(observations, bad lines with ``line``) of the snapshot files: through the ingested
        table when the run keeps state (:meth:`_ingest`), else parsed now."""
        if self.state is not None:
            return self._ingest(files, run_ms)
        return self._parse_snapshots([f.path for f in files], run_ms)

    def _ingest(self, files: list[Any], run_ms: int) -> tuple[DataFrame, DataFrame]:
        """Incremental read (:mod:`mqctl.lagjob.ingest`): drop the rows of changed and vanished
        files, parse the new and changed files (and the files with bad lines, never ingested),
        append their rows to the table as a new batch, commit the manifest. Sets
        ``self.touched``: the dates whose observations changed."""
        from pyspark.sql import functions as F

        from mqctl.lagjob import ingest as I
        from mqctl.lagjob import transforms as X
        from mqctl.lagjob import writers as W

        sp, st = self.spark, self.state
        assert st is not None
        man = self.manifest
        plan = I.plan(man, files)
        # an ingested file that cannot be read now changed (its rows go, as a full run has
        # none of it), it did not age out
        current = {f.path for f in files} | {f.path for f in self.listing.unreadable()}
        changed = [p for p in plan.stale if p in current]
        # files that aged out (`snapshot --keep`) while nothing else changed: when the run can
        # be a bounded one, their rows stay in the table (marked) until their whole date is
        # gone, then that partition goes at once; rewriting the date for every deleted file
        # costs about 5 s per 1M rows of it (docs/lag-performance.md)
        self.aged_out = set(plan.stale_dates) if plan.stale and not changed else set()
        self.deferred = bool(self.aged_out) and self.try_bound
        if self.deferred:
            with self.stage("ingest"):
                I.age_out(sp, st, man, plan.stale)
            plan = I.plan(man, files, keep_aged=True)
        for p in plan.kept:  # (an aged-out file given again: its rows are still there)
            man.files[p].pop("aged", None)
        touched = set(plan.stale_dates)
        with self.stage("ingest"):
            gone = [man.files[p]["source"] for p in plan.stale
                    if man.files[p].get("source") and not man.files[p].get("bad")]
            if gone:
                I.drop_rows(sp, st, man, gone, plan.stale_dates)
            for p in plan.stale:
                del man.files[p]
        from_date = None
        if self.o.since_ms is not None:  # --since: a day of history before it is enough
            from_date = _utc_day(self.o.since_ms - X.DAY_MS)
        bad = None
        extra: list[DataFrame] = []  # rows of files that are read every run, never ingested
        to_parse = plan.new + [p for p in plan.kept if man.files[p].get("bad")]
        if to_parse:
            batch = man.next_batch()
            staged_dir, staged = self._stage_snapshots(to_parse, run_ms, batch)
            by_path = {f.path: f for f in files}

            def path_of(source: str) -> str:
                return local_path(source) if W.is_local(source) else source

            with self.stage("ingest"):
                per = {r["source"]: (sorted(d for d in r["dates"] if d), int(r["bad"]))
                       for r in staged.groupBy("source").agg(
                           F.collect_set(X.date_of(F.col("observed_ts"))).alias("dates"),
                           F.count("reason").alias("bad")).collect()}
                bad_files = sorted(s for s, (_d, n) in per.items() if n)
                unmapped = [s for s in per if path_of(s) not in by_path]
                skip = set(bad_files) | set(unmapped)  # re-read every run, never ingested
                if per and not skip:  # the common case: the staged files become the batch
                    I.adopt(sp, staged_dir, W.join(st, I.TABLE))
                    self.new_batch = batch
                elif any(s not in skip for s in per):
                    (staged.filter(~F.col("source").isin(sorted(skip)))
                     .write.mode("append").partitionBy("date").parquet(W.join(st, I.TABLE)))
                known = {path_of(s): s for s in per}
                for p in to_parse:
                    f = by_path[p]
                    src = known.get(p)
                    dates = per[src][0] if src else []
                    if not (p in man.files and man.files[p].get("bad")):
                        touched.update(dates)  # (an unchanged bad file changes nothing)
                    man.files[p] = {"size": f.size, "mtime_ms": f.mtime_ms, "source": src,
                                    "dates": dates, "bad": src in skip if src else False}
                man.batches.append(batch)
            if unmapped:
                extra.append(staged.filter(F.col("source").isin(sorted(unmapped))
                                           & F.col("reason").isNull()).select(*X.SNAPSHOT_OBS))
            if bad_files:
                obs_b, bad = self._reparse_bad_files(bad_files, run_ms)
                extra.append(obs_b)
        if plan.stale or to_parse:
            man.pending = sorted(set(man.pending) | touched)
            if self.write_all:  # until this run completes, no earlier output is trusted
                man.fingerprint = ""
            with self.stage("ingest"):
                I.save(sp, st, man)
        base = I.table(sp, st, man, from_date)
        obs_frames = ([] if base is None else [base.select(*X.SNAPSHOT_OBS)]) + extra
        if not obs_frames:
            obs_frames.append(self.spark.createDataFrame([], X.SNAPSHOT_OBS_DDL))
        obs = obs_frames[0]
        for f in obs_frames[1:]:
            obs = obs.unionByName(f)
        if bad is None:
            from mqctl.lagjob import schemas

            bad = sp.createDataFrame([], schemas.BAD)
        self.touched = touched
        # a bounded re-run needs every earlier row as it was and only whole new files
        self.clean_ingest = (not changed and not extra
                             and not any(m.get("bad") for m in man.files.values()))
        return obs, bad

    def _parse_snapshots(self, snap_paths: list[str], run_ms: int
                         ) -> tuple[DataFrame, DataFrame]:
        """(observations, bad lines with ``line``) of the snapshot files (a run without state),
        each JSON record parsed once: Spark's JSON reader with the schema for every file; a
        file with any bad record is read again as text (:meth:`_reparse_bad_files`). Both paths
        find the same bad records (:func:`transforms.check_snapshot_records`); the first only
        asks which files have one (``reasons=False``), the text pass names each reason."""
        from pyspark.sql import functions as F

        from mqctl.lagjob import readers
        from mqctl.lagjob import transforms as X

        sp = self.spark
        fast = self.cut(X.check_snapshot_records(readers.read_snapshot_json(sp, snap_paths),
                                                 run_ms, reasons=False), "parse snapshots")
        with self.stage("parse snapshots"):
            bad_files = sorted(r["source"] for r in fast.filter(F.col("reason").isNotNull())
                               .select("source").distinct().collect())
        obs, bad = X.split_snapshot_records(fast)
        if not bad_files:
            return obs, bad.withColumn("line", F.lit(None).cast("long"))
        obs_b, bad_b = self._reparse_bad_files(bad_files, run_ms)
        return obs.filter(~F.col("source").isin(bad_files)).unionByName(obs_b), bad_b

    def _reparse_bad_files(self, bad_files: list[str], run_ms: int
                           ) -> tuple[DataFrame, DataFrame]:
        """(observations, bad lines with ``line``) of the files with bad lines, read as text
        (:func:`readers.read_snapshots`): each bad line keeps its number and content."""
        from mqctl.lagjob import readers
        from mqctl.lagjob import transforms as X

        records, lines = readers.read_snapshots(self.spark, bad_files, run_ms)
        records = self.cut(records, "parse snapshots (files with bad lines)")
        obs_b, bad_b = X.split_snapshot_records(records)
        return obs_b, X.line_numbers(bad_b, lines)

    def _bounded_observations(self) -> tuple[DataFrame, DataFrame]:
        """(the look-back's and the new captures' observations, every ingested observation)
        of a bounded re-run; sets ``self.bound`` (:func:`bounded.plan`, which raises
        :class:`bounded.NotBounded` when the new captures do not all follow the earlier
        ones)."""
        from pyspark.sql import functions as F

        from mqctl.lagjob import bounded as B
        from mqctl.lagjob import ingest as I
        from mqctl.lagjob import transforms as X
        from mqctl.timeparse import format_ms

        sp, st, man = self.spark, self.state, self.manifest
        assert st is not None
        with self.stage("bound"):
            self.bound = b = B.plan(B.table_times(sp, st, man, self.new_batch,
                                                  sorted(self.touched or ())),
                                    self.o.window)
        from_date = _utc_day(b.from_ts)
        if self.aged_out and max(self.aged_out) >= from_date:
            raise B.NotBounded("an input file of the look-back's dates is gone")
        recent, everything = I.table(sp, st, man, from_date), I.table(sp, st, man)
        assert recent is not None and everything is not None  # (this run ingested a batch)
        self.say("lag report: a bounded re-run: the captures from "
                 f"{format_ms(b.new_ts)}, with the earlier ones from {format_ms(b.from_ts)}")
        return (recent.select(*X.SNAPSHOT_OBS).filter(F.col("observed_ts") >= F.lit(b.from_ts)),
                everything.select(*X.SNAPSHOT_OBS))

    def _append_new(self, new: dict[str, DataFrame]) -> tuple[DataFrame, DataFrame]:
        """Bounded re-run: add the new captures' rows of ``lag`` and ``group_status`` to their
        date partitions; returns both datasets read back whole. Until the run completes, the
        earlier outputs are not trusted: the manifest's fingerprint is cleared first, so a run
        that dies in between (part of the rows added) makes the next one rewrite every date."""
        from pyspark.sql import functions as F

        from mqctl.lagjob import bounded as B
        from mqctl.lagjob import ingest as I
        from mqctl.lagjob import writers as W

        sp, man = self.spark, self.manifest
        man.fingerprint = ""
        I.save(sp, self.state or "", man)
        back = {}
        for name, df in new.items():
            path = W.join(self.out, name)
            self.say(f"lag report: adding the new captures to {name}")
            with self.stage("write " + name):
                B.append_partitions(sp, df, path, W.join(self.out, f"_new-{name}"))
            self.written[name] = path
            back[name] = (sp.read.parquet(path).withColumn("date", F.col("date").cast("string"))
                          .select(*(LAG_COLUMNS if name == "lag" else GROUP_COLUMNS)))
        return back["lag"], back["group_status"]

    def _save_derived(self, history: DataFrame, changes: DataFrame, resets: DataFrame,
                      unowned: DataFrame, times: DataFrame, rep: Report, obs: DataFrame
                      ) -> None:
        """Write the derived state (:mod:`mqctl.lagjob.bounded`) as a new batch: a bounded
        run adds its new rows (the whole of each part once there are ``COMPACT_AFTER``
        batches), any other run the whole of each; the parts of ``bounded.WHOLE`` are always
        whole, the broker history cut to what later time lags need (``obs``: the run's
        observations, :func:`bounded.history_frame`). Committed by the manifest the caller
        saves next."""
        from pyspark.sql import functions as F

        from mqctl.lagjob import bounded as B

        sp, st, man, bound = self.spark, self.state or "", self.manifest, self.bound
        gen = max([0, *man.batches, *man.derived]) + 1  # (ids of their own; never reused)
        whole = bound is None or len(man.derived) >= B.COMPACT_AFTER
        # a bounded run over a long history cuts it once after a full run, then as it compacts
        cut = (bound is not None and bound.captures > B.CUT_AFTER * (self.o.window + 1)
               and (whole or not man.history_cut)
               and B.part_bytes(sp, st, "history") > B.CUT_BYTES)
        cuts: list[tuple[str, DataFrame]] = []
        if cut:  # (rewritten whole: the points dropped go; read by two parts)
            whole = True
            framed = self.cut(B.history_frame(history, obs, self.o.window), "keep history")
            history, cuts = B.kept_history(framed), [("cuts", B.history_cuts(framed))]
        elif whole and bound is not None and man.history_cut:  # (dropped earlier: still)
            cuts = [("cuts", B.read(sp, st, "cuts", man.derived))]
        man.history_cut = cut or (bound is not None and man.history_cut)
        with self.stage("derived state"):
            if not whole:
                new = F.lit(bound.new_ts)
                history, changes = history.filter(F.col("t") >= new), changes.filter(
                    F.col("ts") >= new)
                resets = resets.filter(F.col("ts") >= new)
            series = self.page["series_new" if not whole else "series"]
            if bound is not None:  # (a bounded run read only the look-back's and the new)
                times = times.filter(F.col("observed_ts") >= F.lit(bound.new_ts))
                if whole:
                    times = B.read(sp, st, "times", man.derived).unionByName(times)
            B.write_parts(sp, st, [("history", history), ("changes", changes),
                                   *cuts, ("resets", resets), ("unowned", unowned),
                                   ("times", times.distinct()), ("latest", rep.latest_base),
                                   ("groups", rep.groups_base), ("series", series),
                                   ("peaks", self.page["peaks"]),
                                   ("brokers", self.page["brokers"])], gen, whole=whole)
        man.derived = [gen] if whole else [*man.derived, gen]

    def _check_bound(self, dedup: DataFrame, table_all: DataFrame | None, cuts: DataFrame
                     ) -> None:
        """Raise :class:`bounded.NotBounded` when a queue of the new captures lacks look-back
        (:func:`bounded.check_frame`) and has observations before it (in ``table_all``, every
        ingested observation), or when an observation's time lag may need a point of the
        broker history the derived state no longer keeps (:func:`bounded.history_misses`)."""
        assert table_all is not None
        from pyspark.sql import functions as F

        from mqctl.lagjob import bounded as B
        from mqctl.lagjob.transforms import GQUEUE

        b = self.bound
        with self.stage("bound"):
            # (one job: the short queues, and one observation the kept history may miss)
            miss = B.history_misses(dedup, cuts).select(*GQUEUE, F.lit(True).alias("_miss"))
            rows = B.check_frame(dedup, b.new_ts, self.o.window).withColumn(
                "_miss", F.lit(False)).limit(B.MAX_SHORT_KEYS + 1).unionByName(
                miss.limit(1)).collect()
            if any(r["_miss"] for r in rows):
                raise B.NotBounded("an offset is below the broker history the derived state "
                                   "keeps (rewound, or a group that starts far behind)")
            short = [r[:len(GQUEUE)] for r in rows if not r["_miss"]]
            if len(short) > B.MAX_SHORT_KEYS:
                raise B.NotBounded(f"more than {B.MAX_SHORT_KEYS} queues have a short look-back")
            if short:
                keys = self.spark.createDataFrame(short, dedup.select(*GQUEUE).schema)
                if B.earlier_rows(table_all, keys, b.from_ts):
                    raise B.NotBounded("a queue was not seen in the last "
                                       f"{self.o.window + 1} captures")

    def _stage_snapshots(self, paths: list[str], run_ms: int, batch: int
                         ) -> tuple[str, DataFrame]:
        """Parse and check the snapshot files in one pass, written as Parquet to a staging
        directory of the state in the ingested table's layout (``date=`` partitions,
        ``batch``); returns the directory and its rows read back. No checkpoint of the parsed
        rows: the write is the only pass over the JSON, and a batch without bad lines becomes
        part of the table by moving its files (:func:`ingest.adopt`)."""
        from pyspark.sql import functions as F

        from mqctl.lagjob import ingest as I
        from mqctl.lagjob import readers
        from mqctl.lagjob import transforms as X
        from mqctl.lagjob import writers as W

        sp, st = self.spark, self.state
        assert st is not None
        staging = W.join(st, f"{I.STAGING}-{batch}")
        with self.stage("parse snapshots"):
            I.clear_staging(sp, st)
            # (which lines are bad is all the staged rows keep: a file with a bad line is read
            # again as text, which names the reasons)
            checked = X.check_snapshot_records(readers.read_snapshot_json(sp, paths), run_ms,
                                               reasons=False)
            (X.with_date(checked, "observed_ts").select(*X.SNAPSHOT_OBS, "reason", "date")
             .withColumn("batch", F.lit(batch))
             .write.partitionBy("date").parquet(staging))
        # (the schema given: a write of files without rows leaves no file to infer it from)
        return staging, sp.read.schema(
            f"{X.SNAPSHOT_OBS_DDL}, reason string, batch int, date date").parquet(staging)

    # -----------------------------------------------------------------------------------------
    def _run(self) -> ReportResult:
        """One attempt: the stages of :mod:`mqctl.lagjob.stages` in order, with the state's
        I/O between them (docs/architecture.md, "The lag report's stages")."""
        from mqctl.lagjob import stages as S
        from mqctl.timeparse import now_ms

        sp, o = self.spark, self.o
        by_kind = self.listing.by_kind()
        paths = {k: [f.path for f in v] for k, v in by_kind.items()}
        inputs = self._count_inputs(by_kind)
        fp = o.fingerprint()
        keep_derived = self._open_state(by_kind, fp)
        snapshots, table_all = self._read_snapshots(by_kind)
        read = S.captures(self, o, S.read(self, sp, o, paths, self.listing, snapshots),
                          None if self.bound is None else int(self.bound.new_ts))
        self._close_captures(read.close)
        # (derived state: times, each with its capture)
        self.obs_times = read.obs.select("cluster", "observed_ts", "capture_ts")
        earlier = self._earlier()
        check = None if earlier is None else (
            lambda d: self._check_bound(d, table_all, earlier.cuts))
        lagged = S.lag(self, o, read, [k for k, v in paths.items() if v], LAG_COLUMNS,
                       earlier, check)
        gt = gt_new = S.group_status(self, o, lagged.lag_new, GROUP_COLUMNS)
        lag_all = lagged.lag
        if earlier is not None:  # appended to the earlier dates, then read whole
            lag_all, gt = self._append_new({"lag": lagged.lag_new, "group_status": gt})
        has_logs = any(paths.get(k) for k in S.LOG_KINDS)
        reb = S.rebalance(self, o, lagged, read.logs, has_logs, earlier, keep_derived)
        run_ts = now_ms()
        quarantine = S.quarantine(self, sp, o, read.bad, self.listing.files, run_ts,
                                  read.log_bad)
        rep = S.report(self, o, lag_all, gt, reb, quarantine, self._latest(gt_new))
        # bounded: lag and group_status are counted in the new rows, added to the earlier
        # counts (the manifest's): neither is read whole
        counted = rep.datasets if earlier is None else {
            **rep.datasets, "lag": lagged.lag_new, "group_status": gt_new}
        stats = self._with_earlier_counts(S.count(
            self, counted, self._extra_counts(rep, counted["lag"], read.obs, lagged, earlier)))
        self.page = self._page_frames(rep, lagged.lag_new, gt_new)
        ds_dates = {name: sorted(d for d in stats.get(name, {}) if d) for name in rep.datasets}
        run_dates = sorted(set().union(*ds_dates.values()))
        counts = self._counts(stats, earlier is not None)
        self._write_datasets(rep.datasets, ds_dates, run_dates, bounded=earlier is not None,
                             rows={name: _total(stats, name) for name in rep.datasets})
        return self._summaries(rep, stats, counts, inputs, run_dates, run_ts, keep_derived,
                               lagged, reb, fp)

    def _close_captures(self, found: dict[str, Close]) -> None:
        """The captures opened within --align of the previous one (:mod:`alignment`): what
        this run found, plus a bounded re-run's earlier ones (the manifest's; this run counted
        only the new captures), as a full run over the same inputs counts them."""
        close = {c: Close.from_json(v) for c, v in self.manifest.close.items()} \
            if self.bound is not None else {}
        for cluster, c in found.items():
            close.setdefault(cluster, Close()).add(c)
        self.close = close

    def _count_inputs(self, by_kind: dict[Kind, list[Any]]) -> dict[str, int]:
        """Input files per kind (and unrecognised, ignored, unreadable ones), said on stderr;
        notes for the unreadable files and the inputs that matched nothing."""
        inputs = {k.value: len(v) for k, v in sorted(by_kind.items())}
        if self.listing.unknown():
            inputs["unrecognised"] = len(self.listing.unknown())
        if self.listing.ignored():
            inputs["ignored"] = len(self.listing.ignored())
        unreadable = self.listing.unreadable()
        if unreadable:
            inputs["unreadable"] = len(unreadable)
            shown = "; ".join(f"{f.path}: {f.unreadable}" for f in unreadable[:5])
            more = f"; and {len(unreadable) - 5} more" if len(unreadable) > 5 else ""
            self.notes.append(f"{len(unreadable)} input file(s) could not be read and were "
                              f"quarantined whole (OUT/quarantine, reason 'unreadable file'): "
                              f"{shown}{more}")
        for u in self.listing.unmatched:
            self.notes.append(f"input matched no file: {u}")
        self.say("lag report: reading " + ", ".join(f"{n} {k}" for k, n in inputs.items())
                 + " file(s)")
        return inputs

    def _open_state(self, by_kind: dict[Kind, list[Any]], fp: str) -> bool:
        """Load the manifest (a new one without state, with --full or an unreadable one) and
        decide what the run may keep: ``write_all`` (rewrite every date) and ``try_bound``
        (a bounded re-run may be possible). Returns whether the run keeps the derived state
        (runs over snapshots only and the whole history)."""
        from mqctl.lagjob import writers as W

        sp, o = self.spark, self.o
        only_snapshots = set(by_kind) <= {Kind.SNAPSHOT} and not self.listing.unknown()
        whole_history = o.since_ms is None and o.until_ms is None
        if self.state is None:
            self.write_all, self.try_bound = True, False
            return False
        from mqctl.lagjob import ingest as I

        man = None if self.full else I.load(sp, self.state)
        if man is None:  # none yet, unreadable, or --full: start over
            I.delete(sp, W.join(self.state, I.TABLE))
            man = I.Manifest()
        self.manifest = man
        self.write_all, bound = bound_possible(
            man, fp, self.out, full=self.full, only_snapshots=only_snapshots,
            whole_history=whole_history, lag_written=I.exists(sp, W.join(self.out, "lag")))
        self.try_bound = self.may_bound and bound
        if self.try_bound:
            from mqctl.lagjob import bounded as B

            missing = B.missing(sp, self.state) + ([] if man.counts else ["counts"])
            if missing:  # (removed, or a state of a version without that part)
                self.say(f"lag report: the derived state lacks {', '.join(missing)} (removed, "
                         "or written by an earlier version): computing every capture")
            self.try_bound = not missing
        return only_snapshots and whole_history

    def _read_snapshots(self, by_kind: dict[Kind, list[Any]]
                        ) -> tuple[tuple[DataFrame, DataFrame] | None, DataFrame | None]:
        """(the snapshots' observations and bad lines, or None without snapshot files;
        bounded: every ingested observation, for the look-back check). A bounded re-run reads
        only the look-back's and the new captures' observations (sets ``self.bound``)."""
        from mqctl.timeparse import now_ms

        if not by_kind.get(Kind.SNAPSHOT):
            return None, None
        table_all = None
        obs_s, bad_s = self._snapshots(by_kind[Kind.SNAPSHOT], now_ms())
        if self.try_bound and self.clean_ingest and self.new_batch is not None:
            obs_s, table_all = self._bounded_observations()
        elif self.deferred:  # (any other run reads the table without their rows)
            from mqctl.lagjob.bounded import NotBounded

            raise NotBounded("capture files aged out, and no new capture")
        return (obs_s, bad_s), table_all

    def _earlier(self) -> Earlier | None:
        """A bounded re-run's :class:`stages.Earlier`: the derived state the previous runs
        left (lazy reads), before the look-back; None for any other run."""
        if self.bound is None:
            return None
        from pyspark.sql import functions as F

        from mqctl.lagjob import bounded as B
        from mqctl.lagjob.stages import Earlier

        sp, st, done, b = self.spark, self.state or "", self.manifest.derived, self.bound
        return Earlier(history=B.read(sp, st, "history", done).filter(
                           F.col("t") < F.lit(b.from_ts)),
                       cuts=B.read(sp, st, "cuts", done),
                       changes=B.read(sp, st, "changes", done),
                       resets=B.read(sp, st, "resets", done),
                       unowned=B.read(sp, st, "unowned", done), from_ts=b.from_ts,
                       new_ts=b.new_ts)

    def _latest(self, gt_new: DataFrame) -> Latest | None:
        """A bounded re-run's earlier latest rows (the derived state's ``latest`` and
        ``groups``, in the shape the new captures' give them) and the new group-topic rows;
        None for any other run."""
        if self.bound is None:
            return None
        from mqctl.lagjob import bounded as B
        from mqctl.lagjob import transforms as X
        from mqctl.lagjob.stages import Latest

        sp, st, done = self.spark, self.state or "", self.manifest.derived
        return Latest(
            latest=B.read(sp, st, "latest", done, X.latest_status_rows(gt_new).schema),
            groups=B.read(sp, st, "groups", done, X.latest_groups_rows(gt_new).schema),
            gt_new=gt_new)

    def _page_frames(self, rep: Report, lag_new: DataFrame, gt_new: DataFrame
                     ) -> dict[str, DataFrame]:
        """The page's totals per group and capture and peak lag per queue
        (:func:`html.collect.group_series`, :func:`html.collect.queue_peaks`): of the
        datasets; bounded: the derived state's merged with the new captures' (``series_new``:
        what the run adds to the derived state's series)."""
        from mqctl.lagjob.html import collect as G

        if self.bound is None:
            series = G.group_series(rep.datasets["group_status"])
            return {"series": series, "series_new": series,
                    "peaks": G.queue_peaks(rep.datasets["lag"])}
        from mqctl.lagjob import bounded as B

        sp, st, done = self.spark, self.state or "", self.manifest.derived
        new, new_peaks = G.group_series(gt_new), G.queue_peaks(lag_new)
        earlier = B.read(sp, st, "series", done, new.schema)
        peaks = B.read(sp, st, "peaks", done, new_peaks.schema)
        return {"series": earlier.unionByName(new), "series_new": new,
                "peaks": G.merge_queue_peaks(peaks, new_peaks)}

    def _with_earlier_counts(self, stats: dict[str, dict[str | None, int]]
                             ) -> dict[str, dict[str | None, int]]:
        """``stats`` with a bounded re-run's earlier counts added (the manifest's ``counts``:
        rows per date of lag and group_status, and the counts read from lag) and the result
        kept for the manifest (``self.kept_counts``)."""
        out = dict(stats)
        if self.bound is not None:
            for name, per in self.manifest.counts.items():
                merged = {(str(d) if d is not None else None): n
                          for d, n in out.get(name, {}).items()}
                for d, n in per.items():
                    k = d or None
                    merged[k] = merged.get(k, 0) + n
                out[name] = merged
        self.kept_counts = {name: {("" if d is None else str(d)): n
                                   for d, n in out.get(name, {}).items()}
                            for name in KEPT_COUNTS}
        return out

    def _extra_counts(self, rep: Report, lag: DataFrame, obs: DataFrame, lagged: Lagged,
                      earlier: Earlier | None
                      ) -> dict[str, DataFrame]:
        """The frames counted next to the datasets (in the same job); ``lag``: the lag rows
        counted (bounded: the new ones)."""
        from pyspark.sql import functions as F

        events, locks = (rep.datasets[k] for k in ("rebalance/events", "rebalance/locks"))
        extra: dict[str, DataFrame] = {
            "observations": obs, "latest": rep.latest, "groups": rep.groups,
            "lock_takeovers": locks.filter(F.col("takeover")),
            "reset_events": events.filter(F.col("cause") == "reset"),
            "owner_unknown": lag.filter(F.coalesce(F.col("owner_unknown"), F.lit(False))),
            "never_committed": lag.filter(F.col("committed").eqNullSafe(F.lit(False)))}
        if earlier is not None:  # (only the look-back and the new captures were read)
            extra["obs_new"] = obs.filter(F.col("capture_ts") >= F.lit(earlier.new_ts))
            extra["lag_new"] = lagged.lag_new
        return extra

    def _counts(self, stats: dict[str, dict[str | None, int]], bounded: bool
                ) -> dict[str, int]:
        """The run's counts (summary.json ``counts``); records the duplicates in the
        manifest (a bounded re-run adds the new captures' to the earlier ones)."""
        def total(name: str) -> int:
            return _total(stats, name)

        n_obs, n_lag = total("observations"), total("lag")
        if bounded:  # the earlier duplicates (kept) and the new captures' ones
            n_obs = n_lag + self.manifest.duplicates + total("obs_new") - total("lag_new")
        self.manifest.duplicates = n_obs - n_lag
        return {
            "observations": n_obs, "lag_rows": n_lag, "duplicates": n_obs - n_lag,
            "group_topic_rows": total("group_status"), "rebalance_events":
                total("rebalance/events") - total("reset_events"),
            "reset_events": total("reset_events"), "queue_moves": total("rebalance/moves"),
            "unowned_intervals": total("rebalance/unowned"), "storms": total("rebalance/storms"),
            "lock_events": total("rebalance/locks"), "lock_takeovers": total("lock_takeovers"),
            "owner_unknown": total("owner_unknown"), "never_committed": total("never_committed"),
        }

    def _write_datasets(self, datasets: dict[str, DataFrame], ds_dates: dict[str, list[str]],
                        run_dates: list[str], *, bounded: bool,
                        rows: dict[str, int] | None = None) -> None:
        """Write every dataset's date partitions (a bounded re-run appended lag and
        group_status already). An incremental run rewrites the big per-capture datasets only
        from the first date whose observations changed: a row depends on its capture and
        earlier ones only (status window, time-lag brackets, previous owner), so earlier dates
        are unchanged (but a capture that began up to --align before the first changed
        date)."""
        from pyspark.sql import functions as F

        from mqctl.lagjob import writers as W

        written = self.written  # what a failed write reports as done
        write_from: str | None = None
        if not self.write_all:
            changed = sorted(set(self.manifest.pending) | (self.touched or set()))
            # (a record of the first changed date can belong to a capture that began up to
            # --align before it, on the date before: its rows are dated by the capture)
            write_from = (_utc_day(_day_start_ms(changed[0]) - self.o.align_ms) if changed
                          else "9999-12-31")
        for name, df in datasets.items():
            path = W.join(self.out, name)
            per_capture = name in ("lag", "group_status")
            if bounded and per_capture:
                continue  # (appended: _append_new)
            dates, all_dates = ds_dates[name], run_dates
            if write_from is not None and per_capture:
                dates = [d for d in dates if d >= write_from]
                all_dates = [d for d in run_dates if d >= write_from]
                df = df.filter(F.col("date") >= write_from)
                if not all_dates:
                    self.say(f"lag report: {name} unchanged")
                    written[name] = path
                    continue
            self.say(f"lag report: writing {name} ({len(dates)} date partition(s))")
            with self.stage("write " + name):
                W.write_partitioned(self.spark, df, path, all_dates, dates,
                                    one_file_per_date=not per_capture,
                                    rows=(rows or {}).get(name))
            written[name] = path

    def _summaries(self, rep: Report, stats: dict[str, dict[str | None, int]],
                   counts: dict[str, int], inputs: dict[str, int], run_dates: list[str],
                   run_ts: int, keep_derived: bool, lagged: Lagged, reb: Rebalance, fp: str
                   ) -> ReportResult:
        """summary.csv, the Prometheus file, report.html and summary.json, then the state
        (committed last: it matches the outputs)."""
        import time

        from pyspark.sql import functions as F

        from mqctl.lagjob import writers as W
        from mqctl.lagjob.thresholds import evaluate

        t_sum = time.perf_counter()
        self._job_group("summaries")
        sp, o, written = self.spark, self.o, self.written
        n_latest, n_groups = _total(stats, "latest"), _total(stats, "groups")
        d = rep.datasets
        frames = {"gt": d["group_status"], "lag": d["lag"], "events": d["rebalance/events"],
                  "storms": d["rebalance/storms"], "unowned": d["rebalance/unowned"],
                  "locks": d["rebalance/locks"], **{k: self.page[k] for k in ("series", "peaks")}}
        # one job: the summary rows, the quarantine's reasons and, when every
        # group is charted, the page's two collects
        parts: dict[str, DataFrame] = {}
        if _total(stats, "quarantine"):
            parts["q"] = d["quarantine"].groupBy("reason").agg(F.count(F.lit(1)).alias("n"))
        first_limit = n_groups * o.chart_points + 1
        marked = {"has_events": bool(counts["rebalance_events"] or counts["reset_events"]),
                  "has_storms": bool(counts["storms"])}
        if 0 < n_groups <= min(o.chart_groups, o.summary_limit):
            from mqctl.lagjob.html import collect as G

            parts["h"] = G.first_collect(frames["series"], frames["peaks"], first_limit)
            parts["p"] = G.second_collect(G.ReportFrames(**frames), self._limits(), n_groups,
                                          **marked)
        summary, group_rows, more = self._summary_rows(rep, parts)
        qcounts = {r["reason"]: int(r["n"]) for r in more.get("q", [])}
        quarantined = sum(qcounts.values())
        totals = {"quarantined": quarantined, "storms": counts["storms"],
                  "lock_takeovers": counts["lock_takeovers"]}
        breaches = evaluate(self.thresholds, rep.latest, totals)
        totals["breaches"] = len({b.expr for b in breaches})
        self._add_notes(counts)
        from mqctl.lagjob import alignment

        warnings = alignment.warnings(self.close, o.align_ms, o.window)
        rows = _Rows(rep, summary, group_rows, n_latest, n_groups, self._said)
        # CSV of every group/topic (the reasons as one cell, "; " between them)
        csv_path = W.join(self.out, "summary.csv")
        W.write_text(sp, csv_path, W.csv_text(SUMMARY_COLUMNS, (
            {**r, "health_reasons": "; ".join(r.get("health_reasons") or [])}
            for r in rows.latest(True))))
        written["summary_csv"] = csv_path
        self._write_prometheus(rep, rows, totals, lagged.lag_new)
        html_path = W.join(self.out, "report.html")
        first = (more["h"], first_limit) if "h" in parts else None
        W.write_text(sp, html_path, self._html(frames, group_rows, summary, counts,
                                               quarantined, run_ts, marked, first,
                                               more.get("p"), warnings))
        written["html"] = html_path
        from mqctl.timeparse import format_ms

        data = {
            "generated_ts": run_ts, "generated_at": format_ms(run_ts), "window": o.window,
            "inputs": inputs, "counts": counts, "dates": run_dates,
            "quarantine": {"total": quarantined, "by_reason": qcounts},
            "breaches": [b.to_dict() for b in breaches],
            "groups": group_rows, "summary": summary, "summary_rows": n_latest,
            "truncated": n_latest > len(summary), "paths": written, "notes": self.notes,
            "warnings": warnings,
        }
        json_path = W.join(self.out, "summary.json")
        written["summary_json"] = json_path
        W.write_text(sp, json_path, W.json_text(data))
        if self.state is not None:  # everything is written: the state matches the outputs
            self._commit_state(keep_derived, lagged, reb, rep, fp)
        self.timings["summaries"] = time.perf_counter() - t_sum
        self.say(f"lag report: done ({counts['lag_rows']} lag row(s), {quarantined} "
                 "quarantined)")
        return ReportResult(summary=summary, groups=group_rows, paths=written,
                            quarantine=qcounts, quarantined=quarantined, breaches=breaches,
                            counts=counts, inputs=inputs, dates=run_dates,
                            truncated=n_latest > len(summary), notes=list(self.notes),
                            warnings=warnings, timings=dict(self.timings))

    def _summary_rows(self, rep: Report, more: dict[str, DataFrame]
                      ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, list[Any]]]:
        """The first ``summary_limit`` rows per group and topic and per group, worst first,
        and every row of the frames of ``more`` (by name), in one collect (one job where there were
        one per frame), each frame's rows in a struct column of its
        own. A sort under a limit is one partition in that order (``TakeOrderedAndProjectExec``:
        its ``outputOrdering`` is the sort order) and a union's partitions are its children's
        in turn, so the rows of each arrive in order."""
        from mqctl.lagjob.sqltext import ident, sql_text

        said, limit = self._said, self.o.summary_limit
        frames = {"l": rep.latest.orderBy(*_latest_order()).limit(limit),
                  "g": rep.groups.orderBy(*_groups_order()).limit(limit), **more}
        both: DataFrame | None = None
        for tag, df in frames.items():
            # (SQL text: ``struct(*)`` is one expression, not a Column per field)
            part = df.selectExpr(f"{sql_text(tag)} AS _part", f"struct(*) AS {ident('_' + tag)}")
            both = part if both is None else both.unionByName(part, allowMissingColumns=True)
        assert both is not None
        got: dict[str, list[Any]] = {tag: [] for tag in frames}
        for r in both.collect():
            got[r["_part"]].append(r["_" + r["_part"]])
        return ([said(r.asDict()) for r in got.pop("l")], [said(r.asDict()) for r in got.pop("g")],
                got)

    def _add_notes(self, counts: dict[str, int]) -> None:
        dupes = counts["duplicates"]
        if dupes:
            self.notes.append(f"{dupes} duplicate observation(s) of the same queue at the same "
                              "time were merged (the same capture given twice, or two sources "
                              "of one time; the source decides: docs/exports.md section 2.6)")
        if counts["owner_unknown"]:
            self.notes.append(
                f"{counts['owner_unknown']} queue observation(s) with the owner unknown (lag/ "
                "owner_unknown): a member did not answer its running info (members_unanswered) "
                "and no answering member claims the queue; the previous owner is carried "
                "across, with no rebalance, move or unowned interval from it")
        if counts["never_committed"]:
            self.notes.append(
                f"{counts['never_committed']} queue observation(s) without a committed offset "
                "(lag/ committed false): consumer offset none (null), LAG counts the whole "
                "queue as mqadmin's Diff does (where a consumer would start depends on its "
                "consumeFromWhere), time lag unknown, status only OK (nothing to consume) or "
                "STOP (group offline)")
        ignored = self.listing.ignored()
        if ignored:
            self.notes.append(f"{len(ignored)} file(s) ignored: "
                              + "; ".join(sorted({f.ignored for f in ignored})))

    def _write_prometheus(self, rep: Report, rows: _Rows, totals: dict[str, int],
                          lag_new: DataFrame) -> None:
        import time

        from pyspark.sql import functions as F

        from mqctl.lagjob import writers as W
        from mqctl.timeparse import now_ms

        if rows.n_groups <= len(rows.group_rows):  # every group is collected: no job
            stamps = [r["capture_ts"] for r in rows.group_rows
                      if r.get("capture_ts") is not None]
            last: Any = {"n": rows.n_groups, "t": max(stamps) if stamps else None}
        else:
            last = rep.groups.agg(F.max("capture_ts").alias("t"),
                                  F.count(F.lit(1)).alias("n")).collect()[0]
        every = rows.n_latest <= len(rows.summary)  # (every latest row is collected)
        brokers = self._brokers(rep, lag_new, rows.summary if every else None)
        order = ("cluster", "group", "topic", "broker")
        broker_rows: Iterable[dict[str, Any]]
        if every:  # a few rows: one collect, sorted here
            # (Spark's ascending order: nulls first; strings by code point, as UTF-8 bytes)
            broker_rows = sorted((r.asDict() for r in brokers.collect()), key=lambda r: tuple(
                (r[k] is not None, r[k]) for k in order))
        else:  # (streamed: a partition at a time)
            broker_rows = (r.asDict() for r in brokers.orderBy(*order).toLocalIterator())
        prom_text = W.render_prometheus(
            rows.latest(False), rows.groups(), {
                **totals, "groups": int(last["n"]),
                "last_capture_s": last["t"] / 1000.0 if last["t"] is not None else None,
                "duration_s": round(time.perf_counter() - self.started, 3)},
            now_ms(), broker_rows)
        prom_path = self.prom_file or W.join(self.out, "mqctl_lag.prom")
        W.write_text(self.spark, prom_path, prom_text)
        self.written["prometheus"] = prom_path

    def _brokers(self, rep: Report, lag_new: DataFrame,
                 latest_rows: list[dict[str, Any]] | None) -> DataFrame:
        """The Prometheus file's rows per group, topic and broker at each group and topic's
        latest capture (:func:`transforms.latest_per_broker`; ``lag_new``: the rows of ``lag``
        this run computed, ``Lagged.lag_new``; ``latest_rows``: every latest row, when
        collected). A bounded re-run reads none of ``lag`` back for them: a group and topic with
        rows in the new captures has its latest capture
        there, so its rows come from the new rows; any other keeps the rows the derived
        state's ``brokers`` holds (its latest capture, and the rows of ``lag`` at it, are
        what they were at the run that wrote them). Kept as this run's ``brokers`` part."""
        from pyspark.sql import functions as F

        from mqctl.lagjob import transforms as X

        if self.bound is None:
            out = X.latest_per_broker(rep.datasets["lag"], rep.latest, latest_rows)
        else:
            from mqctl.lagjob import bounded as B

            new_ts = int(self.bound.new_ts)
            latest_new = rep.latest.filter(F.col("capture_ts") >= F.lit(new_ts))
            rows_new = None if latest_rows is None else [
                r for r in latest_rows
                if r.get("capture_ts") is not None and int(r["capture_ts"]) >= new_ts]
            new = X.latest_per_broker(lag_new, latest_new, rows_new)
            earlier = B.read(self.spark, self.state or "", "brokers", self.manifest.derived,
                             new.schema)
            # (no key of a per-broker row is null: a latest row with a null key has none)
            keys = ["cluster", "group", "topic"]
            out = (earlier.join(latest_new.select(*keys).distinct(), on=keys, how="left_anti")
                   .unionByName(new))
        self.page["brokers"] = out
        return out

    def _commit_state(self, keep_derived: bool, lagged: Lagged, reb: Rebalance, rep: Report,
                      fp: str) -> None:
        """The derived state (runs that keep it) and the manifest, with this run's options'
        fingerprint: the state now matches the outputs."""
        from mqctl.lagjob import bounded as B
        from mqctl.lagjob import ingest as I

        sp, st = self.spark, self.state or ""
        if keep_derived:  # (without resets the changes are the captured ones, cut)
            assert self.obs_times is not None
            self._save_derived(lagged.history, reb.captured if not reb.no_resets
                               else reb.changes, reb.resets, reb.unowned_track,
                               self.obs_times, rep, lagged.dedup)
            self.manifest.counts = self.kept_counts
        else:
            self.manifest.derived, self.manifest.counts = [], {}
        self.manifest.close = {c: v.to_json() for c, v in sorted(self.close.items())}
        self.manifest.pending, self.manifest.fingerprint = [], fp
        self.manifest.out = self.out
        I.save(sp, st, self.manifest)
        I.clear_staging(sp, st)
        if keep_derived:
            B.prune(sp, st, self.manifest.derived)
        else:
            B.drop(sp, st)

    def _said(self, row: dict[str, Any]) -> dict[str, Any]:
        """A summary row as the outputs show it: plain values, the status in words
        (``status_text``: ``STALL (3 of 8 queues)``, ``OK (window 1 of 10)``) and why the
        group's health is what it is (``health_reasons``, :mod:`mqctl.lagjob.verdicts`)."""
        from mqctl.lagjob import verdicts as V

        o = self.o
        r = _plain(row)
        r["status_text"] = V.status_text(r, o.window, "status" if "status" in r
                                         else "group_status")
        r["health_reasons"] = V.health_reasons(
            r, window=o.window, storm_window_ms=o.storm_window_ms,
            round_max_ms=o.storm_round_max_ms, storm_rounds=o.storm_rounds,
            unowned_max=o.unowned_max)
        return r

    def _limits(self) -> Any:
        """The page's bounds (:class:`html.HtmlLimits`) from the options."""
        from mqctl.lagjob import html as H

        o = self.o
        return H.HtmlLimits(groups=o.chart_groups, points=o.chart_points,
                            timeline_events=o.timeline_events)

    def _html(self, frames: dict[str, DataFrame], group_rows: list[dict[str, Any]],
              summary: list[dict[str, Any]], counts: dict[str, int], quarantined: int,
              run_ts: int, marked: dict[str, bool], first: tuple[list[Any], int] | None = None,
              second: list[Any] | None = None, warnings: list[str] | None = None) -> str:
        """report.html: bounded data from the frames, then the page (mqctl/lagjob/html/).
        ``marked``: whether there are events and storms to read (``has_events``,
        ``has_storms``); ``first``, ``second``: the page's collects, already made
        (:func:`html.collect.first_collect`, its rows and limit;
        :func:`html.collect.second_collect`'s rows); ``warnings``: at the top of the page."""
        from mqctl.lagjob import html as H
        from mqctl.lagjob.verdicts import utc

        o = self.o
        lim = self._limits()
        data = H.collect_report_data(
            self.spark, gt=frames["gt"], lag=frames["lag"], events=frames["events"],
            storms=frames["storms"], unowned=frames["unowned"], locks=frames["locks"],
            group_rows=group_rows, limits=lim, **marked, series=frames.get("series"),
            peaks=frames.get("peaks"), first=first, second=second)
        if data.bucket_ms is not None:
            self.notes.append(f"charts show the maximum per {data.bucket_ms // 1000}s bucket")
        shown = summary[:lim.status_rows]
        meta = {"title": "mqctl lag report", "first_ts": data.first_ts,
                "last_ts": data.last_ts, "captures": data.captures, "window": o.window,
                "subtitle": f"generated {utc(run_ts)}; window {o.window} capture(s); "
                            f"{counts['lag_rows']} queue observation(s); "
                            f"{counts['rebalance_events']} rebalance event(s); "
                            f"{counts['storms']} storm(s); "
                            f"{counts['lock_takeovers']} lock takeover(s); "
                            f"{quarantined} quarantined record(s)",
                "warnings": list(warnings or []),
                "notes": self.notes + ([f"the status table shows {len(shown)} of "
                                        f"{len(summary)} rows"]
                                       if len(shown) < len(summary) else [])}
        return H.render_html(series=data.series, events=data.events, storms=data.storms,
                             status_rows=shown, meta=meta, groups=data.groups, limits=lim)


def _utc_day(ms: int) -> str:
    """The UTC date (``yyyy-MM-dd``) of an epoch-ms time: a ``date=`` partition's name."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def _day_start_ms(day: str) -> int:
    """The epoch ms of a UTC date's (``yyyy-MM-dd``) first instant."""
    from datetime import UTC, datetime

    return int(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp() * 1000)


def _plain(d: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        if hasattr(v, "asDict"):
            v = v.asDict()
        out[k] = v
    return out

def _total(stats: dict[str, dict[str | None, int]], name: str) -> int:
    """Rows of one counted frame (:func:`stages.count`), over its dates."""
    return sum(stats.get(name, {}).values())


def _latest_order() -> list[Any]:
    """The order of the summary rows: worst first."""
    from pyspark.sql import functions as F

    return [F.col("health_code").desc_nulls_last(), F.col("status_code").desc_nulls_last(),
            F.col("lag_seconds").desc_nulls_last(), F.col("total_lag").desc_nulls_last(),
            "cluster", "group", "topic"]


def _groups_order() -> list[Any]:
    """The order of the group rows: worst first."""
    from pyspark.sql import functions as F

    return [F.col("health_code").desc_nulls_last(), F.col("group_status_code").desc_nulls_last(),
            F.col("lag_seconds").desc_nulls_last(), "cluster", "group"]


class _Rows:
    """Every summary row, for the outputs that list all of them: the rows already collected
    when they are all, else streamed partition by partition."""

    def __init__(self, rep: Report, summary: list[dict[str, Any]],
                 group_rows: list[dict[str, Any]], n_latest: int, n_groups: int,
                 said: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.rep, self.summary, self.group_rows = rep, summary, group_rows
        self.n_latest, self.n_groups, self.said = n_latest, n_groups, said

    def latest(self, ordered: bool) -> Iterable[dict[str, Any]]:
        if self.n_latest <= len(self.summary):
            return self.summary
        df = self.rep.latest.orderBy(*_latest_order()) if ordered else self.rep.latest
        return (self.said(r.asDict()) for r in df.toLocalIterator())

    def groups(self) -> Iterable[dict[str, Any]]:
        if self.n_groups <= len(self.group_rows):
            return self.group_rows
        return (self.said(r.asDict()) for r in self.rep.groups.toLocalIterator())



# --------------------------------------------------------------------------------------------
# the terminal view (shared by `mqctl lag report` and `python -m mqctl.lagjob.job`)

def result_view(res: ReportResult, limit: int = 20) -> Result:
    """What a person reads in the terminal: one row per group (worst health first: the health,
    the status with the queues in it, lag, time lag, members and the first reason), the
    breaches and quarantine, one line of counts and where the report is (the directory, the
    HTML page, the Prometheus file). ``-o json`` carries everything (``ReportResult.to_dict``:
    every group/topic row, all paths and notes)."""
    from mqctl.render import Column, Result, Table, cols

    def num(k: str, h: str) -> Column:
        return Column(k, h, "right")

    groups = res.groups or res.summary
    rows = []
    for g in groups[:limit]:
        reasons = list(g.get("health_reasons") or [])
        rows.append({**g, "status_text": g.get("status_text") or g.get("group_status"),
                     "why": reasons[0] if reasons else ""})
    # an unknown (a BROADCASTING group's lag, status and health) shows as "-", as on the page
    tables = [Table([Column("group", "GROUP"), Column("health", "HEALTH", unknown="-"),
                     Column("status_text", "STATUS", unknown="-"), num("total_lag", "LAG"),
                     num("lag_seconds", "LAG S"), num("members", "MEMBERS"),
                     num("rebalances", "REBALANCES"), Column("why", "WHY")],
                    rows, title="Groups (latest capture, worst first)", name="summary")]
    if res.quarantine:
        tables.append(Table(cols("reason", ("count", "COUNT")),
                            [{"reason": k, "count": v} for k, v in
                             sorted(res.quarantine.items())],
                            title="Quarantined input", name="quarantine"))
    if res.breaches:
        tables.append(Table(cols("expr", "group", "topic", "value", "threshold"),
                            [b.to_dict() for b in res.breaches], title="Thresholds breached",
                            name="breaches"))
    notes = []
    if len(groups) > limit or res.truncated:
        notes.append(f"showing {len(rows)} of {len(groups)} group(s); every group and topic is "
                     f"in {res.paths.get('summary_csv', 'summary.csv')}")
    c = res.counts
    notes.append(f"{c.get('lag_rows', 0)} queue observation(s), {c.get('rebalance_events', 0)} "
                 f"rebalance event(s), {c.get('storms', 0)} storm(s), "
                 f"{c.get('lock_takeovers', 0)} lock takeover(s), "
                 f"{res.quarantined} quarantined record(s); {len(res.notes)} note(s) in "
                 f"summary.json (-o json shows everything)")
    where = [f"report: {os.path.dirname(res.paths['summary_json'])}"
             if res.paths.get("summary_json") else None]
    if res.paths.get("html"):
        where.append(f"HTML: {res.paths['html']}")
    if res.paths.get("prometheus"):
        where.append(f"Prometheus: {res.paths['prometheus']}")
    notes.extend(w for w in where if w)  # a line each: paths are long
    return Result(tables, data=res.to_dict(), notes=[n for n in notes if n])


# --------------------------------------------------------------------------------------------
# spark-submit / python -m entry point

def build_parser() -> Any:
    """The spark-submit entry's parser: every option of ``mqctl lag report``, from its
    declaration (:mod:`mqctl.lagoptions`), with the same flags, defaults and help; the master
    defaults to spark-submit's."""
    import argparse

    from mqctl.lagoptions import FLAG_TYPES, flag_specs
    from mqctl.lagoptions import Kind as K

    p = argparse.ArgumentParser(prog="mqctl-lagjob", description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="PATH, glob, directory or URI; or KIND=PATH")
    for spec in flag_specs():
        assert spec.flag is not None
        if spec.kind is K.FLAG:
            p.add_argument(spec.flag, dest=spec.name, action="store_true", help=spec.help)
        elif spec.kind is K.LIST:
            p.add_argument(spec.flag, dest=spec.name, action="append", default=[],
                           metavar=spec.metavar, help=spec.help)
        else:
            p.add_argument(spec.flag, dest=spec.name, type=FLAG_TYPES[spec.kind],
                           default=spec.submit, required=spec.required, metavar=spec.metavar,
                           help=spec.help)
    p.add_argument("-o", "--output", default="plain")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def _stderr_line(msg: str) -> None:
    sys.stderr.write(msg + "\n")


def main(argv: list[str] | None = None) -> int:
    from mqctl.errors import ExitCode, MqctlError
    from mqctl.lagoptions import RUN_SPECS
    from mqctl.render import emit

    args = vars(build_parser().parse_args(argv))
    try:
        for spec in RUN_SPECS:
            spec.check(args[spec.name])
        res = run_report(
            args["inputs"], args["out"], Options.from_values(args), master=args["master"],
            fail_on=args["fail_on"], prom_file=args["prom_file"],
            spark_conf=spark_conf(args["conf"]) or None,
            progress=None if args["quiet"] else _stderr_line, state=args["state"],
            full=args["full"], force=args["force"])
        if not args["quiet"]:
            from mqctl.render import printable

            for w in res.warnings:
                sys.stderr.write(f"mqctl: warning: {printable(w)}\n")
        emit(result_view(res, args["limit"]), args["output"])
    except MqctlError as exc:
        sys.stderr.write(f"mqctl: error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        return int(exc.exit_code)
    if res.breaches:
        sys.stderr.write(f"mqctl: error: {len({b.expr for b in res.breaches})} threshold(s) "
                         "breached\n")
        return int(ExitCode.THRESHOLD)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Find the input files, decide their kinds, and read them into DataFrames.

Local paths are listed with the standard library; any other URI (``hdfs://``, ``s3a://``, ...)
through Hadoop's FileSystem in the driver JVM. Files are never read whole into the driver:
only the first 64 KiB of a file whose name does not tell its kind is sniffed, and a gzip file
is decompressed once as a stream to check it (:mod:`mqctl.lagjob.probe`): a local file Spark
could not read (a truncated or corrupt gzip file, a dangling symlink, a symlink loop, a FIFO,
no permission) is listed as ``unreadable`` and quarantined instead of being read.
"""

from __future__ import annotations

import functools
import glob
import operator
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from mqctl.errors import UsageError
from mqctl.lagjob import parsers as P
from mqctl.lagjob.inputs import (
    InputSpec,
    Kind,
    basename,
    ignored_reason,
    is_hidden,
    kind_from_content,
    kind_from_name,
    local_path,
    path_meta,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SNIFF_BYTES = 65536
_GLOB_CHARS = set("*?[{")


@dataclass(frozen=True, slots=True)
class InputFile:
    path: str
    kind: Kind | None
    size: int = 0
    mtime_ms: int | None = None
    ignored: str | None = None  # known file deliberately not read, and why
    explicit: bool = False  # its kind was given (KIND=PATH), not found
    unreadable: str | None = None  # Spark could not read it (probe.py): why; quarantined


@dataclass
class Listing:
    files: list[InputFile] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # inputs that matched no file

    def by_kind(self) -> dict[Kind, list[InputFile]]:
        out: dict[Kind, list[InputFile]] = {}
        for f in self.files:
            if f.kind is not None and f.ignored is None and f.unreadable is None:
                out.setdefault(f.kind, []).append(f)
        return out

    def unknown(self) -> list[InputFile]:
        return [f for f in self.files
                if f.kind is None and f.ignored is None and f.unreadable is None]

    def ignored(self) -> list[InputFile]:
        return [f for f in self.files if f.ignored is not None]

    def unreadable(self) -> list[InputFile]:
        return [f for f in self.files if f.unreadable is not None]

    def mark_unreadable(self, path: str, why: str) -> bool:
        """Quarantine ``path`` (a file Spark failed to read during the run); False when it is
        not one of the files read."""
        for i, f in enumerate(self.files):
            if f.path == path and f.ignored is None and f.unreadable is None:
                self.files[i] = replace(f, unreadable=why)
                return True
        return False


def _is_local(path: str) -> bool:
    return path.startswith("file:") or "://" not in path


def _decode_head(raw: bytes, name: str) -> str:
    if name.endswith(".gz") or raw[:2] == b"\x1f\x8b":
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, SNIFF_BYTES)
        except zlib.error:
            return ""
    return raw.decode("utf-8", "replace")


def _local_files(pattern: str) -> list[tuple[str, str | None]]:
    """The files a local input names: ``(path, None)``, or ``(path, why)`` for a directory
    that could not be listed (it is quarantined, not skipped). Directories are walked
    recursively, following symlinks to directories (each directory once: a link back up the
    tree is no loop). Whatever else is there (a dangling symlink, a symlink loop, a FIFO) is
    listed as a file and found unreadable by :func:`probe.stat_problem`, never dropped."""
    p = local_path(pattern)
    if any(c in p for c in _GLOB_CHARS):
        matches = sorted(glob.glob(p, recursive=True))
    elif os.path.lexists(p):
        matches = [p]
    else:
        return []
    out: list[tuple[str, str | None]] = []
    seen_dirs: set[tuple[int, int]] = set()
    for m in matches:
        if not os.path.isdir(m):
            out.append((m, None))
            continue
        failed: list[OSError] = []
        for root, dirs, names in os.walk(m, onerror=failed.append, followlinks=True):
            try:
                st = os.stat(root)
                key = (st.st_dev, st.st_ino)
            except OSError:
                key = None
            if key is not None and key in seen_dirs:
                dirs[:] = []
                continue
            if key is not None:
                seen_dirs.add(key)
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
            out.extend((os.path.join(root, n), None) for n in sorted(names))
        out.extend((str(e.filename or m), f"cannot list directory: {e.strerror or e}")
                   for e in failed)
    return out


def _classify(path: str, explicit: Kind | None, size: int, mtime_ms: int | None,
              head: Any) -> InputFile:
    name = basename(path)
    if explicit is not None:
        return InputFile(path, explicit, size, mtime_ms, explicit=True)
    why = ignored_reason(name)
    if why is not None:
        return InputFile(path, None, size, mtime_ms, ignored=why)
    kind = kind_from_name(name)
    if kind is None:
        text = head()
        kind = kind_from_content(text) if text else None
    return InputFile(path, kind, size, mtime_ms)


def list_local(specs: Iterable[InputSpec],
               checked: Callable[[str, int, int], bool] | None = None) -> Listing:
    """List local inputs (no Spark needed), each file checked as Spark would read it
    (:mod:`mqctl.lagjob.probe`). ``checked(path, size, mtime_ms)``: True for a file the run
    will not read again (the ingested state holds it parsed): its gzip data is not checked."""
    from mqctl.lagjob import probe

    listing = Listing()
    seen: set[str] = set()
    for spec in specs:
        files = _local_files(spec.path)
        if not files:
            listing.unmatched.append(spec.path)
        for f, listed in files:
            name = basename(f)
            if is_hidden(name):
                continue
            real = os.path.abspath(f)
            if real in seen:
                continue
            seen.add(real)
            st, why = (None, listed) if listed else probe.stat_problem(real)
            if why is not None and spec.kind is None and ignored_reason(name):
                listing.files.append(InputFile(real, None, 0, None, ignored=ignored_reason(name)))
                continue
            if why is not None:  # not read: its kind as far as the name tells
                size = st.st_size if st is not None else 0
                mtime = int(st.st_mtime * 1000) if st is not None else None
                listing.files.append(InputFile(real, spec.kind or kind_from_name(name), size,
                                               mtime, explicit=spec.kind is not None,
                                               unreadable=why))
                continue
            assert st is not None

            def head(p: str = real) -> str:
                try:
                    with open(p, "rb") as fh:
                        return _decode_head(fh.read(SNIFF_BYTES), p)
                except OSError:
                    return ""

            mtime_ms = int(st.st_mtime * 1000)
            item = _classify(real, spec.kind, st.st_size, mtime_ms, head)
            if item.ignored is None and not (checked and checked(real, st.st_size, mtime_ms)):
                why = probe.check_local(real, st.st_size)
                if why is not None:
                    item = replace(item, unreadable=why)
            listing.files.append(item)
    return ignore_beside_client_logs(listing)


def list_inputs(spark: SparkSession | None, specs: Iterable[InputSpec]) -> Listing:
    """Local specs through the OS, the others through Hadoop's FileSystem."""
    specs = list(specs)
    local = [s for s in specs if _is_local(s.path)]
    remote = [s for s in specs if not _is_local(s.path)]
    listing = list_local(local)
    if remote:
        if spark is None:
            raise UsageError("remote inputs need a Spark session")
        r = _list_hadoop(spark, remote)
        listing.files.extend(r.files)
        listing.unmatched.extend(r.unmatched)
    return ignore_beside_client_logs(listing)


BESIDE_CLIENT_LOG = "not a client log (a log file beside rocketmq_client.log)"


def ignore_beside_client_logs(listing: Listing) -> Listing:
    """Other log files of a client's log directory (``slf4j.log`` next to
    ``rocketmq_client.log``) are not client logs: ignored files (counted as files in the
    summary), neither unrecognised input nor read line by line (whatever rebalance words they
    hold, the client's own log has its lines). That is a file named as a log (``.log``) whose
    name is not a client log's and whose kind was not given (``client-log=PATH`` reads it), in a
    directory that holds a file named as a client log."""
    def beside(f: InputFile) -> bool:
        name = basename(f.path)
        return (not f.explicit and f.ignored is None and f.kind in (None, Kind.CLIENT_LOG)
                and ".log" in name and kind_from_name(name) != Kind.CLIENT_LOG
                and f.path.rsplit("/", 1)[0] in dirs)

    dirs = {f.path.rsplit("/", 1)[0] for f in listing.files
            if f.kind == Kind.CLIENT_LOG and kind_from_name(basename(f.path)) == Kind.CLIENT_LOG}
    if dirs:
        listing.files = [InputFile(f.path, None, f.size, f.mtime_ms, ignored=BESIDE_CLIENT_LOG)
                         if beside(f) and f.unreadable is None else f for f in listing.files]
    return listing


def _list_hadoop(spark: SparkSession, specs: list[InputSpec]) -> Listing:
    jvm: Any = spark.sparkContext._jvm
    conf: Any = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    listing = Listing()
    for spec in specs:
        hp = jvm.org.apache.hadoop.fs.Path(spec.path)
        fs = hp.getFileSystem(conf)
        statuses = fs.globStatus(hp)
        found = 0
        for st in (statuses or []):
            todo = []
            if st.isDirectory():
                it = fs.listFiles(st.getPath(), True)
                while it.hasNext():
                    todo.append(it.next())
            else:
                todo.append(st)
            for f in todo:
                p = f.getPath().toString()
                if is_hidden(basename(p)) or any(
                        seg.startswith((".", "_")) for seg in p.split("/")[3:-1]):
                    continue
                found += 1

                def head(p: str = p) -> str:
                    return _hadoop_head(spark, p)

                listing.files.append(_classify(p, spec.kind, int(f.getLen()),
                                               int(f.getModificationTime()), head))
        if not found:
            listing.unmatched.append(spec.path)
    return listing


def _hadoop_head(spark: SparkSession, path: str) -> str:
    jvm: Any = spark.sparkContext._jvm
    gw: Any = spark.sparkContext._gateway
    conf: Any = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    hp = jvm.org.apache.hadoop.fs.Path(path)
    stream = hp.getFileSystem(conf).open(hp)
    try:
        buf = gw.new_array(jvm.byte, SNIFF_BYTES)
        n = stream.read(buf)
        raw = bytes(jvm.java.util.Arrays.copyOf(buf, max(0, n)))
    finally:
        stream.close()
    return _decode_head(raw, path)


# --------------------------------------------------------------------------------------------
# Spark reads

def read_lines(spark: SparkSession, paths: list[str]) -> DataFrame:
    """Text lines with ``source`` (file URI), ``block`` (split start), ``rid`` (scan order
    id) and ``mtime_ms``; the basis of line numbers (:func:`transforms.line_numbers`)."""
    from pyspark.sql import functions as F

    df = spark.read.text(paths)
    return df.select(
        F.col("_metadata.file_path").alias("source"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("rid"),
        (F.col("_metadata.file_modification_time").cast("double") * 1000).cast("long")
        .alias("mtime_ms"),
        F.col("value"))


def read_snapshots(spark: SparkSession, paths: list[str], run_ms: int | None = None
                   ) -> tuple[DataFrame, DataFrame]:
    """(parsed records, all lines) of canonical snapshot files: records as
    :func:`transforms.parse_snapshot_records` (``run_ms``: the run's time, bounding capture
    times); the lines give bad lines their line numbers."""
    from mqctl.lagjob import schemas, transforms

    lines = read_lines(spark, paths)
    return transforms.parse_snapshot_records(lines, schemas.SNAPSHOT_JSON, run_ms), lines


def read_snapshot_json(spark: SparkSession, paths: list[str]) -> DataFrame:
    """Canonical snapshot files through Spark's JSON reader with the snapshot schema: one row per
    JSON record, ``j`` (the parsed struct, as ``from_json`` gives it), ``value`` (the record's
    text when it did not parse: ``j._corrupt``), ``source``, and null ``block``/``rid``. For
    :func:`transforms.check_snapshot_records`. No text pass and no ``from_json``: the fast path
    for files whose every line is good (the job re-reads a file with a bad line through
    :func:`read_snapshots`, which gives bad lines their numbers and content)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import schemas

    df = (spark.read.schema(schemas.SNAPSHOT_JSON).option("mode", "PERMISSIVE")
          .option("columnNameOfCorruptRecord", "_corrupt").json(paths))
    names = schemas.SNAPSHOT_JSON.fieldNames()
    return df.select(F.struct(*[F.col(f"`{n}`") for n in names]).alias("j"),
                     F.col("_corrupt").alias("value"),
                     F.col("_metadata.file_path").alias("source"),
                     F.lit(None).cast("long").alias("block"),
                     F.lit(None).cast("long").alias("rid"))


def _file_records(rows: Iterable[Any], tz: tzinfo | None, cluster: str) -> Iterator[Any]:
    for row in rows:
        source = local_path(row["source"])
        kind = Kind(row["kind"])
        meta = path_meta(source, tz, kind)
        try:
            recs = list(P.parse_file(kind.value, source, row["value"] or "", meta,
                                     row["mtime_ms"], tz, cluster))
        except Exception as exc:  # a parser bug must not lose the file: quarantine it
            recs = [P.bad(source, kind.value, None, "parser error",
                          f"{type(exc).__name__}: {exc}", "", meta.capture_ts or row["mtime_ms"])]
        for tag, rec in recs:
            yield tuple([tag] + [rec if t == tag else None for t in P.TAGS])


def read_whole_files(spark: SparkSession, by_kind: dict[Kind, list[str]],
                     tz: tzinfo | None, cluster: str) -> DataFrame:
    """Store files and mqadmin captures, one record per parsed row (``schemas.FILE_RECORDS``:
    exactly one of the ``obs/point/member/topic_cfg/group_cfg/bad`` structs is set)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import schemas

    frames = []
    for kind, paths in sorted(by_kind.items()):
        if not paths:
            continue
        frames.append(spark.read.text(paths, wholetext=True).select(
            F.col("_metadata.file_path").alias("source"),
            (F.col("_metadata.file_modification_time").cast("double") * 1000).cast("long")
            .alias("mtime_ms"), F.lit(kind.value).alias("kind"), "value"))
    if not frames:
        return spark.createDataFrame([], schemas.FILE_RECORDS)
    df = frames[0]
    for f in frames[1:]:
        df = df.unionByName(f)
    rdd = df.rdd.mapPartitions(lambda rows: _file_records(rows, tz, cluster))
    return spark.createDataFrame(rdd, schemas.FILE_RECORDS)


def _log_records(rows: Iterable[Any], log_tz: tzinfo | None, pinned_tz: tzinfo,
                 cluster: str) -> Iterator[Any]:
    metas: dict[str, Any] = {}
    # offset-commit lines only say "alive at": a client writes one per queue every 5 s, so
    # one per file, group and client per second is kept (the crash bound is 5 s anyway)
    alive: dict[tuple[str, str, str], int] = {}
    for row in rows:
        uri = row["source"]
        kind = Kind(row["kind"])
        if uri not in metas:
            metas[uri] = path_meta(local_path(uri), None, kind)
        meta = metas[uri]
        line = row["value"] or ""
        if kind == Kind.CLIENT_LOG:
            r = P.parse_client_log_line(line, log_tz, pinned_tz)
        else:
            r = P.parse_lock_log_line(line, pinned_tz, log_tz)
        if r is None:
            continue
        tag, rec = r
        if tag == "log" and rec[1] == "persist":
            key = (uri, rec[2], rec[4])
            last = alive.get(key)
            if last is not None and 0 <= rec[0] - last < 1000:
                continue
            alive[key] = rec[0]
        if tag == "log":
            yield (uri, kind.value, row["block"], row["rid"], rec[0], meta.client,
                   meta.cluster or cluster, rec, None, None, None)
        else:
            yield (uri, kind.value, row["block"], row["rid"], rec[2], meta.client,
                   meta.cluster or cluster, None, rec[0], rec[1], line[:P.CONTENT_MAX])


def read_logs(spark: SparkSession, by_kind: dict[Kind, list[str]], log_tz: tzinfo | None,
              pinned_tz: tzinfo, cluster: str) -> tuple[DataFrame, DataFrame]:
    """(parsed log records ``schemas.LOG_RECORDS``, all lines) of client and lock logs.

    Lines without any keyword of their kind's parser (a client log's, a lock log's) are dropped
    in Spark before Python sees them."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import schemas

    frames, kept = [], []
    for kind, keywords in ((Kind.CLIENT_LOG, P.CLIENT_KEYWORDS), (Kind.LOCK_LOG, P.LOCK_KEYWORDS)):
        paths = by_kind.get(kind) or []
        if paths:
            kind_lines = read_lines(spark, paths).withColumn("kind", F.lit(kind.value))
            frames.append(kind_lines)
            # the lines its parser reads (it returns None for any other), tested against each
            # keyword in turn, the most frequent first (parsers.logs.CLIENT_KEYWORDS)
            kept.append(kind_lines.filter(
                functools.reduce(operator.or_, (F.col("value").contains(k) for k in keywords))))
    if not frames:
        empty_lines = spark.createDataFrame(
            [], "source string, block long, rid long, mtime_ms long, value string, kind string")
        return spark.createDataFrame([], schemas.LOG_RECORDS), empty_lines
    lines, relevant = frames[0], kept[0]
    for f, r in zip(frames[1:], kept[1:], strict=True):
        lines, relevant = lines.unionByName(f), relevant.unionByName(r)
    rdd = relevant.rdd.mapPartitions(
        lambda rows: _log_records(rows, log_tz, pinned_tz, cluster))
    return spark.createDataFrame(rdd, schemas.LOG_RECORDS), lines

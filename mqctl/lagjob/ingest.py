"""Incremental runs: canonical snapshot files parsed once into an ingested Parquet table.

State directory (``--state DIR``, default ``OUT/_state``)::

    manifest.json                  what is ingested (written atomically, after the data)
    snapshots/date=YYYY-MM-DD/...  the parsed observations (``transforms.SNAPSHOT_OBS`` +
                                   ``reason`` (null) + ``batch``), partitioned by the UTC date
                                   of the capture
    staging-<batch>/               the files a run parsed, in the table's layout; moved into
                                   the table when none has a bad line, removed at the end
    derived/                       what a bounded re-run needs from before its look-back
                                   (:mod:`mqctl.lagjob.bounded`)

The manifest lists every ingested file with its size and modification time (and the dates
and ``batch`` of its rows), the committed batches, and a fingerprint of the options that change
the computed results. A run ingests the files that are new or whose size or modification
time changed, and drops the rows of changed files and of files no longer among the inputs
(rewriting only the date partitions they had rows in). Rows of a batch that was written but
never committed (the run died before the manifest) are ignored and removed by the next run.
A file with any bad line is not ingested: it is re-read every run (bad lines keep their line
numbers and content in the quarantine dataset).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# 2: the observations carry committed, owner_unknown, members_unanswered; 3:
# consume_type, message_model, and lag/group_status gained columns; 4: captures
# never chain nor hold a queue twice (mqctl/lagjob/alignment.py), and the derived times keep
# each time's capture; a state of another version is not read (every file is parsed again,
# every date rewritten)
VERSION = 4
MANIFEST = "manifest.json"
TABLE = "snapshots"
STAGING = "staging"  # a run's parsed files (``staging-<batch>``; Spark skips .hidden paths)


@dataclass
class Manifest:
    fingerprint: str = ""
    out: str = ""
    batches: list[int] = field(default_factory=list)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    # dates whose observations changed since the outputs were last written in full
    pending: list[str] = field(default_factory=list)
    # the committed batches of the derived state (``derived/``, :mod:`mqctl.lagjob.bounded`);
    # empty: there is none, and the next run cannot be a bounded one
    derived: list[int] = field(default_factory=list)
    # observations merged as duplicates by the run that wrote the outputs (a bounded run adds
    # its own: the earlier observations are not read again)
    duplicates: int = 0
    # rows per date of lag and group_status and the totals of the run's counts read from lag
    # (``owner_unknown``, ``never_committed``: date ""), as the outputs hold them: a bounded
    # re-run adds the new captures' instead of counting the datasets again; empty: not kept
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    # the derived broker history was cut (:func:`bounded.history_frame`) since the last run
    # that computed everything: later bounded runs append to it until they compact
    history_cut: bool = False
    # per cluster, the captures opened within --align of the previous one (alignment.Close
    # as JSON) as the outputs count them: a bounded run adds its new captures'
    close: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"version": VERSION, "fingerprint": self.fingerprint, "out": self.out,
                           "batches": sorted(self.batches), "files": self.files,
                           "pending": sorted(self.pending),
                           "derived": sorted(self.derived),
                           "duplicates": self.duplicates, "counts": self.counts,
                           "history_cut": self.history_cut, "close": self.close},
                          indent=1, sort_keys=True) + "\n"

    @classmethod
    def parse(cls, text: str) -> Manifest | None:
        try:
            d = json.loads(text)
        except ValueError:
            return None
        if not isinstance(d, dict) or d.get("version") != VERSION:
            return None
        files = d.get("files")
        batches = d.get("batches")
        if not isinstance(files, dict) or not isinstance(batches, list):
            return None
        pending = d.get("pending") or []
        derived = d.get("derived") or []
        counts = d.get("counts") or {}
        if not isinstance(counts, dict):
            counts = {}
        close = d.get("close") or {}
        if not isinstance(close, dict):
            close = {}
        return cls(str(d.get("fingerprint", "")), str(d.get("out", "")),
                   [int(b) for b in batches], files, [str(x) for x in pending],
                   [int(b) for b in derived], int(d.get("duplicates") or 0),
                   {str(k): {str(d): int(n) for d, n in v.items()}
                    for k, v in counts.items() if isinstance(v, dict)},
                   d.get("history_cut") is True,
                   {str(k): v for k, v in close.items() if isinstance(v, dict)})

    def next_batch(self) -> int:
        return max([0, *self.batches]) + 1


def load(spark: SparkSession, state: str) -> Manifest | None:
    """The manifest of ``state`` (None: none yet, or unreadable: then everything is re-read)."""
    from mqctl.lagjob import writers as W

    text = read_text(spark, W.join(state, MANIFEST))
    return None if text is None else Manifest.parse(text)


def save(spark: SparkSession, state: str, manifest: Manifest) -> None:
    """Atomically (a temp file, then a rename): a run that dies leaves the previous one."""
    from mqctl.lagjob import writers as W

    if W.is_local(state):
        import os

        from mqctl.lagjob.inputs import local_path

        os.makedirs(local_path(state), exist_ok=True)
    W.write_text(spark, W.join(state, MANIFEST), manifest.to_json())


def clear_staging(spark: SparkSession, state: str) -> None:
    """Remove the staging directories of earlier (finished or dead) runs."""
    from mqctl.lagjob import writers as W

    fs, hp = W._hadoop_fs(spark, state)
    if not fs.exists(hp):
        return
    for st in fs.listStatus(hp):
        if st.getPath().getName().startswith(STAGING):
            fs.delete(st.getPath(), True)


def adopt(spark: SparkSession, staged: str, table: str) -> int:
    """Move the data files of a staging directory (``date=`` partitions) into the table's
    partitions; returns how many. File names are unique per write (Spark puts the write's id
    in them), so nothing of the table is replaced. A run that dies half-way leaves moved files
    of a batch the manifest never committed: :func:`table` ignores them."""
    from mqctl.lagjob import writers as W

    fs, src = W._hadoop_fs(spark, staged)
    _fs, dst = W._hadoop_fs(spark, table)
    jvm: Any = spark.sparkContext._jvm
    moved = 0
    for part in fs.listStatus(src):
        name = part.getPath().getName()
        if not part.isDirectory() or not name.startswith("date="):
            continue
        target = jvm.org.apache.hadoop.fs.Path(dst, name)
        fs.mkdirs(target)
        for f in fs.listStatus(part.getPath()):
            fname = f.getPath().getName()
            if f.isDirectory() or fname.startswith((".", "_")):
                continue
            if not fs.rename(f.getPath(), jvm.org.apache.hadoop.fs.Path(target, fname)):
                raise OSError(f"cannot move {f.getPath().toString()} into {table}")
            moved += 1
    return moved


def read_text(spark: SparkSession, path: str) -> str | None:
    """A small text file (local or Hadoop FS), None when it does not exist."""
    from mqctl.lagjob import writers as W

    if W.is_local(path):
        from mqctl.lagjob.inputs import local_path

        try:
            with open(local_path(path), encoding="utf-8") as fh:
                return fh.read()
        except FileNotFoundError:
            return None
    fs, hp = W._hadoop_fs(spark, path)
    if not fs.exists(hp):
        return None
    stream = fs.open(hp)
    try:
        jvm: Any = spark.sparkContext._jvm
        data = jvm.org.apache.commons.io.IOUtils.toByteArray(stream)
    finally:
        stream.close()
    return bytes(data).decode("utf-8")


def exists(spark: SparkSession, path: str) -> bool:
    from mqctl.lagjob import writers as W

    fs, hp = W._hadoop_fs(spark, path)
    return bool(fs.exists(hp))


def delete(spark: SparkSession, path: str) -> None:
    from mqctl.lagjob import writers as W

    fs, hp = W._hadoop_fs(spark, path)
    if fs.exists(hp):
        fs.delete(hp, True)


@dataclass
class Plan:
    """What a run does with the state: ``new`` files to ingest (paths), ``stale`` ingested
    files whose rows go (changed or no longer an input), and the dates those rows had."""

    new: list[str]
    stale: list[str]
    stale_dates: set[str]
    kept: list[str]


def plan(manifest: Manifest, files: list[Any], *, keep_aged: bool = False) -> Plan:
    """Compare the inputs (``readers.InputFile``: path, size, mtime_ms) with the manifest.
    ``keep_aged``: files marked as aged out (:func:`age_out`) that are still gone are neither
    kept nor stale (their rows stay)."""
    current = {f.path: f for f in files}
    kept, stale = [], []
    for p, m in manifest.files.items():
        f = current.get(p)
        if f is None and keep_aged and m.get("aged"):
            continue
        if f is not None and m.get("size") == f.size and m.get("mtime_ms") == f.mtime_ms:
            kept.append(p)
        else:
            stale.append(p)
    kept_set = set(kept)
    new = [p for p in current if p not in kept_set]
    dates = {d for p in stale for d in manifest.files[p].get("dates", [])}
    return Plan(new=new, stale=sorted(stale), stale_dates=dates, kept=sorted(kept))


def table(spark: SparkSession, state: str, manifest: Manifest,
          from_date: str | None = None) -> DataFrame | None:
    """The committed rows of the ingested table (None when nothing is ingested); ``from_date``:
    only the date partitions from it on (the others are not read at all)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import writers as W

    if not any(m.get("dates") and not m.get("bad") for m in manifest.files.values()):
        return None
    path = W.join(state, TABLE)
    df = spark.read.parquet(path)
    if from_date is not None:
        df = df.filter(F.col("date") >= F.to_date(F.lit(from_date)))
    return df.filter(F.col("batch").isin(manifest.batches)).drop("batch", "date")


def age_out(spark: SparkSession, state: str, manifest: Manifest, paths: list[str]) -> None:
    """Mark ingested files that are no longer among the inputs as aged out (``aged``): their
    rows stay in the table, which a bounded re-run reads only after them, until every file of
    their date has aged out; then the date's partition is deleted at once and they are
    forgotten. Any other run drops their rows first (they are stale in :func:`plan`)."""
    from mqctl.lagjob import writers as W

    for p in paths:
        manifest.files[p]["aged"] = True
    dates = {d for p in paths for d in manifest.files[p].get("dates", [])}
    for d in sorted(dates):
        if any(d in m.get("dates", []) and not m.get("aged") for m in manifest.files.values()):
            continue
        delete(spark, W.join(state, TABLE, f"date={d}"))
        for p, m in list(manifest.files.items()):
            if m.get("aged") and d in m.get("dates", []):
                m["dates"] = [x for x in m["dates"] if x != d]
                if not m["dates"]:
                    del manifest.files[p]


def drop_rows(spark: SparkSession, state: str, manifest: Manifest, sources: list[str],
              dates: set[str]) -> None:
    """Remove the rows of ``sources`` (and of uncommitted batches) from the ``dates``
    partitions: each is rewritten to a sibling directory, then swapped in."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import writers as W

    base = W.join(state, TABLE)
    gone = set(sources)
    for d in sorted(dates):
        part = W.join(base, f"date={d}")
        if not exists(spark, part):
            continue
        if not any(d in m.get("dates", []) and m.get("source") not in gone and not m.get("bad")
                   for m in manifest.files.values()):
            delete(spark, part)  # no other file has rows on that date
            continue
        tmp = W.join(state, f".rewrite-date={d}")
        delete(spark, tmp)
        keep = (spark.read.parquet(part)
                .filter(F.col("batch").isin(manifest.batches)
                        & ~F.col("source").isin(sources)))
        keep.write.mode("overwrite").parquet(tmp)
        delete(spark, part)
        fs, hp = W._hadoop_fs(spark, tmp)
        _fs2, dst = W._hadoop_fs(spark, part)
        if not fs.rename(hp, dst):
            raise OSError(f"cannot rename {tmp} to {part}")

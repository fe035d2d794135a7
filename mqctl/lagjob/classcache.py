"""Class data sharing for the driver JVM that mqctl starts (docs/lag-performance.md,
"Thirteenth pass: the JVM's start").

A fresh driver JVM loads, parses and verifies thousands of Spark's classes from its 280 jars
before the first job runs, and more as the report plans its first queries: on this 2-core
machine Spark's start plus one trivial job took 6.5-7.9 s. HotSpot can map classes that an
earlier JVM loaded from an archive instead (application class data sharing; JDK 13 and later
write one at exit with ``-XX:ArchiveClassesAtExit``, JEP 350, and map it with
``-XX:SharedArchiveFile``): the same start took 3.5-4.4 s.

The archive belongs to one Java installation and one set of Spark jars (HotSpot checks the
JDK build and the class path's jars, by size and modification time, and maps nothing when they
differ), so it is made on the machine that uses it:

* the first run that finds no archive for this Java and these jars (:func:`key`) asks its JVM
  to write one when it exits, to a name of its own; after a run that succeeded mqctl ends the
  JVM, waits for it (:data:`WRITE_TIMEOUT_S`) and renames the file into place; after a run
  that failed or was interrupted it stops the JVM instead (:func:`abandon`), so nothing is
  written; a file left by a process that died is removed by a later run (:func:`tidy`);
* every later run maps it;
* ``MQCTL_CLASS_ARCHIVE=off`` does neither; ``MQCTL_CLASS_ARCHIVE=DIR`` keeps the archives in
  DIR instead of ``$XDG_CACHE_HOME/mqctl/jvm`` (``~/.cache/mqctl/jvm``);
* a run whose ``spark.driver.extraJavaOptions`` name class data sharing themselves
  (``-Xshare``, ``SharedArchiveFile``, ``ArchiveClassesAtExit``) is left to them.

HotSpot's own messages about the archive (a stale archive, classes it skips) are switched off
(``-Xlog:cds*=off``): an archive that cannot be used costs the start it would have saved,
nothing else. Nothing here imports pyspark at module level.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV = "MQCTL_CLASS_ARCHIVE"
OFF = ("off", "0", "no", "false")
PREFIX = "spark-"
SUFFIX = ".jsa"
# HotSpot writes the archive as the JVM exits: 190 MB for the demo's report, 10-25 s here
WRITE_TIMEOUT_S = 300.0
# a partial file (its run failed, was interrupted or is still writing) is removed after this
STALE_S = 3600.0
# options by which the user's own extraJavaOptions take class data sharing in hand
_USER_CDS = ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit", "SharedClassListFile")
_QUIET = "-Xlog:cds*=off"
# the names mqctl gives: an archive, and a file being written (pid, time)
_NAMED = re.compile(rf"{PREFIX}[0-9a-f]{{16}}\{SUFFIX}(\.[0-9]+\.[0-9]+\.part)?")
# the first four bytes of a dynamic archive, in the JVM's byte order (HotSpot's
# CDS_DYNAMIC_ARCHIVE_MAGIC, cds/filemap.hpp): a file without them is not one
DYNAMIC_MAGIC = 0xF00BABA8


@dataclass(frozen=True, slots=True)
class Plan:
    """What one JVM start does about the archive: ``options`` for its command line;
    ``writing``: the file it writes at exit (None: it maps ``archive`` or does nothing)."""

    options: str = ""
    archive: Path | None = None
    writing: Path | None = None


def archive_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """Where the archives are kept (None: class data sharing is off)."""
    env = os.environ if env is None else env
    chosen = env.get(ENV, "").strip()
    if chosen.lower() in OFF:
        return None
    if chosen:
        return Path(chosen).expanduser()
    cache = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache, "mqctl", "jvm")


def java_home(env: Mapping[str, str] | None = None) -> Path | None:
    """The Java installation Spark's launcher runs (``JAVA_HOME``, else ``java`` on PATH)."""
    env = os.environ if env is None else env
    home = env.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return Path(home).resolve()
    found = shutil.which("java", path=env.get("PATH"))
    return Path(found).resolve().parent.parent if found else None


def spark_jars(env: Mapping[str, str] | None = None) -> Path | None:
    """The jars on the driver's class path (``$SPARK_HOME/jars``, else PySpark's own)."""
    env = os.environ if env is None else env
    if env.get("SPARK_HOME"):
        jars = Path(env["SPARK_HOME"], "jars")
    else:
        import importlib.util

        spec = importlib.util.find_spec("pyspark")
        if spec is None or spec.origin is None:
            return None
        jars = Path(spec.origin).parent / "jars"
    return jars if jars.is_dir() else None


def key(env: Mapping[str, str] | None = None) -> str | None:
    """The archive's name for this Java installation and these Spark jars: a hash of the Java
    launcher, the JDK's module image and every jar (path, size, modification time), so that
    an upgrade of either gets an archive of its own. None when either is not found."""
    home, jars = java_home(env), spark_jars(env)
    if home is None or jars is None:
        return None
    h = hashlib.sha256()
    for f in [home / "bin" / "java", home / "lib" / "modules",
              *sorted(jars.iterdir(), key=lambda p: p.name)]:
        try:
            st = f.stat()
        except OSError:
            continue
        h.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def looks_like_archive(path: Path) -> bool:
    """A regular file (not a link) that starts as a dynamic archive does. HotSpot checks the
    rest (its JDK build, the class path, each region) and maps nothing it does not trust."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        with path.open("rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return len(head) == 4 and DYNAMIC_MAGIC in (int.from_bytes(head, "little"),
                                                int.from_bytes(head, "big"))


def _option(name: str, path: Path) -> str:
    text = f"-XX:{name}={path}"
    return f'"{text}"' if any(c.isspace() for c in text) else text  # (Spark's quoting)


def plan(user_java_opts: str = "", env: Mapping[str, str] | None = None) -> Plan:
    """The archive options for a driver JVM about to start (:class:`Plan`)."""
    if any(o in user_java_opts for o in _USER_CDS):
        return Plan()
    where = archive_dir(env)
    k = key(env) if where is not None else None
    if where is None or k is None:
        return Plan()
    final = where / f"{PREFIX}{k}{SUFFIX}"
    try:
        if looks_like_archive(final):
            with contextlib.suppress(OSError):
                tidy(final)  # (what failed runs and older installations left)
            return Plan(f"{_option('SharedArchiveFile', final)} {_QUIET}", archive=final)
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
        if where.is_symlink() or not where.is_dir():
            return Plan()
    except OSError:  # an unwritable cache: run without
        return Plan()
    writing = where / f"{PREFIX}{k}{SUFFIX}.{os.getpid()}.{time.time_ns()}.part"
    return Plan(f"{_option('ArchiveClassesAtExit', writing)} {_QUIET}", archive=final,
                writing=writing)


def finish(p: Plan, proc: Any, say: Callable[[str], None] | None = None) -> bool:
    """After a run that succeeded: end the JVM ``proc`` (its stdin closed: PySpark's gateway
    server exits on end of input), wait for it to write ``p.writing`` and move that into
    place. True when the archive is there now. Nothing happens for a plan that writes
    nothing."""
    if p.writing is None or p.archive is None or proc is None:
        return False
    if say is not None:
        say("lag report: saving the JVM's loaded classes for faster starts (once per Java "
            f"and Spark installation): {p.archive}")
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=WRITE_TIMEOUT_S)
    except Exception:  # still writing after the timeout, or already gone: a later run cleans up
        return False
    try:
        if proc.returncode == 0 and looks_like_archive(p.writing):
            os.replace(p.writing, p.archive)
        else:  # (not written, or not whole: the next run writes one again)
            p.writing.unlink(missing_ok=True)
        tidy(p.archive)
    except OSError:
        return False
    return looks_like_archive(p.archive)


def abandon(p: Plan, proc: Any) -> None:
    """After a run that failed or was interrupted: stop the JVM ``proc`` before it spends
    its exit writing an archive from a run cut short, and remove what it wrote."""
    if p.writing is None:
        return
    with contextlib.suppress(Exception):
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    with contextlib.suppress(OSError):
        p.writing.unlink(missing_ok=True)


def tidy(keep: Path, now: float | None = None) -> list[Path]:
    """Remove the other archives of ``keep``'s directory (another Java or Spark: superseded)
    and partial files older than :data:`STALE_S`; the removed paths."""
    now = time.time() if now is None else now
    gone: list[Path] = []
    for f in keep.parent.iterdir():
        named = _NAMED.fullmatch(f.name)
        if named is None or f == keep or f.is_dir():
            continue  # (not a name mqctl gives: never touched)
        partial = named.group(1) is not None
        with contextlib.suppress(OSError):
            if partial and now - f.stat().st_mtime < STALE_S:
                continue  # (another run may be writing it)
            f.unlink()
            gone.append(f)
    return gone

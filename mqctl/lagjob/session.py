"""The one SparkSession of a run: checks, quiet logging, settings (imports pyspark lazily)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_HINT = "pip install 'mqctl[spark]'"
ARROW_HINT = ("pip install 'mqctl[spark]', or beside a Spark installation that brings its own "
              "PySpark: pip install 'mqctl[job]'")
JAVA_HINT = ("install Java 17 (e.g. apt-get install openjdk-17-jre-headless) and put it on "
             "PATH or set JAVA_HOME")

# log4j2 for the driver JVM: WARN and above, minus the start-up chatter and the notices of
# blocks that spill to disk as designed (the cuts are MEMORY_AND_DISK: "Not enough space to
# cache rdd_... in memory!" at 10M rows). One line per message: a failed task's Java stack
# trace (60 lines and more, repeated by each logger that passes the failure on) is not
# written unless ``traces`` (``mqctl --debug``); mqctl names the failure itself.
_LOG4J2 = """\
status = error
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{{1}}: %m%n
appender.console.layout.alwaysWriteExceptions = {traces}
logger.native.name = org.apache.hadoop.util.NativeCodeLoader
logger.native.level = error
logger.utils.name = org.apache.spark.util.Utils
logger.utils.level = error
logger.window.name = org.apache.spark.sql.execution.window.WindowExec
logger.window.level = error
logger.cache.name = org.apache.spark.sql.execution.CacheManager
logger.cache.level = error
logger.shutdown.name = org.apache.spark.util.ShutdownHookManager
logger.shutdown.level = error
logger.blockmgr.name = org.apache.spark.storage.BlockManager
logger.blockmgr.level = error
logger.checkpointed.name = org.apache.spark.rdd.MapPartitionsRDD
logger.checkpointed.level = error
logger.memstore.name = org.apache.spark.storage.memory.MemoryStore
logger.memstore.level = error
"""


def log4j2_properties(level: str = "WARN", traces: bool = False) -> str:
    """The driver JVM's log4j2 configuration (:data:`_LOG4J2`)."""
    return _LOG4J2.format(level=level.lower(), traces=str(traces).lower())


def require_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UsageError("the lag report needs PySpark, which is not installed",
                         hint=SPARK_HINT) from None


def require_arrow() -> None:
    """The kernel's modules (pyarrow and numpy, and pandas, which PySpark's mapInArrow checks
    for), found without importing them: the driver fails fast, before the JVM starts."""
    missing = [m for m in ("pyarrow", "numpy", "pandas") if find_spec(m) is None]
    if missing:
        raise UsageError(f"the lag report needs {', '.join(missing)} (its kernel runs on "
                         "PySpark's Arrow path), which is not installed", hint=ARROW_HINT)


def java_available(env: Mapping[str, str] | None = None) -> bool:
    from mqctl.lagjob.classcache import java_home  # (the one look-up of Spark's java)

    return java_home(env) is not None


def require_java() -> None:
    if not java_available():
        raise UsageError("the lag report runs on Spark, which needs Java, and no java was "
                         "found (PATH, JAVA_HOME)", hint=JAVA_HINT)


@dataclass
class SessionHandle:
    spark: SparkSession
    owned: bool  # we created it, so we stop it


# HotSpot leaves methods over 8,000 bytes of bytecode to the interpreter; Spark's whole-stage
# code for the snapshot checks and the status windows is larger than that, and ran at half
# speed or less (docs/lag-performance.md: parse + checks 6.6 s -> 3.9 s at 1M rows)
JVM_OPTS = "-XX:-DontCompileHugeMethods"
# A small run is over before the optimising compiler (C2) pays for itself: on this 2-core
# machine the demo's report (11 MB of input) ran in 21-23 s with the quick compiler only and
# the serial collector against 25-27 s with the defaults, a 65 MB input in 22-23 s against
# 27-28 s, while 1M rows (660 MB) took 75 s against 60 s (docs/lag-performance.md). The quick
# compiler's code cache is 48 MB by default, which the report's generated classes fill.
SMALL_INPUT_BYTES = 128 * 1024 * 1024
# below this, no expression is compiled either (:func:`sized_settings`)
TINY_INPUT_BYTES = 16 * 1024 * 1024
# below this, one shuffle partition and no adaptive execution (:func:`sized_settings`)
ONE_TASK_INPUT_BYTES = 4 * 1024 * 1024
SMALL_JVM_OPTS = (f"{JVM_OPTS} -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "
                  "-XX:ReservedCodeCacheSize=256m")


def driver_java_options(input_bytes: int) -> str:
    """HotSpot options for a driver JVM that mqctl starts on a local master for a run over
    ``input_bytes`` of input (the driver is the only executor there)."""
    return SMALL_JVM_OPTS if input_bytes < SMALL_INPUT_BYTES else JVM_OPTS


# PySpark 4 records the Python call site of every DataFrame and Column call for error messages
# (pyspark.errors.utils._with_origin: a SparkSession look-up, a conf read, Python's stack and
# PySparkCurrentOrigin.set/clear in the JVM, about ten Py4J round trips per call). The report
# builds its plans from thousands of such calls: on the demo's data 33,000 of 60,000 Py4J
# calls, 20.9 s against 18.3 s without (docs/lag-performance.md, "Tenth pass"). Kept under
# ``mqctl --debug`` (``traces``), where an error's "DataFrame" context names the line.
PYSPARK_CALL_SITES = "spark.python.sql.dataFrameDebugging.enabled"


def default_conf(master: str | None, traces: bool = False) -> dict[str, str]:
    conf = {
        PYSPARK_CALL_SITES: "true" if traces else "false",
        "spark.executor.extraJavaOptions": JVM_OPTS,
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.execution.pythonUDF.arrow.enabled": "false",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.debug.maxToStringFields": "500",  # no "truncated plan" warnings
    }
    if master is None or master.startswith("local"):
        conf["spark.driver.bindAddress"] = "127.0.0.1"
        conf["spark.sql.shuffle.partitions"] = str(max(2, 2 * (os.cpu_count() or 2)))
    return conf


def _started(builder: Any, settings: dict[str, str], master: str | None, app_name: str,
             under_submit: bool) -> SparkSession:
    """The session of ``builder``: its driver JVM launched here (not under spark-submit); the
    one-line error (exit 2) when the JVM does not start."""
    try:
        if not under_submit:
            _launch_jvm(settings, master, app_name)
        return builder.getOrCreate()
    except Exception as exc:  # the JVM did not start
        text = str(exc)
        if "JAVA_GATEWAY_EXITED" in text or "Java gateway" in text or "java" in text.lower():
            raise UsageError(f"Spark could not start its JVM: {text.splitlines()[0][:200]}",
                             hint=JAVA_HINT) from exc
        raise


@contextmanager
def spark_session(master: str | None = "local[*]", *, conf: Mapping[str, str] | None = None,
                  spark: SparkSession | None = None, log_level: str = "WARN",
                  app_name: str = "mqctl lag report", java_opts: str = JVM_OPTS,
                  traces: bool = False, say: Callable[[str], None] | None = None
                  ) -> Iterator[SessionHandle]:
    """Yield the run's session: ``spark`` if given (never stopped here), the active session if
    one exists (a test fixture, ``spark-submit``, a notebook), else a new one (stopped at the end).
    A JVM started here maps Spark's classes from this machine's class archive, or writes one as
    it exits after a block that succeeded (:mod:`mqctl.lagjob.classcache`; ``say`` tells).
    ``java_opts``: HotSpot options of a driver JVM started here (the user's
    ``spark.driver.extraJavaOptions`` come first; a later option wins, as HotSpot reads them).
    ``traces``: its log keeps Java stack traces (else one line per message).

    ``master=None`` leaves the master to ``spark-submit`` (falls back to ``local[*]``).
    """
    if spark is not None:
        yield SessionHandle(spark, owned=False)
        return
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield SessionHandle(active, owned=False)
        return
    require_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if master is None and not under_submit:
        master = "local[*]"
    if master is not None and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory(prefix="mqctl-spark-") as tmp:
        log_cfg = Path(tmp, "log4j2.properties")
        log_cfg.write_text(log4j2_properties(log_level, traces), encoding="utf-8")
        builder: Any = SparkSession.builder.appName(app_name)
        if master is not None:
            builder = builder.master(master)
        settings = default_conf(master, traces)
        # applied when the SparkContext starts, also under spark-submit (whose driver JVM
        # already runs with Spark's INFO profile)
        settings["spark.log.level"] = log_level.upper()
        driver_opts = f"{java_opts} -Dlog4j2.configurationFile=file:{log_cfg}"
        user = dict(conf or {})
        if "spark.driver.extraJavaOptions" in user:
            driver_opts = f"{user.pop('spark.driver.extraJavaOptions')} {driver_opts}"
        settings.update(user)
        from pyspark import SparkContext

        from mqctl.lagjob import classcache

        # a JVM started here maps Spark's classes from an archive, or writes one at exit
        cds = (classcache.plan(driver_opts) if not under_submit and SparkContext._gateway is None
               else classcache.Plan())
        if cds.options:
            driver_opts = f"{driver_opts} {cds.options}"
        settings["spark.driver.extraJavaOptions"] = driver_opts
        for k, v in settings.items():
            builder = builder.config(k, v)
        session = _started(builder, settings, master, app_name, under_submit)
        session.sparkContext.setLogLevel(log_level.upper())
        done = False
        try:
            yield SessionHandle(session, owned=True)
            done = True
        finally:
            try:
                session.stop()
            except Exception:  # the JVM is gone (e.g. out of memory): the run's error says so
                pass
            if cds.writing is not None:
                _end_jvm_writing_archive(cds, say if done else None, keep=done)


# what the JVM prints on its stderr at start-up that nobody can act on: Spark 4 adds the
# jdk.incubator.vector module, and the JVM announces every incubator module it loads
# (java.base, jdk.internal.module.ModuleBootstrap: "WARNING: Using incubator modules: ...")
_JVM_NOISE = (b"WARNING: Using incubator modules:",)


def _pump(fd: int, out: Any) -> None:
    """Copy the JVM's stderr to ours line by line, without its start-up notices."""
    with os.fdopen(fd, "rb") as src:
        for line in src:
            if line.startswith(_JVM_NOISE):
                continue
            try:
                out.write(line)
                out.flush()
            except (OSError, ValueError):  # our stderr is closed: keep draining the pipe
                pass


def _end_jvm_writing_archive(cds: Any, say: Callable[[str], None] | None, *,
                             keep: bool) -> None:
    """End this process's JVM: ``keep`` (the run succeeded) lets it write its class archive
    and moves that in, else it is stopped before it writes one (:mod:`classcache`). Then
    forget it: a later session in this process starts a JVM of its own."""
    from pyspark import SparkContext

    from mqctl.lagjob import classcache

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if keep:
        classcache.finish(cds, proc, say)
    else:
        classcache.abandon(cds, proc)
    with contextlib.suppress(Exception):
        if gateway is not None:
            gateway.shutdown()
    SparkContext._gateway = None
    SparkContext._jvm = None


def _launch_jvm(settings: Mapping[str, str], master: str | None, app_name: str) -> None:
    """Start Spark's JVM (pyspark's py4j gateway, as ``getOrCreate`` would, with the same
    settings on its command line) with its stderr read through :func:`_pump`, so the terminal
    does not start with the JVM's ``WARNING: Using incubator modules`` line; Spark's own
    warnings and errors pass. The reader starts before the JVM (a full pipe must never block
    it). Nothing happens when a JVM already runs in this process (a reused session)."""
    import threading

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False)
    for k, v in settings.items():
        conf.set(k, v)
    if master is not None:
        conf.setMaster(master)
    conf.setAppName(app_name)
    r, w = os.pipe()
    out = getattr(sys.stderr, "buffer", None) or sys.stderr
    threading.Thread(target=_pump, args=(r, out), name="mqctl-jvm-stderr",
                     daemon=True).start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": w})
    finally:
        os.close(w)  # (the JVM holds its own copy; the reader ends when the JVM does)
    SparkContext._ensure_initialized(gateway=gateway)


_SHIPPED: set[str] = set()


def ensure_workers_import_mqctl(spark: SparkSession) -> None:
    """Python workers parse inputs with mqctl's own code. A local master whose workers run
    this very interpreter imports it already; any other set-up (a cluster, a session built
    with another PYSPARK_PYTHON) gets the package shipped as a zip, once per application."""
    import os.path

    sc = spark.sparkContext
    local = (sc.master or "").startswith("local")
    exec_ = getattr(sc, "pythonExec", None) or ""
    same = bool(exec_) and (os.path.realpath(shutil.which(exec_) or exec_)
                            == os.path.realpath(sys.executable))
    if local and same:
        return
    app = sc.applicationId
    if app in _SHIPPED:
        return
    import zipfile

    import mqctl

    root = Path(mqctl.__file__).resolve().parent
    zdir = Path(tempfile.mkdtemp(prefix="mqctl-pyfiles-"))
    zpath = zdir / "mqctl.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(root.rglob("*.py")):
            zf.write(f, Path("mqctl") / f.relative_to(root))
    sc.addPyFile(str(zpath))
    _SHIPPED.add(app)


MB = 1024 * 1024


def sized_settings(input_bytes: int, parallelism: int, local: bool) -> dict[str, str]:
    """Runtime SQL settings for a run over ``input_bytes`` of input.

    * shuffle partitions: about one per 128 MB of input, at least 2 per core on a local master
      (with one per core, a small report with logs ran a 1 GB driver out of heap: more sorts
      at once per task) and the cores on a cluster, at most 4 per core on a local master (more
      tasks than that only add scheduling and sort-merge overhead on one machine), at most
      2,000 on a cluster. A tiny input does not get Spark's default 200 (each is a task in
      every shuffle stage), and an input below ``ONE_TASK_INPUT_BYTES`` gets one (below);
    * adaptive execution on, coalescing small shuffle partitions to 64 MB (off below
      ``ONE_TASK_INPUT_BYTES``);
    * a small file open cost (64 KB instead of 4 MB): a capture per minute is many small files,
      and with the default every file below 4 MB becomes a task of its own;
    * on a local master, the input files are listed by the driver (Spark lists more than 32
      paths with a job of one task per path: 125 tasks for 125 capture files);
    * on a local master and a small input (below ``SMALL_INPUT_BYTES``), no whole-stage code
      generation;
    * on a local master and a small input, neither the optimiser's constraint propagation
      (``spark.sql.constraintPropagation.enabled``: the filters it infers, such as
      ``isnotnull`` on join keys, drop rows that are rare in snapshots; SQLConf
      ``CONSTRAINT_PROPAGATION_ENABLED``, read by ``QueryPlanConstraints.constraints``) nor
      adaptive execution's skewed-join rule (``spark.sql.adaptive.skewJoin.enabled``:
      ``OptimizeSkewedJoin`` re-plans every query stage with a join to look for partitions
      above 256 MB, which an input below 128 MB cannot have). Spark's own rule metrics
      (``RuleExecutor.dumpTimeSpent``) over a warm demo report: 6.4 s of analyser, optimiser
      and planner rules without these two, 4.9 s with (``OptimizeSkewedJoin`` alone 0.6 s in
      111 runs, none effective); the Py4J command thread's CPU 10.6 s against 9.5 s
      (docs/lag-performance.md, "Eighteenth pass"; measured on the demo's 11 MB, not at the
      bound). Both only skip optimisations: the rows are the same;
    * on a local master and an input below ``ONE_TASK_INPUT_BYTES`` (4 MB: a few thousand
      snapshot rows), one shuffle partition and no adaptive execution: every shuffle stage is
      one task, and no query is re-planned stage by stage (adaptive execution's re-planning, a
      Spark job per query stage and the coalescing of partitions, which one partition does not
      need). Measured in the tests' session, the same run alternately with and without
      (docs/lag-performance.md, "Nineteenth pass"): 130 KB of snapshots 9.2 s against 11.1 s
      (x0.83; the JVM's and Python's CPU x0.78), 2 MB x0.92 (CPU x0.82), 4.2 MB x0.96 (CPU
      x0.81); beyond it one task per stage loses to the two cores (7.8 MB x1.06, 15.7 MB
      x1.20), hence the bound. Either alone gains little (one partition x0.94; adaptive
      execution off with four partitions is no faster: every shuffle stage is four
      uncoalesced tasks). A cut with ``keep_partitioning`` keeps the one partition (its own
      job runs without adaptive execution anyway). The two are one setting: a user's
      ``--conf`` of either gives the other its value above the bound (:func:`run_settings_for`);
    * on a local master and a tiny input (below ``TINY_INPUT_BYTES``), no code generation at
      all: the expressions (projections, predicates, orderings) are evaluated by Spark's
      interpreted implementations instead of compiled to Java classes
      (``spark.sql.codegen.factoryMode=NO_CODEGEN``: SQLConf ``CODEGEN_FACTORY_MODE``, read by
      ``CodeGeneratorWithInterpretedFallback.createObject``, the path Spark falls back to when
      a compile fails). On a few thousand rows compiling costs more than it saves (the demo's
      11 MB, warm: 25-28 s of CPU against 34 s); at 65 MB it loses (55 s against 39 s),
      hence the bound (docs/lag-performance.md, "Sixth pass").

    Nothing is cached beyond what the job cuts; these are session settings the run restores.
    """
    cores = max(1, parallelism)
    want = -(-max(0, input_bytes) // (128 * MB))
    lo, hi = (2 * cores, 4 * cores) if local else (cores, 2000)
    parts = max(lo, min(want, hi))
    out = {
        "spark.sql.shuffle.partitions": str(parts),
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.coalescePartitions.enabled": "true",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": str(64 * MB),
        "spark.sql.files.openCostInBytes": str(64 * 1024),
    }
    if local:  # the driver lists the files itself: a job of one task per file costs more
        out["spark.sql.sources.parallelPartitionDiscovery.threshold"] = "1000000"
    if local and input_bytes < SMALL_INPUT_BYTES:
        # compiling a whole stage's code costs more than it saves on a few thousand rows:
        # the demo's report 25.8-27.0 s without against 27.6 s with (docs/lag-performance.md)
        out["spark.sql.codegen.wholeStage"] = "false"
        # planning a small input's ~140 queries costs more than these two optimisations save
        out["spark.sql.constraintPropagation.enabled"] = "false"
        out["spark.sql.adaptive.skewJoin.enabled"] = "false"
    if local and input_bytes < TINY_INPUT_BYTES:
        out["spark.sql.codegen.factoryMode"] = "NO_CODEGEN"
    if local and input_bytes < ONE_TASK_INPUT_BYTES:
        out["spark.sql.shuffle.partitions"] = "1"
        out["spark.sql.adaptive.enabled"] = "false"
    return out


# the settings an input below ONE_TASK_INPUT_BYTES gets together (:func:`sized_settings`)
ONE_TASK_KEYS = ("spark.sql.shuffle.partitions", "spark.sql.adaptive.enabled")


def run_settings_for(input_bytes: int, parallelism: int, local: bool,
                     user_conf: dict[str, str] | None = None) -> dict[str, str]:
    """:func:`sized_settings` without the keys the user gave (``--conf`` wins). One shuffle
    partition and no adaptive execution go together: a user who sets either gets the other as
    an input at the bound does (four partitions of their own without adaptive execution's
    coalescing, or adaptive execution over one partition, would be neither setting's
    measurement)."""
    user = user_conf or {}
    if any(k in user for k in ONE_TASK_KEYS):
        input_bytes = max(input_bytes, ONE_TASK_INPUT_BYTES)
    return {k: v for k, v in sized_settings(input_bytes, parallelism, local).items()
            if k not in user}


def driver_memory(input_bytes: int, physical_bytes: int | None = None) -> str:
    """``spark.driver.memory`` for a run on a local master started by mqctl (the driver is the
    only executor): 1 GB plus one byte of heap per byte of input, at most half the machine's
    memory. Measured (docs/lag-performance.md): 10M snapshot rows (6.6 GB of JSON Lines) died
    of ``OutOfMemoryError`` at Spark's default 1 GB and ran at 6 GB (7.1 GB resident)."""
    if physical_bytes is None:
        try:
            physical_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # not on this platform
            physical_bytes = 8 * 1024 * MB
    want = 1024 * MB + max(0, input_bytes)
    cap = max(1024 * MB, physical_bytes // 2)
    return f"{min(want, cap) // MB}m"


@contextmanager
def run_settings(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Set runtime SQL settings for one run, then restore the caller's values."""
    old: dict[str, str | None] = {}
    for k, v in settings.items():
        try:
            old[k] = spark.conf.get(k, None)
            spark.conf.set(k, v)
        except Exception:  # a setting this Spark (or Spark Connect) does not allow at runtime
            old.pop(k, None)
    try:
        yield
    finally:
        for k, prev in old.items():
            try:
                if prev is None:
                    spark.conf.unset(k)
                else:
                    spark.conf.set(k, prev)
            except Exception:
                pass


@contextmanager
def utc_session(spark: SparkSession) -> Iterator[None]:
    """Run with ``spark.sql.session.timeZone=UTC`` (ISO strings and dates are UTC), then
    restore the caller's setting."""
    key = "spark.sql.session.timeZone"
    old = spark.conf.get(key, None)
    spark.conf.set(key, "UTC")
    try:
        yield
    finally:
        if old is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, old)

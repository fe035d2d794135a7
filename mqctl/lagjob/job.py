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
import sys

if __name__ == "__main__" and __package__ in (None, ""):  # spark-submit mqctl/lagjob/job.py
    _here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0]) == _here:
        sys.path.pop(0)  # don't let lagjob/*.py shadow top-level modules
    sys.path.insert(0, os.path.dirname(os.path.dirname(_here)))

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mqctl.errors import UsageError
from mqctl.lagjob.guards import absolute, check_listing, check_outputs, report_lock, state_lock
from mqctl.lagjob.inputs import InputSpec, parse_input_spec
from mqctl.lagjob.result import ReportResult, result_view
from mqctl.lagjob.run import Run
from mqctl.lagjob.sizing import held as held_by_state
from mqctl.lagjob.sizing import input_bytes, local_manifest, work_bytes
from mqctl.lagjob.thresholds import parse_thresholds
from mqctl.lagjob.writers import is_local
from mqctl.lagoptions import Options, duration_ms, spark_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["Options", "ReportResult", "build_parser", "duration_ms", "main", "result_view",
           "run_report"]


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
    replace a ``prom_file`` mqctl did not write (:func:`guards.check_outputs`; else exit 2).
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
    check_outputs(out_dir, prom_file, state if incremental else None, force=force)
    out_dir = absolute(out_dir)
    state_dir = None
    if incremental:
        from mqctl.lagjob import writers as W

        state_dir = absolute(state or W.join(out_dir, "_state"))
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
    manifest = None if full else local_manifest(state_dir)
    held = held_by_state(manifest)
    if all(is_local(s.path) for s in specs):  # fail fast, before the JVM starts
        from mqctl.lagjob.readers import list_local

        listing = list_local(specs, held)
        check_listing(listing)
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
    size = input_bytes(listing) if listing is not None else None
    if size is not None and (master is None or master.startswith("local")) \
            and spark is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        # a JVM this call starts, sized for the input (spark-submit sized its own JVM; an
        # active session is used as it is)
        if "spark.driver.extraJavaOptions" not in session_conf:  # (theirs could clash: two GCs)
            java_opts = driver_java_options(work_bytes(listing, size, manifest, held, opts,
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
            check_listing(listing)
            size = input_bytes(listing)
        assert size is not None
        sc = handle.spark.sparkContext
        tuned = run_settings_for(size, sc.defaultParallelism,  # (the user's --conf wins)
                                 (sc.master or "").startswith("local"), spark_conf)
        with run_settings(handle.spark, tuned):
            run = Run(handle.spark, listing, out_dir, opts, thresholds, prom_file, say)
            run.state, run.full = state_dir, full
            return run.run()


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

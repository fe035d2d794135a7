"""``mqctl lag report``: the Spark lag / rebalance report over exports (a thin caller of
:func:`mqctl.lagjob.run_report`; pyspark loads only when the command runs)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mqctl.cli.common import (
    OutputFormat,
    PathParser,
    emit,
    info,
    out_dir,
    out_file,
    state,
    warn,
)
from mqctl.cli.options import (
    LAG_INPUTS_HELP,
    ExecuteOpt,
    KeepReq,
    OutputOpt,
    PruneOutOpt,
    SnapshotsOpt,
)
from mqctl.fsutil import PathRule

if TYPE_CHECKING:
    from mqctl.render import Result

app = typer.Typer(help="Lag and rebalance reports computed with Spark from exports.",
                  no_args_is_help=True)


def _readable(view: Result) -> Result:
    """The summary table as the glossary says (docs/output.md): time lag as a duration
    (``3h 1m``, header TIME LAG, CSV/JSON ``lag_seconds`` in seconds) and rates with two
    decimals in every row (``10900.00`` next to ``6630.40``, not ``10900``)."""
    from dataclasses import replace

    from mqctl.timeparse import format_duration

    def dur(v: Any) -> str:
        return "-" if v is None else (format_duration(float(v) * 1000) or "0")

    def rate(v: Any) -> str:
        return "-" if v is None else f"{float(v):.2f}"

    shown = {"lag_seconds": ("time_lag", "TIME LAG", dur),
             "lag_seconds_source": (None, "TIME LAG SOURCE", None),
             "consume_rate": ("consume_rate_cell", None, rate),
             "produce_rate": ("produce_rate_cell", None, rate)}
    for t in view.tables:
        if t.name != "summary":
            continue
        cols = []
        for c in t.columns:
            key, header, fmt = shown.get(c.key, (None, None, None))
            cols.append(replace(c, key=key or c.key, header=header or c.header,
                                raw=c.key if key else c.raw))
        rows = []
        for r in t.rows:
            r = dict(r)
            for k, (key, _h, fmt) in shown.items():
                if key and fmt and k in r:
                    r[key] = fmt(r[k])
            rows.append(r)
        t.columns, t.rows = cols, rows
    return view


def report(ctx: typer.Context, inputs: list[str], output: OutputFormat | None = None,
           **values: Any) -> None:
    """Compute offset lag, time lag, Burrow-style status and rebalance history from exports
    with Spark, and write date-partitioned Parquet (re-runs replace their dates), summary.csv,
    summary.json, report.html and a Prometheus textfile.

    Each group gets a health (OK, WARN, ERR): its status, a rebalance storm (--storm-rounds
    rounds within --storm-window, or one round longer than --storm-round-max) and queues
    unowned --unowned-max of the time; a group it cannot judge (BROADCASTING) is listed with
    the reason.

    Rebalance history counts one event per real change (a logged change and the snapshot
    change it explains are one), a client restarted with the same id as a crash and a new
    gain, offset resets as reset events, not rebalances, and a member that did not answer its
    running info as an unknown owner (the previous owner carried), not a loss. A queue is
    unowned only while no client holds it. A never-committed queue's consumer offset is none,
    its lag the whole queue and its time lag unknown, not the broker's "now - 0".

    A re-run with other options than the state was computed with (any option but --out,
    --master, --fail-on, --prom-file, --conf, --limit, --state, --full, --force) computes
    every capture again.

    The first run on a machine saves the JVM's loaded classes for later runs, which start
    faster (once per Java and Spark installation, about 190 MB in ~/.cache/mqctl/jvm;
    MQCTL_CLASS_ARCHIVE=off does without, MQCTL_CLASS_ARCHIVE=DIR keeps it in DIR).

    Example: mqctl lag report /var/lib/mqctl/snapshots --out /var/lib/mqctl/report
    --fail-on 'lag_seconds>300'

    Example (snapshots plus client logs; the logs need no --cluster):
    mqctl lag report snapshots/ logs/ --out report --log-tz UTC
    """
    from mqctl.errors import ThresholdBreached
    from mqctl.lagjob import result_view, run_report
    from mqctl.lagoptions import Options, spark_conf

    st = state(ctx)
    opts = Options.from_values(values)  # (bad zones, times, durations: exit 2 before Spark)
    res = run_report(
        inputs, values["out"], opts, master=values["master"], fail_on=values["fail_on"] or (),
        prom_file=values["prom_file"], spark_conf=spark_conf(values["conf"]) or None,
        progress=lambda m: info(st, m), state=values["state"], full=values["full"],
        debug=st.debug, force=values["force"])
    for w in res.warnings:  # (what the outputs rest on but may not show)
        warn(w)
    emit(_readable(result_view(res, values["limit"])), st.output(output))
    if res.breaches:
        exprs = sorted({b.expr for b in res.breaches})
        raise ThresholdBreached(
            f"{len(exprs)} threshold(s) breached: {', '.join(exprs)}",
            hint=f"details in {res.paths.get('summary_json', 'summary.json')}")


# the lag report's path options and inputs (a Hadoop URI is checked by its file system when
# written or read; a glob by the listing of the inputs)
REPORT_PATHS = {
    "out": out_dir("report directory", remote=True),
    "prom_file": out_file("Prometheus file", create_parent=False, remote=True),
    "state": out_dir("state directory", remote=True),
}


class _InputParser(PathParser):
    """An input of the lag report, ``PATH`` or ``KIND=PATH``: the path is checked (a file or
    a directory; a glob or URI is listed by the report), the kind by the report."""

    def __call__(self, value: str) -> str:
        import os
        import re

        head, sep, rest = value.partition("=")
        if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", head) and not os.path.lexists(value):
            super().__call__(rest)
            return value
        return super().__call__(value)


INPUTS = _InputParser(PathRule("input", directory=None, remote=True))


def _report_signature() -> inspect.Signature:
    """``report``'s parameters as Typer reads them (public: a function's ``__signature__``):
    the inputs, every option of :mod:`mqctl.lagoptions` (flag, help, default, metavar,
    bounds) and -o."""
    from mqctl.lagoptions import FLAG_TYPES, Kind, flag_specs

    kw = inspect.Parameter.KEYWORD_ONLY
    params = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          annotation=typer.Context),
        inspect.Parameter("inputs", kw, annotation=Annotated[list[str], typer.Argument(
            parser=INPUTS, help=LAG_INPUTS_HELP, show_default=False)]),
    ]
    for spec in flag_specs():
        typ: Any = FLAG_TYPES[spec.kind]
        if spec.kind is Kind.LIST:
            typ = list[str] | None
        elif spec.default is None and not spec.required:
            typ = typ | None
        shown = spec.default not in (None, "", []) and spec.kind is not Kind.LIST
        opt = typer.Option(spec.flag, help=spec.help, metavar=spec.metavar, min=spec.min,
                           max=spec.max, show_default=shown, parser=REPORT_PATHS.get(spec.name))
        default = inspect.Parameter.empty if spec.required else spec.default
        params.append(inspect.Parameter(spec.name, kw, default=default,
                                        annotation=Annotated[typ, opt]))
    params.append(inspect.Parameter("output", kw, default=None, annotation=OutputOpt))
    return inspect.Signature(params, return_annotation=None)


report.__signature__ = _report_signature()  # type: ignore[attr-defined]
app.command("report")(report)


# ---- mqctl lag prune (retention of the report's partitions and of capture files) ----------

@app.command("prune")
def prune(
    ctx: typer.Context,
    keep: KeepReq,
    out: PruneOutOpt = None,
    snapshots: SnapshotsOpt = None,
    execute: ExecuteOpt = False,
    output: OutputOpt = None,
) -> None:
    """Delete old report partitions and/or capture files: the plan first, --execute deletes.

    Report datasets (lag, group_status, rebalance/*, quarantine) lose their date=
    partitions whose whole UTC day lies before now minus --keep; each dataset keeps its newest
    partition. Capture files (only names mqctl snapshot gives) go by the capture time in
    their name; each cluster keeps its newest. A partition is renamed out of sight first
    (atomic: a reader sees all of it or none), then removed. Local directories only.

    Example: mqctl lag prune --out /var/lib/mqctl/report --keep 30d --execute

    Example (plan only): mqctl lag prune --snapshots /var/lib/mqctl/snapshots --keep 7d
    """
    from mqctl.lagjob.prune import prune as prune_result

    emit(prune_result(keep=keep, out=out, snapshots=snapshots, execute=execute),
         state(ctx).output(output))


@app.command("job-path")
def job_path() -> None:
    """Print the path of the lag report's spark-submit entry point in this installation
    (mqctl/lagjob/job.py inside the installed package; it takes the same options as `lag
    report`).

    Example: spark-submit --master spark://host:7077 "$(mqctl lag job-path)" --out OUT INPUT...
    """
    from importlib.util import find_spec

    spec = find_spec("mqctl.lagjob.job")  # located, not imported: no pyspark here
    if spec is None or spec.origin is None:  # pragma: no cover - a broken installation
        from mqctl.errors import MqctlError

        raise MqctlError("mqctl.lagjob.job is not installed",
                         hint="reinstall mqctl: pip install 'mqctl[spark]'")
    typer.echo(spec.origin)

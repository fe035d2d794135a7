"""``mqctl lag report``: the Spark lag / rebalance report over exports (a thin caller of
:func:`mqctl.lagjob.run_report`; pyspark loads only when the command runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from mqctl.cli.common import OutputOpt, emit, info, state

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


@app.command("report")
def report(
    ctx: typer.Context,
    inputs: Annotated[list[str], typer.Argument(
        help="Inputs: files, directories (read recursively), globs or Spark URIs, any mix of "
             "snapshots, consumerOffset.json/topics.json/subscriptionGroup.json, mqadmin "
             "consumerProgress/brokerConsumeStats/topicStatus captures, rocketmq_client.log "
             "and lock.log. Prefix KIND= to force a kind (e.g. topic-status=ts.txt).",
        show_default=False)],
    out: Annotated[str, typer.Option("--out", help="Output directory (Parquet datasets, "
                                                   "summaries, HTML, Prometheus file).")],
    master: Annotated[str, typer.Option("--master", help="Spark master URL.")] = "local[*]",
    window: Annotated[int, typer.Option("--window", min=1, help="Captures in the status "
                                                               "window (Burrow's intervals).")
                      ] = 10,
    fail_on: Annotated[list[str] | None, typer.Option(
        "--fail-on", help="Threshold that makes the run exit 9 after writing everything, e.g. "
        "'lag_seconds>300', 'group=GID_*:status>=WARN', 'lag>10000' (repeatable).",
        show_default=False)] = None,
    tz: Annotated[str | None, typer.Option(
        "--tz", help="Time zone of mqadmin dates and of path timestamps without a zone "
                     "(default: this machine's).", show_default=False)] = None,
    log_tz: Annotated[str | None, typer.Option(
        "--log-tz", help="Time zone of 4.x client logs (default: this machine's).",
        show_default=False)] = None,
    broker_log_tz: Annotated[str, typer.Option(
        "--broker-log-tz", help="Time zone of lock.log and 5.x client logs (their logback "
                                "pattern pins GMT+8).")] = "+08:00",
    cluster: Annotated[str, typer.Option(
        "--cluster", help="Cluster name for inputs that carry none (store files, mqadmin "
                          "captures, logs). Without it, logs take the cluster of their "
                          "group's snapshots when that is one cluster.")] = "",
    allowed_lag: Annotated[int, typer.Option(
        "--allowed-lag", min=0, help="Lag still considered caught up (Burrow's allowed-lag).")
    ] = 0,
    allowed_lag_seconds: Annotated[float, typer.Option(
        "--allowed-lag-seconds", min=0, help="Time lag still considered caught up: consumers "
        "commit every 5 s, so healthy groups trail by seconds (0 = Burrow's rule alone).")
    ] = 10.0,
    max_skew: Annotated[str, typer.Option(
        "--max-skew", help="How far apart a consumerOffset.json and the topicStatus capture "
                           "giving its max offsets may be.")] = "5m",
    align: Annotated[str, typer.Option(
        "--align", help="Captures closer than this are one capture (per-broker exports of one "
                        "cron run); 0 = exact times.")] = "10s",
    storm_rounds: Annotated[int, typer.Option(
        "--storm-rounds", min=1, help="Rebalance rounds within --storm-window that make a "
                                      "storm.")] = 3,
    storm_window: Annotated[str, typer.Option("--storm-window", help="Storm window; also how "
                                              "far back a group's health looks.")] = "10m",
    storm_round_max: Annotated[str, typer.Option(
        "--storm-round-max", help="A rebalance round lasting longer than this is a storm by "
                                  "itself (continuous churn); 0 = off.")] = "1m",
    unowned_max: Annotated[float, typer.Option(
        "--unowned-max", min=0.0, max=1.0, help="Group health ERR when queues were unowned "
        "this share of the queue time in the storm window.")] = 0.1,
    prom_file: Annotated[str | None, typer.Option(
        "--prom-file", help="Write the Prometheus textfile here (e.g. node_exporter's textfile "
                            "directory) instead of OUT/mqctl_lag.prom.", show_default=False)
    ] = None,
    conf: Annotated[list[str] | None, typer.Option(
        "--conf", help="Spark setting KEY=VALUE (repeatable).", show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Groups shown here (every group "
                                                              "and topic is in summary.csv).")
                     ] = 20,
    state_dir: Annotated[str | None, typer.Option(
        "--state", help="Where snapshot files are kept parsed between runs (an ingested Parquet "
                        "table, its manifest and what later captures need; default "
                        "OUT/_state): a re-run parses only new or changed files; new captures "
                        "after the reported ones are computed alone and added.",
        show_default=False)] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="Re-parse every input and rewrite every date (rebuilds --state).")
    ] = False,
    since: Annotated[str | None, typer.Option(
        "--since", help="Report captures and events from this time on (e.g. 2024-06-01, -24h); "
                        "earlier captures still feed the status window.", show_default=False)
    ] = None,
    until: Annotated[str | None, typer.Option(
        "--until", help="Ignore what was captured after this time.", show_default=False)
    ] = None,
    output: OutputOpt = None,
) -> None:
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

    Example: mqctl lag report /var/lib/mqctl/snapshots --out /var/lib/mqctl/report
    --fail-on 'lag_seconds>300'

    Example (snapshots plus client logs; the logs need no --cluster):
    mqctl lag report snapshots/ logs/ --out report --log-tz UTC
    """
    from mqctl.errors import ThresholdBreached, UsageError
    from mqctl.lagjob import result_view, run_report
    from mqctl.lagjob.job import duration_ms

    st = state(ctx)
    spark_conf: dict[str, str] = {}
    for kv in conf or []:
        k, sep, v = kv.partition("=")
        if not sep or not k.strip():
            raise UsageError(f"bad --conf {kv!r}", hint="write KEY=VALUE, e.g. "
                             "spark.driver.memory=4g")
        spark_conf[k.strip()] = v
    res = run_report(
        inputs, out, master=master, window=window, fail_on=fail_on or (), tz=tz, log_tz=log_tz,
        broker_log_tz=broker_log_tz, cluster=cluster, allowed_lag=allowed_lag,
        allowed_lag_seconds=allowed_lag_seconds,
        max_skew_ms=duration_ms(max_skew), align_ms=duration_ms(align),
        storm_rounds=storm_rounds, storm_window_ms=duration_ms(storm_window),
        storm_round_max_ms=duration_ms(storm_round_max), unowned_max=unowned_max,
        prom_file=prom_file, spark_conf=spark_conf or None,
        progress=lambda m: info(st, m), state=state_dir, full=full, since=since, until=until,
        debug=st.debug)
    emit(_readable(result_view(res, limit)), st.output(output))
    if res.breaches:
        exprs = sorted({b.expr for b in res.breaches})
        raise ThresholdBreached(
            f"{len(exprs)} threshold(s) breached: {', '.join(exprs)}",
            hint=f"details in {res.paths.get('summary_json', 'summary.json')}")


# ---- mqctl lag prune (retention of the report's partitions and of capture files) ----------

@app.command("prune")
def prune(
    ctx: typer.Context,
    keep: Annotated[str, typer.Option(
        "--keep", help="Keep this much history (e.g. 30d); older date partitions / capture "
                       "files are deleted, never a dataset's or cluster's newest.")],
    out: Annotated[str | None, typer.Option(
        "--out", help="Report directory (the --out of lag report): its date=YYYY-MM-DD "
                      "partitions whose whole UTC day is older than --keep.",
        show_default=False)] = None,
    snapshots: Annotated[str | None, typer.Option(
        "--snapshots", help="Snapshot directory (the --out of mqctl snapshot): capture files "
                            "older than --keep.", show_default=False)] = None,
    execute: Annotated[bool, typer.Option(
        "--execute", help="Delete. Without it the plan is shown and nothing is deleted.")
    ] = False,
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
    import dataclasses

    from mqctl.errors import UsageError
    from mqctl.lagjob import retention
    from mqctl.render import Result, Table, cols
    from mqctl.snapshot import apply_prune, list_captures, parse_keep, plan_prune, run_lock
    from mqctl.timeparse import format_ms, now_ms

    st = state(ctx)
    if out is None and snapshots is None:
        raise UsageError("say what to prune", hint="pass --out REPORT_DIR and/or "
                         "--snapshots SNAPSHOT_DIR")
    keep_ms = parse_keep(keep)
    now = now_ms()
    report_plan = cap_plan = None
    if out is not None:
        d = retention.local_dir(out, "report directory", "the --out of mqctl lag report")
        report_plan = retention.plan_report_prune(d, retention.list_partitions(d),
                                                  keep_ms=keep_ms, now=now)
    snap_dir = None
    if snapshots is not None:
        snap_dir = retention.local_dir(snapshots, "snapshot directory",
                                       "the --out of mqctl snapshot")
        cap_plan = plan_prune(list_captures(snap_dir), keep_ms=keep_ms, now=now)
    if execute:
        if report_plan is not None:
            from mqctl.lagjob.job import report_lock

            with report_lock(str(d)):  # (not under a report run: exit 6 while one writes)
                report_plan = dataclasses.replace(
                    report_plan, delete=retention.apply_report_prune(report_plan))
        if cap_plan is not None and snap_dir is not None:
            # a capture running now is not raced: the snapshot's own lock (exit 6 if held)
            with run_lock(snap_dir):
                cap_plan = plan_prune(list_captures(snap_dir), keep_ms=keep_ms, now=now)
                cap_plan = dataclasses.replace(cap_plan, delete=apply_prune(cap_plan))
    rows = retention.prune_rows(report_plan, cap_plan, executed=execute)
    gone = [r for r in rows if str(r["action"]).startswith(("delete", "deleted"))]
    nfiles = sum(int(str(r["files"])) for r in gone)
    nbytes = sum(int(str(r["bytes"])) for r in gone)
    from mqctl.cli.snapshot import human_bytes

    cutoff = format_ms(now - keep_ms)
    parts = len([r for r in gone if r["what"] != "snapshots"])
    caps = sum(int(str(r["files"])) for r in gone if r["what"] == "snapshots")
    what = f"{parts} partition(s) and {caps} capture file(s), {nfiles} file(s), " \
           f"{human_bytes(nbytes)}, from before {cutoff}"
    note = (f"deleted {what}" if execute else
            f"plan: would delete {what}; nothing was deleted (re-run with --execute)")
    if not gone:
        note = f"nothing older than {cutoff} to delete"
    data = {"executed": execute, "keep": keep, "cutoff_ms": now - keep_ms,
            "cutoff_time": cutoff, "files": nfiles, "bytes": nbytes, "rows": rows}
    emit(Result([Table(cols("what", "date", "files", "bytes", "action"), rows)], data=data,
                notes=[note]), st.output(output))


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

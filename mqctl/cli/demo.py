"""``mqctl demo``: simulated cluster -> snapshots over simulated hours -> Spark lag report."""

from __future__ import annotations

import typer

from mqctl.cli.common import emit, progress, state
from mqctl.cli.options import (
    DemoOutOpt,
    ForceOpt,
    HoursOpt,
    IntervalOpt,
    MasterOpt,
    OutputOpt,
    WindowOpt,
)


def demo(
    ctx: typer.Context,
    out: DemoOutOpt = None,
    hours: HoursOpt = 3.0,
    interval: IntervalOpt = "2m",
    master: MasterOpt = "local[*]",
    window: WindowOpt = 10,
    force: ForceOpt = False,
    output: OutputOpt = None,
) -> None:
    """Run the main job on the embedded default: start the simulated demo cluster on a fast
    clock, snapshot every group every INTERVAL over HOURS of simulated time (a consumer
    crash, rebalances, a lag spike and a recovery happen in it), run the Spark lag report on
    the snapshots and client/broker logs, and print where the report is.

    Example: mqctl demo --hours 3 --interval 2m
    """
    import sys
    import time

    from mqctl.demo import DEMO_MARKERS, demo_steps, run_demo
    from mqctl.fsutil import dir_overwrite_error, output_location_error
    from mqctl.lagjob.job import duration_ms, result_view

    st = state(ctx)
    fmt = st.output(output)
    interval_s = duration_ms(interval, "--interval") / 1000
    steps = demo_steps(hours, interval_s)  # (0s, a negative or too many: exit 2)
    out_dir = out or f"mqctl-out/demo-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    err = output_location_error(out_dir, "the demo directory", directory=True) or \
        dir_overwrite_error(out_dir, "the demo directory", markers=DEMO_MARKERS, force=force)
    if err is not None:  # (read-only, a file, a full disk, not mqctl's: before the simulation)
        raise err

    def say(msg: str) -> None:
        if not st.quiet:
            sys.stderr.write(msg + "\n")

    say(f"mqctl demo: simulating {hours:g} h of the demo cluster, a snapshot every "
        f"{interval_s:g} s, into {out_dir}")
    with progress(st, "snapshots", steps) as advance:
        cap, res = run_demo(out_dir, hours=hours, interval_s=interval_s, master=master,
                            window=window, on_capture=lambda _i, _n: advance(1), progress=say,
                            force=force)
    from mqctl.cli.lag import _readable

    view = _readable(result_view(res))  # TIME LAG as a duration, as `lag report` shows it
    view.notes.insert(0, f"simulated {hours:g} h: {cap.captures} snapshot(s), {cap.rows} rows, "
                      f"logs in {cap.logs_dir}")
    emit(view, fmt)

"""``mqctl demo``: the main job on the embedded default, end to end.

1. start the bundled demo scenario in-process on ephemeral ports, with a manual (as fast as
   possible) clock, writing real-format client and broker logs;
2. every ``interval`` of simulated time, capture a snapshot of every group over the wire,
   exactly as ``mqctl snapshot --all-groups`` does from cron;
3. over the simulated hours a consumer crashes (stale lock), consumers join and leave
   (rebalances) and a production burst causes a lag spike and a recovery;
4. run the Spark lag report on the snapshots and logs and return where everything is.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mqctl.api.connection import connect
from mqctl.context import current, use
from mqctl.errors import UsageError
from mqctl.remoting.client import ClientOptions

# the most snapshots one demo takes (--hours / --interval): each is a capture over the wire
MAX_CAPTURES = 10_000


def demo_steps(hours: float, interval_s: float) -> int:
    """How many snapshots ``hours`` of simulated time take at one every ``interval_s``
    (at least 1); a zero, negative or endless value, or more than :data:`MAX_CAPTURES`
    snapshots, is a usage error (exit 2)."""
    if not (math.isfinite(hours) and hours > 0):
        raise UsageError(f"--hours {hours:g} must be a positive number of hours",
                         hint="e.g. --hours 3")
    if not (math.isfinite(interval_s) and interval_s > 0):
        raise UsageError(f"--interval {interval_s:g}s must be longer than 0",
                         hint="the simulated time between snapshots, e.g. --interval 2m")
    steps = hours * 3600 // interval_s
    if steps > MAX_CAPTURES:
        raise UsageError(f"--hours {hours:g} at --interval {interval_s:g}s makes {steps:,.0f} "
                         f"snapshots: at most {MAX_CAPTURES:,}",
                         hint="give a longer --interval or fewer --hours")
    return max(1, int(steps))


@dataclass(frozen=True)
class DemoCapture:
    out_dir: Path
    snapshots_dir: Path
    logs_dir: Path
    captures: int
    rows: int
    sim_start_ms: int
    sim_end_ms: int


async def capture_timeline(out_dir: Path, *, hours: float, interval_s: float,
                           scenario: str = "demo",
                           on_capture: Callable[[int, int], None] | None = None) -> DemoCapture:
    """Run the scenario for ``hours`` of simulated time, snapshotting every ``interval_s``."""
    from mqctl.admin import Admin
    from mqctl.sim import SimCluster
    from mqctl.sim.scenario import load_scenario
    from mqctl.snapshot import capture, discover_groups, write

    steps = demo_steps(hours, interval_s)
    snaps, logs = out_dir / "snapshots", out_dir / "logs"
    # the simulated hours end now, not hours from now: the report that follows is generated
    # after its captures, as a cron report is
    start = int(time.time() * 1000) - int(steps * interval_s * 1000)
    cluster = SimCluster(load_scenario(scenario, start_ms=start), clock="manual",
                         log_dir=str(logs))
    await cluster.start()
    rows = 0
    try:  # (the simulated clock is the capture's: mqctl.context)
        async with connect(ClientOptions(timeout=5.0, max_in_flight=16)) as client, \
                _sim_clock(cluster.clock.now_ms):
            admin = Admin(client, cluster.namesrv_addr, concurrency=16)
            groups = await discover_groups(admin)
            for i in range(steps):
                await cluster.advance(interval_s)
                snap = await capture(admin, groups, namesrv=cluster.namesrv_addr)
                write(snap, snaps)
                rows += len(snap.rows)
                if on_capture is not None:
                    on_capture(i + 1, steps)
        return DemoCapture(out_dir, snaps, logs, steps, rows, cluster.clock.start_ms,
                           cluster.clock.now_ms())
    finally:
        await cluster.stop()


@contextlib.asynccontextmanager
async def _sim_clock(clock: Callable[[], int]) -> AsyncIterator[None]:
    """The simulated cluster's clock for what the block computes (lock ages, time lags)."""

    with use(current().with_(clock=clock)):
        yield


# what makes a directory an earlier demo's (its snapshots' or its report's lock file)
DEMO_MARKERS = ("snapshots/.mqctl-snapshot.lock", "report/.mqctl-lag.lock")


def run_demo(out_dir: str | Path, *, hours: float = 3.0, interval_s: float = 120.0,
             master: str = "local[*]", window: int = 10,
             on_capture: Callable[[int, int], None] | None = None,
             progress: Callable[[str], None] | None = None,
             spark: Any = None, force: bool = False) -> tuple[DemoCapture, Any]:
    """Capture the timeline, then run the lag report on it. Returns (capture, ReportResult).
    ``force``: the report may write into an ``OUT/report`` that is not mqctl's."""
    from mqctl.lagjob.job import run_report

    out = Path(out_dir)
    cap = asyncio.run(capture_timeline(out, hours=hours, interval_s=interval_s,
                                       on_capture=on_capture))
    result = run_report([f"snapshot={cap.snapshots_dir}", str(cap.logs_dir)],
                        str(out / "report"), master=master, window=window, spark=spark,
                        progress=progress, force=force)
    return cap, result

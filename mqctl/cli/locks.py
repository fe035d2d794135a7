"""``mqctl locks show`` / ``mqctl locks release``: queue locks of orderly consumer groups."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import (
    OptionalWatchCommand,
    cluster,
    emit,
    emit_before_change,
    emit_or_lost,
    one_group,
    output_lost_error,
    state,
)
from mqctl.cli.common import watch as watch_loop
from mqctl.cli.options import (
    ClientOpt,
    ConcurrencyOpt,
    CountOpt,
    ExecuteOpt,
    ForceOpt,
    GroupArg,
    GroupOption,
    IncludeRetryOpt,
    NamesrvOpt,
    NoStateOpt,
    OutputOpt,
    ReleaseQueueOpt,
    StateDirOpt,
    TopicOpt,
    WatchOpt,
)

if TYPE_CHECKING:
    from mqctl.api import Cluster
    from mqctl.errors import MqctlError
    from mqctl.interrupt import Stop
    from mqctl.locks import LockView
    from mqctl.locks.release import ReleaseOutcome
    from mqctl.render import Result

app = typer.Typer(help="Queue locks of orderly consumer groups: who holds which queue, "
                       "which are stuck and why, and releasing a stale lock.",
                  no_args_is_help=True)

def _raise_partial(view: LockView) -> None:
    if view.failures:
        from mqctl.errors import PartialFailure

        fs = view.failures
        detail = "; ".join(f"{f.broker} ({f.addr or 'no address'}): {f.message}" for f in fs[:5])
        raise PartialFailure(f"{len(fs)} broker request(s) failed during locks show: {detail}",
                             [(f.broker, f.message) for f in fs],
                             hint="the output above covers the brokers that answered")


@app.command("show", cls=OptionalWatchCommand)
def show(
    ctx: typer.Context,
    group: GroupArg = None,
    group_opt: GroupOption = None,
    topic: TopicOpt = None,
    include_retry: IncludeRetryOpt = False,
    watch: WatchOpt = None,
    count: CountOpt = None,
    state_dir: StateDirOpt = None,
    no_state: NoStateOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Who holds the lock of each queue of an orderly group, as its clients report it.

    Per queue: the owner, locked, lock age, whether the client still trusts it (<= 30 s;
    false for a client that left the group, empty for one that does not answer), how long
    the broker lease can still run (60 s from the last renewal the client reports), FREES AT
    (when a departed holder's lease ends: the earliest possible end, which moves 20 s later
    each time it passes while the holder may have renewed before it left; the hint gives the
    latest), unlock tries, dropped, and the owner the allocation predicts. Times are in the
    --tz zone with their offset. States: held, expiring,
    stale, contested, lock-failed, unknown, unowned (see docs/locks.md). A client that stopped
    answering (hung) renewed nothing after its last answer: once its lease lapsed its queues
    are never stale again, also after the brokers drop it (~120 s after its last heartbeat).
    After FREES AT the new owner locks the queue at its next rebalance; a 4.x client consumes
    it after its next 20 s lock cycle. A later grant outranks an earlier claim: a holder that
    stopped gracefully (it unlocks on shutdown) is not stale once the survivor was granted its
    queues. A client id that restarted or reconnected since the last run (found gone, or a new
    clientAddr) gets none of what its earlier process reported. Read-only: sends no
    LOCK_BATCH_MQ, UNLOCK_BATCH_MQ or HEART_BEAT.

    Tables: queues (what -o csv prints), summary, clients (--table NAME picks one).

    Example: mqctl locks show --group GID_ORDER --watch
    """
    from mqctl.locks.rows import view_result

    group = one_group(group, group_opt, example="mqctl locks show GID_ORDER")
    st = state(ctx)
    fmt = st.output(output)

    with cluster(st, namesrv, concurrency) as c:
        store = None if no_state else c.aio.lock_store(state_dir)  # (one memory per watch)

        def once(c: Cluster) -> LockView:
            return c.locks(group, topic=topic, include_retry=include_retry, store=store,
                           remember=store is not None)

        if watch is not None:
            return watch_loop(c, once, view_result, fmt, watch, count, "locks show",
                              output)
        view = once(c)
    emit(view_result(view), fmt)
    _raise_partial(view)


def _keep_result(out: Result, group: str, err: MqctlError | None) -> str | None:
    """``out`` (and ``err``) kept in ``<state>/released/<group>-<time>.result.txt`` (a release
    has no rollback file to put it beside)."""
    import time

    from mqctl.cli.common import keep_result
    from mqctl.interrupt import state_root
    from mqctl.reset import free_path, rollback_path

    name = rollback_path(group, "release", int(time.time() * 1000)).name
    return keep_result(free_path(state_root() / "released" / name.replace(".json", ".result.txt")),
                       out, err)


@app.command("release")
def release(
    ctx: typer.Context,
    queue: ReleaseQueueOpt,
    group: GroupArg = None,
    group_opt: GroupOption = None,
    topic: TopicOpt = None,
    client: ClientOpt = None,
    execute: ExecuteOpt = False,
    force: ForceOpt = False,
    state_dir: StateDirOpt = None,
    no_state: NoStateOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
) -> None:
    """Release stale queue locks on behalf of their recorded holder (UNLOCK_BATCH_MQ).

    The broker removes a lock entry only for the client id that holds it, so the holder
    comes from the clients' reports (or the state file of earlier `locks show` runs, for a
    consumer that crashed); --client overrides it. --topic names the queue's topic when the
    group subscribes to several topics with that queue. Shows the plan and sends nothing without
    --execute; refuses (exit 6) when a holder is alive and renewing, or another client was
    granted the lock after the holder's last renewal, unless --force (nothing is sent when any
    queue is refused). With --execute it prints the plan, sends one request per
    queue and re-checks. Ctrl-C, SIGTERM or SIGHUP while sending stops sending, waits up to 5 s
    for the requests in flight, prints each queue's status (released / not-sent / unknown) and
    the command that finishes the release, exits 130 (a release cannot be undone: a live holder
    re-locks at its next lockAll). Another change of the group running on this machine (a
    release, an offsets reset or rollback): refused (exit 6).

    Example: mqctl locks release --group GID_ORDER --queue broker-a:3 --queue broker-b:1 --execute
    """
    from mqctl.interrupt import deferred
    from mqctl.locks.release import release_request
    from mqctl.locks.release_rows import ready_result

    group = one_group(group, group_opt,
                      example="mqctl locks release GID_ORDER --queue broker-a:3 -t TopicOrder")
    request = release_request(group, queue, topic=topic, client=client, execute=execute,
                              force=force, state_dir=state_dir, no_state=no_state)
    st = state(ctx)
    fmt = st.output(output)
    # SIGINT/SIGTERM/SIGHUP while releasing: stop, then say what was released; recorded
    # by the one handler from before the plan to the last file (none can be lost)
    with deferred() as stop, cluster(st, namesrv) as c, \
            c.plan_release(request, stop=stop) as run:
        shown = fmt in ("table", "plain")

        def ready(_step: str, _n: int) -> None:
            if shown:  # what is being sent, while it runs
                emit_before_change(ready_result(run.run), fmt)

        outcome = run.unchanged() if not execute else run.apply(on_progress=ready, stop=stop)
        _finish(outcome, fmt, shown, stop)


def _finish(o: ReleaseOutcome, fmt: str, shown: bool, stop: Stop) -> None:
    """Render the outcome (kept in a file too when the terminal may be gone) and exit with
    its error."""
    from mqctl.locks.release_rows import outcome_result

    out = outcome_result(o, plan_shown=shown)
    if o.interruption is not None:
        # the terminal may be gone (SIGHUP): the result goes to a file first
        out.data["interrupted"]["result_file"] = _keep_result(out, o.plans[0].group, o.error())
        emit_or_lost(out, fmt)
        raise o.error()  # type: ignore[misc]
    lost = emit_or_lost(out, fmt)
    kept = _keep_result(out, o.plans[0].group, None) if (
        lost is not None or stop.stopped) and o.results is not None else None
    err = o.error()
    if err is not None:
        raise err
    if lost is not None and o.results is not None:
        raise output_lost_error(lost, kept)

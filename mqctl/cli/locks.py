"""``mqctl locks show`` / ``mqctl locks release``: queue locks of orderly consumer groups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from mqctl.cli.common import (
    OptionalWatchCommand,
    emit,
    emit_before_change,
    emit_or_lost,
    make_admin,
    one_group,
    output_lost_error,
    state,
    warn,
    with_client,
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
from mqctl.interrupt import guarded

if TYPE_CHECKING:
    from mqctl.errors import MqctlError
    from mqctl.locks import LockStore, LockView, ReleaseResult
    from mqctl.render import Result

app = typer.Typer(help="Queue locks of orderly consumer groups: who holds which queue, "
                       "which are stuck and why, and releasing a stale lock.",
                  no_args_is_help=True)

def _store(settings: Any, state_dir: str | None, no_state: bool) -> LockStore | None:
    if no_state:
        return None
    from mqctl.locks import LockStore

    return LockStore(state_dir, settings.namesrv)


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
    from mqctl.locks import capture_locks, ensure_lockable
    from mqctl.locks.rows import view_result
    from mqctl.remoting.client import RemotingClient

    group = one_group(group, group_opt, example="mqctl locks show GID_ORDER")
    st = state(ctx)
    settings = st.settings(namesrv=namesrv)
    fmt = st.output(output)
    store = _store(settings, state_dir, no_state)

    async def once(client: RemotingClient) -> LockView:
        view = await capture_locks(make_admin(client, settings, concurrency), group, topic=topic,
                                   include_retry=include_retry, store=store)
        ensure_lockable(view)
        if store is not None:  # not kept: said on stderr too, not only in the notes
            for p in [p for p in store.problems if p.startswith("cannot write")]:
                warn(f"{p}: the next run cannot recall this one's claims")
                store.problems.remove(p)  # (once: --watch writes again each refresh)
        return view

    if watch is None:
        view = with_client(st, settings, once)
        emit(view_result(view), fmt)
        _raise_partial(view)
        return

    watch_loop(settings, once, view_result, fmt, watch, count)


def _finish_commands(settings: Any, results: list[ReleaseResult], *, force: bool,
                     state_dir: str | None, no_state: bool) -> list[str]:
    """The commands that send what an interrupted release did not (not sent, unknown, failed):
    one per topic and holder, the holder named with --client (exact, no state file needed;
    re-sending a release the broker already did is harmless: it ignores it)."""
    import shlex

    from mqctl.locks import ReleaseStatus

    left: dict[tuple[str, str], list[str]] = {}
    for r in results:
        if r.status != ReleaseStatus.RELEASED:
            left.setdefault((r.plan.mq.topic, r.plan.holder), []).append(r.plan.mq.short)
    cmds = []
    for (topic, holder), queues in left.items():
        args = ["mqctl", "-n", ";".join(settings.namesrv), "locks", "release", "-g",
                results[0].plan.group,
                "--topic", topic]
        for q in queues:
            args += ["--queue", q]
        args += ["--client", holder, "--execute"]
        args += ["--force"] if force else []
        args += ["--no-state"] if no_state else \
            (["--state-dir", str(state_dir)] if state_dir is not None else [])
        cmds.append(shlex.join(args))
    return cmds


NO_UNDO = ("a release cannot be undone: a holder that is still alive re-locks its queues at its "
           "next lockAll (every 20 s) while the allocation still assigns them to it")


def _interrupted(results: list[ReleaseResult], phase: str, signame: str,
                 finish: list[str]) -> tuple[list[str], dict[str, Any], MqctlError]:
    """An interrupt while releasing: the notes and data that say what was released (the
    per-queue table is the result table), the command that finishes the release, and the error
    to exit with (130). Worded as ``offsets reset --execute`` words it."""
    from mqctl.errors import ExitCode, MqctlError
    from mqctl.interrupt import INTERRUPT_GRACE_S
    from mqctl.locks import ReleaseStatus

    count = {s: sum(1 for r in results if r.status == s) for s in ReleaseStatus}
    if phase == "apply":
        what = (f"{count[ReleaseStatus.RELEASED]} released, {count[ReleaseStatus.NOT_SENT]} "
                f"not sent, {count[ReleaseStatus.UNKNOWN]} unknown"
                + (f", {count[ReleaseStatus.FAILED]} failed"
                   if count[ReleaseStatus.FAILED] else ""))
    else:
        what = (f"every request was sent, {count[ReleaseStatus.RELEASED]} released but not "
                "re-checked")
    msg = f"interrupted by {signame} during {phase}: {what}"
    fin = " && ".join(finish) or None
    notes = [f"INTERRUPTED: {msg}; nothing more was sent"
             + (f" (requests in flight were waited for up to {INTERRUPT_GRACE_S:.0f} s; "
                "'unknown' ones may or may not have been released)" if phase == "apply"
                else ""),
             f"finish the release: {fin}" if fin else
             "finish the release: nothing left to send (check with `mqctl locks show`)",
             f"undo: none ({NO_UNDO})"]
    data = {"signal": signame, "during": phase, "finish": fin, "finish_commands": finish,
            "undo": None}
    hint = (f"finish: {fin}; " if fin else "") + NO_UNDO
    return notes, data, MqctlError(msg, hint=hint, exit_code=ExitCode.INTERRUPTED)


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


def _raise_failed(results: list[ReleaseResult], finish: list[str]) -> None:
    """Some releases failed: the first error when none was released (its own exit code),
    else a partial failure (exit 8) with the command that sends the rest."""
    from mqctl.errors import PartialFailure
    from mqctl.locks import ReleaseStatus

    bad = [r for r in results if r.status != ReleaseStatus.RELEASED]
    if not bad:
        return
    first = next((r.error for r in bad if r.error is not None), None)
    if first is not None and len(bad) == len(results):
        raise first
    raise PartialFailure(f"{len(bad)} of {len(results)} release(s) did not go through: "
                         + "; ".join(f"{r.plan.mq.short} {r.status.value} ({r.detail})"
                                     for r in bad[:4]),
                         [(r.plan.mq.short, r.detail) for r in bad],
                         hint="send the rest: " + " && ".join(finish))


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
    import asyncio

    from mqctl.interrupt import deferred
    from mqctl.locks import (
        apply_releases,
        parse_queue_spec,
        prepare_releases,
        recheck,
        record_releases,
    )
    from mqctl.locks.rows import release_result

    group = one_group(group, group_opt,
                      example="mqctl locks release GID_ORDER --queue broker-a:3 -t TopicOrder")
    specs = [parse_queue_spec(q) for q in queue]
    st = state(ctx)
    settings = st.settings(namesrv=namesrv)
    fmt = st.output(output)
    store = _store(settings, state_dir, no_state)
    # SIGINT/SIGTERM/SIGHUP while releasing: stop, then say what was released; recorded
    # by the one handler from before the plan to the last file (none can be lost)
    with deferred() as stop:
        stop.late = "after the release was complete: the result above stands"
        phase = ["plan"]
        shown = [False]
        lock_notes: list[str] = []
        if execute:  # one change of a group at a time from this machine (offsets reset too)
            from mqctl.interrupt import change_lock, taken_over

            stale = ctx.with_resource(change_lock(settings.namesrv, group,
                                                  f"{ctx.command_path} {group}"))
            if stale is not None:
                lock_notes.append(taken_over(group, stale))
                warn(lock_notes[-1])

        async def go(c: Any) -> tuple[Any, LockView, LockView | None, Any]:
            admin = make_admin(c, settings)
            plans, before = await prepare_releases(admin, group, specs, topic=topic, client=client,
                                                   force=force, store=store)
            if not execute:
                return plans, before, None, None
            if fmt in ("table", "plain"):  # what is being sent, while it runs
                first = release_result(plans, before, None, False, extra_notes=lock_notes)
                first.notes[:] = [n for n in first.notes if not n.startswith("dry run:")]
                first.notes.append(f"releasing {len(plans)} lock(s) now (Ctrl-C stops and says "
                                   "what was released)")
                emit_before_change(first, fmt)
                shown[0] = True
            stop.before_change()  # (a signal while planning: nothing is sent)
            phase[0] = "apply"
            results = await apply_releases(admin, plans, stop=stop)
            record_releases(store, results)
            if stop.stopped:
                return plans, before, None, results
            phase[0] = "re-check"
            checked = asyncio.ensure_future(recheck(admin, plans, store=store))
            after = None if await stop.race(checked, 0.0) else checked.result()
            if after is not None:
                phase[0] = "done"  # re-checked: a signal from now on comes after it
            return plans, before, after, results

        plans, before, after, results = with_client(
            st, settings, lambda c: guarded(stop, go(c), lambda: phase[0] == "plan"))
        finish = _finish_commands(settings, results or [], force=force, state_dir=state_dir,
                                  no_state=no_state)
        kept = [] if shown[0] else lock_notes
        if stop.stopped and results is not None and phase[0] != "done":
            stop.reported = True
            lines, info, err = _interrupted(results, phase[0], stop.reason, finish)
            out = release_result(plans, before, after, True, results, extra_notes=kept + lines,
                                 plan_shown=shown[0])
            out.data["interrupted"] = info
            # the terminal may be gone (SIGHUP): the result goes to a file first
            info["result_file"] = _keep_result(out, group, err)
            emit_or_lost(out, fmt)
            raise err
        final = release_result(plans, before, after, execute, results, extra_notes=kept,
                               plan_shown=shown[0])
        lost = emit_or_lost(final, fmt)
        kept_file = _keep_result(final, group, None) if (
            lost is not None or stop.stopped) and results is not None else None
        if results is not None:
            _raise_failed(results, finish)
        if lost is not None and results is not None:
            raise output_lost_error(lost, kept_file)

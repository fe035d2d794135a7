"""``mqctl offsets``: show, reset (planned first, verified after) and roll back."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

from mqctl.cli.common import (
    emit,
    emit_before_change,
    emit_or_lost,
    escaped,
    one_group,
    output_lost_error,
    progress,
    state,
    warn,
)
from mqctl.cli.options import (
    ByDurationOpt,
    CheckOpt,
    ConcurrencyOpt,
    ExecuteOpt,
    ExportOpt,
    ForceOpt,
    FromFileOpt,
    GroupArg,
    GroupOption,
    MaxReplayOpt,
    MaxSkipOpt,
    NamesrvOpt,
    OutputOpt,
    ResetQueuesOpt,
    RollbackArg,
    RollbackDirOpt,
    RollbackFileOpt,
    ShiftByOpt,
    ShowMessagesOpt,
    ToEarliestOpt,
    ToLatestOpt,
    ToOffsetOpt,
    TopicOpt,
    TopicReq,
    ToTimeOpt,
    VerifyWaitOpt,
    YesOpt,
)
from mqctl.interrupt import guarded

if TYPE_CHECKING:
    from mqctl.errors import MqctlError
    from mqctl.render import Result
    from mqctl.reset import Plan, QueueResult

app = typer.Typer(help="Show, reset and roll back consumer offsets.", no_args_is_help=True)



@app.command("show")
def show(
    ctx: typer.Context,
    group: GroupArg = None,
    group_opt: GroupOption = None,
    topic: TopicOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Committed offsets per queue, with the queue's min and max offsets and the lag.

    Every readable queue of the group's topics on every broker of their routes; CURRENT
    `none` where the group has no committed offset (its LAG counts the whole queue); CURRENT
    and LAG `-` for a BROADCASTING group (its clients keep the offsets). A group no broker
    knows is refused (exit 2), with or without --topic.
    Example: mqctl offsets show -g GID_REPLAY -t TopicPay
    """
    from mqctl.cli.common import make_admin, raise_partial, with_client
    from mqctl.views.progress_capture import capture_offsets
    from mqctl.views.progress_rows import offsets_result

    group = one_group(group, group_opt, example="mqctl offsets show GID_REPLAY")
    st = state(ctx)
    settings = st.settings(namesrv=namesrv)

    async def go(client: Any) -> Any:
        return await capture_offsets(make_admin(client, settings, concurrency), group, topic)

    p, mins = with_client(st, settings, go)
    emit(offsets_result(p, mins), st.output(output))
    raise_partial(p.failures, f"offsets show {group}")


def plan_result(plan: Plan, results: list[QueueResult] | None, *, execute: bool,
                rollback: str | None, extra_notes: list[str] | None = None,
                plan_shown: bool = False) -> Result:
    """The plan (and the result once executed). ``plan_shown``: the plan table and its notes
    were printed before the apply started; only the result follows (text formats)."""
    from mqctl.render import Column, Result, Table
    from mqctl.reset import summarize

    c = Column
    # CURRENT "none": the group has no committed offset there (known, not unknown "-")
    from mqctl.timeparse import localize_iso

    rows = [dict(q.row(), current="none") if q.current is None else q.row()
            for q in plan.queues]
    for row in rows:  # the table in the --tz zone; CSV, JSON and plan files keep UTC
        row["target_time_shown"] = localize_iso(row.get("target_time") or "")
    tables = [Table([c("broker", "BROKER"), c("queue_id", "QID", "right"),
                     c("min", "MIN", "right"), c("max", "MAX", "right"),
                     c("current", "CURRENT", "right"), c("target", "TARGET", "right"),
                     c("change", "CHANGE", "right"), c("replay", "REPLAY", "right"),
                     c("skip", "SKIP", "right"),
                     c("target_time_shown", "TARGET TIME", raw="target_time"),
                     c("note", "NOTE")], rows,
                    title=f"reset plan: {plan.group} / {plan.topic} {plan.target.describe()}",
                    name="plan")]
    data = plan.to_dict()
    if plan.messages:  # --show-messages: the message at each target
        from mqctl.views.message import plan_message_fields

        for q, row, drow in zip(plan.queues, rows, data["queues"], strict=True):
            cells = plan_message_fields(plan.messages.get(q.mq))
            row.update(cells)
            drow["target_message"] = {k: v for k, v in cells.items()
                                      if k not in ("target_stored", "target_keys")}
        tables[0].columns[-1:-1] = [c("target_stored", "TARGET STORED",
                                      raw="target_store_time"),
                                    c("target_keys", "TARGET KEYS")]
    data["execute"] = execute
    data["rollback_file"] = rollback
    notes = list(extra_notes or [])
    notes += [f"broker {b.name}: {b.path.value if b.path else 'n/a'} ({b.path_source})"
              for b in plan.brokers.values()]
    notes.append(f"consumers: {plan.consumers.describe()}")
    if plan.offsets_read:  # CURRENT (and a rollback file's "before") are as of then
        notes.append(f"committed offsets read at {localize_iso(plan.offsets_read_text())}"
                     + (": another writer can move them before the apply (docs/reset.md "
                        "\"Concurrent changes\")" if execute else ""))
    notes += plan.notes
    notes += [f"warning: {w}" for w in plan.warnings]
    notes += [f"REFUSED: {r}" for r in plan.refusals]
    if results is None:
        replay = sum(q.replay for q in plan.queues)
        skip = sum(q.skip for q in plan.queues)
        unknown = sum(1 for q in plan.queues if q.current is None)
        notes.append(f"{len(plan.queues)} queue(s): {replay} message(s) will be consumed "
                     f"again, {skip} skipped"
                     + (f" ({unknown} queue(s) without a committed offset: not counted, their "
                        "change is not known)" if unknown else ""))
    else:
        notes.append(done_summary(plan, results))
        data["done"] = notes[-1]  # what this run changed (and still holds), in words
    if plan_shown:
        tables, notes = [], list(extra_notes or []) + notes[-1:]
    if results is not None:
        rrows = [r.row() for r in results]
        shown = [dict(x, previous="none") if x["previous"] is None else x for x in rrows]
        tables.append(Table([c("broker", "BROKER"), c("queue_id", "QID", "right"),
                             c("previous", "PREVIOUS", "right"), c("target", "TARGET", "right"),
                             c("now", "NOW", "right"), c("status", "STATUS"),
                             c("detail", "DETAIL")], shown, title="result", name="results"))
        data["results"] = rrows
        data["summary"] = summarize(results)
        notes.append("result: " + ", ".join(f"{v} {k}" for k, v in
                                              sorted(summarize(results).items())))
    elif not execute:
        notes.append("WARN: No action will be performed as the --execute option is missing. "
                     "Review the plan, then re-run with --execute.")
    elif plan.refusals:
        notes.append("nothing was changed (refused)")
    if rollback:
        _, first = undo_steps(plan, rollback)
        notes.append(f"rollback file: {rollback} (written before the first change; restore "
                     + (f"with: {first}: " if first else "with: ")
                     + f"mqctl offsets rollback {rollback} --execute)")
    return Result(tables, data=data, notes=notes)


def done_summary(plan: Plan, results: list[QueueResult]) -> str:
    """After execution, in the past tense: what the brokers accepted, and what they did not.
    A legacy push the brokers accepted is not a reset yet: the clients apply it about 10 s
    after the push (MQClientInstance.resetOffset), so it is counted as pushed until verify
    reads it taken; a queue verify could not decide is counted apart (unknown)."""
    from mqctl.reset import Path_, Status, legacy_apply_times

    def pushed_only(r: QueueResult) -> bool:
        b = plan.brokers.get(r.plan.mq.broker_name)
        return (r.status in (Status.APPLIED, Status.UNVERIFIED) and b is not None
                and b.path == Path_.LEGACY_PUSH)

    pushed = [r for r in results if pushed_only(r)]
    moved = [r for r in results if r.status in (Status.VERIFIED, Status.APPLIED,
                                                 Status.UNVERIFIED) and not pushed_only(r)]
    unknown = [r for r in results if r.status == Status.UNKNOWN]
    # reset by this run, then moved by another writer: not counted as this run's change
    others = sum(1 for r in results if r.status == Status.MOVED)
    replay = sum(r.plan.replay for r in moved)
    skip = sum(r.plan.skip for r in moved)
    already = sum(1 for r in results if r.status == Status.ALREADY)
    rest = len(results) - len(moved) - len(pushed) - len(unknown) - already - others
    def uncounted(rs: list[QueueResult]) -> str:
        """Queues that had no committed offset: their change is not known, so not counted
        (never as 0)."""
        n = sum(1 for r in rs if r.plan.current is None)
        return (f"{n} queue(s) without a committed offset before: not counted, their change "
                "is not known") if n else ""

    moved_apart, pushed_apart = uncounted(moved), uncounted(pushed)
    times = legacy_apply_times(plan)
    when = (f"one broker after another, {times}" if times
            else "about 10 s after the push, one broker after another")
    return (f"{len(moved)} of {len(plan.queues)} queue(s) were reset: {replay} message(s) "
            f"rewound (to be consumed again), {skip} skipped"
            + (f" ({moved_apart})" if moved_apart else "")
            + (f"; {len(pushed)} pushed to the clients and not applied yet (the clients apply "
               f"a pushed reset {when}: "
               f"{sum(r.plan.replay for r in pushed)} to be rewound, "
               f"{sum(r.plan.skip for r in pushed)} skipped once they do"
               + (f"; {pushed_apart}" if pushed_apart else "") + ")" if pushed else "")
            + (f"; {already} already at the target" if already else "")
            + (f"; {others} moved by another writer afterwards (this run's change no longer "
               "stands there: see DETAIL)" if others else "")
            + (f"; {len(unknown)} unknown (see DETAIL)" if unknown else "")
            + (f"; {rest} were not (see STATUS)" if rest else ""))


def undo_steps(plan: Plan, rb: str) -> tuple[str, str | None]:
    """(the rollback command, what must happen first or None). A broker on the legacy path
    takes explicit offsets (a rollback) only with UPDATE_CONSUMER_OFFSET, which live consumers
    overwrite: for an online group the rollback is refused until its consumers are stopped."""
    from mqctl.reset import Path_

    cmd = _cmd(plan, "offsets", "rollback", rb, "--execute")
    mine = {q.mq.broker_name for q in plan.queues}
    legacy = sorted(b.name for b in plan.brokers.values() if b.name in mine
                    and b.path in (Path_.LEGACY_PUSH, Path_.LEGACY_UPDATE))
    if plan.consumers.online and legacy:
        return cmd, (f"stop the consumers of {plan.group} first (broker(s) "
                     f"{', '.join(legacy)} take explicit offsets only from an offline group: "
                     "live consumers overwrite them), then")
    return cmd, None


def _run(ctx: typer.Context, **kw: Any) -> None:
    """A reset or rollback, from before its plan until its result and files are written,
    with SIGINT, SIGTERM and SIGHUP recorded by the one handler and read at every step
    (:func:`mqctl.interrupt.deferred`): none can be lost between two handlers or with an
    event loop that stopped before it read it."""
    from mqctl.interrupt import deferred

    with deferred() as stop:
        _change(ctx, stop=stop, **kw)


def _change(ctx: typer.Context, *, stop: Any, group: str, topic: str, target_fn: Any,
            execute: bool,
         force: bool, scope: Any, export: str | None, rollback_file: str | None,
         verify_wait: float | None, output: Any, namesrv: str | None,
         concurrency: int | None, notes: list[str] | None = None,
         rerun_scope: bool = True, max_replay: int | None = None,
         max_skip: int | None = None, yes: bool = False,
         show_messages: bool = False) -> None:
    import asyncio
    from pathlib import Path

    from mqctl.admin import Admin
    from mqctl.errors import PartialFailure, RefusedError
    from mqctl.interrupt import boundary
    from mqctl.remoting.client import RemotingClient
    from mqctl.reset import (
        BAD,
        apply_plan,
        default_wait,
        export_plan,
        free_path,
        make_plan,
        rollback_path,
        verify,
        write_rollback,
    )
    from mqctl.reset.guards import (
        GUARD_HINT,
        check_guards,
        confirm_question,
        confirmed,
        needs_confirmation,
        plan_totals,
        resolve_guards,
    )

    st = state(ctx)
    settings = st.settings(namesrv=namesrv)
    # guards (docs/reset.md "Guards"): a profile that requires them fails before any I/O
    guards = resolve_guards(settings, max_replay=max_replay, max_skip=max_skip,
                            execute=execute)
    conc = concurrency or settings.concurrency
    fmt = st.output(output)
    extra = list(notes or [])
    guarded_by: list[str] = []  # guard refusals of an --execute
    guard_data: dict[str, Any] = {}
    declined = [False]
    # (stop: SIGINT/SIGTERM/SIGHUP while changing: stop sending, say what changed)
    stop.late = "after the plan was shown: nothing was changed"
    phase = ["plan"]
    shown = [-1]  # the plan was printed before the apply (text formats): how many notes then
    lock_notes: list[str] = []  # the change lock of a killed run, taken over
    if execute:  # one change of a group at a time from this machine, from before its plan
        from mqctl.interrupt import change_lock, taken_over

        stale = ctx.with_resource(change_lock(settings.namesrv, group,
                                              f"{ctx.command_path} {group}/{topic}"))
        if stale is not None:
            lock_notes.append(taken_over(group, stale))
            warn(lock_notes[-1])

    async def go() -> tuple[Any, Any, str | None]:
        boundary("start")
        async with RemotingClient(settings.client_options()) as client:
            admin = Admin(client, settings.namesrv, concurrency=conc)
            plan = await make_plan(admin, group, topic, target_fn(), scope=scope, force=force)
            boundary("planned")
            plan.notes[:0] = lock_notes
            if show_messages:  # the message at each target: one read-only pull per queue
                from mqctl.views.message import annotate_plan

                await annotate_plan(admin, plan)
            totals = plan_totals(plan)
            breaches = check_guards(totals, guards)
            guard_data.update(guards.to_dict(), totals=totals.to_dict(), breaches=breaches)
            if execute:
                guarded_by.extend(breaches)
                plan.refusals.extend(breaches)
            else:
                extra.extend(f"{b}: --execute would be refused" for b in breaches)
            if export:
                export_plan(plan, export)
                extra.append(f"plan written to {export}")
            if not execute or plan.refusals:
                return plan, None, None
            if all(q.current is not None and q.current == q.target for q in plan.queues):
                extra.append("every queue is already at its target: nothing sent, no rollback "
                             "file written")
                return plan, await apply_plan(admin, plan, concurrency=conc), None
            wanted = Path(rollback_file) if rollback_file else rollback_path(
                group, topic, plan.created_ms)
            rb = free_path(wanted)
            if rb != wanted:
                extra.append(f"{wanted} exists (kept: it may hold the offsets from before an "
                             f"earlier run); this run's rollback file is {rb}")
            # a large change on a terminal asks first (no --yes); elsewhere it goes ahead
            ask = not yes and needs_confirmation(totals, guards) and _interactive()
            todo = sum(1 for q in plan.queues if q.current != q.target)
            applying = f"applying {todo} change(s) now (Ctrl-C stops and says what changed)"
            if fmt in ("table", "plain"):  # what is being applied, while it runs
                first = plan_result(plan, None, execute=True, rollback=str(rb),
                                    extra_notes=extra)
                if not ask:
                    first.notes.append(applying)
                emit_before_change(first, fmt)
                shown[0] = len(extra)
            if ask:
                if not confirmed(await _ask(confirm_question(plan, totals, guards))):
                    declined[0] = True
                    return plan, None, None
                if fmt in ("table", "plain"):
                    sys.stderr.write(applying + "\n")
            stop.before_change()  # (a signal while planning: nothing is written or sent)
            write_rollback(plan, rb)  # before the first change
            brokers = {q.mq.broker_name for q in plan.queues}
            phase[0] = "apply"
            boundary("applying")

            def broker_done(_n: Any) -> None:
                advance(1)
                boundary("broker-done")

            with progress(st, "reset", len(brokers)) as advance:
                results = await apply_plan(admin, plan, concurrency=conc,
                                           on_broker_done=broker_done, stop=stop)
            if stop.stopped:
                return plan, results, str(rb)
            phase[0] = "verify"
            boundary("verifying")
            wait = default_wait(plan) if verify_wait is None else verify_wait
            checked = asyncio.ensure_future(verify(admin, plan, results, wait_s=wait))
            if not await stop.race(checked, 0.0):
                results = checked.result()
                phase[0] = "done"  # every queue judged: a signal from now on comes after it
                boundary("verified")
            return plan, results, str(rb)

    # SIGINT/SIGTERM: while planning, stop at once (nothing was changed); from the apply on,
    # the apply and verify stop themselves and say what changed
    plan, results, rb = asyncio.run(guarded(stop, go(), lambda: phase[0] == "plan"))
    if declined[0]:
        from mqctl.errors import RefusedError

        if shown[0] < 0:  # -o json/yaml/csv: the plan was not printed yet
            out = plan_result(plan, None, execute=True, rollback=None, extra_notes=extra)
            out.data["guards"] = guard_data
            emit(out, fmt)
        raise RefusedError("the change was not confirmed: nothing was changed, no rollback "
                           "file written",
                           hint="answer y to apply it; --yes applies without asking")
    if stop.stopped and results is not None and rb is not None and phase[0] != "done":
        stop.reported = True
        lines, info, err = _interrupted(plan, results, rb, phase[0], stop.reason)
        out = plan_result(plan, results, execute=execute, rollback=rb,
                          extra_notes=extra[max(0, shown[0]):] + lines,
                          plan_shown=shown[0] >= 0)
        out.data["interrupted"] = info
        out.data["guards"] = guard_data
        # the terminal may be gone (SIGHUP: an SSH session that dropped): the result goes to a
        # file beside the rollback file first, then to the terminal if it is still there
        info["result_file"] = _keep_result(out, rb, err)
        emit_or_lost(out, fmt)
        raise err
    final = plan_result(plan, results, execute=execute, rollback=rb,
                        extra_notes=extra[max(0, shown[0]):], plan_shown=shown[0] >= 0)
    final.data["guards"] = guard_data
    if results is not None:
        stop.late = ("after the change was complete: the result above stands (it is also "
                     "beside the rollback file)" if rb else
                     "after the change was complete: the result above stands")
    kept = _keep_result(final, rb, None) if stop.stopped and rb is not None else None
    lost = emit_or_lost(final, fmt)
    if lost is not None and rb is not None and kept is None:
        kept = _keep_result(final, rb, None)  # stdout is gone: what happened is kept beside rb
    boundary("done")
    if plan.refusals:
        more = f" (and {len(plan.refusals) - 1} more reason(s) in the output)" \
            if len(plan.refusals) > 1 else ""
        if guarded_by and len(guarded_by) == len(plan.refusals):  # only guards refused it
            raise RefusedError(plan.refusals[0] + more, hint=GUARD_HINT)
        raise RefusedError(plan.refusals[0] + more,
                           hint=("nothing was changed" if execute else "the plan cannot be "
                                 "executed as it is") + ("" if force else
                                                         "; --force overrides where it can"))
    if results is not None:
        bad = [r for r in results if r.status in BAD]
        if bad:
            from mqctl.reset import Status

            undecided = any(r.status in (Status.UNKNOWN, Status.UNVERIFIED) for r in bad)
            moved = [r for r in bad if r.status == Status.MOVED]
            rest = [r for r in bad if r.status != Status.MOVED]
            parts = ([f"{len(rest)} of {len(results)} queue(s) did not take"
                      + (" or could not be verified" if undecided else "") + ": "
                      + "; ".join(f"{r.plan.mq.short} {r.status.value} ({r.detail})"
                                  for r in rest[:4])] if rest else [])
            if moved:
                parts.append(f"{len(moved)} of {len(results)} queue(s) were moved by another "
                             "writer after this run reset them: "
                             + ", ".join(f"{r.plan.mq.short} now {r.now} (target {r.goal})"
                                         for r in moved[:4])
                             + (" ..." if len(moved) > 4 else ""))
            raise PartialFailure("; ".join(parts), [(r.plan.mq.short, r.detail) for r in bad],
                                 hint=rerun_hint(plan, bad, rb, rerun_scope))
    if lost is not None and results is not None:  # (applied: its result file says what)
        raise output_lost_error(lost, kept)


def _keep_result(out: Result, rb: str, err: MqctlError | None) -> str | None:
    """``out`` (and ``err``) kept in ``<rollback file>.result.txt``."""
    from pathlib import Path

    from mqctl.cli.common import keep_result
    from mqctl.reset import free_path

    p = Path(rb)
    return keep_result(free_path(p.with_name(f"{p.stem}.result.txt")), out, err)


def _interactive() -> bool:
    """A person can answer: stdin and stderr are terminals."""
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False


async def _ask(question: str) -> str | None:
    """Ask on stderr, read one line from stdin, without blocking the event loop: the read runs
    in a daemon thread, so Ctrl-C/SIGTERM while the question waits stops the command at once
    (nothing was changed yet) instead of waiting for Enter. None on end of input."""
    import asyncio
    import threading

    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str | None] = loop.create_future()

    def settle(value: str | None) -> None:
        if not answer.done():
            answer.set_result(value)

    def read() -> None:
        try:
            sys.stderr.write(escaped(question))  # the group and topic come from a plan file
            sys.stderr.flush()
            line: str | None = sys.stdin.readline() or None
        except (OSError, ValueError):
            line = None
        try:
            loop.call_soon_threadsafe(settle, line)
        except RuntimeError:  # the loop ended meanwhile (interrupted)
            pass

    threading.Thread(target=read, name="mqctl-confirm", daemon=True).start()
    return await answer


def _interrupted(plan: Plan, results: list[QueueResult], rb: str, phase: str,
                 signame: str) -> tuple[list[str], dict[str, Any], MqctlError]:
    """An interrupt while changing: the notes and data that say what changed (the per-queue
    table is the result table), the command that finishes the change and the one that undoes
    it, and the error to exit with (130)."""
    from mqctl.errors import ExitCode, MqctlError
    from mqctl.interrupt import INTERRUPT_GRACE_S
    from mqctl.reset import Path_, Status, legacy_apply_times

    def pushed(r: QueueResult) -> bool:  # a legacy push: the clients apply it 10 s later
        b = plan.brokers.get(r.plan.mq.broker_name)
        return r.status == Status.APPLIED and b is not None and b.path == Path_.LEGACY_PUSH

    count = {s: sum(1 for r in results if r.status == s) for s in Status}
    n_pushed = sum(1 for r in results if pushed(r))
    applied = count[Status.APPLIED] - n_pushed
    finish, rest_file = finish_command(plan, results, rb)
    undo, first = undo_steps(plan, rb)
    times = legacy_apply_times(plan)
    push_text = (f"{n_pushed} pushed to the clients, not applied yet (they apply it "
                 + (f"one broker after another, {times}" if times else
                    "about 10 s after the push, one broker after another")
                 + ", whatever mqctl does now)")
    if phase == "apply":
        what = (f"{applied} applied, "
                + (f"{push_text}, " if n_pushed else "")
                + f"{count[Status.NOT_SENT]} not sent, {count[Status.UNKNOWN]} unknown"
                + "".join(f", {count[s]} {s.value}" for s in (Status.FAILED, Status.ALREADY)
                          if count[s]))
    elif n_pushed and not applied:
        what = f"every request was sent: {push_text}; none verified"
    else:
        what = (f"every request was sent, {applied} applied but not verified"
                + (f", {push_text}" if n_pushed else ""))
    msg = f"interrupted by {signame} during {phase}: {what}"
    undo_line = f"{first}: {undo}" if first else undo
    notes = [f"INTERRUPTED: {msg}; nothing more was sent"
             + (f" (requests in flight were waited for up to {INTERRUPT_GRACE_S:.0f} s; "
                "'unknown' ones may or may not have changed)" if phase == "apply" else ""),
             f"finish the change: {finish}" if finish else
             "finish the change: nothing left to send (check with `mqctl offsets show`)",
             f"undo it: {undo_line}"]
    if n_pushed:
        notes.insert(1, f"pushed: the clients of {plan.group} apply the pushed reset "
                        + (f"one broker after another ({times}; " if times else
                           "about 10 s after the push (")
                        + "MQClientInstance.resetOffset), then replay from the "
                        f"new offsets; `mqctl offsets show -g {plan.group} -t {plan.topic}` "
                        "shows when they did; stopping them before that keeps the old offsets")
    data = {"signal": signame, "during": phase, "finish": finish, "remaining_plan": rest_file,
            "undo": undo, "undo_first": first, "pushed_not_applied": n_pushed}
    hint = (f"finish: {finish}; " if finish else "") + f"undo: {undo_line}"
    return notes, data, MqctlError(msg, hint=hint, exit_code=ExitCode.INTERRUPTED)


def _cmd(plan: Plan, *args: str) -> str:
    """A copy-pastable mqctl command against the plan's name server."""
    import shlex

    return shlex.join(["mqctl", "-n", plan.namesrv, *args])


def finish_command(plan: Plan, results: list[QueueResult], rb: str
                   ) -> tuple[str | None, str | None]:
    """(the command that sends what an interrupted apply did not, the remaining-plan file it
    reads). A rollback: the same rollback again (queues already restored are skipped). A
    reset: the queues not sent or unknown as a plan file next to the rollback file, with their
    planned targets (``--from-file``: exact for every target kind, also --shift-by and relative
    times); on a legacy broker resetting by time through the clients, the same time target,
    absolute."""
    from dataclasses import replace
    from pathlib import Path

    from mqctl.errors import UsageError
    from mqctl.reset import Path_, Status, export_plan, free_path
    from mqctl.timeparse import format_ms

    left = [r.plan for r in results if r.status in (Status.NOT_SENT, Status.UNKNOWN,
                                                    Status.FAILED)]
    if not left:
        return None, None
    if plan.target.kind == "rollback":
        return _cmd(plan, "offsets", "rollback", plan.target.text, "--execute"), None
    base = ["offsets", "reset", "-g", plan.group, "-t", plan.topic]
    pushed = any(plan.brokers[q.mq.broker_name].path == Path_.LEGACY_PUSH for q in left)
    if pushed and plan.target.by_time:
        flag = {"time": ["--to-time", format_ms(plan.target.value, zero_unknown=False)],
                "earliest": ["--to-earliest"], "latest": ["--to-latest"]}[plan.target.kind]
        return _cmd(plan, *base, *flag, "--execute"), None
    rbp = Path(rb)
    try:  # (a device or FIFO at the name is refused too: the run's result is still shown)
        rest = free_path(rbp.with_name(f"{rbp.stem}.remaining.csv"), "remaining plan")
        export_plan(replace(plan, queues=left), str(rest))
    except UsageError as exc:  # e.g. the disk filled up: say so, keep the undo command
        return f"(the remaining plan could not be written: {exc.message})", None
    return _cmd(plan, *base, "--from-file", str(rest), "--execute"), str(rest)


def rerun_hint(plan: Plan, bad: list[QueueResult], rb: str | None, scoped: bool) -> str:
    """What to do about queues that did not take, without resetting the others twice. Only
    the queues the evidence says did not take (not-taken, failed, not-sent) are named for a
    re-run; an ``unknown`` or ``unverified`` queue may have taken, and a re-run would replay
    it again: those get a check, never a re-run."""
    from mqctl.reset import Status, format_queue_scope
    from mqctl.timeparse import format_ms

    undecided = [r for r in bad if r.status in (Status.UNKNOWN, Status.UNVERIFIED)]
    moved = [r for r in bad if r.status == Status.MOVED]
    bad = [r for r in bad if r not in undecided and r not in moved]
    parts = [f"the rollback file {rb} holds the offsets from before this run"]
    if moved:
        parts.append(f"{format_queue_scope([r.plan.mq for r in moved])}: another writer moved "
                     "them after this run (another reset or rollback from another machine, "
                     "an mqadmin): find it before changing anything (a re-run or a rollback "
                     f"would undo its change); `mqctl offsets show -g {plan.group} -t "
                     f"{plan.topic}` reads where they are")
    if undecided:
        parts.append(f"{format_queue_scope([r.plan.mq for r in undecided])}: not known whether "
                     "the reset took (see DETAIL); do not re-run for them (a re-run replays "
                     f"them again if it did): check `mqctl offsets show -g {plan.group} -t "
                     f"{plan.topic}` and the consumers' logs")
    if not bad:
        return "; ".join(parts)
    again = format_queue_scope([r.plan.mq for r in bad])
    if plan.consumers.online and any(r.plan.current is not None and r.goal is not None
                                     and r.goal < r.plan.current for r in bad):
        parts.append("check `mqctl offsets show` first: live consumers can consume past a "
                     "small rewind before it is read back, and a re-run replays again")
    if not scoped:
        parts.append("re-running the same command completes the rest (queues already at "
                     "their target are skipped)")
    elif plan.target.kind == "shift":
        parts.append("do not re-run --shift-by: it shifts again from the new offsets; give "
                     f"{again} their targets with --to-offset (per queue) or --from-file")
    elif plan.target.kind == "time":
        at = format_ms(plan.target.value, zero_unknown=False)  # user-given: epoch 0 is 1970
        parts.append(f"re-run for only these queues with --to-time {at} --queues {again}"
                     f" (a relative time would move, and live consumers "
                     "would replay the queues that took)")
    elif plan.consumers.online:
        parts.append(f"re-run for only these queues: add --queues {again} (live consumers "
                     "have moved on in the queues that took)")
    else:
        parts.append("re-running the same command completes the rest (queues already at "
                     f"their target are skipped), or add --queues {again} for only these")
    return "; ".join(parts)


@app.command("reset")
def reset(
    ctx: typer.Context,
    topic: TopicReq,
    group: GroupArg = None,
    group_opt: GroupOption = None,
    to_time: ToTimeOpt = None,
    by_duration: ByDurationOpt = None,
    to_earliest: ToEarliestOpt = False,
    to_latest: ToLatestOpt = False,
    to_offset: ToOffsetOpt = None,
    shift_by: ShiftByOpt = None,
    from_file: FromFileOpt = None,
    queues: ResetQueuesOpt = None,
    execute: ExecuteOpt = False,
    force: ForceOpt = False,
    export: ExportOpt = None,
    rollback_file: RollbackFileOpt = None,
    verify_wait: VerifyWaitOpt = None,
    max_replay: MaxReplayOpt = None,
    max_skip: MaxSkipOpt = None,
    yes: YesOpt = False,
    show_messages: ShowMessagesOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Reset a group's offsets on a topic: prints the plan (min, max, current, target, change,
    messages replayed or skipped) and changes nothing unless --execute. Executing writes a
    rollback file first, applies per broker, then verifies each queue (a queue another writer
    moved after this run is `moved`, exit 8). Ctrl-C, SIGTERM or SIGHUP while applying stops
    sending, waits up to 5 s for the requests in flight, prints each queue's status (applied /
    not-sent / unknown) with the commands that finish or undo it (also into
    <rollback file>.result.txt), exits 130. Another --execute of the group running on this
    machine: refused (exit 6).

    Example: mqctl offsets reset -g GID_REPLAY -t TopicPay --by-duration -2h --execute
    """
    from mqctl.fsutil import check_output_file
    from mqctl.reset import export_format, parse_queue_scope, target_from_options

    group = one_group(group, group_opt,
                      example="mqctl offsets reset GID_REPLAY -t TopicPay --by-duration -2h")
    scope = parse_queue_scope(queues or [])
    if export:  # (a file there that is not an mqctl plan: only with --force)
        export_format(export, force=force)
    if rollback_file:  # a device, FIFO or directory: refused before any I/O (docs/errors.md)
        check_output_file(rollback_file, "rollback file")
    # parse the target before any network I/O: bad input fails fast
    target = target_from_options(to_time=to_time, by_duration=by_duration,
                                 to_earliest=to_earliest, to_latest=to_latest,
                                 to_offset=to_offset, shift_by=shift_by, from_file=from_file,
                                 group=group, topic=topic)
    _run(ctx, group=group, topic=topic, target_fn=lambda: target, execute=execute, force=force,
         scope=scope, export=export, rollback_file=rollback_file, verify_wait=verify_wait,
         output=output, namesrv=namesrv, concurrency=concurrency, max_replay=max_replay,
         max_skip=max_skip, yes=yes, show_messages=show_messages)


@app.command("rollback")
def rollback(
    ctx: typer.Context,
    file: RollbackArg,
    execute: ExecuteOpt = False,
    force: ForceOpt = False,
    verify_wait: VerifyWaitOpt = None,
    max_replay: MaxReplayOpt = None,
    max_skip: MaxSkipOpt = None,
    yes: YesOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Plan, and with --execute restore, the offsets saved in a rollback file (a new rollback
    file of the offsets it replaces is written first). Queues saved as "none" (no committed
    offset before the reset) get no request: they keep the offset the reset wrote (a file of
    only such queues says what that means and exits 0). Right after an online rewind the plan
    says how far the group replayed it: still replaying, the rollback skips the rest; replayed
    past the saved offsets, it is refused unless --force (it would replay again). A file whose
    offsets do not match the group's (another group, an older reset) is refused unless
    --force. Ctrl-C, SIGTERM or SIGHUP while applying stops as `offsets reset` does (exit 130).

    Example: mqctl offsets rollback ~/.local/state/mqctl/rollback/GID_REPLAY-...json --execute
    """
    from dataclasses import replace

    from mqctl.reset import read_rollback
    from mqctl.reset.files import find_rollback, later_changes

    ns = ";".join(state(ctx).settings(namesrv=namesrv).namesrv)
    path = find_rollback(file)
    group, topic, target, notes = read_rollback(path, namesrv=ns)
    if not target.plan:  # every queue saved as "none": nothing to send, and why
        _nothing_to_restore(ctx, path, group, topic, target, execute=execute, output=output)
        return
    later = later_changes(path)
    if later:  # an older reset's file: restoring it undoes the later changes too
        notes.append(f"warning: later change(s) of {group}/{topic} beside it: "
                     f"{', '.join(later[:3])}{' ...' if len(later) > 3 else ''}; restoring "
                     "this file undoes them too")
        target = replace(target, elsewhere=(*target.elsewhere, f"{len(later)} later change(s) "
                                            f"of {group}/{topic} beside it ({later[-1]})"))
    _run(ctx, group=group, topic=topic, target_fn=lambda: target, execute=execute, force=force,
         scope=None, export=None, rollback_file=None, verify_wait=verify_wait, output=output,
         namesrv=namesrv, concurrency=concurrency, notes=notes, rerun_scope=False,
         max_replay=max_replay, max_skip=max_skip, yes=yes)


def _nothing_to_restore(ctx: typer.Context, path: str, group: str, topic: str, target: Any,
                        *, execute: bool, output: Any) -> None:
    """A rollback file whose queues all had no committed offset before the reset: nothing is
    sent (exit 0), and the output says what that means for the group."""
    from mqctl.reset.rows import nothing_to_restore_result

    emit(nothing_to_restore_result(path, group, topic, target, execute=execute),
         state(ctx).output(output))


@app.command("rollbacks")
def rollbacks(
    ctx: typer.Context,
    group: GroupOption = None,
    topic: TopicOpt = None,
    directory: RollbackDirOpt = None,
    check: CheckOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """The saved rollback files, oldest first: group, topic, when, how many queues, the change
    they undo, and whether a rollback restored them since (a later `offsets rollback
    --execute` of the file, which records it in its own rollback file). Reads files only;
    with --check it also reads the offsets from the cluster. `offsets rollback NAME` takes a
    NAME from this list.

    Example: mqctl offsets rollbacks -g GID_REPLAY
    """
    from pathlib import Path

    from mqctl.reset.files import list_rollbacks, rollback_dir
    from mqctl.reset.rows import rollbacks_result

    st = state(ctx)
    root = Path(directory).expanduser() if directory else rollback_dir()
    infos = [i for i in list_rollbacks(root)
             if (group is None or i.group == group) and (topic is None or i.topic == topic)]
    live: dict[str, str] = {}
    failures: list[Any] = []
    here = ";".join(st.settings(namesrv=namesrv).namesrv) if check else None
    if check and infos:
        live, failures = _rollbacks_live(st, [i for i in infos if not i.error], namesrv,
                                         concurrency)
    emit(rollbacks_result(infos, root, live, failures, here=here, check=check,
                          filtered=group is not None or topic is not None), st.output(output))
    if failures:
        from mqctl.errors import PartialFailure

        raise PartialFailure(f"{len(failures)} rollback file(s) could not be checked against "
                             "the cluster: " + "; ".join(failures[:3]),
                             [(f, f) for f in failures],
                             hint="the NOW column says unknown for them; retry when the "
                                  "brokers answer")


def _rollbacks_live(st: Any, infos: list[Any], namesrv: str | None,
                    concurrency: int | None) -> tuple[dict[str, str], list[str]]:
    """``offsets rollbacks --check``: per file, where its group's committed offsets are now
    (GET_CONSUME_STATS per broker of the topic's route; read-only). One read per group and
    topic, shared by its files."""
    from mqctl.admin import Admin
    from mqctl.cli.common import with_client
    from mqctl.errors import MqctlError
    from mqctl.remoting.client import fan_out
    from mqctl.reset.files import live_state

    settings = st.settings(namesrv=namesrv)
    pairs = sorted({(i.group, i.topic) for i in infos})

    async def go(client: Any) -> tuple[dict[str, str], list[str]]:
        admin = Admin(client, settings.namesrv,
                      concurrency=concurrency or settings.concurrency)

        async def read(pair: tuple[str, str]) -> dict[Any, int | None]:
            g, t = pair
            route = await admin.topic_route(t)
            now: dict[Any, int | None] = {}
            for b in route.brokers:
                if b.master_addr is None:
                    continue
                stats = await admin.consume_stats(g, b.master_addr, t)
                now.update({mq: w.consumer_offset for mq, w in stats.offsets.items()})
            return now

        got: dict[tuple[str, str], dict[Any, int | None]] = {}
        failed: list[str] = []
        for o in await fan_out(pairs, read, concurrency=admin.concurrency):
            if o.ok and o.value is not None:
                got[o.item] = o.value
            else:
                err = o.error.message if isinstance(o.error, MqctlError) else "failed"
                failed.append(f"{o.item[0]}/{o.item[1]}: {err}")
        out = {i.name: live_state(i, got[(i.group, i.topic)]) if (i.group, i.topic) in got
               else "unknown (not read)" for i in infos}
        return out, failed

    result: tuple[dict[str, str], list[str]] = with_client(st, settings, go)
    return result

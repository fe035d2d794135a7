"""``mqctl offsets``: show, reset (planned first, verified after) and roll back: the commands
parse, call :mod:`mqctl.api` (the workflow is :mod:`mqctl.reset.workflow`), render the
outcome and exit with its error."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import typer

from mqctl.cli.common import (
    cluster,
    emit,
    emit_before_change,
    emit_or_lost,
    escaped,
    one_group,
    output_lost_error,
    progress,
    state,
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

if TYPE_CHECKING:
    from mqctl.cli.common import AppState
    from mqctl.errors import MqctlError
    from mqctl.interrupt import Stop
    from mqctl.render import Result
    from mqctl.reset.workflow import Planned, Progress, ResetOutcome, ResetRequest

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
    from mqctl.cli.common import raise_partial, read
    from mqctl.views.progress_rows import offsets_result

    group = one_group(group, group_opt, example="mqctl offsets show GID_REPLAY")
    st = state(ctx)
    p, mins = read(st, namesrv, concurrency, lambda c: c.offsets(group, topic=topic))
    emit(offsets_result(p, mins), st.output(output))
    raise_partial(p.failures, f"offsets show {group}")


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
    from mqctl.reset.workflow import reset_request

    group = one_group(group, group_opt,
                      example="mqctl offsets reset GID_REPLAY -t TopicPay --by-duration -2h")
    request = reset_request(group, topic, to_time=to_time, by_duration=by_duration,
                            to_earliest=to_earliest, to_latest=to_latest, to_offset=to_offset,
                            shift_by=shift_by, from_file=from_file, queues=queues or (),
                            execute=execute, force=force, export=export,
                            rollback_file=rollback_file, show_messages=show_messages,
                            max_replay=max_replay, max_skip=max_skip)
    _change(ctx, request, rollback_file=rollback_file, verify_wait=verify_wait, yes=yes,
            output=output, namesrv=namesrv, concurrency=concurrency)


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
    from mqctl.reset.rows import nothing_to_restore_result
    from mqctl.reset.workflow import NothingToRestore, rollback_request

    st = state(ctx)
    request = rollback_request(file, namesrv=";".join(st.settings(namesrv=namesrv).namesrv),
                               execute=execute, force=force, max_replay=max_replay,
                               max_skip=max_skip)
    if isinstance(request, NothingToRestore):  # nothing to send (exit 0), and why
        r = request
        emit(nothing_to_restore_result(r.path, r.group, r.topic, r.target, execute=execute),
             st.output(output))
        return
    _change(ctx, request, rollback_file=None, verify_wait=verify_wait, yes=yes, output=output,
            namesrv=namesrv, concurrency=concurrency)


def _change(ctx: typer.Context, request: ResetRequest, *, rollback_file: str | None,
            verify_wait: float | None, yes: bool, output: Any, namesrv: str | None,
            concurrency: int | None) -> None:
    """A reset or rollback, from before its plan until its result and files are written,
    with SIGINT, SIGTERM and SIGHUP recorded by the one handler and read at every step
    (:func:`mqctl.interrupt.deferred`): none can be lost between two handlers or with an
    event loop that stopped before it read it."""
    from mqctl.interrupt import deferred

    st = state(ctx)
    fmt = st.output(output)
    with deferred() as stop, cluster(st, namesrv, concurrency) as c, \
            c.plan_reset(request, stop=stop) as plan:
        shown = _Shown(st, fmt, plan.planned)
        outcome = plan.unchanged() if not request.execute else plan.apply(
            rollback_file=rollback_file, confirm=None if yes or not _interactive() else _ask,
            on_progress=shown, verify_wait=verify_wait, stop=stop)
        _finish(outcome, fmt, shown.printed, stop)


class _Shown:
    """What the terminal shows while a change runs (the steps of the reset workflow): the plan
    before the change starts (text formats), the confirmation's go-ahead, the progress bar."""

    def __init__(self, st: AppState, fmt: str, planned: Planned) -> None:
        self.st, self.fmt, self.planned = st, fmt, planned
        self.printed = False
        self._bar = ExitStack()
        self._advance: Any = None

    def __call__(self, p: Progress) -> None:
        from mqctl.reset.rows import ready_result

        text = self.fmt in ("table", "plain")
        if p.step == "ready" and text:  # what is being applied, while it runs
            first = ready_result(self.planned, p.rollback or "", None if p.asks else p.message)
            emit_before_change(first, self.fmt)
            self.printed = True
        elif p.step == "confirmed" and text:
            sys.stderr.write(p.message + "\n")
        elif p.step == "applying":
            self._advance = self._bar.enter_context(progress(self.st, "reset", p.brokers))
        elif p.step == "broker-done" and self._advance is not None:
            self._advance(1)
        elif p.step == "applied":
            self._bar.close()


def _finish(o: ResetOutcome, fmt: str, printed: bool, stop: Stop) -> None:
    """Render the outcome (kept beside the rollback file too when the terminal may be gone)
    and exit with its error."""
    from mqctl.interrupt import boundary
    from mqctl.reset.rows import outcome_result

    if o.declined:
        if not printed:  # -o json/yaml/csv: the plan was not printed yet
            emit(outcome_result(o), fmt)
        raise o.error()  # type: ignore[misc]
    out = outcome_result(o, plan_shown=printed)
    if o.interruption is not None and o.rollback is not None:
        # the terminal may be gone (SIGHUP: an SSH session that dropped): the result goes to a
        # file beside the rollback file first, then to the terminal if it is still there
        out.data["interrupted"]["result_file"] = _keep_result(out, o.rollback, o.error())
        emit_or_lost(out, fmt)
        raise o.error()  # type: ignore[misc]
    kept = _keep_result(out, o.rollback, None) if stop.stopped and o.rollback else None
    lost = emit_or_lost(out, fmt)
    if lost is not None and o.rollback is not None and kept is None:
        kept = _keep_result(out, o.rollback, None)  # stdout is gone: kept beside rb
    boundary("done")
    err = o.error()
    if err is not None:
        raise err
    if lost is not None and o.results is not None:  # (applied: its result file says what)
        raise output_lost_error(lost, kept)


def _keep_result(out: Result, rb: str, err: MqctlError | None) -> str | None:
    """``out`` (and ``err``) kept in ``<rollback file>.result.txt``."""
    from mqctl.cli.common import keep_result_beside

    return keep_result_beside(out, rb, err)


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
        with cluster(st, namesrv, concurrency) as c:
            live, failures = c.rollback_states([i for i in infos if not i.error])
    emit(rollbacks_result(infos, root, live, failures, here=here, check=check,
                          filtered=group is not None or topic is not None), st.output(output))
    if failures:
        from mqctl.errors import PartialFailure

        raise PartialFailure(f"{len(failures)} rollback file(s) could not be checked against "
                             "the cluster: " + "; ".join(failures[:3]),
                             [(f, f) for f in failures],
                             hint="the NOW column says unknown for them; retry when the "
                                  "brokers answer")

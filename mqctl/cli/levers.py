"""``mqctl group pause/resume`` and ``mqctl group config set/rollback``: the commands parse,
call :mod:`mqctl.api` (the workflow is :mod:`mqctl.levers.workflow`), render the outcome and
exit with its error."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from mqctl.cli.common import (
    cluster,
    emit_before_change,
    emit_or_lost,
    keep_result_beside,
    one_group,
    output_lost_error,
    state,
)
from mqctl.cli.offsets import _ask, _interactive
from mqctl.cli.options import (
    AllLettersOpt,
    AssignmentsArg,
    BrokersOpt,
    ConcurrencyOpt,
    CreateOpt,
    ExecuteOpt,
    ForceOpt,
    FromGroupOpt,
    GroupArg,
    GroupOption,
    JournalOpt,
    MsgIdsOpt,
    NamesrvOpt,
    OfflineOpt,
    OutputOpt,
    RateOpt,
    ResendLimitOpt,
    ResendToOpt,
    ResumeOpt,
    RollbackFileOpt,
    SampleOpt,
    SinceOpt,
    ToGroupOpt,
    TopicReq,
    UndoArg,
    UndoFileOpt,
    UntilOpt,
    YesOpt,
)
from mqctl.errors import UsageError
from mqctl.interrupt import deferred
from mqctl.timeparse import parse_time

if TYPE_CHECKING:
    from mqctl.errors import MqctlError
    from mqctl.levers import LeverRequest
    from mqctl.render import Result



def _brokers(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    names = frozenset(p.strip() for p in text.split(",") if p.strip())
    if not names:
        raise UsageError("--brokers names no broker", hint="e.g. --brokers broker-a,broker-b")
    return names


def pause(
    ctx: typer.Context,
    group: GroupArg = None,
    group_opt: GroupOption = None,
    brokers: BrokersOpt = None,
    sample: SampleOpt = None,
    execute: ExecuteOpt = False,
    yes: YesOpt = False,
    undo_file: UndoFileOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Stop a group consuming: consumeEnable=false in its subscription group config on every
    master (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP with the config as read, only that field
    changed), after a plan showing each broker's current value. The brokers then answer the
    group's pulls NO_PERMISSION (PullMessageProcessor, 4.9.3 and 5.x). Verified by reading
    the config back and by the effect: a probe pull refused, the committed offsets (read twice,
    --sample seconds apart), the clients' cached messages and consumeOKTPS. NOT stopped: messages
    already cached in the clients (still consumed); pop and gRPC consumers are not checked.
    The undo file is written first; `group resume G` (or `group config rollback FILE`)
    undoes it. Ctrl-C, SIGTERM or SIGHUP while applying: per broker what was and was not
    applied, exit 130. Another change of the group running here: refused (exit 6).

    Example: mqctl group pause GID_PAY --execute
    """
    from mqctl.levers import LeverRequest

    group = one_group(group, group_opt, example="mqctl group pause GID_PAY --execute")
    _run(ctx, LeverRequest("pause", group, {"consumeEnable": False},
                           brokers=_brokers(brokers), execute=execute, undo_file=undo_file,
                           sample_s=sample or 0.0),
         yes=yes, output=output, namesrv=namesrv, concurrency=concurrency)


def resume(
    ctx: typer.Context,
    group: GroupArg = None,
    group_opt: GroupOption = None,
    brokers: BrokersOpt = None,
    execute: ExecuteOpt = False,
    yes: YesOpt = False,
    undo_file: UndoFileOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Let a paused group consume again: consumeEnable=true on every master (the config as
    read, only that field changed), planned first, verified by reading back; the pause's
    audit record is removed once every broker took it.

    Example: mqctl group resume GID_PAY --execute
    """
    from mqctl.levers import LeverRequest

    group = one_group(group, group_opt, example="mqctl group resume GID_PAY --execute")
    _run(ctx, LeverRequest("resume", group, {"consumeEnable": True},
                           brokers=_brokers(brokers), execute=execute, undo_file=undo_file),
         yes=yes, output=output, namesrv=namesrv, concurrency=concurrency)


def config_set(
    ctx: typer.Context,
    group: GroupArg = None,
    assignments: AssignmentsArg = None,
    brokers: BrokersOpt = None,
    create: CreateOpt = False,
    execute: ExecuteOpt = False,
    yes: YesOpt = False,
    undo_file: UndoFileOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Change fields of the group's subscription group config on every master: a plan with
    each broker's before and after, then with --execute an undo file of the old configs, one
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP per broker (the config as read, only these fields
    changed) and a read-back. Values are checked by type and by the broker's release (5.x
    fields such as groupRetryPolicy are refused on a 4.9 broker). A broker without the group
    is refused unless --create.

    Example: mqctl group config set GID_PAY retryMaxTimes=3 --execute
    """
    from mqctl.levers import LeverRequest, parse_assignments

    group = one_group(group, None, example="mqctl group config set GID_PAY retryMaxTimes=3")
    changes = parse_assignments(list(assignments or ()))
    _run(ctx, LeverRequest("config set", group, changes, brokers=_brokers(brokers),
                           create=create, execute=execute, undo_file=undo_file),
         yes=yes, output=output, namesrv=namesrv, concurrency=concurrency)


def config_rollback(
    ctx: typer.Context,
    file: UndoArg,
    brokers: BrokersOpt = None,
    execute: ExecuteOpt = False,
    yes: YesOpt = False,
    undo_file: UndoFileOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Restore the configs an undo file saved (written by `group pause/resume` and `group
    config set --execute`), planned first, with a new undo file of the configs it replaces.
    A broker where the group did not exist before is left alone (mqctl deletes no group).

    Example: mqctl group config rollback ~/.local/state/mqctl/levers/undo/GID_PAY-...json --execute
    """
    from mqctl.levers import LeverRequest, read_undo

    group, saved, _notes = read_undo(file)
    _run(ctx, LeverRequest("config rollback", group, restore=saved, source=file,
                           brokers=_brokers(brokers), execute=execute, undo_file=undo_file),
         yes=yes, output=output, namesrv=namesrv, concurrency=concurrency)


def _run(ctx: typer.Context, request: LeverRequest, *, yes: bool, output: Any,
         namesrv: str | None, concurrency: int | None) -> None:
    """A lever from before its plan until its result is written, with SIGINT, SIGTERM and
    SIGHUP recorded and read at every step (:func:`mqctl.interrupt.deferred`)."""
    from mqctl.levers import confirmation_rule
    from mqctl.levers.rows import lever_result, ready_result

    st = state(ctx)
    fmt = st.output(output)
    confirmation_rule(request.execute, yes, _interactive())
    ask = None if yes else _ask
    ready = _shown_first(ask, fmt, ready_result)
    with deferred() as stop, cluster(st, namesrv, concurrency) as c:
        outcome = c.lever(request, stop=stop, confirm=ask, on_ready=ready)
        _finish(lever_result(outcome), fmt, outcome.undo, outcome.error(), stop.stopped)


def _shown_first(ask: Any, fmt: str, shown: Callable[[Any, str | None], Result]
                 ) -> Callable[[Any, str | None], None]:
    """``on_ready(plan, file)``: the plan and the file written first, shown before the
    question (text formats; nothing to show when nobody is asked)."""
    def ready(plan: Any, path: str | None) -> None:
        if ask is not None and fmt in ("table", "plain"):
            emit_before_change(shown(plan, path), fmt)
    return ready


def _finish(out: Result, fmt: str, undo: str | None, err: MqctlError | None,
            stopped: bool) -> None:
    """Print the outcome and exit with its error. After a signal (SIGHUP: the terminal may be
    gone) the result is first kept beside the undo or rollback file
    (``<file>.result.txt``), as ``offsets reset`` keeps it; stdout that cannot be written
    after a change is named (exit 141 or 2) with where the result is."""
    kept = _keep(out, undo, err) if stopped and undo else None
    lost = emit_or_lost(out, fmt)
    if lost is not None and undo is not None and kept is None:
        kept = _keep(out, undo, err)
    if err is not None:
        raise err
    if lost is not None and undo is not None:
        raise output_lost_error(lost, kept)


def _keep(out: Result, file: str, err: MqctlError | None) -> str | None:
    return keep_result_beside(out, file, err)


def clone(
    ctx: typer.Context,
    src: FromGroupOpt,
    dest: ToGroupOpt,
    topic: TopicReq,
    offline: OfflineOpt = False,
    execute: ExecuteOpt = False,
    force: ForceOpt = False,
    yes: YesOpt = False,
    rollback_file: RollbackFileOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Copy one group's committed offsets on a topic to another (the group migration step,
    CLONE_GROUP_OFFSET per broker as mqadmin cloneGroupOffset sends it): a plan with each
    queue's --from offset and --to's before and after; with --execute a rollback file of
    --to's offsets first (`offsets rollback FILE` restores it), the request per broker, then
    --to's offsets read back. --to with online consumers is refused unless --force (they
    would commit their own offsets over the clone).

    Example: mqctl offsets clone --from GID_OLD --to GID_NEW -t TopicPay --execute
    """
    from mqctl.levers import confirmation_rule
    from mqctl.levers.clone import CloneRequest
    from mqctl.levers.rows import clone_result

    st = state(ctx)
    fmt = st.output(output)
    confirmation_rule(execute, yes, _interactive())
    request = CloneRequest(src, dest, topic, offline=offline, execute=execute, force=force,
                           rollback_file=rollback_file)
    with deferred() as stop, cluster(st, namesrv, concurrency) as c:
        outcome = c.clone_offsets(request, stop=stop)
        _finish(clone_result(outcome), fmt, outcome.rollback, outcome.error(), stop.stopped)


def resend(
    ctx: typer.Context,
    group: GroupArg = None,
    msg_id: MsgIdsOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    all_letters: AllLettersOpt = False,
    to: ResendToOpt = "retry",
    limit: ResendLimitOpt = 100,
    rate: RateOpt = None,
    execute: ExecuteOpt = False,
    yes: YesOpt = False,
    journal: JournalOpt = None,
    resume: ResumeOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    group_opt: GroupOption = None,
) -> None:
    """Send dead letters of %DLQ%GROUP again, each exactly once: a plan of the messages
    selected (--msg-id, an offset message id or unique key, repeatable; --since/--until; or
    --all; at most --limit) with each one's unique key, original topic, store time, reconsume
    times and destination; with --execute a journal (JSON Lines, fsync'd per record) first,
    then per message a `sending` record, SEND_MESSAGE_V2 (producer group mqctl-resend, body
    and properties kept but for the retry markers), a `sent` record and a read-back. A
    message the journal says was sent is never sent again; one in doubt (killed between) is
    looked up in the destination by its unique key first. --resume JOURNAL finishes a run.

    Example: mqctl group dlq resend GID_PAY --all --limit 10 --execute
    """
    from mqctl.levers import confirmation_rule
    from mqctl.levers.resend_rows import ready_result, resend_result
    from mqctl.levers.resend_select import ResendRequest

    group = one_group(group, group_opt, example="mqctl group dlq resend GID_PAY --all")
    st = state(ctx)
    fmt = st.output(output)
    confirmation_rule(execute, yes, _interactive())
    request = ResendRequest(group, tuple(msg_id or ()), _time(since),
                            _time(until), all_letters, to, limit, _rate(rate),
                            execute, journal, resume)
    ask = None if yes else _ask
    ready = _shown_first(ask, fmt, ready_result)
    with deferred() as stop, cluster(st, namesrv, None) as c:
        outcome = c.resend_dlq(request, stop=stop, confirm=ask, on_ready=ready)
        _finish(resend_result(outcome), fmt, outcome.journal, outcome.error(), stop.stopped)


def _time(text: str | None) -> int | None:
    return None if text is None else parse_time(text)


def _rate(text: str | None) -> float | None:
    """``--rate 5`` or ``--rate 5/s``."""
    if text is None:
        return None
    raw = text.strip().removesuffix("/s")
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 100000:
        raise UsageError(f"--rate {text!r} is not a rate", hint="messages per second, e.g. "
                         "--rate 5 or --rate 5/s (at most 100000)")
    return value


def register(group_app: typer.Typer, config_app: typer.Typer, offsets_app: typer.Typer,
             dlq_app: typer.Typer | None = None) -> None:
    if dlq_app is not None:
        dlq_app.command("resend")(resend)
    offsets_app.command("clone")(clone)
    group_app.command("pause")(pause)
    group_app.command("resume")(resume)
    config_app.command("set")(config_set)
    config_app.command("rollback")(config_rollback)

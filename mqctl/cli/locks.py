"""``mqctl locks show`` / ``mqctl locks release``: queue locks of orderly consumer groups."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mqctl.cli.common import (
    DEFAULT_WATCH,
    ConcurrencyOpt,
    GroupOpt,
    NamesrvOpt,
    OptionalWatchCommand,
    OutputOpt,
    emit,
    state,
    with_client,
)
from mqctl.cli.common import watch as watch_loop

if TYPE_CHECKING:
    from mqctl.locks import LockStore, LockView, QueueLock, ReleasePlan
    from mqctl.render import Result

app = typer.Typer(help="Queue locks of orderly consumer groups: who holds which queue, "
                       "which are stuck and why, and releasing a stale lock.",
                  no_args_is_help=True)

StateDirOpt = Annotated[Path | None, typer.Option(
    "--state-dir", help="Where the previous observation is kept (default "
    "~/.cache/mqctl/locks, or $XDG_CACHE_HOME/mqctl/locks).", show_default=False)]
NoStateOpt = Annotated[bool, typer.Option(
    "--no-state", help="Neither read nor write the state file: clients that do not answer "
    "lose their last known claims.")]


def _store(settings: Any, state_dir: Path | None, no_state: bool) -> LockStore | None:
    if no_state:
        return None
    from mqctl.locks import LockStore

    return LockStore(state_dir, settings.namesrv)


def _admin(client: Any, settings: Any, concurrency: int | None = None) -> Any:
    from mqctl.admin import Admin

    return Admin(client, settings.namesrv, concurrency=concurrency or settings.concurrency)


def _secs(ms: int | None) -> float | None:
    return round(ms / 1000, 1) if ms is not None else None


def queue_row(q: QueueLock) -> dict[str, Any]:
    from mqctl.locks import clock_text

    d = q.to_dict()
    d["lock_age_s"] = _secs(q.lock_age_ms)
    d["lease_left_s"] = _secs(q.lease_left_ms)
    d["frees_at"] = clock_text(q.frees_at) if q.frees_at else None
    return d


STATE_MEANING = {
    "contested": "two clients claim it (or one id used by two processes)",
    "stale": "owner gone while its broker lease still blocks others",
    "lock-failed": "claimed or assigned but not locked (4.x: granted, marked at the next "
                   "20 s lock cycle)",
    "expiring": "renewal overdue; lease still runs",
    "held": "locked and renewed on time",
    "unknown": "owner does not answer; lease lapsed or never seen",
    "unowned": "no client claims it and none is assigned it",
}


def view_result(view: LockView) -> Result:
    from mqctl.render import Column, Result, Table
    from mqctl.timeparse import format_local

    rows = [queue_row(q) for q in view.queues]
    qcols = [Column("topic", "TOPIC"), Column("queue", "QUEUE"), Column("state", "STATE"),
             Column("owner", "OWNER"), Column("locked", "LOCKED"),
             Column("lock_age_s", "LOCK AGE (S)", "right"), Column("trusted", "TRUSTED"),
             Column("lease_left_s", "LEASE LEFT (S)", "right"),
             Column("frees_at", "FREES AT", raw="frees_at_time"),
             Column("try_unlock_times", "UNLOCK TRIES", "right"),
             Column("dropped", "DROPPED"), Column("predicted", "PREDICTED")]
    summary = view.summary()
    srows = [{"state": s, "queues": n, "meaning": STATE_MEANING[s]} for s, n in summary.items()]
    crows = []
    for c in view.clients:
        d = c.to_dict()
        d["last_seen"] = format_local(c.last_seen_ts) if c.last_seen_ts else None
        crows.append(d)
    ccols = [Column("client_id", "CLIENT ID"), Column("member", "MEMBER"),
             Column("answered", "ANSWERED"), Column("orderly", "ORDERLY"),
             Column("strategy", "STRATEGY"), Column("claimed", "CLAIMED", "right"),
             Column("locked", "LOCKED", "right"),
             Column("last_seen", "LAST SEEN", raw="last_seen_time"),
             Column("error", "ERROR")]
    notes = [f"group {view.group} ({view.kind}): {len(view.queues)} queue(s) of "
             f"{len(view.topics)} topic(s) at {format_local(view.now)}"]
    notes += [f"{s}: {n} queue(s) - {STATE_MEANING[s]}" for s, n in summary.items() if n]
    notes += view.hints()
    notes += list(view.notes)
    return Result([Table(qcols, rows, title=f"locks of {view.group}", name="queues"),
                   Table([Column("state", "STATE"), Column("queues", "QUEUES", "right"),
                          Column("meaning", "MEANING")], srows, title="summary",
                         name="summary"),
                   Table(ccols, crows, title="clients", name="clients")],
                  data=view.to_dict(), notes=notes)


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
    group: GroupOpt,
    topic: Annotated[str | None, typer.Option(
        "--topic", "-t", help="Only this topic (default: every topic the group subscribes "
        "to).", show_default=False)] = None,
    include_retry: Annotated[bool, typer.Option(
        "--include-retry", help="Also show the group's %RETRY% topic queues.")] = False,
    watch: Annotated[float | None, typer.Option(
        "--watch", "-w", metavar="[SECONDS]", min=0.1,
        help=f"Refresh in place every SECONDS (default {DEFAULT_WATCH:g}) until Ctrl-C.",
        show_default=False)] = None,
    count: Annotated[int | None, typer.Option(
        "--count", min=1, help="With --watch: stop after N refreshes.",
        show_default=False)] = None,
    state_dir: StateDirOpt = None,
    no_state: NoStateOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Who holds the lock of each queue of an orderly group, as its clients report it.

    Per queue: the owner, locked, lock age, whether the client still trusts it (<= 30 s), how
    long the broker lease can still run (60 s from the last renewal the client reports),
    unlock tries, dropped, and the owner the allocation predicts. States: held, expiring,
    stale, contested, lock-failed, unknown, unowned (see docs/locks.md). A client that stopped
    answering (hung) renewed nothing after its last answer: once its lease lapsed its queues
    are never stale again, also after the brokers drop it (~120 s after its last heartbeat).
    After FREES AT the new owner locks the queue at its next rebalance; a 4.x client consumes
    it after its next 20 s lock cycle. Read-only: sends no LOCK_BATCH_MQ, UNLOCK_BATCH_MQ or
    HEART_BEAT.

    Example: mqctl locks show --group GID_ORDER --watch
    """
    from mqctl.locks import capture_locks, ensure_lockable
    from mqctl.remoting.client import RemotingClient

    st = state(ctx)
    settings = st.settings(namesrv=namesrv)
    fmt = st.output(output)
    store = _store(settings, state_dir, no_state)

    async def once(client: RemotingClient) -> LockView:
        view = await capture_locks(_admin(client, settings, concurrency), group, topic=topic,
                                   include_retry=include_retry, store=store)
        ensure_lockable(view)
        return view

    if watch is None:
        view = with_client(st, settings, once)
        emit(view_result(view), fmt)
        _raise_partial(view)
        return

    watch_loop(settings, once, view_result, fmt, watch, count)


def release_result(plan: ReleasePlan, before: LockView, after: LockView | None,
                   executed: bool) -> Result:
    from mqctl.render import Column, Result, Table

    prow = plan.to_dict()
    pcols = [Column("group", "GROUP"), Column("topic", "TOPIC"), Column("queue", "QUEUE"),
             Column("state", "STATE"), Column("holder", "HOLDER"),
             Column("broker_addr", "MASTER"), Column("action", "ACTION")]
    tables = [Table(pcols, [prow], title="release plan", name="plan")]
    bq = before.queue(plan.mq)
    aq = after.queue(plan.mq) if after is not None else None
    qcols = [Column("when", "WHEN"), Column("state", "STATE"), Column("owner", "OWNER"),
             Column("locked", "LOCKED"), Column("lock_age_s", "LOCK AGE (S)", "right"),
             Column("frees_at", "FREES AT"), Column("predicted", "PREDICTED"),
             Column("reason", "REASON")]
    qrows = []
    if bq is not None:
        qrows.append({"when": "before", **queue_row(bq)})
    if aq is not None:
        qrows.append({"when": "after", **queue_row(aq)})
    tables.append(Table(qcols, qrows, title=f"{plan.mq.short} of {plan.mq.topic}",
                        name="queue"))
    notes = list(plan.warnings)
    if not executed:
        notes.append(f"dry run: nothing was sent; add --execute to {plan.describe()}")
    else:
        notes.append(f"sent UNLOCK_BATCH_MQ for {plan.holder} to {plan.broker_addr}: the broker "
                     "answers SUCCESS without saying whether an entry was removed")
        if aq is not None:
            nxt = ", ".join(aq.predicted) or "the client the allocation assigns it to"
            notes.append(f"now: {aq.state.value} ({aq.reason}); {nxt} locks it at its next "
                         "rebalance or lock renewal (within 20 s)")
    data = {"plan": prow, "executed": executed,
            "before": bq.to_dict() if bq is not None else None,
            "after": aq.to_dict() if aq is not None else None}
    return Result(tables, data=data, notes=notes)


@app.command("release")
def release(
    ctx: typer.Context,
    group: GroupOpt,
    queue: Annotated[str, typer.Option(
        "--queue", help="The queue as BROKER:QUEUE_ID, e.g. broker-a:3.")],
    topic: Annotated[str | None, typer.Option(
        "--topic", "-t", help="The queue's topic (needed when the group subscribes to "
        "several topics with that queue).", show_default=False)] = None,
    client: Annotated[str | None, typer.Option(
        "--client", help="Release on behalf of this client id (default: the recorded "
        "holder).", show_default=False)] = None,
    execute: Annotated[bool, typer.Option(
        "--execute", help="Send the request (without it: show the plan only).")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Release even when the holder is alive and renewing.")] = False,
    state_dir: StateDirOpt = None,
    no_state: NoStateOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
) -> None:
    """Release a stale queue lock on behalf of its recorded holder (UNLOCK_BATCH_MQ).

    The broker removes a lock entry only for the client id that holds it, so the holder
    comes from the clients' reports (or the state file of earlier `locks show` runs, for a
    consumer that crashed); --client overrides it. Shows the plan and sends nothing without
    --execute; refuses (exit 6) when the holder is alive and renewing unless --force. After
    executing it re-checks the queue and reports.

    Example: mqctl locks release --group GID_ORDER --queue broker-a:3 --execute
    """
    from mqctl.locks import execute_release, parse_queue_spec, prepare_release

    broker, qid = parse_queue_spec(queue)
    st = state(ctx)
    settings = st.settings(namesrv=namesrv)
    fmt = st.output(output)
    store = _store(settings, state_dir, no_state)

    async def go(c: Any) -> tuple[ReleasePlan, LockView, LockView | None]:
        admin = _admin(c, settings)
        plan, before = await prepare_release(admin, group, broker, qid, topic=topic,
                                             client=client, force=force, store=store)
        if not execute:
            return plan, before, None
        return plan, before, await execute_release(admin, plan, store=store)

    plan, before, after = with_client(st, settings, go)
    emit(release_result(plan, before, after, execute), fmt)

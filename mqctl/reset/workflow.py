"""The reset workflow (``offsets reset`` and ``offsets rollback``): small ordered steps, each
returning a frozen result, from the request to the outcome.

1. :meth:`ResetRun.plan` (read-only): the guards (before any I/O), the change lock of the group
   (for a change: from before its offsets are read), the plan (:func:`mqctl.reset.make_plan`),
   the messages at the targets, the guards' verdict, the exported plan: a :class:`Planned`.
2. :meth:`ResetRun.apply`: nothing to do or refused (nothing sent), every queue already at its
   target (nothing sent, no rollback file), the rollback path, ``ready`` (the caller shows the
   plan), the confirmation, the rollback file (before the first change), the apply, the
   verify: a :class:`ResetOutcome`.

An interrupt (``stop``: :mod:`mqctl.interrupt`) while planning or before the change ends the
run with nothing changed; from the apply on, the apply and verify stop themselves and the
outcome says what changed (:func:`mqctl.reset.outcome.interruption`). The words of every
verdict and the error a run ends with are :mod:`mqctl.reset.outcome`'s.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import MqctlError, PartialFailure, RefusedError
from mqctl.fsutil import check_output_file
from mqctl.interrupt import Stop, boundary, change_lock, guarded, taken_over
from mqctl.remoting.client import fan_out
from mqctl.reset.apply import BAD, QueueResult, Status, apply_plan, verify
from mqctl.reset.files import (
    export_format,
    export_plan,
    find_rollback,
    free_path,
    later_changes,
    live_state,
    read_rollback,
    rollback_path,
    write_rollback,
)
from mqctl.reset.guards import (
    GUARD_HINT,
    Guards,
    Totals,
    check_guards,
    confirm_question,
    confirmed,
    needs_confirmation,
    plan_totals,
    resolve_guards,
)
from mqctl.reset.outcome import Interruption, interruption, rerun_hint
from mqctl.reset.plan import default_wait, make_plan, parse_queue_scope, target_from_options
from mqctl.reset.types import Plan, Target
from mqctl.views.message import annotate_plan

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.config import Settings
    from mqctl.context import Context
    from mqctl.errors import MqctlError

# ``confirm(question)``: the answer line (None at end of input), or an awaitable of it
Confirm = Callable[[str], Any]


@dataclass(frozen=True, slots=True)
class ResetRequest:
    """What to change: ``target`` (:func:`mqctl.reset.target_from_options`, or a rollback
    file's), ``scope`` (``--queues``: (broker, queue id) pairs), ``execute`` (a change: the
    plan takes the group's change lock), the guards' limits (``max_replay``, ``max_skip``;
    the settings' otherwise), ``export`` (a plan file to write), ``notes`` (a rollback file's),
    ``rerun_scope`` (a re-run may name queues with --queues: not for a rollback)."""

    group: str
    topic: str
    target: Target
    execute: bool = False
    force: bool = False
    scope: frozenset[tuple[str, int]] | None = None
    export: str | None = None
    show_messages: bool = False
    max_replay: int | None = None
    max_skip: int | None = None
    notes: tuple[str, ...] = ()
    rerun_scope: bool = True
    command: str = "offsets reset"  # what the change lock records


@dataclass(frozen=True, slots=True)
class Planned:
    """The plan with the guards' verdict: ``breaches`` (limits the plan passes), ``guarded``
    (those among the plan's refusals: an --execute), ``notes`` (what the run says besides the
    plan: a plan file written, what --execute would refuse, a lock taken over)."""

    plan: Plan
    guards: Guards
    totals: Totals
    breaches: tuple[str, ...]
    guarded: tuple[str, ...]
    notes: tuple[str, ...]
    execute: bool
    force: bool = False

    @property
    def guard_data(self) -> dict[str, Any]:
        return {**self.guards.to_dict(), "totals": self.totals.to_dict(),
                "breaches": list(self.breaches)}

    @property
    def todo(self) -> int:
        return sum(1 for q in self.plan.queues if q.current != q.target)

    @property
    def nothing_to_send(self) -> bool:
        return all(q.current is not None and q.current == q.target for q in self.plan.queues)


@dataclass(frozen=True, slots=True)
class Progress:
    """A step of :meth:`ResetRun.apply`, for ``on_progress``: ``ready`` (the plan is final and
    the rollback path chosen: show it now; ``asks``: a confirmation follows; ``message``: what
    starts next), ``confirmed``, ``applying`` (``brokers`` to send to), ``broker-done``,
    ``applied``, ``verifying``."""

    step: str
    rollback: str | None = None
    todo: int = 0
    asks: bool = False
    brokers: int = 0
    broker: str | None = None
    message: str = ""


@dataclass(frozen=True, slots=True)
class ResetOutcome:
    """What a run did. ``phase``: how far it went (``plan``: nothing was changed; ``apply``,
    ``verify``: interrupted there; ``done``: every queue judged); ``results``: per queue (None:
    nothing was sent); ``rollback``: the rollback file written (None: none); ``ready_notes``:
    how many of ``notes`` there were when the plan was shown (``ready``); ``interruption``:
    what an interrupt of the apply or verify left (its notes, data and error)."""

    planned: Planned
    phase: str = "plan"
    results: tuple[QueueResult, ...] | None = None
    rollback: str | None = None
    notes: tuple[str, ...] = ()
    declined: bool = False
    interruption: Interruption | None = None
    ready_notes: int | None = None
    rerun_scope: bool = True

    @property
    def plan(self) -> Plan:
        return self.planned.plan

    @property
    def changed(self) -> bool:
        """Requests that change offsets were sent."""
        return self.rollback is not None and self.results is not None

    def error(self) -> MqctlError | None:
        """The error the run ends with (None: it succeeded): :func:`outcome_error`."""
        return outcome_error(self)


@dataclass(slots=True)
class ResetRun:
    """One reset from its plan to its outcome (:meth:`plan`, then :meth:`apply`). Holds the
    group's change lock from the plan of a change until :meth:`close`."""

    admin: Admin
    settings: Settings
    request: ResetRequest
    planned: Planned
    concurrency: int
    _locks: ExitStack = field(default_factory=ExitStack)

    # ------------------------------------------------------------------ 1. plan

    @classmethod
    async def plan(cls, admin: Admin, settings: Settings, request: ResetRequest, *,
                   context: Context | None = None, stop: Stop | None = None,
                   concurrency: int | None = None) -> ResetRun:
        """Plan it (read-only). ``stop``: an interrupt while planning ends the run at once,
        nothing changed (exit 130)."""
        guards = resolve_guards(settings, max_replay=request.max_replay,
                                max_skip=request.max_skip, execute=request.execute)
        locks = ExitStack()
        try:
            lock_notes = _change_lock(locks, settings, request, context)
            if stop is not None:
                stop.late = "after the plan was shown: nothing was changed"
                planned = await guarded(stop, _planned(admin, request, guards, lock_notes),
                                        lambda: True)
            else:
                planned = await _planned(admin, request, guards, lock_notes)
        except BaseException:
            locks.close()
            raise
        return cls(admin, settings, request, planned, concurrency or admin.concurrency, locks)

    # ------------------------------------------------------------------ 2. apply

    async def apply(self, *, rollback_file: str | None = None, confirm: Confirm | None = None,
                    on_progress: Callable[[Progress], None] | None = None,
                    verify_wait: float | None = None, stop: Stop | None = None
                    ) -> ResetOutcome:
        """Apply the plan, verify it and say what happened; nothing is sent when it is refused
        or is not an --execute. ``rollback_file``: where the previous offsets go (default
        under ``~/.local/state/mqctl/rollback``; a file there already is kept and the next
        free name taken); ``confirm(question)``: asked before a large change (the guards'
        confirm_above), ``y`` goes ahead; ``on_progress``: each :class:`Progress` step;
        ``stop``: an interrupt (:func:`mqctl.interrupt.deferred`)."""
        if not self.planned.execute:
            return self.unchanged()
        steps = _Apply(self, rollback_file, confirm, on_progress or _quiet, verify_wait,
                       stop or Stop())
        if stop is None:
            return await steps.run()
        return await guarded(stop, steps.run(), lambda: steps.phase == "plan")

    def unchanged(self) -> ResetOutcome:
        """The outcome of a plan that is not applied (not an --execute, or refused)."""
        return ResetOutcome(self.planned, notes=self.planned.notes,
                            rerun_scope=self.request.rerun_scope)

    def close(self) -> None:
        """Release the change lock (if this run holds it): after the outcome's files and
        output are written (``with run:`` does it at the end of the block)."""
        self._locks.close()

    def __enter__(self) -> ResetRun:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _quiet(_p: Progress) -> None:
    return None


def _change_lock(locks: ExitStack, settings: Settings, request: ResetRequest,
                 context: Context | None) -> tuple[str, ...]:
    """One change of a group at a time from this machine, from before its plan: the note of a
    lock left by a killed run that this one took over (also a warning)."""
    if not request.execute:
        return ()

    stale = locks.enter_context(change_lock(
        settings.namesrv, request.group,
        f"mqctl {request.command} {request.group}/{request.topic}"))
    if stale is None:
        return ()
    note = taken_over(request.group, stale)
    if context is not None:
        context.warning(note)
    return (note,)


async def _planned(admin: Admin, request: ResetRequest, guards: Guards,
                   lock_notes: tuple[str, ...]) -> Planned:
    boundary("start")
    scope = set(request.scope) if request.scope is not None else None
    plan = await make_plan(admin, request.group, request.topic, request.target, scope=scope,
                           force=request.force)
    boundary("planned")
    plan = replace(plan, notes=[*lock_notes, *plan.notes])
    if request.show_messages:  # the message at each target: one read-only pull per queue

        await annotate_plan(admin, plan)
    totals = plan_totals(plan)
    breaches = tuple(check_guards(totals, guards))
    notes = list(request.notes)
    if request.execute:
        plan = replace(plan, refusals=[*plan.refusals, *breaches])
    else:
        notes += [f"{b}: --execute would be refused" for b in breaches]
    if request.export:
        export_plan(plan, request.export)
        notes.append(f"plan written to {request.export}")
    return Planned(plan, guards, totals, breaches, breaches if request.execute else (),
                   tuple(notes), request.execute, request.force)


class _Apply:
    """The steps of :meth:`ResetRun.apply`, in order (``phase`` for the interrupt guard)."""

    def __init__(self, run: ResetRun, rollback_file: str | None, confirm: Confirm | None,
                 on_progress: Callable[[Progress], None], verify_wait: float | None,
                 stop: Stop) -> None:
        self.run_, self.rollback_file, self.confirm = run, rollback_file, confirm
        self.on_progress, self.verify_wait, self.stop = on_progress, verify_wait, stop
        self.phase = "plan"
        self.notes: list[str] = list(run.planned.notes)
        self.ready_notes: int | None = None

    def outcome(self, **kw: Any) -> ResetOutcome:
        if kw.get("results") is not None:  # a signal from now on comes after the change
            self.stop.late = ("after the change was complete: the result above stands (it is "
                              "also beside the rollback file)" if kw.get("rollback") else
                              "after the change was complete: the result above stands")
        return ResetOutcome(self.run_.planned, phase=self.phase, notes=tuple(self.notes),
                            ready_notes=self.ready_notes,
                            rerun_scope=self.run_.request.rerun_scope, **kw)

    async def run(self) -> ResetOutcome:
        planned, admin = self.run_.planned, self.run_.admin
        plan = planned.plan
        if plan.refusals:
            return self.outcome()
        if planned.nothing_to_send:
            self.notes.append("every queue is already at its target: nothing sent, no "
                              "rollback file written")
            results = await apply_plan(admin, plan, concurrency=self.run_.concurrency)
            return self.outcome(results=tuple(results))
        rb = self.rollback_path()
        if not await self.confirmed(rb):
            return self.outcome(declined=True)
        self.stop.before_change()  # (a signal while planning: nothing is written or sent)
        write_rollback(plan, rb)  # before the first change
        results = await self.applied()
        if self.stop.stopped:
            return self.interrupted(results, rb)
        results = await self.verified(results)
        if self.phase != "done":
            return self.interrupted(results, rb)
        return self.outcome(results=tuple(results), rollback=str(rb))

    def rollback_path(self) -> Path:
        plan = self.run_.planned.plan
        wanted = Path(self.rollback_file) if self.rollback_file else rollback_path(
            plan.group, plan.topic, plan.created_ms)
        rb = free_path(wanted)
        if rb != wanted:
            self.notes.append(f"{wanted} exists (kept: it may hold the offsets from before an "
                              f"earlier run); this run's rollback file is {rb}")
        return rb

    async def confirmed(self, rb: Path) -> bool:
        """``ready`` (the caller shows the plan), then the confirmation of a large change."""
        planned = self.run_.planned
        asks = self.confirm is not None and needs_confirmation(planned.totals, planned.guards)
        applying = (f"applying {planned.todo} change(s) now (Ctrl-C stops and says what "
                    "changed)")
        self.ready_notes = len(self.notes)
        self.on_progress(Progress("ready", rollback=str(rb), todo=planned.todo, asks=asks,
                                  message=applying))
        if not asks or self.confirm is None:
            return True
        answer = self.confirm(confirm_question(planned.plan, planned.totals, planned.guards))
        if inspect.isawaitable(answer):
            answer = await answer
        if not confirmed(answer):  # type: ignore[arg-type]
            return False
        self.on_progress(Progress("confirmed", rollback=str(rb), todo=planned.todo,
                                  message=applying))
        return True

    async def applied(self) -> list[QueueResult]:
        plan = self.run_.planned.plan
        brokers = {q.mq.broker_name for q in plan.queues}
        self.phase = "apply"
        boundary("applying")
        self.on_progress(Progress("applying", brokers=len(brokers)))

        def broker_done(name: Any) -> None:
            self.on_progress(Progress("broker-done", broker=str(name), brokers=len(brokers)))
            boundary("broker-done")

        try:
            return await apply_plan(self.run_.admin, plan, concurrency=self.run_.concurrency,
                                    on_broker_done=broker_done, stop=self.stop)
        finally:
            self.on_progress(Progress("applied", brokers=len(brokers)))

    async def verified(self, results: list[QueueResult]) -> list[QueueResult]:
        plan = self.run_.planned.plan
        self.phase = "verify"
        boundary("verifying")
        self.on_progress(Progress("verifying"))
        wait = default_wait(plan) if self.verify_wait is None else self.verify_wait
        checked = asyncio.ensure_future(verify(self.run_.admin, plan, results, wait_s=wait))
        if await self.stop.race(checked, 0.0):
            return results
        self.phase = "done"  # every queue judged: a signal from now on comes after it
        boundary("verified")
        return checked.result()

    def interrupted(self, results: list[QueueResult], rb: Path) -> ResetOutcome:
        """What an interrupt of the apply or verify left (the finishing plan file is written
        now, once)."""
        self.stop.reported = True  # (the outcome says what changed: exit 130)
        report = interruption(self.run_.planned.plan, results, str(rb), self.phase,
                              self.stop.reason)
        return self.outcome(results=tuple(results), rollback=str(rb), interruption=report)


# ---------------------------------------------------------------------- the requests

def reset_request(group: str, topic: str, *, to_time: str | None = None,
                  by_duration: str | None = None, to_earliest: bool = False,
                  to_latest: bool = False, to_offset: int | None = None,
                  shift_by: int | None = None, from_file: str | None = None,
                  queues: Sequence[str] = (), execute: bool = False, force: bool = False,
                  export: str | None = None, rollback_file: str | None = None,
                  show_messages: bool = False, max_replay: int | None = None,
                  max_skip: int | None = None) -> ResetRequest:
    """A reset's request from ``offsets reset``'s options, checked before any network I/O
    (bad input fails fast, exit 2): the target (exactly one of ``to_time`` ... ``from_file``),
    the scope (``queues``: ``broker-a:0,1``, ``broker-a:0-3``), a plan file to export (a file
    there that is not an mqctl plan only with ``force``), the rollback file's place."""

    scope = parse_queue_scope(list(queues))
    if export:
        export_format(export, force=force)
    if rollback_file:  # a device, FIFO or directory: refused before any I/O (docs/errors.md)
        check_output_file(rollback_file, "rollback file")
    target = target_from_options(to_time=to_time, by_duration=by_duration,
                                 to_earliest=to_earliest, to_latest=to_latest,
                                 to_offset=to_offset, shift_by=shift_by, from_file=from_file,
                                 group=group, topic=topic)
    return ResetRequest(group, topic, target, execute=execute, force=force,
                        scope=frozenset(scope) if scope is not None else None, export=export,
                        show_messages=show_messages, max_replay=max_replay,
                        max_skip=max_skip)


@dataclass(frozen=True, slots=True)
class NothingToRestore:
    """A rollback file whose queues all had no committed offset before the reset: nothing to
    send (:func:`mqctl.reset.rows.nothing_to_restore_result` says what that means)."""

    path: str
    group: str
    topic: str
    target: Target


def rollback_request(file: str, *, namesrv: str, execute: bool = False, force: bool = False,
                     max_replay: int | None = None, max_skip: int | None = None
                     ) -> ResetRequest | NothingToRestore:
    """A rollback's request from its file (a path, or a NAME in the default directory): the
    file's group, topic, saved offsets and notes (another name server than ``namesrv``, queues
    saved as "none"), and the later changes of the group and topic beside it (restoring an
    older reset's file undoes them too)."""

    path = find_rollback(file)
    group, topic, target, notes = read_rollback(path, namesrv=namesrv)
    if not target.plan:  # every queue saved as "none": nothing to send, and why
        return NothingToRestore(path, group, topic, target)
    later = later_changes(path)
    if later:
        notes.append(f"warning: later change(s) of {group}/{topic} beside it: "
                     f"{', '.join(later[:3])}{' ...' if len(later) > 3 else ''}; restoring "
                     "this file undoes them too")
        target = replace(target, elsewhere=(*target.elsewhere, f"{len(later)} later change(s) "
                                            f"of {group}/{topic} beside it ({later[-1]})"))
    return ResetRequest(group, topic, target, execute=execute, force=force,
                        max_replay=max_replay, max_skip=max_skip, notes=tuple(notes),
                        rerun_scope=False, command="offsets rollback")


async def rollback_states(admin: Admin, infos: Sequence[Any]
                          ) -> tuple[dict[str, str], list[str]]:
    """``offsets rollbacks --check``: per file (by name), where its group's committed offsets
    are now (GET_CONSUME_STATS per broker of the topic's route; read-only), and the files
    that could not be checked. One read per group and topic, shared by its files."""

    pairs = sorted({(i.group, i.topic) for i in infos})

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


# ---------------------------------------------------------------------- the exit

def outcome_error(o: ResetOutcome) -> MqctlError | None:
    """The error a run ends with, by what it did (None: it succeeded): not confirmed (exit 6),
    interrupted while changing (130), refused (6: by the guards, or by the plan's refusals),
    queues that did not take, were moved or could not be decided (8)."""
    plan, execute, force = o.plan, o.planned.execute, o.planned.force
    if o.declined:
        return RefusedError("the change was not confirmed: nothing was changed, no rollback "
                            "file written",
                            hint="answer y to apply it; --yes applies without asking")
    if o.interruption is not None:
        return o.interruption.error
    if plan.refusals:
        more = (f" (and {len(plan.refusals) - 1} more reason(s) in the output)"
                if len(plan.refusals) > 1 else "")
        if o.planned.guarded and len(o.planned.guarded) == len(plan.refusals):
            return RefusedError(plan.refusals[0] + more, hint=GUARD_HINT)  # only guards
        return RefusedError(plan.refusals[0] + more,
                            hint=("nothing was changed" if execute else "the plan cannot be "
                                  "executed as it is")
                            + ("" if force else "; --force overrides where it can"))
    bad = [r for r in o.results or () if r.status in BAD]
    return _not_taken_error(o, bad) if bad else None


def _not_taken_error(o: ResetOutcome, bad: list[QueueResult]) -> PartialFailure:
    results = o.results or ()
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
    return PartialFailure("; ".join(parts), [(r.plan.mq.short, r.detail) for r in bad],
                          hint=rerun_hint(o.plan, bad, o.rollback, o.rerun_scope))

"""A config lever from its request to its outcome, with the reset's discipline
(:mod:`mqctl.reset.workflow` is the model):

1. the group's change lock (:func:`mqctl.interrupt.change_lock`, the one ``offsets reset``,
   ``offsets rollback`` and ``locks release`` take: one change of a group at a time from this
   machine), from before the configs are read;
2. the plan (:func:`mqctl.levers.plan.make_plan`, read-only) and its refusals;
3. ``ready`` (the caller shows the plan), the confirmation;
4. the undo file, atomically, before the first request (:mod:`mqctl.levers.undo`);
5. the apply per master, then the verify by reading the configs back (:mod:`.apply`);
6. a pause's effect (:mod:`.effect`) and audit record.

An interrupt (SIGINT, SIGTERM, SIGHUP: :mod:`mqctl.interrupt`) before the undo file ends the
run with nothing changed (exit 130); from the apply on, no new request is sent and the outcome
says per broker what was and was not applied, the command that finishes the change and the
one that undoes it.
"""

from __future__ import annotations

import inspect
import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import ExitCode, MqctlError, PartialFailure, RefusedError
from mqctl.interrupt import Stop, boundary, change_lock, guarded, taken_over
from mqctl.levers.apply import BAD, CHANGED, BrokerResult, Status, apply_changes, verify
from mqctl.levers.effect import PauseEffect, pause_effect
from mqctl.levers.plan import LeverPlan, LeverRequest, make_plan
from mqctl.levers.undo import clear_pause, free, record_pause, undo_path, write_undo

if TYPE_CHECKING:
    from mqctl.admin import Admin

Confirm = Callable[[str], Any]


def confirmation_rule(execute: bool, yes: bool, interactive: bool) -> None:
    """An --execute is asked about on a terminal (unless --yes) and refused without one
    unless --yes (cron, CI, a pipe: nobody can answer, and a lever stops or changes a whole
    group): RefusedError, exit 6, before any request."""
    if execute and not yes and not interactive:
        raise RefusedError("--execute without a terminal to confirm on: nothing was changed",
                           hint="add --yes to change the group without asking (scripts, cron)")


@dataclass(frozen=True, slots=True)
class LeverOutcome:
    """What a run did: ``phase`` (plan: nothing was sent; apply, verify: interrupted there;
    done), ``results`` per broker (None: nothing sent), ``undo`` (the undo file written),
    ``signal`` (an interrupt of the apply or verify)."""

    plan: LeverPlan
    phase: str = "plan"
    results: tuple[BrokerResult, ...] | None = None
    undo: str | None = None
    notes: tuple[str, ...] = ()
    declined: bool = False
    signal: str | None = None
    effect: PauseEffect | None = None

    @property
    def request(self) -> LeverRequest:
        return self.plan.request

    def count(self, *status: Status) -> int:
        return sum(1 for r in self.results or () if r.status in status)

    def left(self) -> list[str]:
        """Brokers still to send to: not sent, failed, unknown, not taken."""
        return sorted(r.broker for r in self.results or () if r.status in BAD)

    def finish_command(self) -> str | None:
        left = self.left()
        return command(self.plan, brokers=left) if left else None

    def undo_command(self) -> str | None:
        if self.undo is None or not any(r.status in (*CHANGED, Status.UNKNOWN)
                                        for r in self.results or ()):
            return None
        return mqctl(self.plan, "group", "config", "rollback", self.undo, "--execute", "--yes")

    def error(self) -> MqctlError | None:
        return outcome_error(self)


def mqctl(plan: LeverPlan, *args: str) -> str:
    return shlex.join(["mqctl", "-n", plan.namesrv, *args])


def command(plan: LeverPlan, *, brokers: Sequence[str] = ()) -> str:
    """The command that (re)makes this change, on ``brokers`` if given."""
    r = plan.request
    scope = ["--brokers", ",".join(brokers)] if brokers else []
    if r.lever in ("pause", "resume"):
        return mqctl(plan, "group", r.lever, r.group, *scope, "--execute", "--yes")
    if r.lever == "config rollback":
        return mqctl(plan, "group", "config", "rollback", r.source or "?", *scope,
                     "--execute", "--yes")
    kv = [f"{k}={_text(v)}" for k, v in sorted(r.changes.items())]
    return mqctl(plan, "group", "config", "set", r.group, *kv, *scope,
                 *(["--create"] if r.create else []), "--execute", "--yes")


def _text(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else (
        json.dumps(v, sort_keys=True, separators=(",", ":")) if isinstance(v, (dict, list))
        else str(v))


async def run_lever(admin: Admin, namesrv: Sequence[str], request: LeverRequest, *,
                    stop: Stop | None = None, confirm: Confirm | None = None,
                    on_ready: Callable[[LeverPlan, str | None], None] | None = None,
                    warn: Callable[[str], None] | None = None) -> LeverOutcome:
    """Plan the lever and, with ``request.execute``, apply and verify it, holding the group's
    change lock throughout. ``confirm(question)``: asked after the plan is shown (None:
    confirmed already, --yes); ``on_ready(plan, undo file)``: the plan is final; ``stop``:
    the interrupt record (:func:`mqctl.interrupt.deferred`)."""
    ns = ";".join(namesrv)
    if not request.execute:
        boundary("start")
        return LeverOutcome(await make_plan(admin, request, ns))
    what = f"mqctl group {request.lever} {request.group}"
    return await under_change_lock(
        namesrv, request.group, what, stop, warn,
        lambda notes: _Steps(admin, request, ns, stop or Stop(), confirm, on_ready, notes))


async def under_change_lock(namesrv: Sequence[str], group: str, what: str, stop: Stop | None,
                            warn: Callable[[str], None] | None,
                            make: Callable[[list[str]], Any]) -> Any:
    """``make(notes).run()`` holding the group's change lock; a lock left by a run that was
    killed is taken over and said (``notes``, ``warn``); with ``stop``, an interrupt while
    the steps' ``phase`` is still ``plan`` ends the run at once (:func:`guarded`)."""
    with change_lock(namesrv, group, what) as stale:
        notes: list[str] = []
        if stale is not None:
            notes.append(taken_over(group, stale))
            if warn is not None:
                warn(notes[-1])
        steps = make(notes)
        if stop is None:
            return await steps.run()
        return await guarded(stop, steps.run(), lambda: steps.phase == "plan")


async def confirmed(confirm: Confirm | None, text: str) -> bool:
    """Asked ``text`` (None: confirmed already, --yes): y or yes goes on."""
    if confirm is None:
        return True
    answer = confirm(text)
    if inspect.isawaitable(answer):
        answer = await answer
    return (answer or "").strip().lower() in ("y", "yes")

class _Steps:
    def __init__(self, admin: Admin, request: LeverRequest, ns: str, stop: Stop,
                 confirm: Confirm | None,
                 on_ready: Callable[[LeverPlan, str | None], None] | None,
                 notes: list[str]) -> None:
        self.admin, self.request, self.ns, self.stop = admin, request, ns, stop
        self.confirm, self.on_ready, self.notes = confirm, on_ready, notes
        self.phase = "plan"

    def outcome(self, plan: LeverPlan, **kw: Any) -> LeverOutcome:
        return LeverOutcome(plan, phase=self.phase, notes=tuple(self.notes), **kw)

    async def run(self) -> LeverOutcome:
        boundary("start")
        self.stop.late = "after the plan was shown: nothing was changed"
        plan = await make_plan(self.admin, self.request, self.ns)
        boundary("planned")
        if plan.refusals or not plan.to_send:
            if not plan.refusals:
                self.notes.append("nothing to send: every broker is already as planned")
            return self.outcome(plan, results=None)
        wanted = Path(self.request.undo_file) if self.request.undo_file else undo_path(plan)
        undo = free(wanted)
        if self.on_ready is not None:
            self.on_ready(plan, str(undo))
        if not await confirmed(self.confirm, question(plan)):
            return self.outcome(plan, declined=True)
        self.stop.before_change()
        write_undo(plan, undo)  # before the first change
        self.phase = "apply"
        boundary("applying")
        results = await apply_changes(self.admin, plan, stop=self.stop,
                                      on_broker_done=lambda b: boundary("broker-done"))
        if self.stop.stopped:
            return self.interrupted(plan, results, undo)
        self.phase = "verify"
        boundary("verifying")
        checked = await verify(self.admin, plan.group, results)
        if self.stop.stopped:
            return self.interrupted(plan, results, undo)
        self.phase = "done"
        self.stop.late = ("after the change was complete: the result above stands (undo: "
                          f"`mqctl group config rollback {undo} --execute`)")
        boundary("verified")
        effect = await self.after(plan, checked, str(undo))
        return self.outcome(plan, results=tuple(checked), undo=str(undo), effect=effect)

    async def after(self, plan: LeverPlan, results: list[BrokerResult], undo: str
                    ) -> PauseEffect | None:
        """A pause's audit record and effect; a resume clears the record."""
        lever = plan.request.lever
        ok = [r.broker for r in results if r.status == Status.VERIFIED]
        if lever == "pause" and ok:
            record_pause(plan, ok, undo)
        elif lever == "resume" and ok and not any(r.status in BAD for r in results):
            clear_pause(plan.namesrv, plan.group)
        if lever != "pause" or not ok:
            return None
        return await pause_effect(self.admin, plan, results, sample_s=plan.request.sample_s,
                                  stop=self.stop)

    def interrupted(self, plan: LeverPlan, results: list[BrokerResult], undo: Path
                    ) -> LeverOutcome:
        self.stop.reported = True
        if plan.request.lever == "pause" and any(r.status in (Status.APPLIED, Status.UNKNOWN)
                                                 for r in results):
            record_pause(plan, [r.broker for r in results if r.status == Status.APPLIED],
                         str(undo))
        return self.outcome(plan, results=tuple(results), undo=str(undo),
                            signal=self.stop.reason)


def question(plan: LeverPlan) -> str:
    r = plan.request
    n = len(plan.to_send)
    what = {"pause": "pause (consumeEnable=false)", "resume": "resume (consumeEnable=true)",
            "config set": "change the config of", "config rollback": "restore the config of"}
    return f"About to {what[r.lever]} group {r.group} on {n} broker(s). Proceed? [y/N] "


def outcome_error(o: LeverOutcome) -> MqctlError | None:
    """Not confirmed (exit 6), interrupted while changing (130), refused (6), brokers that
    did not take or could not be sent to (8)."""
    if o.declined:
        return RefusedError("the change was not confirmed: nothing was changed, no undo file "
                            "written", hint="answer y to apply it; --yes applies without asking")
    plan = o.plan
    if o.signal is not None:
        applied = o.count(Status.APPLIED, Status.VERIFIED)
        msg = (f"interrupted by {o.signal} during {o.phase}: {applied} broker(s) applied, "
               f"{o.count(Status.NOT_SENT)} not sent, {o.count(Status.UNKNOWN)} unknown, "
               f"{o.count(Status.FAILED)} failed; nothing more was sent")
        parts = [f"finish: {c}" for c in [o.finish_command()] if c]
        parts += [f"undo: {c}" for c in [o.undo_command()] if c]
        return MqctlError(msg, hint="; ".join(parts) or "nothing was changed",
                          exit_code=ExitCode.INTERRUPTED)
    if plan.refusals:
        more = (f" (and {len(plan.refusals) - 1} more reason(s) in the output)"
                if len(plan.refusals) > 1 else "")
        return RefusedError(plan.refusals[0] + more,
                            hint="nothing was changed" if plan.request.execute else
                            "the plan cannot be executed as it is")
    bad = [r for r in o.results or () if r.status in BAD]
    if not bad:
        return None
    hint = "; ".join([f"finish: {c}" for c in [o.finish_command()] if c]
                     + [f"undo: {c}" for c in [o.undo_command()] if c])
    return PartialFailure(f"{len(bad)} of {len(o.results or ())} broker(s) did not take the "
                          "change: " + "; ".join(f"{r.broker} {r.status.value} ({r.detail})"
                                                 for r in bad[:4]),
                          [(r.broker, r.detail) for r in bad], hint=hint)


__all__ = ["LeverOutcome", "command", "confirmation_rule", "confirmed", "outcome_error",
           "question", "run_lever", "under_change_lock"]

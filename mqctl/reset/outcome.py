"""What a reset or rollback did, in words: the summary of what changed, the commands that
finish or undo it, what to do about queues that did not take, and the report of an interrupt.
Pure: the outcome is already computed
(:mod:`mqctl.reset.workflow`); the CLI renders and exits.

Facts from apache/rocketmq: ``MQClientInstance.resetOffset`` (a legacy push is applied by the
clients about 10 s after it, one broker's push at a time), ``ConsumerManageProcessor.
updateConsumerOffset`` (explicit offsets of a legacy broker: live consumers overwrite them).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import ExitCode, MqctlError, UsageError
from mqctl.interrupt import INTERRUPT_GRACE_S
from mqctl.reset.apply import Status
from mqctl.reset.files import export_plan, free_path
from mqctl.reset.plan import format_queue_scope
from mqctl.reset.preflight import legacy_apply_times
from mqctl.reset.types import Path_
from mqctl.timeparse import format_ms

if TYPE_CHECKING:
    from mqctl.reset.apply import QueueResult
    from mqctl.reset.types import Plan


def done_summary(plan: Plan, results: list[QueueResult]) -> str:
    """After execution, in the past tense: what the brokers accepted, and what they did not.
    A legacy push the brokers accepted is not a reset yet: the clients apply it about 10 s
    after the push (MQClientInstance.resetOffset), so it is counted as pushed until verify
    reads it taken; a queue verify could not decide is counted apart (unknown)."""

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

    cmd = mqctl_command(plan, "offsets", "rollback", rb, "--execute")
    mine = {q.mq.broker_name for q in plan.queues}
    legacy = sorted(b.name for b in plan.brokers.values() if b.name in mine
                    and b.path in (Path_.LEGACY_PUSH, Path_.LEGACY_UPDATE))
    if plan.consumers.online and legacy:
        return cmd, (f"stop the consumers of {plan.group} first (broker(s) "
                     f"{', '.join(legacy)} take explicit offsets only from an offline group: "
                     "live consumers overwrite them), then")
    return cmd, None


@dataclass(frozen=True, slots=True)
class Interruption:
    """What an interrupt while changing did: the notes and data that say it (the per-queue
    table is the result table), and the error to exit with (130)."""

    notes: tuple[str, ...]
    data: dict[str, Any]
    error: MqctlError


def interruption(plan: Plan, results: list[QueueResult], rb: str, phase: str,
                 signame: str) -> Interruption:
    """An interrupt while changing: what changed, the command that finishes the change (a
    remaining-plan file beside the rollback file, written now) and the one that undoes it."""

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
    return Interruption(tuple(notes), data,
                        MqctlError(msg, hint=hint, exit_code=ExitCode.INTERRUPTED))


def mqctl_command(plan: Plan, *args: str) -> str:
    """A copy-pastable mqctl command against the plan's name server."""

    return shlex.join(["mqctl", "-n", plan.namesrv, *args])


def finish_command(plan: Plan, results: list[QueueResult], rb: str
                   ) -> tuple[str | None, str | None]:
    """(the command that sends what an interrupted apply did not, the remaining-plan file it
    reads). A rollback: the same rollback again (queues already restored are skipped). A
    reset: the queues not sent or unknown as a plan file next to the rollback file, with their
    planned targets (``--from-file``: exact for every target kind, also --shift-by and relative
    times); on a legacy broker resetting by time through the clients, the same time target,
    absolute."""


    left = [r.plan for r in results if r.status in (Status.NOT_SENT, Status.UNKNOWN,
                                                    Status.FAILED)]
    if not left:
        return None, None
    if plan.target.kind == "rollback":
        return mqctl_command(plan, "offsets", "rollback", plan.target.text, "--execute"), None
    base = ["offsets", "reset", "-g", plan.group, "-t", plan.topic]
    pushed = any(plan.brokers[q.mq.broker_name].path == Path_.LEGACY_PUSH for q in left)
    if pushed and plan.target.by_time:
        flag = {"time": ["--to-time", format_ms(plan.target.value, zero_unknown=False)],
                "earliest": ["--to-earliest"], "latest": ["--to-latest"]}[plan.target.kind]
        return mqctl_command(plan, *base, *flag, "--execute"), None
    rbp = Path(rb)
    try:  # (a device or FIFO at the name is refused too: the run's result is still shown)
        rest = free_path(rbp.with_name(f"{rbp.stem}.remaining.csv"), "remaining plan")
        export_plan(replace(plan, queues=left), str(rest))
    except UsageError as exc:  # e.g. the disk filled up: say so, keep the undo command
        return f"(the remaining plan could not be written: {exc.message})", None
    return mqctl_command(plan, *base, "--from-file", str(rest), "--execute"), str(rest)


def rerun_hint(plan: Plan, bad: list[QueueResult], rb: str | None, scoped: bool) -> str:
    """What to do about queues that did not take, without resetting the others twice. Only
    the queues the evidence says did not take (not-taken, failed, not-sent) are named for a
    re-run; an ``unknown`` or ``unverified`` queue may have taken, and a re-run would replay
    it again: those get a check, never a re-run."""

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


"""Interrupts (SIGINT/SIGTERM/SIGHUP) and concurrent runs of a state-changing command, shared by
every command that changes a cluster (``offsets reset/rollback --execute``, ``locks release
--execute``).

One handler (:func:`_on_signal`) is installed once, at start-up, and never replaced while a
command runs: it records every signal into one interrupt state and, by the state's mode,
raises (a command that changes nothing), or only records and wakes the change
(:func:`deferred`: a state-changing command, from its plan to its last file). :class:`Stop`
reads that record: no new request is sent, the ones in flight are waited for up to
:data:`INTERRUPT_GRACE_S` (a second interrupt ends the wait at once); :func:`guarded` runs a
command's work under it. A signal can therefore never fall between two handlers (the lost
SIGINT of a hand-over from a start-up handler to an event loop's), nor be dropped with an
event loop that stopped before it read it. Nothing here prints: the CLI says what changed.

Only the standard library is imported, and ``asyncio`` only inside functions (``mqctl --help``
imports this module through the CLI and must stay light).

:func:`change_lock`: one state-changing run per group (and name servers) on this machine at a
time; a second one is refused (exit 6) naming the first one's pid and start time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

    from mqctl.fsutil import LockHolder

T = TypeVar("T")

# after an interrupt (SIGINT/SIGTERM) during apply: how long the requests in flight are waited
# for before they are reported unknown (a second interrupt stops the wait at once)
INTERRUPT_GRACE_S = 5.0
# the signals a state-changing command stops cleanly on: SIGHUP is an SSH session or terminal
# that went away (the result then goes to a file beside the rollback file as well)
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


# ------------------------------------------------------------------ the one handler

class HangUp(KeyboardInterrupt):
    """SIGHUP (the terminal or SSH session went away): an interrupt, exit 129 (128 + 1)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM: an interrupt. A subclass, because CPython ends a process by SIGINT when a
    plain KeyboardInterrupt left an ``eval`` of a string on its way (pythonrun.c
    ``run_eval_code_obj``), even one that was caught later."""


class _Signals:
    """The one interrupt state of the process, which :func:`_on_signal` (the one handler of
    SIGINT, SIGTERM and SIGHUP, installed once) records every signal into. What the handler
    does besides recording depends on ``mode``, a flag it reads (switching it installs
    nothing, so there is no moment without the handler):

    * ``record`` (start-up, before the command tree is built): only recorded; the CLI boundary
      ends the command with ``mqctl: interrupted`` once it is ready (:func:`early_signal`);
    * ``raise`` (a command that changes nothing): it raises ``KeyboardInterrupt`` (SIGTERM
      :class:`Terminated`, SIGHUP :class:`HangUp`) where the command is, as Ctrl-C does;
    * ``defer`` (a state-changing command, :func:`deferred`): only recorded, and the running
      change is woken (:attr:`waker`: ``Stop.fire`` through its event loop); the change polls
      the record (``Stop.stopped``) at every step, and what is still unreported when the
      command ends is said then (exit 130), so that no signal is lost."""

    def __init__(self) -> None:
        self.mode = "record"
        self.received: list[int] = []
        self.waker: Callable[[str], None] | None = None


_STATE = _Signals()


def _name(signum: int) -> str:
    import signal

    try:
        return signal.Signals(signum).name
    except ValueError:  # pragma: no cover
        return f"signal {signum}"


def _on_signal(signum: int, frame: object) -> None:
    import signal

    _STATE.received.append(signum)
    if _STATE.mode == "raise":
        if signum == signal.SIGHUP:
            raise HangUp
        if signum == signal.SIGTERM:
            raise Terminated
        raise KeyboardInterrupt
    waker = _STATE.waker
    if _STATE.mode == "defer" and waker is not None:
        waker(_name(signum))


def install() -> None:
    """Install the one handler for SIGINT, SIGTERM and SIGHUP (idempotent; nothing outside
    the main thread). Nothing replaces it while a command runs: the phases of a command
    switch :class:`_Signals`' mode instead."""
    import signal

    for sig in (getattr(signal, name) for name in STOP_SIGNALS):
        try:
            if signal.getsignal(sig) is not _on_signal:
                signal.signal(sig, _on_signal)
        except (ValueError, OSError):  # pragma: no cover - not the main thread
            pass


def hold_signals() -> None:
    """At process start, before the CLI's imports (a few hundred ms): the one handler is
    installed, recording only, so a signal that arrives then ends the command the way it
    would a moment later (``mqctl: interrupted``, 130 or 129) instead of a silent kill or a
    traceback from inside an import (:func:`early_signal`)."""
    _STATE.mode = "record"
    install()


def early_signal() -> int | None:
    """Once the CLI boundary is ready: from now on a signal interrupts (``raise`` mode); the
    first one recorded before (None if none) is returned for the boundary to report."""
    first = _STATE.received[0] if _STATE.received else None
    _STATE.mode = "raise"
    return first


def last_signal() -> int | None:
    """The last signal the one handler received (None if none)."""
    return _STATE.received[-1] if _STATE.received else None


def reset_state() -> None:
    """A fresh record (each in-process run of the CLI starts with none)."""
    _STATE.mode = "record"
    _STATE.received.clear()
    _STATE.waker = None


def boundary(name: str) -> None:
    """A phase boundary of a state-changing command (``planned``, ``applying``,
    ``verifying``, ``done``, ...). Tests deliver a signal exactly there: with
    ``MQCTL_TEST_SIGNAL_AT=NAME:SIGNAL`` in the environment (``verifying:SIGTERM``) the
    process sends itself SIGNAL when it reaches NAME (tests/reset/test_reset_signals.py)."""
    import os

    spec = os.environ.get("MQCTL_TEST_SIGNAL_AT")
    if not spec:
        return
    at, _, sig = spec.partition(":")
    if at == name:
        import signal

        os.kill(os.getpid(), getattr(signal, sig or "SIGINT"))


class Stop:
    """An interrupt while a state-changing command runs, read from the one interrupt state
    (:class:`_Signals`): ``stopped`` once a signal was recorded since the command began
    (:func:`deferred`), whether or not the event loop ran its wake-up; no new request is sent
    then, and a second one also ends the wait for the requests in flight."""

    def __init__(self) -> None:
        import asyncio

        self.requested = asyncio.Event()
        self.hurry = asyncio.Event()
        self.since = len(_STATE.received)
        self.reported = False
        self.late = "after the command's work was done"

    @property
    def signals(self) -> list[int]:
        return _STATE.received[self.since:]

    def fire(self, reason: str) -> None:
        if self.requested.is_set():
            self.hurry.set()
            return
        self.requested.set()
        if len(self.signals) > 1:
            self.hurry.set()

    @property
    def stopped(self) -> bool:
        return bool(self.signals)

    @property
    def reason(self) -> str:
        return _name(self.signals[0]) if self.signals else ""

    def before_change(self) -> None:
        """The last point before a change: a signal recorded while planning (whose wake-up
        the event loop may not have run yet) stops the command here, exit 130, nothing
        changed."""
        if self.stopped:
            from mqctl.errors import ExitCode, MqctlError

            self.reported = True
            raise MqctlError(f"interrupted by {self.reason} before any change: nothing "
                             "was changed", exit_code=ExitCode.INTERRUPTED)

    def sync(self) -> None:
        """The events as the record says (a signal recorded before the loop could wake)."""
        if self.stopped and not self.requested.is_set():
            self.requested.set()
        if len(self.signals) > 1:
            self.hurry.set()

    async def race(self, task: asyncio.Future[Any], grace_s: float) -> bool:
        """Await ``task``; on an interrupt wait at most ``grace_s`` more (less after a second
        one), then cancel it. True when the task was cancelled."""
        import asyncio

        self.sync()
        asked = asyncio.ensure_future(self.requested.wait())
        try:
            await asyncio.wait({task, asked}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            asked.cancel()
        if not task.done():
            self.sync()
            hurry = asyncio.ensure_future(self.hurry.wait())
            try:
                await asyncio.wait({task, hurry}, timeout=grace_s,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                hurry.cancel()
        if task.done():
            return False
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return True


@contextmanager
def deferred() -> Iterator[Stop]:
    """The whole of a state-changing command, from before its plan until its result and
    files are written: SIGINT, SIGTERM and SIGHUP are recorded (and wake the change) instead
    of raising, by the one handler (no handler is installed or removed, so none can be lost
    in between). The command reads them with the yielded :class:`Stop` and says what it did.
    One recorded and not reported when the block ends without an error (it came after the
    change's last check) is said then: exit 130, ``interrupted by SIGINT <stop.late>``.
    Outside the main thread, or where the handler could not be installed, a plain Stop."""
    from mqctl.errors import ExitCode, MqctlError

    install()
    before = _STATE.mode
    stop = Stop()
    _STATE.mode = "defer"
    try:
        yield stop
    except BaseException:
        _STATE.mode = before
        raise
    _STATE.mode = before  # (from here a signal raises: nothing recorded goes unsaid)
    if stop.stopped and not stop.reported:
        raise MqctlError(f"interrupted by {stop.reason} {stop.late}",
                         hint="nothing was left half done: the output above is the result",
                         exit_code=ExitCode.INTERRUPTED)


@contextmanager
def signals_to(callback: Callable[[str], None]) -> Iterator[None]:
    """While the block runs inside the event loop, a signal the one handler records in
    ``defer`` mode also calls ``callback(name)`` in the loop (thread-safe: it wakes the
    loop). Nothing is installed or removed: a signal that arrives as the block ends is in
    the record all the same (``Stop.stopped``)."""
    import asyncio

    loop = asyncio.get_running_loop()

    def wake(name: str) -> None:
        try:
            loop.call_soon_threadsafe(callback, name)
        except RuntimeError:  # the loop closed meanwhile: the record holds it
            pass

    previous = _STATE.waker
    _STATE.waker = wake
    try:
        yield
    finally:
        _STATE.waker = previous


@contextmanager
def serving(callback: Callable[[str], None]) -> Iterator[None]:
    """A long-running service (``mqctl exporter``): while the block runs, SIGINT, SIGTERM and
    SIGHUP raise nothing; the one handler records them and calls ``callback(name)`` (from the
    signal handler: it should only wake the service, which decides: stop, or reload on
    SIGHUP). The signals handled are dropped from the record when the block ends."""
    install()
    before, previous = _STATE.mode, _STATE.waker
    _STATE.mode, _STATE.waker = "defer", callback
    try:
        yield
    finally:
        _STATE.mode, _STATE.waker = before, previous
        _STATE.received.clear()


async def guarded(stop: Stop, work: Awaitable[T], planning: Callable[[], bool]) -> T:
    """Run ``work`` (a state-changing command, inside :func:`deferred`) with SIGINT,
    SIGTERM and SIGHUP waking ``stop``. An interrupt while ``planning()`` (nothing was changed
    yet) cancels the work at once and exits 130 saying so; from the apply on, the work stops
    itself (``stop.stopped``) and says what changed. Used by ``offsets reset/rollback
    --execute`` and ``locks release --execute``."""
    import asyncio

    with signals_to(stop.fire):
        stop.sync()
        task = asyncio.ensure_future(work)
        asked = asyncio.ensure_future(stop.requested.wait())
        try:
            await asyncio.wait({task, asked}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            asked.cancel()
        if not task.done() and planning():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            stop.before_change()
        return await task


# ------------------------------------------------------------------ one run per group

def state_root() -> Path:
    """mqctl's state directory: ``$XDG_STATE_HOME/mqctl``, else ``~/.local/state/mqctl`` (the
    rollback files are in ``rollback/`` under it)."""
    import os

    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "mqctl"


def change_lock_path(namesrv: Sequence[str], group: str) -> Path:
    """``<state>/changing/<group>-<key>.lock``: the key is a hash of the name server list
    (sorted, as given) and the group, so one group of two clusters are two locks, and a
    group name that is not a safe file name stays apart from its look-alikes."""
    import hashlib
    import re

    key = ";".join(sorted(a.strip() for a in namesrv if a.strip())) + "\0" + group
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9_%|-]", "_", group)[:80]
    return state_root() / "changing" / f"{safe}-{digest}.lock"


def change_lock(namesrv: Sequence[str], group: str, what: str
                ) -> AbstractContextManager[LockHolder | None]:
    """Held while a state-changing command runs on ``group`` (from before its plan reads the
    offsets until its result and files are written): a second ``offsets reset/rollback
    --execute`` or ``locks release --execute`` of the group from this machine is refused
    (:class:`~mqctl.errors.RefusedError`, exit 6) naming the first one's pid and start time,
    instead of reading the first one's half-done change as its "before" and both reporting
    the other's offsets as their own. An ``flock``: the kernel releases it when the process
    ends, however; a record left by a run that was killed is taken over, and yielded so that
    the command says so. Other machines do not see it (docs/reset.md "Concurrent changes")."""
    from mqctl.fsutil import owned_lock

    path = change_lock_path(namesrv, group)
    return owned_lock(path.parent, path.name,
                      f"another mqctl run is changing group {group} from this machine",
                      "wait for it to end, then plan again (two changes of one group at once "
                      "would each take the other's offsets for their own 'before' and target); "
                      f"its lock file is {path}, released when that process ends",
                      what=what, where=f"the change lock of group {group} in")


def taken_over(group: str, stale: LockHolder) -> str:
    """The note for a lock left by a run that ended without releasing it."""
    alive = stale.alive()
    state = ("no longer runs" if alive is False else
             "is another process's now" if alive else "cannot be checked from here")
    return (f"took over the change lock of group {group} left by {stale.describe()}: it ended "
            f"without releasing it (killed?; pid {stale.pid} {state}), so its change may be "
            f"incomplete: `mqctl offsets rollbacks -g {group}` lists its rollback file")

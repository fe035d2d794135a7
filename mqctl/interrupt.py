"""Interrupts (SIGINT/SIGTERM/SIGHUP) and concurrent runs of a state-changing command, shared by
every command that changes a cluster (``offsets reset/rollback --execute``, ``locks release
--execute``).

:class:`Stop` is the flag a signal handler sets: no new request is sent, the ones in flight are
waited for up to :data:`INTERRUPT_GRACE_S` (a second interrupt ends the wait at once).
:func:`signals_to` routes SIGINT/SIGTERM to it while a block runs in the event loop;
:func:`guarded` runs a command's work under it. Nothing here prints: the CLI says what changed.

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


# ------------------------------------------------------------------ start-up

_early: list[int] = []


def hold_signals() -> None:
    """At process start, before the CLI's imports (a few hundred ms): SIGINT, SIGTERM and
    SIGHUP are only recorded, so one that arrives then ends the command the way it would a
    moment later (``mqctl: interrupted``, 130 or 129) instead of a silent kill or a traceback
    from inside an import. :func:`early_signal` hands them to the CLI boundary."""
    import signal

    for sig in (getattr(signal, name) for name in STOP_SIGNALS):
        try:
            signal.signal(sig, _record)
        except (ValueError, OSError):  # pragma: no cover - not the main thread
            pass


def _record(signum: int, frame: object) -> None:
    _early.append(signum)


def early_signal() -> int | None:
    """The first signal :func:`hold_signals` recorded (None if none), once the boundary has
    its own handlers; SIGINT gets Python's own back."""
    import signal

    try:
        if signal.getsignal(signal.SIGINT) is _record:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):  # pragma: no cover
        pass
    return _early[0] if _early else None


class Stop:
    """An interrupt during apply, set from a signal handler: no new request is sent; a second
    one also ends the wait for the requests in flight."""

    def __init__(self) -> None:
        import asyncio

        self.requested = asyncio.Event()
        self.hurry = asyncio.Event()
        self.reason = ""

    def fire(self, reason: str) -> None:
        if self.requested.is_set():
            self.hurry.set()
            return
        self.reason = reason
        self.requested.set()

    @property
    def stopped(self) -> bool:
        return self.requested.is_set()

    async def race(self, task: asyncio.Future[Any], grace_s: float) -> bool:
        """Await ``task``; on an interrupt wait at most ``grace_s`` more (less after a second
        one), then cancel it. True when the task was cancelled."""
        import asyncio

        asked = asyncio.ensure_future(self.requested.wait())
        try:
            await asyncio.wait({task, asked}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            asked.cancel()
        if not task.done():
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
def signals_to(callback: Callable[[str], None]) -> Iterator[None]:
    """While the block runs inside the event loop, SIGINT, SIGTERM and SIGHUP call
    ``callback(name)``
    instead of interrupting: for a state-changing step that has to stop cleanly and say what it
    did (``offsets reset --execute``). Elsewhere (no loop, not the main thread) a no-op. The
    handlers in place before (asyncio.run's for SIGINT, the CLI boundary's for SIGTERM and
    SIGHUP) are put back after: ``remove_signal_handler`` alone would leave their default, a
    silent kill."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    installed: list[tuple[signal.Signals, Any]] = []
    for sig in (getattr(signal, name) for name in STOP_SIGNALS):
        try:
            before = signal.getsignal(sig)
            loop.add_signal_handler(sig, callback, sig.name)
            installed.append((sig, before))
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        yield
    finally:
        for sig, before in installed:
            loop.remove_signal_handler(sig)
            if before is not None:
                signal.signal(sig, before)


async def guarded(stop: Stop, work: Awaitable[T], planning: Callable[[], bool]) -> T:
    """Run ``work`` (a state-changing command) with SIGINT/SIGTERM/SIGHUP routed to
    ``stop.fire``.
    An interrupt while ``planning()`` (nothing was changed yet) cancels the work at once and
    exits 130 saying so; from the apply on, the work stops itself (``stop.stopped``) and says
    what changed. Used by ``offsets reset/rollback --execute`` and ``locks release
    --execute``."""
    import asyncio

    from mqctl.errors import ExitCode, MqctlError

    with signals_to(stop.fire):
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
            raise MqctlError(f"interrupted by {stop.reason} before any change: nothing "
                             "was changed", exit_code=ExitCode.INTERRUPTED)
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

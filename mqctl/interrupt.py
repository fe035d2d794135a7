"""Interrupts (SIGINT/SIGTERM) during a state-changing command, shared by every command that
changes a cluster (``offsets reset/rollback --execute``, ``locks release --execute``).

:class:`Stop` is the flag a signal handler sets: no new request is sent, the ones in flight are
waited for up to :data:`INTERRUPT_GRACE_S` (a second interrupt ends the wait at once).
:func:`signals_to` routes SIGINT/SIGTERM to it while a block runs in the event loop;
:func:`guarded` runs a command's work under it. Nothing here prints: the CLI says what changed.

Only the standard library is imported, and ``asyncio`` only inside functions (``mqctl --help``
imports this module through the CLI and must stay light).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

# after an interrupt (SIGINT/SIGTERM) during apply: how long the requests in flight are waited
# for before they are reported unknown (a second interrupt stops the wait at once)
INTERRUPT_GRACE_S = 5.0


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
    """While the block runs inside the event loop, SIGINT and SIGTERM call ``callback(name)``
    instead of interrupting: for a state-changing step that has to stop cleanly and say what it
    did (``offsets reset --execute``). Elsewhere (no loop, not the main thread) a no-op. The
    handlers in place before (asyncio.run's for SIGINT, the CLI boundary's for SIGTERM) are
    put back after: ``remove_signal_handler`` alone would leave SIGTERM's default, a silent
    kill."""
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    installed: list[tuple[signal.Signals, Any]] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
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
    """Run ``work`` (a state-changing command) with SIGINT/SIGTERM routed to ``stop.fire``.
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

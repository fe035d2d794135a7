"""What a run of mqctl reads from its surroundings, in one explicit object (as httpie's
``Environment``): the clock, the display zone, where warnings go and the streams.

A caller builds a :class:`Context` and hands it over: :class:`mqctl.api.Cluster` takes one
(``Cluster(namesrv, context=Context(zone=UTC, warn=log.warning))``), the CLI builds one from
``--tz``, ``-q`` and its streams. While a run uses it (:func:`use`, a ``with`` block), the
code below that has no context parameter of its own (a time formatted in the display zone
deep in a view's rows, ``mqctl.timeparse.now_ms``) reads it with :func:`current`. It is held
in a :class:`contextvars.ContextVar`, never in a module global: two runs in two threads or two
asyncio tasks each see their own, and a run's context ends with its block.

The simulated cluster keeps its own clock (``mqctl.sim``): a test or the demo hands mqctl that
clock through a context (``Context(clock=cluster.clock.now_ms)``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import tzinfo
from typing import IO, Any


def wall_clock_ms() -> int:
    """This machine's clock, epoch ms."""
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Context:
    """``clock``: epoch ms now (the wall clock, or a simulated cluster's); ``zone``: the zone
    human-readable times are shown in and times without a zone are read in (None: this
    machine's); ``warn``: where warnings go (None: dropped; the CLI writes them to stderr unless
    ``-q``); ``stdout``/``stderr``/``stdin``: the streams (None: ``sys.stdout`` ... at the
    time of use, so that a stream the CLI replaced is the one written)."""

    clock: Callable[[], int] = wall_clock_ms
    zone: tzinfo | None = None
    warn: Callable[[str], None] | None = None
    stdout: IO[str] | None = None
    stderr: IO[str] | None = None
    stdin: IO[str] | None = None

    def now_ms(self) -> int:
        return self.clock()

    def warning(self, message: str) -> None:
        if self.warn is not None:
            self.warn(message)

    @property
    def out(self) -> IO[str]:
        return self.stdout if self.stdout is not None else sys.stdout

    @property
    def err(self) -> IO[str]:
        return self.stderr if self.stderr is not None else sys.stderr

    @property
    def inp(self) -> IO[str]:
        return self.stdin if self.stdin is not None else sys.stdin

    def with_(self, **changes: Any) -> Context:
        """A copy with ``changes`` (``ctx.with_(zone=UTC)``)."""
        return replace(self, **changes)


DEFAULT = Context()
_CURRENT: ContextVar[Context] = ContextVar("mqctl.context", default=DEFAULT)


def current() -> Context:
    """The context of the run this code is part of (:data:`DEFAULT` outside any)."""
    return _CURRENT.get()


@contextmanager
def use(context: Context) -> Iterator[Context]:
    """``context`` for the run inside the block (and the tasks it starts); the one before is
    back after it."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


def enter(context: Context) -> None:
    """``context`` for the rest of the current thread's or task's run, without a block: for a
    caller that cannot wrap the run (a pytest fixture, the CLI's root callback, whose command
    runs after it returns). Prefer :func:`use`."""
    _CURRENT.set(context)


__all__ = ["DEFAULT", "Context", "current", "enter", "use", "wall_clock_ms"]

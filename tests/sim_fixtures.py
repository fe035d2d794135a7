"""Pytest fixtures for the simulated cluster (imported by tests/conftest.py).

``sim``: the bundled demo scenario on ephemeral ports with a manual clock; mqctl's clock
(``mqctl.timeparse.now_ms``) reads the simulated time while the fixture is active.
``sim_factory(scenario, **kw)``: any scenario (name, path or dict), same conventions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from mqctl import timeparse
from mqctl.context import wall_clock_ms
from mqctl.sim import SimThread
from mqctl.timeparse import set_clock

# one broker on the legacy reset path (useServerSideResetOffset=false), an online group with a
# stuck consumer and an offline group: the shapes the legacy-reset tests need
LEGACY_SCENARIO: dict[str, Any] = {
    "name": "legacy", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a", "config": {"useServerSideResetOffset": False}}],
    "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "1h"}],
    "groups": [
        {"name": "G_ON", "topics": ["T"], "initial_lag": 100,
         "consumers": [{"id": "10.9.0.1@1", "behaviour": "stuck"}]},
        {"name": "G_OFF", "topics": ["T"], "initial_lag": 100},
    ],
}


def start_sim(scenario: Any = "demo", **kw: Any) -> SimThread:
    kw.setdefault("clock", "manual")
    s = SimThread(scenario, **kw).__enter__()
    set_clock(s.cluster.clock.now_ms)
    return s


def _current_clock() -> Callable[[], int] | None:
    """The clock mqctl reads now (to put it back afterwards); None = the wall clock."""
    fn = timeparse.clock()
    return None if fn is wall_clock_ms else fn


@contextmanager
def running_sim(scenario: Any = "demo", **kw: Any) -> Iterator[SimThread]:
    """A started simulated cluster (:func:`start_sim`), stopped afterwards with mqctl's clock
    put back: for fixtures of any scope."""
    before = _current_clock()
    s = start_sim(scenario, **kw)
    try:
        yield s
    finally:
        set_clock(before)
        s.__exit__(None, None, None)


@pytest.fixture
def sim() -> Iterator[SimThread]:
    with running_sim("demo") as s:
        yield s


@pytest.fixture
def sim_factory() -> Iterator[Callable[..., SimThread]]:
    before = _current_clock()
    started: list[SimThread] = []

    def make(scenario: Any = "demo", **kw: Any) -> SimThread:
        s = start_sim(scenario, **kw)
        started.append(s)
        return s

    try:
        yield make
    finally:
        set_clock(before)
        for s in started:
            s.__exit__(None, None, None)

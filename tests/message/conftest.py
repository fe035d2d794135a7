"""The simulated cluster of tests/message/helpers.py, advanced one minute (module scope: its
readings are shared by the tests of a module)."""

from __future__ import annotations

import pytest

from message.helpers import TOPIC, TRACK_SCENARIO


@pytest.fixture(scope="module")
def world():
    from sim_fixtures import running_sim

    with running_sim(TRACK_SCENARIO) as s:
        start_max = s.call(lambda c: c.brokers["broker-a"].max_offset(TOPIC, 0))
        s.advance(60)
        yield s, start_max + 5  # a message stored 5 s after the start

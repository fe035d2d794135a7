"""Shared by the diagnose tests: run `mqctl diagnose` in-process against a simulated cluster,
with ``--sample`` waiting on the simulated clock instead of the wall clock."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from conftest import run_cli
from sim_fixtures import start_sim

from mqctl.diagnose import capture
from mqctl.timeparse import set_clock


@contextmanager
def started(scenario: Any, at: float) -> Iterator[Any]:
    """A simulated cluster of ``scenario`` (manual clock), ``at`` simulated seconds in."""
    s = start_sim(scenario)
    try:
        s.advance(at)
        yield s
    finally:
        set_clock(None)
        s.__exit__(None, None, None)


@contextmanager
def sim_sleep(sim: Any) -> Iterator[None]:
    """``--sample SECONDS`` advances the simulated clock by SECONDS between the two reads."""
    real = capture.sleep

    async def advance(seconds: float) -> None:
        sim.advance(seconds)

    capture.sleep = advance  # type: ignore[assignment]
    try:
        yield
    finally:
        capture.sleep = real  # type: ignore[assignment]


def diagnose(sim: Any, group: str, *args: str) -> tuple[int, dict[str, Any], str]:
    """Exit code, the -o json document and stderr of `mqctl diagnose GROUP ARGS`."""
    with sim_sleep(sim):
        r = run_cli(["-n", sim.namesrv_addr, "diagnose", group, *args, "-o", "json"])
    assert "Traceback" not in r.stderr, r.stderr
    return r.exit_code, json.loads(r.stdout), r.stderr


def codes(d: dict[str, Any]) -> list[str]:
    return [f["code"] for f in d["findings"]]


def finding(d: dict[str, Any], code: str) -> dict[str, Any]:
    found = [f for f in d["findings"] if f["code"] == code]
    assert found, f"no {code} finding: {codes(d)}"
    return found[0]


def check(d: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in d["checks"] if c["check"] == name)


def queues(f: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {(q["topic"], q["broker"], q["queue_id"]) for q in f["queues"]}

"""The example outputs of docs/diagnose*.md are what `mqctl diagnose` prints.

An example is a ```text block right after a comment ``<!-- diagnose-example: SCENARIO at Ns
-->`` (optionally ``, Ms between commands``): a simulated cluster of that bundled scenario
with a fixed start and a manual clock, N simulated seconds in, runs each ``$ mqctl ...`` line
of the block (``--sample`` waits on the simulated clock) and its stdout must be the lines
that follow it, exactly. Regenerate after a change: ``python tests/diagnose/test_docs.py``.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("diagnose*.md"))  # diagnose.md and its findings pages
START_MS = 1_717_200_000_000  # 2024-06-01T00:00:00Z: times in the output do not move
EXAMPLE = re.compile(r"<!-- diagnose-example: (?P<scenario>[\w-]+) at (?P<at>\d+)s"
                     r"(?:, (?P<gap>\d+)s between commands)? -->\n```text\n(?P<body>.*?)```",
                     re.S)


def examples() -> list[tuple[str, int, int, str]]:
    return [(m["scenario"], int(m["at"]), int(m["gap"] or 0), m["body"])
            for doc in DOCS for m in EXAMPLE.finditer(doc.read_text(encoding="utf-8"))]


def commands(body: str) -> list[tuple[str, str]]:
    """[(command line, the output shown after it)]"""
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ mqctl "):
            out.append((line, []))
        elif out:
            out[-1][1].append(line)
    return [(cmd, "\n".join(lines).rstrip("\n")) for cmd, lines in out]


def run(scenario: str, at: int, gap: int, body: str) -> str:
    """The block as the commands print it now."""
    from conftest import run_cli
    from sim_fixtures import start_sim

    from diagnose.helpers import sim_sleep
    from mqctl.sim.scenario import load_scenario
    from mqctl.timeparse import set_clock

    sim = start_sim(load_scenario(scenario, start_ms=START_MS))
    parts = []
    try:
        sim.advance(at)
        for i, (cmd, _) in enumerate(commands(body)):
            if i and gap:
                sim.advance(gap)
            args = shlex.split(re.sub(r"\s+#.*$", "", cmd[2:]))[1:]
            with sim_sleep(sim):
                r = run_cli(["-n", sim.namesrv_addr, "--tz", "UTC", *args])
            assert "Traceback" not in r.stderr, r.stderr
            parts.append(cmd + ("\n" + r.stdout.rstrip("\n") if r.stdout.strip() else ""))
    finally:
        set_clock(None)
        sim.__exit__(None, None, None)
    return "\n\n".join(parts) + "\n"


def test_the_page_has_an_example_of_every_finding():
    from mqctl.diagnose import CODES

    text = "".join(body for _, _, _, body in examples())
    missing = [c for c in CODES if f"] {c}:" not in text]
    assert missing == [], f"no example output shows {missing}"


@pytest.mark.parametrize("example", examples(), ids=lambda e: commands(e[3])[-1][0][8:60])
def test_example_output(example):
    scenario, at, gap, body = example
    assert ports(run(scenario, at, gap, body)) == ports(body)


def ports(text: str) -> str:
    """Broker addresses without their port (the simulated cluster's ports are ephemeral)."""
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text)


if __name__ == "__main__":  # rewrite the page's example outputs
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

    def redo(m: re.Match[str]) -> str:
        body = run(m["scenario"], int(m["at"]), int(m["gap"] or 0), m["body"])
        return m.group(0).replace(m["body"], body)

    for doc in DOCS:
        doc.write_text(EXAMPLE.sub(redo, doc.read_text(encoding="utf-8")), encoding="utf-8")

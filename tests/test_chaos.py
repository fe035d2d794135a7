"""The chaos run's short form (bench/chaos.py has the long one): commands against the
simulated cluster while faults fire at random, then the invariants."""

from __future__ import annotations

import sys

from conftest import ROOT


def test_chaos_short_run():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from chaos import run_chaos
    finally:
        sys.path.pop(0)
    report = run_chaos(duration=40, seed=11)
    assert report.violations == [], report.violations
    assert report.commands >= 20 and report.resets >= 4
    assert sum(v for k, v in report.faults.items() if k in ("down", "drop", "latency", "error",
                                                           "crash")) >= 15
    assert report.snapshot_files >= 3 and report.queues_checked > 0

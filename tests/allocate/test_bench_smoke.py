"""The benchmark script still runs and its two methods still agree (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "allocate_consistent_hash.py"


def test_bench_runs_small():
    r = subprocess.run([sys.executable, str(BENCH), "--queues", "96", "--consumers", "12",
                        "--repeat", "1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "results agree: True" in r.stdout
    assert "ran in full" in r.stdout
    r2 = subprocess.run([sys.executable, str(BENCH), "--queues", "96", "--consumers", "12",
                         "--repeat", "1", "--naive-consumers", "3"], capture_output=True,
                        text=True, timeout=120)
    assert "EXTRAPOLATED from 3 of 12 consumers" in r2.stdout

"""bench/lag_history_cut.py refuses a history too short for a look-back and new captures with
exit 2 and a one-line reason, before it starts a JVM (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "lag_history_cut.py"


def test_a_history_shorter_than_the_look_back_is_refused():
    r = subprocess.run([sys.executable, str(BENCH), "--captures", "21", "--window", "10",
                        "--new", "10"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "--captures must exceed --window + 1 + --new" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""

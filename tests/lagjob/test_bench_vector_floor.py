"""bench/lag_vector_floor.py needs pyarrow and pandas, which mqctl does not install: without
them it says what to install and exits 2, before starting a JVM (no timing asserted)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "lag_vector_floor.py"


def test_without_arrow_it_says_what_to_install_and_exits_2():
    if all(importlib.util.find_spec(m) for m in ("numpy", "pandas", "pyarrow")):
        pytest.skip("pyarrow, pandas and NumPy are installed here: the bench would run")
    r = subprocess.run([sys.executable, str(BENCH), "--rows", "210", "--queues", "42"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "is not installed (mqctl does not need it)" in r.stderr
    assert "hint: pip install pyarrow pandas" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""

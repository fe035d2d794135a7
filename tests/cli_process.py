"""``mqctl`` in its own process against a simulated cluster: a real signal, a real exit code.

Shared by the interrupt tests (offsets reset/rollback, locks release, the CLI boundary).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from conftest import ROOT


def spawn(sim: Any, args: list[str], cwd: Any, *, timeout: str | None = None
          ) -> subprocess.Popen:
    """Start ``mqctl [--timeout T] -n <sim> ARGS`` with stdout/stderr captured."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="250")
    pre = ["--timeout", timeout] if timeout is not None else []
    return subprocess.Popen([sys.executable, "-m", "mqctl", *pre, "-n", sim.namesrv_addr,
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=cwd)


def wait_for(proc: subprocess.Popen, cond: Callable[[], bool], what: str,
             limit: float = 40.0) -> None:
    """Poll ``cond`` until it holds; fail if mqctl ends first or the limit passes."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if cond():
            return
        if proc.poll() is not None:
            raise AssertionError(f"mqctl ended before {what}: {proc.communicate()}")
        time.sleep(0.02)
    proc.kill()
    proc.communicate()
    raise AssertionError(f"timed out waiting for {what}")


def finish(proc: subprocess.Popen, limit: float = 30.0) -> tuple[int, str, str]:
    """Wait for mqctl to exit: (exit code, stdout, stderr); kill it after ``limit``."""
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err

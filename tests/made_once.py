"""A result that the pytest-xdist workers of one test run make once and share."""

from __future__ import annotations

import fcntl
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def made_once(shared: Path, make: Callable[[Path], T]) -> T:
    """``make(shared / "run")``'s result, made by the first of the run's xdist workers to ask
    (the others wait on ``shared``'s lock, then unpickle what it left). A failed ``make``
    leaves no result, and the next worker tries again."""
    shared.mkdir(exist_ok=True)
    done = shared / "result.pickle"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # (released when the file closes or the worker dies)
        if done.exists():
            return pickle.loads(done.read_bytes())
        run = shared / "run"
        shutil.rmtree(run, ignore_errors=True)  # a failed try's leftovers
        result = make(run)
        part = shared / "result.pickle.part"
        part.write_bytes(pickle.dumps(result))
        part.replace(done)
        return result

"""Which engine computes the lag report's per-queue work: ``MQCTL_LAG_ENGINE`` (``transforms``,
the default, or ``kernel``: :mod:`mqctl.lagjob.flow`). Light on purpose: the default engine
never imports pyarrow or numpy, which only the kernel needs."""

from __future__ import annotations

import os

ENGINE_ENV = "MQCTL_LAG_ENGINE"
ENGINES = ("transforms", "kernel")


def engine() -> str:
    """The lag report's engine; anything but a known name is the default."""
    e = os.environ.get(ENGINE_ENV, "").strip().lower()
    return e if e in ENGINES else "kernel"


def use_kernel(bounded: bool) -> bool:
    """The kernel computes a full run; a bounded re-run stays on the transforms (the kernel
    gave the same rows there, but 2-4x slower on test-sized re-runs: the look-back recomputed
    through the Arrow hand-over each run)."""
    return engine() == "kernel" and not bounded

"""Atomic file writes: a reader (or a killed run) never sees half a file."""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int | None = None,
                  encoding: str = "utf-8") -> Iterator[IO[str]]:
    """Write to a hidden temporary file in the same directory, fsync, then rename over
    ``path``. On any exception the temporary file is removed and ``path`` is untouched.

    ``mode`` defaults to what ``open()`` would create (0666 minus the umask), not mkstemp's
    0600: node_exporter's textfile collector and report readers usually run as another user."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, default_mode() if mode is None else mode)
        os.replace(tmp, target)
        _fsync_dir(target.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@functools.cache
def default_mode() -> int:
    """0666 minus the process umask (read without changing it where Linux allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int | None = None) -> None:
    with atomic_writer(path, mode=mode) as fh:
        fh.write(text)


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

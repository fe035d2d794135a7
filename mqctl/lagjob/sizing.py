"""How big a lag report run is before its JVM starts: the input's uncompressed bytes, what the
state holds parsed already, and whether the run will likely be a bounded re-run
(:func:`bound_possible`), which sizes the driver's compilers by the files it parses."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from mqctl.lagjob import writers as W
from mqctl.lagjob.inputs import local_path
from mqctl.lagoptions import Options


def input_bytes(listing: Any, skip: Callable[[str, int, int], bool] | None = None) -> int:
    """The input's size, uncompressed, for sizing the session (without the files ``skip``
    names: those the state holds parsed)."""
    return sum(uncompressed_size(f.path, f.size) for f in listing.files
               if f.ignored is None and f.unreadable is None
               and not (skip is not None and skip(f.path, f.size, f.mtime_ms)))


def local_manifest(state_dir: str | None) -> Any:
    """The manifest of a local state, read without Spark (None: no local state, none yet, or
    one this version does not read)."""
    if state_dir is None or not W.is_local(state_dir):
        return None
    from mqctl.lagjob.ingest import MANIFEST, Manifest

    try:
        with open(os.path.join(local_path(state_dir), MANIFEST), encoding="utf-8") as fh:
            return Manifest.parse(fh.read())
    except (OSError, UnicodeDecodeError):
        return None


def held(man: Any) -> Callable[[str, int, int], bool] | None:
    """Whether a local input file is held parsed by the state (the manifest lists it, with its
    size and modification time, without bad lines): the run does not read it again, so the
    listing does not check its gzip data (docs/lag-performance.md, "Checking input files").
    None without a manifest (every file is parsed)."""
    if man is None:
        return None
    held = {p: (m.get("size"), m.get("mtime_ms")) for p, m in man.files.items()
            if not m.get("bad")}
    return lambda path, size, mtime_ms: held.get(path) == (size, mtime_ms)


def bound_possible(man: Any, fp: str, out: str, *, full: bool, only_snapshots: bool,
                   whole_history: bool, lag_written: bool) -> tuple[bool, bool]:
    """(``write_all``, ``try_bound``) of a run with the state's manifest ``man``: the earlier
    dates of lag/group_status are kept only when a run of the same options (fingerprint
    ``fp``) into this ``out`` wrote them and nothing but snapshots feeds them; a bounded re-run
    is tried when, besides, the previous run finished (no pending dates), left its derived
    state, and this one covers the whole history. One definition for the run
    (:func:`reading.open_state`) and for sizing its JVM before it starts (:func:`work_bytes`)."""
    write_all = (full or man.fingerprint != fp or man.out != out or not only_snapshots
                 or not lag_written)
    return write_all, (not write_all and bool(man.derived) and not man.pending
                       and whole_history)


def work_bytes(listing: Any, size: int, man: Any, held: Callable[[str, int, int], bool] | None,
               opts: Options, out_dir: str, say: Callable[[str], None]) -> int:
    """The input bytes that size the driver JVM's compilers (:func:`session.driver_java_options`):
    the whole input (``size``), or, for a run that will likely be a bounded re-run, only the
    files it parses (those the state does not hold). A cron re-run of a 1M-row history with
    10 new captures parses 53 MB of 708 MB; sized by those it took x0.78-0.82 of the time in
    fresh processes (docs/lag-performance.md, "Fourteenth pass"). The guess reads only the
    manifest; a run that then turns out not bounded computes every capture, slower, with the
    same results. The session's memory and Spark's settings stay sized by ``size``."""
    if man is None or held is None or not W.is_local(out_dir):
        return size
    from mqctl.lagjob.readers import Kind

    by_kind = listing.by_kind()
    _, likely = bound_possible(
        man, opts.fingerprint(), out_dir, full=False,
        only_snapshots=set(by_kind) <= {Kind.SNAPSHOT} and not listing.unknown(),
        whole_history=opts.since_ms is None and opts.until_ms is None,
        lag_written=os.path.isdir(os.path.join(local_path(out_dir), "lag")))
    if not likely:
        return size
    new = input_bytes(listing, skip=held)
    from mqctl.lagjob.session import driver_java_options

    if driver_java_options(new) != driver_java_options(size):
        say(f"lag report: a likely bounded re-run: the JVM is sized for the {new / 1e6:.0f} MB "
            f"it parses, not the whole {size / 1e6:.0f} MB")
    return new


def uncompressed_size(path: str, size: int) -> int:
    """A file's size as the report reads it. A local gzip file: its trailer's ISIZE (RFC 1952
    section 2.3.1: the uncompressed length of the last member, mod 2^32), at least five times
    its size (a file of several members, or over 4 GiB). A snapshot capture compresses about
    100-fold (docs/exports.md), so counting gzip files at their size on disk would size a
    10M-row run like a small one. Elsewhere, or unreadable: five times its size."""
    if not path.endswith(".gz"):
        return size
    guess = 5 * size
    if not W.is_local(path) or size < 18:  # (a gzip member's header and trailer take 18 bytes)
        return guess
    try:
        with open(local_path(path), "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            isize = int.from_bytes(fh.read(4), "little")
    except OSError:
        return guess
    return max(isize, guess)

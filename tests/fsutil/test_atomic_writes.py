"""Atomic writes: whole files, nothing left behind on failure, normal permissions."""

from __future__ import annotations

import os

import pytest

from mqctl.fsutil import atomic_write_text, atomic_writer, default_mode


def test_written_whole_with_the_permissions_open_would_give(tmp_path):
    mask = os.umask(0o027)
    try:
        default_mode.cache_clear()
        atomic_write_text(tmp_path / "sub" / "a.prom", "x 1\n")
        # mkstemp alone would leave 0600: unreadable by node_exporter's textfile collector
        assert oct((tmp_path / "sub" / "a.prom").stat().st_mode & 0o777) == "0o640"
        atomic_write_text(tmp_path / "secret.json", "{}", mode=0o600)
        assert oct((tmp_path / "secret.json").stat().st_mode & 0o777) == "0o600"
    finally:
        os.umask(mask)
        default_mode.cache_clear()
    assert (tmp_path / "sub" / "a.prom").read_text() == "x 1\n"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write("half")
        raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]

"""Issue 15 items 3 and 6 (lag report): output locations are checked before Spark starts, and
values outside a plausible range are quarantined with the field named.

Tests run as root, which ignores directory permissions: a read-only / no-permission location is
simulated by injecting OSError(EROFS/EACCES) where mqctl creates its probe file
(``tempfile.mkstemp`` in mqctl.fsutil), and a full disk by a ``statvfs`` result with no free
blocks (ENOSPC); a regular file in the path is real."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import run_cli

from mqctl import fsutil

from .builders import T0, snap_row, write_snapshot


def tiny(root: Path) -> Path:
    snap = root / "snap"
    write_snapshot(snap, "c1", T0, [snap_row(T0, "G", "T", 0, 1000, 990, owner="a@1")])
    return snap


@pytest.fixture
def no_spark(monkeypatch):
    """Spark must not start: the output check comes first."""
    import mqctl.lagjob.session as S

    def boom(*a, **k):
        raise AssertionError("Spark was started before the output location was checked")
    monkeypatch.setattr(S, "spark_session", boom)


def _cli(tmp_path, *extra):
    return run_cli(["lag", "report", str(tiny(tmp_path)), *extra])


def test_out_is_a_regular_file(tmp_path, no_spark):
    (tmp_path / "f").write_text("x")
    r = _cli(tmp_path, "--out", str(tmp_path / "f"))
    assert r.exit_code == 2, r.stderr
    assert "cannot write report directory" in r.stderr and "regular file" in r.stderr
    assert "hint:" in r.stderr and "Traceback" not in r.stderr


def test_out_under_a_regular_file(tmp_path, no_spark):
    (tmp_path / "f").write_text("x")
    r = _cli(tmp_path, "--out", str(tmp_path / "f" / "report"))
    assert r.exit_code == 2, r.stderr
    assert "Not a directory" in r.stderr and "hint:" in r.stderr
    assert (tmp_path / "f").read_text() == "x"


@pytest.mark.parametrize("code,word", [(errno.EROFS, "read-only"),
                                       (errno.EACCES, "permissions")])
def test_out_read_only_or_not_permitted(tmp_path, no_spark, monkeypatch, code, word):
    def refuse(*a, **k):
        raise OSError(code, os.strerror(code), k.get("dir"))
    monkeypatch.setattr(fsutil.tempfile, "mkstemp", refuse)
    r = _cli(tmp_path, "--out", str(tmp_path / "o"))
    assert r.exit_code == 2, r.stderr
    assert os.strerror(code) in r.stderr and word in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag", ["--out", "--prom-file"])
def test_full_disk(tmp_path, no_spark, monkeypatch, flag):
    monkeypatch.setattr(fsutil.os, "statvfs",
                        lambda p: SimpleNamespace(f_bavail=0, f_frsize=4096))
    args = (["--out", str(tmp_path / "o")] if flag == "--out" else
            ["--out", str(tmp_path / "o"), "--prom-file", str(tmp_path / "x.prom")])
    monkeypatch.setattr(fsutil, "MIN_FREE_BYTES", 1 << 20)
    r = _cli(tmp_path, *args)
    assert r.exit_code == 2, r.stderr
    assert os.strerror(errno.ENOSPC) in r.stderr and "free space" in r.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "x.prom").exists()


def test_prom_file_missing_parent_is_refused(tmp_path, no_spark):
    r = _cli(tmp_path, "--out", str(tmp_path / "o"), "--prom-file",
             str(tmp_path / "missing" / "dir" / "x.prom"))
    assert r.exit_code == 2, r.stderr
    assert "does not exist" in r.stderr and "typo" in r.stderr
    assert not (tmp_path / "missing").exists()


def test_prom_file_is_a_directory(tmp_path, no_spark):
    (tmp_path / "d").mkdir()
    r = _cli(tmp_path, "--out", str(tmp_path / "o"), "--prom-file", str(tmp_path / "d"))
    assert r.exit_code == 2 and "Is a directory" in r.stderr


def test_writable_locations_pass(tmp_path):
    assert fsutil.output_location_error(tmp_path / "a" / "b", "x", directory=True) is None
    assert fsutil.output_location_error(tmp_path / "x.prom", "x", directory=False) is None
    assert list(tmp_path.iterdir()) == []  # the probe left nothing behind

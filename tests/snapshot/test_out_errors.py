"""Snapshot part: `snapshot --out` on a full disk, a read-only directory or a
path that is (or is under) a regular file is a one-line error with a hint and exit 2, never
"internal error: this is a bug", and leaves nothing half written (no temporary file, no file)."""

from __future__ import annotations

import errno
import os

import pytest

import mqctl.fsutil as fsutil

ARGS = ["snapshot", "-g", "GID_PAY", "--compress", "none"]  # gzip: test_snapshot_retention


def snap(cli, sim, out, *extra):
    return cli(["-n", sim.namesrv_addr, *ARGS, "--out", str(out), *extra])


def one_error_line(r):
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert len(lines) == 1, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert any(ln.startswith("hint:") for ln in r.stderr.splitlines()), r.stderr
    return lines[0]


def leftovers(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.name != ".mqctl-snapshot.lock")


class FullDisk:
    """A file object that takes ``room`` bytes, then fails as a full disk does (ENOSPC):
    the bytes before really reach the temporary file, so a missing clean-up would show."""

    def __init__(self, fh, room):
        self._fh, self._room = fh, room

    def write(self, s):
        if len(s) > self._room:
            self._fh.write(s[: self._room])
            self._fh.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room -= len(s)
        return self._fh.write(s)

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


def test_full_disk_is_named_and_leaves_no_temporary_file(cli, sim, tmp_path, monkeypatch):
    # in-process: the snapshot's write through fsutil.atomic_writer hits ENOSPC after 100 bytes
    real = os.fdopen
    monkeypatch.setattr(fsutil.os, "fdopen", lambda *a, **k: FullDisk(real(*a, **k), 100))
    r = snap(cli, sim, tmp_path)
    assert r.exit_code == 2, r.stderr
    line = one_error_line(r)
    assert "no space left on device" in line.lower() and str(tmp_path) in line
    assert leftovers(tmp_path) == []  # the half-written temporary file was removed
    assert not [p for p in tmp_path.rglob("*") if p.is_dir()]  # nor the new date directory


def test_out_is_a_regular_file(cli, sim, tmp_path):
    f = tmp_path / "plain.txt"
    f.write_text("keep")
    for out in (f, f / "sub"):
        r = snap(cli, sim, out)
        assert r.exit_code == 2, r.stderr
        line = one_error_line(r)
        assert str(f) in line and ("not a directory" in line.lower()
                                   or "is a regular file" in line.lower()), line
    assert f.read_text() == "keep" and leftovers(tmp_path) == ["plain.txt"]


def test_read_only_directory(cli, sim, tmp_path, monkeypatch):
    """Root ignores directory permissions (chmod 0555 would not stop these tests), so the
    refusal the kernel gives a normal user on a read-only directory (EACCES from creating the
    lock or temporary file) and on a read-only mount (EROFS) is injected where mqctl creates
    files; what this covers is mqctl's handling of those errors, not the kernel's check."""
    if os.geteuid() != 0:  # a normal user: the real thing
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        r = snap(cli, sim, ro)
        assert r.exit_code == 2 and "permission denied" in one_error_line(r).lower()
        return
    real_open = open
    for err in (errno.EACCES, errno.EROFS):

        def deny(path, *a, _err=err, **k):
            if str(path).startswith(str(tmp_path)):
                raise OSError(_err, os.strerror(_err), str(path))
            return real_open(path, *a, **k)

        monkeypatch.setattr("builtins.open", deny)
        r = snap(cli, sim, tmp_path)
        monkeypatch.undo()
        assert r.exit_code == 2, r.stderr
        line = one_error_line(r)
        assert os.strerror(err).lower() in line.lower() and str(tmp_path) in line
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("err", [errno.EACCES, errno.EROFS, errno.ENOSPC])
def test_atomic_writer_errors_are_named(tmp_path, monkeypatch, err):
    def fail(*a, **k):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(fsutil.tempfile, "mkstemp", fail)
    target = tmp_path / "d" / "e" / "x.jsonl"
    with pytest.raises(OSError) as ei:  # still an OSError for the callers that catch it
        with fsutil.atomic_writer(target) as fh:
            fh.write("x")
    assert not (tmp_path / "d").exists()  # the directories it created are removed again
    named = fsutil.local_path_error(ei.value, target, "the file")
    assert named.exit_code == 2 and named.hint
    assert named.hint != "check the path and its file system"
    assert named.message == f"cannot write the file {target}: {os.strerror(err)}"

"""Replay every input the fuzzer ever found (fuzz/regressions/) and every seed input
(fuzz/corpus/) through the fuzz target's own dispatch (fuzz/targets.py): only the codec's
typed errors may escape the decoders, and the target swallows those, so anything that escapes
``one_input`` is a crash."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import ROOT

from mqctl.remoting.frame import RemotingCommand, decode, encode


def _targets():
    spec = importlib.util.spec_from_file_location("fuzz_targets", ROOT / "fuzz" / "targets.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


targets = _targets()
REGRESSIONS = sorted(p for p in (ROOT / "fuzz" / "regressions").glob("*")
                     if p.is_file() and p.name != "README.md")
SEEDS = sorted(p for p in (ROOT / "fuzz" / "corpus").glob("*") if p.is_file())


def test_every_regression_and_seed_input_replays_without_a_crash():
    assert len(SEEDS) > 100  # the corpus is there: this test replays something
    for path in [*REGRESSIONS, *SEEDS]:
        data = path.read_bytes()
        for payload in (data, data[:1] + data[2:]):  # as found, and one byte shorter
            try:
                targets.one_input(payload)
            except Exception as exc:  # a crash: not one of the codec's typed errors
                pytest.fail(f"{path.relative_to(ROOT)}: {type(exc).__name__}: {exc}")


def test_a_crash_escapes_the_target(monkeypatch):
    """The replay can fail: an error that is not a ProtocolError escapes ``one_input``."""
    def broken(data):
        raise ValueError("not a typed error")

    monkeypatch.setattr(targets, "decode", broken)
    with pytest.raises(ValueError):
        targets.one_input(b"\x00" + encode(RemotingCommand.request(30, {"topic": "T"})))


def test_seed_frame_decodes_to_what_was_encoded():
    cmd = decode(encode(RemotingCommand.request(30, {"topic": "T"})))
    assert cmd.code == 30 and cmd.ext_fields == {"topic": "T"}

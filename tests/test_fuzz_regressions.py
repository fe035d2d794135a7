"""Replay every input the fuzzer ever found (fuzz/regressions/): only typed errors may escape."""

from __future__ import annotations

import pytest
from conftest import ROOT

from mqctl.errors import ProtocolError

CASES = sorted((ROOT / "fuzz" / "regressions").glob("*"))


def _replay(data: bytes) -> None:
    from mqctl.remoting import fastjson
    from mqctl.remoting.frame import (
        decode,
        decode_json_header,
        decode_payload,
        decode_rocketmq_header,
    )
    from mqctl.remoting.protocol import FrameReader, parse_hex_capture
    from mqctl.wire import decode_input

    for fn in (decode, decode_payload, decode_json_header, decode_rocketmq_header,
               fastjson.loads, lambda d: FrameReader().feed(d),
               lambda d: parse_hex_capture(d.decode("latin-1")),
               lambda d: decode_input(d, "auto")):
        for payload in (data, data[1:]):
            try:
                fn(payload)
            except ProtocolError:
                pass


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_regression_input(path):
    if path.name == "README.md":
        return
    _replay(path.read_bytes())


def test_seed_inputs_still_decode():
    from mqctl.remoting.frame import RemotingCommand, encode

    _replay(b"\x00" + encode(RemotingCommand.request(30, {"topic": "T"})))

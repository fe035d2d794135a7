"""The fuzz target's dispatch: the first byte of an input selects what decodes the rest.

Importable without atheris: ``fuzz/fuzz_codec.py`` fuzzes it, ``tests/test_fuzz_regressions.py``
replays every regression and seed input through it. The invariant: the only exceptions that
escape the codec are its own typed errors (:class:`mqctl.errors.ProtocolError` and subclasses),
which :func:`one_input` swallows; anything else escapes it and is a crash.
"""

from __future__ import annotations

from mqctl.errors import ProtocolError
from mqctl.remoting import fastjson
from mqctl.remoting.frame import (
    decode,
    decode_json_header,
    decode_payload,
    decode_rocketmq_header,
)
from mqctl.remoting.message import decode_messages
from mqctl.remoting.protocol import FrameReader, parse_hex_capture
from mqctl.wire import Capture, capture_record, decode_input, to_record

TARGETS = 8


def one_input(data: bytes) -> None:
    if not data:
        return
    target, payload = data[0] % TARGETS, data[1:]
    try:
        if target == 0:
            decode(payload)
        elif target == 1:
            decode_payload(payload)
        elif target == 2:
            decode_json_header(payload)
        elif target == 3:
            decode_rocketmq_header(payload)
        elif target == 4:
            v = fastjson.loads(payload)
            if isinstance(v, (dict, list)):
                try:
                    fastjson.mq_map(v)
                except ProtocolError:
                    pass
                fastjson.dumps(v)
                fastjson.dumps_fastjson(v)
        elif target == 5:
            r = FrameReader()
            # feed in two uneven chunks: exercises reassembly
            cut = len(payload) // 3
            r.feed(payload[:cut])
            r.feed(payload[cut:])
        elif target == 6:
            parse_hex_capture(payload.decode("latin-1"))
        else:
            # captures (tcpdump text, pcap) and stored-message batches included; the records
            # are what `wire decode` prints
            decode_messages(payload)
            d = decode_input(payload, "auto")
            capture_record(d) if isinstance(d, Capture) else to_record(d)
    except ProtocolError:
        pass

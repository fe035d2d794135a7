"""Input files that are not text, or hold integers of thousands of digits, are named as what
they are (exit 2, one line, a hint), by the one reader every file-reading command uses
(``mqctl.fsutil.read_text_capped`` / ``decode_text``, ``load_yaml``, ``load_json``): never a
``UnicodeDecodeError`` as an internal error, "'utf-8' codec can't decode byte 0x8b" or
"use sys.set_int_max_str_digits()"."""

from __future__ import annotations

import gzip
import re

import pytest
from conftest import run_cli

UNREACHABLE = ["-n", "127.0.0.1:1"]
HUGE = "9" * 5000

# every command that reads a text file, with a valid document of its kind ({n}: a number)
READERS = {
    "config": (["--config", "{f}", "config", "show"], "current_profile: p\nprofiles:\n"
               "  p: {namesrv: '127.0.0.1:9876', timeout: {n}}\n", "config file"),
    "scenario": (["sim", "up", "--port", "0", "--scenario", "{f}"],
                 "brokers: [broker-a]\nclock: {speed: {n}}\n", "scenario"),
    "topology": (["allocate", "--topology", "{f}"],
                 "queues: ['b:{n}']\nconsumers: [c1]\n", "topology file"),
    "topology json": (["allocate", "--topology", "{f}"],
                      '{"queues": [{"topic": "T", "brokerName": "b", "queueId": {n}}], '
                      '"consumers": ["c1"]}', "topology file"),
    "queue config": (["allocate", "--strategy", "config", "--queues", "b:4", "--consumers",
                      "c1", "--queue-config", "{f}"], "c1: ['b:{n}']\n", "queue config"),
    "plan csv": ([*UNREACHABLE, "offsets", "reset", "G", "-t", "T", "--from-file", "{f}"],
                 "broker,queue_id,target\nb,0,{n}\n", "plan file"),
    "plan json": ([*UNREACHABLE, "offsets", "reset", "G", "-t", "T", "--from-file", "{f}"],
                  '{"queues": [{"broker": "b", "queue_id": 0, "target": {n}}]}', "plan file"),
    "rollback": ([*UNREACHABLE, "offsets", "rollback", "{f}"],
                 '{"schema": "mqctl.rollback/1", "group": "G", "topic": "T", "queues": '
                 '[{"broker": "b", "queue_id": 0, "offset": {n}}]}', "rollback file"),
}
EXT = {"topology json": "json", "plan csv": "csv", "plan json": "json", "rollback": "json"}

NOT_TEXT = {
    "gzip": (lambda t: gzip.compress(t.encode()), "is gzip-compressed, not UTF-8 text",
             "decompress"),
    "utf-16 bom": (lambda t: t.encode("utf-16"), "is UTF-16 text", "iconv"),
    "utf-16 no bom": (lambda t: t.encode("utf-16-le"), "looks like UTF-16 text", "iconv"),
    "utf-32": (lambda t: t.encode("utf-32"), "is UTF-32 text", "iconv"),
    "binary": (lambda t: b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), "is a binary file",
               "right file"),
    "latin-1": (lambda t: ("# caf\xe9\n" + t).encode("latin-1"), "is not UTF-8 text: byte "
                "0xe9 at line 1 column 6", "UTF-8"),
}


def one_error(r, *fragments: str) -> str:
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert len(errors) == 1, r.stderr
    assert re.search(r"^hint: \S", r.stderr, re.MULTILINE), r.stderr
    for bad in ("Traceback", "internal error", "codec can't decode", "set_int_max_str_digits"):
        assert bad not in r.stderr, r.stderr
    for f in fragments:
        assert f in errors[0], (f, errors[0])
    return errors[0]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", NOT_TEXT)
def test_a_file_that_is_not_text_is_named(tmp_path, reader, kind):
    args, doc, what = READERS[reader]
    encode, said, hint = NOT_TEXT[kind]
    f = tmp_path / f"in.{EXT.get(reader, 'yaml')}"
    f.write_bytes(encode(doc.replace("{n}", "1")))
    r = run_cli([a.replace("{f}", str(f)) for a in args])
    one_error(r, what, said)
    assert hint in r.stderr


@pytest.mark.parametrize("reader", READERS)
def test_an_integer_of_thousands_of_digits_is_named_with_its_place(tmp_path, reader):
    args, doc, what = READERS[reader]
    f = tmp_path / f"in.{EXT.get(reader, 'yaml')}"
    f.write_text(doc.replace("{n}", HUGE))
    r = run_cli([a.replace("{f}", str(f)) for a in args])
    line = one_error(r, what)
    assert any(w in line for w in ("5,000 digits", "must be a whole number", "is beyond")), line


def test_stdin_that_is_not_text_is_named():
    import io
    import sys

    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO("queues: []\n".encode("utf-16")))
    try:
        r = run_cli(["allocate", "--topology", "-"])
    finally:
        sys.stdin = old
    one_error(r, "topology file (stdin) is UTF-16 text")


def test_decode_text_and_the_bounded_loaders(tmp_path):
    from mqctl.errors import UsageError
    from mqctl.fsutil import decode_text, load_json, load_yaml

    assert decode_text(b"a\r\nb\n", "f") == "a\nb\n"
    assert decode_text(b"\xef\xbb\xbfx: 1\n", "f") == "x: 1\n"  # a UTF-8 BOM is dropped
    f = tmp_path / "c.yaml"
    f.write_bytes(b"\xef\xbb\xbf" + READERS["config"][1].replace("{n}", "5").encode())
    assert run_cli(["--config", str(f), "-o", "json", "config", "show"]).exit_code == 0
    assert load_json('{"n": 12345678901234567890}', "f") == {"n": 12345678901234567890}
    assert load_yaml("n: 12345678901234567890\n", "f", "h") == {"n": 12345678901234567890}
    with pytest.raises(UsageError, match="at line 2 column 4"):
        load_yaml("a: 1\nb: " + "1" * 41 + "\n", "f", "h")
    with pytest.raises(UsageError, match="41 digits at line 1 column 7"):
        load_json('{"n": ' + "1" * 41 + "}", "f")

"""docs/wire.md: its examples run and print what the page shows; its files are what it says."""

from __future__ import annotations

import re
import shlex
import shutil

import pytest
from conftest import ROOT, run_cli
from wire_capture_helpers import REAL

DOC = ROOT / "docs" / "wire.md"
EXAMPLES = ROOT / "docs" / "examples"


def console_examples():
    """(command, shown output lines) of each ``$ mqctl`` line in the ```console blocks."""
    out, block, cur = [], False, None
    for line in DOC.read_text().splitlines():
        if line.startswith("```"):
            block = line.strip() == "```console" if not block else False
            cur = None
            continue
        if not block:
            continue
        if line.startswith("$ mqctl"):
            cur = (line[2:], [])
            out.append(cur)
        elif cur is not None:
            cur[1].append(line)
    return out


CASES = console_examples()


def test_page_has_examples():
    assert len(CASES) >= 4


@pytest.mark.parametrize("cmd, shown", CASES, ids=[c[0] for c in CASES])
def test_example_prints_what_the_page_shows(tmp_path, monkeypatch, cmd, shown):
    shutil.copytree(EXAMPLES, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    r = run_cli(shlex.split(cmd)[1:])
    assert r.exit_code == 0, r.stderr
    actual = [ln.rstrip() for ln in r.stdout.splitlines()]
    pos = 0
    for want in (ln.rstrip() for ln in shown):
        if want == "...":
            continue
        assert want in actual[pos:], f"{cmd}: {want!r} not printed (in order)\n{r.stdout}"
        pos = actual.index(want, pos) + 1


def test_json_excerpt_of_the_heartbeat_is_what_mqctl_prints():
    text = DOC.read_text()
    excerpt = text.split("It is the broker's one-way NOTIFY_CONSUMER_IDS_CHANGED (40) to the "
                         "client:\n\n```\n", 1)[1].split("```", 1)[0]
    r = run_cli(["wire", "decode", str(EXAMPLES / "wire/5.3.3_heartbeat_consumer_-x.txt"),
                 "-o", "json"])
    frame = r.json["frames"][1]
    for line in excerpt.splitlines():
        m = re.fullmatch(r'\s+"(\w+)": (.+?),?', line)
        if m and m[1] != "notes":
            assert repr_json(frame[m[1]]) == m[2], line
    assert r.json["notes"] == ["#1 request HEART_BEAT opaque 11: no response in the capture"]
    assert '"notes": ["#1 request HEART_BEAT opaque 11: no response in the capture"]' in excerpt


def repr_json(v):
    import json

    return json.dumps(v)


@pytest.mark.parametrize("copy, real", [
    ("4.9.3_get_consume_stats_mqadmin_-X.txt",
     "4.9.3/pcap-text/get_consume_stats_208_from_mqadmin_-X.txt"),
    ("5.3.3_heartbeat_consumer_-x.txt", "5.3.3/pcap-text/heartbeat_consumer_-x.txt"),
    ("4.9.3_heartbeat_consumer.pcap", "4.9.3/pcap-text/heartbeat_consumer.pcap")])
def test_example_captures_are_the_real_ones(copy, real):
    assert (EXAMPLES / "wire" / copy).read_bytes() == (REAL / real).read_bytes()


def test_built_pull_capture_is_the_tests_encoding():
    from test_wire_messages import pull_capture_text

    assert (EXAMPLES / "wire/pull_message_built_-X.txt").read_text() == pull_capture_text()


def test_bad_capture_files_are_derived_from_the_corpus():
    """docs/examples/bad/* for the capture rows of docs/errors.md, and how each was made."""
    import struct

    bad = EXAMPLES / "bad"
    hb_pcap = (REAL / "4.9.3/pcap-text/heartbeat_consumer.pcap").read_bytes()
    assert (bad / "cut.pcap").read_bytes() == hb_pcap[:-10]
    assert (bad / "link-type.pcap").read_bytes() == (hb_pcap[:20] + struct.pack("<I", 105)
                                                     + hb_pcap[24:])
    hb_text = (REAL / "4.9.3/pcap-text/heartbeat_consumer_-X.txt").read_text().splitlines(True)
    assert (bad / "tcpdump-missing-line.txt").read_text() == "".join(hb_text[:5] + hb_text[6:])
    acks = (bad / "tcpdump-acks-only.txt").read_text().splitlines()
    assert len(acks) == 6 and acks[1].endswith("length 0")
    assert "".join(ln.split(":", 1)[1] for ln in acks[2:]).replace(" ", "")[:2] == "45"

"""The width policy at 80, 100 and 120 columns on a REAL pty.

mqctl runs in its own process with a pseudo-terminal as stdout (TIOCSWINSZ sets the size, as a
terminal emulator does), against the simulated demo cluster on a manual clock, so the table and
the JSON of one command describe the same state. Numbers and key columns (queue identity, LAG,
TIME LAG, STATE) appear whole in every row; a column left out is named in the footer and comes
back with -o wide; no line is wider than the terminal.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

import pytest
from conftest import ROOT

from mqctl.render import Column, Table, fit_table, shorten_middle

WIDTHS = [80, 100, 120]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
FOOTER = re.compile(r"columns not shown at (\d+) cols: (.*?)(?:; shortened|; -o wide)")


def run_pty(sim, args: list[str], cols: int) -> str:
    """stdout of ``mqctl -n SIM ARGS`` on a pty of ``cols`` columns, ANSI codes removed."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "NO_COLOR", "MQCTL_OUTPUT")}
    env.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", TZ="UTC")
    proc = subprocess.Popen([sys.executable, "-m", "mqctl", "-n", sim.namesrv_addr, *args],
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE,
                            env=env, close_fds=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the pty
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    err = proc.communicate(timeout=30)[1]
    assert proc.returncode == 0, err.decode()
    return ANSI.sub("", out.decode("utf-8").replace("\r\n", "\n"))


def section(text: str, title: str) -> list[str]:
    """The lines of the table titled ``title`` up to the blank line after it."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines)
                 if line.strip() == title or line.startswith(title + ":")
                 or (title.endswith(":") and line.startswith(title)))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return [line.rstrip() for line in lines[start:end]]


def dropped(lines: list[str], cols: int) -> list[str]:
    joined = " ".join(line.strip() for line in lines)
    m = FOOTER.search(joined)
    if not m:
        return []
    assert int(m.group(1)) == cols
    return [h.strip() for h in m.group(2).split(",")]


def json_of(sim, cli, args: list[str]):
    r = cli(["-n", sim.namesrv_addr, *args, "-o", "json"])
    assert r.exit_code == 0, r.stderr
    return r.json


def tokens(line: str) -> list[str]:
    return line.split()


def row_lines(lines: list[str], first: str) -> list[str]:
    return [line for line in lines if line.startswith(first)]


@pytest.mark.parametrize("cols", WIDTHS)
def test_group_progress_keeps_queue_identity_and_lag(sim, cli, cols):
    sim.advance(30)
    args = ["group", "progress", "GID_AUDIT"]
    j = json_of(sim, cli, args)
    out = run_pty(sim, args, cols)
    lines = section(out, "progress of GID_AUDIT")
    assert all(len(line) <= cols for line in lines), max(lines, key=len)
    head = " ".join(lines[1:4])
    for h in ("TOPIC", "BROKER", "QID", "LAG", "TIME", "OWNER"):
        assert h in head
    rows = [tokens(line) for line in lines if line.startswith(("TopicAudit", "%RETRY%"))]
    assert len(rows) == len(j["queues"])
    for q, toks in zip(j["queues"], rows, strict=True):
        # whole broker names, queue ids and lags, in the JSON's order: never "br…" or "16…"
        assert toks[:3] == [q["topic"], q["broker"], str(q["queue_id"])], toks
        assert str(q["lag"]) in toks
        if q["time_lag"] not in ("-", "0"):
            assert " ".join(q["time_lag"].split()) in " ".join(toks)
    assert not any("\u2026" in t for r in rows for t in r[:3])
    gone = dropped(lines, cols)
    if cols == 120:
        assert gone == []
    else:
        # the documented order: LAST CONSUMED first, then INFLIGHT, BROKER OFFSET, ...
        order = ["LAST CONSUMED", "INFLIGHT", "BROKER OFFSET", "CONSUMER OFFSET"]
        assert gone and gone == order[:len(gone)]
    # what the footer names is what the header lacks
    assert ("CONSUMED" in head) == ("LAST CONSUMED" not in gone)
    assert ("INFLIGHT" in head) == ("INFLIGHT" not in gone)
    assert head.count("OFFSET") == 2 - len({"BROKER OFFSET", "CONSUMER OFFSET"} & set(gone))
    wide = section(run_pty(sim, ["-o", "wide", *args], cols), "progress of GID_AUDIT")
    assert "LAST CONSUMED" in wide[1] and "INFLIGHT" in wide[1] and not dropped(wide, cols)


@pytest.mark.parametrize("cols", WIDTHS)
def test_locks_show_keeps_state(sim, cli, cols):
    sim.advance(150)  # demo09 crashed: stale / lock states other than "held"
    args = ["locks", "show", "--group", "GID_ORDER"]
    j = json_of(sim, cli, args)
    out = run_pty(sim, args, cols)
    lines = section(out, "locks of GID_ORDER")
    assert all(len(line) <= cols for line in lines), max(lines, key=len)
    assert "STATE" in " ".join(lines[1:4])
    rows = [tokens(line) for line in row_lines(lines, "TopicOrder")]
    assert len(rows) == len(j["queues"])
    for q, toks in zip(j["queues"], rows, strict=True):
        assert toks[:3] == [q["topic"], q["queue"], q["state"]], toks
        # LEASE LEFT is never left out: a duration after the owner (the value itself
        # follows the wall clock in the subprocess, the simulated one in the JSON)
        assert q["lease_left_ms"] is None or any(
            re.fullmatch(r"-?\d+(\.\d+)?(ms|s|m|h|d)", t) for t in toks[4:]), toks
    gone = dropped(lines, cols)
    order = ["DROPPED", "UNLOCK TRIES", "TRUSTED", "LOCKED", "LOCK AGE", "PREDICTED",
             "FREES AT"]
    assert gone == order[:len(gone)]
    if cols < 120:
        assert gone


@pytest.mark.parametrize("cols", WIDTHS)
def test_consumers_client_ids(sim, cli, cols):
    args = ["consumers", "GID_MIXED"]
    j = json_of(sim, cli, args)
    out = run_pty(sim, args, cols)
    lines = section(out, "consumers of GID_MIXED")
    assert all(len(line) <= cols for line in lines), max(lines, key=len)
    ids = [c["client_id"] for c in j["clients"]]
    shown = [line.split()[0] for line in lines if line[:1].isdigit()]
    assert len(shown) == len(ids)
    for full, s in zip(ids, shown, strict=True):
        assert s == full or ("\u2026" in s and full.startswith(s.split("\u2026")[0])
                             and full.endswith(s.split("\u2026")[1]))
    gone = dropped(lines, cols)
    assert gone == ["LANG", "VERSION", "ORDERLY", "ADDR", "STRATEGY", "TYPE"][:len(gone)]


@pytest.mark.parametrize("cols", WIDTHS)
def test_allocate_what_if(sim, cli, cols):
    args = ["allocate", "-g", "GID_PAY", "-t", "TopicPay", "--add-consumer", "10.0.1.99@99",
            "--by-queue"]
    j = json_of(sim, cli, args)
    out = run_pty(sim, args, cols)
    counts = section(out, "queues per consumer")
    assert all(len(line) <= cols for line in out.split("\n")), cols
    new = next(tokens(line) for line in counts if line.startswith("10.0.1.99@99"))
    after = len(j["assignments"]["10.0.1.99@99"])
    assert new == ["10.0.1.99@99", "-", str(after), f"+{after}", "added"]
    moves = section(out, "moves:")
    assert len([line for line in moves if line.startswith("broker-")]) == len(j["moves"])
    queues = section(out, "queues")
    assert len([line for line in queues if line.startswith("TopicPay")]) == 8


def test_pure_policy_order_and_middle_shortening():
    rows = [{"topic": "TopicAudit", "lag": 123456789, "owner": "10.0.3.31@4301#demo08",
             "when": "2024-06-01 10:00:00", "note": "x"}]
    t = Table([Column("topic", "TOPIC", kind="key"), Column("lag", "LAG", "right"),
               Column("when", "LAST", kind="low", drop=1), Column("owner", "OWNER", kind="id"),
               Column("note", "NOTE", kind="low", drop=2)], rows)
    whole = fit_table(t, None)
    assert [c.key for c in whole.columns] == ["topic", "lag", "when", "owner", "note"]
    f = fit_table(t, 44)
    assert [c.key for c in f.dropped] == ["when", "note"] and not f.shortened
    assert f.total == 44 and f.cells[0] == ["TopicAudit", "123456789", "10.0.3.31@4301#demo08"]
    tight = fit_table(t, 41)  # the id loses its pid first: host and instance stay
    assert tight.cells[0] == ["TopicAudit", "123456789", "10.0.3.31@\u2026#demo08"]
    assert tight.shortened and tight.total <= 41
    tighter = fit_table(t, 35)
    assert tighter.cells[0][:2] == ["TopicAudit", "123456789"]  # never cut
    assert tighter.cells[0][2] == "10.0.3.\u2026demo08"  # down to ID_MIN, start and end
    assert shorten_middle("10.0.3.31@4301#demo08", 100) == "10.0.3.31@4301#demo08"
    assert shorten_middle("abcdefghijklmnop", 7) == "abc\u2026nop"
    # widths are terminal cells: a Chinese topic name takes two per character
    cjk = fit_table(Table([Column("t", "TOPIC", kind="key")], [{"t": "\u8ba2\u5355\u4e3b\u9898"}]),
                    None)
    assert cjk.widths == [8]
    # a table that cannot fit keeps its numbers and keys whole and is wider than asked
    tiny = fit_table(t, 10)
    assert tiny.cells[0][:2] == ["TopicAudit", "123456789"] and tiny.total > 10


def test_locks_show_shortens_owner_ids_in_the_middle_when_unavoidable(sim, cli):
    """Below 80 columns, once every low-value column is gone, OWNER ids lose their middle
    (never their host or their end) and the footer says so."""
    args = ["locks", "show", "--group", "GID_ORDER"]
    j = json_of(sim, cli, args)
    lines = section(run_pty(sim, args, 56), "locks of GID_ORDER")
    rows = [tokens(line) for line in row_lines(lines, "TopicOrder")]
    assert len(rows) == len(j["queues"])
    shortened = 0
    for q, toks in zip(j["queues"], rows, strict=True):
        assert toks[:3] == [q["topic"], q["queue"], q["state"]], toks
        owner = toks[3]
        if "\u2026" in owner:
            head, tail = owner.split("\u2026")
            assert q["owner"].startswith(head) and q["owner"].endswith(tail) and head and tail
            shortened += 1
        else:
            assert owner == q["owner"]
    assert shortened
    footer = " ".join(line.strip() for line in lines)
    assert "shortened (\u2026): OWNER" in footer and "-o wide shows them" in footer

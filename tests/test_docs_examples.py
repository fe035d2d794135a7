"""Every command example in the README and docs/ runs against the simulated cluster, and
prints what the page shows.

Examples are the ``$ mqctl ...`` lines of ```console blocks, run in order per document in a
scratch directory holding ``docs/examples/`` with ``NAMESRV_ADDR`` pointing at a fresh demo
cluster on a fixed clock (2024-06-01T00:00:00Z, 150 simulated seconds in, so the demo's crash
has happened; one simulated second passes between commands, 15 after a snapshot) and
``MQCTL_TZ=UTC``. A trailing ``# exit N`` states the expected exit code (default 0). ``mqctl
sim up`` runs as a process on free ports until its addresses are printed, then gets SIGTERM.

The lines after a command, up to the next command or the end of the block, are its output as
the page shows it, and must be what the command prints (:func:`shown_matches`): compared
after normalising ports (``127.0.0.1:<port>``) and runs of spaces; a ``...`` line stands for
any number of lines, a ``...`` inside a line for any text. Without a ``...`` line the block
is the whole stdout. Regenerate a page's outputs after a change and paste what changed:
``python tests/test_docs_examples.py docs/views.md`` prints every example with its output.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")
START_MS = 1_717_200_000_000  # 2024-06-01T00:00:00Z: the times the pages show do not move
AT_S = 150


class Example:
    __slots__ = ("line", "cmd", "code", "shown")

    def __init__(self, line: str) -> None:
        self.line = line
        cmd = line[2:]
        m = EXIT.search(cmd)
        self.code = int(m.group(1)) if m else 0
        self.cmd = re.sub(r"\s+#.*$", "", EXIT.sub("", cmd))
        self.shown: list[str] = []


def examples(path: Path) -> list[Example]:
    out: list[Example] = []
    in_block = False
    cur: Example | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_block = line.strip() == "```console" if not in_block else False
            cur = None
            continue
        if not in_block:
            continue
        if line.startswith("$ mqctl"):
            cur = Example(line)
            out.append(cur)
        elif line.startswith("$ "):
            cur = None  # another program's command line: not run, nor its output
        elif cur is not None:
            cur.shown.append(line)
    return out


def normalise(line: str) -> str:
    """Ports are ephemeral (a message id holds its store host's: 7F000001 0000 <port>)."""
    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", line.rstrip())
    line = re.sub(r"\b7F0000010000[0-9A-F]{4}", "7F0000010000<port>", line)
    return re.sub(r" {2,}", " ", line)


def _pattern(shown: str) -> re.Pattern[str]:
    """A shown line as a pattern: ``...`` inside it stands for any text (columns left out,
    the rest of a long line, a path that differs per run)."""
    parts = [re.escape(p) for p in normalise(shown).split("...")]
    return re.compile(".*".join(parts) + r"\Z")


def shown_matches(shown: list[str], stdout: str, stderr: str) -> str | None:
    """None when the shown lines are what was printed, else what differs.

    Each shown line is found on stdout or stderr, in order on each; a ``...`` line skips any
    number of lines; without one, stdout must hold exactly the shown lines of stdout."""
    streams = {"stdout": [normalise(x) for x in stdout.splitlines()],
               "stderr": [normalise(x) for x in stderr.splitlines()]}
    pos = {"stdout": 0, "stderr": 0}
    skip = False
    for want in shown:
        if want.strip() == "...":
            skip = True
            continue
        pat = _pattern(want)
        found = None
        for name in ("stdout", "stderr"):
            lines = streams[name]
            end = len(lines) if skip or name == "stderr" else min(len(lines), pos[name] + 1)
            for i in range(pos[name], end):
                if pat.match(lines[i]):
                    found = (name, i)
                    break
            if found:
                break
        if found is None:
            return (f"not printed where the page shows it: {want!r}\n--- stdout\n{stdout}"
                    f"--- stderr\n{stderr}")
        name, i = found
        pos[name] = i + 1
        skip = False
    if not any(s.strip() == "..." for s in shown):
        if any(streams["stdout"][pos["stdout"]:]):
            return f"printed more than the page shows:\n{stdout}"
    return None


def test_docs_have_examples():
    found = {str(p.relative_to(ROOT)): len(examples(p)) for p in DOCS}
    assert found["README.md"] >= 6
    assert sum(found.values()) >= 25, found
    shown = sum(1 for p in DOCS for e in examples(p) if e.shown)
    assert shown >= 15, "pages show the output of their examples"
    # every command family's page has runnable examples (docs/README.md lists the families)
    families = ("groups", "group-progress", "diagnose", "locks", "reset", "allocate", "views",
                "exports", "scenario", "wire", "config", "output")
    assert [f for f in families if not found.get(f"docs/{f}.md")] == []


@pytest.mark.parametrize("shown, out, err, ok", [
    (["# t", "A  1"], "# t\nA    1\n", "", True),
    (["# t", "A  1"], "# t\nA 1\nB 2\n", "", False),        # more printed than shown
    (["# t", "...", "B 2"], "# t\nA 1\nB 2\n", "", True),
    (["# t", "B 2"], "# t\nA 1\nB 2\n", "", False),          # a skip needs its '...'
    (["X  ...  Z"], "X Y Z\n", "", True),
    (["rollback file: .../a.json (...)"], "rollback file: /tmp/x/a.json (b)\n", "", True),
    (["msg id 7F0000010000917D0000"], "msg id 7F0000010000A5DD0000\n", "", True),
    (["msg id 7F0000010000917D0001"], "msg id 7F0000010000A5DD0000\n", "", False),
    (["# t", "WARN: w"], "# t\n", "WARN: w\n", True),
    (["a 127.0.0.1:1"], "a 127.0.0.1:40123\n", "", True),
    (["# t", "A 2"], "# t\nA 1\n", "", False)])
def test_shown_matches(shown, out, err, ok):
    assert (shown_matches(shown, out, err) is None) is ok


def run_sim_up(args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "mqctl", *args, "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = p.stdout.readline() if p.stdout else ""
            if line.startswith("export NAMESRV_ADDR=") or not line:
                break
        p.send_signal(signal.SIGTERM)
        return p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()


def run_exporter(args, env):
    """``mqctl exporter``: a process on a free port (its --listen's port replaced by 0) until
    it says where it listens and its first round is served, then SIGTERM: what it printed."""
    import urllib.request

    from conftest import CliResult

    if "--listen" in args:
        i = args.index("--listen") + 1
        args = [*args[:i], args[i].rpartition(":")[0] + ":0", *args[i + 1:]]
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT), **env)
    p = subprocess.Popen([sys.executable, "-m", "mqctl", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = p.stderr.readline() if p.stderr else ""
        m = re.search(r"listening on (\S+):(\d+),", first)
        deadline = time.monotonic() + 30
        while m and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://{m.group(1)}:{m.group(2)}/-/ready",
                                            timeout=5):
                    break
            except OSError:
                time.sleep(0.1)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        return CliResult(p.returncode, out, first + err)
    finally:
        if p.poll() is None:
            p.kill()


def _doc_param(doc):
    """A document whose examples run the Spark report is a `spark` case (a JVM)."""
    spark = any(re.match(r"mqctl (.* )?(lag report|demo)\b", e.cmd) for e in examples(doc))
    return pytest.param(doc, id=str(doc.relative_to(ROOT)),
                        marks=[pytest.mark.spark] if spark else [])


@contextmanager
def _demo_cluster() -> Iterator[Any]:
    from sim_fixtures import running_sim

    from mqctl.sim.scenario import load_scenario

    with running_sim(load_scenario("demo", start_ms=START_MS)) as sim:
        sim.advance(AT_S)
        yield sim


def run_examples(doc: Path) -> Iterator[tuple[Example, Any]]:
    """Run the page's examples in order in the current directory; yield each with its result
    (the `sim up` ones with None)."""
    from conftest import run_cli

    with _demo_cluster() as sim:
        env = {"NAMESRV_ADDR": sim.namesrv_addr, "MQCTL_TZ": "UTC"}
        for ex in examples(doc):
            args = shlex.split(ex.cmd)[1:]
            if args[:2] == ["sim", "up"]:
                assert run_sim_up(args) == ex.code, ex.cmd
                yield ex, None
                continue
            if "exporter" in args[:3]:
                yield ex, run_exporter(args, env)
                continue
            yield ex, run_cli(args, env=env)
            # snapshots taken by hand are at least --align (10 s) apart, as the docs say
            sim.advance(15 if args[:1] == ["snapshot"] else 1)


@pytest.mark.parametrize("doc", [_doc_param(p) for p in DOCS if examples(p)])
def test_examples_run(doc, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "docs" / "examples", tmp_path, dirs_exist_ok=True)  # files named
    for ex, r in run_examples(doc):
        if r is None:
            continue
        assert r.exit_code == ex.code, f"{doc.name}: {ex.cmd}\n{r.stdout[-2000:]}\n{r.stderr}"
        assert "Traceback" not in r.stderr, ex.cmd
        if ex.shown:
            diff = shown_matches(ex.shown, r.stdout, r.stderr)
            assert diff is None, f"{doc.name}: {ex.cmd}\n{diff}"


if __name__ == "__main__":  # print a page's examples with what they print now
    import tempfile

    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    home = tempfile.mkdtemp()  # as the tests' autouse fixture: no real config or state
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"),
                     ("XDG_CACHE_HOME", "cache")):
        os.environ[var] = os.path.join(home, sub)
    for page in [Path(arg).resolve() for arg in sys.argv[1:]]:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(ROOT / "docs" / "examples", tmp, dirs_exist_ok=True)
            os.chdir(tmp)
            for ex, r in run_examples(page):
                print(ex.line)
                if r is not None:
                    print(r.stdout + r.stderr, end="")
                    print(f"[exit {r.exit_code}]")
            os.chdir(ROOT)

"""Completion in the real shells, as an operator types: bash and zsh in a
pseudo-terminal (the line is typed, then every candidate is inserted into it by the shell's own
completion machinery: bash's ``insert-completions``, zsh's ``_all_matches``, and the shell
echoes the line), fish through its completion entry point ``complete -C``. The scripts are the
ones ``mqctl completion SHELL`` prints, and ``mqctl`` on PATH runs this checkout.

bash splits words at ``:`` (COMP_WORDBREAKS), which is why ``-n host:port`` is tested before
and after the command. zsh and fish come from apt (``./dev test`` installs them); where a shell
is missing its tests skip and say so.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

SHELLS = ("bash", "zsh", "fish")


def _missing(shell: str) -> str:
    return (f"{shell} is not installed (Debian: apt-get install -y {shell}; ./dev test "
            "installs it)")


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    """A PATH whose ``mqctl`` is this checkout, each shell's script written from ``mqctl
    completion``, and an empty working directory with one file (path completion)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "mqctl"
    exe.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m mqctl \"$@\"\n")
    exe.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "profiles.yaml").write_text("{}\n")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", HOME=str(tmp_path),
               TERM="dumb", INPUTRC="/dev/null", PYTHONPATH=str(ROOT))
    for shell in SHELLS:
        out = subprocess.run([str(exe), "completion", shell], capture_output=True, text=True,
                             env=env, timeout=60)
        assert out.returncode == 0, out.stderr
        (tmp_path / f"mqctl.{shell}").write_text(out.stdout)
    env["MQCTL_TEST_DIR"] = str(tmp_path)
    return env


class Pty:
    """A shell on a pseudo-terminal: type keys, read until a pattern shows up."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        import fcntl
        import pty
        import struct
        import termios

        self.master, slave = pty.openpty()
        # wide: no line wrapping in what the shell echoes
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 1000, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     cwd=cwd, start_new_session=True)
        os.close(slave)
        self.seen = ""

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def expect(self, pattern: str, limit: float = 60.0) -> re.Match[str]:
        start = len(self.seen)
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            m = re.compile(pattern, re.M).search(self.seen, start)
            if m:
                self.seen = self.seen[: m.end()] + self.seen[m.end():]
                return m
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    break
                self.seen += data.decode("utf-8", "replace")
        raise AssertionError(f"no {pattern!r} in what the shell printed:\n{self.seen[-3000:]}")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self.master)


@pytest.fixture
def interactive(shell_env):
    """``complete(shell, line)``: type ``line`` in an interactive bash or zsh, let the shell
    insert every candidate, and return the line the shell ended with, as words."""
    shells: dict[str, Pty] = {}
    test_dir = Path(shell_env["MQCTL_TEST_DIR"])
    marker = 0

    def start(shell: str) -> Pty:
        if shell == "bash":
            p = Pty(["bash", "--norc", "--noprofile", "-i"], shell_env, test_dir / "work")
            # M-* (ESC *) is readline's insert-completions
            p.send(f"PS1='> '; bind 'set enable-bracketed-paste off'; "
                   f"source {test_dir}/mqctl.bash; echo READY-$((40+2))\r")
        else:
            p = Pty(["zsh", "-f", "-i"], shell_env, test_dir / "work")
            # ^Xa inserts all matches (zshcompsys: _all_matches)
            p.send("PS1='> '; unset zle_bracketed_paste; autoload -U compinit; "
                   "compinit -u -D; zle -C all-matches complete-word _generic; "
                   "bindkey '^Xa' all-matches; "
                   "zstyle ':completion:all-matches:*' insert true; "
                   "zstyle ':completion:all-matches::::' completer _all_matches _complete; "
                   f"source {test_dir}/mqctl.zsh; echo READY-$((40+2))\r")
        p.expect(r"^READY-42")
        return p

    def complete(shell: str, line: str) -> list[str]:
        nonlocal marker
        if shutil.which(shell) is None:
            pytest.skip(_missing(shell))
        if shell not in shells:
            shells[shell] = start(shell)
        p = shells[shell]
        marker += 1
        insert = "\x1b*" if shell == "bash" else "\x18a"
        # all candidates into the line, then to its start (^A) and turn it into an echo
        p.send(f"{line}{insert}\x01echo @{marker}@ \r")
        m = p.expect(rf"^@{marker}@ (.*?)\r?$")
        return m.group(1).split()

    yield complete
    for p in shells.values():
        p.close()


def fish_complete(env: dict[str, str], line: str) -> list[str]:
    """fish's own completion entry point: ``complete -C LINE`` lists the candidates."""
    if shutil.which("fish") is None:
        pytest.skip(_missing("fish"))
    test_dir = Path(env["MQCTL_TEST_DIR"])
    r = subprocess.run(["fish", "--no-config", "-c",
                        f"source {test_dir}/mqctl.fish; complete -C {_fish_quote(line)}"],
                       capture_output=True, text=True, env=env, cwd=test_dir / "work",
                       timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return [x.split("\t")[0] for x in r.stdout.splitlines()]


def _fish_quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def candidates(shell: str, interactive, env: dict[str, str], line: str) -> list[str]:
    """What the shell offers for the last word of ``line``."""
    if shell == "fish":
        return fish_complete(env, line)
    words = interactive(shell, line)
    typed = line.split()
    if not line.endswith(" ") and words == typed:
        return []  # nothing was inserted
    done = typed if line.endswith(" ") else typed[:-1]
    assert words[: len(done)] == done, (words, line)
    return words[len(done):]


@pytest.fixture
def groups(sim) -> list[str]:
    return sorted(g.name for g in sim.cluster.scenario.groups)


@pytest.mark.parametrize("shell", SHELLS)
def test_namesrv_with_a_port_before_and_after_the_command(shell, sim, groups, interactive,
                                                          shell_env):
    ns = sim.namesrv_addr
    assert ":" in ns
    got = candidates(shell, interactive, shell_env, f"mqctl -n {ns} group progress ")
    assert sorted(got) == groups
    got = candidates(shell, interactive, shell_env, f"mqctl -n {ns} group progress GID_P")
    assert sorted(got) == ["GID_PAY", "GID_POP"]
    # -n after the command, and --namesrv=ADDR (bash splits at '=' as well)
    got = candidates(shell, interactive, shell_env, f"mqctl group progress -n {ns} GID_P")
    assert sorted(got) == ["GID_PAY", "GID_POP"]
    got = candidates(shell, interactive, shell_env, f"mqctl consumers --namesrv={ns} GID_O")
    assert got == ["GID_ORDER"]


@pytest.mark.parametrize("shell", SHELLS)
def test_commands_choices_and_paths(shell, interactive, shell_env):
    def offered(line: str) -> list[str]:
        return sorted(candidates(shell, interactive, shell_env, line))

    assert offered("mqctl wire de") == ["decode"]
    assert offered("mqctl wire decode --as ") == sorted(
        ["auto", "tcpdump", "pcap", "hex", "frame", "body"])
    assert offered("mqctl sim up --clock ") == ["accelerated", "manual", "real"]
    assert offered("mqctl --tz Asia/Shangh") == ["Asia/Shanghai"]
    assert "consistent-hash" in offered("mqctl allocate -s ")
    # a scenario is a bundled name or a file: both are offered (every bundled one: the list
    # grows with the scenarios, e.g. diagnose)
    from mqctl.sim.scenario import bundled

    assert offered("mqctl sim up --scenario ") == sorted([*bundled(), "profiles.yaml"])
    assert {"demo", "diagnose", "large", "rooms"} <= set(bundled())
    # FILE parameters complete paths; a parameter with nothing to offer offers nothing
    assert offered("mqctl --config pro") == ["profiles.yaml"]
    assert offered("mqctl time --tz UTC 2024-") == []


def test_the_scripts_are_what_mqctl_completion_prints(shell_env):
    test_dir = Path(shell_env["MQCTL_TEST_DIR"])
    for shell in SHELLS:
        assert (test_dir / f"mqctl.{shell}").read_text() == (
            ROOT / "completions" / f"mqctl.{shell}").read_text()

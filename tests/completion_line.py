"""What mqctl answers the shell completion scripts, through the line protocol
(``_MQCTL_COMPLETE``), in a fresh process as the shell runs it."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT


def mqctl_process(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mqctl", *args], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT), **env),
                          timeout=60)


def line(text: str, **env: str) -> list[str]:
    """What mqctl answers the scripts for the line ``text`` (up to the cursor)."""
    r = mqctl_process(_MQCTL_COMPLETE="complete_bash", _MQCTL_COMP_LINE=text, **env)
    assert r.returncode == 0 and r.stderr == ""
    return r.stdout.splitlines()

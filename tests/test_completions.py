"""Completion scripts are generated from the app and current; bash completion works end to end."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from conftest import ROOT

from mqctl.cli.completions_gen import SHELLS, script


def test_completion_files_are_current():
    for shell in SHELLS:
        path = ROOT / "completions" / f"mqctl.{shell}"
        assert path.read_text() == script(shell), (
            f"{path} is stale: run python -m mqctl.cli.completions_gen")


def _complete(words: str, cword: int) -> list[str]:
    env = dict(os.environ, COMP_WORDS=words, COMP_CWORD=str(cword),
               _MQCTL_COMPLETE="complete_bash")
    r = subprocess.run([sys.executable, "-m", "mqctl"], env=env, capture_output=True, text=True,
                       timeout=60)
    return r.stdout.split()


def test_bash_completion_of_commands_and_options():
    assert "decode" in _complete("mqctl wire de", 2)
    opts = _complete("mqctl config show --", 3)
    assert "--output" in opts and "--namesrv" in opts


def test_bash_script_sources_cleanly():
    bash = shutil.which("bash")
    assert bash
    r = subprocess.run([bash, "-c", f"source {ROOT / 'completions/mqctl.bash'} && "
                        "complete -p mqctl"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "mqctl" in r.stdout

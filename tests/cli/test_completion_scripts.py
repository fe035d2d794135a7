"""Completion scripts: ``mqctl completion SHELL`` prints them from the package, ``completions/``
holds the same, and the line protocol answers what each parameter offers. The real shells:
tests/cli/test_shell_completion.py; cluster names:
tests/cli/test_cluster_completion.py."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from completion_line import line
from completion_line import mqctl_process as _mqctl
from conftest import ROOT
from rollback_files import write

from mqctl.cli.completion import SHELLS, answer, script
from mqctl.cli.typer_compat import CompletionItem


def test_completion_files_are_what_mqctl_completion_prints():
    for shell in SHELLS:
        r = _mqctl("completion", shell)
        assert r.returncode == 0 and r.stderr == ""
        assert r.stdout == script(shell)
        path = ROOT / "completions" / f"mqctl.{shell}"
        assert path.read_text() == r.stdout, (
            f"{path} is stale: run python -m mqctl.cli.completions_gen")


def test_completion_of_an_unknown_shell_is_a_usage_error():
    r = _mqctl("completion", "powershell")
    assert r.returncode == 2 and r.stdout == ""
    assert "bash" in r.stderr and "Traceback" not in r.stderr


def test_line_protocol_answers_types_and_values(tmp_path):
    assert line("mqctl wire de") == ["plain,decode"]
    assert line("mqctl -n 127.0.0.1:9 --tz Europe/Pari") == ["plain,Europe/Paris"]
    assert line("mqctl -n 127.0.0.1:9 lag report in --out ") == ["dir,"]
    assert line("mqctl --config ") == ["file,"]
    assert line("mqctl time 2024-") == []  # nothing to offer: no file names either
    # quotes are the shell's: a quoted word is one word
    assert line("mqctl --tz 'Asia/Shangh") == ["plain,Asia/Shanghai"]


def test_rollback_names_complete_from_the_default_directory(tmp_path):
    state = tmp_path / "state"
    (state / "mqctl" / "rollback").mkdir(parents=True)
    write(state / "mqctl" / "rollback" / "GID_A-TopicA-20240101T000000Z.json", 1704067200000)
    got = line("mqctl offsets rollback GID_", XDG_STATE_HOME=str(state))
    assert got == ["plain,GID_A-TopicA-20240101T000000Z.json", "file,"]


def test_bash_values_are_cut_to_the_word_bash_replaces():
    items = [CompletionItem("+08:00"), CompletionItem("+08:30"), CompletionItem("x", type="file")]
    # `--tz +08:` : bash's current word is ":" (COMP_WORDBREAKS), the line must read +08:00
    assert answer(items, "+08:", ":") == ["plain,:00", "plain,:30", "file,"]
    assert answer(items[1:], "+08:3", "3") == ["plain,30", "file,"]
    assert answer([CompletionItem("GID_A")], "GID_", "GID_") == ["plain,GID_A"]
    assert answer([CompletionItem("GID_A")], "GID_", None) == ["plain,GID_A"]


def test_typers_protocol_still_answers():
    """The scripts of mqctl 0.1's --install-completion (Typer's) keep working."""
    r = _mqctl(COMP_WORDS="mqctl wire de", COMP_CWORD="2", _MQCTL_COMPLETE="complete_bash")
    assert r.returncode == 0 and r.stdout.split() == ["decode"]
    r = _mqctl(_MQCTL_COMPLETE="complete_zsh", _TYPER_COMPLETE_ARGS="mqctl wire decode --as ")
    assert r.returncode == 0 and '"tcpdump"' in r.stdout


def test_bash_script_sources_cleanly():
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    r = subprocess.run([bash, "-c", f"source {ROOT / 'completions/mqctl.bash'} && "
                        "complete -p mqctl"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "_mqctl_completion" in r.stdout

"""Generate ``completions/mqctl.{bash,zsh,fish}`` from the app (never by hand).

    python -m mqctl.cli.completions_gen          # write the files
    python -m mqctl.cli.completions_gen --check  # exit 1 when a file is stale

The scripts are what ``mqctl completion SHELL`` prints from the installed package
(:mod:`mqctl.cli.completion`); they call back into mqctl (``_MQCTL_COMPLETE=complete_<shell>``
with the line up to the cursor), so commands, options and values complete from the app at run
time, and group and topic names from the cluster (:mod:`mqctl.complete`: a 1 s deadline and a
60 s cache; ``tests/cli/test_cluster_completion.py``). The scripts themselves do not change with
the cluster or the commands: only the app's answers do.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mqctl.cli.completion import SHELLS, script

__all__ = ["SHELLS", "main", "script"]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(__file__).resolve().parents[2] / "completions"
    stale = []
    for shell in SHELLS:
        path = root / f"mqctl.{shell}"
        text = script(shell)
        if "--check" in args:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            from mqctl.fsutil import atomic_write_text

            atomic_write_text(path, text)
    if stale:
        sys.stderr.write("stale completion scripts (run python -m mqctl.cli.completions_gen): "
                         + ", ".join(stale) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Commands stay short: no function over 60 lines in ``mqctl/cli`` (a command parses, calls the
API, renders and exits: its workflow is the library's). The limit of 100 lines for every
function of ``mqctl/`` is tests/test_architecture.py's, with the module sizes.

The lines of a function are counted from its ``def`` (or first decorator) to its last line,
docstring included. The few still longer are listed with who is splitting them; the test
fails on a new one and on an entry that no longer needs to be listed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_MAX = 60

# (module, function) -> why it is still longer
CLI_TODO: dict[tuple[str, str], str] = {}


def lengths(source: str, filename: str) -> list[tuple[str, int]]:
    """(function name, lines) of every function and method."""
    out = []
    for n in ast.walk(ast.parse(source, filename)):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([n.lineno, *(d.lineno for d in n.decorator_list)])
            out.append((n.name, (n.end_lineno or n.lineno) - start + 1))
    return out


def too_long(under: str, limit: int) -> set[tuple[str, str]]:
    found = set()
    for path in sorted((ROOT / under).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for name, n in lengths(path.read_text(encoding="utf-8"), rel):
            if n > limit:
                found.add((rel, name))
    return found


def test_no_function_in_the_cli_over_60_lines():
    found = too_long("mqctl/cli", CLI_MAX)
    assert sorted(found - set(CLI_TODO)) == []
    assert sorted(set(CLI_TODO) - found) == [], "CLI_TODO lists functions now short enough"


def test_the_count_covers_decorators_and_docstrings():
    src = "@app.command()\ndef f():\n    '''doc\n    more'''\n    return 1\n"
    assert lengths(src, "m.py") == [("f", 5)]

"""No module-level mutable state below the CLI: what a run depends on (the clock, the display
zone, where warnings go, the streams) is its explicit context (``mqctl.context.Context``),
never a module global that a function assigns.

An AST walk over ``mqctl/`` (the CLI and the simulated cluster apart: the CLI is the top, and
the sim keeps its own clock) finds, inside functions:

* a ``global`` statement;
* an assignment into a module-level name (``_CACHE[key] = v``, ``_STATE.mode = ...``, ``+=``);
* a mutating call on one (``_SEEN.add(x)``, ``RULES.append(...)``, ``.update()``, ...).

The few that are process state by nature are listed in :data:`ALLOWED` with the reason; the
test fails on any other, and on an entry that no longer matches (the list only shrinks).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mqctl"
ABOVE = ("mqctl/cli/", "mqctl/sim/", "mqctl/__main__.py")
MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "popitem", "clear",
                      "update", "setdefault", "add", "discard", "sort", "reverse"})

# (module, module-level name) -> why it is module state
ALLOWED: dict[tuple[str, str], str] = {
    ("mqctl/interrupt.py", "_STATE"): "the process's one record of SIGINT/SIGTERM/SIGHUP: "
                                      "signals and their handler are process-wide",
    ("mqctl/lagjob/session.py", "_SHIPPED"): "which Spark applications of this process were "
                                             "given mqctl's code (the SparkContext's own "
                                             "state, per process)",
}


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign)
                   else [])
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def mutations(source: str, filename: str) -> list[tuple[str, int, str]]:
    """(module-level name, line, what) for every write to module state from a function."""
    tree = ast.parse(source, filename)
    names = _module_names(tree)
    found: list[tuple[str, int, str]] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        args = fn.args
        local = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found += [(n, node.lineno, "global statement") for n in node.names]
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            for t in targets:
                r = _root(t)
                if isinstance(t, ast.Attribute | ast.Subscript) and r in names \
                        and r not in local:
                    found.append((r, node.lineno, "assignment into it"))
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in MUTATORS):
                r = _root(node.func.value)
                if r in names and r not in local:
                    found.append((r, node.lineno, f".{node.func.attr}()"))
    return found


def below_the_cli() -> list[tuple[str, str, int, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(ABOVE):
            continue
        for name, line, what in mutations(path.read_text(encoding="utf-8"), rel):
            out.append((rel, name, line, what))
    return out


def test_no_module_level_mutable_state_below_the_cli():
    found = below_the_cli()
    new = [f"{m}:{line} {name}: {what}" for m, name, line, what in found
           if (m, name) not in ALLOWED]
    assert new == [], "module state written from functions (use mqctl.context.Context)"
    stale = sorted(set(ALLOWED) - {(m, name) for m, name, _, _ in found})
    assert stale == [], "ALLOWED lists module state that is gone: remove the entry"


def test_the_walk_finds_each_kind_of_write():
    src = ("_zone = None\n_CACHE = {}\n_SEEN = set()\nclass S: pass\n_S = S()\n"
           "def a(z):\n    global _zone\n    _zone = z\n"
           "def b(k, v):\n    _CACHE[k] = v\n"
           "def c(x):\n    _SEEN.add(x)\n"
           "def d():\n    _S.mode = 'x'\n"
           "def e(_CACHE):\n    _CACHE['k'] = 1\n"  # a parameter of that name: not module state
           "def f():\n    local = {}\n    local['k'] = 1\n")
    assert [(n, what) for n, _, what in mutations(src, "m.py")] == [
        ("_zone", "global statement"), ("_CACHE", "assignment into it"), ("_SEEN", ".add()"),
        ("_S", "assignment into it")]


def test_the_clock_and_the_zone_come_from_the_context():
    """The display zone, the clock and the warnings are the context's: two contexts, two
    readings, and nothing left behind after a ``use`` block."""
    from datetime import UTC, timedelta, timezone

    from mqctl import timeparse
    from mqctl.context import Context, current, use

    before = current()
    seen: list[str] = []
    east = timezone(timedelta(hours=8))
    with use(Context(clock=lambda: 86_400_000, zone=east, warn=seen.append)):
        assert timeparse.now_ms() == 86_400_000
        assert timeparse.format_local(1000) == "1970-01-01 08:00:01 +08:00"
        timeparse.parse_offset_from_now_ms("30m")  # unsigned: a warning
        with use(current().with_(zone=UTC)):
            assert timeparse.format_local(1000) == "1970-01-01 00:00:01 UTC"
    assert current() is before
    assert len(seen) == 1 and "has no sign" in seen[0]

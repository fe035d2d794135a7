"""One declaration per option meaning: every option and argument of the CLI is declared in
``mqctl/cli/options.py`` (the lag report's in ``mqctl/lagoptions.py``), and a flag reads the
same wherever it appears.

* The Typer app is walked (every parameter of every command, the root's too): a flag with two
  help texts fails, unless ``options.DISTINCT`` names it (a flag that means two unrelated
  things, each meaning declared once); an entry there that no longer has two texts fails too.
* The source of ``mqctl/cli`` is read: a ``typer.Option(`` or ``typer.Argument(`` outside
  ``options.py`` (and the lag report's derivation from ``mqctl.lagoptions``) fails.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import Any

from typer.main import get_command

from mqctl.cli import options
from mqctl.cli.app import app

CLI = Path(__file__).resolve().parents[2] / "mqctl" / "cli"
# the lag report's parameters are derived from mqctl.lagoptions (one spec per option there)
DERIVED = {("lag.py", "_report_signature")}


def walk(cmd: Any, path: str = "mqctl"):
    for p in cmd.params:
        yield path, p
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from walk(sub, f"{path} {name}")


def help_texts(root: Any) -> dict[str, dict[str, list[str]]]:
    """flag -> help text -> the commands that show it."""
    seen: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, p in walk(root):
        if p.param_type_name != "option":
            continue
        for flag in [*p.opts, *p.secondary_opts]:
            seen[flag][p.help or ""].append(path)
    return seen


def twice(seen: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, list[str]]]:
    return {flag: dict(texts) for flag, texts in seen.items() if len(texts) > 1}


def test_a_flag_reads_the_same_on_every_command():
    found = twice(help_texts(get_command(app)))
    unexplained = {f: t for f, t in found.items() if f not in options.DISTINCT}
    assert unexplained == {}, "flags declared twice with different help texts"
    stale = sorted(set(options.DISTINCT) - set(found))
    assert stale == [], "DISTINCT names flags that no longer mean two things"


def test_the_walk_finds_a_flag_declared_twice():
    """The check fails on what it is for: a second --topic with its own text."""
    import typer

    demo = typer.Typer()

    @demo.command("a")
    def a(topic: options.TopicOpt = None) -> None:
        pass

    @demo.command("b")
    def b(topic: str = typer.Option(None, "--topic", "-t", help="Only this topic.")) -> None:
        pass

    found = twice(help_texts(get_command(demo)))
    assert set(found) == {"--topic", "-t"}
    assert sorted(found["--topic"]) == ["Only this topic.", options.TOPIC.help]


def inline_declarations(source: str, filename: str) -> list[tuple[str, int]]:
    """``typer.Option(`` / ``typer.Argument(`` calls, by the function they are in."""
    tree = ast.parse(source, filename)
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) \
                else where
            if isinstance(child, ast.Call) and ast.unparse(child.func) in (
                    "typer.Option", "typer.Argument", "Option", "Argument"):
                found.append((where, child.lineno))
            visit(child, inner)

    visit(tree, "<module>")
    return found


def test_options_and_arguments_are_declared_only_in_options_py():
    wrong = []
    for path in sorted(CLI.glob("*.py")):
        if path.name == "options.py":
            continue
        for where, line in inline_declarations(path.read_text(encoding="utf-8"), str(path)):
            if (path.name, where) not in DERIVED:
                wrong.append(f"{path.name}:{line} ({where})")
    assert wrong == []


def test_the_source_check_sees_an_inline_declaration():
    src = ("import typer\n"
           "def cmd(x: Annotated[str, typer.Option('--x', help='X.')] = 'a') -> None:\n"
           "    pass\n")
    assert inline_declarations(src, "t.py") == [("cmd", 2)]


def test_a_flag_keeps_its_help_whatever_the_use_adds():
    assert options.TOPIC.option().help == options.TOPIC.option(show_default=True).help
    try:
        options.TOPIC.option(help="another text")
    except AssertionError:
        pass
    else:  # pragma: no cover
        raise AssertionError("a second help text was accepted")

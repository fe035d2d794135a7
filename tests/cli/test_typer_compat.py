"""Typer's private API is used in one module, mqctl/cli/typer_compat.py, and each use still does
what mqctl relies on. A Typer upgrade that changes one fails here, loudly,
before it changes a help page, an error or a completion in silence."""

from __future__ import annotations

import re
from typing import Annotated

import pytest
import typer
from conftest import ROOT
from typer.main import get_command

from mqctl.cli import typer_compat as compat
from mqctl.cli.app import Interrupted, app
from mqctl.cli.common import in_file

UPGRADE = ("typer {v}: mqctl/cli/typer_compat.py uses Typer's private API, tested on "
           "{t}.x; check every function there against the new release, then raise "
           "TESTED_TYPER and the typer range in pyproject.toml together")


def test_typer_is_the_tested_minor_version():
    v = typer.__version__
    assert v == compat.TESTED_TYPER or v.startswith(compat.TESTED_TYPER + "."), UPGRADE.format(
        v=v, t=compat.TESTED_TYPER)


def test_no_private_typer_api_outside_the_compat_module():
    private = re.compile(r"typer\._|typer\.core\._|_custom_shell_complete|_usage_display_name|"
                         r"display_type_rich|_typer_param_setup")
    offenders = []
    for path in sorted((ROOT / "mqctl").rglob("*.py")):
        if path.name == "typer_compat.py":
            continue
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if private.search(text):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {text.strip()}")
    assert offenders == [], "\n".join(offenders)


def _root():
    return get_command(app)


def test_usage_errors_are_click_exceptions():
    with pytest.raises(compat.ClickException) as exc:
        _root().main(args=["--no-such-option"], prog_name="mqctl", standalone_mode=False)
    assert "--no-such-option" in exc.value.format_message()


def test_current_context_is_the_invocations():
    assert compat.get_current_context(silent=True) is None
    seen = []
    t = typer.Typer()

    @t.command()
    def one() -> None:
        seen.append(compat.get_current_context(silent=True))

    cmd = get_command(t)
    cmd.main(args=[], prog_name="x", standalone_mode=False)
    assert seen and seen[0] is not None and seen[0].info_name == "x"


def test_argument_usage_is_the_metavar_alone():
    cmd = _root()
    progress = cmd.commands["group"].commands["progress"]
    ctx = progress.make_context("progress", ["G"], parent=cmd.make_context("mqctl", ["group"]),
                                resilient_parsing=True)
    arg = next(p for p in progress.params if p.param_type_name == "argument")
    compat.set_argument_usage(arg, "GROUP")
    usage = progress.collect_usage_pieces(ctx)
    assert "GROUP" in usage and "{GROUP}" not in " ".join(usage)
    assert arg.display_type_rich(ctx=ctx) is None
    # what the root does to every argument, checked in the help a user reads
    from conftest import run_cli

    r = run_cli(["group", "progress", "--help"])
    first = r.stdout.splitlines()[0]
    assert first == "Usage: mqctl group progress [OPTIONS] [GROUP]", first


def test_a_completion_set_at_run_time_is_used():
    cmd = _root()
    param = next(p for p in cmd.params if p.name == "profile")
    assert not compat.has_completion(param)
    compat.set_completion(param, lambda ctx, p, incomplete: [
        compat.CompletionItem(incomplete + "-one"), compat.CompletionItem("x", type="file")])
    assert compat.has_completion(param)
    ctx = cmd.make_context("mqctl", [], resilient_parsing=True)
    got = param.shell_complete(ctx, "p")
    assert [(i.value, i.type) for i in got] == [("p-one", "plain"), ("x", "file")]


def test_split_arg_string_keeps_an_open_quote_as_the_last_word():
    assert compat.split_arg_string("mqctl --tz 'Asia/Sh") == ["mqctl", "--tz", "Asia/Sh"]


def test_ctrl_c_in_a_command_is_carried_past_typer():
    t = typer.Typer(cls=type(_root()))

    @t.command()
    def boom() -> None:
        raise KeyboardInterrupt

    @t.command()
    def other() -> None:  # pragma: no cover - a second command makes a group
        pass

    with pytest.raises(Interrupted):
        get_command(t).main(args=["boom"], prog_name="x", standalone_mode=False)



_PARSER = in_file("topology file")  # (module level: the annotations are read as strings)


def test_param_parser_reads_the_parser_a_parameter_was_declared_with():
    t = typer.Typer()

    @t.command()
    def cmd(f: Annotated[str | None, typer.Option("--f", parser=_PARSER)] = None,
            g: Annotated[str | None, typer.Option("--g")] = None) -> None:  # pragma: no cover
        pass

    params = {p.name: p for p in get_command(t).params}
    assert compat.param_parser(params["f"]) is _PARSER
    assert compat.param_parser(params["g"]) is None


def _default_app():
    t = typer.Typer(cls=compat.default_group("show"), no_args_is_help=False,
                    help="Things: show one (the default), or change one.")
    got: list[tuple[str, str | None]] = []

    @t.command("show")
    def show(name: Annotated[str | None, typer.Argument()] = None,
             loud: Annotated[bool, typer.Option("--loud")] = False) -> None:
        """Show a thing."""
        got.append(("show", f"{name}{'!' if loud else ''}"))

    @t.command("set")
    def set_(name: str, value: str) -> None:
        """Change a thing."""
        got.append(("set", f"{name}={value}"))

    root = typer.Typer()
    root.add_typer(t, name="thing")

    @root.callback()
    def cb() -> None:
        pass

    return get_command(root), got


@pytest.mark.parametrize("args, expected", [
    (["thing", "a"], ("show", "a")),                 # not a subcommand: the default
    (["thing", "a", "--loud"], ("show", "a!")),      # with the default's options
    (["thing", "--loud", "a"], ("show", "a!")),      # an option first
    (["thing", "show", "b"], ("show", "b")),         # the default named
    (["thing", "set", "a", "1"], ("set", "a=1")),    # a subcommand
    (["thing"], ("show", "None")),                   # nothing: the default (its own error)
])
def test_a_default_group_runs_its_default_unless_a_subcommand_is_named(args, expected):
    cmd, got = _default_app()
    cmd.main(args=args, prog_name="x", standalone_mode=False)
    assert got == [expected]


def test_a_default_groups_help_is_the_defaults_then_its_commands(capsys):
    cmd, _ = _default_app()
    with pytest.raises(SystemExit):
        cmd.main(args=["thing", "--help"], prog_name="x")
    out = capsys.readouterr().out
    assert "Show a thing." in out and "--loud" in out  # the default's help and options
    assert "`x thing show`" in out
    commands = out.split("Commands:")[1]
    assert "show" in commands and "set" in commands


def test_a_default_group_completes_subcommands_and_the_defaults_argument():
    cmd, _ = _default_app()

    class Plain(compat.ShellComplete):
        def source_vars(self):
            return {}

        def get_completion_args(self):
            return [], ""

        def format_completion(self, item):
            return item.value

    comp = Plain(cmd, {}, "x", "_X_COMPLETE")
    assert {c.value for c in comp.get_completions(["thing"], "s")} >= {"show", "set"}
    assert "--loud" in {c.value for c in comp.get_completions(["thing"], "--l")}
    assert "--loud" in {c.value for c in comp.get_completions(["thing", "a"], "--l")}


def test_group_config_is_a_group_whose_default_shows_the_config():
    root = _root()
    config = root.commands["group"].commands["config"]
    assert isinstance(config, compat.DefaultGroup) and config.default_name == "show"
    assert {"show"} <= set(config.commands)

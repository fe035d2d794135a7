"""Every use of Typer's private API, in one place.

Typer 0.29 vendors Click as ``typer._click`` and does not re-export what mqctl needs from it;
a few help and completion details have no public hook either. Everything else goes through
public extension points (``RootGroup``, a ``TyperGroup`` subclass, in :mod:`mqctl.cli.app`;
``context_settings``; parameter callbacks). ``tests/cli/test_typer_compat.py`` checks that each
name below still exists and still does what mqctl relies on, and fails loudly, naming this
module, on a Typer release that changes one: pyproject.toml keeps typer on
:data:`TESTED_TYPER` (one minor version) until that test passes on a new one.

Nothing here may change behaviour: it only names what the rest of mqctl uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Click's classes, as Typer vendors them (typer/_click/)
from typer._click.exceptions import ClickException
from typer._click.globals import get_current_context
from typer._click.shell_completion import CompletionItem, ShellComplete, split_arg_string
from typer.core import TyperGroup

TESTED_TYPER = "0.29"

__all__ = ["TESTED_TYPER", "ClickException", "CompletionItem", "DefaultGroup", "ShellComplete",
           "default_group", "get_current_context", "has_completion", "legacy_shell_complete",
           "param_parser", "set_argument_usage", "set_completion", "split_arg_string"]


def set_argument_usage(param: Any, usage: str) -> None:
    """An argument's name in the usage line (``GROUP``, ``[FILE]``) without the Python type
    Typer appends to it in help (``display_type_rich``) or the braces it puts round a required
    one (``_usage_display_name``): Typer's ``TyperArgument`` has no public setting for
    either."""
    object.__setattr__(param, "display_type_rich", lambda ctx=None: None)
    object.__setattr__(param, "_usage_display_name", lambda u=usage: u)


def param_parser(param: Any) -> Any:
    """The ``parser=`` a parameter was declared with (None if none): Typer keeps it on the
    parameter's ``type_descriptor.parameter_info`` and has no public accessor."""
    info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
    return getattr(info, "parser", None)


def has_completion(param: Any) -> bool:
    """Whether ``param`` has a completion function of its own (``autocompletion=``)."""
    return getattr(param, "_custom_shell_complete", None) is not None


def set_completion(param: Any,
                   fn: Callable[[Any, Any, str], list[CompletionItem] | list[str]]) -> None:
    """Give ``param`` the completion function ``fn(ctx, param, incomplete)`` at run time (while
    the shell completes a line): what ``autocompletion=`` sets when a command is declared.
    ``fn`` may return :class:`CompletionItem` objects, whose ``type`` ("file", "dir") the
    shell scripts of :mod:`mqctl.cli.completion` act on."""
    object.__setattr__(param, "_custom_shell_complete", fn)


def legacy_shell_complete(command: Any, instruction: str) -> int:
    """Typer's own completion protocol (``_MQCTL_COMPLETE=complete_bash`` with ``COMP_WORDS``,
    ``complete_zsh``/``complete_fish`` with ``_TYPER_COMPLETE_ARGS``): what the scripts of
    ``mqctl --install-completion`` (mqctl 0.1) call, answered as before."""
    from typer._completion_classes import completion_init
    from typer.completion import shell_complete

    completion_init()
    return int(shell_complete(command, {}, "mqctl", "_MQCTL_COMPLETE", instruction))


class DefaultGroup(TyperGroup):
    """A command group with a default subcommand: ``mqctl group config G`` runs
    ``mqctl group config show G`` (the first argument is not one of the group's subcommands),
    while ``mqctl group config set G K=V`` runs ``set``. Click has no default subcommand;
    this inserts its name before the group parses its arguments (a first argument that is a
    subcommand, or ``-h``/``--help``, is left as it is, so the group's help lists the
    subcommands). Help is the default command's help followed by the subcommands; completion
    of the first word offers the subcommands and what the default command's first argument
    completes to (group names). A value that is also a subcommand's name needs the default's
    name: ``mqctl group config show set``. Made by :func:`default_group`."""

    default_name = ""

    def takes_default(self, ctx: Any, args: list[str]) -> bool:
        """Whether ``args`` are the default command's (not a subcommand, not the help)."""
        if not args:
            return not ctx.resilient_parsing  # (completing the first word: see shell_complete)
        first = args[0]
        return first not in self.commands and first not in ctx.help_option_names

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if self.takes_default(ctx, list(args)):
            args = [self.default_name, *args]
        return super().parse_args(ctx, args)

    def default_command(self) -> Any:
        return self.commands[self.default_name]

    def _default_context(self, ctx: Any) -> Any:
        return self.default_command().make_context(ctx.info_name, [], parent=ctx.parent,
                                                   resilient_parsing=True)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        cmd = self.default_command()
        with self._default_context(ctx) as sub:
            cmd.format_help(sub, formatter)
        formatter.write_paragraph()
        formatter.write_text(f"Without a command, or with arguments that are not one: "
                             f"`{ctx.command_path} {self.default_name}`.")
        self.format_commands(ctx, formatter)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[CompletionItem]:
        items: list[CompletionItem] = list(super().shell_complete(ctx, incomplete))
        cmd = self.default_command()
        with self._default_context(ctx) as sub:
            if incomplete.startswith("-"):
                return items + list(cmd.shell_complete(sub, incomplete))
            for param in cmd.get_params(sub):
                if getattr(param, "param_type_name", "") == "argument":
                    return items + list(param.shell_complete(sub, incomplete))
        return items


def default_group(name: str) -> type[DefaultGroup]:
    """The :class:`DefaultGroup` class whose default subcommand is ``name`` (for
    ``typer.Typer(cls=...)``)."""
    return type(f"DefaultGroup_{name}", (DefaultGroup,), {"default_name": name})

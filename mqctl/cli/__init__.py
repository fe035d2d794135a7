"""mqctl's command line: the Typer app and the one error boundary, :func:`main`."""

from __future__ import annotations

import os
import sys
import traceback

from mqctl.cli.app import Interrupted as _Interrupted
from mqctl.cli.app import app

__all__ = ["app", "main"]


def _print_error(message: str, hint: str | None) -> None:
    sys.stderr.write(f"mqctl: error: {message}\n")
    if hint:
        sys.stderr.write(f"hint: {hint}\n")


def _sigterm_interrupts() -> object:
    """SIGTERM interrupts like Ctrl-C (KeyboardInterrupt) instead of killing the process
    silently; the commands that change a cluster route both to their own handler while they
    change it (:func:`mqctl.interrupt.guarded`). Returns the handler to restore (None when
    signals cannot be set here: not the main thread)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except (ValueError, OSError):  # not the main thread
        return None


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the process exit code. Nothing below this prints errors or exits."""
    import signal

    previous = _sigterm_interrupts()
    try:
        return _main(argv)
    finally:
        if previous is not None:
            try:
                signal.signal(signal.SIGTERM, previous)  # type: ignore[arg-type]
            except (ValueError, OSError):  # pragma: no cover
                pass


def _main(argv: list[str] | None) -> int:
    import typer
    from typer import main as typer_main

    from mqctl.cli.common import hoist_table
    from mqctl.errors import ExitCode, MqctlError

    args = hoist_table(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args
    _tolerant_stdout()
    from mqctl.cli.typer_compat import ClickException

    command = typer_main.get_command(app)  # a RootGroup: KeyboardInterrupt -> _Interrupted
    if os.environ.get("_MQCTL_COMPLETE"):  # the shell asks for completions (TAB)
        from mqctl.cli.completion import shell_complete

        return shell_complete(command)
    try:
        rv = command.main(args=args, prog_name="mqctl", complete_var="_MQCTL_COMPLETE",
                          standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except ClickException as exc:
        _print_error(exc.format_message(), _usage_hint(exc, command))
        return int(getattr(exc, "exit_code", ExitCode.USAGE) or ExitCode.USAGE)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        sys.stderr.write("mqctl: aborted\n")
        return int(ExitCode.INTERRUPTED)
    except MqctlError as exc:
        if debug:
            traceback.print_exc()
        _print_error(exc.message, exc.hint)
        return int(exc.exit_code)
    except (KeyboardInterrupt, _Interrupted):
        sys.stderr.write("mqctl: interrupted\n")
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        # output piped into `head` and the like: not an error
        try:
            sys.stdout = open("/dev/null", "w")  # noqa: SIM115
        except OSError:
            pass
        return 0
    except Exception as exc:  # the boundary: anything else is a bug
        if debug:
            traceback.print_exc()
        _print_error(f"internal error: {type(exc).__name__}: {exc}",
                     "this is a bug in mqctl; re-run with --debug and report the traceback")
        return int(ExitCode.INTERNAL)


def _tolerant_stdout() -> None:
    """A character stdout's encoding lacks (PYTHONIOENCODING=ascii, a C locale) is written as
    '?' instead of ending the command with UnicodeEncodeError; mqctl.render keeps JSON and
    YAML exact with escapes."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and getattr(sys.stdout, "errors", None) == "strict":
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):  # pragma: no cover - a closed or detached stream
            pass


def _usage_hint(exc: BaseException, root: object = None) -> str:
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else "mqctl"
    name = getattr(exc, "option_name", None)
    if name and ctx is not None and ctx.parent is not None and root is not None:
        # an option of the root command given after a subcommand (`mqctl snapshot ... -q`)
        for param in getattr(root, "params", ()):
            if name in getattr(param, "opts", ()) or name in getattr(param, "secondary_opts", ()):
                sub = path.split(" ", 1)[1] if " " in path else ""
                value = "" if getattr(param, "is_flag", False) else " VALUE"
                return (f"{name} is a global option: give it before the command "
                        f"('mqctl {name}{value} {sub} ...')")
    return f"see '{path} --help'"


def entrypoint() -> None:  # console script
    sys.exit(main())

"""mqctl's command line: the Typer app and the one error boundary, :func:`main`."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

if sys.argv and sys.argv[0].rsplit("/", 1)[-1] == "mqctl":  # the console script
    from mqctl.interrupt import hold_signals

    hold_signals()  # before the imports below: a signal then is an interrupt too

from mqctl.cli.app import Interrupted as _Interrupted
from mqctl.cli.app import OutputLost as _OutputLost
from mqctl.cli.app import app
from mqctl.cli.app import stdout_failed as _stdout_failed

__all__ = ["app", "main"]


def _print_error(message: str, hint: str | None) -> None:
    """One line each, escaped as every human output is (a broker's remark, a client id or a
    group name read from a file may hold ESC sequences or newlines: mqctl.render.printable)."""
    from mqctl.render import printable

    _stderr(f"mqctl: error: {printable(message)}\n"
            + (f"hint: {printable(hint)}\n" if hint else ""))


def _stderr(text: str) -> None:
    """A write to stderr that a terminal gone away (SIGHUP, then EIO), a full disk or a closed
    stderr cannot turn into a traceback: the exit code still says what happened."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        try:
            sys.stderr = open("/dev/null", "w")  # noqa: SIM115
        except OSError:
            pass


class _ClosedStdout:
    """``sys.stdout`` when the process started without one (``mqctl ... >&-``: Python sets
    it to None): a write fails as writing a closed descriptor does (EBADF), and is named."""

    encoding = "utf-8"
    errors = "replace"

    def write(self, s: str) -> int:
        import errno
        import os

        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def flush(self) -> None:
        pass  # (nothing was ever buffered)

    def isatty(self) -> bool:
        return False


class _WatchedStdout:
    """``sys.stdout`` while a command runs: the stream as it was, with the failure of a write
    or flush kept, so that the error boundary can tell a failed output (full disk, closed
    pipe) from any other ``OSError``; everything else is the stream's own."""

    def __init__(self, stream: Any):
        self._stream = stream
        self.failure: OSError | None = None

    def write(self, s: str) -> int:
        try:
            return int(self._stream.write(s))
        except OSError as exc:
            self.failure = exc
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            self.failure = exc
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _output_lost(exc: OSError) -> int:
    """Name a failed write of stdout (docs/errors.md, "Output"): a broken pipe (the reader,
    e.g. ``head``, went away) ends quietly with 141, as SIGPIPE would; anything else (a full
    disk, an I/O error, a closed stdout) is one line with a hint, exit 2 (as a local output
    file that cannot be written). What was not written is dropped, so that the interpreter
    does not fail again when it flushes stdout on exit."""
    import errno
    import os

    from mqctl.errors import ExitCode

    try:  # (not a file descriptor: stdout closed, a StringIO; nothing is flushed on exit)
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    if exc.errno == errno.EPIPE:
        return int(ExitCode.BROKEN_PIPE)
    reason = "it is closed" if exc.errno == errno.EBADF else exc.strerror or str(exc)
    hint = {errno.ENOSPC: "free space on that file system, or send the output elsewhere",
            errno.EDQUOT: "the disk quota is used up: free space, or send the output "
                          "elsewhere",
            errno.EBADF: "stdout is closed (>&-): give the command an open stdout (>/dev/null "
                         "drops the output)"}.get(exc.errno or 0, "check where stdout goes")
    _print_error(f"cannot write the output to stdout: {reason}; the output is incomplete",
                 hint)
    return int(ExitCode.USAGE)


from mqctl.interrupt import HangUp as _HangUp  # noqa: E402 (SIGHUP: an interrupt, exit 129)
from mqctl.interrupt import Terminated as _Terminated  # noqa: E402,F401 (SIGTERM)


def _interrupted_code(hang_up: bool) -> int:
    from mqctl.errors import ExitCode

    _stderr("mqctl: interrupted\n")
    return int(ExitCode.HANGUP if hang_up else ExitCode.INTERRUPTED)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the process exit code. Nothing below this prints errors or exits.

    The one handler of SIGINT, SIGTERM and SIGHUP (:mod:`mqctl.interrupt`) is in place for the
    whole run (installed at process start by ``mqctl`` and ``python -m mqctl``, here for a
    caller in the same process, whose own handlers are put back after)."""
    import signal

    from mqctl.interrupt import install, reset_state

    saved: dict[int, Any] = {}
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            saved[sig] = signal.getsignal(sig)
        except (ValueError, OSError):  # pragma: no cover
            pass
    early = _early_record()
    reset_state()
    if early is not None:  # (recorded by the start-up handler of this process: kept)
        from mqctl.interrupt import _STATE

        _STATE.received.append(early)
    install()
    from mqctl.context import current, use

    try:
        with use(current()):  # (what the run sets in its context ends with it)
            return _main(argv)
    except KeyboardInterrupt as exc:  # before the boundary's own handlers were in place
        return _interrupted_code(isinstance(exc, _HangUp))
    finally:
        for signum, handler in saved.items():
            try:
                if handler is not None:
                    signal.signal(signum, handler)
            except (ValueError, OSError, TypeError):  # pragma: no cover - not the main thread
                pass


def _early_record() -> int | None:
    """A signal the start-up handler recorded before :func:`main` ran (None if none)."""
    from mqctl.interrupt import _STATE

    return _STATE.received[0] if _STATE.mode == "record" and _STATE.received else None


def _main(argv: list[str] | None) -> int:
    from mqctl.cli.common import hoist_table

    args = hoist_table(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args
    if sys.stdout is None:  # started with stdout closed
        sys.stdout = _ClosedStdout()  # type: ignore[assignment]
    _tolerant_stdout()
    stdout = sys.stdout
    sys.stdout = _WatchedStdout(stdout)  # type: ignore[assignment]
    try:
        return _main_watched(args, debug)
    finally:
        if isinstance(sys.stdout, _WatchedStdout):  # (a command may have replaced it)
            sys.stdout = stdout


def _main_watched(args: list[str], debug: bool) -> int:
    from typer import main as typer_main

    from mqctl.cli.typer_compat import ClickException

    # a RootGroup: KeyboardInterrupt -> _Interrupted, a failed write of stdout -> _OutputLost
    command = typer_main.get_command(app)
    from mqctl.interrupt import early_signal

    # from here a signal interrupts where the command is (a change defers it: deferred());
    # one that came while mqctl was starting was recorded until now
    early = early_signal()
    if early is not None:
        import signal

        return _interrupted_code(early == signal.SIGHUP)
    if os.environ.get("_MQCTL_COMPLETE"):  # the shell asks for completions (TAB)
        from mqctl.cli.completion import shell_complete

        return shell_complete(command)
    code = _run(command, args, debug, ClickException)
    try:  # what is still buffered: written now, while a failure can be named
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as exc:
        lost = _output_lost(exc)
        return code or lost  # (an error already reported keeps its code)
    return code


def _run(command: Any, args: list[str], debug: bool, click_exception: type[Exception]) -> int:
    import typer

    from mqctl.errors import ExitCode, MqctlError

    try:
        rv = command.main(args=args, prog_name="mqctl", complete_var="_MQCTL_COMPLETE",
                          standalone_mode=False)
        if rv == ExitCode.INTERRUPTED:  # Typer's bare Exit(130) (an interrupt while parsing)
            import signal

            from mqctl.interrupt import last_signal

            return _interrupted_code(last_signal() == signal.SIGHUP)
        return rv if isinstance(rv, int) else 0
    except _OutputLost as exc:
        return _output_lost(exc.exc)
    except SystemExit:  # rich's Console on a broken pipe (Console.on_broken_pipe: tables,
        # typer's help) exits 1 after pointing stdout at /dev/null: named as ours are
        failure = getattr(sys.stdout, "failure", None)
        if isinstance(failure, BrokenPipeError):
            return _output_lost(failure)
        raise
    except click_exception as exc:
        _print_error(_click_message(exc, command), _usage_hint(exc, command))
        return int(getattr(exc, "exit_code", ExitCode.USAGE) or ExitCode.USAGE)
    except typer.Exit as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):  # Typer's bare Exit(130): say so
            return _interrupted_code(isinstance(exc.__cause__, _HangUp))
        return int(exc.exit_code)
    except typer.Abort:
        _stderr("mqctl: aborted\n")
        return int(ExitCode.INTERRUPTED)
    except MqctlError as exc:
        if debug:
            traceback.print_exc()
        _print_error(exc.message, exc.hint)
        return int(exc.exit_code)
    except (KeyboardInterrupt, _Interrupted) as exc:
        _stderr("mqctl: interrupted\n")
        if isinstance(exc, _HangUp) or isinstance(exc.__cause__, _HangUp):
            return int(ExitCode.HANGUP)
        return int(ExitCode.INTERRUPTED)
    except OSError as exc:
        if _stdout_failed(exc):  # (e.g. --help or a usage error's output)
            return _output_lost(exc)
        return _internal(exc, debug)
    except Exception as exc:  # the boundary: anything else is a bug
        return _internal(exc, debug)


def _internal(exc: Exception, debug: bool) -> int:
    from mqctl.errors import ExitCode

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


def _click_message(exc: Any, root: object = None) -> str:
    """The parser's message in mqctl's words: Typer checks option values with pydantic, whose
    wording ("Value error, ...", "Input should be a valid number, unable to parse string as
    a number") is not for people at a shell."""
    cause = exc.__cause__
    errors = getattr(cause, "errors", None)
    if type(cause).__name__ == "ValidationError" and callable(errors) and hasattr(exc, "message"):
        try:
            first = (errors() or [None])[0]
        except Exception:  # pragma: no cover - another pydantic's API
            first = None
        if isinstance(first, dict):
            exc.message = _validation_text(first, getattr(root, "commands", None) or {})
    return str(exc.format_message())


_BOUNDS = {"greater_than_equal": ("ge", "{} or more"), "greater_than": ("gt", "more than {}"),
           "less_than_equal": ("le", "{} or less"), "less_than": ("lt", "less than {}")}


def _validation_text(err: dict[str, Any], commands: Any) -> str:
    """One pydantic error as mqctl says it: ``'abc' is not a number``, ``must be 0.1 or more,
    not -1``, the enum's own ``'TABLE' is not one of ...``."""
    kind = str(err.get("type", ""))
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "value_error" and ctx.get("error") is not None:
        text = str(ctx["error"])
        if isinstance(value, str) and value != value.lower() and f"'{value.lower()}'" in text:
            text = text.rstrip(".") + f" (names are lower case: {value.lower()!r})"
        return text
    if kind in _BOUNDS and _BOUNDS[kind][0] in ctx:
        key, text = _BOUNDS[kind]
        cut = str(value) if len(str(value)) <= 60 else f"{str(value)[:40]}..."
        return f"must be {text.format(ctx[key])}, not {cut}"
    if kind.startswith(("int_", "float_", "decimal_")):
        what = "a whole number" if kind.startswith("int_") else "a number"
        given = value if not isinstance(value, str) or len(value) <= 60 else (
            f"{value[:40]}...{value[-10:]}")  # (5,000 digits: one short line)
        text = f"{given!r} is not {what}"
        if isinstance(value, str) and (value.startswith("-") or value in commands):
            text += " (is the value missing? it goes right after the option)"
        return text
    msg = str(err.get("msg", ""))
    return msg.removeprefix("Value error, ")


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
    code = main()
    # the exit code is decided: a signal while the interpreter shuts down (it restores the
    # default actions early in finalization) must not turn it into a kill
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (ValueError, OSError):  # pragma: no cover - not the main thread
            pass
    sys.exit(code)

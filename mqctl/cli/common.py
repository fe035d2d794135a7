"""Shared CLI plumbing: the per-invocation state, common options, output and async running.

Only light modules are imported here at module level (``mqctl --help`` must stay fast); the
library, Rich and YAML are imported inside functions.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from typer.core import TyperCommand

from mqctl.fsutil import PathRule

if TYPE_CHECKING:
    from mqctl.admin import BrokerFailure
    from mqctl.api import Cluster
    from mqctl.config import Settings
    from mqctl.render import Result

T = TypeVar("T")


class OutputFormat(StrEnum):
    table = "table"
    wide = "wide"
    plain = "plain"
    json = "json"
    yaml = "yaml"
    csv = "csv"


DEFAULT_WATCH = 2.0
# the bounds of the options given in seconds (a float option without a max takes inf: an
# unbounded wait; tests/cli/test_number_arguments.py checks every one has one)
MAX_WATCH_S = 86_400.0  # --watch: a refresh a day
MAX_VERIFY_WAIT_S = 3_600.0  # --verify-wait: as --timeout and diagnose --sample
MAX_THRESHOLD_S = 31_536_000.0  # a time-lag threshold: a year


def watch_default(args: list[str]) -> list[str]:
    """``--watch`` takes an optional value: insert the default when none follows."""
    out: list[str] = []
    for i, a in enumerate(args):
        if a == "--":
            out.extend(args[i:])
            break
        out.append(a)
        if a in ("--watch", "-w"):
            nxt = args[i + 1] if i + 1 < len(args) else None
            try:  # any number is the value, so that `--watch -1` is refused as out of range
                float(nxt)  # type: ignore[arg-type]
                ok = True
            except (TypeError, ValueError):
                ok = False
            if not ok:
                out.append(str(DEFAULT_WATCH))
    return out


class OptionalWatchCommand(TyperCommand):
    """A command whose ``--watch``/``-w`` value is optional (default DEFAULT_WATCH)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, watch_default(list(args)))


def one_group(positional: str | None, option: str | None, *, example: str) -> str:
    """The group given as the first argument or with -g/--group (required)."""
    group = pick_group(positional, option, example=example, required=True)
    assert group is not None
    return group


def pick_group(positional: str | None, option: str | None, *, example: str,
               required: bool = False) -> str | None:
    """The group given as the first argument or with -g/--group (the same one if both)."""
    from mqctl.errors import UsageError

    if positional is not None and option is not None and positional != option:
        raise UsageError(f"two groups given: {positional!r} (argument) and {option!r} "
                         "(-g/--group)", hint="give the group once, as the first argument or "
                                              f"with -g/--group, e.g. {example}")
    group = positional if positional is not None else option
    if required and not group:
        raise UsageError("missing the consumer group",
                         hint=f"give it as the first argument or with -g/--group, e.g. "
                              f"{example}")
    return group


class PathParser:
    """The ``parser=`` of every option and argument that names a path: the path is checked
    with its :class:`~mqctl.fsutil.PathRule` (length, what is there, symlinks, the
    directories above it: :func:`mqctl.fsutil.path_error`) as the command line is read, before
    any work starts; a bad one is a usage error (exit 2) with a hint. The value stays the text
    given. ``tests/cli/test_path_arguments.py`` fails on a path parameter declared without one."""

    def __init__(self, rule: PathRule) -> None:
        self.rule = rule

    def __call__(self, value: str) -> str:
        from mqctl.cli.typer_compat import get_current_context
        from mqctl.fsutil import check_path

        ctx = get_current_context(silent=True)
        if ctx is not None and ctx.resilient_parsing:  # the shell completes a line
            return value
        return check_path(value, self.rule)

    def __repr__(self) -> str:
        return f"PathParser({self.rule.what!r}, {self.rule.role})"


def in_file(what: str, **kw: Any) -> PathParser:
    """A file the command reads (:class:`PathParser`)."""
    return PathParser(PathRule(what, **kw))


def in_dir(what: str, **kw: Any) -> PathParser:
    """A directory the command reads (:class:`PathParser`)."""
    return PathParser(PathRule(what, directory=True, **kw))


def out_file(what: str, **kw: Any) -> PathParser:
    """A file the command writes (:class:`PathParser`)."""
    return PathParser(PathRule(what, output=True, **kw))


def out_dir(what: str, **kw: Any) -> PathParser:
    """A directory the command writes into (:class:`PathParser`)."""
    return PathParser(PathRule(what, output=True, directory=True, **kw))


@dataclass
class AppState:
    """What the root callback collected; settings are resolved lazily on first use."""

    flags: dict[str, Any] = field(default_factory=dict)
    config_file: str | None = None
    profile: str | None = None
    debug: bool = False
    quiet: bool = False
    table: str | None = None  # --table NAME: the one table to print (render.select_tables)
    _settings: Settings | None = None
    _warned: bool = False

    def settings(self, **overrides: Any) -> Settings:
        from mqctl.config import load_settings

        flags = dict(self.flags)
        flags.update({k: v for k, v in overrides.items() if v is not None})
        key_changed = any(v is not None for v in overrides.values())
        if self._settings is None or key_changed:
            s = load_settings(config_file=self.config_file, profile=self.profile, flags=flags)
            if not self._warned:
                for w in s.warnings:
                    warn(w)
                self._warned = True
            if not key_changed:
                self._settings = s
            return s
        return self._settings

    def output(self, override: OutputFormat | None = None) -> str:
        from mqctl.render import default_format

        if override is not None:
            return override.value
        s = self.settings()
        return s.output or default_format(sys.stdout)


def state(ctx: typer.Context) -> AppState:
    root = ctx.find_root()
    if not isinstance(root.obj, AppState):
        root.obj = AppState()
    return root.obj


def warn(msg: str) -> None:
    """A warning on stderr; ``-q`` leaves nothing but errors, so none then."""
    st = _current_state()
    if st is not None and st.quiet:
        return
    sys.stderr.write(f"mqctl: warning: {escaped(msg)}\n")


def info(st: AppState, msg: str) -> None:
    if not st.quiet:
        sys.stderr.write(f"{escaped(msg)}\n")


def escaped(msg: str) -> str:
    """A line for the terminal with cluster text in it: escaped (mqctl.render.printable)."""
    from mqctl.render import printable

    return printable(msg)


def emit(result: Result, fmt: str) -> None:
    """Through the one renderer, with the invocation's --table and -q (nothing but errors)."""
    from mqctl.render import emit as _emit

    st = _current_state()
    _emit(result, fmt, table=st.table if st else None, quiet=st.quiet if st else False)


def emit_or_lost(result: Result, fmt: str) -> OSError | None:
    """:func:`emit` for the result of a state-changing run, which must outlive its terminal
    (an SSH session that dropped: SIGHUP, then EIO on the tty; ``| head -1``: EPIPE on a
    pipe): the result is written and flushed; a write that fails is dropped (stdout then goes
    to /dev/null) and the error returned, never raised, so the run still writes its files
    (:func:`output_lost_error` then names the exit). None when it was written."""
    try:
        emit(result, fmt)
        sys.stdout.flush()  # (a pipe buffers: its reader's end is found now, not at exit)
        return None
    except OSError as exc:
        _drop_stdout()
        return exc


def output_lost_error(exc: OSError, kept: str | None) -> Any:
    """The exit of a state-changing run whose result could not be written to stdout after
    the change (its files are written): 141 when the reader went away (``| head -1``: as
    SIGPIPE, what a shell's ``pipefail`` sees), else 2 as any stdout that cannot be written;
    one line on stderr saying where the result is kept."""
    import errno

    from mqctl.errors import ExitCode, MqctlError

    reason = "its reader went away" if exc.errno == errno.EPIPE else (
        exc.strerror or type(exc).__name__)
    where = (f"; the result is in {kept}" if kept else
             "; no rollback file was written, so the result is not kept either")
    return MqctlError(f"the result could not be written to stdout ({reason}) after the "
                      f"change{where}",
                      hint="read the result there, or `mqctl offsets rollbacks` for the "
                           "rollback files; give the command a stdout that stays open",
                      exit_code=ExitCode.BROKEN_PIPE if exc.errno == errno.EPIPE
                      else ExitCode.USAGE)


def emit_before_change(plan: Result, fmt: str) -> None:
    """The plan, printed before a change starts: when stdout is gone already, nothing is
    changed (no one would see what happens)."""
    lost = emit_or_lost(plan, fmt)
    if lost is not None:
        from mqctl.errors import ExitCode, MqctlError

        why = lost.strerror or type(lost).__name__
        raise MqctlError(f"the plan could not be written to stdout ({why}): nothing was "
                         "changed", hint="run it again from a terminal that stays open, or "
                         "under nohup, tmux or screen", exit_code=ExitCode.INTERRUPTED)


def _drop_stdout() -> None:
    try:
        sys.stdout = open("/dev/null", "w")  # noqa: SIM115
    except OSError:
        pass


def keep_result(path: Any, result: Result, error: Any = None) -> str | None:
    """The result of a state-changing run as text (the table format, and the error and hint it
    exits with), atomically at ``path`` (beside its rollback file): what it says survives the
    terminal. A note in ``result`` says where, or why it could not be written. Returns the
    path written, or None."""
    import io

    from mqctl.fsutil import atomic_write_text
    from mqctl.render import emit as _emit
    from mqctl.render import printable

    buf = io.StringIO()
    _emit(result, "table", buf)
    if error is not None:
        buf.write(f"mqctl: error: {printable(error.message)}\n")
        if error.hint:
            buf.write(f"hint: {printable(error.hint)}\n")
    try:
        atomic_write_text(path, buf.getvalue())
    except OSError as exc:
        result.notes.append(f"this result could not be kept in a file ({path}: "
                            f"{exc.strerror or exc})")
        return None
    result.notes.append(f"this result is also in {path}")
    return str(path)


def keep_result_beside(result: Result, file: str, error: Any = None) -> str | None:
    """:func:`keep_result` in ``<file>.result.txt`` beside a change's rollback or undo file
    (``.result.2.txt``... if one is there: an earlier run's is never overwritten)."""
    from pathlib import Path

    from mqctl.reset import free_path

    p = Path(file)
    return keep_result(free_path(p.with_name(f"{p.stem}.result.txt")), result, error)


def _current_state() -> AppState | None:
    from mqctl.cli.typer_compat import get_current_context

    ctx = get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return obj if isinstance(obj, AppState) else None


def hoist_table(args: list[str]) -> list[str]:
    """``--table NAME`` anywhere on the line (``mqctl group progress G -o csv --table topics``)
    goes first, where the root command reads it."""
    out: list[str] = []
    front: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i:])
            break
        if a == "--table" and i + 1 < len(args):
            front = [a, args[i + 1]]
            i += 2
            continue
        if a.startswith("--table="):
            front = [a]
        else:
            out.append(a)
        i += 1
    return front + out


@contextmanager
def cluster(st: AppState, namesrv: str | None = None, concurrency: int | None = None,
            **kw: Any) -> Iterator[Cluster]:
    """The command's :class:`mqctl.api.Cluster`: the invocation's settings (with this
    command's --namesrv), its context (display zone, warnings); closed after the block."""
    from mqctl.api import Cluster

    with Cluster(settings=st.settings(namesrv=namesrv), concurrency=concurrency, **kw) as c:
        yield c


def read(st: AppState, namesrv: str | None, concurrency: int | None,
         fetch: Callable[[Cluster], T]) -> T:
    """``fetch(cluster)`` once, on a cluster opened for it."""
    with cluster(st, namesrv, concurrency) as c:
        return fetch(c)


@contextmanager
def progress(st: AppState, description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A Rich progress bar on stderr when it is a terminal and not ``--quiet``."""
    show = not st.quiet and total is not None and total > 1 and _stderr_tty()
    if not show:
        def noop(n: int = 1) -> None:
            return None

        yield noop
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    # a terminal that goes away meanwhile (SIGHUP: EIO) must not end the change it shows
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(),
                  console=Console(file=_Tolerant(sys.stderr)),  # type: ignore[arg-type]
                  transient=True) as p:
        task = p.add_task(description, total=total)

        def advance(n: int = 1) -> None:
            p.advance(task, n)

        yield advance


class _Tolerant:
    """A text stream whose writes are dropped once the terminal behind it is gone."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return int(self._stream.write(text))
            except OSError:
                self._gone = True
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except OSError:
                self._gone = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _stderr_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def watch(c: Cluster, fetch: Callable[[Cluster], T], render: Callable[[T], Result], fmt: str,
          interval: float, count: int | None, view: str = "",
          output: OutputFormat | None = None) -> None:
    """``--watch``: the view read every ``interval`` seconds until ``count`` rounds, with the
    rows' deltas between rounds; full screen on a terminal, JSON Lines otherwise, each round
    as text when a text format was asked with ``-o`` (``output``)
    (:func:`mqctl.cli.watchscreen.watch_rounds`)."""
    from mqctl.cli.watchscreen import watch_rounds

    st = _current_state()
    watch_rounds(lambda: fetch(c), render, fmt=fmt, interval=interval, count=count, view=view,
                 title=f"mqctl {view} @ {';'.join(c.namesrv)}", quiet=bool(st and st.quiet),
                 text=output is not None and output != OutputFormat.json)


def watch_view(st: AppState, namesrv: str | None, concurrency: int | None,
               fetch: Callable[[Cluster], T], render: Callable[[T], Result],
               output: OutputFormat | None, interval: float, count: int | None,
               view: str) -> None:
    """:func:`watch` on a cluster opened for it (one client for the whole watch)."""
    with cluster(st, namesrv, concurrency) as c:
        watch(c, fetch, render, st.output(output), interval, count, view, output)


def raise_partial(failures: list[BrokerFailure], what: str,
                  clients: Sequence[tuple[str, str]] = ()) -> None:
    """Exit 8 after the output: some brokers answered (a fan-out where none did raised
    :class:`mqctl.admin.NothingRead` before anything was printed), or some clients did not
    answer their running info (``clients``: (who, why); the notes name them)."""
    if clients and not failures:
        from mqctl.errors import PartialFailure

        raise PartialFailure(f"{len(clients)} client(s) did not answer "
                             f"GET_CONSUMER_RUNNING_INFO during {what}: "
                             + "; ".join(f"{w}: {m}" for w, m in clients[:5])
                             + (f" and {len(clients) - 5} more" if len(clients) > 5 else ""),
                             list(clients),
                             hint="the output above is incomplete (see the notes): what they "
                                  "run is unknown; run again when they answer")
    if failures:
        from mqctl.admin import failure_hint
        from mqctl.errors import PartialFailure

        detail = "; ".join(f"{f.broker} ({f.addr or 'no address'}): {f.message}"
                           for f in failures[:5])
        more = f" and {len(failures) - 5} more" if len(failures) > 5 else ""
        brokers = ", ".join(sorted({f.broker for f in failures}))
        raise PartialFailure(f"{len(failures)} broker request(s) failed during {what}: "
                             f"{detail}{more}",
                             [(f.broker, f.message) for f in failures],
                             hint=f"the output above is incomplete ({brokers}: see the notes "
                                  f"next to the totals); "
                                  + failure_hint([f.error for f in failures], partial=True))

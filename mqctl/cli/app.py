"""The root Typer app: global options and the command groups.

Each command group lives in its own module under ``mqctl/cli/`` and is registered here.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from mqctl import __version__
from mqctl.cli import (
    allocate,
    cluster,
    completion,
    config_cmd,
    consumers,
    demo,
    group,
    groups,
    lag,
    locks,
    offsets,
    options,
    route,
    sim,
    snapshot,
    timecmd,
    topics,
    wire,
)
from mqctl.cli.common import AppState
from mqctl.cli.typer_compat import DefaultGroup, set_argument_usage

HELP = """\
mqctl: operations toolkit for Apache RocketMQ consumer groups.

Which consumer owns which queue and why, what changes when a consumer joins or leaves, why an
orderly queue is stuck, how far behind a group is (messages and seconds), and how to replay
from a point in time safely. Talks RocketMQ's remoting protocol directly; no Java needed.
"""

# The order of `mqctl --help`: read-only views of a cluster first, then what changes it, the
# offline tools, and the simulated cluster. Commands registered later and not listed here
# (plugins, new command groups) come after the listed views, in registration order.
COMMAND_ORDER = ("cluster", "topics", "route", "consumers", "group", "diagnose", "locks",
                 "allocate", "offsets", "snapshot", "lag", "time", "wire", "config", "completion",
                 "sim", "demo")
_VIEWS_END = "offsets"

# Root options that are also accepted after the subcommand (`mqctl snapshot ... -q`), as -n
# and -o are; a subcommand with an option of the same name keeps its own (`lag report --tz` is
# the time zone of its inputs). Value: whether the option takes a value.
HOISTED = {"-q": False, "--quiet": False, "--debug": False, "--timeout": True, "--tz": True}

# Metavars by parameter name (help shows GROUP, TIME, FILE, never Python types).
_METAVARS = {
    "group": "GROUP", "group_opt": "GROUP", "group_pos": "GROUP", "topic": "TOPIC",
    "namesrv": "ADDR[;ADDR]",
    "profile": "NAME",
    "config": "FILE", "tz": "ZONE", "log_tz": "ZONE", "broker_log_tz": "ZONE",
    "access_key": "KEY", "tls_ca": "FILE", "text": "TIME", "to_time": "TIME",
    "by_duration": "DURATION", "timeout": "SECONDS", "out": "DIR", "state_dir": "DIR",
    "master": "URL", "conf": "KEY=VALUE", "fail_on": "EXPR", "match": "TEXT",
    "client_id": "CLIENT_ID", "strategy": "NAME", "inputs": "INPUT",
    "topology": "FILE", "queue_config": "FILE", "previous": "FILE", "export": "FILE",
    "snapshots": "DIR", "keep": "DURATION", "interval": "DURATION", "max_skew": "DURATION",
    "align": "DURATION", "storm_window": "DURATION", "storm_round_max": "DURATION",
    "unowned_max": "FRACTION", "verify_wait": "SECONDS",
    "scenario": "NAME|FILE", "clock": "{real|accelerated|manual}",
    "add_consumer": "CLIENT_ID", "remove_consumer": "CLIENT_ID", "client": "CLIENT_ID",
    "compare": "STRATEGY", "hours": "HOURS",
}


def _metavar(param: Any) -> str | None:
    desc = getattr(param, "type_descriptor", None)
    t = getattr(param, "type", None) or getattr(desc, "annotation", None)
    choices = getattr(desc, "choices", None) or getattr(t, "choices", None)
    if choices:
        return "{" + "|".join(str(getattr(c, "value", c)) for c in choices) + "}"
    name = (param.name or "").lower()
    if name in _METAVARS:
        return _METAVARS[name]
    if name.endswith(("_file", "file", "_path")) or name in ("path", "rollback"):
        return "FILE"
    if name.endswith("_dir"):
        return "DIR"
    if name.endswith(("_time", "_ts")):
        return "TIME"
    kind = getattr(t, "name", None) or getattr(t, "__name__", "")
    if kind in ("int", "integer", "integer range"):
        return "N"
    if kind in ("float", "float range"):
        return "NUMBER"
    return name.upper() or None


def _set_metavars(cmd: Any, seen: set[int]) -> None:
    """Give every option and argument that takes a value a readable metavar (Typer prints
    ``<list[str]>``, ``<str>``, ``<int range>`` otherwise)."""
    if id(cmd) in seen:
        return
    seen.add(id(cmd))
    for param in getattr(cmd, "params", ()):
        if getattr(param, "is_flag", False) or getattr(param, "count", False):
            continue
        if param.metavar is None:
            param.metavar = _metavar(param)
        if getattr(param, "param_type_name", "") == "argument":
            # Typer appends the Python type to an argument's name and writes a required one
            # as {NAME} (which reads like a choice): the metavar says it all
            usage = (param.metavar if param.required else f"[{param.metavar}]") + (
                "..." if param.nargs != 1 else "")
            set_argument_usage(param, usage)
    for sub in getattr(cmd, "commands", {}).values():
        _set_metavars(sub, seen)


def _takes_value(cmd: Any, opt: str) -> bool | None:
    """Whether ``cmd`` has option ``opt`` taking a value (None: no such option)."""
    for param in getattr(cmd, "params", ()):
        if opt in getattr(param, "opts", ()) or opt in getattr(param, "secondary_opts", ()):
            return not (getattr(param, "is_flag", False) or getattr(param, "count", False))
    return None


def arrange_args(root: Any, ctx: Any, args: list[str]) -> list[str]:
    """Move the root options of :data:`HOISTED` given after the subcommand to the front, and
    turn a bare group (``mqctl``, ``mqctl locks``) into its ``--help``."""
    cmd, i, front = root, 0, []
    while i < len(args):  # the root's own options, then the command path
        a = args[i]
        if a == "--":
            return args
        if a.startswith("-"):
            if cmd is not root:
                break
            i += 2 if ("=" not in a and _takes_value(root, a)) else 1
            continue
        sub = cmd.get_command(ctx, a) if hasattr(cmd, "get_command") else None
        if sub is None:
            break
        cmd, i = sub, i + 1
    if isinstance(cmd, DefaultGroup) and cmd.takes_default(ctx, args[i:]):
        cmd = cmd.default_command()  # `group config G -o json`: the default command's options
    rest, kept = args[i:], []
    if hasattr(cmd, "get_command") and not rest and (cmd is not root or not args):
        return [*args, "--help"]  # a group and nothing to run: its help, exit 0
    j = 0
    while j < len(rest):
        a = rest[j]
        if a == "--":
            kept.extend(rest[j:])
            break
        name = a.split("=", 1)[0] if a.startswith("--") else a
        own = _takes_value(cmd, name)
        if name in HOISTED and own is None:
            if HOISTED[name] and "=" not in a and j + 1 < len(rest):
                front += [a, rest[j + 1]]
                j += 2
            else:
                front.append(a)
                j += 1
            continue
        kept.append(a)
        if own and "=" not in a and j + 1 < len(rest):
            kept.append(rest[j + 1])
            j += 1
        j += 1
    return [*front, *args[:i], *kept] if front else args


class Interrupted(BaseException):
    """A KeyboardInterrupt (Ctrl-C, or SIGTERM/SIGHUP: the one handler of ``mqctl.interrupt``) that
    left a command: carried past Typer, which would turn it into a bare ``Exit(130)``
    (typer/core.py ``_main``) and the process would end with nothing said."""


class OutputLost(BaseException):
    """Writing stdout failed (a full disk, a closed pipe, a closed stdout): carried past
    Click, which turns a broken pipe into a silent ``sys.exit(1)`` (click/core.py ``main``)."""

    def __init__(self, exc: OSError):
        super().__init__(exc)
        self.exc = exc


def stdout_failed(exc: OSError) -> bool:
    """Did ``exc`` come from writing stdout? (The failure itself, or what a caller made of it:
    rich's Console raises its own broken pipe.) ``mqctl.cli._WatchedStdout`` keeps it."""
    import sys

    failure = getattr(sys.stdout, "failure", None)
    return failure is not None and (failure is exc or failure.errno == exc.errno)


class RootGroup(TyperGroup):
    """The root command: readable metavars, a deliberate command order, global options after
    the subcommand, and help (exit 0) for ``mqctl`` with no arguments."""

    _metavars_set = False

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            raise Interrupted from exc
        except OSError as exc:
            if stdout_failed(exc):
                raise OutputLost(exc) from exc
            raise

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not self._metavars_set:  # per command tree: get_command() builds a new one
            _set_metavars(self, set())
            self._metavars_set = True
            if ctx.resilient_parsing:
                # the shell completes a command line: what each parameter offers (group and
                # topic names from the cluster, choices, paths: mqctl.cli.completion)
                from mqctl.cli.completion import attach

                attach(self)
        return super().parse_args(ctx, arrange_args(self, ctx, list(args)))

    def list_commands(self, ctx: Any) -> list[str]:
        names = list(self.commands)
        known = [n for n in COMMAND_ORDER if n in self.commands]
        extra = [n for n in names if n not in COMMAND_ORDER]
        cut = known.index(_VIEWS_END) + 1 if _VIEWS_END in known else len(known)
        return [*known[:cut], *extra, *known[cut:]]


# completion: `mqctl completion bash|zsh|fish` (mqctl/cli/completion.py), not Typer's
# --install-completion, whose bash script splits `-n host:port` at the colon
app = typer.Typer(name="mqctl", help=HELP, cls=RootGroup, no_args_is_help=False,
                  add_completion=False,
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mqctl {__version__}")
        raise typer.Exit(0)


VersionOpt = Annotated[bool, options.VERSION.option(callback=_version)]


@app.callback()
def root(
    ctx: typer.Context,
    namesrv: options.NamesrvOpt = None,
    profile: options.ProfileOpt = None,
    config: options.ConfigOpt = None,
    output: options.OutputOpt = None,
    timeout: options.TimeoutOpt = None,
    tz: options.TzOpt = None,
    table: options.TableOpt = None,
    tls: options.TlsOpt = False,
    tls_ca: options.TlsCaOpt = None,
    tls_insecure: options.TlsInsecureOpt = False,
    access_key: options.AccessKeyOpt = None,
    debug: options.DebugOpt = False,
    quiet: options.QuietOpt = False,
    version: VersionOpt = False,
) -> None:
    st = ctx.obj = AppState(
        flags={"namesrv": namesrv, "output": output.value if output else None,
               "timeout": timeout, "tz": tz, "tls": tls or None, "tls_ca": tls_ca,
               "tls_insecure": tls_insecure or None, "access_key": access_key},
        config_file=config, profile=profile, debug=debug, quiet=quiet, table=table)
    _display_zone(st, tz)
    if debug:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")


def _display_zone(st: AppState, flag: str | None) -> None:
    """The run's context (mqctl.context): the display zone (--tz > MQCTL_TZ > profile tz >
    this machine's) and the sink of warnings; the clock stays the one in effect. A config
    that cannot be read is left to the command that needs it (`sim up` and `wire decode` run
    without one)."""
    from mqctl.cli.common import warn
    from mqctl.context import current, enter
    from mqctl.errors import MqctlError
    from mqctl.timeparse import resolve_tz

    enter(current().with_(warn=warn))
    name = flag or os.environ.get("MQCTL_TZ")
    if name is None:
        try:
            name = st.settings().tz
        except MqctlError:
            name = None
    try:
        enter(current().with_(zone=resolve_tz(name)))
    except MqctlError as exc:
        exc.message = f"{'--tz' if flag else 'MQCTL_TZ'}: {exc.message}"
        raise


app.add_typer(config_cmd.app, name="config")
app.add_typer(wire.app, name="wire")
app.command("time", cls=timecmd.TimeCommand)(timecmd.time_cmd)
route.register(app)
topics.register(app)
cluster.register(app)
consumers.register(app)
group.register(app)
groups.register(app)
app.command("snapshot")(snapshot.snapshot)
allocate.register(app)
app.add_typer(locks.app, name="locks")
app.add_typer(lag.app, name="lag")
app.add_typer(sim.app, name="sim")
app.command("demo")(demo.demo)
app.add_typer(offsets.app, name="offsets")
completion.register(app)

# topic status/consumers, group config, message show
from mqctl.cli import group_config, message, topic  # noqa: E402

app.add_typer(topic.app, name="topic")
app.add_typer(message.app, name="message")
group_config.register(group.group_app)

# mqctl diagnose
from mqctl.cli import diagnose as diagnose_cmd  # noqa: E402

diagnose_cmd.register(app)

# the incident levers: group pause/resume, group config set/rollback, offsets clone
from mqctl.cli import levers as levers_cmd  # noqa: E402

levers_cmd.register(group.group_app, group_config.config_app, offsets.app, group.dlq_app)

# mqctl exporter: the lag report's series live on /metrics
from mqctl.cli import exporter as exporter_cmd  # noqa: E402

exporter_cmd.register(app)

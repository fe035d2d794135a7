"""``mqctl config``: show the effective settings (secrets redacted) and the profiles."""

from __future__ import annotations

import typer

from mqctl.cli.common import emit, state
from mqctl.cli.options import NamesrvOpt, OutputOpt

app = typer.Typer(help="Show effective settings and profiles.", no_args_is_help=True)


@app.command("show")
def show(ctx: typer.Context, output: OutputOpt = None, namesrv: NamesrvOpt = None) -> None:
    """Print every effective setting, its value and where it came from (secrets redacted).

    Precedence: flag > environment > profile > default; of the two environment variables for
    the name servers, MQCTL_NAMESRV wins over NAMESRV_ADDR (set but empty is an error).
    SOURCE is per field: tls.* and acl.* may each come from another place (a secret key never
    from a flag). NOTE names the RocketMQ version the requests announce, the output chosen at
    run time, a CA file that does not exist and what the reset guards' defaults mean
    (confirm_above shows the default in effect). JSON and YAML keep the values' types (null
    when unset).

    Example: mqctl config show -o json
    """
    from mqctl.render import Result, Table, cols

    st = state(ctx)
    s = st.settings(namesrv=namesrv)
    rows = s.redacted()
    emit(Result([Table(cols("setting", "value", "source", "note"), rows)],
                data={r["setting"]: {"value": r["value"], "source": r["source"],
                                     **({"note": r["note"]} if r["note"] else {})}
                      for r in rows}),
         st.output(output))


@app.command("profiles")
def profiles(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List the profiles of the config file."""
    from mqctl.config import profile_rows
    from mqctl.render import Result, Table, cols

    st = state(ctx)
    rows, path = profile_rows(st.config_file)
    emit(Result([Table(cols("profile", "current", "namesrv"), rows, name="profiles")],
                notes=[f"config file: {path}" + ("" if path.exists() else " (not found)")]),
         st.output(output))

"""``mqctl time``: show how mqctl reads a time string (before using it in a reset)."""

from __future__ import annotations

from typing import Annotated

import typer

from mqctl.cli.common import OutputOpt, emit, state


def time_cmd(
    ctx: typer.Context,
    text: Annotated[list[str], typer.Argument(help="Time strings: now, epoch ms, ISO-8601, "
                                                   "yyyy-MM-dd#HH:mm:ss:SSS, -2h, 30m, ...")],
    output: OutputOpt = None,
) -> None:
    """Parse time strings the way every mqctl command does and show the result.

    Example: mqctl time -- -2h "2024-06-01 10:00" 2024-06-01#10:00:00:000
    """
    from mqctl.render import Column, Result, Table
    from mqctl.timeparse import format_local, format_ms, now_ms, parse_time

    st = state(ctx)
    now = now_ms()
    rows = []
    for t in text:
        ms = parse_time(t, now=now)
        rows.append({"input": t, "epoch_ms": ms, "utc": format_ms(ms), "local": format_local(ms),
                     "offset_from_now_s": round((ms - now) / 1000, 3)})
    emit(Result([Table([Column("input", "INPUT"), Column("epoch_ms", "EPOCH MS", "right"),
                        Column("utc", "UTC"), Column("local", "LOCAL"),
                        Column("offset_from_now_s", "FROM NOW (S)", "right")], rows)]),
         st.output(output))

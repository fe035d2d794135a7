"""``mqctl time``: show how mqctl reads a time string (before using it in a reset)."""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.core import TyperCommand

from mqctl.cli.common import emit, state
from mqctl.cli.options import OutputOpt, TimeTextArg

_NEGATIVE = re.compile(r"-([0-9]|P)", re.IGNORECASE)


def _protect_relative(args: list[str]) -> list[str]:
    """``mqctl time -2h`` must read ``-2h`` as a time, not as options ``-2`` and ``-h``: move
    the options first and put every time string after ``--``, keeping their order."""
    opts: list[str] = []
    texts: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            texts.extend(args[i + 1:])
            break
        if a in ("-o", "--output") and i + 1 < len(args):
            opts += [a, args[i + 1]]
            i += 2
            continue
        if (a.startswith("-") and not _NEGATIVE.match(a)) or a.startswith("--output="):
            opts.append(a)
        else:
            texts.append(a)
        i += 1
    return [*opts, "--", *texts] if texts else opts


class TimeCommand(TyperCommand):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _protect_relative(list(args)))


def time_cmd(
    ctx: typer.Context,
    text: TimeTextArg,
    output: OutputOpt = None,
) -> None:
    """Parse time strings the way every mqctl command does and show the result.

    Times run from 1970-01-01T00:00:00Z (epoch ms 0) to 9999-12-31; anything outside is
    refused (exit 2), e.g. 0001-01-01T00:00:00Z or -9999999999999999999h. Times without a
    zone are read in the --tz zone (default this machine's); LOCAL shows each instant in it
    with its offset. FROM NOW is signed: -2h 0m is in the past. An unsigned relative time
    (30m) is read as the past with a warning; a local time in a DST gap or overlap is read as
    Java reads it with a warning here (both candidates named), and refused as a reset target.

    Example: mqctl time -2h "2024-06-01 10:00" 2024-06-01#10:00:00:000

    Example: mqctl --tz Asia/Shanghai time now +10m
    """
    from mqctl.render import Column, Result, Table
    from mqctl.timeparse import conversion_rows

    st = state(ctx)
    rows = conversion_rows(text)
    emit(Result([Table([Column("input", "INPUT"), Column("epoch_ms", "EPOCH MS", "right"),
                        Column("utc", "UTC"), Column("local", "LOCAL"),
                        Column("from_now", "FROM NOW", "right", raw="offset_from_now_s")],
                       rows, name="times")]),
         st.output(output))

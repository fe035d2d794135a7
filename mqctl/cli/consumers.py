"""``mqctl consumers``: a group's clients as every broker sees them, with the consistency
check (read-only)."""

from __future__ import annotations

import typer

from mqctl.cli.common import (
    OptionalWatchCommand,
    emit,
    one_group,
    raise_partial,
    read,
    state,
    watch_view,
)
from mqctl.cli.options import (
    ConcurrencyOpt,
    CountOpt,
    GroupArg,
    GroupOption,
    NamesrvOpt,
    OutputOpt,
    WatchOpt,
)


def consumers(
    ctx: typer.Context,
    group: GroupArg = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
    group_opt: GroupOption = None,
    watch: WatchOpt = None,
    count: CountOpt = None,
) -> None:
    """List a group's clients as EVERY broker sees them, with a consistency check.

    Reports brokers that disagree on membership, duplicate client ids, clients whose
    subscriptions or allocation strategies differ, idle consumers (more consumers than
    queues) and pop consumers. Exit 8 when a broker or a member did not answer. Tables:
    clients (what -o csv prints), findings (--table findings). Example: mqctl consumers
    GID_ORDER
    """
    from mqctl.views.members import unanswered_errors as unanswered
    from mqctl.views.members_rows import members_result

    group = one_group(group, group_opt, example="mqctl consumers GID_ORDER")
    st = state(ctx)
    if watch is not None:
        return watch_view(st, namesrv, concurrency, lambda c: c.consumers(group),
                          members_result, output, watch, count, "consumers")
    m = read(st, namesrv, concurrency, lambda c: c.consumers(group))
    emit(members_result(m), st.output(output))
    raise_partial(m.failures, f"consumers {group}", unanswered(m))


def register(app: typer.Typer) -> None:
    app.command("consumers", cls=OptionalWatchCommand)(consumers)

"""``mqctl snapshot``: capture offsets, lag, members, owners and locks for the lag job."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import typer

from mqctl.cli.common import cluster, emit, progress, state
from mqctl.cli.options import (
    AllGroupsOpt,
    Compression,
    CompressOpt,
    ConcurrencyOpt,
    GroupsOpt,
    IncludeSystemOpt,
    KeepOpt,
    NamesrvOpt,
    OutputOpt,
    SnapshotOutOpt,
)


def snapshot(
    ctx: typer.Context,
    out: SnapshotOutOpt,
    group: GroupsOpt = None,
    all_groups: AllGroupsOpt = False,
    include_system: IncludeSystemOpt = False,
    compress: CompressOpt = Compression.gzip,
    keep: KeepOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """One capture of offsets, min/max offsets, time lag, members, owners and lock state per
    group, written atomically as JSON Lines (docs/exports.md). --group is repeatable;
    --all-groups leaves out RocketMQ's own groups unless --include-system. Safe to run from
    cron every minute: overlapping runs are refused and a killed run leaves no half file.

    --keep deletes older mqctl capture files under OUT once this capture is written (only
    names mqctl gives, by the capture time in the name; the newest file of each cluster
    always stays); `mqctl lag prune --snapshots OUT --keep 7d` shows the same plan without
    capturing.

    A group that could not be read is counted as failed; a capture without any row writes no
    file, and when no group could be read it exits 5 (brokers refused, e.g. a wrong ACL
    secret) or 3 (unreachable). A --group that no broker knows is bad input, exit 2 (as for
    `group progress`), after the other groups were captured. A full disk, a read-only
    directory or an --out that is a regular file: exit 2 with a hint, nothing half written.

    Example: mqctl snapshot --out /var/lib/mqctl/snapshots --all-groups --compress gzip
    --keep 7d
    """
    from mqctl.snapshot import SnapshotRequest

    st = state(ctx)
    request = SnapshotRequest(out, tuple(group or ()), all_groups=all_groups,
                              include_system=include_system, compress=compress.value,
                              keep=keep)
    request.keep_ms()  # (bad input: exit 2 before any I/O)
    bound = concurrency or st.settings(namesrv=namesrv).concurrency
    with ExitStack() as bar, cluster(st, namesrv, concurrency, max_in_flight=bound) as c:
        advance: Any = None

        def shown(step: str, n: int) -> None:  # the progress bar, once the groups are known
            nonlocal advance
            if step == "groups":
                advance = bar.enter_context(progress(st, "snapshot", n))
            elif advance is not None:
                advance(n)

        outcome = c.snapshot(request, shown)
    result = outcome.result()
    if result is not None:
        emit(result, st.output(output))
    err = outcome.error()
    if err is not None:
        raise err

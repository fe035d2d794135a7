"""``mqctl snapshot``: capture offsets, lag, members, owners and locks for the lag job."""

from __future__ import annotations

from typing import Any

import typer

from mqctl.cli.common import emit, progress, state
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
    import dataclasses

    from mqctl.admin import Admin
    from mqctl.errors import PartialFailure, UsageError
    from mqctl.remoting.client import RemotingClient
    from mqctl.snapshot import (
        apply_prune,
        capture,
        discover_groups,
        list_captures,
        parse_keep,
        plan_prune,
        run_lock,
        snapshot_result,
        write,
    )
    from mqctl.views.existence import group_exists

    st = state(ctx)
    if not group and not all_groups:
        raise UsageError("say which groups to capture", hint="pass --group G (repeatable) or "
                         "--all-groups")
    keep_ms = parse_keep(keep) if keep is not None else None
    settings = st.settings(namesrv=namesrv)
    conc = concurrency or settings.concurrency
    opts = dataclasses.replace(settings.client_options(), max_in_flight=conc)
    ns = ";".join(settings.namesrv)

    discovery: list[Any] = []  # masters that did not list their subscription groups

    async def go() -> Any:
        async with RemotingClient(opts) as client:
            admin = Admin(client, settings.namesrv, concurrency=conc)
            groups = sorted(set(group or []))
            if all_groups:
                groups = sorted(set(groups) | set(await discover_groups(
                    admin, include_system=include_system, failures=discovery)))
            with progress(st, "snapshot", len(groups)) as advance:
                snap = await capture(admin, groups, namesrv=ns,
                                     on_group_done=lambda _o: advance(1))
            # a --group that gave no row: a typo would otherwise capture nothing every minute
            empty = [g for g in sorted(set(group or []))
                     if g not in snap.group_errors and not any(r["group"] == g
                                                               for r in snap.rows)]
            missing = [g for g in empty if await group_exists(admin, g) is False]
            return snap, missing

    import asyncio

    pruned: list[Any] = []
    with run_lock(out):
        snap, missing = asyncio.run(go())
        path = write(snap, out, compress=compress.value)
        if keep_ms is not None:  # under the lock: no capture of an overlapping run is half seen
            pruned = apply_prune(plan_prune(list_captures(out), keep_ms=keep_ms))
    if missing and not snap.rows and not snap.group_errors and not pruned:
        # only unknown groups: nothing to show, as `group progress GID_TYPO` (exit 2)
        raise _unknown_groups(missing, [], "nothing was captured: no file was written")
    emit(snapshot_result(snap, path, missing, pruned, keep), st.output(output))
    problems = [(g, e) for g, e in snap.group_errors.items()] + [
        (f"{g}@{f.broker}", f.message) for g, f in snap.failures] + [
        (f"group list@{f.broker}", f.message) for f in discovery]
    if snap.groups and len(snap.group_errors) + len(missing) == len(snap.groups) \
            and snap.group_errors:
        # not one group was read: a failure with the cause's exit code (5 broker error,
        # 3 unreachable), not a partial capture
        from mqctl.admin import NothingRead

        raise NothingRead(f"for any group to capture ({', '.join(snap.groups)})",
                          [f for e in snap.group_exc.values()
                           for f in getattr(e, "failures", [])]
                          or [_as_failure(g, e) for g, e in snap.group_exc.items()])
    kept = (f"the file {path} holds the rest of the capture" if path
            else "no row was captured: no file was written")
    if missing:
        raise _unknown_groups(missing, problems, kept)
    if problems:
        from mqctl.admin import failure_hint

        errors = [*snap.group_exc.values(), *(f.error for _, f in snap.failures),
                  *(f.error for f in discovery)]
        raise PartialFailure(f"{len(problems)} part(s) of the capture failed: "
                             + "; ".join(f"{w}: {e}" for w, e in problems[:5]), problems,
                             hint=kept + (f"; {failure_hint(errors, partial=True)}"
                                          if errors else ""))


def _unknown_groups(missing: list[str], problems: list[tuple[str, str]], kept: str) -> Any:
    """A --group no broker knows is bad input (exit 2), as for `group progress GID_TYPO`."""
    from mqctl.admin import NotFoundError

    also = (f"; also {len(problems)} part(s) of the capture failed: "
            + "; ".join(f"{w}: {e}" for w, e in problems[:3])) if problems else ""
    return NotFoundError(f"{len(missing)} group(s) given with --group not known to any broker "
                         "(no member, no committed offset, no subscription group): "
                         f"{', '.join(missing)}{also}",
                         hint=f"check the name (it is case-sensitive); {kept}")



def _as_failure(group: str, exc: Any) -> Any:
    from mqctl.admin import BrokerFailure

    return BrokerFailure(group, getattr(exc, "addr", None), exc)

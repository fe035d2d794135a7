"""``mqctl snapshot``: capture offsets, lag, members, owners and locks for the lag job."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from mqctl.cli.common import ConcurrencyOpt, NamesrvOpt, OutputOpt, emit, progress, state


def snapshot(
    ctx: typer.Context,
    out: Annotated[str, typer.Option("--out", help="Output directory (files go to "
                                                   "OUT/YYYY-MM-DD/).")],
    group: Annotated[list[str] | None, typer.Option("--group", "-g", help="Group to capture "
                                                    "(repeatable).", show_default=False)] = None,
    all_groups: Annotated[bool, typer.Option("--all-groups", help="Capture every group the "
                                             "cluster knows.")] = False,
    include_system: Annotated[bool, typer.Option("--include-system", help="With --all-groups: "
                                                 "keep system groups too.")] = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """One capture of offsets, min/max offsets, time lag, members, owners and lock state per
    group, written atomically as JSON Lines (docs/exports.md). Safe to run from cron every
    minute: overlapping runs are refused and a killed run leaves no half file.

    Example: mqctl snapshot --out /var/lib/mqctl/snapshots --all-groups
    """
    import dataclasses

    from mqctl.admin import Admin
    from mqctl.errors import PartialFailure, UsageError
    from mqctl.inspect import group_exists
    from mqctl.remoting.client import RemotingClient
    from mqctl.render import Result, Table, cols
    from mqctl.snapshot import capture, discover_groups, run_lock, write

    st = state(ctx)
    if not group and not all_groups:
        raise UsageError("say which groups to capture", hint="pass --group G (repeatable) or "
                         "--all-groups")
    settings = st.settings(namesrv=namesrv)
    conc = concurrency or settings.concurrency
    opts = dataclasses.replace(settings.client_options(), max_in_flight=conc)
    ns = ";".join(settings.namesrv)

    async def go() -> Any:
        async with RemotingClient(opts) as client:
            admin = Admin(client, settings.namesrv, concurrency=conc)
            groups = sorted(set(group or []))
            if all_groups:
                groups = sorted(set(groups) | set(await discover_groups(
                    admin, include_system=include_system)))
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

    with run_lock(out):
        snap, missing = asyncio.run(go())
        path = write(snap, out)
    per_group: dict[str, int] = {}
    for r in snap.rows:
        per_group[r["group"]] = per_group.get(r["group"], 0) + 1
    rows = [{"group": g, "rows": per_group.get(g, 0),
             "status": "failed: " + snap.group_errors[g] if g in snap.group_errors else (
                 "not found" if g in missing else
                 "partial" if any(f[0] == g for f in snap.failures) else "ok")}
            for g in snap.groups]
    data = {"file": str(path), "capture_ts": snap.capture_ts, "cluster": snap.cluster,
            "rows": len(snap.rows), "groups": rows,
            "failures": [{"group": g, "broker": f.broker, "error": f.message}
                         for g, f in snap.failures]}
    emit(Result([Table(cols("group", "rows", "status"), rows)], data=data,
                notes=[f"wrote {len(snap.rows)} row(s) for {len(snap.groups)} group(s) to "
                       f"{path}"]), st.output(output))
    problems = [(g, e) for g, e in snap.group_errors.items()] + [
        (g, "no broker knows this group (check the name)") for g in missing] + [
        (f"{g}@{f.broker}", f.message) for g, f in snap.failures]
    if problems:
        raise PartialFailure(f"{len(problems)} part(s) of the capture failed: "
                             + "; ".join(f"{w}: {e}" for w, e in problems[:5]), problems,
                             hint="the file holds everything that was captured")

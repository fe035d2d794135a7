"""``mqctl diagnose GROUP``: why a group is behind or stuck, with the evidence (read-only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import OptionalWatchCommand, emit, one_group, read, state, watch_view
from mqctl.cli.options import (
    ConcurrencyOpt,
    CountOpt,
    GroupArg,
    GroupOption,
    NamesrvOpt,
    OutputOpt,
    SampleOpt,
    StateDirReadOpt,
    TopicOpt,
    WatchOpt,
)

if TYPE_CHECKING:
    from mqctl.api import Cluster
    from mqctl.diagnose import Diagnosis

# the exit code when something is wrong (ExitCode.THRESHOLD, as `lag report --fail-on`)
PROBLEMS_EXIT = 9


def diagnose(
    ctx: typer.Context,
    group: GroupArg = None,
    topic: TopicOpt = None,
    sample: SampleOpt = None,
    state_dir: StateDirReadOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
    group_opt: GroupOption = None,
    watch: WatchOpt = None,
    count: CountOpt = None,
) -> None:
    """Why is this group behind or stuck: a ranked list of findings, each with the numbers
    read (where, when), why it explains the lag or the stop, and the next command.

    Reads (read-only, as every view) the members and each client's running info on every
    broker, offsets and time lag, the group's config, the topics' permissions, the retry and
    DLQ topics and the brokers' runtime info, and checks: nobody consumes (offline,
    consumeEnable=false, topic not readable), queues nobody consumes (unowned, duplicate ids,
    mixed strategies, split member lists, subscriptions, idle clients), orderly queues stuck
    on a lock, the consumer as the bottleneck (flow control, saturated threads, a blocked
    listener), failing consumption (retry, DLQ), offsets not committed (--sample), lag on a few
    queues or one broker, busy brokers and lagging slaves, pop groups; or says nothing is
    wrong, with the numbers that say so. A check whose data could not be read is not made.

    Exit 0: nothing wrong found; 9: something is (a warning or error finding); 8: part of the
    data could not be read (wins over 9). --topic narrows the per-queue checks; the group-wide
    checks always run. Tables: findings (what -o csv prints), checks.
    docs/diagnose.md explains every finding.

    Example: mqctl diagnose GID_AUDIT --sample 10
    """
    from mqctl.diagnose.rows import diagnose_result

    group = one_group(group, group_opt, example="mqctl diagnose GID_AUDIT")
    st = state(ctx)

    def once(c: Cluster) -> Diagnosis:
        return c.diagnose(group, topic=topic, sample_s=sample, state_dir=state_dir)

    if watch is not None:
        return watch_view(st, namesrv, concurrency, once, diagnose_result, output,
                          watch, count, "diagnose")
    d: Diagnosis = read(st, namesrv, concurrency, once)
    emit(diagnose_result(d), st.output(output))
    if d.partial:
        from mqctl.errors import PartialFailure

        what = sorted(d.unread) or sorted({f.broker for f in d.failures})
        raise PartialFailure(f"part of the data could not be read ({'; '.join(what[:5])}"
                             + (f" and {len(what) - 5} more" if len(what) > 5 else "")
                             + "): the findings that need it were not made",
                             [(f.broker, f.message) for f in d.failures],
                             hint="see 'not read' under the output; run again when the "
                                  "brokers and clients answer")
    if d.problems:
        raise typer.Exit(PROBLEMS_EXIT)


def register(app: typer.Typer) -> None:
    app.command("diagnose", cls=OptionalWatchCommand)(diagnose)

"""``mqctl group config GROUP``: the subscription group config on every broker (read-only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import emit, one_group, read, state
from mqctl.cli.options import ConcurrencyOpt, GroupArg, GroupOption, NamesrvOpt, OutputOpt
from mqctl.cli.typer_compat import default_group

if TYPE_CHECKING:
    from mqctl.views.group_config import GroupConfigView


def config(
    ctx: typer.Context,
    group: GroupArg = None,
    group_opt: GroupOption = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Show the group's subscription group config on every broker side by side and flag
    fields the brokers disagree on: consumeEnable, consumeFromMinEnable,
    consumeBroadcastEnable, retryQueueNums, retryMaxTimes, brokerId,
    whichBrokerWhenConsumeSlowly, notifyConsumerIdsChangedEnable; on 5.x also
    consumeMessageOrderly, groupRetryPolicy, consumeTimeoutMinute.

    Read with GET_ALL_SUBSCRIPTIONGROUP_CONFIG, as mqadmin does (the 5.x single-group request
    would create a misspelt group). Example: mqctl group config GID_PAY
    """
    from mqctl.views.group_config_rows import config_result

    group = one_group(group, group_opt, example="mqctl group config GID_PAY")
    st = state(ctx)
    view: GroupConfigView = read(st, namesrv, concurrency, lambda c: c.group_config(group))
    emit(config_result(view), st.output(output))
    if view.failures:
        from mqctl.cli.common import raise_partial

        raise_partial(view.failures, f"group config {group}")


config_app = typer.Typer(
    cls=default_group("show"), no_args_is_help=False,
    help="The group's subscription group config: show it (the default), change it, roll a "
         "change back.")
config_app.command("show")(config)


def register(group_app: typer.Typer) -> None:
    group_app.add_typer(config_app, name="config")

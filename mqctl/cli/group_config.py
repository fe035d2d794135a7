"""``mqctl group config GROUP``: the subscription group config on every broker (read-only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from mqctl.cli.common import (
    emit,
    make_admin,
    one_group,
    state,
    with_client,
)
from mqctl.cli.options import ConcurrencyOpt, GroupArg, GroupOption, NamesrvOpt, OutputOpt

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
    from mqctl.views.group_config import capture_group_config
    from mqctl.views.group_config_rows import config_result

    group = one_group(group, group_opt, example="mqctl group config GID_PAY")
    st = state(ctx)
    settings = st.settings(namesrv=namesrv)

    async def go(client: Any) -> GroupConfigView:
        admin = make_admin(client, settings, concurrency)
        return await capture_group_config(admin, group)

    view = with_client(st, settings, go)
    emit(config_result(view), st.output(output))
    if view.failures:
        from mqctl.cli.common import raise_partial

        raise_partial(view.failures, f"group config {group}")


def register(group_app: typer.Typer) -> None:
    group_app.command("config")(config)

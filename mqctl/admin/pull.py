"""The header of a PULL_MESSAGE that reads without moving any group's offset, as mqadmin's
tools pull (``Admin.pull_message``; ``mqctl message show`` decodes the answer in
:mod:`mqctl.views.message`)."""

from __future__ import annotations

from typing import Any

from mqctl.models import MessageQueue
from mqctl.remoting.codes import PULL_FLAG_SUBSCRIPTION

TOOLS_CONSUMER_GROUP = "TOOLS_CONSUMER"  # MixAll.TOOLS_CONSUMER_GROUP
READ_SYS_FLAG = PULL_FLAG_SUBSCRIPTION  # no commit, no suspend: buildSysFlag(false, false, true,
#                                          false), as mqadmin's pull


def read_pull_fields(mq: MessageQueue, offset: int, max_nums: int = 1) -> dict[str, Any]:
    """PullMessageRequestHeader for a read that commits nothing (every @CFNotNull field)."""
    return {"consumerGroup": TOOLS_CONSUMER_GROUP, "topic": mq.topic, "queueId": mq.queue_id,
            "queueOffset": offset, "maxMsgNums": max_nums, "sysFlag": READ_SYS_FLAG,
            "commitOffset": 0, "suspendTimeoutMillis": 0, "subscription": "*",
            "subVersion": 0, "expressionType": "TAG", "bname": mq.broker_name}


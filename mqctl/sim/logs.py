"""Client and broker log files in RocketMQ's own line formats (rocketmq-protocol.md section 9).

* 5.x client (``rmq.client.logback.xml``): ``yyyy-MM-dd HH:mm:ss.SSS LEVEL [pid] [thread]
  [logger#?:?] - message``, always GMT+8. The pattern asks for ``%method:%line``, but the
  appender is asynchronous without caller data, so the real 5.3.3 client prints ``?:?`` on
  every line (all 2139 lines of 5.3.3/client-logs/*.log).
* 4.x client (``ClientLogger``): ``yyyy-MM-dd HH:mm:ss,SSS LEVEL RocketmqClient - message`` with
  ``\\r\\n`` line ends, in the client host's time zone (the simulation's hosts run in UTC).
* broker ``lock.log`` (``rmq.broker.logback.xml``): ``yyyy-MM-dd HH:mm:ss LEVEL thread -
  message``, GMT+8, second resolution.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import IO

from mqctl.fsutil import open_append

GMT8 = timezone(timedelta(hours=8))

# where each simulated line comes from in a 5.3 Java client: (thread, logger as %logger{12}
# abbreviates it) -- the method in the comment is the one that writes it (RebalanceImpl,
# RebalancePushImpl, ClientRemotingProcessor, RemoteBrokerOffsetStore,
# AbstractAllocateMessageQueueStrategy, ...). "{group}" in a thread name is the consumer group.
_RI = "o.a.r.c.i.c.RebalanceImpl"
_PUSH = "o.a.r.c.i.c.DefaultMQPushConsumerImpl"
_STORE = "o.a.r.c.c.s.RemoteBrokerOffsetStore"
_CRP = "o.a.r.c.i.ClientRemotingProcessor"
_MCI = "o.a.r.c.i.f.MQClientInstance"
LOGGERS: dict[str, tuple[str, str]] = {
    "topic_missing": ("RebalanceService", _RI),  # rebalanceByTopic
    "no_cids": ("RebalanceService", _RI),  # rebalanceByTopic
    "alloc_error": ("RebalanceService", _RI),  # rebalanceByTopic
    "changed": ("RebalanceService", _RI),  # rebalanceByTopic
    "broadcast": ("RebalanceService", _RI),  # rebalanceByTopic
    "remove": ("RebalanceService", _RI),  # updateProcessQueueTableInRebalance
    "add_failed": ("RebalanceService", _RI),  # updateProcessQueueTableInRebalance
    "add": ("RebalanceService", _RI),  # updateProcessQueueTableInRebalance
    "lock": ("RebalanceService", _RI),  # lock
    "unlock": ("RebalanceService", _RI),  # unlock
    "unlock_ok": ("Thread-1", _RI),  # unlockAll (shutdown: ConsumeMessageOrderlyService)
    "lockall_ok": ("ConsumeMessageScheduledThread_{group}_1", _RI),  # lockAll
    "lockall_failed": ("ConsumeMessageScheduledThread_{group}_1", _RI),  # lockAll
    # AbstractAllocateMessageQueueStrategy.check
    "not_in_cids": ("RebalanceService", "o.a.r.c.c.r.AbstractAllocateMessageQueueStrategy"),
    "mqchanged": ("RebalanceService", "o.a.r.c.i.c.RebalancePushImpl"),  # messageQueueChanged
    "notify": ("NettyClientPublicExecutor_1", _CRP),  # notifyConsumerIdsChanged
    "reset": ("NettyClientPublicExecutor_1", _CRP),  # resetOffset
    "persist": ("MQClientFactoryScheduledThread", _STORE),  # persistAll
    # a pull answered PULL_OFFSET_MOVED (a server-side reset): DefaultMQPushConsumerImpl's
    # OFFSET_ILLEGAL case, then RebalanceImpl.removeProcessQueue
    "offset_illegal": ("NettyClientPublicExecutor_1", _PUSH),  # onSuccess
    "pull_later": ("PullMessageService", _PUSH),  # pullMessage
    # a pull answered with an error (NO_PERMISSION: consumeEnable=false): PullCallback
    "pull_exception": ("NettyClientPublicExecutor_1", _PUSH),  # onException
    "start_begin": ("main", _PUSH),  # start
    "factory_ok": ("main", _MCI),  # start
    "start_ok": ("main", _PUSH),  # start
    "shutdown_ok": ("Thread-1", _PUSH),  # shutdown
    "unregister": ("Thread-1", _MCI),  # unregisterClient
    "suspend": ("NettyClientPublicExecutor_1", _PUSH),  # suspend
    "resume": ("NettyClientPublicExecutor_1", _PUSH),  # resume
    "persist_one": ("RebalanceService", _STORE),  # persist
    "remove_offset": ("RebalanceService", _STORE),  # removeOffset
    "fix_offset": ("PullMessageServiceScheduledThread", _RI),  # removeProcessQueue
    "offset_fixed": ("PullMessageServiceScheduledThread", _PUSH),  # run
}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@#-]+", "_", name)


class ClientLog:
    """``rocketmq_client.log`` of one simulated client process."""

    def __init__(self, log_dir: str, client_id: str, *, v5: bool = True, pid: int = 4242):
        self.path = Path(log_dir) / "clients" / _safe(client_id) / "rocketmq_client.log"
        self.v5 = v5
        self.pid = pid
        self._fh: IO[str] | None = open_append(self.path, "the client log")

    def write(self, ts_ms: int, kind: str, message: str, level: str = "INFO",
              group: str = "") -> None:
        if self._fh is None:
            return
        if self.v5:
            dt = datetime.fromtimestamp(ts_ms / 1000, GMT8)
            thread, logger = LOGGERS[kind]
            thread = thread.replace("{group}", group)
            stamp = dt.strftime("%Y-%m-%d %H:%M:%S.") + f"{ts_ms % 1000:03d}"
            self._fh.write(f"{stamp} {level:<5} [{self.pid}] [{thread}] [{logger}#?:?]"
                           f" - {message}\n")
        else:
            dt = datetime.fromtimestamp(ts_ms / 1000, UTC)
            stamp = dt.strftime("%Y-%m-%d %H:%M:%S,") + f"{ts_ms % 1000:03d}"
            self._fh.write(f"{stamp} {level} RocketmqClient - {message}\r\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class LockLog:
    """The broker's ``lock.log`` (logger RocketmqRebalanceLock)."""

    def __init__(self, log_dir: str, broker: str):
        self.path = Path(log_dir) / "brokers" / _safe(broker) / "lock.log"
        self._fh: IO[str] | None = open_append(self.path, "the broker's lock.log")

    def write(self, ts_ms: int, level: str, message: str) -> None:
        if self._fh is None:
            return
        stamp = datetime.fromtimestamp(ts_ms / 1000, GMT8).strftime("%Y-%m-%d %H:%M:%S")
        self._fh.write(f"{stamp} {level} AdminBrokerThread_1 - {message}\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def mq_text(topic: str, broker: str, qid: int) -> str:
    return f"MessageQueue [topic={topic}, brokerName={broker}, queueId={qid}]"


__all__ = ["ClientLog", "LockLog", "mq_text", "os"]

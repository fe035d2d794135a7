"""Client and broker log files in RocketMQ's own line formats (rocketmq-protocol.md section 9).

* 5.x client (``rmq.client.logback.xml``): ``yyyy-MM-dd HH:mm:ss.SSS LEVEL [pid] [thread]
  [logger#method:line] - message``, always GMT+8.
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

GMT8 = timezone(timedelta(hours=8))

# where each simulated line comes from in a 5.3 Java client: (thread, logger as %logger{12}
# abbreviates it, method, line) -- line numbers of apache/rocketmq develop (5.3.4-SNAPSHOT):
# RebalanceImpl, RebalancePushImpl, ClientRemotingProcessor, RemoteBrokerOffsetStore,
# AbstractAllocateMessageQueueStrategy. "{group}" in a thread name is the consumer group.
_RI = "o.a.r.c.i.c.RebalanceImpl"
LOGGERS: dict[str, tuple[str, str, str, int]] = {
    "topic_missing": ("RebalanceService", _RI, "rebalanceByTopic", 293),
    "no_cids": ("RebalanceService", _RI, "rebalanceByTopic", 298),
    "alloc_error": ("RebalanceService", _RI, "rebalanceByTopic", 318),
    "changed": ("RebalanceService", _RI, "rebalanceByTopic", 330),
    "broadcast": ("RebalanceService", _RI, "rebalanceByTopic", 277),
    "remove": ("RebalanceService", _RI, "updateProcessQueueTableInRebalance", 461),
    "add_failed": ("RebalanceService", _RI, "updateProcessQueueTableInRebalance", 471),
    "add": ("RebalanceService", _RI, "updateProcessQueueTableInRebalance", 485),
    "lock": ("RebalanceService", _RI, "lock", 172),
    "unlock": ("RebalanceService", _RI, "unlock", 83),
    "lockall_ok": ("ConsumeMessageScheduledThread_{group}_1", _RI, "lockAll", 211),
    "lockall_failed": ("ConsumeMessageScheduledThread_{group}_1", _RI, "lockAll", 217),
    "not_in_cids": ("RebalanceService", "o.a.r.c.c.r.AbstractAllocateMessageQueueStrategy",
                    "check", 45),
    "mqchanged": ("RebalanceService", "o.a.r.c.i.c.RebalancePushImpl", "messageQueueChanged",
                  62),
    "notify": ("NettyClientPublicExecutor_1", "o.a.r.c.i.ClientRemotingProcessor",
               "notifyConsumerIdsChanged", 139),
    "reset": ("NettyClientPublicExecutor_1", "o.a.r.c.i.ClientRemotingProcessor", "resetOffset",
              153),
    "persist": ("MQClientFactoryScheduledThread", "o.a.r.c.c.s.RemoteBrokerOffsetStore",
                "persistAll", 135),
    # a pull answered PULL_OFFSET_MOVED (a server-side reset): DefaultMQPushConsumerImpl's
    # OFFSET_ILLEGAL case, then RebalanceImpl.removeProcessQueue
    "offset_illegal": ("NettyClientPublicExecutor_1", "o.a.r.c.i.c.DefaultMQPushConsumerImpl",
                       "onSuccess", 403),
    "pull_later": ("PullMessageService", "o.a.r.c.i.c.DefaultMQPushConsumerImpl", "pullMessage",
                   330),
    "start_begin": ("main", "o.a.r.c.i.c.DefaultMQPushConsumerImpl", "start", 926),
    "factory_ok": ("main", "o.a.r.c.i.f.MQClientInstance", "start", 323),
    "start_ok": ("main", "o.a.r.c.i.c.DefaultMQPushConsumerImpl", "start", 998),
    "shutdown_ok": ("Thread-1", "o.a.r.c.i.c.DefaultMQPushConsumerImpl", "shutdown", 912),
    "unregister": ("Thread-1", "o.a.r.c.i.f.MQClientInstance", "unregisterClient", 1017),
    "suspend": ("NettyClientPublicExecutor_1", "o.a.r.c.i.c.DefaultMQPushConsumerImpl",
                "suspend", 1290),
    "resume": ("NettyClientPublicExecutor_1", "o.a.r.c.i.c.DefaultMQPushConsumerImpl",
               "resume", 1297),
    "persist_one": ("RebalanceService", "o.a.r.c.c.s.RemoteBrokerOffsetStore", "persist", 163),
    "remove_offset": ("RebalanceService", "o.a.r.c.c.s.RemoteBrokerOffsetStore", "removeOffset",
                      185),
    "fix_offset": ("PullMessageServiceScheduledThread", _RI, "removeProcessQueue", 737),
    "offset_fixed": ("PullMessageServiceScheduledThread",
                     "o.a.r.c.i.c.DefaultMQPushConsumerImpl", "run", 422),
}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@#-]+", "_", name)


class ClientLog:
    """``rocketmq_client.log`` of one simulated client process."""

    def __init__(self, log_dir: str, client_id: str, *, v5: bool = True, pid: int = 4242):
        self.path = Path(log_dir) / "clients" / _safe(client_id) / "rocketmq_client.log"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.v5 = v5
        self.pid = pid
        self._fh: IO[str] | None = open(self.path, "a", encoding="utf-8", newline="")  # noqa: SIM115

    def write(self, ts_ms: int, kind: str, message: str, level: str = "INFO",
              group: str = "") -> None:
        if self._fh is None:
            return
        if self.v5:
            dt = datetime.fromtimestamp(ts_ms / 1000, GMT8)
            thread, logger, method, line = LOGGERS[kind]
            thread = thread.replace("{group}", group)
            stamp = dt.strftime("%Y-%m-%d %H:%M:%S.") + f"{ts_ms % 1000:03d}"
            self._fh.write(f"{stamp} {level:<5} [{self.pid}] [{thread}] [{logger}#{method}:{line}]"
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

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

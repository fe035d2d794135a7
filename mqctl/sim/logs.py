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

LOGGERS = {
    "rebalance": ("RebalanceService", "o.a.r.c.i.c.RebalanceImpl",
                  "updateProcessQueueTableInRebalance", 485),
    "changed": ("RebalanceService", "o.a.r.c.i.c.RebalanceImpl", "rebalanceByTopic", 330),
    "lock": ("MQClientFactoryScheduledThread", "o.a.r.c.i.c.RebalanceImpl", "lockAll", 217),
    "notify": ("NettyClientPublicExecutor_1", "o.a.r.c.i.ClientRemotingProcessor",
               "notifyConsumerIdsChanged", 156),
    "persist": ("MQClientFactoryScheduledThread", "o.a.r.c.c.s.RemoteBrokerOffsetStore",
                "persistAll", 132),
    "reset": ("NettyClientPublicExecutor_1", "o.a.r.c.i.ClientRemotingProcessor", "resetOffset",
              212),
    "mqchanged": ("RebalanceService", "o.a.r.c.i.c.RebalancePushImpl", "messageQueueChanged",
                  68),
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

    def write(self, ts_ms: int, kind: str, message: str, level: str = "INFO") -> None:
        if self._fh is None:
            return
        if self.v5:
            dt = datetime.fromtimestamp(ts_ms / 1000, GMT8)
            thread, logger, method, line = LOGGERS[kind]
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

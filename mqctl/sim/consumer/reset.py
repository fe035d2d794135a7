"""A simulated consumer's side of a pushed offset reset (``MQClientInstance.resetOffset``:
suspend, drop the process queues, pause 10 s, write the offsets, resume) and its first pull of
a queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.models import MessageQueue
from mqctl.sim.consumer.consume import Consume
from mqctl.sim.consumer.state import PULL_BATCH, RESET_PAUSE_MS
from mqctl.sim.logs import mq_text

if TYPE_CHECKING:
    pass


class Reset(Consume):
    """A pushed offset reset, as a simulated consumer applies it."""

    # --------------------------------------------------------------- resets

    def reset_offset(self, broker_addr: str, topic: str, timestamp: int,
                     table: dict[MessageQueue, int]) -> None:
        """MQClientInstance.resetOffset (legacy path): suspend, drop the topic's queues,
        sleep 10 s, write the offsets, remove the queues, rebalance, resume.

        The lines are the real 4.9.3 client's (reset/client_log_after_reset.log): every push is
        logged at once (``invoke reset offset operation from broker``), the pushes are then
        applied one after another (resetOffset is synchronized), each with ``suspend this
        consumer``, 10 s later ``[persist]`` + ``remove unnecessary messageQueue offset`` per
        queue (removeUnnecessaryMessageQueue, no ``doRebalance ... remove unnecessary mq``),
        the rebalance that adds them again (``add a new mq`` and a ``rebalanced result
        changed`` line with the unchanged set) and ``resume this consumer``."""
        if not self.alive or self.spec.ignore_reset_push:
            return
        g = self.group.name
        self._log("reset", f"invoke reset offset operation from broker. brokerAddr={broker_addr},"
                  f" topic={topic}, group={g}, timestamp={timestamp}")

        def begin() -> None:
            if not self.alive:
                return
            self._log("suspend", f"suspend this consumer, {g}")
            self.suspended = True
            for mq, pq in self.pqs.items():
                if mq.topic == topic and mq in table:
                    pq.dropped = True

        def apply() -> None:
            if not self.alive:
                return
            for mq in [m for m in self.pqs if m.topic == topic and m in table]:
                b = self.cluster.brokers.get(mq.broker_name)
                if b is not None and self.cluster.broker_up(mq.broker_name):
                    b.commit(g, mq.topic, mq.queue_id, table[mq])
                    self._log("persist_one", f"[persist] Group: {g} ClientId: {self.client_id} "
                              "updateConsumeOffsetToBroker "
                              f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)} {table[mq]}")
                    if self.orderly:
                        b.unlock_batch(g, [mq], self.client_id)
                del self.pqs[mq]
                self._log_offset_removed(mq)
            self.suspended = False
            more = self._reset_busy_until > self.now()  # another push waits
            if not more:  # resumed for good: the re-added queues are replayed at once
                self._replay_on_add.update(m for m in table if m.topic == topic)
            self.rebalance()
            self._replay_on_add.difference_update(table)
            if more:  # paused again at once
                self._first_pull(topic, table)
            self._log("resume", f"resume this consumer, {g}")

        # MQClientInstance.resetOffset is synchronized: pushes from several brokers are
        # applied one after another, each after its own 10 s pause
        start = max(self.now(), self._reset_busy_until)
        self._reset_busy_until = start + RESET_PAUSE_MS
        self._push_ends = [(run, end) for run, end in self._push_ends if end > self.now()]
        self._push_ends.append((self.runs, self._reset_busy_until))
        if start <= self.now():
            begin()  # before a second push of the same instant is logged (as the corpus)
        else:
            self.cluster.scheduler.call_later(start - self.now(), begin)
        self.cluster.scheduler.call_later(self._reset_busy_until - self.now(), apply)

    @property
    def callbacks_busy(self) -> bool:
        """Every callback thread is held by a pushed reset (NettyRemotingClient.publicExecutor,
        clientCallbackExecutorThreads threads, serves RESET_CONSUMER_CLIENT_OFFSET and
        GET_CONSUMER_RUNNING_INFO alike): a request for its running info waits until the
        current push is applied."""
        now = self.now()
        busy = sum(1 for run, end in self._push_ends if run == self.runs and end > now)
        return self.alive and busy >= self.spec.callback_threads

    def _first_pull(self, topic: str, table: dict[MessageQueue, int]) -> None:
        """The rebalance in resume() adds the queues again and dispatches their first pull
        request at once (RebalancePushImpl.dispatchPullRequest), before a reset push waiting on
        the synchronized MQClientInstance.resetOffset suspends the consumer again: each re-added
        queue gets one pull of up to pullBatchSize (32) messages, and the consume threads process
        them while the consumer is paused (pause only holds back pull requests). Real 4.9.3:
        reset/client_log_after_reset.log re-adds broker-b's queues at 20:59:38.707, suspends at
        38.717, and persists broker-b at 32 at 43.2 while paused (208_after_25s: 32-33)."""
        if not self.alive or self.behaviour == "stuck":
            return
        for mq, pq in self.pqs.items():
            if mq.topic != topic or mq not in table or pq.dropped:
                continue
            b = self.cluster.brokers.get(mq.broker_name)
            if b is None or not self.cluster.broker_up(mq.broker_name):
                continue
            if self.orderly and not pq.locked:
                continue
            n = min(PULL_BATCH, max(0, b.max_offset(mq.topic, mq.queue_id) - pq.position))
            if n > 0:
                pq.position += n
                pq.last_consume_ts = self.now()
                pq.consumed_any = True
                self.consumed_total += n

"""Simulated consumers that behave like the Java push consumer (``DefaultMQPushConsumerImpl``,
``RebalanceImpl``, ``ConsumeMessageOrderlyService``, ``RemoteBrokerOffsetStore``,
``MQClientInstance``), driven by the simulated clock:

* heartbeat to the group's brokers every 30 s (``heartbeatBrokerInterval``);
* rebalance every 20 s (``rocketmq.client.rebalance.waitInterval``) and at once when a broker
  says the member list changed, with ``mqctl.allocate`` over the sorted route queues and the
  member list of ONE broker of the route (chosen at random, as ``findConsumerIdList`` does);
* orderly: lock a new queue on its broker before adding it (``RebalanceImpl.lock`` runs before
  the ProcessQueue exists, so on 4.x the new ProcessQueue reads ``locked=false`` and is not
  pulled -- "pull message later because not locked in broker" -- until the next ``lockAll``;
  5.x creates it with ``setLocked(true)`` and retries a refused lock within a second
  (``rebalanceLater(500)``)), ``lockAll`` every 20 s, trust a lock for 30 s, unlock a queue that
  moves away;
* commit every 5 s (``persistConsumerOffsetInterval``); consume at the behaviour's rate;
* honour a broker-pushed reset (legacy path: suspend, drop, 10 s pause, apply, resume) and a
  server-side reset (the next pull answers PULL_OFFSET_MOVED: a 5.2.0+ client persists the new
  offset and re-adds the queue at once, an older one drops the queue and does so 10 s later).

The client is one class by subject, each a layer over the one before it: :mod:`.state` (its
state, heartbeat and commits), :mod:`.rebalance`, :mod:`.consume`, :mod:`.reset`, and
:mod:`.running_info` beside them; :class:`SimConsumer` adds its life (start, crash, hang,
resume, join, leave).
"""

from __future__ import annotations

from mqctl.models import MessageQueue
from mqctl.sim.consumer.reset import Reset
from mqctl.sim.consumer.running_info import RunningInfo
from mqctl.sim.consumer.state import (
    COMMIT_MS,
    CONSUME_TICK_MS,
    HEARTBEAT_MS,
    LOCK_MS,
    REBALANCE_MS,
    new_connection_addr,
)
from mqctl.sim.logs import ClientLog, mq_text
from mqctl.versions import V5_0_0


class SimConsumer(Reset, RunningInfo):
    """A simulated push consumer: started, crashed, hung, resumed, joined, left."""

    def start(self) -> None:
        if self.state == "running":
            return
        self.state = "running"
        fresh = not self._resuming  # a new process (not one waking up from a hang)
        self._resuming = False
        if fresh:
            self.runs += 1
            self.start_ts = self.now()
            if self.runs > 1:
                self.addr = new_connection_addr(self.addr, self.runs)
        for t in self.topics():
            self.sub_versions.setdefault(t, self.start_ts)
        if self.cluster.log_dir and self.log is None:
            self.log = ClientLog(self.cluster.log_dir, self.client_id,
                                 v5=self.spec.version >= V5_0_0, pid=4000 + hash(self.client_id)
                                 % 1000)
        if fresh:
            if self.log is not None and self.runs > 1:
                self.log.pid += 17  # a restarted process gets another pid (5.x lines show it)
            # DefaultMQPushConsumerImpl.start / MQClientInstance.start: the same lines start
            # each run of the process, also a restart with the same client id (real:
            # client-logs/cl-c2_rocketmq_client.log, both runs, 4.9.3 and 5.3.3)
            g = self.group.name
            self._log("start_begin", f"the consumer [{g}] start beginning. messageModel="
                      f"{self.group.model}, isUnitMode=false")
            self._log("factory_ok", f"the client factory [{self.client_id}] start OK")
            self._log("start_ok", f"the consumer [{g}] start OK.")
        sched = self.cluster.scheduler
        self.heartbeat()
        self.timers = [
            sched.call_every(HEARTBEAT_MS, self.heartbeat),
            sched.call_every(REBALANCE_MS, self.rebalance),
            sched.call_every(COMMIT_MS, self.commit),
            sched.call_every(CONSUME_TICK_MS, self.consume_tick),
        ]
        if self.orderly:
            self.timers.append(sched.call_every(LOCK_MS, self.lock_all, first_delay_ms=1000))
        self.rebalance()

    def _stop_timers(self) -> None:
        for t in self.timers:
            t.cancel()
        self.timers = []

    def crash(self) -> None:
        """The process dies: its connections close (the broker drops it from the group at
        once: NETTY EVENT); broker locks stay until their 60 s lease runs out."""
        if self.state in ("crashed", "stopped"):
            return
        self.state = "crashed"
        self._stop_timers()
        for b in self.cluster.brokers.values():
            b.unregister(self.group.name, consumer=self)

    def hang(self) -> None:
        """A frozen process (GC pause, deadlock, SIGSTOP): still connected, so still a member
        until each broker drops it, 120 s after its last traffic on that connection
        (``SimCluster.watch_idle``) or its last heartbeat (``SimBroker.scan_expired``);
        renews nothing and answers nothing."""
        if self.state != "running":
            return
        self.state = "hung"
        self._stop_timers()
        self.cluster.watch_idle(self)

    def resume(self) -> None:
        """A hung process wakes up (SIGCONT) with its ProcessQueues and in-memory offsets as
        they were: it heartbeats (re-registering, on a new connection, where a broker dropped
        it: real lock-crash, "NETTY CLIENT PIPELINE: CLOSE", reconnect), rebalances and keeps
        the queues it still finds allocated to it, re-locks them at its next lockAll (its own
        expired entries: "lock expired, I got it" with its id as old and new holder; after a
        survivor's release once that one rebalanced) and pulls them from where it stopped, so
        what another client consumed meanwhile is consumed again (real 5.3.3: 712 messages)."""
        if self.state == "hung":
            group = self.group.name
            if any(self.client_id not in b.consumer_ids(group)
                   for b in self.heartbeat_brokers()):
                self.addr = new_connection_addr(self.addr, self.runs + 100)
            self.state = "pending"
            self._resuming = True
            self.start()

    def join(self) -> None:
        """Start the consumer now (a new process after a crash or a leave: empty process-queue
        table, offsets read from the broker)."""
        if self.state in ("crashed", "stopped"):
            self.pqs.clear()
            self.sub_versions.clear()
            self.state = "pending"
        if self.state == "pending":
            self.start()

    def leave(self) -> None:
        """Graceful shutdown in DefaultMQPushConsumerImpl.shutdown's order (4.9.3 and 5.3.3):
        ConsumeMessageOrderlyService.shutdown -> RebalanceImpl.unlockAll (orderly: one
        UNLOCK_BATCH_MQ per broker, "the message queue unlock OK"), persistConsumerOffset,
        unregisterConsumer (UNREGISTER_CLIENT: the broker notifies the others, who take the
        queues at once)."""
        if self.state not in ("running", "hung"):
            return
        if self.orderly:
            by_broker: dict[str, list[MessageQueue]] = {}
            for mq in self.pqs:
                by_broker.setdefault(mq.broker_name, []).append(mq)
            for bn, mqs in by_broker.items():
                b = self.cluster.brokers.get(bn)
                if b is not None and self.cluster.broker_up(bn):
                    b.unlock_batch(self.group.name, mqs, self.client_id)
                    for mq in mqs:
                        self.pqs[mq].locked = False
                        self._log("unlock_ok", "the message queue unlock OK, Group: "
                                  f"{self.group.name} "
                                  f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)}")
        self.commit()
        self.state = "stopped"
        self._stop_timers()
        self.pqs.clear()
        for b in self.cluster.brokers.values():
            if b.unregister(self.group.name, consumer=self):
                addr = (self.cluster.servers[b.name].addr if b.name in self.cluster.servers
                        else "")
                self._log("unregister", f"unregister client[Producer: null Consumer: "
                          f"{self.group.name}] from broker[{b.name} 0 {addr}] success")
        self._log("shutdown_ok", f"the consumer [{self.group.name}] shutdown OK")

    def notify_ids_changed(self, broker_addr: str = "") -> None:
        """The broker's NOTIFY_CONSUMER_IDS_CHANGED: one immediate rebalance, however many
        brokers notify at the same instant (RebalanceService.wakeup coalesces them too)."""
        if self._wakeup_pending:
            return
        self._wakeup_pending = True
        self._notified_by = broker_addr
        self.cluster.scheduler.call_later(0, self.on_ids_changed)

    def on_ids_changed(self) -> None:
        self._wakeup_pending = False
        if self.alive:
            self._log("notify", f"receive broker's notification[{self._notified_by}], "
                      f"the consumer group: {self.group.name} changed, rebalance immediately")
            self.rebalance()


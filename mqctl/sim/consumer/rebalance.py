"""A simulated consumer's rebalance (``RebalanceImpl``, ``RebalancePushImpl``): its share of each
topic's queues by its strategy (``mqctl.allocate``) over the member list of one broker, the
process queues it adds and removes, and an orderly consumer's locks (``lockAll``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.allocate import allocate_group
from mqctl.models import RETRY_PREFIX, MessageQueue, java_string_key
from mqctl.sim.consumer.state import LOCK_RETRY_MS, PQ, ConsumerState
from mqctl.sim.logs import mq_text
from mqctl.versions import V5_0_0

if TYPE_CHECKING:
    from mqctl.sim.ports import BrokerLink


class Rebalance(ConsumerState):
    """The rebalance of a simulated consumer."""

    # --------------------------------------------------------------- rebalance

    def rebalance(self) -> None:
        if not self.alive or self.suspended:
            return
        for topic in self.topics():
            self._rebalance_topic(topic)

    def _rebalance_topic(self, topic: str) -> None:

        route_brokers = [n for n in self.cluster.topic_brokers(topic) if self.cluster.broker_up(n)]
        mq_all = self.cluster.subscribe_queues(topic)
        if not mq_all:
            if not topic.startswith(RETRY_PREFIX):
                self._log("topic_missing", f"doRebalance, {self.group.name}, but the "
                          f"topic[{topic}] not exist.", "WARN")
            return
        if self.group.model == "BROADCASTING" or self.pop:
            # broadcasting: every queue; pop (5.x): the broker hands out messages of every
            # queue to whoever pops, so each pop client works on all of them
            result = set(mq_all)
            cid_all: list[str] = [self.client_id]
        else:
            if not route_brokers:
                return
            b = self.cluster.brokers[self.rng.choice(sorted(route_brokers))]
            cid_all = sorted(b.consumer_ids(self.group.name), key=java_string_key)
            if not cid_all:
                self._log("no_cids", f"doRebalance, {self.group.name} {topic}, get consumer "
                          "id list failed", "WARN")
                return
            if self.client_id not in cid_all:
                self._log("not_in_cids", f"[BUG] ConsumerGroup: {self.group.name} The consumerId: "
                          f"{self.client_id} not in cidAll: {cid_all}", "INFO")
                result = set()
            else:
                try:
                    result = set(allocate_group(self.strategy, mq_all, cid_all).get(
                        self.client_id, []))
                except Exception as exc:  # the Java client logs and keeps its assignment
                    self._log("alloc_error", f"allocate message queue exception. strategy name: "
                              f"{self.strategy}, ex: {exc}", "ERROR")
                    return
        if self._update(topic, result):
            self._log("changed", ("client " if self.spec.version >= V5_0_0 else "")
                      + "rebalanced result changed. "
                      f"allocateMessageQueueStrategyName={self.strategy.upper()}, "
                      f"group={self.group.name}, topic={topic}, clientId={self.client_id}, "
                      f"mqAllSize={len(mq_all)}, cidAllSize={len(cid_all)}, "
                      f"rebalanceResultSize={len(result)}, rebalanceResultSet=["
                      + ", ".join(mq_text(m.topic, m.broker_name, m.queue_id)
                                  for m in sorted(result)) + "]")
            if self.group.model == "BROADCASTING":
                self._log("broadcast", f"messageQueueChanged {self.group.name} {topic} ["
                          + ", ".join(mq_text(m.topic, m.broker_name, m.queue_id)
                                      for m in mq_all) + "] [" + ", ".join(
                              mq_text(m.topic, m.broker_name, m.queue_id)
                              for m in sorted(result)) + "]")
            elif self.group.consume_type == "CONSUME_PASSIVELY":
                self._message_queue_changed(topic)

    def _message_queue_changed(self, topic: str) -> None:
        """RebalancePushImpl.messageQueueChanged: a new subVersion for the topic, then a
        heartbeat to every broker (``sendHeartbeatToAllBrokerWithLock``)."""
        old = self.sub_versions.get(topic, self.start_ts)
        new = max(self.now(), old + 1)
        self.sub_versions[topic] = new
        self._log("mqchanged", f"{topic} Rebalance changed, also update version: {old}, {new}")
        self.heartbeat()

    def _update(self, topic: str, result: set[MessageQueue]) -> bool:
        """RebalanceImpl.updateProcessQueueTableInRebalance (4.9.3 and 5.3.3)."""
        changed = False
        refused = False
        g = self.group.name
        v5 = self.spec.version >= V5_0_0
        for mq in [m for m in self.pqs if m.topic == topic and m not in result]:
            pq = self.pqs[mq]
            pq.dropped = True
            b = self.cluster.brokers.get(mq.broker_name)
            if b is not None and self.cluster.broker_up(mq.broker_name):
                if self.group.model == "CLUSTERING":
                    # RebalancePushImpl.removeUnnecessaryMessageQueue: persist, removeOffset
                    b.commit(g, mq.topic, mq.queue_id, pq.position)
                    self._log("persist_one", f"[persist] Group: {g} ClientId: {self.client_id} "
                              "updateConsumeOffsetToBroker "
                              f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)} {pq.position}")
                    self._log_offset_removed(mq, len(self.pqs) - 1)
                if self.orderly:  # removeUnnecessaryMessageQueue -> unlock(mq, oneway=true)
                    text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
                    self._log("unlock", f"unlock messageQueue. group:{g}, clientId:"
                              f"{self.client_id}, mq:{text}", "WARN")
                    b.unlock_batch(g, [mq], self.client_id)
            del self.pqs[mq]
            changed = True
            self._log("remove", f"doRebalance, {g}, remove unnecessary mq, "
                      f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)}")
        for mq in sorted(result):
            if mq in self.pqs:
                continue
            b = self.cluster.brokers.get(mq.broker_name)
            if b is None or not self.cluster.broker_up(mq.broker_name):
                continue
            text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
            now = self.now()
            if self.orderly:
                self.traffic[mq.broker_name] = now
                ok = mq in b.try_lock_batch(g, [mq], self.client_id)
                # RebalanceImpl.lock: "the message queue lock OK" (4.x), "message queue lock
                # OK" (5.x); corpus lock-crash/kill_survivor_o1_client.log
                self._log("lock", ("" if v5 else "the ")
                          + f"message queue lock {'OK' if ok else 'Failed'}, {g} {text}")
                if not ok:
                    self._log("add_failed", f"doRebalance, {g}, add a new mq failed, {text}, "
                              "because lock failed", "WARN")
                    refused = True
                    continue
            self._log_offset_removed(mq)
            offset = self._compute_pull_from_where(b, mq)
            # a new ProcessQueue: lastLockTimestamp and lastConsumeTimestamp start at its
            # creation; 5.x marks it locked at once (pq.setLocked(true), every consumer), 4.x
            # leaves it unlocked until the next lockAll (the lock() above found no
            # ProcessQueue to mark). Real 307 answers: running-info/307_*.json
            self.pqs[mq] = PQ(position=offset, locked=v5, last_lock_ts=now,
                              last_pull_ts=now, last_consume_ts=now)
            changed = True
            self._log("add", f"doRebalance, {g}, add a new mq, {text}")
            if mq in self._replay_on_add:
                self._replay_on_add.discard(mq)
                self._replay_now(mq, self.pqs[mq], b)
        if refused and v5:
            # 5.x: rebalanceLater(500) when a lock was refused; the real client retried about
            # once a second (5.3.3 kill_survivor_o1_client.log: 280 "lock Failed" lines in 57 s)
            self._rebalance_later(LOCK_RETRY_MS)
        return changed

    def _rebalance_later(self, delay_ms: int) -> None:
        """One rebalance after ``delay_ms``, however many times it is asked for meanwhile."""
        if self._retry_pending:
            return
        self._retry_pending = True

        def run() -> None:
            self._retry_pending = False
            self.rebalance()
        self.cluster.scheduler.call_later(delay_ms, run)

    def _compute_pull_from_where(self, b: BrokerLink, mq: MessageQueue) -> int:
        """RebalancePushImpl.computePullFromWhereWithException: the broker's offset
        (QUERY_CONSUMER_OFFSET without setZeroIfNotFound, so a young queue answers 0), else
        by consumeFromWhere (BROADCASTING: a fresh local offset file)."""
        last = (b.query_offset(self.group.name, mq.topic, mq.queue_id)
                if self.group.model == "CLUSTERING" else -1)
        if last >= 0:
            return last
        retry = mq.topic.startswith(RETRY_PREFIX)
        cfw = self.group.consume_from
        if cfw == "CONSUME_FROM_FIRST_OFFSET":
            return 0
        if cfw == "CONSUME_FROM_TIMESTAMP" and not retry:
            return b.search(mq.topic, mq.queue_id, self.start_ts - 30 * 60_000)
        if retry and cfw == "CONSUME_FROM_LAST_OFFSET":
            return 0
        return b.max_offset(mq.topic, mq.queue_id)

    # --------------------------------------------------------------- locks

    def lock_all(self) -> None:
        if not self.alive or not self.orderly:
            return
        by_broker: dict[str, list[MessageQueue]] = {}
        for mq in self.pqs:
            by_broker.setdefault(mq.broker_name, []).append(mq)
        now = self.now()
        for bn, mqs in by_broker.items():
            b = self.cluster.brokers.get(bn)
            ok: set[MessageQueue] = set()
            if b is not None and self.cluster.broker_up(bn):
                self.traffic[bn] = now
                ok = b.try_lock_batch(self.group.name, mqs, self.client_id)
            for mq in mqs:
                pq = self.pqs[mq]
                text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
                if mq in ok:
                    if not pq.locked:
                        self._log("lockall_ok", f"the message queue locked OK, Group: "
                                  f"{self.group.name} {text}")
                    pq.locked, pq.last_lock_ts = True, now
                else:
                    pq.locked = False
                    self._log("lockall_failed", f"the message queue locked Failed, Group: "
                              f"{self.group.name} {text}", "WARN")

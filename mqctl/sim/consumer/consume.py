"""A simulated consumer's pulls and consumption (``DefaultMQPushConsumerImpl.pullMessage`` flow
control, ``ConsumeMessageConcurrentlyService``, ``ConsumeMessageOrderlyService``, a pop
consumer's pops and acks): each consume tick, failures sent back, stuck messages, and the
offsets a pull answers as moved (a server-side reset)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.models import RETRY_PREFIX, MessageQueue
from mqctl.sim.consumer.rebalance import Rebalance
from mqctl.sim.consumer.state import (
    CACHE_CAP,
    CONSUME_TICK_MS,
    CONSUME_TIMEOUT_MS,
    LOCK_TRUST_MS,
    POP_BATCH,
    POP_INVISIBLE_MS,
    POP_THRESHOLD,
    PQ,
    PULL_RETRY_MS,
    RESET_PAUSE_MS,
    STATS_HOUR_MS,
)
from mqctl.sim.logs import mq_text
from mqctl.sim.messages import tag_of
from mqctl.versions import V5_0_0, V5_2_0

if TYPE_CHECKING:
    from mqctl.sim.ports import BrokerLink
# a 5.2.0+ client writes a server-side reset's offset in the callback of the pull that took it:
# one round trip after that pull committed its old position (tests lengthen it to read between)
CURRENT_CLIENT_FIX_MS = 0


class Consume(Rebalance):
    """The pulls and consumption of a simulated consumer."""

    # --------------------------------------------------------------- consumption

    def consume_tick(self) -> None:
        if not self.alive or self.suspended:
            return
        now = self.now()
        g = self.group.name
        pqs = [(mq, pq) for mq, pq in sorted(self.pqs.items()) if not pq.dropped]
        if not pqs:
            return
        capacity = None  # None: consumes whatever is there (a healthy, fast consumer)
        behaviour = self.behaviour
        if self.spec.rate is not None or behaviour == "slow":
            capacity = (self.spec.rate or 1.0) * CONSUME_TICK_MS / 1000
        elif self.spec.consume_rt_ms:
            # every consume thread busy for consume_rt per message
            capacity = self.consume_threads * CONSUME_TICK_MS / self.spec.consume_rt_ms
        backlog: list[tuple[MessageQueue, PQ, int]] = []
        pop_room: dict[tuple[str, str], int] = {}
        for mq, pq in pqs:
            b = self.cluster.brokers.get(mq.broker_name)
            if b is None or not self.cluster.broker_up(mq.broker_name):
                continue
            if self.orderly and not pq.locked:
                # DefaultMQPushConsumerImpl.pullMessage (4.9.3 and 5.3.3), every second
                self._log("pull_later", "pull message later because not locked in broker, "
                          f"PullRequest [consumerGroup={g}, messageQueue="
                          f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)}, "
                          f"nextOffset={pq.position}]")
                continue
            if self.orderly and now - pq.last_lock_ts > LOCK_TRUST_MS:
                continue  # "the message queue not locked, so consume later"
            # a push consumer's pull request carries its consumed offset (commitOffset)
            self.traffic[mq.broker_name] = now
            if not b.consume_enabled(g):  # NO_PERMISSION: only the cache is consumed
                left = self._refused(mq, pq, b, now)
                if behaviour != "stuck" and not self.pop and left > 0:
                    backlog.append((mq, pq, left))
                continue
            pq.refused_end = None
            if self.pop and self.group.model == "CLUSTERING":
                # pop: the group's offset lives in the broker and each message goes to one
                # popper (PopMessageProcessor commits the offset it pops from): this client
                # pops from where the group is, not from where it last was
                shared = b.pop_offset(g, mq.topic, mq.queue_id)
                if shared is not None:
                    pq.position = shared
            nxt = (pq.position if pq.head is None
                   else min(pq.head, b.max_offset(mq.topic, mq.queue_id)))
            jumped = b.pull(g, mq.topic, mq.queue_id, nxt,
                            pq.position if self.group.model == "CLUSTERING" else None,
                            pop=self.pop, reader=("" if self.group.model == "CLUSTERING"
                                                  else self.client_id))
            pq.last_pull_ts = now
            pq.pulled = True
            if jumped != nxt and self.pop:
                # the pop took a pending server-side reset (the broker committed it): the
                # client simply gets the messages from there
                pq.position = jumped
                self._replay_now(mq, pq, b)
            elif jumped != nxt:  # PULL_OFFSET_MOVED: a server-side reset was pending
                pq.head = None
                self._offset_moved(mq, pq, jumped, b)
                continue
            if behaviour == "stuck":
                continue
            limit = b.max_offset(mq.topic, mq.queue_id)
            if pq.head is not None:
                nxt = pq.head
            if self.pop:
                # pop flow control per PopProcessQueue (one per broker: allocate4Pop's
                # queue -1): at most popThresholdForQueue + a batch popped and not acked
                key = (mq.topic, mq.broker_name)
                room = pop_room.setdefault(key, POP_THRESHOLD + POP_BATCH)
                limit = min(limit, nxt + room)
                pop_room[key] = room - max(0, limit - nxt)
            backlog.append((mq, pq, max(0, limit - nxt)))
        consumed = 0
        for mq, pq, n in self._share(backlog, capacity):
            pq.last_batch = n if self.pop else 0
            if n > 0:
                start = pq.position if pq.head is None else pq.head
                if pq.head is None:
                    pq.position += n
                else:
                    pq.head += n
                pq.last_consume_ts = now
                pq.consumed_any = True
                consumed += n
                failed = self._fail(mq, pq, start, n)
                self._stats.append((now, mq.topic, n - failed, failed))
                self._tps_window.append((now, mq.topic, n))
                b = self.cluster.brokers.get(mq.broker_name)
                if self.pop and self.group.model == "CLUSTERING" and b is not None:
                    b.commit(g, mq.topic, mq.queue_id, pq.position)  # popped: the group's
        self.consumed_total += consumed
        self._tps_window.append((now, "", 0))  # the window runs to now, consumed or not
        self._tps_window = [x for x in self._tps_window if now - x[0] <= 60_000]
        if self._stats and now - self._stats[0][0] > STATS_HOUR_MS:
            self._stats = [x for x in self._stats if now - x[0] <= STATS_HOUR_MS]

    def _fail(self, mq: MessageQueue, pq: PQ, start: int, n: int) -> int:
        """Scenario ``fail_ratio``: that share of the ``n`` messages consumed from ``start``
        fails (RECONSUME_LATER). A concurrent CLUSTERING consumer sends them back
        (ConsumeMessageConcurrentlyService.processConsumeResult -> sendMessageBack; the retry
        queue's messages keep their reconsumeTimes), a pop consumer leaves them unacked, to be
        revived into its pop retry topic after the invisible time. Orderly and BROADCASTING
        consumers are not simulated failing (they retry in place or drop)."""
        ratio = self.spec.fail_ratio
        if ratio <= 0 or self.orderly or self.group.model != "CLUSTERING":
            return 0
        pq.fail_budget += n * ratio
        failed = min(n, int(pq.fail_budget + 1e-9))
        pq.fail_budget -= failed
        b = self.cluster.brokers.get(mq.broker_name)
        if failed <= 0 or b is None:
            return failed
        max_times = 16 if self.spec.max_reconsume_times < 0 else self.spec.max_reconsume_times
        g = self.group.name
        failing = self._failing(mq, start, n, failed)
        failed = len(failing)
        origins = [b.original_of(mq.topic, mq.queue_id, o) for o in failing]
        if self.pop:
            b.send_back(g, failed, 0, max_times, retry_topic=f"{RETRY_PREFIX}{g}_{mq.topic}",
                        delay_ms=POP_INVISIBLE_MS, origins=origins)
        elif mq.topic.startswith(RETRY_PREFIX):
            left, pos = failed, 0
            for count, times in b.reconsume_times(mq.topic, mq.queue_id, start, n):
                k = min(left, count)
                b.send_back(g, k, times, max_times, origins=origins[pos:pos + k])
                left, pos = left - k, pos + k
                if left <= 0:
                    break
        else:
            b.send_back(g, failed, 0, max_times, origins=origins)
        return failed

    def _failing(self, mq: MessageQueue, start: int, n: int, failed: int) -> list[int]:
        """Which offsets of [start, start + n) fail: the first ``failed`` that the listener got,
        those whose tag the subscription expression takes (the broker filters the others
        out by tag, ExpressionMessageFilter; a retry topic is subscribed with ``*``)."""
        expr = "*" if mq.topic.startswith(RETRY_PREFIX) else self.spec.subscriptions.get(
            mq.topic, "*")
        tags = None if expr.strip() in ("*", "") else {t.strip() for t in expr.split("||")}
        if tags is None:
            return list(range(start, start + failed))
        out: list[int] = []
        for o in range(start, start + n):
            if len(out) >= failed:
                break
            if tag_of(mq.topic, mq.broker_name, mq.queue_id, o) in tags:
                out.append(o)
        return out

    def stick(self) -> None:
        """Scenario ``stuck_message_at``: from now the listener hangs on the next message of
        each queue; the consumer goes on with the later ones (a concurrent ProcessQueue
        consumes out of order) while the committed offset stays at the hung one; once the
        cache spans more than consumeConcurrentlyMaxSpan offsets each pull waits until the
        batch before it is consumed (DefaultMQPushConsumerImpl.pullMessage: a consumed
        message leaves the cache, so the span falls back to 0 and the next pull goes).
        ProcessQueue.cleanExpiredMsg, run every consumeTimeout (15 min) from the consumer's
        start, sends a message consumed for longer than that back and removes it: then the
        offset moves on."""
        if not self.alive or self.orderly:
            return
        now = self.now()
        for mq, pq in self.pqs.items():
            if not pq.dropped and pq.head is None and not mq.topic.startswith(RETRY_PREFIX):
                pq.head = pq.position + 1
        period = CONSUME_TIMEOUT_MS
        k = max(1, -(-(now + period - self.start_ts) // period))
        self.cluster.scheduler.call_later(self.start_ts + k * period - now, self._clean_expired)

    def _clean_expired(self) -> None:
        if not self.alive:
            return
        max_times = 16 if self.spec.max_reconsume_times < 0 else self.spec.max_reconsume_times
        for mq, pq in self.pqs.items():
            if pq.head is None:
                continue
            b = self.cluster.brokers.get(mq.broker_name)
            if b is not None and b.max_offset(mq.topic, mq.queue_id) > pq.position:
                b.send_back(self.group.name, 1, 0, max_times)  # sendMessageBack(msg, 3)
                pq.position = pq.head  # removeMessage: the hung one was the smallest
            pq.head = None

    def _refused(self, mq: MessageQueue, pq: PQ, b: BrokerLink, now: int) -> int:
        """A pull the broker refused (PullMessageProcessor: NO_PERMISSION, consumeEnable=
        false): the client logs PullCallback.onException's WARN (4.9.3 and 5.3.3 client-logs:
        "execute the pull request exception" and the MQBrokerException), pulls again 3 s
        later and gets nothing, but consumes what it had pulled before (its process queue's
        cache, fixed at the first refusal): how much of that is left."""
        pq.last_pull_ts = now
        start = pq.position if pq.head is None else pq.head
        if pq.refused_end is None:  # (a client that never pulled has nothing cached)
            room = max(0, b.max_offset(mq.topic, mq.queue_id) - start) if pq.pulled else 0
            pq.refused_end = start + min(CACHE_CAP, room)
        if now - pq.refused_log_ts >= PULL_RETRY_MS:
            pq.refused_log_ts = now
            g = self.group.name
            addr = self.cluster.servers[mq.broker_name].addr \
                if mq.broker_name in self.cluster.servers else ""
            head = ("execute the pull request exception" if self.spec.version < V5_0_0 else
                    f"execute the pull request exception, group={g}, messageQueue="
                    f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)}")
            self._log("pull_exception", f"{head}\norg.apache.rocketmq.client.exception."
                      f"MQBrokerException: CODE: 16  DESC: subscription group no permission, "
                      f"{g} BROKER: {addr}\nFor more information, please visit the url, "
                      "http://rocketmq.apache.org/docs/faq/", "WARN")
        return max(0, pq.refused_end - start)

    @staticmethod
    def _share(backlog: list[tuple[MessageQueue, PQ, int]], capacity: float | None
               ) -> list[tuple[MessageQueue, PQ, int]]:
        """How many messages each queue gets this tick. ``rate`` is processing capacity (the
        consume threads take whatever the ProcessQueues hold): it is shared among the queues
        with a backlog only, a queue needing less than its share leaves the rest to the others
        (water-filling), and capacity left idle is not saved up. A queue keeps the fraction
        of a message it was given (``pq.budget``) while it still has a backlog."""
        if capacity is None:
            return backlog
        busy = sorted((x for x in backlog if x[2] > 0), key=lambda x: x[2])
        out = [(mq, pq, 0) for mq, pq, n in backlog if n <= 0]
        for _mq, pq, _n in out:
            pq.budget = 0.0
        left = capacity
        for i, (mq, pq, need) in enumerate(busy):
            give = min(float(need), left / (len(busy) - i))
            left -= give
            pq.budget += give
            n = min(need, int(pq.budget + 1e-9))
            pq.budget = 0.0 if n >= need else pq.budget - n
            out.append((mq, pq, n))
        return out

    def wake_pulls(self, mqs: list[MessageQueue]) -> None:
        """The broker assigned a server-side reset on queues that are being written: a fast
        consumer's pull of each queue it holds returns with the next message and the pull
        after it takes the reset, well before a 1 s poll (PullMessageProcessor: the pull that
        finds a pending reset answers PULL_OFFSET_MOVED; a pop takes it itself). Simulated as
        one pull of each such queue right after the reset, within the same instant as the
        next step of the clock."""
        if not self.fast:
            return
        wanted = set(mqs)

        def pull_now() -> None:
            if not self.fast:
                return
            for mq, pq in sorted(self.pqs.items()):
                b = self.cluster.brokers.get(mq.broker_name)
                if (mq not in wanted or pq.dropped or b is None
                        or not self.cluster.broker_up(mq.broker_name)
                        or (self.orderly and not pq.locked)):
                    continue
                self.traffic[mq.broker_name] = self.now()
                jumped = b.pull(self.group.name, mq.topic, mq.queue_id, pq.position,
                                pq.position if self.group.model == "CLUSTERING" else None,
                                pop=self.pop)
                pq.last_pull_ts = self.now()
                if jumped != pq.position and self.pop:
                    pq.position = jumped
                    self._replay_now(mq, pq, b)
                elif jumped != pq.position:
                    self._offset_moved(mq, pq, jumped, b)

        self.cluster.scheduler.call_later(0, pull_now)

    def _offset_moved(self, mq: MessageQueue, pq: PQ, new: int, b: BrokerLink) -> None:
        """DefaultMQPushConsumerImpl's OFFSET_ILLEGAL case: drop the process queue, then write
        the new offset to the offset store, persist it to the broker and remove the queue
        (RebalanceImpl.removeProcessQueue), which a rebalance adds again from the broker's
        offset. Clients before 5.2.0 do the second half 10 s later (executeTaskLater) and wait
        for the next periodic rebalance, so meanwhile the broker keeps the old offset the pull
        committed; 5.2.0+ clients do it at once and rebalance immediately (#7635, #7644)."""
        g = self.group.name
        text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
        self._log("offset_illegal", f"the pull request offset illegal, PullRequest "
                  f"[consumerGroup={g}, messageQueue={text}, nextOffset={pq.position}] "
                  f"PullResult [pullStatus=OFFSET_ILLEGAL, nextBeginOffset={new}, minOffset="
                  f"{b.min_offset(mq.topic, mq.queue_id)}, maxOffset="
                  f"{b.max_offset(mq.topic, mq.queue_id)}, msgFoundList=0]", "WARN")
        pq.dropped = True
        current = self.spec.version >= V5_2_0

        def fix() -> None:
            if not self.alive or self.pqs.get(mq) is not pq:
                return
            broker = self.cluster.brokers.get(mq.broker_name)
            if broker is not None and self.cluster.broker_up(mq.broker_name):
                if self.group.model == "CLUSTERING":
                    # offsetStore.updateOffset + persist, then removeProcessQueue ->
                    # removeUnnecessaryMessageQueue: persist again, removeOffset (real 5.3.3:
                    # reset/client_log_after_reset.log, two [persist] lines per queue)
                    broker.commit(g, mq.topic, mq.queue_id, new)
                    for _ in range(2):
                        self._log("persist_one", f"[persist] Group: {g} ClientId: "
                                  f"{self.client_id} updateConsumeOffsetToBroker {text} {new}")
                    self._log_offset_removed(mq, len(self.pqs) - 1)
                if self.orderly:  # RebalancePushImpl.removeUnnecessaryMessageQueue
                    self._log("unlock", f"unlock messageQueue. group:{g}, clientId:"
                              f"{self.client_id}, mq:{text}", "WARN")
                    broker.unlock_batch(g, [mq], self.client_id)
            del self.pqs[mq]
            self._replay_on_add.add(mq)
            self._log("fix_offset", f"Fix Offset, {g}, remove unnecessary mq, {text} Droped: "
                      "true")
            self._log("offset_fixed", f"fix the pull request offset, PullRequest [consumerGroup="
                      f"{g}, messageQueue={text}, nextOffset={new}]", "WARN")
            if current:  # rebalanceImmediately: wakes RebalanceService after the fixes
                self._rebalance_later(0)

        self.cluster.scheduler.call_later(CURRENT_CLIENT_FIX_MS if current else RESET_PAUSE_MS,
                                          fix)

"""``mqctl message track``: what became of one message in each group of its topic (pure rules;
the reads are :mod:`mqctl.message.track_capture`).

One row per group, its state decided by the first rule that applies, in this order:

1. ``dead-lettered``: a copy with the message's unique key is in ``%DLQ%<group>``: the group's
   consumer failed it maxReconsumeTimes times (AbstractSendMessageProcessor.consumerSendMsgBack
   sends it there at once when reconsumeTimes >= maxReconsumeTimes);
2. ``retrying``, scheduled: a copy waits out its delay level in ``SCHEDULE_TOPIC_XXXX`` with
   ``REAL_TOPIC`` = ``%RETRY%<group>`` and no copy of its reconsume times is in the retry topic
   yet: consumerSendMsgBack sets the delay level (3 + reconsumeTimes) and the store puts such a
   message into SCHEDULE_TOPIC_XXXX queue level - 1 (4.9.3 ``CommitLog.asyncPutMessage``; 5.3.3
   ``HookUtils.handleScheduleMessage`` -> ``transformDelayLevelMessage``: ``checkIfTimerMessage``
   keeps a delay level off the timer wheel, ``rmq_sys_wheel_timer`` is for timer properties
   only); ``ScheduleMessageService`` puts it into the retry topic at store time + the level's
   delay ("due at ~T"), and the copy stays behind in SCHEDULE_TOPIC_XXXX;
3. ``retrying``: a copy is in ``%RETRY%<group>`` that the group has not consumed yet (its
   committed offset on that retry queue is not past it), with its reconsume times and the delay
   level a next failure would wait (3 + reconsumeTimes, the broker's messageDelayLevel);
   ``consumed`` after retries when the newest copy is behind the group's committed offset on
   its retry queue and was stored longer ago than the delay a next failure waits: a copy that
   failed again would be back by now (it waits that delay in SCHEDULE_TOPIC_XXXX, where it is
   not indexed under the retry topic); until then it stays ``retrying``;
4. ``unknown``: the group's offsets could not be read (the reason is the evidence): a copy
   found says more than the offsets, so the rules above come first;
5. ``broadcast: unknown``: a BROADCASTING group keeps its offsets in its clients
   (LocalFileOffsetStore), so the brokers' offsets say nothing;
6. ``filtered``: the group's subscription expression for the topic does not take the message's
   tag: its consumers never got it, though the offset moved past it (the broker filters by tag
   code, ExpressionMessageFilter); which expression, and from which client;
7. ``consumed``: the committed offset on the message's queue is past the message's queue
   offset (the offset is the next message to consume, so ``committed > offset``); for a pop
   consumer (5.x) that offset moves when it pops (PopMessageProcessor), and whether it acked is
   not readable: ``unknown`` until a copy shows up in its pop retry topic;
8. ``waiting`` (online) or ``offline`` (no member): not consumed yet, with the messages of
   the queue ahead of it and how long it has waited; a queue the group never committed on is
   waiting on where consumeFromWhere starts it.

A copy found in retry or DLQ outranks ``consumed``: when a consumer sends a message back, the
original offset moves on as if consumed (ConsumeMessageConcurrentlyService.processConsumeResult
-> sendMessageBack, then the offset is updated). mqadmin's ``MessageTrack``
(:mod:`mqctl.message.mqadmin_track`) judges by the committed offset alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mqctl.remoting.message import StoredMessage
from mqctl.timeparse import format_ms

CONSUMED = "consumed"
WAITING = "waiting"
FILTERED = "filtered"
RETRYING = "retrying"
DEAD_LETTERED = "dead-lettered"
BROADCAST_UNKNOWN = "broadcast: unknown"
OFFLINE = "offline"
UNKNOWN = "unknown"
STATES = (CONSUMED, WAITING, FILTERED, RETRYING, DEAD_LETTERED, BROADCAST_UNKNOWN, OFFLINE,
          UNKNOWN)
# MessageStoreConfig.messageDelayLevel (levels 1..18), the broker's default
DELAY_LEVELS = ("1s", "5s", "10s", "30s", "1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m",
                "10m", "20m", "30m", "1h", "2h")
DELAY_LEVELS_MS = (1_000, 5_000, 10_000, 30_000, 60_000, 120_000, 180_000, 240_000, 300_000,
                   360_000, 420_000, 480_000, 540_000, 600_000, 1_200_000, 1_800_000,
                   3_600_000, 7_200_000)


@dataclass(frozen=True, slots=True)
class Copy:
    """A copy of the message in ``%RETRY%<group>``, ``%DLQ%<group>`` or SCHEDULE_TOPIC_XXXX."""

    topic: str
    broker: str
    queue_id: int
    queue_offset: int
    store_ts: int
    reconsume_times: int
    msg_id: str
    # retry copies: whether the group's committed offset on that retry queue is past it
    # (None: unknown)
    consumed: bool | None = None
    # a copy in SCHEDULE_TOPIC_XXXX: its delay level (DELAY) and when it is due (store time +
    # the level's delay)
    delay_level: int | None = None
    due_ts: int | None = None


@dataclass(frozen=True, slots=True)
class GroupReading:
    """What was read of one group, for one message."""

    group: str
    error: str | None = None  # the group could not be read: why
    online: bool | None = None  # a member was seen (None: unknown)
    broadcasting: bool = False
    consume_type: str | None = None  # CONSUME_PASSIVELY (push) / CONSUME_ACTIVELY (pull)
    queue_read: bool = False  # the message's queue is among the queues read
    committed: int | None = None  # committed offset on the message's queue (None: none)
    consume_stats_offset: int | None = None  # GET_CONSUME_STATS consumerOffset (0 for none)
    max_offset: int | None = None
    owner: str | None = None
    owner_unknown: bool = False
    expression: str | None = None  # the group's subscription to the topic (connection list)
    tags: tuple[str, ...] | None = None  # its tagsSet
    client_expressions: tuple[tuple[str, str], ...] = ()  # (client, expression) by running info
    pop: bool = False  # a 5.x pop consumer's queue: its offset moves when it pops
    retry: tuple[Copy, ...] | None = None  # None: not read
    dlq: tuple[Copy, ...] | None = None
    scheduled: tuple[Copy, ...] | None = None  # in SCHEDULE_TOPIC_XXXX for %RETRY%<group>
    copies_error: str | None = None


@dataclass(frozen=True, slots=True)
class TrackRow:
    group: str
    state: str
    evidence: str
    owner: str | None
    wait_ms: int | None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "state": self.state, "evidence": self.evidence,
                "owner": self.owner, "waitMs": self.wait_ms, **self.detail}


def tag_taken(expression: str | None, tag: str | None) -> bool | None:
    """Whether a TAG expression (``a || b``, ``*``) takes ``tag`` (SubscriptionData's
    tagsSet; FilterAPI.buildSubscriptionData); None when it is not a TAG expression."""
    if expression is None:
        return None
    expr = expression.strip()
    if expr in ("", "*"):
        return True
    if any(c in expr for c in "()=<>'") or " AND " in expr.upper() or " OR " in expr.upper():
        return None  # SQL92: the broker evaluates it on properties; not judged here
    return (tag or "") in {t.strip() for t in expr.split("||") if t.strip()}


def _next_delay(times: int) -> str:
    level = min(len(DELAY_LEVELS), 3 + times)
    return f"level {level} ({DELAY_LEVELS[level - 1]})"


def _copy_text(c: Copy) -> str:
    return f"{c.topic} {c.broker}/{c.queue_id} offset {c.queue_offset}, reconsumeTimes " \
           f"{c.reconsume_times}"


def _unknown(r: GroupReading, m: StoredMessage, now: int) -> TrackRow | None:
    if r.error is not None:
        return TrackRow(r.group, UNKNOWN, f"not read: {r.error}", None, None)
    return None


def _dead(r: GroupReading, m: StoredMessage, now: int) -> TrackRow | None:
    if r.dlq:
        c = max(r.dlq, key=lambda x: x.store_ts)
        return TrackRow(r.group, DEAD_LETTERED, f"a copy in {_copy_text(c)}", r.owner,
                        max(0, now - m.store_timestamp),
                        {"copy": _copy_dict(c), "copies": len(r.dlq)})
    return None


def _scheduled(r: GroupReading, m: StoredMessage, now: int) -> TrackRow | None:
    """The newest copy waiting in SCHEDULE_TOPIC_XXXX, unless the retry topic already holds a
    copy of its reconsume times (then it was delivered, and that copy says the rest)."""
    if not r.scheduled:
        return None
    s = max(r.scheduled, key=lambda x: (x.reconsume_times, x.store_ts))
    if any(c.reconsume_times >= s.reconsume_times for c in r.retry or ()):
        return None
    level = s.delay_level or min(len(DELAY_LEVELS), 2 + s.reconsume_times)
    due = s.due_ts if s.due_ts is not None else s.store_ts + DELAY_LEVELS_MS[level - 1]
    late = ", past due: ScheduleMessageService has not delivered it yet" if now >= due else ""
    return TrackRow(r.group, RETRYING,
                    f"scheduled in {_copy_text(s)}, delay level {level} "
                    f"({DELAY_LEVELS[level - 1]}), due at ~{format_ms(due)}{late}, for "
                    f"%RETRY%{r.group}; a next failure waits delay "
                    f"{_next_delay(s.reconsume_times)}, or goes to %DLQ%{r.group} at "
                    "maxReconsumeTimes (16 by default)", r.owner,
                    max(0, now - m.store_timestamp),
                    {"copy": _copy_dict(s), "copies": len(r.retry or ()) + len(r.scheduled),
                     "delayLevel": level, "dueAt": due,
                     "nextDelayLevel": min(len(DELAY_LEVELS), 3 + s.reconsume_times)})


def _retry(r: GroupReading, m: StoredMessage, now: int) -> TrackRow | None:
    if not r.retry:
        return None
    c = max(r.retry, key=lambda x: (x.reconsume_times, x.store_ts))
    level = min(len(DELAY_LEVELS), 3 + c.reconsume_times)
    if c.consumed is True and now - c.store_ts > DELAY_LEVELS_MS[level - 1]:
        return TrackRow(r.group, CONSUMED,
                        f"after {c.reconsume_times} retr{'y' if c.reconsume_times == 1 else 'ies'}"
                        f": the group's offset on {c.topic} {c.broker}/{c.queue_id} is past "
                        f"offset {c.queue_offset}", r.owner, None,
                        {"copy": _copy_dict(c), "copies": len(r.retry)})
    seen = {False: "", None: " (whether the group took it is unknown)",
            True: " (taken by the group: a copy that failed again waits in "
                  "SCHEDULE_TOPIC_XXXX)"}[c.consumed]
    return TrackRow(r.group, RETRYING,
                    f"a copy in {_copy_text(c)}{seen}; a next failure waits delay "
                    f"{_next_delay(c.reconsume_times)}, or goes to %DLQ%{r.group} at "
                    "maxReconsumeTimes (16 by default)", r.owner,
                    max(0, now - m.store_timestamp),
                    {"copy": _copy_dict(c), "copies": len(r.retry),
                     "nextDelayLevel": min(len(DELAY_LEVELS), 3 + c.reconsume_times)})


def _broadcast(r: GroupReading, m: StoredMessage, now: int) -> TrackRow | None:
    if r.broadcasting:
        return TrackRow(r.group, BROADCAST_UNKNOWN,
                        "BROADCASTING: each client keeps its offsets (LocalFileOffsetStore); "
                        "the brokers' offsets are not the group's progress", None, None)
    return None


def _filtered(r: GroupReading, m: StoredMessage, now: int) -> TrackRow | None:
    """The broker filters a pull by the group's subscription (ConsumerManager's, from the
    heartbeats: a push consumer posts none with its pull unless postSubscriptionWhenPull), and
    the owning client filters again by its own tags set (PullAPIWrapper.processPullResult):
    either one leaving the tag out keeps the message from the listener."""
    owner_expr = dict(r.client_expressions).get(r.owner or "")
    if tag_taken(r.expression, m.tags) is False:
        expr, who = r.expression, "the group's subscription on the brokers"
    elif tag_taken(owner_expr, m.tags) is False:
        expr, who = owner_expr, f"its owner {r.owner}, which filters what it pulls"
    else:
        return None
    others = [c for c, e in r.client_expressions if e == expr]
    sent = f"; sent by {', '.join(others)}" if others else ""
    return TrackRow(r.group, FILTERED,
                    f"subscription {expr!r} does not take tag {m.tags or '(none)'!r} "
                    f"({who}{sent})", r.owner, None, {"expression": expr, "clients": others})


def _by_offset(r: GroupReading, m: StoredMessage, now: int) -> TrackRow:
    q = f"{m.topic} queue {m.queue_id}"
    if not r.queue_read:
        return TrackRow(r.group, UNKNOWN, f"not read: the group's offset on {q} of this "
                        "broker was not read", None, None)
    if r.committed is not None and r.committed > m.queue_offset and r.pop:
        return TrackRow(r.group, UNKNOWN, f"popped (offset {r.committed} > {m.queue_offset}): "
                        "a pop consumer's offset moves when it pops, and whether it acked is "
                        "not readable; a message not acked in its invisible time comes back in "
                        f"%RETRY%{r.group}_{m.topic}", None, None, {"committed": r.committed})
    if r.committed is not None and r.committed > m.queue_offset:
        return TrackRow(r.group, CONSUMED, f"committed offset {r.committed} > offset "
                        f"{m.queue_offset}", r.owner, None, {"committed": r.committed})
    online = r.online
    if r.committed is None:
        ev = "no committed offset on the queue: where its consumers start depends on " \
             "consumeFromWhere"
        ahead = None
    else:
        ahead = m.queue_offset - r.committed
        ev = f"committed offset {r.committed} <= offset {m.queue_offset}: {ahead} " \
             "message(s) ahead of it"
    if online is False:
        return TrackRow(r.group, OFFLINE, f"no member online; {ev}", None,
                        max(0, now - m.store_timestamp), {"ahead": ahead,
                                                          "committed": r.committed})
    if online is None:
        return TrackRow(r.group, UNKNOWN, f"not read: whether a member is online; {ev}",
                        None, max(0, now - m.store_timestamp), {"ahead": ahead})
    owner = r.owner if r.owner else ("unknown" if r.owner_unknown else None)
    return TrackRow(r.group, WAITING, ev, owner, max(0, now - m.store_timestamp),
                    {"ahead": ahead, "committed": r.committed})


RULES = (_dead, _scheduled, _retry, _unknown, _broadcast, _filtered)


def track_row(m: StoredMessage, r: GroupReading, now: int) -> TrackRow:
    """The row of one group for message ``m`` (the first rule that applies)."""
    for rule in RULES:
        row = rule(r, m, now)
        if row is not None:
            return row
    return _by_offset(r, m, now)


def _copy_dict(c: Copy) -> dict[str, Any]:
    return {"topic": c.topic, "brokerName": c.broker, "queueId": c.queue_id,
            "queueOffset": c.queue_offset, "storeTimestamp": c.store_ts,
            "reconsumeTimes": c.reconsume_times, "msgId": c.msg_id, "consumed": c.consumed,
            **({"delayLevel": c.delay_level, "dueAt": c.due_ts}
               if c.delay_level is not None else {})}


__all__ = ["BROADCAST_UNKNOWN", "CONSUMED", "DEAD_LETTERED", "DELAY_LEVELS", "FILTERED",
           "OFFLINE", "RETRYING", "RULES", "STATES", "UNKNOWN", "WAITING", "Copy",
           "GroupReading", "TrackRow", "tag_taken", "track_row"]

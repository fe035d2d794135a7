"""Log lines: the client's ``rocketmq_client.log`` (RebalanceImpl, RebalanceLockManager's
client side) and the broker's ``lock.log`` (broker RebalanceLockManager, 4.x and 5.x
templates)."""

from __future__ import annotations

import functools
import re
from datetime import tzinfo
from typing import Any

from mqctl.lagjob.inputs import GMT8, local_ms
from mqctl.lagjob.parsers.common import OUT_OF_RANGE, range_problem

# 5.x client (rmq.client.logback.xml): "yyyy-MM-dd HH:mm:ss.SSS" pinned to GMT+8;
# 4.x client (ClientLogger): "yyyy-MM-dd HH:mm:ss,SSS" in the host's zone;
# broker lock.log (rmq.broker.logback.xml): "yyyy-MM-dd HH:mm:ss" pinned to GMT+8.
_LOG_TS = re.compile(
    r"^\W{0,3}([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:([.,])([0-9]{1,3}))?(Z|[+-][0-9]{2}:?[0-9]{2})?")
_MQ = r"MessageQueue \[topic=([^,\]]+), brokerName=([^,\]]+), queueId=([0-9]+)\]"
_MQ_RX = re.compile(_MQ)

_RESULT = re.compile(
    r"(?:client |broker )?rebalanced result changed\. allocateMessageQueueStrategyName=(.*?), "
    r"group=([^,]+), topic=([^,]+), clientId=([^,]+), (.*)$")
_RESULT_SET = re.compile(r"mqAllSize=([0-9]+), cidAllSize=([0-9]+), rebalanceResultSize=([0-9]+), "
                         r"rebalanceResultSet=(\[.*\])\s*$")
_ASSIGNMENT_SET = re.compile(r"assignmentSet=(\[.*\])\s*$")
_ADD = re.compile(r"doRebalance, ([^,]+), add a new (?:pop )?mq, (" + _MQ + r")")
_REMOVE = re.compile(r"doRebalance, ([^,]+), (?:try )?(?:truncateMessageQueueNotMyTopic )?"
                     r"remove unnecessary (?:pop )?mq, (" + _MQ + r")")
_ADD_LOCK_FAILED = re.compile(r"doRebalance, ([^,]+), add a new mq failed, (" + _MQ +
                              r"), because lock failed")
_CLIENT_LOCK = re.compile(r"the message queue locked (OK|Failed), Group: (\S+) (" + _MQ + r")")
_CLIENT_LOCK2 = re.compile(r"message queue lock (OK|Failed), (\S+?),? (" + _MQ + r")")
_CLIENT_UNLOCK = re.compile(r"the message queue unlock OK, Group: (\S+) (" + _MQ + r")")
_CLIENT_UNLOCK2 = re.compile(r"unlock messageQueue\. group:([^,]+), clientId:([^,]+), mq:(" +
                             _MQ + r")")
_NOTIFY = re.compile(r"receive broker's notification\[([^\]]*)\], the consumer group: (\S+) "
                     r"changed, rebalance immediately")
# a consumer's life and offset resets (both versions write the same text):
# DefaultMQPushConsumerImpl#start "the consumer [G] start beginning. messageModel=...";
# MQClientInstance#unregisterClient "unregister client[Producer: P Consumer: G] from broker[...]"
# and DefaultMQPushConsumerImpl#shutdown "the consumer [G] shutdown OK" on a graceful stop;
# RemoteBrokerOffsetStore#persistAll/persist "[persistAll] Group: G ClientId: C
# updateConsumeOffsetToBroker MessageQueue [...] OFFSET" every 5 s for every queue it holds
# (persistConsumerOffsetInterval), so the last one bounds when a killed client died;
# ClientRemotingProcessor#resetOffset "invoke reset offset operation from broker. brokerAddr=A,
# topic=T, group=G, timestamp=TS" (4.x push reset: the client drops its process queues and
# re-adds them ~10 s later); RebalanceImpl#removeProcessQueue "Fix Offset, G, remove
# unnecessary mq, MQ Droped: B" (5.x server-side reset: the pull answers OFFSET_ILLEGAL, the
# queue is dropped and re-added by the next rebalance).
_START = re.compile(r"the consumer \[([^\]]+)\] start beginning\.")
_STOP = re.compile(r"unregister client\[Producer: [^\]]*? Consumer: ([^\]\s]+)\] from broker"
                   r"|the consumer \[([^\]]+)\] shutdown OK")
_PERSIST = re.compile(r"\[persist(?:All)?\] Group: (\S+) ClientId: (\S+) "
                      r"updateConsumeOffsetToBroker (" + _MQ + r") (-?[0-9]+)")
_RESET4 = re.compile(r"invoke reset offset operation from broker[.,] brokerAddr=([^,]*), "
                     r"topic=([^,]+), group=([^,]+), timestamp=([0-9]+)")
_RESET5 = re.compile(r"Fix Offset, ([^,]+), remove unnecessary mq, (" + _MQ + r")")
# the most frequent first (a line is tested against each in turn, here and in the Spark
# filter before this parser, readers.read_logs): a client logs an offset commit per queue at
# every persist (MQClientInstance.persistAllConsumerOffset, every persistConsumerOffsetInterval,
# 5 s: RemoteBrokerOffsetStore.updateConsumeOffsetToBroker) and a doRebalance round every 20 s
# (RebalanceService). In the demo's logs 20,203 and 2,307 of 28,826 lines, in the real corpus
# (samples/real) 1,886 and 496 of 5,328: most lines now stop at the first or second keyword.
CLIENT_KEYWORDS = ("updateConsumeOffsetToBroker", "doRebalance, ", "rebalanced result changed",
                   "message queue lock", "message queue unlock", "unlock messageQueue",
                   "receive broker's notification", "] start beginning", "unregister client[",
                   "] shutdown OK", "invoke reset offset", "Fix Offset, ")

# broker lock.log, 5.x (RebalanceLockManager#...)
_L5_ACQ = re.compile(r"RebalanceLockManager#tryLock(?:Batch)?: lock a message (?:queue )?which "
                     r"has not been locked yet, group=([^,]+), clientId=([^,]+), mq=(" + _MQ +
                     r")")
_L5_TAKE = re.compile(r"RebalanceLockManager#tryLock(?:Batch)?: try to lock a expired message "
                      r"queue, group=([^,]+), mq=(" + _MQ + r"), old client id=([^,]+), "
                      r"new client id=(\S+)")
_L5_CONFLICT = re.compile(r"RebalanceLockManager#tryLock(?:Batch)?: message queue has been "
                          r"locked by other client, group=([^,]+), mq=(" + _MQ + r"), locked "
                          r"client id=([^,]+), current client id=(\S+)")
_L5_UNLOCK = re.compile(r"RebalanceLockManager#unlockBatch: unlock mq, group=([^,]+), "
                        r"clientId=([^,]+), mqs=(.*)$")
_L5_UNLOCK_OTHER = re.compile(r"RebalanceLockManager#unlockBatch: mq locked by other client, "
                              r"group=([^,]+), locked clientId=([^,]+), current clientId=([^,]+)"
                              r", mqs=(.*)$")
_L5_UNLOCK_NONE = re.compile(r"RebalanceLockManager#unlockBatch: mq not locked, group=([^,]+), "
                             r"clientId=([^,]+), mq=(" + _MQ + r")")
_L5_NO_GROUP = re.compile(r"RebalanceLockManager#unlockBatch: group not exist, group=([^,]+), "
                          r"clientId=([^,]+)")
# broker lock.log, 4.x (same file and pattern, other wording)
_L4_ACQ = re.compile(r"tryLock(?:Batch)?, message queue not locked, I got it\. Group: (\S+) "
                     r"NewClientId: (\S+) (" + _MQ + r")")
_L4_TAKE = re.compile(r"tryLock(?:Batch)?, message queue lock expired, I got it\. Group: (\S+) "
                      r"OldClientId: (\S+) NewClientId: (\S+) (" + _MQ + r")")
_L4_CONFLICT = re.compile(r"tryLock(?:Batch)?, message queue locked by other client\. Group: "
                          r"(\S+) OtherClientId: (\S+) NewClientId: (\S+) (" + _MQ + r")")
_L4_UNLOCK_OTHER = re.compile(r"unlockBatch, but mq locked by other client: (\S+), Group: (\S+) "
                              r"(" + _MQ + r") (\S+)")
_L4_UNLOCK_NONE = re.compile(r"unlockBatch, but mq not locked, Group: (\S+) (" + _MQ +
                             r") (\S+)")
_L4_NO_GROUP = re.compile(r"unlockBatch, group not exist, Group: (\S+) (\S+)")
_L4_UNLOCK = re.compile(r"unlockBatch, Group: (\S+) (" + _MQ + r") (\S+)")
LOCK_KEYWORDS = ("RebalanceLockManager#", "tryLock", "unlockBatch")


def line_time(line: str, log_tz: tzinfo | None, pinned_tz: tzinfo) -> int | None:
    """Epoch ms of a log line's leading timestamp.

    An explicit zone wins; ``HH:mm:ss,SSS`` (4.x client) is in ``log_tz`` (host-local by
    default); ``HH:mm:ss.SSS`` (5.x client) and second-resolution broker lines are in
    ``pinned_tz`` (GMT+8 by their logback pattern)."""
    m = _LOG_TS.match(line)
    if not m:
        return None
    g = m.groups()
    ms = int((g[7] or "0").ljust(3, "0"))
    zone_text = g[8]
    if zone_text:
        from mqctl.lagjob.inputs import _zone_of

        tz = _zone_of(zone_text)
    elif g[6] == ",":
        tz = log_tz
    else:
        tz = pinned_tz
    try:
        return _second_ms(g[:6], tz) + ms
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def _second_ms(fields: tuple[str, ...], tz: tzinfo | None) -> int:
    """Epoch ms of a wall-clock second (its text: year, month, day, hour, minute, second) in
    ``tz``: a client writes its offset commits for every queue at once (each 5 s), so most
    lines share their second with the line before."""
    y, mo, d, h, mi, s = (int(x) for x in fields)
    return local_ms(y, mo, d, h, mi, s, 0, tz)


def _mqs(text: str) -> list[tuple[str, str, int]]:
    return [(t, b, int(q)) for t, b, q in _MQ_RX.findall(text)]


def _mq1(m: re.Match[str], first: int) -> list[tuple[str, str, int]]:
    return [(m.group(first), m.group(first + 1), int(m.group(first + 2)))]


LogResult = tuple[str, tuple[Any, ...]] | None


def _ev(ts: int, event: str, group: str | None, topic: str | None, client: str | None,
        prev: str | None, mqs: list[tuple[str, str, int]], strategy: str | None = None,
        mq_all: int | None = None, cid_all: int | None = None, detail: str | None = None
        ) -> tuple[str, tuple[Any, ...]]:
    why = range_problem(queue_ids=tuple(q for _, _, q in mqs), mq_all=mq_all, cid_all=cid_all)
    if why is not None:
        return _bad_line(OUT_OF_RANGE, why, ts)
    if topic is None and mqs:
        topic = mqs[0][0]
    return ("log", (ts, event, group, topic, client, prev, mqs, strategy, mq_all, cid_all,
                    detail))


def _bad_line(reason: str, detail: str = "", ts: int | None = None
              ) -> tuple[str, tuple[Any, ...]]:
    """("bad", (reason, detail, ts)): ``ts`` when the line's own time could be read."""
    return ("bad", (reason, detail, ts))


def parse_client_log_line(line: str, log_tz: tzinfo | None,
                          pinned_tz: tzinfo = GMT8) -> LogResult:
    """One ``rocketmq_client.log`` line -> ("log", LOG_FIELDS) | ("bad", (reason, detail, ts)) |
    None for lines that carry nothing for the rebalance history."""
    if not any(k in line for k in CLIENT_KEYWORDS):
        return None
    line = line.rstrip("\r\n")
    ts = line_time(line, log_tz, pinned_tz)
    if "rebalanced result changed" in line:
        m = _RESULT.search(line)
        if not m:
            return _bad_line("unparsed rebalance line", "template did not match", ts)
        strategy, group, topic, client, rest = m.groups()
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        ms = _RESULT_SET.search(rest)
        if ms:
            mq_all, cid_all, size = int(ms.group(1)), int(ms.group(2)), int(ms.group(3))
            mqs = _mqs(ms.group(4))
            if len(mqs) != size:
                return _bad_line("truncated result set",
                                 f"rebalanceResultSize={size} but {len(mqs)} queue(s) listed",
                                 ts)
            return _ev(ts, "result", group, topic, client, None, mqs, strategy, mq_all, cid_all)
        ma = _ASSIGNMENT_SET.search(rest)
        if ma:  # 5.x broker-side (POP) rebalance
            return _ev(ts, "result", group, topic, client, None, _mqs(ma.group(1)), strategy,
                       None, None, "broker-side assignment")
        return _bad_line("unparsed rebalance line", "no result set", ts)
    # each pattern below is searched only in a line holding its keyword (CLIENT_KEYWORDS),
    # which every match contains: the offset commits, most of the lines, search none of them
    if "doRebalance, " in line:
        for rx, event in ((_ADD_LOCK_FAILED, "add_lock_failed"), (_ADD, "add"),
                          (_REMOVE, "remove")):
            m = rx.search(line)
            if m:
                if ts is None:
                    return _bad_line("no timestamp",
                                     "line does not start with yyyy-MM-dd HH:mm:ss")
                return _ev(ts, event, m.group(1), None, None, None, _mq1(m, 3))
    m = ((_CLIENT_LOCK.search(line) or _CLIENT_LOCK2.search(line))
         if "message queue lock" in line else None)
    if m:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        ev = "client_lock_ok" if m.group(1) == "OK" else "client_lock_failed"
        return _ev(ts, ev, m.group(2), None, None, None, _mq1(m, 4))
    m = _CLIENT_UNLOCK2.search(line) if "unlock messageQueue" in line else None
    if m:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        return _ev(ts, "client_unlock", m.group(1), None, m.group(2), None, _mq1(m, 4))
    m = _CLIENT_UNLOCK.search(line) if "message queue unlock" in line else None
    if m:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        return _ev(ts, "client_unlock", m.group(1), None, None, None, _mq1(m, 3))
    m = _NOTIFY.search(line) if "receive broker's notification" in line else None
    if m:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        return _ev(ts, "notify", m.group(2), None, None, None, [], detail=m.group(1))
    return _life_line(line, ts)


def _life_line(line: str, ts: int | None) -> LogResult:
    """start / stop / persist / reset lines (see ``_START`` and the others above)."""
    found: LogResult = None
    m = _PERSIST.search(line)
    if m:
        found = _ev(ts or 0, "persist", m.group(1), None, m.group(2), None, _mq1(m, 4),
                    detail=m.group(7))
    elif m := _START.search(line):
        found = _ev(ts or 0, "start", m.group(1), None, None, None, [])
    elif m := _STOP.search(line):
        if m.group(1) != "null":
            found = _ev(ts or 0, "stop", m.group(1) or m.group(2), None, None, None, [])
    elif m := _RESET4.search(line):
        found = _ev(ts or 0, "reset", m.group(3), m.group(2), None, None, [],
                    detail=f"broker {m.group(1)} pushed a reset to {m.group(4)}")
    elif m := _RESET5.search(line):
        found = _ev(ts or 0, "reset", m.group(1), None, None, None, _mq1(m, 3),
                    detail="offset illegal: queue dropped to re-read from the reset offset")
    if found is not None and ts is None:
        return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
    return found  # other lines that merely mention a keyword (e.g. "mq already exists")


def parse_lock_log_line(line: str, pinned_tz: tzinfo = GMT8,
                        log_tz: tzinfo | None = None) -> LogResult:
    """One broker ``lock.log`` line (4.x or 5.x wording) -> like :func:`parse_client_log_line`.

    Events: ``acquire``, ``takeover`` (an expired lock taken by a new client; ``prev_client``
    is the old holder), ``conflict`` (refused: held by ``prev_client``), ``unlock``,
    ``unlock_conflict``, ``unlock_not_locked``, ``unlock_no_group``."""
    if not any(k in line for k in LOCK_KEYWORDS):
        return None
    line = line.rstrip("\r\n")
    ts = line_time(line, log_tz, pinned_tz)

    def need_ts() -> LogResult | None:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        return None

    m = _L5_ACQ.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "acquire", m.group(1), None, m.group(2), None,
                                _mq1(m, 4))
    m = _L5_TAKE.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "takeover", m.group(1), None, m.group(7), m.group(6),
                                _mq1(m, 3))
    m = _L5_CONFLICT.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "conflict", m.group(1), None, m.group(7), m.group(6),
                                _mq1(m, 3))
    m = _L5_UNLOCK_OTHER.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_conflict", m.group(1), None, m.group(3),
                                m.group(2), _mqs(m.group(4)))
    m = _L5_UNLOCK.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock", m.group(1), None, m.group(2), None,
                                _mqs(m.group(3)))
    m = _L5_UNLOCK_NONE.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_not_locked", m.group(1), None, m.group(2),
                                None, _mq1(m, 4))
    m = _L5_NO_GROUP.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_no_group", m.group(1), None, m.group(2), None,
                                [])
    m = _L4_TAKE.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "takeover", m.group(1), None, m.group(3), m.group(2),
                                _mq1(m, 5))
    m = _L4_CONFLICT.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "conflict", m.group(1), None, m.group(3), m.group(2),
                                _mq1(m, 5))
    m = _L4_ACQ.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "acquire", m.group(1), None, m.group(2), None,
                                _mq1(m, 4))
    m = _L4_UNLOCK_OTHER.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_conflict", m.group(2), None, m.group(7),
                                m.group(1), _mq1(m, 4))
    m = _L4_UNLOCK_NONE.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_not_locked", m.group(1), None, m.group(6),
                                None, _mq1(m, 3))
    m = _L4_NO_GROUP.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_no_group", m.group(1), None, m.group(2), None,
                                [])
    m = _L4_UNLOCK.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock", m.group(1), None, m.group(6), None,
                                _mq1(m, 3))
    if "RebalanceLockManager#" in line or ", I got it" in line:
        return _bad_line("unparsed lock line", "template did not match", ts)
    return None

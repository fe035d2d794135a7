"""The rules about messages that fail and offsets that do not move (pure): consume failures,
the retry backlog, dead letters, and an offset not committed (with its suspects)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mqctl.diagnose import explain as x
from mqctl.diagnose.explain import qfacts
from mqctl.diagnose.rules.common import (
    CAUGHT_UP_MS,
    LISTED,
    MAX_RECONSUME_TIMES,
    PERSIST_INTERVAL_MS,
    PULL_THRESHOLD_FOR_QUEUE,
    PULL_THRESHOLD_SIZE_MIB,
    RECENT_MS,
    Ctx,
    commit_explains,
    growth,
    is_behind,
    n_,
    num,
    online_needed,
    prop,
    q_,
    qlist,
    queue_lag,
    tps,
)
from mqctl.diagnose.types import (
    ERROR,
    FOUND,
    INFO,
    NEEDS_SAMPLE,
    NOT_APPLICABLE,
    NOT_CHECKED,
    OK,
    SECOND_READ,
    WARNING,
    Check,
    Evidence,
    Finding,
    Reading,
)
from mqctl.models import RETRY_PREFIX, ProcessQueueInfo
from mqctl.timeparse import format_duration

if TYPE_CHECKING:
    from mqctl.views.progress import QueueProgress


# ---------------------------------------------------------------- failures


def failing(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := online_needed(ctx, code)) is not None:
        return [], c
    ts = ctx.now.ts
    rows = []
    for cid, info in sorted(ctx.infos.items()):
        for t, s in sorted(info.status_table.items()):
            if not isinstance(s, dict) or (ctx.topic is not None and t not in (
                    ctx.topic, RETRY_PREFIX + ctx.group)):
                continue
            f_tps = num(s.get("consumeFailedTPS")) or 0.0
            f_hour = num(s.get("consumeFailedMsgs")) or 0.0
            if f_tps > 0 or f_hour > 0:
                rows.append((cid, t, f_tps, f_hour, num(s.get("consumeOKTPS")) or 0.0))
    if not rows:
        return [], Check(code, NOT_CHECKED if not ctx.all_answered else OK,
                         "consumeFailedTPS 0 and consumeFailedMsgs 0 on every client")
    now_failing = any(r[2] > 0 for r in rows)
    total = sum(r[2] for r in rows)
    infos = [ctx.infos[r[0]] for r in rows]
    mrt = {num(i.properties.get("maxReconsumeTimes")) for i in infos}
    mrt_text = ", ".join(str(int(v)) if v is not None and v >= 0 else
                         f"{MAX_RECONSUME_TIMES} (-1: the default)" for v in sorted(
                             mrt, key=lambda x: -2 if x is None else x))
    return [Finding(
        code, ERROR if now_failing else WARNING,
        (f"consumption is failing: {tps(total)} failed" if now_failing else
         "consumption failed in the last hour")
        + f" ({len({r[0] for r in rows})} client(s))",
        why=(f"a popped message that fails is not acked: after popInvisibleTime it is revived "
             f"into the pop retry topic ({RETRY_PREFIX}{ctx.group}_<topic>) and delivered "
             f"again, until maxReconsumeTimes ({mrt_text}); then it goes to %DLQ%{ctx.group}"
             if ctx.kind == "pop" else
             "a message whose consumption fails (RECONSUME_LATER or an exception) is sent back "
             f"to {RETRY_PREFIX}{ctx.group} and redelivered after a growing delay (delay level "
             "3 + reconsumeTimes: 10 s, 30 s, 1 m, ...); after maxReconsumeTimes "
             f"({mrt_text}) it goes to %DLQ%{ctx.group} and is not delivered again"),
        next="the client's log shows why the listener fails; the retry and dead-letter "
             f"backlog: `mqctl group progress {ctx.group}`"
             + (f"; if the failing messages do harm downstream (a poison message, a bad "
                f"deploy), `mqctl group pause {ctx.group}` stops the group's pulls on every "
                "broker (a plan first; what the clients cached is still consumed) and `mqctl "
                f"group resume {ctx.group}` once fixed" if now_failing else ""),
        evidence=tuple(Evidence(f"{cid} {t}: consumeFailedTPS {f:.2f}/s, consumeFailedMsgs "
                                f"{n_(h)} in the last hour, consumeOKTPS {ok:.2f}/s",
                                ctx.src("GET_CONSUMER_RUNNING_INFO statusTable", cid), ts)
                       for cid, t, f, h, ok in rows[:LISTED]),
        values={"failed_tps": round(total, 3),
                "failed_last_hour": sum(r[3] for r in rows)},
        clients=tuple(sorted({r[0] for r in rows})),
        rocketmq="ConsumeStatus.consumeFailedTPS / consumeFailedMsgs (ConsumerStatsManager), "
                 "ConsumeMessageConcurrentlyService.processConsumeResult, "
                 "AbstractSendMessageProcessor.consumerSendMsgBack",
        # what fails is sent back (the retry topic, a pop retry topic) and, after
        # maxReconsumeTimes, to the DLQ
        shows=frozenset((x.FAILING, r[0]) for r in rows),
        explains=frozenset({(x.RETRY,), (x.DLQ,)}))], \
        Check(code, FOUND, f"{tps(total)} failed")


def retry_backlog(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read")
    rq = ctx.retry_queues
    if not rq:
        return [], Check(code, OK if ctx.kind != "pop" else NOT_APPLICABLE,
                         f"no {RETRY_PREFIX}{ctx.group} topic: nothing waits for redelivery"
                         if ctx.progress.retry_topic is False else
                         f"no {RETRY_PREFIX}{ctx.group} queue was read: no retry backlog seen")
    backlog = sum(queue_lag(q) for q in rq)

    def sent(r: Reading) -> int | None:
        if r.progress is None:
            return None
        return sum(q.broker_offset for q in r.progress.queues
                   if q.mq.topic == RETRY_PREFIX + ctx.group)

    grew, rate = growth(ctx, sent)
    if backlog <= 0 and not grew:
        return [], Check(code, OK, f"{RETRY_PREFIX}{ctx.group}: backlog 0"
                         + (", nothing sent back during the sample" if grew == 0 else ""))
    ts = ctx.now.ts
    ev = [Evidence(f"{RETRY_PREFIX}{ctx.group}: backlog {n_(backlog)} (max offset - committed "
                   f"offset over {len(rq)} queue(s))", ctx.src("GET_CONSUME_STATS"), ts)]
    if grew is not None:
        ev.append(Evidence(f"{n_(grew)} message(s) sent back for retry during the "
                           f"{format_duration(ctx.now.ts - (ctx.first.ts if ctx.first else 0))} "
                           f"sample ({tps(rate)})", ctx.src("GET_CONSUME_STATS, two reads"), ts))
    return [Finding(
        code, ERROR if grew else WARNING,
        f"{n_(backlog)} message(s) wait for redelivery in {RETRY_PREFIX}{ctx.group}"
        + (f"; {tps(rate)} sent back during the sample" if grew else ""),
        why="only messages whose consumption failed are sent to the retry topic: a backlog "
            "there is consumption that failed and will be tried again"
            + ("; it grows, so consumption keeps failing" if grew else ""),
        next="see consume-failing for the clients that fail; the failed messages: `mqctl "
             f"group progress {ctx.group}` (retry section), those that gave up: `mqctl group "
             f"dlq {ctx.group}`",
        evidence=tuple(ev), values={"backlog": backlog, "sent_back": grew,
                                    "sent_back_tps": rate},
        topics=(RETRY_PREFIX + ctx.group,), queues=tuple(q.mq for q in rq),
        rocketmq="MixAll.getRetryTopic, AbstractSendMessageProcessor.consumerSendMsgBack",
        shows=frozenset({(x.RETRY, RETRY_PREFIX + ctx.group)}))], \
        Check(code, FOUND, f"backlog {n_(backlog)}")


def dlq(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    p = ctx.progress
    if p is None or p.dlq is None:
        return [], Check(code, NOT_CHECKED, "the %DLQ% topic was not read")
    msgs = sum(d.messages for d in p.dlq)
    if msgs == 0:
        return [], Check(code, OK, f"%DLQ%{ctx.group}: " + (
            "no such topic (no message ever failed maxReconsumeTimes times)" if not p.dlq
            else "empty"))

    def stored(r: Reading) -> int | None:
        if r.progress is None or r.progress.dlq is None:
            return None
        return sum(d.max_offset for d in r.progress.dlq)

    grew, rate = growth(ctx, stored)
    ts = ctx.now.ts
    last = max(d.last_update_timestamp for d in p.dlq)
    ev = [Evidence(f"{d.mq.topic} {d.mq.short}: {n_(d.messages)} message(s) (min offset "
                   f"{d.min_offset}, max offset {d.max_offset})",
                   ctx.src("GET_TOPIC_STATS_INFO", d.mq.broker_name), ts) for d in p.dlq]
    if last:
        ev.append(Evidence(f"the last dead letter was stored {format_duration(ts - last)} ago",
                           ctx.src("GET_TOPIC_STATS_INFO lastUpdateTimestamp"), ts))
    if grew is not None:
        ev.append(Evidence(f"{n_(grew)} new dead letter(s) during the sample",
                           ctx.src("GET_TOPIC_STATS_INFO, two reads"), ts))
    # a dead letter stored within the last hour (the window of the clients'
    # consumeFailedMsgs) is a current problem; older ones are reported, not alarmed on
    recent = bool(last) and ts - last <= RECENT_MS
    return [Finding(
        code, ERROR if grew else WARNING if recent or not last else INFO,
        f"{n_(msgs)} message(s) in %DLQ%{ctx.group}"
        + (f", {tps(rate)} arriving" if grew else
           f" (the last {format_duration(ts - last)} ago)" if last else ""),
        why="a message that failed maxReconsumeTimes times goes to the dead-letter topic and "
            "is not delivered to the group again: it is not consumed",
        next=f"which messages, by original topic: `mqctl group dlq {ctx.group}`; read one: "
             f"`mqctl message show -t %DLQ%{ctx.group} -b {p.dlq[0].mq.broker_name} "
             f"-q {p.dlq[0].mq.queue_id} --offset "
             f"{max(p.dlq[0].min_offset, p.dlq[0].max_offset - 1)}`; fix the cause "
             f"(consume-failing), then send them again, each once: `mqctl group dlq resend "
             f"{ctx.group} --all` (a plan; --execute sends, with a journal)",
        evidence=tuple(ev), values={"messages": msgs, "new": grew, "last_ts": last or None},
        topics=(f"%DLQ%{ctx.group}",), queues=tuple(d.mq for d in p.dlq),
        rocketmq="MixAll.getDLQTopic, AbstractSendMessageProcessor (DLQ_NUMS_PER_GROUP)",
        shows=frozenset({(x.DLQ, f"%DLQ%{ctx.group}")}))], \
        Check(code, FOUND, f"{n_(msgs)} message(s)")


# ---------------------------------------------------------------- commits and trend


@dataclass(frozen=True, slots=True)
class _Stuck:
    q: QueueProgress  # the second read
    client: str
    before: ProcessQueueInfo
    after: ProcessQueueInfo


def not_committed(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.first is None:
        return _commit_suspects(ctx, code)
    if (c := online_needed(ctx, code, ("pop", "broadcasting"))):
        return [], c
    if ctx.first.progress is None or ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read twice")
    sample = ctx.now.ts - ctx.first.ts
    before = {q.mq: q for q in ctx.queues_of(ctx.first)}
    owners0 = Ctx.owners_of(ctx.first)
    hits = []
    short = []
    for q in ctx.queues:
        q0 = before.get(q.mq)
        o1, o0 = ctx.owners.get(q.mq, []), owners0.get(q.mq, [])
        if q0 is None or len(o1) != 1 or len(o0) != 1 or o1[0][0] != o0[0][0]:
            continue
        cid, pq1 = o1[0]
        pq0 = o0[0][1]
        info = ctx.infos.get(cid)
        interval = num(info.properties.get("persistConsumerOffsetInterval")) if info else None
        interval = interval or PERSIST_INTERVAL_MS
        if sample <= interval + 1000:
            short.append(q.mq)
            continue
        if (pq1.last_consume_timestamp > pq0.last_consume_timestamp
                and q.consumer_offset == q0.consumer_offset and queue_lag(q) > 0):
            hits.append(_Stuck(q, cid, pq0, pq1))
    if not hits:
        if short:
            return [], Check(code, NOT_CHECKED, f"the sample ({format_duration(sample)}) is not "
                                                "longer than the clients' persist interval")
        return [], Check(code, OK, "every queue consumed during the sample had its committed "
                                   "offset move")
    ts = ctx.now.ts
    out = []
    ctx.explained |= {h.q.mq for h in hits}
    h0 = hits[0]
    q, cid, pq1 = h0.q, h0.client, h0.after
    store_moved = [h for h in hits if h.after.commit_offset > h.q.consumer_offset
                   and h.after.commit_offset != h.before.commit_offset]
    ev = []
    for h in hits[:LISTED]:
        moved = h.after.last_consume_timestamp - h.before.last_consume_timestamp
        ev.append(Evidence(
            f"{q_(h.q.mq)}: committed offset {h.q.consumer_offset} at both reads "
            f"{format_duration(sample)} apart; {h.client} consumed it (lastConsumeTimestamp "
            f"moved {format_duration(moved)}); oldest cached offset "
            f"{h.after.cached_msg_min_offset}, client offset store {h.after.commit_offset}; "
            f"lag {n_(h.q.lag)}",
            ctx.src("GET_CONSUME_STATS + GET_CONSUMER_RUNNING_INFO, two reads"), ts))
    if store_moved:
        why = ("the client's offset store moved but the broker's committed offset did not: "
               "its commits (UPDATE_CONSUMER_OFFSET, the pulls' commitOffset) are not taken, "
               "e.g. a broker that refuses them after a server-side reset ('Update consumer "
               "offset is rejected because of previous offset-reset')")
        nxt = ("the broker's log for refused offset updates; the client's log for "
               "updateConsumeOffsetToBroker errors")
    else:
        why = ("the client consumes the queue but the offset it commits stays: a concurrent "
               "consumer commits the smallest offset it still holds "
               "(ProcessQueue.removeMessage), so one message that does not finish holds the "
               "committed offset; a restart or rebalance consumes everything after it again, "
               "and once its cache spans more than consumeConcurrentlyMaxSpan offsets each "
               "pull waits for the batch before it (span flow control)")
        nxt = (f"the message that holds it: `mqctl message show -t {q.mq.topic} -b "
               f"{q.mq.broker_name} -q {q.mq.queue_id} --offset {pq1.cached_msg_min_offset}`; a "
               f"thread dump of {cid} shows where its listener waits (consumeTimeout, 15 min, "
               "sends a message back once it has waited that long)")
    out.append(Finding(
        code, ERROR, f"committed offsets do not move on {len(hits)} queue(s) while their "
        f"consumers consume: {qlist(h.q.mq for h in hits)}",
        why=why, next=nxt, evidence=tuple(ev),
        values={"queues": len(hits), "sample_ms": sample,
                "offsets": {f"{h.q.mq.topic} {h.q.mq.short}": h.q.consumer_offset
                            for h in hits}},
        clients=tuple(sorted({h.client for h in hits})), queues=tuple(h.q.mq for h in hits),
        rocketmq="ProcessQueue.removeMessage, RemoteBrokerOffsetStore "
                 "(persistConsumerOffsetInterval), ConsumerOffsetManager",
        shows=qfacts(x.COMMIT, (h.q.mq for h in hits)),
        explains=commit_explains((h.q.mq, h.client) for h in hits)))
    return out, Check(code, FOUND, f"{len(hits)} queue(s)")


def second_read_command(ctx: Ctx, seconds: int) -> str:
    """The command that makes the second read: this diagnosis again with --sample."""
    return (f"mqctl diagnose {shlex.quote(ctx.group)}"
            + (f" -t {shlex.quote(ctx.topic)}" if ctx.topic is not None else "")
            + f" --sample {seconds}")


def _commit_suspects(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    """One read: the queues whose evidence is what a held commit looks like, so that only a
    second read can say whether it is one. A concurrent consumer commits the smallest offset
    it still holds (ProcessQueue.removeMessage; a consumed message leaves its cache): a queue
    behind (time lag above CAUGHT_UP_MS) whose one owner consumed it within CAUGHT_UP_MS,
    holds fewer messages than the queue's lag, below its count and size flow-control
    thresholds (so its own speed does not hold the lag), and whose committed offset is the
    oldest message the owner holds (cachedMsgMinOffset): the rest of the lag was consumed
    past the committed offset, or was not pulled yet. One read cannot tell which, nor whether
    the committed offset moves."""
    plain = Check(code, NEEDS_SAMPLE, "needs two reads: --sample SECONDS")
    if (ctx.online is not True or ctx.kind in ("pop", "broadcasting", "orderly")
            or ctx.progress is None):
        return [], plain
    ts = ctx.now.ts
    hits = []
    interval = PERSIST_INTERVAL_MS
    for q in ctx.queues:
        owners = ctx.owners.get(q.mq, [])
        if len(owners) != 1 or not is_behind(q) or queue_lag(q) <= 0 or q.consumer_offset is None:
            continue
        cid, pq = owners[0]
        info = ctx.infos[cid]
        if info.orderly or pq.cached_msg_count <= 0 or pq.last_consume_timestamp <= 0:
            continue
        count_thr, _ = prop(info, "pullThresholdForQueue", PULL_THRESHOLD_FOR_QUEUE)
        size_thr, _ = prop(info, "pullThresholdSizeForQueue", PULL_THRESHOLD_SIZE_MIB)
        if ((count_thr is not None and pq.cached_msg_count > count_thr)
                or (size_thr is not None and pq.cached_msg_size_mib is not None
                    and pq.cached_msg_size_mib > size_thr)):
            continue  # at its flow-control threshold: the consumer's speed holds the lag
        after = queue_lag(q) - pq.cached_msg_count  # past the committed offset and not held
        if (ts - pq.last_consume_timestamp <= CAUGHT_UP_MS
                and pq.cached_msg_min_offset == q.consumer_offset and after > 0):
            hits.append((q, cid, pq, after))
            interval = max(interval, int(num(info.properties.get(
                "persistConsumerOffsetInterval")) or PERSIST_INTERVAL_MS))
    if not hits:
        return [], plain
    # the sample must be longer than the clients' persist interval (see the check below)
    seconds = max(10, 2 * -(-interval // 1000))
    cmd = second_read_command(ctx, seconds)
    clients = sorted({cid for _, cid, _, _ in hits})
    tl = max(q.delay_ms or 0 for q, _, _, _ in hits)
    ev = tuple(Evidence(
        f"{q_(q.mq)}: committed offset {q.consumer_offset}, the oldest message {cid} holds "
        f"(cachedMsgMinOffset); it holds {n_(pq.cached_msg_count)} of the {n_(q.lag)} "
        f"message(s) from there to the queue's end: the other {n_(after)} were consumed past "
        f"the committed offset or not pulled yet; it consumed the queue "
        f"{format_duration(ts - pq.last_consume_timestamp) or '0ms'} ago; time lag "
        f"{format_duration(q.delay_ms)}",
        ctx.src("GET_CONSUME_STATS + QUERY_CONSUME_TIME_SPAN + GET_CONSUMER_RUNNING_INFO", cid),
        ts) for q, cid, pq, after in hits[:LISTED])
    mqs = [q.mq for q, _, _, _ in hits]
    return [Finding(
        SECOND_READ, WARNING,
        f"stuck commit? {len(hits)} queue(s) behind (time lag up to {format_duration(tl)}) "
        f"while their consumer consumes past the committed offset: {qlist(mqs)}; `{cmd}` "
        "tells",
        why="a concurrent consumer commits the smallest offset it still holds "
            "(ProcessQueue.removeMessage), so one message that does not finish holds the "
            "commit while the ones after it are consumed, and the lag and the time lag, "
            "measured from the committed offset, grow; one read cannot tell that from "
            "messages not pulled yet, nor whether the committed offset moves: two reads can "
            "(offset-not-committed)",
        next=f"`{cmd}`: two reads {seconds} s apart say whether the committed offsets move "
             "(longer than the clients' persistConsumerOffsetInterval)",
        evidence=ev,
        values={"needs": "offset-not-committed", "command": cmd, "sample_s": seconds,
                "queues": len(hits), "max_time_lag_ms": tl},
        clients=tuple(clients), queues=tuple(mqs),
        rocketmq="ProcessQueue.removeMessage (cachedMsgMinOffset), RemoteBrokerOffsetStore",
        shows=qfacts(x.SUSPECT, mqs, "offset-not-committed"),
        explains=commit_explains((q.mq, cid) for q, cid, _, _ in hits))], Check(
            code, NEEDS_SAMPLE, f"suspected on {len(hits)} queue(s) ({SECOND_READ}): `{cmd}`")

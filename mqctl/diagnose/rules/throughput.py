"""The rules about how fast the consumers go (pure): a blocked consume, flow control, saturated
consume threads, a pop client's own flow control and retry, where the lag concentrates (a hot
queue, a broker, idle consumers) and whether it grows."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from mqctl.diagnose import explain as x
from mqctl.diagnose.explain import qfact, qfacts
from mqctl.diagnose.rules.common import (
    BLOCKED_MS,
    CONSUME_CONCURRENTLY_MAX_SPAN,
    LISTED,
    POP_THRESHOLD_FOR_QUEUE,
    PULL_THRESHOLD_FOR_QUEUE,
    PULL_THRESHOLD_SIZE_MIB,
    SATURATED,
    Ctx,
    consume_threads,
    growth,
    is_behind,
    lag_facts,
    n_,
    num,
    online_needed,
    outcome,
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
    NOT_APPLICABLE,
    NOT_CHECKED,
    OK,
    WARNING,
    Check,
    Evidence,
    Finding,
    Reading,
)
from mqctl.models import RETRY_PREFIX, MessageQueue, ProcessQueueInfo
from mqctl.timeparse import format_duration

if TYPE_CHECKING:
    from mqctl.views.progress import QueueProgress


# ---------------------------------------------------------------- the consumer


def blocked(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := online_needed(ctx, code, ("pop", "orderly"), " (orderly queues: see locks)")):
        return [], c
    now = ctx.now.ts
    hits: dict[str, list[tuple[MessageQueue, ProcessQueueInfo]]] = defaultdict(list)
    for cid, info in ctx.infos.items():
        if info.orderly or info.consume_type not in (None, "CONSUME_PASSIVELY"):
            continue
        for mq, pq in info.mq_table.items():
            if (not pq.dropped and pq.cached_msg_count > 0 and pq.last_consume_timestamp > 0
                    and now - pq.last_consume_timestamp > BLOCKED_MS
                    and (ctx.topic is None or mq.topic in (ctx.topic,
                                                           RETRY_PREFIX + ctx.group))):
                hits[cid].append((mq, pq))
    if not hits:
        return [], Check(code, NOT_CHECKED if not ctx.all_answered else OK,
                         "every queue with cached messages consumed one in the last "
                         f"{BLOCKED_MS // 1000} s")
    out = []
    for cid, qs in sorted(hits.items()):
        ctx.explained |= {mq for mq, _ in qs}
        oldest = min(pq.last_consume_timestamp for _, pq in qs)
        out.append(Finding(
            code, ERROR, f"{cid}: {len(qs)} queue(s) hold cached messages but consumed none for "
            f"{format_duration(now - oldest)}: {qlist(mq for mq, _ in qs)}",
            why="messages are pulled into the client's cache but none is consumed: the listener "
                "is blocked (a call that never returns, a lock, an exhausted pool); mqadmin "
                "consumerStatus reports it as 'can't consume for a while, maybe blocked'",
            next=f"a thread dump of {cid} (jstack, or `mqadmin consumerStatus -g {ctx.group} -i "
                 f"{cid} -s`)",
            evidence=tuple(Evidence(f"{q_(mq)}: cachedMsgCount {pq.cached_msg_count}, "
                                    "lastConsumeTimestamp "
                                    f"{format_duration(now - pq.last_consume_timestamp)} ago",
                                    ctx.src("GET_CONSUMER_RUNNING_INFO", cid), now)
                           for mq, pq in sorted(qs)[:LISTED]),
            values={"client": cid, "queues": len(qs), "idle_ms": now - oldest},
            clients=(cid,), queues=tuple(mq for mq, _ in qs),
            rocketmq="ConsumerRunningInfo.analyzeProcessQueue, ProcessQueue.lastConsumeTimestamp",
            # a listener that consumes nothing: its cache fills (flow control), its threads
            # wait, and the commit stays at the oldest message it holds
            shows=frozenset({(x.BLOCKED, cid)}),
            explains=lag_facts(mq for mq, _ in qs) | frozenset(
                {(x.FLOW, cid), (x.SPAN, cid), (x.SATURATED, cid)})
            | qfacts(x.COMMIT, (mq for mq, _ in qs)) | qfacts(
                x.SUSPECT, (mq for mq, _ in qs), "offset-not-committed")))
    return out, Check(code, FOUND, ", ".join(sorted(hits)))


def flow_control(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := online_needed(ctx, code, ("pop",), ": see pop-flow-control")):
        return [], c
    ts = ctx.now.ts
    out = []
    checked = []
    for cid, info in sorted(ctx.infos.items()):
        count_thr, count_src = prop(info, "pullThresholdForQueue", PULL_THRESHOLD_FOR_QUEUE)
        size_thr, _ = prop(info, "pullThresholdSizeForQueue", PULL_THRESHOLD_SIZE_MIB)
        span_thr, _ = prop(info, "consumeConcurrentlyMaxSpan", CONSUME_CONCURRENTLY_MAX_SPAN)
        over: list[tuple[MessageQueue, str]] = []
        for mq, pq in sorted(info.mq_table.items()):
            if pq.dropped or (ctx.topic is not None and mq.topic not in (
                    ctx.topic, RETRY_PREFIX + ctx.group)):
                continue
            why = []
            if count_thr is not None and pq.cached_msg_count > count_thr:
                why.append(f"cachedMsgCount {pq.cached_msg_count} > pullThresholdForQueue "
                           f"{count_thr:g}")
            if (size_thr is not None and pq.cached_msg_size_mib is not None
                    and pq.cached_msg_size_mib > size_thr):
                why.append(f"cachedMsgSizeInMiB {pq.cached_msg_size_mib} > "
                           f"pullThresholdSizeForQueue {size_thr:g}")
            span = pq.cached_msg_max_offset - pq.cached_msg_min_offset
            if (not info.orderly and span_thr is not None and pq.cached_msg_count > 0
                    and span > span_thr):
                why.append(f"span {span} (cachedMsgMaxOffset {pq.cached_msg_max_offset} - "
                           f"cachedMsgMinOffset {pq.cached_msg_min_offset}) > "
                           f"consumeConcurrentlyMaxSpan {span_thr:g}")
            if why:
                over.append((mq, "; ".join(why)))
        checked.append(f"{cid}: pullThresholdForQueue {n_(count_thr)} ({count_src})")
        if not over:
            continue
        status = {t: s for t, s in info.status_table.items() if isinstance(s, dict)}
        rt = [f"{t}: consumeRT {n_(num(s.get('consumeRT')))} ms, consumeOKTPS "
              f"{tps(num(s.get('consumeOKTPS')))}" for t, s in sorted(status.items())
              if (num(s.get("consumeOKTPS")) or 0) > 0]
        spans = [mq for mq, w in over if w.startswith("span") or "; span" in w]
        lag = ctx.lag_of(mq for mq, _ in over)
        ev = [Evidence(f"{q_(mq)}: {w}", ctx.src("GET_CONSUMER_RUNNING_INFO", cid), ts)
              for mq, w in over[:LISTED]]
        if rt:
            ev.append(Evidence("; ".join(rt), ctx.src("GET_CONSUMER_RUNNING_INFO statusTable",
                                                      cid), ts))
        first_span = next((x for x in over if x[0] in spans), None)
        nxt = ("make the listener faster or add consumers (up to the number of queues); if "
               "the consume threads are saturated (threads-saturated) raise consumeThreadMin; "
               "a larger pullThresholdForQueue only caches more, it does not consume faster")
        if first_span is not None:
            pq0 = info.mq_table[first_span[0]]
            nxt = (f"the oldest cached message does not finish: `mqctl message show -t "
                   f"{first_span[0].topic} -b {first_span[0].broker_name} -q "
                   f"{first_span[0].queue_id} --offset {pq0.cached_msg_min_offset}` and a thread "
                   f"dump of {cid}; " + nxt)
        out.append(Finding(
            code, ERROR, f"{cid} is at its flow-control threshold on {len(over)} queue(s): "
            + qlist(mq for mq, _ in over) + (f" (lag {n_(lag)})" if lag else ""),
            why="DefaultMQPushConsumerImpl.pullMessage pulls a queue again only when its "
                "ProcessQueue holds at most pullThresholdForQueue messages and "
                "pullThresholdSizeForQueue MiB (a concurrent consumer: offsets spanning at most "
                "consumeConcurrentlyMaxSpan); above that it waits: the client cannot process "
                "what it already has, so the consumer, not the broker, limits the rate",
            next=nxt, evidence=tuple(ev),
            values={"client": cid, "queues": len(over), "lag": lag,
                    "pullThresholdForQueue": count_thr, "pullThresholdSizeForQueue": size_thr,
                    "consumeConcurrentlyMaxSpan": span_thr,
                    "span_queues": len(spans)},
            clients=(cid,), queues=tuple(mq for mq, _ in over),
            rocketmq="DefaultMQPushConsumer.pullThresholdForQueue / pullThresholdSizeForQueue / "
                     "consumeConcurrentlyMaxSpan, DefaultMQPushConsumerImpl.pullMessage, "
                     "ProcessQueueInfo",
            # over its count or size threshold (what slow consumption explains), or over the
            # span only (what one message that does not finish explains)
            shows=frozenset(qfact(x.FLOW, mq, cid) for mq, w in over if not w.startswith("span"))
            | frozenset(qfact(x.SPAN, mq, cid) for mq in spans),
            explains=qfacts(x.BEHIND, (mq for mq, _ in over))))
    if not out:
        return [], Check(code, NOT_CHECKED if not ctx.all_answered else OK,
                         "no queue above its threshold; " + "; ".join(checked[:3])
                         + (" ..." if len(checked) > 3 else ""))
    return out, Check(code, FOUND, ", ".join(f.clients[0] for f in out))


def saturated(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := online_needed(ctx, code)) is not None:
        return [], c
    ts = ctx.now.ts
    out = []
    seen = []
    for cid, info in sorted(ctx.infos.items()):
        pool = consume_threads(info)
        batch = num(info.properties.get("consumeMessageBatchMaxSize")) or 1.0
        busy = 0.0
        parts = []
        for t, s in sorted(info.status_table.items()):
            if not isinstance(s, dict):
                continue
            rate = (num(s.get("consumeOKTPS")) or 0.0) + (num(s.get("consumeFailedTPS")) or 0.0)
            rt = num(s.get("consumeRT")) or 0.0
            if rate > 0 and rt > 0:
                b = rate / batch * rt / 1000
                busy += b
                parts.append(f"{t}: ({tps(rate)} / batch {batch:g}) x consumeRT {rt:.1f} ms = "
                             f"{b:.2f}")
        if pool is None or pool <= 0:
            continue
        cap = pool
        if info.orderly:
            # ConsumeMessageOrderlyService consumes a queue on one thread at a time: at most
            # as many threads as it holds queues (cachedMsgCount cannot tell which queues have
            # messages: ProcessQueue.takeMessages moves the ones being consumed out of it)
            held = sum(1 for pq in info.mq_table.values() if not pq.dropped)
            cap = min(pool, held) if held else pool
        seen.append(f"{cid} {busy:.1f}/{cap:g}")
        if busy < SATURATED * cap or busy <= 0:
            continue
        # saturated but keeping up (none of its queues behind): no headroom, not a problem
        mine = [q for q in ctx.queues if any(c == cid for c, _ in ctx.owners.get(q.mq, []))]
        keeping_up = (ctx.progress is not None and bool(mine)
                      and not any(is_behind(q) for q in mine))
        # all its threads busy: its cache fills (flow control by count or size) and its
        # queues fall behind; when it is slower than the group's other clients, it is why the
        # lag concentrates on its queues (else the concentration explains its saturation)
        behind = [q.mq for q in mine if is_behind(q)]
        explains = frozenset({(x.FLOW, cid)}) | qfacts(x.BEHIND, behind)
        if ctx.slower(cid):
            explains |= qfacts(x.CONCENTRATED, behind)
        out.append(Finding(
            code, INFO if keeping_up else WARNING,
            f"{cid}: its consume threads are saturated: about {busy:.1f} of "
            f"{cap:g} busy ({min(100.0, 100 * busy / cap):.0f}%)",
            why=("ConsumeMessageConcurrentlyService runs consumeThreadMin threads (its pool's "
                 "queue is unbounded, so consumeThreadMax never adds one)" if not info.orderly
                 else "ConsumeMessageOrderlyService consumes each queue on one thread at a time")
            + ": every thread is busy (messages per second x consumeRT = busy threads), so the "
              "client consumes no faster however many messages wait",
            next="make the listener faster (lower consumeRT), or raise consumeThreadMin "
                 "(consumeThreadMax alone changes nothing), or add consumers up to the number "
                 "of queues",
            evidence=(Evidence("; ".join(parts) + f"; pool {pool:g} (PROP_THREADPOOL_CORE_SIZE)",
                               ctx.src("GET_CONSUMER_RUNNING_INFO statusTable", cid), ts),
                      ) + (ctx.speed_evidence([cid]) if ctx.slower(cid) else ()),
            values={"client": cid, "busy_threads": round(busy, 2), "pool": pool,
                    "capacity": cap, "batch": batch},
            clients=(cid,),
            rocketmq="ConsumeStatus.consumeRT / consumeOKTPS (ConsumerStatsManager), "
                     "ConsumerRunningInfo.PROP_THREADPOOL_CORE_SIZE, "
                     "ConsumeMessageConcurrentlyService",
            shows=frozenset({(x.SATURATED, cid)}), explains=explains))
    return outcome(code, out, "busy/pool: " + (", ".join(seen[:4]) or "no consumption "
                                                 "reported"),
                   ", ".join(f.clients[0] for f in out),
                   status=NOT_CHECKED if not ctx.all_answered else OK)


# ---------------------------------------------------------------- pop


def pop(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.kind != "pop":
        return [], Check(code, NOT_APPLICABLE, "not a pop group")
    ts = ctx.now.ts
    out = []
    over = []
    for cid, info in sorted(ctx.infos.items()):
        thr, _ = prop(info, "popThresholdForQueue", POP_THRESHOLD_FOR_QUEUE)
        for mq, v in sorted(info.mq_pop_table.items()):
            wait = num((v or {}).get("waitAckCount")) if isinstance(v, dict) else None
            if wait is not None and thr is not None and wait > thr:
                over.append((cid, mq, wait, thr))
    if over:
        out.append(Finding(
            "pop-flow-control", WARNING, f"{len(over)} pop process queue(s) at the pop "
            f"flow-control threshold: {qlist(mq for _, mq, _, _ in over)}",
            why="DefaultMQPushConsumerImpl.popMessage pops a queue again only when at most "
                "popThresholdForQueue popped messages wait for their ack: the client processes "
                "slower than it pops",
            next="make the listener faster, raise consumeThreadMin, or add pop consumers",
            evidence=tuple(Evidence(f"{cid} {q_(mq)}: waitAckCount {w:g} > popThresholdForQueue "
                                    f"{t:g}", ctx.src("GET_CONSUMER_RUNNING_INFO mqPopTable", cid),
                                    ts) for cid, mq, w, t in over[:LISTED]),
            values={"queues": len(over)}, clients=tuple(sorted({c for c, _, _, _ in over})),
            queues=tuple(mq for _, mq, _, _ in over),
            rocketmq="PopProcessQueueInfo.waitAckCount, DefaultMQPushConsumer."
                     "popThresholdForQueue, DefaultMQPushConsumerImpl.popMessage",
            # a pop process queue stands for every queue of its broker (allocate4Pop: -1)
            shows=frozenset((x.POP_FLOW, c, mq.topic, mq.broker_name) for c, mq, _, _ in over),
            explains=frozenset((x.BEHIND, mq.topic, mq.broker_name) for _, mq, _, _ in over)))
    pr = ctx.now.pop_retry
    if pr is None:
        return out, Check(code, FOUND if out else NOT_CHECKED,
                          "the pop retry topics were not read")
    for t, rt in sorted(pr.items()):
        if rt.messages <= 0:
            continue

        def total(r: Reading, t: str = t) -> int | None:
            x = (r.pop_retry or {}).get(t)
            return x.max_offsets if x is not None else None

        grew, rate = growth(ctx, total)
        ev = [Evidence(f"{rt.topic}: {n_(rt.messages)} message(s) revived"
                       + (f", the last {format_duration(ts - rt.last_ts)} ago" if rt.last_ts
                          else ""),
                       ctx.src("GET_TOPIC_STATS_INFO", rt.topic), ts)]
        if grew is not None:
            ev.append(Evidence(f"{n_(grew)} revived during the sample",
                               ctx.src("GET_TOPIC_STATS_INFO, two reads"), ts))
        out.append(Finding(
            "pop-retry", ERROR if grew else WARNING,
            f"{n_(rt.messages)} message(s) of {t} came back through {rt.topic}"
            + (f" ({tps(rate)} during the sample)" if grew else ""),
            why="a popped message that is not acked within its invisible time "
                "(popInvisibleTime) is revived into the pop retry topic and delivered again "
                "(PopReviveService): its consumption failed or took longer than the invisible "
                "time",
            next="raise popInvisibleTime if consumption is slow, or fix what fails "
                 "(consume-failing)",
            evidence=tuple(ev), values={"topic": rt.topic, "messages": rt.messages,
                                        "revived": grew},
            topics=(rt.topic,),
            rocketmq="KeyBuilder.buildPopRetryTopic, PopReviveService, "
                     "DefaultMQPushConsumer.popInvisibleTime",
            shows=frozenset({(x.RETRY, rt.topic)})))
    return outcome(code, out, "waitAckCount within popThresholdForQueue; no revived message")


# ---------------------------------------------------------------- where the lag is


def skew(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read")
    if ctx.kind in ("offline", "broadcasting"):
        return [], Check(code, NOT_APPLICABLE, f"{ctx.kind} group")
    ts = ctx.now.ts
    out = []
    notes = []
    by_topic: dict[str, list[QueueProgress]] = defaultdict(list)
    for q in ctx.queues:
        by_topic[q.mq.topic].append(q)
    first = {q.mq: q for q in ctx.queues_of(ctx.first)} if ctx.first is not None else {}
    dt = (ctx.now.ts - ctx.first.ts) / 1000 if ctx.first is not None else 0
    for t, qs in sorted(by_topic.items()):
        if len(qs) < 2:
            continue
        states = {q.mq: is_behind(q) for q in qs}
        behind = [q for q in qs if states[q.mq]]
        if any(v is None for v in states.values()) or not behind:
            notes.append(f"{t}: " + ("time lag unknown on some queue" if any(
                v is None for v in states.values()) else "no queue behind"))
            continue
        if any(q.mq in ctx.explained for q in behind):
            notes.append(f"{t}: the lagging queues are explained above")
            continue
        brokers = {q.mq.broker_name for q in behind}
        on_broker = [q for q in qs if q.mq.broker_name in brokers]
        all_brokers = {q.mq.broker_name for q in qs}
        rates = {q.mq: (q.broker_offset - first[q.mq].broker_offset) / dt
                 for q in qs if q.mq in first and dt > 0}
        owners = {q.mq: ", ".join(c for c, _ in ctx.owners.get(q.mq, [])) or (
            "no owner" if ctx.all_answered else "unknown (a client did not answer)")
            for q in qs}
        caught = [q for q in qs if not states[q.mq]]
        tl = max((q.delay_ms or 0) for q in caught) if caught else 0
        lag = sum(queue_lag(q) for q in behind)
        where = next(iter(brokers)) if len(brokers) == 1 else ""
        # the lag concentrates on these queues: it explains their lag, and the saturation and
        # flow control of their owners when those are no slower than the group's other
        # clients (a slower owner explains the concentration instead: threads-saturated)
        shows = qfacts(x.CONCENTRATED, (q.mq for q in behind))
        explains = set(lag_facts(q.mq for q in behind))
        owned = {cid for q in behind for cid, _ in ctx.owners.get(q.mq, [])}
        for q in behind:
            for cid, _ in ctx.owners.get(q.mq, []):
                if not ctx.slower(cid):
                    explains |= {(x.SATURATED, cid), qfact(x.FLOW, q.mq, cid)}
        # each queue behind (its lag, time lag, owner, what it received), then the others
        ev = tuple(Evidence(
            f"{q_(q.mq)}: lag {n_(q.lag)}, time lag {format_duration(q.delay_ms)}, owner "
            f"{owners[q.mq]}" + (f", {tps(rates[q.mq])} produced during the sample"
                                 if q.mq in rates else ""),
            ctx.src("GET_CONSUME_STATS + QUERY_CONSUME_TIME_SPAN", where), ts)
            for q in behind[:LISTED]) + (Evidence(
                f"the other {len(caught)} queue(s): time lag at most "
                f"{format_duration(tl) or '0'}", ctx.src("QUERY_CONSUME_TIME_SPAN"), ts),
                ) + ctx.speed_evidence(owned)
        source = "QueueTimeSpan.delayTime (AdminBrokerProcessor.queryConsumeTimeSpan)"
        if (len(brokers) == 1 and len(all_brokers) > 1 and len(behind) * 2 >= len(on_broker)
                and len(behind) > 1):
            out.append(Finding(
                "broker-skew", WARNING, f"{t}: the lag is on {where} ({len(behind)} of its "
                f"{len(on_broker)} queue(s), lag {n_(lag)}); the other brokers' queues are "
                "caught up",
                why=f"the consumers of {where}'s queues are slower than its production, or "
                    f"{where} serves pulls slowly, or more is produced there",
                next=f"`mqctl group progress {ctx.group} --sort lag`; the owners and the broker "
                     "findings above; `mqctl topic status " + t + "`",
                evidence=ev,
                values={"topic": t, "broker": where, "lag": lag, "queues_behind": len(behind)},
                brokers=(where,), topics=(t,), queues=tuple(q.mq for q in behind),
                rocketmq=source, shows=shows, explains=frozenset(explains)))
        elif len(behind) * 2 < len(qs):
            hot = [q for q in behind if rates.get(q.mq) is not None]
            others = sorted(r for mq, r in rates.items() if mq not in {q.mq for q in behind})
            med = others[len(others) // 2] if others else None
            out.append(Finding(
                "hot-queue", WARNING, f"{t}: the lag is on {len(behind)} of {len(qs)} queue(s) "
                f"({qlist(q.mq for q in behind)}, lag {n_(lag)}); the others are caught up",
                why="the lag sits on a few queues: a hot sharding key (a MessageQueueSelector "
                    "sends all of a key's messages to one queue, consumed by one client) or a "
                    "slow owner"
                    + (f"; during the sample they received more than the others (median "
                       f"{tps(med)})" if hot and med is not None else ""),
                next=f"`mqctl group progress {ctx.group} --sort lag`; the producer's keys; the "
                     "owners' findings above",
                evidence=ev,
                values={"topic": t, "lag": lag, "queues_behind": len(behind),
                        "queues": len(qs)},
                topics=(t,), queues=tuple(q.mq for q in behind), rocketmq=source,
                shows=shows, explains=frozenset(explains)))
        else:
            notes.append(f"{t}: {len(behind)} of {len(qs)} queue(s) behind (not concentrated)")
    return outcome(code, out, "; ".join(notes) or "no topic with two queues")


def lag_growing(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read")
    if ctx.kind in ("offline", "broadcasting"):
        return [], Check(code, NOT_APPLICABLE, f"{ctx.kind} group"
                         + (" (see offline)" if ctx.kind == "offline" else ""))
    ts = ctx.now.ts
    out = []
    notes = []
    by_topic: dict[str, list[QueueProgress]] = defaultdict(list)
    for q in ctx.queues:
        by_topic[q.mq.topic].append(q)
    for t, qs in sorted(by_topic.items()):
        lag = sum(queue_lag(q) for q in qs)
        tl = [q.delay_ms for q in qs if q.delay_ms is not None]
        behind = [q for q in qs if is_behind(q)]
        produce = ctx.progress.produce_tps.get(t)
        consume = ctx.client_tps(t)

        def topic_lag(r: Reading, t: str = t) -> int | None:
            if r.progress is None:
                return None
            return sum(queue_lag(q) for q in ctx.queues_of(r) if q.mq.topic == t)

        grew, rate = growth(ctx, topic_lag)
        ev_tps = (f"produced {tps(produce)} (the brokers' topicPutTps / TOPIC_PUT_NUMS), "
                  f"consumed {tps(consume)} (the clients' consumeOKTPS)")
        if not behind:
            notes.append(f"{t}: lag {n_(lag)}, time lag at most "
                         f"{format_duration(max(tl, default=0)) or '0'}; {ev_tps}"
                         + (f"; {tps(rate)} over the sample" if rate is not None else ""))
            continue
        slower = produce is not None and consume is not None and consume < produce
        if grew is not None:
            growing = grew > 0
        else:
            growing = slower
        if not growing:
            notes.append(f"{t}: behind (lag {n_(lag)}) but not growing: {ev_tps}"
                         + (f"; {tps(rate)} over the sample" if rate is not None else ""))
            continue
        ev = [Evidence(f"{t}: lag {n_(lag)} on {len(qs)} queue(s), {len(behind)} behind, time "
                       f"lag up to {format_duration(max(tl, default=0))}",
                       ctx.src("GET_CONSUME_STATS + QUERY_CONSUME_TIME_SPAN"), ts),
              Evidence(ev_tps, ctx.src("GET_TOPIC_STATS_INFO / VIEW_BROKER_STATS_DATA + "
                                       "GET_CONSUMER_RUNNING_INFO statusTable"), ts)]
        if grew is not None:
            ev.append(Evidence(f"lag {'+' if grew >= 0 else ''}{n_(grew)} during the "
                               f"{format_duration(ts - (ctx.first.ts if ctx.first else ts))} "
                               f"sample ({tps(rate)})", ctx.src("GET_CONSUME_STATS, two reads"),
                               ts))
        out.append(Finding(
            code, ERROR, f"{t}: lag {n_(lag)} and growing"
            + (f": consumed {tps(consume)}, produced {tps(produce)}" if slower else
               f" by {tps(rate)}" if rate is not None else ""),
            why="the group consumes slower than the topic is produced: the lag and the time "
                "lag keep growing until production slows down or consumption speeds up; the "
                "findings above say why the consumers are slow",
            next="act on the findings above; else add consumers (up to the number of queues) "
                 "or make consumption faster",
            evidence=tuple(ev),
            values={"topic": t, "lag": lag, "produce_tps": produce, "consume_tps": consume,
                    "lag_change": grew, "lag_change_tps": rate,
                    "max_time_lag_ms": max(tl, default=None)},
            topics=(t,),
            rocketmq="ConsumeStatus.consumeOKTPS, BrokerStatsManager (TOPIC_PUT_NUMS / "
                     "topicPutTps), QueueTimeSpan.delayTime",
            shows=qfacts(x.BEHIND, (q.mq for q in behind))))
    return outcome(code, out, "; ".join(notes) or "no offsets",
                   ", ".join(f.topics[0] for f in out))

"""The rules about the brokers' side (pure): consumption disabled in the group's subscription
config, a topic not readable, and a broker's own state (pull and page cache busy, a slave
behind its master)."""

from __future__ import annotations

from mqctl.diagnose import explain as x
from mqctl.diagnose.capture import is_main_topic
from mqctl.diagnose.explain import qfacts
from mqctl.diagnose.rules.common import (
    HA_MAX_GAP,
    OS_PAGE_CACHE_BUSY_MS,
    WAIT_PULL_QUEUE_MS,
    Ctx,
    lag_facts,
    n_,
    num,
    outcome,
    queue_lag,
)
from mqctl.diagnose.types import (
    ERROR,
    FOUND,
    NOT_APPLICABLE,
    NOT_CHECKED,
    OK,
    WARNING,
    Check,
    Evidence,
    Finding,
)
from mqctl.models import decode_perm

# ---------------------------------------------------------------- the group or topic refused


def consume_disabled(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    cfg = ctx.now.config
    if cfg is None:
        if ctx.now.config_missing:
            return [], Check(code, OK, "no broker holds a subscription group for it (every "
                                       "broker that auto-creates it consumes: consumeEnable "
                                       "true by default)")
        return [], Check(code, NOT_CHECKED, ctx.now.unread.get("group config", "not read"))
    unread = ctx.now.unread.get("group config")
    if not ctx.disabled:
        held = [b for b in cfg.holders]
        return [], Check(code, NOT_CHECKED if unread else OK,
                         (unread + "; " if unread else "")
                         + f"consumeEnable true on {', '.join(held) or 'no broker'}")
    out = []
    ts = ctx.now.ts
    for b in sorted(ctx.disabled):
        qs = [q for q in ctx.queues if q.mq.broker_name == b]
        ctx.explained |= {q.mq for q in qs}
        lag = sum(queue_lag(q) for q in qs)
        ev = [Evidence(f"consumeEnable=false in {ctx.group}'s subscription group on {b}"
                       + (f" ({ctx.now.paused_by})" if ctx.now.paused_by else ""),
                       ctx.src("GET_ALL_SUBSCRIPTIONGROUP_CONFIG", b), ts)]
        if ctx.progress is not None:
            ev.append(Evidence(f"{len(qs)} queue(s) on {b}: lag {n_(lag)}",
                               ctx.src("GET_CONSUME_STATS", b), ts))
        out.append(Finding(
            code, ERROR, f"consumption disabled on {b}: consumeEnable=false"
            + (f"; lag {n_(lag)} on its {len(qs)} queue(s)" if qs else ""),
            why=f"{b} refuses every pull of {ctx.group} (PullMessageProcessor: NO_PERMISSION "
                f"'subscription group no permission, {ctx.group}'): its queues are allocated "
                "to consumers that get nothing from them",
            next=f"if it was paused on purpose (`mqctl group pause`), resume it once fixed: "
                 f"`mqctl group resume {ctx.group} --brokers {b}` (plans first; --execute "
                 f"applies, with the config as read); `mqctl group config {ctx.group}` shows "
                 "every field",
            evidence=tuple(ev), values={"broker": b, "consumeEnable": False, "lag": lag},
            brokers=(b,), queues=tuple(q.mq for q in qs),
            rocketmq="SubscriptionGroupConfig.consumeEnable, PullMessageProcessor",
            shows=frozenset({(x.BROKER, "consume-disabled", b)}),
            explains=lag_facts(q.mq for q in qs)))
    return out, Check(code, FOUND, ", ".join(sorted(ctx.disabled)))


def topic_not_readable(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    routes = {t: rt for t, rt in ctx.now.routes.items()
              if is_main_topic(t) and (ctx.topic is None or t == ctx.topic)}
    if not routes:
        return [], Check(code, NOT_CHECKED if ctx.queues else NOT_APPLICABLE,
                         "no route of the group's topics was read")
    if not ctx.unreadable:
        return [], Check(code, OK, "readable on every broker: " + "; ".join(
            f"{t} perm " + ", ".join(f"{q.broker_name} {decode_perm(q.perm)}" for q in rt.queues)
            for t, rt in sorted(routes.items())))
    out = []
    ts = ctx.now.ts
    for t, bs in sorted(ctx.unreadable.items()):
        for b, perm in sorted(bs.items()):
            qs = [q for q in ctx.queues if q.mq.topic == t and q.mq.broker_name == b]
            ctx.explained |= {q.mq for q in qs}
            lag = sum(queue_lag(q) for q in qs)
            ev = [Evidence(f"{t} on {b}: perm {perm} ({decode_perm(perm)}): not readable",
                           ctx.src("GET_ROUTEINFO_BY_TOPIC", "name server"), ts)]
            if qs:
                ev.append(Evidence(f"{len(qs)} queue(s) of {t} on {b}: lag {n_(lag)}",
                                   ctx.src("GET_CONSUME_STATS", b), ts))
            writable = bool(perm & 2)
            out.append(Finding(
                code, ERROR if lag > 0 or writable else WARNING,
                f"{t} is not readable on {b} (perm {decode_perm(perm)})"
                + (f": lag {n_(lag)} there" if qs else ""),
                why="clients leave queues that are not readable out of their allocation "
                    "(MQClientInstance.topicRouteData2TopicSubscribeInfo) and the broker "
                    f"refuses their pulls ('the topic[{t}] pulling message is forbidden')"
                    + (": what producers still write there is never consumed" if writable
                       else ""),
                next=f"`mqadmin updateTopicPerm -b {ctx.addr(b)} -t {t} -p 6` (read and write)",
                evidence=tuple(ev), values={"topic": t, "broker": b, "perm": perm, "lag": lag},
                brokers=(b,), topics=(t,), queues=tuple(q.mq for q in qs),
                rocketmq="PermName, QueueData.perm, PullMessageProcessor",
                shows=frozenset({(x.BROKER, "not-readable", t, b)}),
                explains=lag_facts(q.mq for q in qs) | qfacts(x.UNOWNED, (q.mq for q in qs))))
    return out, Check(code, FOUND, "; ".join(f"{t}: {', '.join(sorted(bs))}"
                                             for t, bs in sorted(ctx.unreadable.items())))


# ---------------------------------------------------------------- brokers


def _broker_num(ctx: Ctx, broker: str, key: str, default: float) -> tuple[float, str]:
    """A threshold from the broker's config (GET_BROKER_CONFIG), else RocketMQ's default."""
    src = ctx.now.broker_config.get(broker) or {}
    v = num(src.get(key))
    if v is not None:
        return v, f"{key} {n_(v)} (GET_BROKER_CONFIG)"
    return default, f"{key} {n_(default)} (RocketMQ's default; not in the broker's config)"


def brokers(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    rt = ctx.now.runtime
    if not rt:
        return [], Check(code, NOT_CHECKED if ctx.now.routes else NOT_APPLICABLE,
                         "no broker runtime info was read")
    ts = ctx.now.ts
    out = []
    okays = []
    for b, table in sorted(rt.items()):
        head = num(table.get("pullThreadPoolQueueHeadWaitTimeMills"))
        size = num(table.get("pullThreadPoolQueueSize"))
        capn = num(table.get("pullThreadPoolQueueCapacity"))
        wait, wait_src = _broker_num(ctx, b, "waitTimeMillsInPullQueue", WAIT_PULL_QUEUE_MS)
        busy = []
        if head is not None and head > wait:
            busy.append(f"pullThreadPoolQueueHeadWaitTimeMills {head:g} > {wait_src}")
        if size is not None and capn is not None and capn > 0 and size >= capn:
            busy.append(f"pullThreadPoolQueueSize {size:g} >= pullThreadPoolQueueCapacity "
                        f"{capn:g}")
        if busy:
            out.append(Finding(
                "broker-pull-busy", ERROR, f"{b} is too busy to serve pulls: "
                + "; ".join(busy),
                why="BrokerFastFailure answers pull requests that waited in the pull thread "
                    "pool's queue longer than waitTimeMillsInPullQueue with SYSTEM_BUSY "
                    "('[TIMEOUT_CLEAN_QUEUE]broker busy') and a full queue rejects them: "
                    f"consumers of {b} get nothing for a while and pull again later",
                next=f"the broker: its pull threads (pullMessageThreadPoolNums), disk and page "
                     f"cache; `mqadmin brokerStatus -b {ctx.addr(b)}`",
                evidence=(Evidence("; ".join(busy), ctx.src("GET_BROKER_RUNTIME_INFO", b), ts),),
                values={"broker": b, "pullThreadPoolQueueHeadWaitTimeMills": head,
                        "pullThreadPoolQueueSize": size, "waitTimeMillsInPullQueue": wait},
                brokers=(b,), rocketmq="BrokerFastFailure, BrokerConfig.waitTimeMillsInPullQueue, "
                                       "AdminBrokerProcessor.prepareRuntimeInfo",
                # pulls answered late or SYSTEM_BUSY: the queues of this broker fall behind
                shows=frozenset({(x.BROKER, "pull-busy", b)}),
                explains=lag_facts(q.mq for q in ctx.queues if q.mq.broker_name == b)))
        lock = num(table.get("pageCacheLockTimeMills"))
        busy_ms, busy_src = _broker_num(ctx, b, "osPageCacheBusyTimeOutMills",
                                        OS_PAGE_CACHE_BUSY_MS)
        if lock is not None and lock > busy_ms:
            out.append(Finding(
                "broker-page-cache-busy", WARNING, f"{b}'s page cache is busy: "
                f"pageCacheLockTimeMills {lock:g} > {busy_src}",
                why="the commit log's write lock is held longer than osPageCacheBusyTimeOutMills: "
                    "the broker refuses sends ('[PC_SYNCHRONIZED]broker busy' / "
                    "'[PCBUSY_CLEAN_QUEUE]'), so producers fail or go elsewhere; its disk is "
                    "overloaded, which also slows the pulls it reads from disk",
                next=f"the broker's disk (iostat) and memory; `mqadmin brokerStatus -b "
                     f"{ctx.addr(b)}`",
                evidence=(Evidence(f"pageCacheLockTimeMills {lock:g}; {busy_src}",
                                   ctx.src("GET_BROKER_RUNTIME_INFO", b), ts),),
                values={"broker": b, "pageCacheLockTimeMills": lock,
                        "osPageCacheBusyTimeOutMills": busy_ms},
                brokers=(b,), rocketmq="DefaultMessageStore.isOSPageCacheBusy, "
                                       "MessageStoreConfig.osPageCacheBusyTimeOutMills",
                shows=frozenset({(x.BROKER, "page-cache-busy", b)})))
        slave = ctx.now.slave_runtime.get(b)
        m_off = num(table.get("commitLogMaxOffset"))
        s_off = num((slave or {}).get("commitLogMaxOffset"))
        if slave is not None and m_off is not None and s_off is not None:
            cfg = ctx.now.broker_config.get(b) or {}
            key = "haMaxGapNotInSync" if "haMaxGapNotInSync" in cfg else "haSlaveFallbehindMax"
            gap, gap_src = _broker_num(ctx, b, key, HA_MAX_GAP)
            behind = m_off - s_off
            if behind > gap:
                sre = cfg.get("slaveReadEnable")
                out.append(Finding(
                    "slave-behind", WARNING, f"{b}'s slave is {n_(behind)} bytes behind its "
                    "master",
                    why="consumers read from the slave when the master is down, or when "
                        "slaveReadEnable is true and the master suggests it for a consumer far "
                        f"behind (slaveReadEnable: {sre or 'unknown'}): then they see only "
                        "what the slave has and wait for the rest",
                    next="the replication link (network, the slave's disk); `mqadmin "
                         "brokerStatus` on both",
                    evidence=(Evidence(f"commitLogMaxOffset master {n_(m_off)}, slave "
                                       f"{n_(s_off)}; "
                                       f"{gap_src}", ctx.src("GET_BROKER_RUNTIME_INFO",
                                                             f"{b} master and slave"), ts),),
                    values={"broker": b, "behind_bytes": behind, "limit": gap},
                    brokers=(b,), rocketmq="HAService, MessageStoreConfig.haSlaveFallbehindMax "
                                           "(4.x) / haMaxGapNotInSync (5.x)",
                    shows=frozenset({(x.BROKER, "slave-behind", b)})))
        reported = [k for k in ("pullThreadPoolQueueHeadWaitTimeMills", "pageCacheLockTimeMills",
                                "commitLogMaxOffset") if k in table]
        if reported:
            okays.append(f"{b}: " + ", ".join(f"{k} {table[k]}" for k in reported)
                         + ("" if slave is None or s_off is not None else
                            "; its slave's commitLogMaxOffset not reported"))
    return outcome(code, out, "; ".join(okays) or "no broker reports the entries checked",
                   ", ".join(f"{f.code} {f.brokers[0]}" for f in out),
                   status=OK if okays else NOT_CHECKED)

"""The rules about who consumes (pure): nobody online, members that do not answer, members
that disagree (client ids, strategies, subscriptions), queues nobody owns, and a rebalance
between the two reads of ``--sample``."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from mqctl.diagnose import explain as x
from mqctl.diagnose.capture import is_main_topic
from mqctl.diagnose.explain import qfacts
from mqctl.diagnose.rules.common import (
    LISTED,
    Ctx,
    lag_facts,
    n_,
    online_needed,
    outcome,
    q_,
    qlist,
    queue_lag,
    total_lag,
)
from mqctl.diagnose.types import (
    ERROR,
    FOUND,
    NEEDS_SAMPLE,
    NOT_CHECKED,
    OK,
    WARNING,
    Check,
    Evidence,
    Finding,
)
from mqctl.models import RETRY_PREFIX, MessageQueue
from mqctl.timeparse import format_duration, format_local
from mqctl.views.members import check_members
from mqctl.views.progress import NO_QUEUE_READ, no_queue_reason

if TYPE_CHECKING:
    from mqctl.locks.types import QueueLock


# ---------------------------------------------------------------- nobody consumes


def offline(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.online is None:
        return [], Check(code, NOT_CHECKED, ctx.now.unread.get("members", "member list unread"))
    m = ctx.members
    assert m is not None
    if ctx.online:
        return [], Check(code, OK, f"{len(ctx.clients)} client(s) online on "
                                   f"{len([b for b, v in m.members.items() if v])} broker(s)")
    ts = ctx.now.ts
    ev = [Evidence(f"{b}: no member", ctx.src("GET_CONSUMER_LIST_BY_GROUP", b), ts)
          for b in sorted(m.members)]
    lag = total_lag(ctx.queues) if ctx.progress else None
    last = max((q.last_timestamp for q in ctx.queues), default=0)
    # no queue read at all (every broker answered): nothing says which queues the group would
    # read (created by updateSubGroup and never consumed: corpus */never-committed/ NC_NEVER);
    # its lag is unknown, as `groups` (EMPTY, LAG -) and `group progress` say, not 0
    nothing = ctx.progress is not None and not ctx.queues and ctx.progress.complete
    if lag is not None:
        # the queues read, with what they are of: a broker that did not answer leaves its
        # queues (and their lag) out, so the sum is then the lag of those read only
        missing = ctx.progress.not_included if ctx.progress else []
        ev.append(Evidence(f"lag {n_(lag)} message(s) on {len(ctx.queues)} queue(s)"
                           + (f" read (not included: {', '.join(missing)})" if missing else "")
                           + (f"; the last message consumed was stored {format_duration(ts - last)}"
                              " ago" if last else ""),
                           "GET_CONSUME_STATS", ts))
    elif nothing:
        ev.append(Evidence(f"lag unknown: {NO_QUEUE_READ}: "
                           + no_queue_reason(ctx.subscribed, None), "GET_CONSUME_STATS", ts))
    sev = WARNING if nothing or lag == 0 else ERROR
    return [Finding(
        code, sev, f"nobody consumes: group {ctx.group} has no member on any broker"
        + (f"; lag {n_(lag)}" if lag else "; no queue was read: lag unknown" if nothing
           else ""),
        why="with no consumer online no queue is pulled: the lag grows with every message "
            "produced",
        next=f"start the group's consumers (`mqctl consumers {ctx.group}` shows who is "
             "connected)", evidence=tuple(ev),
        values={"lag": lag, "last_consumed_ts": last or None},
        brokers=tuple(sorted(m.members)),
        rocketmq="ConsumerManager (GET_CONSUMER_LIST_BY_GROUP)",
        shows=frozenset({(x.OFFLINE,)}), explains=frozenset({(x.BEHIND,), (x.CONCENTRATED,)}))
    ], Check(code, FOUND, "offline")


# ---------------------------------------------------------------- clients


def client_silent(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := online_needed(ctx, code)) is not None:
        return [], c
    # the error without the broker's address and the Java stack the remark carries
    silent = {c: re.sub(r" from [\w.\-]+:[0-9]+", "", cv.running_error or "no answer"
                        ).split(": org.apache.")[0]
              for c, cv in ctx.clients.items() if cv.running is None}
    if not silent:
        return [], Check(code, OK, f"all {len(ctx.clients)} client(s) answered "
                                   "GET_CONSUMER_RUNNING_INFO")
    ts = ctx.now.ts
    hung = _hung_holders(ctx)
    evidence = [Evidence(f"{c}: {why}", ctx.src("GET_CONSUMER_RUNNING_INFO", c), ts)
                for c, why in sorted(silent.items())]
    title = (f"{len(silent)} client(s) do not answer GET_CONSUMER_RUNNING_INFO: "
             + ", ".join(sorted(silent)))
    nxt = ("a thread dump of the client (jstack); a hung client is dropped by the brokers "
           f"about 120 s after its last heartbeat; `mqctl consumers {ctx.group}`")
    if hung:
        # a hung member the allocation still gives orderly queues: nobody else consumes them
        # until the brokers drop it (mqctl.locks: state hung), the cause of their lag
        title += (f" (hung, holding {sum(len(qs) for qs in hung.values())} orderly queue(s) "
                  "that nobody else consumes until the brokers drop it)")
        for cid, qs in sorted(hung.items()):
            h = qs[0].hung
            assert h is not None
            lo, hi = h.dropped
            evidence.append(Evidence(
                f"{cid}: a member that last answered at {format_local(h.last_answer_ts)} and "
                f"does not since {format_local(h.silent_ts)}; the allocation still assigns it "
                f"{qlist(q.mq for q in qs)}; the brokers drop it between {format_local(lo)} "
                f"and {format_local(hi)} (120 s after its last heartbeat), its queues are "
                f"consumed again by {format_local(h.resumes_by)} at the latest",
                ctx.src("GET_CONSUMER_LIST_BY_GROUP + mqctl locks show's state file"), ts))
        nxt = (f"restart {', '.join(sorted(hung))} (a frozen process: its connections close and "
               "the others take its queues at once) or wait until the brokers drop it; a lock "
               f"release frees nobody; `mqctl locks show {ctx.group}` says until when")
    return [Finding(
        code, ERROR if hung else WARNING, title,
        why="the broker forwards the request over the client's own connection: a member that "
            "does not answer is hung, overloaded or gone without closing its connection, and "
            "its queues stay allocated to it; the checks that need its running info are not "
            "made",
        next=nxt, evidence=tuple(evidence),
        values={"clients": sorted(silent), "hung": sorted(hung)},
        clients=tuple(sorted(silent)),
        queues=tuple(q.mq for qs in hung.values() for q in qs),
        rocketmq="AdminBrokerProcessor.getConsumerRunningInfo, Broker2Client, "
                 "ConsumerManager.scanNotActiveChannel",
        shows=frozenset((x.SILENT, c) for c in silent),
        explains=ctx.silent_explains(silent))], \
        Check(code, FOUND, ", ".join(sorted(silent)))


def _hung_holders(ctx: Ctx) -> dict[str, list[QueueLock]]:
    """Per hung member (mqctl.locks state ``hung``), the orderly queues it blocks."""
    out: dict[str, list[QueueLock]] = defaultdict(list)
    view = ctx.now.locks
    if ctx.kind != "orderly" or view is None:
        return out
    for q in view.queues:
        if q.state.value == "hung" and q.owner and q.hung is not None \
                and (ctx.topic is None or q.mq.topic == ctx.topic):
            out[q.owner].append(q)
    return out


# the checks of `mqctl consumers` (mqctl.views.members.check_members) and what each explains
MEMBER_CHECKS = {
    "duplicate-id": ("duplicate-client-id", ERROR,
                     "the clients with one id compute the same allocation and take the same "
                     "queues, while the queues that id's other share would get are consumed "
                     "by nobody (RebalanceImpl allocates over the sorted id list)",
                     "give every process a unique instanceName (or clientIP): "
                     "ClientConfig.buildMQClientId is ip@instanceName"),
    "strategy": ("mixed-strategies", ERROR,
                 "each client allocates with its own AllocateMessageQueueStrategy over the same "
                 "queue and member lists: the shares overlap (two clients on one queue) and "
                 "leave gaps (queues nobody takes)",
                 "give every client of the group the same allocateMessageQueueStrategy"),
    "membership": ("membership-split", ERROR,
                   "a client asks ONE broker of the route for the member list "
                   "(MQClientInstance.findConsumerIdList): clients that ask different brokers "
                   "compute different allocations, and a client a broker does not list gets "
                   "nothing from those that ask it",
                   "find why the client does not heartbeat to every broker (network, ACL, "
                   "its route); `mqctl consumers {g}` shows who each broker lists"),
    "subscription": ("subscription-mismatch", ERROR,
                     "a broker keeps ONE subscription per topic for the group (the one with "
                     "the newest subVersion, ConsumerGroupInfo.updateSubscription) and filters "
                     "every member's pulls with it (PullMessageProcessor): messages a client "
                     "wants and the broker's expression excludes never reach it, and messages "
                     "it does not want are dropped by its own tag filter with their offsets "
                     "committed",
                     "give every client of the group the same subscriptions (one group per "
                     "subscription)"),
    "idle": ("idle-consumers", WARNING,
             "a queue is consumed by one client at a time: the clients beyond the number of "
             "queues get none and add no capacity",
             "fewer consumers, or more queues (`mqadmin updateTopic -r/-w`)"),
}


def member_checks(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := online_needed(ctx, code)) is not None:
        return [], c

    assert ctx.members is not None
    ts = ctx.now.ts
    out: list[Finding] = []
    found = []
    for f in check_members(ctx.members):
        spec = MEMBER_CHECKS.get(f.check)
        if spec is None:
            continue
        fcode, sev, why, nxt = spec
        found.append(fcode)
        src = ("GET_CONSUMER_LIST_BY_GROUP on every broker"
               if f.check in ("duplicate-id", "membership", "idle")
               else "GET_CONSUMER_RUNNING_INFO of every client")
        ev = [Evidence(f.message, src, ts)]
        values: dict[str, Any] = {"clients": list(f.clients)}
        if f.check == "subscription":
            ev += _subscription_effect(ctx)
        if f.check == "duplicate-id":
            values["connections"] = {c: ctx.clients[c].connections for c in f.clients
                                     if c in ctx.clients}
        title = f.message
        if f.check != "idle":  # the message up to its explanation
            title = (f.message.split("): ")[0] + ")" if "): " in f.message
                     else f.message.split(": ")[0])
        shows = frozenset((x.NOT_LISTED, c) if f.check == "membership"
                          else (x.MEMBERSHIP, f.check, c) for c in f.clients)
        # an allocation computed from different member lists, strategies or duplicate ids
        # leaves queues to nobody (RebalanceImpl.rebalanceByTopic)
        explains = (frozenset({(x.UNOWNED,)})
                    if f.check in ("membership", "strategy", "duplicate-id") else frozenset())
        out.append(Finding(fcode, sev, title, why=why, next=nxt.format(g=ctx.group),
                           evidence=tuple(ev), values=values, clients=f.clients,
                           rocketmq=_MEMBER_SOURCES[f.check], shows=shows,
                           explains=explains))
    return outcome(code, out, f"{len(ctx.clients)} client(s): unique ids, one strategy, one "
                   "subscription, the same member list on every broker", ", ".join(found))


_MEMBER_SOURCES = {
    "duplicate-id": "ClientConfig.buildMQClientId, ConsumerManager, RebalanceImpl",
    "strategy": "AllocateMessageQueueStrategy, RebalanceImpl.rebalanceByTopic",
    "membership": "MQClientInstance.findConsumerIdList, RebalanceImpl.rebalanceByTopic",
    "subscription": "ConsumerGroupInfo.updateSubscription, PullMessageProcessor, "
                    "ConsumerRunningInfo.analyzeSubscription",
    "idle": "AllocateMessageQueueAveragely (and every built-in strategy)",
}


def _subscription_effect(ctx: Ctx) -> list[Evidence]:
    """What each broker filters with (its group-level subscription) against what each client
    subscribed, and the clients whose subVersion is newer than the broker's: their pulls are
    answered SUBSCRIPTION_NOT_LATEST until their next heartbeat reaches that broker."""
    out = []
    ts = ctx.now.ts
    for b, conn in sorted(ctx.now.connections.items()):
        if conn is None:
            continue
        for t, sub in sorted(conn.subscriptions.items()):
            if not is_main_topic(t):
                continue
            differ, newer = [], []
            for cid, info in sorted(ctx.infos.items()):
                mine = next((s for s in info.subscriptions if s.topic == t), None)
                if mine is None:
                    continue
                if mine.expression != sub.expression:
                    differ.append(f"{cid} ({mine.expression})")
                if mine.sub_version > sub.sub_version:
                    newer.append(cid)
            if differ:
                out.append(Evidence(f"{b} filters {t} with '{sub.expression}' (subVersion "
                                    f"{sub.sub_version}), not what {', '.join(differ)} "
                                    "subscribed", ctx.src("GET_CONSUMER_CONNECTION_LIST", b), ts))
            if newer:
                out.append(Evidence(f"{b}'s subscription of {t} is older than that of "
                                    f"{', '.join(newer)}: their pulls from {b} get "
                                    "SUBSCRIPTION_NOT_LATEST ('the consumer's subscription not "
                                    "latest') until their heartbeat reaches it",
                                    ctx.src("GET_CONSUMER_CONNECTION_LIST", b), ts))
    return out


def unowned(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if (c := online_needed(ctx, code, ("broadcasting", "pop"), ": no queue owners")):
        return [], c
    if not ctx.all_answered:
        return [], Check(code, NOT_CHECKED, "not every client answered its running info")
    if ctx.progress is None:
        return [], Check(code, NOT_CHECKED, "the offsets were not read")
    want = set(ctx.subscribed)
    cand = [q for q in ctx.queues + ctx.retry_queues
            if (q.mq.topic in want or q.mq.topic.startswith(RETRY_PREFIX))
            and q.mq not in ctx.explained and queue_lag(q) > 0 and not ctx.owners.get(q.mq)
            and q.mq.broker_name not in ctx.disabled
            and q.mq.broker_name not in ctx.unreadable.get(q.mq.topic, {})]
    blocked: dict[str, list[MessageQueue]] = defaultdict(list)
    if ctx.kind == "orderly" and ctx.now.locks is not None:
        # an orderly queue's owner is what the lock classification of `locks show` says (one
        # classification for every view): a queue claimed or assigned but not held is named by
        # the locks check, not unowned
        states = {q.mq: q.state.value for q in ctx.now.locks.queues}
        for q in cand:
            st = states.get(q.mq)
            if st is not None and st != "unowned":
                blocked[st].append(q.mq)
        cand = [q for q in cand if states.get(q.mq, "unowned") == "unowned"]
    if not cand:
        held = (f"every lagging queue of {', '.join(sorted(want)) or '-'} has an owner")
        if blocked:
            return [], Check(code, OK, held + " in the lock classification; not held by it: "
                             + "; ".join(f"{len(ms)} {st} ({qlist(ms)})"
                                         for st, ms in sorted(blocked.items()))
                             + " (see locks)")
        return [], Check(code, OK, held + " (mqTable of the clients' running info)")
    ts = ctx.now.ts
    lag = sum(queue_lag(q) for q in cand)
    ctx.explained |= {q.mq for q in cand}
    return [Finding(
        code, ERROR, f"{len(cand)} queue(s) with lag {n_(lag)} have no owner: "
        + qlist(q.mq for q in cand),
        why="no client holds them in its mqTable: nobody pulls them and their messages wait "
            "(see the membership findings above for why the allocation leaves them out)",
        next=f"`mqctl allocate -g {ctx.group} -t {cand[0].mq.topic}` compares what each "
             f"client should own with what it owns; `mqctl consumers {ctx.group}`",
        evidence=tuple(Evidence(f"{q_(q.mq)}: lag {n_(q.lag)}, no client's mqTable holds it",
                                ctx.src("GET_CONSUME_STATS + GET_CONSUMER_RUNNING_INFO"), ts)
                       for q in cand[:LISTED]),
        values={"lag": lag, "queues": len(cand)}, queues=tuple(q.mq for q in cand),
        rocketmq="RebalanceImpl.updateProcessQueueTableInRebalance (ProcessQueueInfo)",
        shows=qfacts(x.UNOWNED, (q.mq for q in cand)),
        explains=lag_facts(q.mq for q in cand))], \
        Check(code, FOUND, f"{len(cand)} queue(s)")


# ---------------------------------------------------------------- sample: rebalances


def rebalanced(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.first is None:
        return [], Check(code, NEEDS_SAMPLE, "needs two reads: --sample SECONDS")
    m0, m1 = ctx.first.members, ctx.members
    if m0 is None or m1 is None or m0.online_state is None or m1.online_state is None:
        return [], Check(code, NOT_CHECKED, "the member list was not read twice")
    c0, c1 = set(m0.clients), set(m1.clients)
    joined, left = sorted(c1 - c0), sorted(c0 - c1)
    o0, o1 = Ctx.owners_of(ctx.first), ctx.owners
    moved = sorted(mq for mq in set(o0) & set(o1)
                   if {c for c, _ in o0[mq]} != {c for c, _ in o1[mq]}
                   and (ctx.topic is None or mq.topic == ctx.topic))
    if not (joined or left or moved):
        return [], Check(code, OK, f"the same {len(c1)} member(s) and queue owners at both "
                                   "reads")
    ts = ctx.now.ts
    ev = []
    if joined:
        ev.append(Evidence("joined: " + ", ".join(joined), "GET_CONSUMER_LIST_BY_GROUP, two "
                                                           "reads", ts))
    if left:
        ev.append(Evidence("left: " + ", ".join(left), "GET_CONSUMER_LIST_BY_GROUP, two reads",
                           ts))
    for mq in moved[:LISTED]:
        ev.append(Evidence(f"{q_(mq)}: {', '.join(c for c, _ in o0[mq])} -> "
                           f"{', '.join(c for c, _ in o1[mq])}",
                           "GET_CONSUMER_RUNNING_INFO mqTable, two reads", ts))
    return [Finding(
        code, WARNING, f"the group rebalanced during the sample: {len(joined)} joined, "
        f"{len(left)} left, {len(moved)} queue(s) moved",
        why="a queue that moves is dropped by one client and added by another: what was "
            "consumed and not yet committed is consumed again, and an orderly queue waits for "
            "its lock; members that come and go (restarts, lost heartbeats) keep the group "
            "rebalancing",
        next=f"`mqctl consumers {ctx.group}`; look for restarting or flapping clients",
        evidence=tuple(ev), values={"joined": joined, "left": left, "moved": len(moved)},
        clients=tuple(joined + left), queues=tuple(moved),
        rocketmq="RebalanceImpl.rebalanceByTopic, ConsumerManager "
                 "(NOTIFY_CONSUMER_IDS_CHANGED)",
        # a moved orderly queue waits for its lock (the one who left may hold it)
        shows=frozenset({(x.REBALANCE,)}), explains=qfacts(x.LOCK, moved))], \
        Check(code, FOUND, f"{len(moved)} queue(s) moved")

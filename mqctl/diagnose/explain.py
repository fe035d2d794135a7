"""Rank findings by explanation (pure): a finding whose cause explains another finding's
evidence comes before it, and the other one is shown as its consequence.

Each :class:`~mqctl.diagnose.types.Finding` declares the facts it ``shows`` (what it was made
from: flow control on a client's queue, a queue behind, a member a broker does not list) and
the facts its cause ``explains`` (what that cause produces: a hot queue explains flow control
on its owner's queue and the lag there). The rule:

1. A explains B when one of A's explained facts is one of B's shown facts (an explained fact
   may be a prefix: ``("behind", "T")`` covers every queue of T). B is *fully* explained when
   the findings that explain it together cover every fact it shows, *partly* otherwise.
2. A finding comes after every finding that explains it. Findings that explain each other
   (a cycle, directly or through others) are one cause seen twice: none of them is the
   other's consequence, they keep their places by the tie-break and say so (``mutual``).
3. Among the findings whose explainers are all placed, the tie-break decides: severity, then
   the order of the rules (``ORDER``: causes before effects), then the order they were made.
4. A cause is as severe as the worst finding it explains, directly or not (a hot queue that
   puts its owner at its flow-control threshold is an error, as that flow control is).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from mqctl.diagnose.types import SEVERITIES

if TYPE_CHECKING:
    from mqctl.diagnose.types import Fact, Finding
    from mqctl.models import MessageQueue

# the kinds of facts the rules show and explain
BEHIND = "behind"                # a queue behind: (BEHIND, topic, broker, queue id)
CONCENTRATED = "concentrated"    # the lag concentrates on it (hot queue, broker skew)
FLOW = "flow-control"            # (FLOW, client, topic, broker, queue id): count or size
SPAN = "flow-control-span"       # (SPAN, client, topic, broker, queue id): the offset span
SATURATED = "saturated"          # (SATURATED, client)
BLOCKED = "blocked"              # (BLOCKED, client)
SILENT = "silent"                # (SILENT, client): a member that does not answer
UNREAD = "unread"                # (UNREAD, client): its running info was not read
NOT_LISTED = "not-listed"        # (NOT_LISTED, client): a broker does not list the member
MEMBERSHIP = "membership"        # (MEMBERSHIP, check, client): ids, strategies, subscriptions
UNOWNED = "unowned"              # (UNOWNED, topic, broker, queue id)
LOCK = "lock"                    # (LOCK, topic, broker, queue id): an orderly queue not locked
COMMIT = "commit"                # (COMMIT, topic, broker, queue id): committed offset held
FAILING = "failing"              # (FAILING, client)
RETRY = "retry"                  # (RETRY, topic): messages sent back for retry
DLQ = "dlq"                      # (DLQ, topic)
BROKER = "broker"                # (BROKER, what, broker): a broker's own state
POP_FLOW = "pop-flow-control"    # (POP_FLOW, client, topic, broker)
REBALANCE = "rebalance"          # (REBALANCE,)
OFFLINE = "offline"              # (OFFLINE,)
SUSPECT = "suspect"              # (SUSPECT, check, topic, broker, queue id)


def qfact(kind: str, mq: MessageQueue, *about: str) -> Fact:
    """A fact about a queue: ``(kind, *about, topic, broker, queue id)``."""
    return (kind, *about, mq.topic, mq.broker_name, mq.queue_id)


def qfacts(kind: str, mqs: Iterable[MessageQueue], *about: str) -> frozenset[Fact]:
    return frozenset(qfact(kind, mq, *about) for mq in mqs)


def covers(explained: Fact, shown: Fact) -> bool:
    """An explained fact covers a shown one when it is the same or a prefix of it."""
    return len(explained) <= len(shown) and shown[:len(explained)] == explained


def explains(a: Finding, b: Finding) -> bool:
    """Whether ``a``'s cause explains part of ``b``'s evidence."""
    return a is not b and any(covers(e, s) for s in b.shows for e in a.explains)


def _components(n: int, succ: list[set[int]]) -> list[int]:
    """The strongly connected component of each node (Tarjan's algorithm, iterative)."""
    index = [-1] * n
    low = [0] * n
    comp = [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = 0
    ncomp = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, iter(sorted(succ[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if index[nxt] < 0:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack[nxt] = True
                    work.append((nxt, iter(sorted(succ[nxt]))))
                elif on_stack[nxt]:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
    return comp


def rank_findings(findings: Sequence[Finding], order: Sequence[str] = ()) -> list[Finding]:
    """The findings in their ranked order, each with its links set (``explained_by``,
    ``fully_explained``, ``consequences``, ``mutual``: ranks, 1-based) and its severity
    raised to the worst it explains. ``order``: the codes in tie-break order (a code not in
    it comes after those that are)."""
    n = len(findings)
    succ = [{j for j in range(n) if explains(findings[i], findings[j])} for i in range(n)]
    comp = _components(n, succ)
    ncomp = max(comp, default=-1) + 1
    members: list[list[int]] = [[] for _ in range(ncomp)]
    for i, c in enumerate(comp):
        members[c].append(i)
    csucc: list[set[int]] = [set() for _ in range(ncomp)]
    for i in range(n):
        csucc[comp[i]] |= {comp[j] for j in succ[i] if comp[j] != comp[i]}

    # 4. a cause is as severe as the worst finding it explains (Tarjan numbers a component
    # after every component it reaches, so the lower numbers are done first)
    sev = {s: k for k, s in enumerate(SEVERITIES)}
    worst = [min(sev[findings[i].severity] for i in members[c]) for c in range(ncomp)]
    for c in range(ncomp):
        for d in csucc[c]:
            worst[c] = min(worst[c], worst[d])
    raised = [replace(f, severity=SEVERITIES[worst[comp[i]]])
              if sev[f.severity] > worst[comp[i]] else f for i, f in enumerate(findings)]

    # 2. and 3. a component is placed once every component that explains it is; the best
    # tie-break key among those ready goes first, its members in key order
    rank = {c: k for k, c in enumerate(order)}

    def key(i: int) -> tuple[int, int, int]:
        f = raised[i]
        return (sev[f.severity], rank.get(f.code, len(rank)), i)

    waiting = [0] * ncomp
    for c in range(ncomp):
        for d in csucc[c]:
            waiting[d] += 1
    ready = [(min(key(i) for i in members[c]), c) for c in range(ncomp) if not waiting[c]]
    heapq.heapify(ready)
    placed: list[int] = []
    while ready:
        _, c = heapq.heappop(ready)
        placed.extend(sorted(members[c], key=key))
        for d in csucc[c]:
            waiting[d] -= 1
            if not waiting[d]:
                heapq.heappush(ready, (min(key(i) for i in members[d]), d))
    pos = {i: k + 1 for k, i in enumerate(placed)}

    out = []
    for i in placed:
        f = raised[i]
        by = sorted(pos[j] for j in range(n) if i in succ[j] and comp[j] != comp[i])
        full = bool(by) and all(
            any(covers(e, s) for j in range(n) if i in succ[j] and comp[j] != comp[i]
                for e in findings[j].explains) for s in f.shows)
        out.append(replace(
            f, explained_by=tuple(by), fully_explained=full,
            consequences=tuple(sorted(pos[j] for j in succ[i] if comp[j] != comp[i])),
            mutual=tuple(sorted(pos[j] for j in members[comp[i]] if j != i))))
    return out


__all__ = ["BEHIND", "BLOCKED", "BROKER", "COMMIT", "CONCENTRATED", "DLQ", "FAILING", "FLOW",
           "LOCK", "MEMBERSHIP", "NOT_LISTED", "OFFLINE", "POP_FLOW", "REBALANCE", "RETRY",
           "SATURATED", "SILENT", "SPAN", "SUSPECT", "UNOWNED", "UNREAD", "covers", "explains",
           "qfact", "qfacts", "rank_findings"]

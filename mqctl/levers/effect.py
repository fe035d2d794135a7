"""What a pause did, beyond the config read back: the effect RocketMQ gives and what a pause
does not stop.

* **pulls refused**: one PULL_MESSAGE per paused master with the group's name. 4.9.3 and 5.x
  ``PullMessageProcessor.processRequest`` look the group's SubscriptionGroupConfig up and,
  with consumeEnable false, answer NO_PERMISSION "subscription group no permission, <group>"
  before the topic, the queue or the offset are looked at: the probe reads nothing, commits
  nothing and records no pull offset (it is sent only where the read-back showed the pause);
* **offsets**: the group's committed offsets (GET_CONSUME_STATS) at the start and the end of
  the sample (``--sample``): a pause stops new pulls, but the clients still consume and commit
  the messages already in their process queues;
* **clients**: their running info (GET_CONSUMER_RUNNING_INFO): cachedMsgCount (what is still
  consumed) and consumeOKTPS per topic, which falls to 0 once the caches are drained.

Not stopped by a pause (said in the outcome): messages already cached in the clients; pop
consumers and gRPC clients behind a proxy are not checked here; a BROADCASTING group's
offsets live in its clients, so "frozen" cannot be read from the brokers.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.errors import BrokerError, MqctlError
from mqctl.models import RETRY_PREFIX, ConsumerRunningInfo, MessageQueue
from mqctl.remoting.codes import ResponseCode

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.interrupt import Stop
    from mqctl.levers.apply import BrokerResult
    from mqctl.levers.plan import LeverPlan


@dataclass(frozen=True, slots=True)
class PauseEffect:
    pulls: dict[str, str]  # broker -> what the probe pull got
    refused: list[str]  # brokers whose pulls are answered NO_PERMISSION
    offsets_before: int | None  # the sum of committed offsets (None: not read)
    offsets_after: int | None
    sample_s: float
    cached: int | None  # messages cached in the clients (None: not known)
    ok_tps: dict[str, float | None]  # client -> consumeOKTPS summed over its topics
    model: str | None
    clients: int = 0
    pops: bool = False
    failures: list[str] = field(default_factory=list)
    ok_tps_before: dict[str, float | None] | None = None  # at the start of the sample

    @property
    def moved(self) -> int | None:
        if self.offsets_before is None or self.offsets_after is None:
            return None
        return self.offsets_after - self.offsets_before

    def to_dict(self) -> dict[str, Any]:
        return {"pulls": self.pulls, "pulls_refused_on": self.refused,
                "committed_offsets": {"before": self.offsets_before,
                                      "after": self.offsets_after, "moved": self.moved,
                                      "sample_s": self.sample_s},
                "cached_messages": self.cached, "consume_ok_tps": self.ok_tps,
                "consume_ok_tps_before": self.ok_tps_before,
                "clients": self.clients, "message_model": self.model, "pop": self.pops,
                "failures": self.failures}


async def probe_pull(admin: Admin, group: str, addr: str) -> str:
    """What the broker answers the group's pull (read-only: see the module doc)."""
    try:
        await admin.paused_pull(group, addr)
    except BrokerError as exc:
        if exc.code == ResponseCode.NO_PERMISSION:
            return f"NO_PERMISSION: {(exc.remark or '').strip()}"
        return f"answered {exc.message}"
    except MqctlError as exc:
        return f"not answered: {exc.message}"
    return "answered SUCCESS: the broker still serves the group's pulls"


async def _offsets(admin: Admin, group: str, addrs: list[str]) -> int | None:
    total = 0
    for addr in addrs:
        try:
            stats = await admin.consume_stats(group, addr)
        except MqctlError:
            return None
        total += sum(w.consumer_offset or 0 for mq, w in stats.offsets.items()
                     if isinstance(mq, MessageQueue) and not mq.topic.startswith(RETRY_PREFIX))
    return total


async def pause_effect(admin: Admin, plan: LeverPlan, results: list[BrokerResult], *,
                       sample_s: float = 0.0, stop: Stop | None = None) -> PauseEffect:
    group = plan.group
    paused = [r.change for r in results if r.change.addr and r.status.value == "verified"]
    addrs = [c.addr or "" for c in plan.changes if c.addr and c.before is not None]
    pulls = dict(zip([c.broker for c in paused],
                     await asyncio.gather(*(probe_pull(admin, group, c.addr or "")
                                            for c in paused)), strict=True))
    refused = sorted(b for b, text in pulls.items() if text.startswith("NO_PERMISSION"))
    before = await _offsets(admin, group, addrs)
    first = None
    if sample_s > 0 and (stop is None or not stop.stopped):
        first = (await _clients(admin, group))[1]
        await asyncio.sleep(sample_s)
    after = await _offsets(admin, group, addrs)
    cached, ok_tps, model, n, pops, failures = await _clients(admin, group)
    return PauseEffect(pulls, refused, before, after, sample_s, cached, ok_tps, model, n,
                       pops, failures, first)


async def _clients(admin: Admin, group: str
                   ) -> tuple[int | None, dict[str, float | None], str | None, int, bool,
                              list[str]]:
    info = await admin.cluster_info()
    brokers = [info.brokers[k] for k in sorted(info.brokers)]
    try:
        conn = await admin.consumer_connection(group, brokers)
    except MqctlError as exc:
        return None, {}, None, 0, False, [f"consumer connection: {exc.message}"]
    if conn is None:
        return 0, {}, None, 0, False, []
    ids = [c.client_id for c in conn.connections]
    infos = await admin.running_infos(group, ids, brokers)
    cached: int | None = 0
    ok: dict[str, float | None] = {}
    failures: list[str] = []
    pops = False
    for cid in ids:
        ri = infos.get(cid)
        if not isinstance(ri, ConsumerRunningInfo):
            failures.append(f"{cid}: {getattr(ri, 'message', 'no answer')}")
            ok[cid] = None
            cached = None
            continue
        pops = pops or ri.pops
        if cached is not None:
            cached += sum(p.cached_msg_count for p in ri.mq_table.values())
        ok[cid] = sum(float((s or {}).get("consumeOKTPS") or 0.0)
                      for t, s in ri.status_table.items() if not t.startswith(RETRY_PREFIX))
    return cached, ok, conn.message_model, len(ids), pops, failures


def _tps_text(e: PauseEffect, client: str) -> str:
    def t(v: float | None) -> str:
        return "-" if v is None else f"{v:g}"

    now = t(e.ok_tps.get(client))
    if e.ok_tps_before is None or client not in e.ok_tps_before:
        return f"{client} {now}"
    return f"{client} {t(e.ok_tps_before[client])} -> {now}"


def effect_notes(e: PauseEffect, group: str) -> list[str]:
    notes = []
    if e.pulls:
        notes.append(f"pulls of {group} answered NO_PERMISSION on {len(e.refused)} of "
                     f"{len(e.pulls)} paused broker(s)"
                     + ("" if len(e.refused) == len(e.pulls) else ": " + "; ".join(
                         f"{b} {t}" for b, t in e.pulls.items() if b not in e.refused)))
    moved = e.moved
    if moved is not None:
        notes.append(f"committed offsets moved by {moved} over the {e.sample_s:g} s sample"
                     + (" (frozen)" if moved == 0 else
                        " (the clients still consume and commit what they had cached)"))
    if e.cached is not None and e.clients:
        notes.append(f"NOT stopped: {e.cached} message(s) already cached in {e.clients} "
                     "client(s) are still consumed (running info cachedMsgCount); "
                     "consumeOKTPS falls to 0 once they are done: "
                     + ", ".join(_tps_text(e, c) for c in sorted(e.ok_tps)))
    if e.model == "BROADCASTING":
        notes.append("NOT checked: a BROADCASTING group's offsets live in its clients "
                     "(frozen offsets cannot be read from the brokers)")
    notes.append("NOT checked: pop consumers (5.x POP_MESSAGE) and gRPC clients behind a proxy"
                 + (" (this group has pop clients)" if e.pops else ""))
    return notes


__all__ = ["PauseEffect", "effect_notes", "pause_effect", "probe_pull"]

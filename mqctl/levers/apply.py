"""Apply a config lever's plan per master and verify it by reading the configs back.

Each master gets one UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) whose body is the whole
SubscriptionGroupConfig (JSON, as ``MQClientAPIImpl.createSubscriptionGroup`` encodes it);
AdminBrokerProcessor.updateAndCreateSubscriptionGroup decodes it and replaces the group's
config (SubscriptionGroupManager.updateSubscriptionGroupConfig), answering SUCCESS. Never
re-sent: an answer that did not come is ``unknown``. Under ACL the request is an admin code
(ACL 1: Permission.ADMIN_CODE; ACL 2: the group's Update action): NO_PERMISSION names the
broker that refused.
"""

from __future__ import annotations

import asyncio
import enum
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mqctl.errors import BrokerError, MqctlError
from mqctl.interrupt import INTERRUPT_GRACE_S
from mqctl.remoting.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.interrupt import Stop
    from mqctl.levers.plan import BrokerChange, LeverPlan


class Status(enum.Enum):
    VERIFIED = "verified"
    APPLIED = "applied"  # answered SUCCESS, not read back (yet)
    NOT_TAKEN = "not-taken"  # read back: not what was sent
    UNVERIFIED = "unverified"  # the read-back failed
    FAILED = "failed"
    NOT_SENT = "not-sent"
    UNKNOWN = "unknown"  # in flight when the run was interrupted: may or may not have changed
    ALREADY = "already"
    SKIPPED = "skipped"


BAD = (Status.NOT_TAKEN, Status.UNVERIFIED, Status.FAILED, Status.NOT_SENT, Status.UNKNOWN)
CHANGED = (Status.VERIFIED, Status.APPLIED, Status.NOT_TAKEN, Status.UNVERIFIED)


@dataclass(frozen=True, slots=True)
class BrokerResult:
    change: BrokerChange
    status: Status
    detail: str = ""
    now: dict[str, Any] | None = None  # the config read back

    @property
    def broker(self) -> str:
        return self.change.broker


def failure_detail(exc: MqctlError) -> str:
    if isinstance(exc, BrokerError) and exc.code == ResponseCode.NO_PERMISSION:
        return (f"refused by ACL (NO_PERMISSION: {(exc.remark or '').strip() or 'no remark'}): "
                "this account may not change subscription groups on this broker "
                "(UPDATE_AND_CREATE_SUBSCRIPTIONGROUP is an admin request)")
    return exc.message


def body_of(config: dict[str, Any]) -> bytes:
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


async def apply_changes(admin: Admin, plan: LeverPlan, *, stop: Stop | None = None,
                        on_broker_done: Callable[[str], None] | None = None,
                        grace_s: float = INTERRUPT_GRACE_S) -> list[BrokerResult]:
    """One request per master that has something to send, concurrently and bounded; after an
    interrupt nothing new is sent and the requests in flight are waited for up to
    ``grace_s``."""
    results: dict[str, BrokerResult] = {}
    inflight: set[str] = set()
    sem = asyncio.Semaphore(max(1, admin.concurrency))

    async def one(ch: BrokerChange) -> None:
        async with sem:
            if stop is not None and stop.stopped:
                return
            inflight.add(ch.broker)
            try:
                await admin.client.invoke(ch.addr or "",
                                          RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
                                          None, body_of(ch.after or {}))
                results[ch.broker] = BrokerResult(ch, Status.APPLIED, "answered SUCCESS")
            except MqctlError as exc:
                results[ch.broker] = BrokerResult(ch, Status.FAILED, failure_detail(exc))
            finally:
                inflight.discard(ch.broker)
            if on_broker_done is not None:
                on_broker_done(ch.broker)

    task = asyncio.ensure_future(asyncio.gather(*(one(c) for c in plan.to_send)))
    if stop is None:
        await task
    else:
        await stop.race(task, grace_s)
    out = []
    for ch in plan.changes:
        if ch.broker in results:
            out.append(results[ch.broker])
        elif ch.sends:
            out.append(BrokerResult(ch, Status.UNKNOWN if ch.broker in inflight else
                                    Status.NOT_SENT,
                                    "sent, no answer before the interrupt: it may or may not "
                                    "have changed" if ch.broker in inflight else
                                    f"not sent: interrupted ({stop.reason if stop else ''})"))
        else:
            out.append(BrokerResult(ch, Status.ALREADY if ch.action == "already" else
                                    Status.SKIPPED, ch.reason, ch.before))
    return out


async def verify(admin: Admin, group: str, results: list[BrokerResult]) -> list[BrokerResult]:
    """Read every changed broker's config back: the fields sent are there (``verified``) or
    not (``not-taken``); a read that fails leaves it ``unverified``."""

    async def check(r: BrokerResult) -> BrokerResult:
        if r.status not in (Status.APPLIED, Status.UNKNOWN):
            return r
        try:
            table = await admin.subscription_group_table(r.change.addr or "")
        except MqctlError as exc:
            return replace(r, status=Status.UNVERIFIED, detail=f"read-back failed: {exc.message}")
        now = table.get(group)
        want = {k: a for k, (_, a) in r.change.diff().items()}
        if not isinstance(now, dict):
            return replace(r, status=Status.NOT_TAKEN, detail="read back: no such group")
        wrong = {k: now.get(k) for k, v in want.items()
                 if json.dumps(now.get(k), sort_keys=True) != json.dumps(v, sort_keys=True)}
        if wrong:
            if r.status == Status.UNKNOWN:
                return replace(r, now=now, detail="not applied (read back: unchanged)",
                               status=Status.NOT_SENT)
            return replace(r, status=Status.NOT_TAKEN, now=now, detail="read back: " + ", ".join(
                f"{k}={json.dumps(v)}" for k, v in wrong.items()))
        return replace(r, status=Status.VERIFIED, now=now, detail="read back: as sent")

    return list(await asyncio.gather(*(check(r) for r in results)))


__all__ = ["BAD", "CHANGED", "BrokerResult", "Status", "apply_changes", "body_of",
           "failure_detail", "verify"]

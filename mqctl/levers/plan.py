"""The plan of a config lever (``group pause/resume``, ``group config set/rollback``): each
master's SubscriptionGroupConfig as read (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, as mqadmin's
``examineSubscriptionGroupConfig`` reads one group), its release (GET_BROKER_RUNTIME_INFO
brokerVersion) and the config to send (the config as read, only the lever's fields changed:
UPDATE_AND_CREATE_SUBSCRIPTIONGROUP replaces the whole config, a field left out takes the
Java default). Read-only."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.admin import BrokerFailure, NotFoundError
from mqctl.admin.fanout import per_broker
from mqctl.errors import UsageError
from mqctl.levers.fields import defaults, not_on, since_text
from mqctl.timeparse import now_ms
from mqctl.versions import version_name

if TYPE_CHECKING:
    from mqctl.admin import Admin

LEVERS = ("pause", "resume", "config set", "config rollback")


@dataclass(frozen=True, slots=True)
class LeverRequest:
    """What to change: ``lever`` (one of :data:`LEVERS`), ``changes`` (field -> value: pause
    and resume set consumeEnable, ``config set`` its KEY=VALUEs), ``restore`` (a rollback:
    broker -> the saved config, None where the group did not exist), ``brokers`` (only
    these), ``create`` (a broker without the group gets it, with the defaults and the
    changes), ``execute``; ``undo_file``: where the old configs go; ``source``: the undo file
    a rollback restores."""

    lever: str
    group: str
    changes: dict[str, Any] = field(default_factory=dict)
    restore: dict[str, dict[str, Any] | None] | None = None
    brokers: frozenset[str] | None = None
    create: bool = False
    execute: bool = False
    undo_file: str | None = None
    source: str | None = None
    sample_s: float = 0.0


@dataclass(frozen=True, slots=True)
class BrokerChange:
    """One master: ``before`` (its config as read; None: no such group there), ``after``
    (what is sent; None: nothing), ``action`` (update | create | already | skip) and why."""

    broker: str
    addr: str | None
    version: int | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    action: str
    reason: str = ""

    @property
    def sends(self) -> bool:
        return self.action in ("update", "create")

    def diff(self) -> dict[str, tuple[Any, Any]]:
        """field -> (before, after) for the fields that change (before None: not there)."""
        b, a = self.before or {}, self.after or {}
        return {k: (b.get(k), a[k]) for k in sorted(a)
                if k != "groupName" and _canon(b.get(k)) != _canon(a[k])}

    @property
    def version_text(self) -> str:
        return version_name(self.version) if self.version is not None else "-"


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True)


@dataclass(frozen=True, slots=True)
class LeverPlan:
    request: LeverRequest
    namesrv: str
    created_ms: int
    changes: tuple[BrokerChange, ...]
    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    failures: tuple[BrokerFailure, ...] = ()

    @property
    def group(self) -> str:
        return self.request.group

    @property
    def to_send(self) -> list[BrokerChange]:
        return [c for c in self.changes if c.sends]

    @property
    def fields(self) -> list[str]:
        return sorted({k for c in self.to_send for k in c.diff()})


async def make_plan(admin: Admin, request: LeverRequest, namesrv: str) -> LeverPlan:
    """Read every master's config and release, then what each is sent."""
    info = await admin.cluster_info()
    brokers = [info.brokers[k] for k in sorted(info.brokers)]
    names = {b.broker_name for b in brokers}
    wanted = request.brokers
    if wanted is not None and wanted - names:
        raise UsageError(f"no broker {', '.join(sorted(wanted - names))} in the cluster",
                         hint=f"the brokers are {', '.join(sorted(names))} (`mqctl cluster`)")
    scope = [b for b in brokers if wanted is None or b.broker_name in wanted]
    masters = [b for b in scope if b.master_addr]
    tables = await per_broker(masters, admin.subscription_group_table,
                              concurrency=admin.concurrency)
    versions = await per_broker(masters, admin.broker_version, concurrency=admin.concurrency)
    failures = [v for v in tables.values() if isinstance(v, BrokerFailure)]
    changes: list[BrokerChange] = []
    refusals: list[str] = []
    for b in scope:
        if not b.master_addr:
            changes.append(BrokerChange(b.broker_name, None, None, None, None, "skip",
                                        "no master online (a slave takes no config change)"))
            refusals.append(f"{b.broker_name} has no master online: its config cannot be "
                            "changed now")
            continue
        table = tables.get(b.broker_name)
        if isinstance(table, BrokerFailure) or table is None:
            continue
        v = versions.get(b.broker_name)
        version = v if isinstance(v, int) else None
        entry = table.get(request.group)
        before = dict(entry) if isinstance(entry, dict) else None
        changes.append(_change(request, b.broker_name, b.master_addr, version, before,
                               refusals))
    for f in failures:
        refusals.append(f"{f.broker} could not be read ({f.message}): its config is not "
                        "known, so nothing can be sent as read")
    if not failures and all(c.before is None for c in changes) and not request.create \
            and request.lever != "config rollback":
        raise NotFoundError(f"no broker has a subscription group {request.group!r}",
                            hint="check the name (it is case-sensitive); `mqctl group config "
                                 "set GROUP K=V --create` creates one")
    return LeverPlan(request, namesrv, now_ms(), tuple(changes), tuple(refusals),
                     tuple(_notes(request, changes)), tuple(failures))


def _change(request: LeverRequest, broker: str, addr: str, version: int | None,
            before: dict[str, Any] | None, refusals: list[str]) -> BrokerChange:
    def make(after: dict[str, Any] | None, action: str, reason: str = "") -> BrokerChange:
        return BrokerChange(broker, addr, version, before, after, action, reason)

    if request.restore is not None:
        if broker not in request.restore:
            return make(None, "skip", "not in the undo file")
        saved = request.restore[broker]
        if saved is None:
            return make(None, "skip", "the group did not exist here before the change; mqctl "
                                      "does not delete groups (DELETE_SUBSCRIPTIONGROUP also "
                                      "drops its offsets)")
        after = dict(saved)
    elif before is None:
        if request.lever in ("pause", "resume"):
            return make(None, "skip", "no such group on this broker (nothing pulls it here)")
        if not request.create:
            refusals.append(f"{broker} has no subscription group {request.group}: "
                            "--create creates it with the defaults and these fields")
            return make(None, "skip", "no such group (--create creates it)")
        after = {**defaults(request.group, version), **request.changes}
    else:
        after = {**before, **request.changes}
    missing = not_on({k: after[k] for k in request.changes}, version)
    if missing:
        rel = version_name(version) if version is not None else "an unknown release"
        refusals.append(f"{broker} runs {rel}: it has no "
                        + ", ".join(f"{k} (since {since_text(k)})" for k in missing))
        return make(None, "skip", "field(s) its release does not have: " + ", ".join(missing))
    ch = make(after, "create" if before is None else "update")
    if not ch.diff():
        return make(None, "already", "already as planned: nothing sent")
    return ch


def _notes(request: LeverRequest, changes: list[BrokerChange]) -> list[str]:
    notes = []
    if request.brokers is not None:
        notes.append(f"only {', '.join(sorted(request.brokers))} (--brokers): the group's "
                     "other brokers keep their config")
    creates = [c.broker for c in changes if c.action == "create"]
    if creates:
        notes.append(f"--create: group {request.group} is created on {', '.join(creates)} "
                     "with SubscriptionGroupConfig's defaults and the fields given")
    return notes


__all__ = ["LEVERS", "BrokerChange", "LeverPlan", "LeverRequest", "make_plan"]

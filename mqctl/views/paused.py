"""Who paused a group with ``mqctl group pause`` from this machine, and when: the audit record
the pause writes in mqctl's state directory (``<state>/levers/paused/``) and a resume removes.
Read by ``groups``, ``group progress`` and ``diagnose`` to say who paused a group they show as
paused (consumeEnable=false); a group paused some other way has no record."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.admin import BrokerFailure
from mqctl.admin.fanout import per_broker
from mqctl.errors import UsageError
from mqctl.fsutil import read_text_capped
from mqctl.interrupt import state_root

if TYPE_CHECKING:
    from mqctl.admin import Admin

AUDIT_SCHEMA = "mqctl.group-paused/1"


def audit_path(namesrv: str | Sequence[str], group: str) -> Path:
    ns = namesrv if isinstance(namesrv, str) else ";".join(namesrv)
    key = hashlib.sha256(f"{ns}\0{group}".encode()).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9_%-]", "_", group)[:80]
    return state_root() / "levers" / "paused" / f"{safe}-{key}.json"


def pause_record(namesrv: str | Sequence[str], group: str) -> dict[str, Any] | None:
    """The record (None: none on this machine, or unreadable)."""
    try:
        doc = json.loads(read_text_capped(audit_path(namesrv, group), "lock state file"))
    except (OSError, UsageError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("schema") == AUDIT_SCHEMA else None


def paused_by(namesrv: str | Sequence[str], group: str) -> str | None:
    """``paused by ops@host at 2026-12-02T06:00:00Z (mqctl group pause)`` or None."""
    doc = pause_record(namesrv, group)
    if doc is None:
        return None
    return f"paused by {doc.get('by') or '?'} at {doc.get('at') or '?'} (mqctl group pause)"


async def paused_on(admin: Admin, group: str) -> list[str] | None:
    """The masters whose config of ``group`` has consumeEnable=false
    (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, as ``group config`` reads it); None when none answered."""
    info = await admin.cluster_info()
    brokers = [info.brokers[k] for k in sorted(info.brokers) if info.brokers[k].master_addr]
    got = await per_broker(brokers, admin.subscription_group_table,
                           concurrency=admin.concurrency)
    tables = {b: t for b, t in got.items() if not isinstance(t, BrokerFailure)}
    if not tables:
        return None
    return sorted(b for b, t in tables.items()
                  if isinstance(t.get(group), dict) and t[group].get("consumeEnable") is False)


__all__ = ["AUDIT_SCHEMA", "audit_path", "pause_record", "paused_by", "paused_on"]

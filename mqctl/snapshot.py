"""``mqctl snapshot``: one capture of a cluster's consumer groups in the canonical export format.

One JSON Lines file per capture (``docs/exports.md`` section 1), written atomically, so a cron
job can run it every minute and the lag job can read a directory of them. A lock file in the
output directory stops two overlapping runs from interleaving.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqctl.admin import Admin, BrokerFailure
from mqctl.errors import MqctlError, RefusedError
from mqctl.fsutil import atomic_writer, local_path_error
from mqctl.inspect import CaptureCache, GroupProgress, capture_progress
from mqctl.models import RETRY_PREFIX
from mqctl.remoting.client import fan_out
from mqctl.timeparse import format_ms, now_ms

SCHEMA = "mqctl.snapshot/1"

# MixAll: TOOLS_CONSUMER_GROUP, FILTERSRV_CONSUMER_GROUP, MONITOR_CONSUMER_GROUP,
# SELF_TEST_CONSUMER_GROUP, ONS_HTTP_PROXY_GROUP, CID_ONSAPI_*; isSysConsumerGroup: CID_RMQ_SYS_
SYSTEM_GROUPS = {"TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "__MONITOR_CONSUMER",
                 "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY", "CID_ONSAPI_PERMISSION",
                 "CID_ONSAPI_OWNER", "CID_ONSAPI_PULL", "CID_SYS_RMQ_TRANS",
                 "CLIENT_INNER_PRODUCER", "DEFAULT_CONSUMER"}
SYSTEM_GROUP_PREFIXES = ("CID_RMQ_SYS_", "CID_SYS_RMQ_")


def is_system_group(group: str) -> bool:
    return group in SYSTEM_GROUPS or group.startswith(SYSTEM_GROUP_PREFIXES)


@dataclass
class Snapshot:
    capture_ts: int
    namesrv: str
    cluster: str
    groups: list[str]
    rows: list[dict[str, Any]]
    failures: list[tuple[str, BrokerFailure]] = field(default_factory=list)  # (group, failure)
    group_errors: dict[str, str] = field(default_factory=dict)  # groups not read at all
    group_exc: dict[str, MqctlError] = field(default_factory=dict)  # ... and their errors


def rows_of(p: GroupProgress, *, capture_ts: int, cluster: str, namesrv: str
            ) -> list[dict[str, Any]]:
    """Canonical rows (schema ``mqctl.snapshot/1``) for one group's capture."""
    members = sorted(p.members.clients) if p.members else []
    online = p.members.online_state if p.members else None
    conn = p.members.connection if p.members else None
    orderly: bool | None = None
    if p.members:
        flags = [cv.running.orderly for cv in p.members.clients.values() if cv.running]
        orderly = any(flags) if flags else None
    out = []
    for q in p.queues:
        out.append({
            "schema": SCHEMA, "capture_ts": capture_ts, "capture_time": format_ms(capture_ts),
            "cluster": cluster, "namesrv": namesrv, "group": p.group, "topic": q.mq.topic,
            "broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
            "broker_offset": q.broker_offset, "min_offset": q.min_offset,
            "consumer_offset": q.consumer_offset, "pull_offset": q.pull_offset,
            "lag": q.lag, "inflight": q.inflight, "inflight_source": q.inflight_source,
            "committed": q.committed,
            "last_timestamp": q.last_timestamp or None, "max_timestamp": q.max_timestamp,
            "delay_ms": q.delay_ms, "delay_unknown": q.delay_reason,
            "owner": q.owner, "owners": list(q.owners),
            "locked": q.locked, "last_lock_ts": q.last_lock_ts, "members": members,
            "online": online,
            "consume_type": conn.consume_type if conn else None,
            "message_model": conn.message_model if conn else None,
            "orderly": orderly,
        })
    return out


async def discover_groups(admin: Admin, *, include_system: bool = False,
                          failures: list[BrokerFailure] | None = None) -> list[str]:
    """Every group: ``%RETRY%<group>`` topics on the name server (as mqadmin's
    consumerProgress does) plus each master's subscription group table. Masters that did
    not answer are appended to ``failures`` (their groups without a retry topic are missed)."""
    groups = {t[len(RETRY_PREFIX):] for t in await admin.topic_list() if t.startswith(RETRY_PREFIX)}
    info = await admin.cluster_info()
    masters = {b.master_addr: b.broker_name for b in info.brokers.values() if b.master_addr}
    for o in await fan_out(list(masters), admin.subscription_groups,
                           concurrency=admin.concurrency):
        if o.ok:
            groups.update(o.value or [])
        elif failures is not None and o.error is not None:
            failures.append(BrokerFailure(masters[o.item], o.item, o.error))
    return sorted(g for g in groups if include_system or not is_system_group(g))


async def capture(admin: Admin, groups: Sequence[str], *, namesrv: str,
                  on_group_done: Any = None) -> Snapshot:
    ts = now_ms()
    cache = CaptureCache()

    async def one(group: str) -> GroupProgress:
        return await capture_progress(admin, group, cache=cache)

    results = await fan_out(list(groups), one, concurrency=admin.concurrency,
                            on_done=on_group_done)
    cluster = next((o.value.cluster for o in results if o.ok and o.value and o.value.cluster),
                   None) or namesrv
    snap = Snapshot(ts, namesrv, cluster, list(groups), [])
    for o in results:
        if not o.ok:
            assert o.error is not None
            snap.group_errors[o.item] = o.error.message
            snap.group_exc[o.item] = o.error
            continue
        assert o.value is not None
        snap.rows.extend(rows_of(o.value, capture_ts=ts, cluster=cluster, namesrv=namesrv))
        snap.failures.extend((o.item, f) for f in o.value.failures)
    return snap


def snapshot_path(out_dir: str | os.PathLike[str], cluster: str, capture_ts: int) -> Path:
    iso = format_ms(capture_ts)  # 2024-06-01T10:00:00.123Z
    day = iso[:10]
    stamp = iso.replace("-", "").replace(":", "")  # 20240601T100000.123Z
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", cluster) or "cluster"
    return Path(out_dir) / day / f"mqctl-snapshot-{safe}-{stamp}.jsonl"


def write(snap: Snapshot, out_dir: str | os.PathLike[str]) -> Path | None:
    """Write the capture; ``None`` (no file) when it has no row: an empty capture file would
    tell the lag job "no queue" where mqctl read nothing."""
    if not snap.rows:
        return None
    path = snapshot_path(out_dir, snap.cluster, snap.capture_ts)
    try:
        with atomic_writer(path) as fh:
            for row in snap.rows:
                fh.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False))
                fh.write("\n")
    except OSError as exc:  # full disk, read-only: nothing is left half written
        raise local_path_error(exc, path, "the capture file") from None
    return path


@contextlib.contextmanager
def run_lock(out_dir: str | os.PathLike[str]) -> Iterator[None]:
    """An exclusive, non-blocking lock on ``OUT/.mqctl-snapshot.lock`` (overlapping cron runs)."""
    d = Path(out_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise local_path_error(exc, d, "to the output directory") from None
    lock_path = d / ".mqctl-snapshot.lock"
    try:
        fh = open(lock_path, "a+")  # noqa: SIM115
    except OSError as exc:  # a read-only directory or mount, a full disk
        raise local_path_error(exc, d, "to the output directory") from None
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RefusedError(f"another mqctl snapshot is still writing to {d}",
                               hint="the previous run has not finished; lower the cron "
                                    "frequency or raise --concurrency") from None
        yield
    finally:
        fh.close()

"""Shell completion of group and topic names from the cluster.

``mqctl group progress <TAB>``, ``-g <TAB>`` and ``-t <TAB>`` complete from the cluster the
command line (or the environment, or the profile) points at, as kafkactl does:

* topics: the name server's topic list (GET_ALL_TOPIC_LIST_FROM_NAMESERVER, code 206);
* groups: every master's subscription groups (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, code 201,
  the table the broker keeps for every group it knows), the masters from the name server's
  cluster info (GET_BROKER_CLUSTER_INFO, 106). Only these read-only requests are sent.

A dead or slow cluster never stalls the shell: everything (connecting included) has one hard
deadline of :data:`DEADLINE_S`, a cluster that did not answer is not asked again for
:data:`FAILURE_TTL_S` (the names cached before, if any, are offered meanwhile), and the
answers are cached for :data:`CACHE_TTL_S` in ``$XDG_CACHE_HOME/mqctl/completion`` (else
``~/.cache/mqctl/completion``), one file per cluster (a hash of the name servers and the
access key: no secret, no address in the name), written atomically with mode 0600.

Completion never prints: no error, no warning, no traceback reaches the shell (it would be
read as candidates). Without a prefix, RocketMQ's own names (%RETRY%/%DLQ% and system topics,
system groups) are left out; type their first letters to get them.

Only the standard library, typer and light modules (the errors, files, models and config) are
imported at module level (the CLI imports this module while it completes); the client and the
admin layer, which load asyncio, are imported when used.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import typer

from mqctl.api.connection import connect
from mqctl.config import load_settings
from mqctl.errors import UsageError
from mqctl.fsutil import atomic_write_text, read_text_capped
from mqctl.models import is_system_group

CACHE_TTL_S = 60.0
FAILURE_TTL_S = 10.0
DEADLINE_S = 1.0
CACHE_SCHEMA = "mqctl.completion/1"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mqctl" / "completion"


def cache_file(namesrv: tuple[str, ...], access_key: str | None, tls: bool) -> Path:
    """One cache per cluster and identity (an ACL account may see other names)."""
    key = json.dumps([sorted(namesrv), access_key or "", tls])
    return cache_dir() / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def read_cache(path: Path) -> dict[str, Any] | None:
    try:  # (bounded: a FIFO there must not hang a TAB press)
        doc = json.loads(read_text_capped(path, "completion cache"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError, UsageError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != CACHE_SCHEMA:
        return None
    return doc


def write_cache(path: Path, doc: dict[str, Any]) -> None:
    try:
        atomic_write_text(path, json.dumps(dict(doc, schema=CACHE_SCHEMA)), mode=0o600)
    except OSError:
        pass  # a read-only home: completion still works, uncached


def _names(doc: dict[str, Any] | None, kind: str) -> list[dict[str, str]] | None:
    v = doc.get(kind) if doc else None
    if not isinstance(v, list):
        return None
    return [x for x in v if isinstance(x, dict) and isinstance(x.get("name"), str)]


async def fetch(settings: Any, deadline_s: float = DEADLINE_S
                ) -> tuple[list[dict[str, str]] | None, list[dict[str, str]] | None]:
    """(topics, groups) as ``[{"name", "kind"}]``; None for what did not arrive before the
    deadline. Read-only requests only."""
    import asyncio

    from mqctl.admin import Admin
    from mqctl.views.topics import is_system_topic

    bound = min(settings.timeout, deadline_s)
    async with connect(settings, timeout=bound, connect_timeout=bound) as client:
        admin = Admin(client, settings.namesrv)
        info_task = asyncio.ensure_future(admin.cluster_info())
        topics_task = asyncio.ensure_future(admin.topic_list())

        async def groups() -> list[dict[str, str]] | None:
            info = await info_task
            masters = sorted({b.master_addr for b in info.brokers.values() if b.master_addr})
            got = await asyncio.gather(*(admin.subscription_groups(a) for a in masters),
                                       return_exceptions=True)
            answered = [g for g in got if isinstance(g, list)]
            if not answered:
                return None
            names = sorted({n for g in answered for n in g})
            return [{"name": n, "kind": "system" if is_system_group(n) else "normal"}
                    for n in names]

        async def topics() -> list[dict[str, str]]:
            names = await topics_task
            try:
                info = await info_task
                clusters, brokers = set(info.clusters), set(info.brokers)
            except Exception:  # kinds need the cluster info; the names do not
                clusters, brokers = set(), set()
            return [{"name": t, "kind": is_system_topic(t, clusters, brokers)} for t in names]

        tasks: dict[str, asyncio.Future[list[dict[str, str]] | None]] = {
            "topics": asyncio.ensure_future(topics()),
            "groups": asyncio.ensure_future(groups())}
        await asyncio.wait(set(tasks.values()), timeout=deadline_s)
        out: dict[str, list[dict[str, str]] | None] = {}
        for k, t in tasks.items():
            if t.done() and not t.cancelled() and t.exception() is None:
                out[k] = t.result()
            else:
                out[k] = None
        every: list[asyncio.Future[Any]] = [*tasks.values(), info_task, topics_task]
        for f in every:
            f.cancel()  # a no-op for the finished ones
        # gather retrieves every exception: no "never retrieved" warning at exit
        await asyncio.gather(*every, return_exceptions=True)
    return out["topics"], out["groups"]


def cluster_names(settings: Any, kind: str, *, now: float | None = None,
                  started: float | None = None) -> list[dict[str, str]]:
    """The cached or freshly read names of ``kind`` ("topics" or "groups"). ``started``
    (``time.monotonic()`` when the TAB began): the deadline counts from then, imports
    included."""
    started = time.monotonic() if started is None else started
    now = time.time() if now is None else now
    path = cache_file(settings.namesrv, settings.credentials.access_key
                      if settings.credentials else None, settings.tls.enabled)
    doc = read_cache(path)
    cached = _names(doc, kind)
    ts = doc.get("ts") if doc else None
    if cached is not None and isinstance(ts, (int, float)) and 0 <= now - ts < CACHE_TTL_S:
        return cached
    failed = doc.get("failed_ts") if doc else None
    if isinstance(failed, (int, float)) and 0 <= now - failed < FAILURE_TTL_S:
        return cached or []  # the cluster did not answer a moment ago: do not wait again
    import asyncio

    import mqctl.admin
    import mqctl.views.topic
    import mqctl.views.topics  # noqa: F401  (imported before the clock: fetch uses them)

    left = max(0.2, DEADLINE_S - (time.monotonic() - started))
    try:
        topics, groups = asyncio.run(asyncio.wait_for(fetch(settings, left), left + 0.1))
    except Exception:
        topics, groups = None, None
    new: dict[str, Any] = {"ts": now, "topics": topics, "groups": groups,
                           "elapsed_s": round(time.monotonic() - started, 3)}
    if topics is None or groups is None:
        new["failed_ts"] = now
        # keep what the earlier answer had for the part that did not come
        for k, v in (("topics", topics), ("groups", groups)):
            if v is None:
                new[k] = _names(doc, k)
        if topics is None and groups is None:
            new["ts"] = doc.get("ts") if doc else None
    write_cache(path, new)
    return _names(new, kind) or []


def _settings(ctx: Any) -> Any:
    """The settings the command line being completed points at: -n of the command or the
    root, --profile, --config, --timeout, TLS and ACL flags, then environment and profile."""
    root = ctx.find_root()
    rp: dict[str, Any] = dict(root.params or {})
    flags: dict[str, Any] = {
        "namesrv": (ctx.params or {}).get("namesrv") or rp.get("namesrv"),
        "timeout": rp.get("timeout"), "tls": rp.get("tls") or None,
        "tls_ca": rp.get("tls_ca"), "tls_insecure": rp.get("tls_insecure") or None,
        "access_key": rp.get("access_key")}
    return load_settings(config_file=rp.get("config"), profile=rp.get("profile"), flags=flags)


def candidates(names: list[dict[str, str]], incomplete: str) -> list[str]:
    """Pure: names starting with ``incomplete``; without a prefix, only the normal ones."""
    if not incomplete:
        return [n["name"] for n in names if n.get("kind") == "normal"]
    return [n["name"] for n in names if n["name"].startswith(incomplete)]


def _complete(ctx: Any, incomplete: str, kind: str) -> list[str]:
    started = time.monotonic()
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # nothing reaches the shell
            return candidates(cluster_names(_settings(ctx), kind, started=started),
                              incomplete)
    except Exception:
        return []


def complete_groups(ctx: typer.Context, incomplete: str) -> list[str]:
    return _complete(ctx, incomplete, "groups")


def complete_topics(ctx: typer.Context, incomplete: str) -> list[str]:
    return _complete(ctx, incomplete, "topics")

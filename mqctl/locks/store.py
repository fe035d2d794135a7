"""The lock state file: what each client last reported, kept between runs.

A client that stops answering (hung) or leaves the group (crashed, stopped) keeps its last
known claims visible, with their age: ``<dir>/<namesrv-hash>/<group>.json``, written
atomically. :func:`merge_state` decides what the next file keeps (pure); :class:`LockStore`
reads and writes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mqctl.errors import MqctlError
from mqctl.fsutil import atomic_write_text, read_text_capped
from mqctl.locks.types import Claim
from mqctl.models import MessageQueue, java_string_key
from mqctl.timeparse import format_local, format_ms

# remembered observations of members that never answer again are dropped after a week
STATE_RETENTION_MS = 7 * 24 * 3600 * 1000
STATE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Moved:
    """A queue of a hung client that another client took while it was hung: what the hung one
    will consume again if it resumes with its in-memory offset (``model.Redelivery``)."""

    mq: MessageQueue
    survivor: str
    from_offset: int    # the hung client's offset when mqctl last saw it answer
    to_offset: int      # the furthest mqctl saw the survivor commit on it

    def to_json(self) -> dict[str, Any]:
        return {**self.mq.to_dict(), "survivor": self.survivor, "fromOffset": self.from_offset,
                "toOffset": self.to_offset}

    @classmethod
    def from_json(cls, d: Any) -> Moved:
        if not isinstance(d, dict):
            raise ValueError("moved: not an object")
        return cls(MessageQueue.from_dict(d), str(d.get("survivor") or ""),
                   int(d.get("fromOffset") or 0), int(d.get("toOffset") or 0))


@dataclass(frozen=True, slots=True)
class StoredClient:
    """What a client last reported (its whole mqTable), and when."""

    client_id: str
    observed_ts: int
    claims: tuple[Claim, ...]
    orderly: bool | None = True
    gone_ts: int = 0           # when mqctl first found it no longer a member (0: a member)
    silent_ts: int = 0         # when mqctl first found it a member that did not answer
    # the process it was: its connections' clientAddr in the member list (203) and its
    # PROP_CONSUMER_START_TIMESTAMP (running info) when it answered; () / 0: not known
    addrs: tuple[str, ...] = ()
    start_ts: int = 0
    heartbeat_ms: int = 0      # its heartbeatBrokerInterval (5.x running info); 0: not reported
    moved: tuple[Moved, ...] = ()  # its queues others took while it was hung

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"observedTs": self.observed_ts, "orderly": self.orderly}
        if self.gone_ts:
            doc["goneTs"] = self.gone_ts
        if self.silent_ts:
            doc["silentTs"] = self.silent_ts
        if self.addrs:
            doc["clientAddrs"] = list(self.addrs)
        if self.start_ts:
            doc["startTs"] = self.start_ts
        if self.heartbeat_ms:
            doc["heartbeatMs"] = self.heartbeat_ms
        if self.moved:
            doc["moved"] = [m.to_json() for m in self.moved]
        doc["mqTable"] = [{**c.mq.to_dict(), "locked": c.locked,
                           "lastLockTimestamp": c.last_lock_ts,
                           "tryUnlockTimes": c.try_unlock_times, "droped": c.dropped,
                           **({"commitOffset": c.commit_offset}
                              if c.commit_offset is not None else {})}
                          for c in self.claims]
        return doc

    @classmethod
    def from_json(cls, cid: str, d: Any) -> StoredClient:
        if not isinstance(d, dict):
            raise ValueError(f"client {cid}: not an object")
        ts = int(d.get("observedTs") or 0)
        gone = int(d.get("goneTs") or 0)
        silent = int(d.get("silentTs") or 0)
        addrs = d.get("clientAddrs") or []
        if not isinstance(addrs, list):
            raise ValueError(f"client {cid}: clientAddrs is not a list")
        orderly = d.get("orderly")
        claims = []
        for e in d.get("mqTable") or []:
            mq = MessageQueue.from_dict(e)
            commit = e.get("commitOffset")
            claims.append(Claim(cid, mq, bool(e.get("locked")),
                                int(e.get("lastLockTimestamp") or 0),
                                int(e.get("tryUnlockTimes") or 0), bool(e.get("droped")),
                                live=False, observed_ts=ts,
                                orderly=orderly if isinstance(orderly, bool) else None,
                                commit_offset=None if commit is None else int(commit)))
        moved = d.get("moved") or []
        if not isinstance(moved, list):
            raise ValueError(f"client {cid}: moved is not a list")
        return cls(cid, ts, tuple(claims), orderly if isinstance(orderly, bool) else None,
                   gone, silent, tuple(str(a) for a in addrs), int(d.get("startTs") or 0),
                   int(d.get("heartbeatMs") or 0), tuple(Moved.from_json(m) for m in moved))

    def remembered(self, *, member: bool) -> list[Claim]:
        return [replace(c, live=False, member=member, observed_ts=self.observed_ts,
                        orderly=self.orderly, gone_ts=0 if member else self.gone_ts,
                        silent_ts=self.silent_ts)
                for c in self.claims]

    def departed(self, *, member: bool, now: int) -> StoredClient:
        """This record as of ``now`` for a client that did not answer: a client that left keeps
        the moment it was first found gone (it cannot have renewed a lock after that); one that
        is a member again has none. A member that does not answer is silent from the first
        time it was found so (kept after it leaves: it renewed nothing after its last answer)."""
        if member:
            st = replace(self, gone_ts=0) if self.gone_ts else self
            return st if st.silent_ts else replace(st, silent_ts=now)
        return self if self.gone_ts else replace(self, gone_ts=now)

    def lease_may_run(self, now: int) -> bool:
        return any(c.lease_runs(now) for c in self.remembered(member=not self.gone_ts))

    def may_resume(self) -> bool:
        """A client mqctl found hung (a member not answering) before it left: a frozen process
        can be resumed long after the brokers dropped it, and then consumes again from its
        in-memory offsets what others consumed meanwhile (``moved``), so its record is kept
        for the retention (its claims are not shown: its leases lapsed)."""
        return bool(self.silent_ts and self.claims)


def client_addrs(addr: str) -> tuple[str, ...]:
    """The connections of a client as ``ClientView.addr`` lists them (comma-separated, one
    per channel the brokers listed)."""
    return tuple(sorted({a.strip() for a in addr.split(",") if a.strip()}))


def new_connection(st: StoredClient, addrs: Sequence[str]) -> str | None:
    """Why the member now listed under ``st``'s client id is connected anew since mqctl
    recorded ``st`` (restarted, or reconnected), or None when nothing says so.

    A broker lists one entry per channel, with the channel's remote address
    (AdminBrokerProcessor.getConsumerConnectionList: ``RemotingHelper
    .parseChannelRemoteAddr``); a new process opens new connections from other ports, and a
    client the brokers dropped (connection closed, or expired ~120 s after its last
    heartbeat: ConsumerManager.scanNotActiveChannel) is listed again only on a new one. So:
    a client mqctl found gone that is a member again, or none of whose recorded connections
    is still listed, is not the connection mqctl recorded: what it reported then (a process
    killed since, or one paused since) says nothing about now.
    """
    if st.gone_ts:
        why = f"it left the group (found gone at {format_local(st.gone_ts)}) and is back"
    elif st.addrs and addrs and not set(st.addrs) & set(addrs):
        why = (f"its connection {', '.join(st.addrs)} is no longer listed (now "
               f"{', '.join(addrs)})")
    else:
        return None
    return (f"has connected anew since mqctl last saw it answer at "
            f"{format_local(st.observed_ts)} (restarted, or reconnected): {why}")


def merge_state(previous: Mapping[str, StoredClient], observed: Mapping[str, StoredClient],
                members: Iterable[str], now: int) -> dict[str, StoredClient]:
    """The next state file: fresh observations replace old ones; clients that did not answer
    keep their last observation while they are members (their claims show as ``hung`` or
    ``unknown``), while a lease of theirs may still run (their queues show as ``stale``), or,
    for one found hung before it left, while it has queues that moved (it may resume)."""
    members = set(members)
    out: dict[str, StoredClient] = dict(observed)
    for cid, st in previous.items():
        if cid in out:
            continue
        if now - st.observed_ts > STATE_RETENTION_MS:
            continue
        st = st.departed(member=cid in members, now=now)
        if cid in members or st.lease_may_run(now) or st.may_resume():
            out[cid] = st
    return dict(sorted(out.items(), key=lambda kv: java_string_key(kv[0])))


def default_state_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mqctl" / "locks"


def namesrv_hash(namesrv: Sequence[str] | str) -> str:
    if isinstance(namesrv, str):
        namesrv = [p.strip() for p in namesrv.split(";") if p.strip()]
    key = ";".join(sorted(namesrv))
    return hashlib.sha256(key.encode()).hexdigest()[:16]


_SAFE = re.compile(r"[^A-Za-z0-9._%|-]")


def _file_name(group: str) -> str:
    safe = _SAFE.sub("_", group)
    if safe != group or safe.startswith("."):
        safe = f"{safe.lstrip('.')}-{hashlib.sha256(group.encode()).hexdigest()[:8]}"
    return f"{safe}.json"


class LockStore:
    """``<dir>/<namesrv-hash>/<group>.json``: the previous observation of each client.

    Written atomically (temp file + rename); an unreadable file is ignored with a note.
    """

    def __init__(self, directory: str | os.PathLike[str] | None, namesrv: Sequence[str] | str):
        self.root = Path(directory) if directory is not None else default_state_dir()
        self.namesrv = namesrv if isinstance(namesrv, str) else ";".join(namesrv)
        self.dir = self.root / namesrv_hash(namesrv)
        self.problems: list[str] = []

    def path(self, group: str) -> Path:
        return self.dir / _file_name(group)

    def load(self, group: str) -> dict[str, StoredClient]:
        p = self.path(group)
        try:  # (bounded, never blocking: a FIFO or device there is refused, not waited on)
            text = read_text_capped(p, "lock state file")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self.problems.append(f"cannot read lock state {p}: {exc.strerror}")
            return {}
        except MqctlError as exc:
            self.problems.append(f"cannot read lock state {p}: {exc.message}")
            return {}
        try:
            d = json.loads(text)
            if not isinstance(d, dict) or d.get("version") != STATE_VERSION:
                raise ValueError("unknown format")
            if d.get("group") not in (None, group):
                raise ValueError(f"file is for group {d.get('group')!r}")
            clients = d.get("clients") or {}
            if not isinstance(clients, dict):
                raise ValueError("clients is not an object")
            return {str(k): StoredClient.from_json(str(k), v) for k, v in clients.items()}
        except (ValueError, TypeError, KeyError, AttributeError, MqctlError) as exc:
            self.problems.append(f"ignoring unreadable lock state {p}: {exc}")
            return {}

    def save(self, group: str, clients: Mapping[str, StoredClient], now: int) -> None:
        doc = {"version": STATE_VERSION, "group": group, "namesrv": self.namesrv,
               "savedTs": now, "savedTime": format_ms(now),
               "clients": {cid: st.to_json() for cid, st in clients.items()}}
        try:
            atomic_write_text(self.path(group), json.dumps(doc, indent=1, sort_keys=False)
                              + "\n")
        except OSError as exc:
            self.problems.append(f"cannot write lock state {self.path(group)}: "
                                 f"{exc.strerror or exc}")

    def mark_released(self, group: str, client_id: str, mq: MessageQueue, now: int) -> None:
        """Record that ``client_id``'s lock on ``mq`` was released on its behalf."""
        clients = self.load(group)
        st = clients.get(client_id)
        if st is None:
            return
        claims = tuple(replace(c, locked=False) if c.mq == mq else c for c in st.claims)
        clients[client_id] = replace(st, claims=claims)
        self.save(group, clients, now)

"""Scenario files for the simulated cluster (format documented in ``docs/scenario.md``).

A scenario describes brokers, topics with their production, consumer groups with their
consumers and behaviours, the clock, faults, ACL and TLS. Loading validates everything and
reports the first problem with the YAML path of the bad key, e.g.
``groups[1].consumers[0].behaviour: unknown value 'sleepy' (healthy, slow, stuck, crash,
hang)``.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from datetime import date, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from mqctl.errors import TimeParseError, UsageError
from mqctl.fsutil import load_yaml, read_text_capped
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.sim.clock import MAX_SPEED, MIN_SPEED
from mqctl.sim.generate import GENERATED
from mqctl.sim.spec import (
    BEHAVIOURS,
    CLOCKS,
    CONSUME_FROM,
    FAULT_ACTIONS,
    GROUP_CONFIG_FIELDS,
    MODELS,
    AclSpec,
    BrokerSpec,
    ConsumerSpec,
    FaultSpec,
    GroupSpec,
    QueueSpec,
    RateChange,
    Scenario,
    ScenarioError,
    TlsSpec,
    TopicSpec,
)
from mqctl.timeparse import parse_time
from mqctl.versions import V5_1_0, version_ordinal

_DUR = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$")
_POINT = re.compile(r"^([+-]?)([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$")
_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def parse_offset_s(v: Any, path: str) -> float:
    """A signed duration relative to the cluster start: ``-10m``, ``90s``, ``+2h``, -600."""
    if isinstance(v, bool):
        raise ScenarioError(path, f"{v!r} is not a duration")
    if isinstance(v, (int, float)):
        return float(v)
    m = _POINT.match(str(v).strip())
    if not m:
        raise ScenarioError(path, f"{v!r} is not a duration (e.g. -10m, 90s, 2h)")
    return (-1 if m.group(1) == "-" else 1) * float(m.group(2)) * _UNIT[m.group(3)]


def parse_duration_s(v: Any, path: str) -> float:
    if isinstance(v, bool):
        raise ScenarioError(path, f"{v!r} is not a duration")
    if isinstance(v, (int, float)):
        return float(v)
    m = _DUR.match(str(v).strip())
    if not m:
        raise ScenarioError(path, f"{v!r} is not a duration (e.g. 90, 90s, 5m, 2h)")
    return float(m.group(1)) * _UNIT[m.group(2)]


class _Reader:
    def __init__(self, source: str | None):
        self.source = source

    def err(self, path: str, problem: str) -> ScenarioError:
        return ScenarioError(path, problem, self.source)

    def mapping(self, v: Any, path: str, allowed: set[str]) -> dict[str, Any]:
        if v is None:
            return {}
        if not isinstance(v, dict):
            raise self.err(path, f"expected a mapping, found {type(v).__name__}")
        unknown = sorted(str(k) for k in v if k not in allowed)
        if unknown:
            raise self.err(f"{path}.{unknown[0]}" if path else unknown[0],
                           f"unknown key (known: {', '.join(sorted(allowed))})")
        return v

    def seq(self, v: Any, path: str) -> list[Any]:
        if v is None:
            return []
        if not isinstance(v, list):
            raise self.err(path, f"expected a list, found {type(v).__name__}")
        return v

    def string(self, v: Any, path: str, *, pattern: str | None = None) -> str:
        if not isinstance(v, str) or not v:
            raise self.err(path, "expected a non-empty string")
        if pattern and not re.fullmatch(pattern, v):
            raise self.err(path, f"{v!r} is not a valid name")
        return v

    def integer(self, v: Any, path: str, minimum: int = 0) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.err(path, f"expected an integer, found {v!r}")
        if v < minimum:
            raise self.err(path, f"must be at least {minimum}")
        return v

    def number(self, v: Any, path: str, minimum: float = 0,
               maximum: float = float("inf")) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.err(path, f"expected a number, found {v!r}")
        if v < minimum:
            raise self.err(path, f"must be at least {minimum}")
        if not v <= maximum:  # (also nan)
            raise self.err(path, f"must be at most {maximum:g}")
        return float(v)

    def choice(self, v: Any, path: str, options: tuple[str, ...]) -> str:
        s = str(v)
        for o in options:
            if s.lower() == o.lower():
                return o
        raise self.err(path, f"unknown value {v!r} ({', '.join(options)})")


NAME = r"[%|a-zA-Z0-9_@.:-]+"


def parse(doc: Any, source: str | None = None) -> Scenario:
    """A scenario document, checked part by part in the order of the file's sections (the
    first problem found is the one reported, with its path)."""
    r = _Reader(source)
    top = r.mapping(doc, "", {"name", "description", "cluster", "clock", "brokers", "topics",
                              "groups", "faults", "acl", "tls", "log_dir", "seed",
                              "running_info_timeout", "namesrv"})
    mode, speed, start_ms = _clock(r, top.get("clock"))
    brokers = _brokers(r, top.get("brokers"))
    bnames = [b.name for b in brokers]
    topics = [_topic(r, t, f"topics[{i}]", bnames)
              for i, t in enumerate(r.seq(top.get("topics"), "topics"))]
    tnames = {t.name for t in topics}
    groups = [_group(r, g, f"groups[{i}]", bnames, tnames)
              for i, g in enumerate(r.seq(top.get("groups"), "groups"))]
    gnames = [g.name for g in groups]
    if len(set(gnames)) != len(gnames):
        raise r.err("groups", "group names must be unique")
    faults = [_fault(r, f, f"faults[{i}]", bnames)
              for i, f in enumerate(r.seq(top.get("faults"), "faults"))]
    ns = r.mapping(top.get("namesrv"), "namesrv", {"version"})
    ns_version = None if ns.get("version") is None else _version(r, ns["version"],
                                                                 "namesrv.version")
    acl = r.mapping(top.get("acl"), "acl", {"enabled", "accounts"})
    accounts = _acl_accounts(r, acl.get("accounts"))
    tls = r.mapping(top.get("tls"), "tls", {"enabled", "cert_file", "key_file"})
    return Scenario(
        name=str(top.get("name", "scenario")), description=str(top.get("description", "")),
        cluster=r.string(top.get("cluster", "DefaultCluster"), "cluster", pattern=NAME),
        brokers=tuple(brokers), topics=tuple(topics), groups=tuple(groups), clock=mode,
        speed=speed, start_ms=start_ms, faults=tuple(faults),
        acl=AclSpec(bool(acl.get("enabled", bool(accounts))), accounts),
        tls=TlsSpec(bool(tls.get("enabled", False)), tls.get("cert_file"), tls.get("key_file")),
        log_dir=None if top.get("log_dir") is None else str(top["log_dir"]),
        running_info_timeout_s=parse_duration_s(top.get("running_info_timeout", 10),
                                                "running_info_timeout"),
        seed=r.integer(top.get("seed", 7), "seed"), namesrv_version=ns_version)


def _clock(r: _Reader, v: Any) -> tuple[str, float, int | None]:
    """``clock:``: (mode, speed, start in epoch ms or None)."""
    clock = r.mapping(v, "clock", {"mode", "speed", "start"})
    mode = r.choice(clock.get("mode", "real"), "clock.mode", CLOCKS)
    speed = r.number(clock.get("speed", 60.0 if mode == "accelerated" else 1.0), "clock.speed",
                     MIN_SPEED, MAX_SPEED)
    return mode, speed, _clock_start(r, clock.get("start"))


def _brokers(r: _Reader, v: Any) -> list[BrokerSpec]:
    """``brokers:``: at least one, unique names."""
    brokers = [_broker(r, b, f"brokers[{i}]") for i, b in enumerate(r.seq(v, "brokers"))]
    if not brokers:
        raise r.err("brokers", "at least one broker is needed")
    bnames = [b.name for b in brokers]
    if len(set(bnames)) != len(bnames):
        raise r.err("brokers", "broker names must be unique")
    return brokers


def _broker(r: _Reader, b: Any, p: str) -> BrokerSpec:
    """One broker: a name, or a mapping with its slave, config, version and runtime."""
    if isinstance(b, str):
        b = {"name": b}
    b = r.mapping(b, p, {"name", "slave", "config", "version", "runtime", "slave_runtime"})
    cfg = r.mapping(b.get("config"), f"{p}.config",
                    {"useServerSideResetOffset", "notifyConsumerIdsChangedEnable",
                     "autoCreateSubscriptionGroup"})
    bver = _version(r, b.get("version", 479), f"{p}.version")
    if "useServerSideResetOffset" in cfg and bver < V5_1_0:
        raise r.err(f"{p}.config.useServerSideResetOffset",
                    "brokers before 5.1.0 have no server-side reset (RIP-48); leave it out "
                    "or give a version of V5_1_0 or later")
    runtime = {k: {str(x): str(v) for x, v in r.mapping(
        b.get(k), f"{p}.{k}", set(map(str, b.get(k) or {}))).items()}
        for k in ("runtime", "slave_runtime")}
    return BrokerSpec(r.string(b.get("name"), f"{p}.name", pattern=NAME),
                      bool(b.get("slave", False)), dict(cfg), bver,
                      runtime["runtime"], runtime["slave_runtime"])


def _names_in(r: _Reader, v: Any, p: str, known: Any, what: str, *,
              list_known: bool = False) -> tuple[str, ...]:
    """A list of broker or topic names, each one of ``known`` (named in the error with
    ``list_known``)."""
    names = tuple(str(x) for x in r.seq(v, p))
    for j, x in enumerate(names):
        if x not in known:
            raise r.err(f"{p}[{j}]", f"unknown {what} {x!r}"
                        + (f" (known: {', '.join(known)})" if list_known else ""))
    return names


def _topic(r: _Reader, t: Any, p: str, bnames: list[str]) -> TopicSpec:
    """One topic: its queues, brokers, production (rate, changes, per queue) and offsets."""
    t = r.mapping(t, p, {"name", "queues", "read_queues", "write_queues", "perm", "brokers",
                         "rate", "history", "min_offset", "max_offset", "rate_changes",
                         "order", "start", "per_queue", "perm_by_broker"})
    name = r.string(t.get("name"), f"{p}.name", pattern=NAME)
    q = r.integer(t.get("queues", 4), f"{p}.queues", 1)
    tb = _names_in(r, t.get("brokers"), f"{p}.brokers", bnames, "broker",
                   list_known=True) or tuple(bnames)
    changes = [_rate_change(r, c, f"{p}.rate_changes[{j}]")
               for j, c in enumerate(r.seq(t.get("rate_changes"), f"{p}.rate_changes"))]
    mx = t.get("max_offset")
    read_q = r.integer(t.get("read_queues", q), f"{p}.read_queues")
    write_q = r.integer(t.get("write_queues", q), f"{p}.write_queues")
    per_queue = _per_queue(r, t.get("per_queue"), p, tb, read_q, write_q)
    mn = r.integer(t.get("min_offset", 0), f"{p}.min_offset")
    if mx is not None and r.integer(mx, f"{p}.max_offset") < mn:
        raise r.err(f"{p}.max_offset", f"{mx} is below min_offset {mn}")
    return TopicSpec(
        name=name, read_queues=read_q, write_queues=write_q,
        perm=r.integer(t.get("perm", 6), f"{p}.perm"), brokers=tb,
        rate=r.number(t.get("rate", 1.0), f"{p}.rate"),
        history_s=parse_duration_s(t.get("history", "1h"), f"{p}.history"),
        min_offset=mn, initial_max=None if mx is None else int(mx),
        rate_changes=tuple(sorted(changes, key=lambda c: c.at_s)),
        order=bool(t.get("order", False)),
        start_s=None if t.get("start") is None else parse_offset_s(t["start"], f"{p}.start"),
        per_queue=per_queue,
        perm_by_broker={str(k): r.integer(v, f"{p}.perm_by_broker.{k}") for k, v in r.mapping(
            t.get("perm_by_broker"), f"{p}.perm_by_broker", set(tb)).items()})


def _rate_change(r: _Reader, c: Any, p: str) -> RateChange:
    c = r.mapping(c, p, {"at", "rate"})
    return RateChange(parse_duration_s(c.get("at", 0), f"{p}.at"),
                      r.number(c.get("rate", 0), f"{p}.rate"))


def _per_queue(r: _Reader, v: Any, p: str, tb: tuple[str, ...], read_q: int,
               write_q: int) -> tuple[QueueSpec, ...]:
    """A topic's ``per_queue:``; a queue with a rate must be a write queue."""
    per_queue = tuple(_queue_spec(r, x, f"{p}.per_queue[{j}]", tb, max(read_q, write_q))
                      for j, x in enumerate(r.seq(v, f"{p}.per_queue")))
    for j, qs in enumerate(per_queue):
        if qs.rate and qs.queue >= write_q:  # producers write to the write queues only
            raise r.err(f"{p}.per_queue[{j}].rate", f"queue {qs.queue} is not a write queue "
                        f"(write_queues: {write_q}); a read-only queue gets no new "
                        "messages, give it max_offset/history instead")
    return per_queue


def _group(r: _Reader, g: Any, p: str, bnames: list[str], tnames: set[str]) -> GroupSpec:
    """One consumer group: its topics, consumers, config per broker and offsets."""
    g = r.mapping(g, p, {"name", "model", "orderly", "consume_from", "strategy", "topics",
                         "consumers", "initial_lag", "consume_type", "config",
                         "config_by_broker", "offsets_on"})
    gname = r.string(g.get("name"), f"{p}.name", pattern=NAME)
    gtopics = _names_in(r, g.get("topics"), f"{p}.topics", tnames, "topic")
    consumers = [_consumer(r, c, f"{p}.consumers[{j}]", gtopics, bnames, tnames)
                 for j, c in enumerate(r.seq(g.get("consumers"), f"{p}.consumers"))]
    return GroupSpec(
        name=gname, model=r.choice(g.get("model", "CLUSTERING"), f"{p}.model", MODELS),
        orderly=bool(g.get("orderly", False)),
        consume_from=r.choice(g.get("consume_from", CONSUME_FROM[0]), f"{p}.consume_from",
                              CONSUME_FROM),
        strategy=str(g.get("strategy", "AVG")), topics=gtopics,
        consumers=tuple(consumers),
        initial_lag=r.integer(g.get("initial_lag", 0), f"{p}.initial_lag"),
        consume_type=r.choice(g.get("consume_type", "CONSUME_PASSIVELY"),
                              f"{p}.consume_type",
                              ("CONSUME_PASSIVELY", "CONSUME_ACTIVELY", "CONSUME_POP")),
        config=_group_config(r, g.get("config"), f"{p}.config"),
        config_by_broker={
            str(b): _group_config(r, v, f"{p}.config_by_broker.{b}")
            for b, v in r.mapping(g.get("config_by_broker"), f"{p}.config_by_broker",
                                  set(bnames)).items()},
        offsets_on=_offsets_on(r, g.get("offsets_on"), f"{p}.offsets_on", bnames))


_CONSUMER_KEYS = {"id", "subscriptions", "language", "version", "behaviour", "at", "rate",
                  "crash_at", "hang_at", "resume_at", "join_at", "leave_at",
                  "heartbeat_brokers", "addr", "strategy", "threads", "restart_at",
                  "silent_at", "silent_for", "consume_rt", "fail_ratio",
                  "max_reconsume_times", "stuck_message_at", "callback_threads",
                  "ignore_reset_push"}


def _consumer(r: _Reader, c: Any, cp: str, gtopics: tuple[str, ...], bnames: list[str],
              tnames: set[str]) -> ConsumerSpec:
    """One simulated consumer: subscriptions, client, behaviour and its times."""
    c = r.mapping(c, cp, _CONSUMER_KEYS)
    subs = _subscriptions(r, c.get("subscriptions"), cp, gtopics, tnames)
    ver = _version(r, c.get("version", 479), f"{cp}.version")
    hb = c.get("heartbeat_brokers")
    hbs = None if hb is None else _names_in(r, hb, f"{cp}.heartbeat_brokers", bnames,
                                            "broker")

    def when(key: str) -> float | None:
        return None if c.get(key) is None else parse_duration_s(c[key], f"{cp}.{key}")

    behaviour, at, crash_at, hang_at, restart_at = _behaviour(r, c, cp, when)
    return ConsumerSpec(
        client_id=r.string(c.get("id"), f"{cp}.id"), subscriptions=subs,
        language=r.string(c.get("language", "JAVA"), f"{cp}.language"),
        version=ver,
        behaviour=behaviour,
        behaviour_at_s=at if at is not None and behaviour in ("slow", "stuck") else 0.0,
        rate=None if c.get("rate") is None else r.number(c["rate"], f"{cp}.rate"),
        crash_at_s=crash_at, hang_at_s=hang_at,
        resume_at_s=when("resume_at"), join_at_s=when("join_at"),
        leave_at_s=when("leave_at"), heartbeat_brokers=hbs,
        addr=None if c.get("addr") is None else str(c["addr"]),
        strategy=None if c.get("strategy") is None else str(c["strategy"]),
        threads=r.integer(c.get("threads", 20), f"{cp}.threads", 1),
        restart_at_s=restart_at, silent_at_s=when("silent_at"),
        silent_for_s=when("silent_for"),
        consume_rt_ms=None if c.get("consume_rt") is None else max(
            1.0, 1000 * parse_duration_s(c["consume_rt"], f"{cp}.consume_rt")),
        fail_ratio=_ratio(r, c.get("fail_ratio", 0), f"{cp}.fail_ratio"),
        max_reconsume_times=_reconsume(r, c.get("max_reconsume_times", -1),
                                       f"{cp}.max_reconsume_times"),
        stuck_message_at_s=when("stuck_message_at"),
        callback_threads=r.integer(c.get("callback_threads", 4), f"{cp}.callback_threads", 1),
        ignore_reset_push=bool(c.get("ignore_reset_push", False)))


def _subscriptions(r: _Reader, v: Any, cp: str, gtopics: tuple[str, ...],
                   tnames: set[str]) -> dict[str, str]:
    """topic -> expression (default: every topic of the group, ``*``), known topics only."""
    if v is None:
        subs = {t: "*" for t in gtopics}
    else:
        subs = {str(k): str(x) for k, x in r.mapping(
            v, f"{cp}.subscriptions", set(map(str, v or {}))).items()}
    for t in subs:
        if t not in tnames:
            raise r.err(f"{cp}.subscriptions.{t}", f"unknown topic {t!r}")
    return subs


def _behaviour(r: _Reader, c: dict[str, Any], cp: str, when: Callable[[str], float | None]
               ) -> tuple[str, float | None, float | None, float | None, float | None]:
    """(behaviour, at, crash_at, hang_at, restart_at): ``behaviour: crash``/``hang`` need
    their time (``at`` or ``crash_at``/``hang_at``); a restart comes after a crash."""
    behaviour = r.choice(c.get("behaviour", "healthy"), f"{cp}.behaviour", BEHAVIOURS)
    at = when("at")
    crash_at, hang_at = when("crash_at"), when("hang_at")
    if behaviour in ("crash", "hang"):
        if at is None and (crash_at if behaviour == "crash" else hang_at) is None:
            raise r.err(f"{cp}.at", f"behaviour {behaviour} needs the time it happens "
                        "(e.g. at: 5m)")
        if behaviour == "crash":
            crash_at = at if at is not None else crash_at
        else:
            hang_at = at if at is not None else hang_at
    restart_at = when("restart_at")
    if restart_at is not None:
        if crash_at is None:
            raise r.err(f"{cp}.restart_at", "needs crash_at (a crashed consumer "
                        "restarts; a graceful leave_at ends the process for good)")
        if restart_at <= crash_at:
            raise r.err(f"{cp}.restart_at", f"must come after crash_at ({crash_at:g} s)")
    return behaviour, at, crash_at, hang_at, restart_at


def _fault(r: _Reader, f: Any, p: str, bnames: list[str]) -> FaultSpec:
    """One scheduled fault on a broker or the name server."""
    f = r.mapping(f, p, {"action", "broker", "at", "for", "latency_ms", "request",
                         "response", "remark", "times"})
    broker = r.string(f.get("broker"), f"{p}.broker")
    if broker not in bnames and broker != "namesrv":
        raise r.err(f"{p}.broker", f"unknown broker {broker!r}")
    return FaultSpec(
        action=r.choice(f.get("action"), f"{p}.action", FAULT_ACTIONS), broker=broker,
        at_s=parse_duration_s(f.get("at", 0), f"{p}.at"),
        for_s=None if f.get("for") is None else parse_duration_s(f["for"], f"{p}.for"),
        latency_ms=r.number(f.get("latency_ms", 0), f"{p}.latency_ms"),
        request=_code(r, f.get("request"), f"{p}.request"),
        response=_response_code(r, f.get("response", 1), f"{p}.response"),
        remark=None if f.get("remark") is None else str(f["remark"]),
        times=None if f.get("times") is None else r.integer(f["times"], f"{p}.times", 1))


def _acl_accounts(r: _Reader, v: Any) -> dict[str, str]:
    """``acl.accounts``: access key -> secret key."""
    accounts = {}
    for i, a in enumerate(r.seq(v, "acl.accounts")):
        a = r.mapping(a, f"acl.accounts[{i}]", {"access_key", "secret_key"})
        accounts[r.string(a.get("access_key"), f"acl.accounts[{i}].access_key")] = r.string(
            a.get("secret_key"), f"acl.accounts[{i}].secret_key")
    return accounts


def _group_config(r: Any, v: Any, path: str) -> dict[str, Any]:
    """A group's SubscriptionGroupConfig values (GROUP_CONFIG_FIELDS), checked by type."""
    cfg = r.mapping(v, path, set(GROUP_CONFIG_FIELDS))
    for k, x in cfg.items():
        if GROUP_CONFIG_FIELDS[k] is bool and not isinstance(x, bool):
            raise r.err(f"{path}.{k}", f"expected true or false, found {x!r}")
        if GROUP_CONFIG_FIELDS[k] is int:
            r.integer(x, f"{path}.{k}")
    return dict(cfg)

_QUEUES = re.compile(r"^([0-9]{1,10})(?:-([0-9]{1,10}))?$")


def _offsets_on(r: Any, v: Any, path: str, bnames: list[str]
                ) -> dict[str, frozenset[int] | None] | None:
    """``offsets_on: [broker-a, "broker-b:0", "broker-b:2-3"]``: the brokers (all their queues
    of the group's topics) or queues where the group starts with committed offsets."""
    if v is None:
        return None
    out: dict[str, set[int] | None] = {}
    for i, item in enumerate(r.seq(v, path)):
        text = str(item).strip()
        broker, _, qs = text.rpartition(":")
        m = _QUEUES.match(qs) if broker else None
        if m is None:
            broker, m = text, None
        if broker not in bnames:
            raise r.err(f"{path}[{i}]", f"unknown broker {broker!r} (use broker or "
                        "broker:queue, e.g. broker-a:0 or broker-a:0-3)")
        if m is None:
            out[broker] = None
            continue
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise r.err(f"{path}[{i}]", f"empty queue range {qs!r}")
        have = out.get(broker, set())
        if have is not None:
            out[broker] = have | set(range(lo, hi + 1))
    return {b: None if q is None else frozenset(q) for b, q in out.items()}


def _ratio(r: _Reader, v: Any, path: str) -> float:
    x = r.number(v, path)
    if x > 1:
        raise r.err(path, f"{x:g} is not a ratio from 0 to 1")
    return x


def _reconsume(r: _Reader, v: Any, path: str) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and v == -1:
        return -1
    return r.integer(v, path, 0)


def _version(r: _Reader, v: Any, path: str) -> int:
    """A client or broker version: an MQVersion name (``V4_9_8``) or its ordinal."""
    if isinstance(v, str):
        try:
            v = version_ordinal(v)
        except ValueError as exc:
            raise r.err(path, str(exc)) from None
    return r.integer(v, path)


def _clock_start(r: _Reader, v: Any) -> int | None:
    """``clock.start``: epoch ms or an ISO-8601 time (a reproducible simulated history)."""
    if v is None:
        return None
    if isinstance(v, bool):
        raise r.err("clock.start", f"{v!r} is not a time")
    if isinstance(v, int):
        if v < 10**11:
            raise r.err("clock.start", f"{v} is not epoch milliseconds")
        return v

    if isinstance(v, (date, datetime)):  # YAML turns unquoted timestamps into datetimes
        v = v.isoformat()
    try:
        return parse_time(str(v), now=0)
    except TimeParseError as exc:
        raise r.err("clock.start", exc.message) from None


def _queue_spec(r: _Reader, v: Any, path: str, brokers: tuple[str, ...], nqueues: int
                ) -> QueueSpec:
    q = r.mapping(v, path, {"queue", "broker", "rate", "start", "history", "min_offset",
                            "max_offset", "store_times"})
    if "queue" not in q:
        raise r.err(f"{path}.queue", "required (the queue id)")
    qid = r.integer(q.get("queue"), f"{path}.queue")
    if qid >= nqueues:
        raise r.err(f"{path}.queue", f"queue {qid} does not exist (the topic has {nqueues})")
    broker = None if q.get("broker") is None else str(q["broker"])
    if broker is not None and broker not in brokers:
        raise r.err(f"{path}.broker", f"{broker!r} does not host this topic (hosts: "
                    f"{', '.join(brokers)})")
    times = None
    if q.get("store_times") is not None:
        raw = r.seq(q["store_times"], f"{path}.store_times")
        times = tuple(int(round(parse_offset_s(x, f"{path}.store_times[{k}]") * 1000))
                      for k, x in enumerate(raw))
        for k in range(1, len(times)):
            if times[k] < times[k - 1]:
                raise r.err(f"{path}.store_times[{k}]", "store times must not decrease "
                            "(a queue's messages are stored in time order)")
        if q.get("max_offset") is not None or q.get("history") is not None:
            raise r.err(f"{path}.store_times", "give either store_times or "
                        "max_offset/history, not both")
    mn = None if q.get("min_offset") is None else r.integer(q["min_offset"],
                                                              f"{path}.min_offset")
    mx = None if q.get("max_offset") is None else r.integer(q["max_offset"],
                                                              f"{path}.max_offset")
    if mn is not None and mx is not None and mx < mn:
        raise r.err(f"{path}.max_offset", f"{mx} is below min_offset {mn}")
    return QueueSpec(
        queue=qid, broker=broker,
        rate=None if q.get("rate") is None else r.number(q["rate"], f"{path}.rate"),
        start_s=None if q.get("start") is None else parse_offset_s(q["start"], f"{path}.start"),
        history_s=None if q.get("history") is None else parse_duration_s(q["history"],
                                                                          f"{path}.history"),
        min_offset=mn, initial_max=mx, store_times_ms=times)


def _code(r: _Reader, v: Any, path: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    try:
        return int(RequestCode[str(v).upper()])
    except KeyError:
        raise r.err(path, f"unknown request code {v!r}") from None


def _response_code(r: _Reader, v: Any, path: str) -> int:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    try:
        return int(ResponseCode[str(v).upper()])
    except KeyError:
        raise r.err(path, f"unknown response code {v!r}") from None


def bundled() -> dict[str, str]:
    """Bundled scenario name -> its first description line (YAML files and generated ones)."""
    out = {name: str(fn().get("description", "")) for name, fn in GENERATED.items()}
    base = resources.files("mqctl.sim") / "scenarios"
    for entry in sorted(base.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            import yaml

            doc = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
            out[entry.name[:-5]] = str(doc.get("description", "")).strip().splitlines()[0] \
                if doc.get("description") else ""
    return dict(sorted(out.items()))


def _is_file(p: Any) -> bool:
    """``is_file`` that never raises (a name too long for a file name is no bundled one)."""
    try:
        return bool(p.is_file())
    except (OSError, ValueError):
        return False


def load_scenario(spec: str | Path | dict[str, Any] | Scenario, **overrides: Any) -> Scenario:
    """A bundled name (``demo``), a path to a YAML file, a dict, or a Scenario."""
    if isinstance(spec, Scenario):
        sc = spec
    elif isinstance(spec, dict):
        sc = parse(spec)
    else:
        text: str
        source = str(spec)
        p = Path(spec)
        if p.suffix in (".yaml", ".yml") or os.path.exists(p) or "/" in source:
            try:  # (bounded: a FIFO, a device or a file over 1 MB is refused, docs/errors.md)
                text = read_text_capped(p, "scenario file")
            except FileNotFoundError:
                raise UsageError(f"scenario file not found: {source}",
                                 hint="pass a YAML file or a bundled name "
                                      "(mqctl sim scenarios)") from None
            except OSError as exc:
                raise UsageError(f"cannot read scenario {source}: {exc.strerror or exc}"
                                 ) from None
        else:
            if source in GENERATED:
                sc = parse(GENERATED[source](), source)
                return dataclasses.replace(sc, **overrides) if overrides else sc
            base = resources.files("mqctl.sim") / "scenarios" / f"{source}.yaml"
            if not _is_file(base):
                raise UsageError(f"no bundled scenario named {source!r}",
                                 hint="bundled: " + ", ".join(bundled()))
            text = base.read_text(encoding="utf-8")
        doc = load_yaml(text, f"scenario {source}",
                        hint="fix the YAML syntax; docs/scenario.md has a complete example")
        sc = parse(doc, source)
    return dataclasses.replace(sc, **overrides) if overrides else sc


# what a loaded scenario is made of (mqctl.sim.spec) is named here too, beside its loader
__all__ = ["GROUP_CONFIG_FIELDS", "AclSpec", "BrokerSpec", "ConsumerSpec", "FaultSpec",
           "GroupSpec", "QueueSpec", "RateChange", "Scenario", "ScenarioError", "TlsSpec",
           "TopicSpec", "bundled", "load_scenario", "parse", "parse_duration_s",
           "parse_offset_s"]

"""Helpers of the corpus replay (test_replay_corpus.py): find the recorded exchanges, build the
simulated cluster in the state each one describes, send the same request, compare the answers.

The corpus is ``../shared/samples/real/<version>/<scenario>/*.json`` (read-only; its README
describes each scenario). An exchange file holds ``{"request": {...}, "response": {<header as
received>, body_text, ...}}``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conftest import REAL_CORPUS

from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.frame import RemotingCommand

CORPUS = REAL_CORPUS
VERSION_NAMES = {"4.9.3": "V4_9_3", "5.3.3": "V5_3_3"}
CLUSTERS = {"4.9.3": "DefaultCluster", "5.3.3": "DefaultCluster5"}
# the recorder's targets (README: 4.9.3 on 19876/20911/21911, 5.3.3 on 29876/30911/31911)
PORTS = {19876: "namesrv", 20911: "broker-a", 21911: "broker-b",
         29876: "namesrv", 30911: "broker-a", 31911: "broker-b"}

# Exchanges this suite does not replay, each with its reason.
OTHER_ENGINEER = re.compile(r"^[^/]+/(running-info|lock-crash)/(307|203|38)_")
OTHER_REASON = ("answered by simulated clients (running info, connection list, member list): "
                "replayed by the simulated-client suite, not here")
STORE_FILES = re.compile(r"^[^/]+/store-files/")
STORE_REASON = "a broker store file (config/offset JSON), not a request/response exchange"


def corpus_files() -> list[str]:
    """Every ``*.json`` of the corpus, as ``<version>/<scenario>/<file>``."""
    if not CORPUS.is_dir():
        return []
    return sorted(str(p.relative_to(CORPUS)) for v in VERSION_NAMES
                  for p in (CORPUS / v).rglob("*.json"))


def exclusion(rel: str) -> str | None:
    if OTHER_ENGINEER.match(rel):
        return OTHER_REASON
    if STORE_FILES.match(rel):
        return STORE_REASON
    return None


def load(rel: str) -> dict[str, Any]:
    with (CORPUS / rel).open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


# ---------------------------------------------------------------------- states

def _topic(name: str, counts: list[int], *, write: int | None = None) -> dict[str, Any]:
    """A topic on both brokers with ``counts[q]`` messages in queue q, stored 40 ms apart from
    a minute before the recording (the scenarios produced before they recorded), no production
    afterwards."""
    return {"name": name, "read_queues": len(counts),
            "write_queues": len(counts) if write is None else write, "rate": 0,
            "per_queue": [{"queue": q, "store_times": [-60 + i * 0.04 for i in range(n)]}
                          for q, n in enumerate(counts)]}


Setup = Callable[[Any], None]  # runs on the SimCluster (in its loop)


@dataclass(frozen=True)
class Request:
    """A request sent over TCP while the state is built (e.g. mqadmin's reset)."""
    target: str
    code: int
    ext: dict[str, Any]


@dataclass
class State:
    scenario: dict[str, Any]
    setup: list[Setup | Request] = field(default_factory=list)  # in order
    # fields of the recording that are INPUTS of the state (copied into the sim), by name
    inputs: tuple[str, ...] = ()
    # the scenario's own topics and groups (the corpus' lists also hold earlier smoke tests')
    own_topics: tuple[str, ...] = ()
    own_groups: tuple[str, ...] = ()


def _offsets(broker: str, topic: str, group: str, table: dict[int, int]) -> Setup:
    def run(c: Any) -> None:
        c.brokers[broker].offsets[(topic, group)] = dict(table)
    return run


def _sub_group(group: str) -> Setup:
    """A group created by ``mqadmin updateSubGroup`` (README: NC_NEVER): its
    consumeFromMinEnable and consumeBroadcastEnable are false on every broker."""
    def run(c: Any) -> None:
        for b in c.brokers.values():
            b.groups[group].consume_from_min = b.groups[group].consume_broadcast = False
    return run


def _retry_topic(group: str) -> Setup:
    """A group that had a consumer has its %RETRY% topic (created by the consumer's heartbeat)
    and the retry offset 0 its client committed on each broker (other-requests/43_*)."""
    def run(c: Any) -> None:
        c.ensure_retry_topic(group)
        for b in c.brokers.values():
            b.commit(group, f"%RETRY%{group}", 0, 0)
    return run


def _persisted(group: str) -> Setup:
    """The group's live clients had run for longer than persistConsumerOffsetInterval (5 s)
    when the exchange was recorded: their offsets, the retry queue's 0 included, are
    committed (RemoteBrokerOffsetStore.persistAll)."""
    def run(c: Any) -> None:
        for consumer in c.consumers(group):
            consumer.commit()
    return run


def _pulls(broker: str, topic: str, group: str, table: dict[int, int]) -> Setup:
    def run(c: Any) -> None:
        for q, off in table.items():
            c.brokers[broker].pulls[(group, topic, q)] = off
    return run


def _base(version: str, rec: dict[str, Any], topics: list[dict[str, Any]],
          groups: list[dict[str, Any]]) -> dict[str, Any]:
    ver = VERSION_NAMES[version]
    return {"name": f"replay-{version}", "cluster": CLUSTERS[version],
            "clock": {"mode": "manual", "start": int(rec["request"]["_sent_at_ms"])},
            "brokers": [{"name": "broker-a", "version": ver},
                        {"name": "broker-b", "version": ver}],
            "topics": topics, "groups": groups}


def _recorded_offsets(rec: dict[str, Any], key: str) -> dict[int, int]:
    table = fastjson.mq_map(fastjson.loads(rec["response"]["body_text"].encode())["offsetTable"])
    return {mq.queue_id: int(w[key]) for mq, w in table.items() if key in w}


def state_for(rel: str, rec: dict[str, Any]) -> State:
    """The simulated state a recorded exchange describes (the corpus README's setups)."""
    version, scenario, name = rel.split("/", 2)
    if version not in VERSION_NAMES:
        raise LookupError(f"{rel}: unknown version folder")
    ext = rec["request"].get("extFields") or {}
    target = PORTS[int(rec["request"]["_addr"].rsplit(":", 1)[1])]
    if scenario == "never-committed":
        # NC_T 4/4 per broker, 25 messages per queue; NC_ONE committed broker-a/0 only (25)
        st = State(_base(version, rec, [_topic("NC_T", [25] * 4)],
                         [{"name": "NC_NEVER"}, {"name": "NC_ONE"}]))
        st.setup += [_offsets("broker-a", "NC_T", "NC_ONE", {0: 25}), _sub_group("NC_NEVER")]
        return st
    if scenario == "read-gt-write":
        # RW_T 4 read / 2 write queues: 50 messages in 0-1, 25 in 2-3; RW_G consumed all
        return State(_base(version, rec, [_topic("RW_T", [50, 50, 25, 25], write=2)],
                           [{"name": "RW_G", "topics": ["RW_T"], "initial_lag": 0}]))
    if scenario == "reset" and name.startswith("208_"):
        return _reset_state(version, rec, name, target)
    if scenario == "running-info" and name.startswith("208_"):
        # RS_T / RI_OT 4/4 per broker, 400 messages. The queue sizes (RI_OT's 16 sharding keys
        # spread them unevenly) and the group's committed (and 5.x pull) offsets at that moment
        # are taken from the recording: INPUTS, not compared
        topic, group = ext["topic"], ext["consumerGroup"]
        sizes = _recorded_offsets(rec, "brokerOffset")
        st = State(_base(version, rec, [_topic(topic, [sizes[q] for q in sorted(sizes)])],
                         [{"name": group}]),
                   inputs=("brokerOffset", "consumerOffset", "pullOffset"))
        st.setup.append(_offsets(target, topic, group, _recorded_offsets(rec, "consumerOffset")))
        st.setup.append(_pulls(target, topic, group, _recorded_offsets(rec, "pullOffset")))
        return st
    if scenario == "other-requests":
        # NC_T (25 per queue), NC_NEVER, NC_ONE (broker-a/0 at 25), RW_T/RW_G consumed, and
        # CL_G on CL_T (no messages) with 2 members on 4.9.3 and 1 on 5.3.3
        net = "127.0.1" if version == "4.9.3" else "127.0.2"
        ordinal = 399 if version == "4.9.3" else 479
        ids = ["81@c1", "82@c2"] if version == "4.9.3" else ["82@c2"]
        consumers = [{"id": f"{net}.{i}", "version": ordinal} for i in ids]
        st = State(_base(version, rec,
                         [_topic("NC_T", [25] * 4), _topic("CL_T", [0] * 4),
                          _topic("RW_T", [50, 50, 25, 25], write=2)],
                         [{"name": "NC_NEVER"}, {"name": "NC_ONE"},
                          {"name": "RW_G", "topics": ["RW_T"], "initial_lag": 0},
                          {"name": "CL_G", "topics": ["CL_T"], "initial_lag": 0,
                           "consumers": consumers}]),
                   own_topics=("NC_T", "CL_T", "RW_T", "%RETRY%CL_G", CLUSTERS[version],
                               "broker-a", "broker-b", *_system_topics(version)),
                   own_groups=("NC_NEVER", "NC_ONE", "RW_G", "CL_G"))
        st.setup += [_offsets("broker-a", "NC_T", "NC_ONE", {0: 25}), _sub_group("NC_NEVER"),
                     _retry_topic("RW_G"), _persisted("CL_G")]
        return st
    raise LookupError(f"{rel}: no simulated state is known for this exchange; describe it in "
                      "tests/replay/replay_corpus.py state_for()")


def _system_topics(version: str) -> tuple[str, ...]:
    """The structural topics of the real topic lists (206_*): the brokers' system topics;
    TopicTest/TopicOrder and the GID_* groups' topics are earlier smoke tests'."""
    cl = CLUSTERS[version]
    names = ["TBW102", "SELF_TEST_TOPIC", "BenchmarkTest", "OFFSET_MOVED_EVENT",
             "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", f"{cl}_REPLY_TOPIC",
             "RMQ_SYS_TRANS_OP_HALF_TOPIC", "rmq_sys_wheel_timer", f"rmq_sys_REVIVE_LOG_{cl}",
             "rmq_sys_SYNC_BROKER_MEMBER_broker-a", "rmq_sys_SYNC_BROKER_MEMBER_broker-b",
             "RMQ_SYS_TRACE_TOPIC"]
    return tuple(names)  # each one is compared: in the real list <=> in the sim's


def _reset_state(version: str, rec: dict[str, Any], name: str, target: str) -> State:
    """README reset/: RS_T 4/4 per broker, 400 messages; RS_G's online consumer had consumed
    and pulled everything (50 per queue); then ``mqadmin resetOffsetByTime`` to 10 minutes
    before (all queues to 0). ``208_<label>``: before, or 1/5/12/25 s after mqadmin started."""
    label = name[len("208_"):].split(".", 1)[0]
    ext = rec["request"]["extFields"]
    topic, group = ext["topic"], ext["consumerGroup"]
    st = State(_base(version, rec, [_topic(topic, [50] * 4)], [{"name": group}]))
    full = {q: 50 for q in range(4)}
    st.setup += [_offsets(target, topic, group, full), _pulls(target, topic, group, full)]
    if label == "before":
        return st
    if version == "4.9.3":
        # the legacy path: the broker writes nothing, it pushes the reset to the client, whose
        # commits make the later offsets (README; at +12 s broker-b already reads 0): INPUTS
        if label in ("after_12s", "after_25s"):
            st.inputs = ("consumerOffset",)
            st.setup.append(_offsets(target, topic, group,
                                     _recorded_offsets(rec, "consumerOffset")))
        return st
    # 5.3.3 (useServerSideResetOffset=true): mqadmin's INVOKE_BROKER_TO_RESET_OFFSET, the time
    # from actions.txt ("-s 2026-11-23#20:49:45:000", UTC)
    st.setup.append(Request(target, 222, {"topic": topic, "group": group,
                                          "timestamp": _reset_time(version), "isForce": "true"}))
    if label == "after_25s":
        # "By +25 s the group has re-consumed everything": the client's pull takes the reset
        # (offset 0), it consumes all 50 again and commits 50
        st.setup.append(_reconsume(target, topic, group, 50))
    return st


def _reset_time(version: str) -> int:
    import datetime as dt
    text = (CORPUS / version / "reset" / "actions.txt").read_text(encoding="utf-8")
    m = re.search(r"resetOffsetByTime -s (\S+)", text)
    if m is None:
        raise LookupError(f"{version}/reset/actions.txt: no resetOffsetByTime line")
    t = dt.datetime.strptime(m.group(1), "%Y-%m-%d#%H:%M:%S:%f").replace(tzinfo=dt.UTC)
    return int(t.timestamp() * 1000)


def _reconsume(broker: str, topic: str, group: str, upto: int) -> Setup:
    def run(c: Any) -> None:
        b = c.brokers[broker]
        for q in range(4):
            start = b.pull(group, topic, q, upto)  # PULL_OFFSET_MOVED: the reset's offset
            b.pull(group, topic, q, start)
            b.pull(group, topic, q, upto, upto)  # consumed again, committed with the pull
    return run


# ---------------------------------------------------------------------- sending

def send(sim: Any, rec: dict[str, Any]) -> RemotingCommand:
    """The recorded request, sent over TCP by mqctl's client to the matching simulated server
    (same code, version, extFields and body)."""
    req = rec["request"]
    target = PORTS[int(req["_addr"].rsplit(":", 1)[1])]
    return invoke(sim, target, int(req["code"]), dict(req.get("extFields") or {}),
                  (req.get("body") or "").encode("utf-8"), int(req["version"]))


def invoke(sim: Any, target: str, code: int, ext: dict[str, Any], body: bytes = b"",
           version: int = 479) -> RemotingCommand:
    addr = sim.namesrv_addr if target == "namesrv" else sim.cluster.servers[target].addr

    async def go() -> RemotingCommand:
        async with RemotingClient(ClientOptions(version=version, timeout=10)) as c:
            return await c.invoke(addr, code, ext, body, check=False)
    return asyncio.run(go())


def build(sim: Any, st: State, version: int) -> None:
    """Run the state's steps in order: calls on the cluster, requests over TCP."""
    for step in st.setup:
        if isinstance(step, Request):
            resp = invoke(sim, step.target, step.code, step.ext, version=version)
            assert resp.code == 0, (step, resp.code, resp.remark)
        else:
            sim.call(step)


# ---------------------------------------------------------------------- comparing

TIME_STR = re.compile(r"^\d{4}-\d\d-\d\d#\d\d:\d\d:\d\d:\d{3}$")


def time_class(v: Any) -> str:
    """A store/commit time compared by what it says, not its value: 0, -1 or a time."""
    if not isinstance(v, int) or isinstance(v, bool):
        return f"not an int: {v!r}"
    return str(v) if v in (0, -1) else "a time"


def delay_class(v: Any, now: int) -> str:
    """QUERY_CONSUME_TIME_SPAN delayTime: 0, ``now - (-1)`` (a queue with no committed offset:
    about an epoch ms) or an ordinary delay."""
    if not isinstance(v, int):
        return f"not an int: {v!r}"
    if v == 0:
        return "0"
    return "now + 1 (epoch ms)" if abs(v - now) < 120_000 else "a delay"


@dataclass
class Rules:
    """What a comparison leaves out, by field name (each with its reason in IGNORED)."""
    time: frozenset[str] = frozenset()  # compared with time_class
    time_str: frozenset[str] = frozenset()  # a formatted time: the format only
    delay: frozenset[str] = frozenset()  # compared with delay_class
    counter: frozenset[str] = frozenset()  # a rate/counter: the type only
    addr: frozenset[str] = frozenset()  # host:port: the form only
    addr_maps: frozenset[str] = frozenset()  # {brokerId: host:port}: keys exactly, values' form
    unordered: frozenset[str] = frozenset()  # lists whose order is a HashMap's
    own_only: dict[str, tuple[str, ...]] = field(default_factory=dict)  # map -> own keys


@dataclass
class Diff:
    problems: list[str] = field(default_factory=list)

    def add(self, path: str, msg: str) -> None:
        self.problems.append(f"{path}: {msg}")


def compare(real: Any, sim: Any, rules: Rules, now: int, path: str = "body",
            diff: Diff | None = None) -> Diff:
    diff = diff if diff is not None else Diff()
    key = path.rsplit(".", 1)[-1]
    if key in rules.time:
        if time_class(real) != time_class(sim):
            diff.add(path, f"real {time_class(real)} ({real}), sim {time_class(sim)} ({sim})")
        return diff
    if key in rules.delay:
        if delay_class(real, now) != delay_class(sim, now):
            diff.add(path, f"real {delay_class(real, now)}, sim {delay_class(sim, now)}")
        return diff
    if key in rules.time_str:
        for who, v in (("real", real), ("sim", sim)):
            if not (isinstance(v, str) and TIME_STR.match(v)):
                diff.add(path, f"{who} {v!r} is not yyyy-MM-dd#HH:mm:ss:SSS")
        return diff
    if key in rules.counter:
        if type(real) is not type(sim):
            diff.add(path, f"type: real {type(real).__name__}, sim {type(sim).__name__}")
        return diff
    if key in rules.addr:
        if not (isinstance(sim, str) and ":" in sim):
            diff.add(path, f"sim {sim!r} is not host:port")
        return diff
    if key in rules.addr_maps:
        if not (isinstance(real, dict) and isinstance(sim, dict)):
            diff.add(path, "not a map")
        elif sorted(real, key=repr) != sorted(sim, key=repr):
            diff.add(path, f"broker ids: real {list(real)}, sim {list(sim)}")
        return diff
    if isinstance(real, dict):
        if not isinstance(sim, dict):
            diff.add(path, f"real is a map, sim {type(sim).__name__}")
            return diff
        own = rules.own_only.get(key)
        if own is not None:
            _compare_own(real, sim, rules, now, path, own, diff)
            return diff
        rk, sk = set(real), set(sim)
        if rk != sk:
            diff.add(path, f"keys only real: {sorted(map(repr, rk - sk))}, only sim: "
                     f"{sorted(map(repr, sk - rk))}")
        for k in sorted(rk & sk, key=repr):
            compare(real[k], sim[k], rules, now, f"{path}.{_key(k)}", diff)
        return diff
    if isinstance(real, list):
        if not isinstance(sim, list):
            diff.add(path, f"real is a list, sim {type(sim).__name__}")
            return diff
        own = rules.own_only.get(key)
        if own is not None:  # a list of names: the scenario's own ones are in both
            for name in own:
                if (name in real) != (name in sim):
                    diff.add(path, f"{name}: in real {name in real}, in sim {name in sim}")
            return diff
        if len(real) != len(sim):
            diff.add(path, f"{len(real)} items in real, {len(sim)} in sim")
            return diff
        if key in rules.unordered:
            real, sim = sorted(real, key=_sort_key), sorted(sim, key=_sort_key)
        for i, (a, b) in enumerate(zip(real, sim, strict=True)):
            compare(a, b, rules, now, f"{path}[{i}]", diff)
        return diff
    if type(real) is not type(sim) or real != sim:
        diff.add(path, f"real {real!r}, sim {sim!r}")
    return diff


def _compare_own(real: dict[Any, Any], sim: dict[Any, Any], rules: Rules, now: int, path: str,
                 own: tuple[str, ...], diff: Diff) -> None:
    """A map of everything on the broker (groups, offsets): the scenario's own entries field by
    field, and the shape of the whole (every entry of real and sim has the same key set)."""
    for name in own:
        if name not in real or name not in sim:
            diff.add(path, f"{name}: in real {name in real}, in sim {name in sim}")
            continue
        compare(real[name], sim[name], rules, now, f"{path}.{name}", diff)

    def shapes(m: dict[Any, Any]) -> set[Any]:
        return {tuple(sorted(map(repr, v))) if isinstance(v, dict) else type(v).__name__
                for v in m.values()}
    if shapes(real) != shapes(sim) and not (_int_keyed(real) and _int_keyed(sim)):
        diff.add(path, f"entry shapes: real {shapes(real)}, sim {shapes(sim)}")


def _int_keyed(m: dict[Any, Any]) -> bool:
    """Every entry is a {queueId: offset} map (GET_ALL_CONSUMER_OFFSET): its shape is the key
    and value types, whatever the queue count."""
    return all(isinstance(v, dict) and all(isinstance(k, int) and isinstance(x, int)
                                           for k, x in v.items()) for v in m.values())


def _key(k: Any) -> str:
    if isinstance(k, (MessageQueue, fastjson.QueueKey)):
        return f"{k.broker_name}/{k.queue_id}"
    return str(k)


def _sort_key(v: Any) -> str:
    """Order of a HashMap-ordered list: by the item's identity (client id, broker name)."""
    if isinstance(v, dict):
        for k in ("clientId", "brokerName", "topic", "groupName"):
            if k in v:
                return str(v[k])
    return repr(v)

"""Replay of the client-answered exchanges of the real corpus: the simulated cluster
is set into the state of ``<version>/running-info`` (README: topics RI_T and RI_OT, 4 queues per
broker, 400 messages each; a concurrent consumer ``ri-c`` in RI_G with 2 threads and an orderly
one ``ri-o`` in RI_OG, both CONSUME_FROM_FIRST_OFFSET, of the recorded client version), the SAME
request as the recorded file is sent to the simulated broker, and the answer is compared field
by field.

Fields that are not compared for equality, each named with its reason:
- header ``opaque`` (per connection), body ``clientAddr`` (ephemeral TCP port);
- times: ``lastConsumeTimestamp``, ``lastLockTimestamp``, ``lastPullTimestamp``,
  ``subVersion``, ``PROP_CONSUMER_START_TIMESTAMP``, ``consumeTimestamp`` (start - 30 min);
- counters of consumption progress: ``commitOffset`` of non-retry queues, ``cachedMsgCount``,
  ``cachedMsgMinOffset``, ``cachedMsgMaxOffset`` (checked through their relations instead:
  commitOffset + cachedMsgCount = the queue's max offset, min = commitOffset, max = min + count
  - 1), the statusTable TPS/RT values of the subscribed topic;
- addresses and Java identity hashes: ``PROP_NAMESERVER_ADDR``, ``namesrvAddr``, ``clientIP``
  (checked against the sim's own addresses), the ``@<hash>`` suffix of object-valued
  properties (the class name before it is compared), ``messageListener`` (the application's
  class);
- ``clientCallbackExecutorThreads``: Runtime.availableProcessors() of the recording host.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import needs_corpus
from replay_corpus import CORPUS, invoke, load

from mqctl.models import MessageQueue, parse_offset_table_key
from mqctl.remoting import fastjson
from mqctl.versions import V4_9_3, V5_3_3

VERSIONS = {"4.9.3": V4_9_3, "5.3.3": V5_3_3}
IPS = {"4.9.3": "127.0.1", "5.3.3": "127.0.2"}
# messages per queue of RI_OT (16 sharding keys): what the orderly consumer had consumed, all
# of it, when the 307 was sent (its commitOffset per queue in 307_*_orderly.json)
RI_OT_COUNTS = {"broker-a": [25, 25, 50, 50], "broker-b": [50, 75, 75, 50]}
FILES = ["307_getConsumerRunningInfo_concurrent.json", "307_getConsumerRunningInfo_orderly.json",
         "203_getConsumerConnectionList_RI_G.json", "203_getConsumerConnectionList_RI_OG.json",
         "38_getConsumerListByGroup_RI_OG.json"]
TIME_FIELDS = {"lastConsumeTimestamp", "lastLockTimestamp", "lastPullTimestamp"}
PROGRESS_FIELDS = {"commitOffset", "cachedMsgCount", "cachedMsgMinOffset", "cachedMsgMaxOffset"}
SKIP_PROPS = {"PROP_CONSUMER_START_TIMESTAMP", "consumeTimestamp", "PROP_NAMESERVER_ADDR",
              "namesrvAddr", "clientIP", "messageListener", "clientCallbackExecutorThreads"}
HASHED = re.compile(r"^(?P<cls>[\w.$]+)@[0-9a-f]+$")

pytestmark = needs_corpus(CORPUS / "4.9.3" / "running-info")


def test_every_client_answered_exchange_of_the_corpus_is_replayed_here():
    """The other replay suite leaves running-info's 307/203/38 to this one."""
    found = sorted(str(p.relative_to(CORPUS)) for v in VERSIONS
                   for p in (CORPUS / v / "running-info").glob("*.json")
                   if re.match(r"(307|203|38)_", p.name))
    assert found == sorted(f"{v}/running-info/{f}" for v in VERSIONS for f in FILES)


def scenario(version: str) -> dict[str, Any]:
    v = VERSIONS[version]
    ip = IPS[version]
    per_queue = [{"queue": q, "broker": b, "max_offset": n}
                 for b, counts in RI_OT_COUNTS.items() for q, n in enumerate(counts)]
    return {
        "name": f"running-info-{version}", "clock": {"mode": "manual"},
        "cluster": "DefaultCluster" if version == "4.9.3" else "DefaultCluster5",
        "brokers": [{"name": "broker-a", "version": v}, {"name": "broker-b", "version": v}],
        "topics": [{"name": "RI_T", "queues": 4, "rate": 0, "max_offset": 50},
                   {"name": "RI_OT", "queues": 4, "rate": 0, "max_offset": 50,
                    "per_queue": per_queue}],
        "groups": [
            # initial_lag: the groups were new, so they start at offset 0
            {"name": "RI_G", "topics": ["RI_T"], "consume_from": "CONSUME_FROM_FIRST_OFFSET",
             "initial_lag": 1000,
             # ri-c ran with --threads 2
             "consumers": [{"id": f"{ip}.61@ric", "version": v, "rate": 6.5, "threads": 2}]},
            {"name": "RI_OG", "topics": ["RI_OT"], "orderly": True, "initial_lag": 1000,
             "consume_from": "CONSUME_FROM_FIRST_OFFSET",
             "consumers": [{"id": f"{ip}.62@rio", "version": v}]},
        ],
    }


@pytest.fixture(scope="module", params=list(VERSIONS))
def state(request, tmp_path_factory):
    """The sim 35 s after both consumers started (the recording's actions.txt)."""
    from sim_fixtures import start_sim

    version = request.param
    sim = start_sim(scenario(version), log_dir=str(tmp_path_factory.mktemp("logs")))

    sim.advance(35)
    try:
        yield version, sim
    finally:
        sim.__exit__(None, None, None)


def replay(sim: Any, rec: dict[str, Any]) -> Any:
    req = rec["request"]
    target = "broker-a" if req["_addr"].endswith("0911") else "broker-b"
    return invoke(sim, target, int(req["code"]), dict(req.get("extFields") or {}),
                  (req.get("body") or "").encode(), int(req["version"]))


def exchange(state, name: str) -> tuple[dict[str, Any], Any, Any, Any]:
    version, sim = state
    rec = load(f"{version}/running-info/{name}")
    resp = replay(sim, rec)
    real_body = fastjson.loads(rec["response"]["body_text"].encode())
    return rec, resp, real_body, fastjson.loads(resp.body or b"null")


def check_header(rec: dict[str, Any], resp: Any) -> None:
    real = rec["response"]
    assert resp.code == real["code"]
    assert resp.flag & 1 == real["flag"] & 1
    assert resp.language == real["language"]
    assert resp.version == real["version"]
    assert (resp.ext_fields or {}) == (real.get("extFields") or {})


def mq_of(key: Any) -> MessageQueue:
    if not isinstance(key, str):  # the codec's QueueKey
        return MessageQueue.of(key)
    return parse_offset_table_key(key)


@pytest.mark.parametrize("kind", ["concurrent", "orderly"])
def test_307_running_info_matches_the_real_client(state, kind):
    version, sim = state
    rec, resp, real, mine = exchange(state, f"307_getConsumerRunningInfo_{kind}.json")
    check_header(rec, resp)
    assert sorted(mine) == sorted(real)                       # mqPopTable/userConsumerInfo: 5.x
    for key in ("mqPopTable", "userConsumerInfo"):
        if key in real:
            assert mine[key] == real[key]
    # mqTable: the same queues (the topic's and the retry topic's), the same fields
    rt = {mq_of(k): v for k, v in real["mqTable"].items()}
    mt = {mq_of(k): v for k, v in mine["mqTable"].items()}
    if (version, kind) == ("4.9.3", "concurrent"):
        # named exception: the real client's route of the young %RETRY%RI_G listed broker-b
        # only (routes are refreshed every 30 s), so it held one retry queue, not two
        assert [mq.broker_name for mq in rt if mq.topic == "%RETRY%RI_G"] == ["broker-b"]
        mt = {mq: v for mq, v in mt.items()
              if not (mq.topic == "%RETRY%RI_G" and mq.broker_name == "broker-a")}
    assert sorted(mt) == sorted(rt)
    maxes = sim.call(lambda c: {mq: c.max_offset(mq) for mq in mt})
    for mq, r in rt.items():
        m = mt[mq]
        assert sorted(m) == sorted(r), mq
        for f in sorted(set(r) - TIME_FIELDS - PROGRESS_FIELDS):
            assert m[f] == r[f], (mq, f, m[f], r[f])
        if mq.topic.startswith("%RETRY%"):
            # 0 on 4.9.3, -1 on 5.3.3 (no message ever came through the retry queue)
            assert m["commitOffset"] == r["commitOffset"], (mq, m["commitOffset"])
            assert m["cachedMsgCount"] == r["cachedMsgCount"] == 0
            continue
        real_max = RI_OT_COUNTS[mq.broker_name][mq.queue_id] if mq.topic == "RI_OT" else 50
        for side, e, mx in (("real", r, real_max), ("sim", m, maxes[mq])):
            # everything pulled (below pullThresholdForQueue): cached = max - consumed
            assert e["commitOffset"] + e["cachedMsgCount"] == mx, (side, mq, e)
            if e["cachedMsgCount"]:
                assert e["cachedMsgMinOffset"] == e["commitOffset"], (side, mq, e)
                assert e["cachedMsgMaxOffset"] == mx - 1, (side, mq, e)
            else:
                assert e["cachedMsgMinOffset"] == e["cachedMsgMaxOffset"] == 0, (side, mq, e)
    if kind == "concurrent":
        # the recording caught it mid-way: some queues still cached, as the sim's
        assert any(e["cachedMsgCount"] for e in rt.values())
        assert any(e["cachedMsgCount"] for e in mt.values())
    # properties: the same keys and the same values, but the named ones
    rp, mp = real["properties"], mine["properties"]
    assert sorted(mp) == sorted(rp)
    for k in sorted(set(rp) - SKIP_PROPS):
        rv, mv = rp[k], mp[k]
        hr, hm = HASHED.match(rv), HASHED.match(mv)
        if hr:
            assert hm and hm["cls"] == hr["cls"], (k, mv, rv)
        else:
            assert mv == rv, (k, mv, rv)
    cid = rec["request"]["extFields"]["clientId"]
    if "clientIP" in rp:
        assert mp["clientIP"] == cid.split("@")[0] == rp["clientIP"]
    assert mp["PROP_NAMESERVER_ADDR"] == sim.namesrv_addr + ";"
    start = int(mp["PROP_CONSUMER_START_TIMESTAMP"])
    assert mp["consumeTimestamp"] == _human(start - 30 * 60_000)
    assert _human(int(rp["PROP_CONSUMER_START_TIMESTAMP"]) - 30 * 60_000)[:12] == \
        rp["consumeTimestamp"][:12]
    # statusTable: one entry per subscribed topic, the retry topic idle
    assert sorted(mine["statusTable"]) == sorted(real["statusTable"])
    for topic, r in real["statusTable"].items():
        assert sorted(mine["statusTable"][topic]) == sorted(r)
        if topic.startswith("%RETRY%"):
            assert mine["statusTable"][topic] == r
    # subscriptionSet: the same subscriptions, subVersion aside
    def subs(x: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(({k: v for k, v in s.items() if k != "subVersion"} for s in x),
                      key=lambda s: s["topic"])
    assert subs(mine["subscriptionSet"]) == subs(real["subscriptionSet"])


def test_307_remark_is_the_clients_not_set_any_response_code(state):
    rec, resp, _, _ = exchange(state, "307_getConsumerRunningInfo_orderly.json")
    # ClientRemotingProcessor.getConsumerRunningInfo: createResponseCommand(null) sets this
    # remark, then only the code is changed to SUCCESS; the broker forwards it verbatim
    assert rec["response"]["remark"] == "not set any response code"
    assert resp.remark == rec["response"]["remark"]


def _human(ms: int) -> str:
    """UtilAll.timeMillisToHumanString3 in the client's zone (the recording hosts: UTC)."""
    from datetime import UTC, datetime
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y%m%d%H%M%S")


@pytest.mark.parametrize("group", ["RI_G", "RI_OG"])
def test_203_connection_list_matches(state, group):
    rec, resp, real, mine = exchange(state, f"203_getConsumerConnectionList_{group}.json")
    check_header(rec, resp)
    assert sorted(mine) == sorted(real)
    for k in ("consumeFromWhere", "consumeType", "messageModel"):
        assert mine[k] == real[k]
    assert len(mine["connectionSet"]) == len(real["connectionSet"]) == 1
    mc, rc = mine["connectionSet"][0], real["connectionSet"][0]
    assert sorted(mc) == sorted(rc)
    assert {k: mc[k] for k in ("clientId", "language", "version")} == \
        {k: rc[k] for k in ("clientId", "language", "version")}
    assert sorted(mine["subscriptionTable"]) == sorted(real["subscriptionTable"])
    for t, r in real["subscriptionTable"].items():
        m = mine["subscriptionTable"][t]
        assert {k: v for k, v in m.items() if k != "subVersion"} == \
            {k: v for k, v in r.items() if k != "subVersion"}


def test_38_member_list_matches(state):
    rec, resp, real, mine = exchange(state, "38_getConsumerListByGroup_RI_OG.json")
    check_header(rec, resp)
    assert mine == real


def test_the_corpus_files_exist_as_named():
    for v in VERSIONS:
        for f in FILES:
            assert Path(CORPUS / v / "running-info" / f).is_file()

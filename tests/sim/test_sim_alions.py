"""A third-party client proves the simulated cluster speaks RocketMQ: the pure-JavaScript
ali-ons 3.12.0 (npm) looks up a route, heartbeats with consumer data, lists the group's
consumer ids, queries an offset, the max offset and an offset by time."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from conftest import ROOT

from mqctl.models import MessageQueue

JS = ROOT / "tests" / "js"


def test_alions_client_against_the_sim(sim):
    node = shutil.which("node")
    if not (JS / "node_modules" / "ali-ons").is_dir() or node is None:
        if os.environ.get("CI"):
            pytest.fail("ali-ons is not installed: ./dev runs `npm ci --prefix tests/js`")
        pytest.skip("ali-ons not installed (run: npm ci --prefix tests/js)")
    ts = sim.clock.start_ms - 600_000
    r = subprocess.run([node, str(JS / "alions_probe.js"), sim.namesrv_addr, "GID_JS",
                        "TopicPay", "GID_REPLAY", str(ts)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    c = sim.cluster
    assert got["brokers"] == [
        {"name": "broker-a", "addrs": {"0": c.broker_addr("broker-a"),
                                       "1": c.broker_addr("broker-a", slave=True)}},
        {"name": "broker-b", "addrs": {"0": c.broker_addr("broker-b")}}]
    assert got["queues"] == [{"broker": b, "read": 4, "write": 4, "perm": 6}
                             for b in ("broker-a", "broker-b")]
    # the heartbeat registered ali-ons as a member of GID_JS on broker-a
    assert got["ids"] == [got["clientId"]]
    # ... and its closed connection removed it again (NETTY EVENT: remove not active channel)
    members = sim.call(lambda cl: cl.brokers["broker-a"].consumer_ids("GID_JS"))
    assert members == []
    mq = MessageQueue("TopicPay", "broker-a", 0)
    assert got["offset"] == sim.call(lambda cl: cl.committed_offset("GID_REPLAY", mq))
    assert got["maxOffset"] == sim.call(lambda cl: cl.max_offset(mq))
    assert got["searched"] == c.brokers["broker-a"].search("TopicPay", 0, ts)
    # ali-ons sends language JAVA and version 121: the route came back in fastjson form
    rec = next(x for x in sim.request_log if x.code == 105)
    assert (rec.language, rec.version) == ("JAVA", 121)

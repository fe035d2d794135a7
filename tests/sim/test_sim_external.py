"""A real external client joins a simulated group over TCP; `mqctl sim up` as a process."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import run_cli

from mqctl.allocate import allocate_group
from mqctl.remoting import fastjson
from mqctl.remoting.client import RemotingClient
from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.frame import RemotingCommand
from mqctl.remoting.transport import Connection

EXT = "10.0.9.99@777#external"


def heartbeat_body(group: str, topics: list[str]) -> bytes:
    return fastjson.dumps({
        "clientID": EXT, "producerDataSet": [], "heartbeatFingerprint": 0, "withoutSub": False,
        "consumerDataSet": [{
            "groupName": group, "consumeType": "CONSUME_PASSIVELY",
            "messageModel": "CLUSTERING", "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
            "unitMode": False,
            "subscriptionDataSet": [{"topic": t, "subString": "*", "expressionType": "TAG",
                                     "classFilterMode": False, "codeSet": [], "tagsSet": [],
                                     "subVersion": 1} for t in topics]}]}).encode()


def test_external_member_joins_gets_notified_and_answers_running_info(sim):
    seen: list[int] = []

    async def on_request(conn: Connection, cmd: RemotingCommand) -> RemotingCommand:
        seen.append(cmd.code)
        if cmd.code == C.GET_CONSUMER_RUNNING_INFO:
            return cmd.response(0, body=fastjson.dumps({"properties": {"PROP_CONSUMEORDERLY":
                                                                       "false"},
                                                        "mqTable": {}, "subscriptionSet": []
                                                        }).encode())
        return cmd.response(3, " request type not supported")

    addr = sim.cluster.servers["broker-a"].addr
    addr_b = sim.cluster.servers["broker-b"].addr
    queues = sim.call(lambda c: c.subscribe_queues("TopicPay"))

    async def go() -> None:
        async with RemotingClient(on_request=on_request) as client:
            # a real client heartbeats to every broker of its topics' routes
            for a in (addr, addr_b):
                await client.invoke(a, C.HEART_BEAT, None,
                                    heartbeat_body("GID_PAY", ["TopicPay", "%RETRY%GID_PAY"]))
            await asyncio.sleep(0.05)
            ids = fastjson.loads((await client.invoke(addr, C.GET_CONSUMER_LIST_BY_GROUP, {
                "consumerGroup": "GID_PAY"})).body)["consumerIdList"]
            assert EXT in ids
            # the simulated members rebalance over 4 members (the notification is immediate)
            await asyncio.get_running_loop().run_in_executor(None, sim.advance, 0.5)
            want = allocate_group("AVG", queues, ids)
            for cid in ids:
                if cid == EXT:
                    continue
                got = sim.call(lambda c, cid=cid: {m for m in c.consumer(cid).pqs
                                                   if m.topic == "TopicPay"})
                assert got == set(want[cid])
            # GET_CONSUMER_RUNNING_INFO is forwarded to us over our own connection
            other = RemotingClient()
            resp = await other.invoke(addr, C.GET_CONSUMER_RUNNING_INFO, {
                "consumerGroup": "GID_PAY", "clientId": EXT, "jstackEnable": False})
            await other.close()
            assert fastjson.loads(resp.body)["properties"]["PROP_CONSUMEORDERLY"] == "false"
            assert C.NOTIFY_CONSUMER_IDS_CHANGED in seen and C.GET_CONSUMER_RUNNING_INFO in seen
            for a in (addr, addr_b):
                await client.invoke(a, C.UNREGISTER_CLIENT, {"clientID": EXT,
                                                             "consumerGroup": "GID_PAY"})
            ids = fastjson.loads((await client.invoke(addr, C.GET_CONSUMER_LIST_BY_GROUP, {
                "consumerGroup": "GID_PAY"})).body)["consumerIdList"]
            assert EXT not in ids
            # joining again, then closing the connection, removes it too (NETTY EVENT)
            await client.invoke(addr, C.HEART_BEAT, None, heartbeat_body("GID_PAY", ["TopicPay"]))
        await asyncio.sleep(0.1)
        async with RemotingClient() as c2:
            ids = fastjson.loads((await c2.invoke(addr, C.GET_CONSUMER_LIST_BY_GROUP, {
                "consumerGroup": "GID_PAY"})).body)["consumerIdList"]
            assert EXT not in ids

    asyncio.run(asyncio.wait_for(go(), 30))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sim_up_runs_until_sigterm(sig):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    p = subprocess.Popen([sys.executable, "-m", "mqctl", "sim", "up", "--port", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 20
        lines = []
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            lines.append(line)
            if line.startswith("export NAMESRV_ADDR="):
                break
        addr = lines[-1].strip().split("=", 1)[1]
        out = subprocess.run([sys.executable, "-m", "mqctl", "-n", addr, "cluster", "-o",
                              "json"], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert {r["broker"] for r in __import__("json").loads(out.stdout)["brokers"]} == {
            "broker-a", "broker-b"}
        p.send_signal(sig)  # SIGTERM, or Ctrl-C
        assert p.wait(timeout=20) == 0
        assert "stopped" in p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_sim_up_bad_scenario_is_a_usage_error(cli, tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("brokers: []\n")
    r = cli(["sim", "up", "--scenario", str(bad), "--port", "0"])
    assert r.exit_code == 2 and "at least one broker" in r.stderr and "Traceback" not in r.stderr
    r = cli(["sim", "up", "--scenario", "nope", "--port", "0"])
    assert r.exit_code == 2 and "no bundled scenario named 'nope'" in r.stderr
    r = cli(["sim", "scenarios", "-o", "json"])
    assert {"demo", "rooms", "large"} <= {x["scenario"] for x in r.json["scenarios"]}


# ------------------------------------------------------- sim up through the one output path

def _sim_up_in_process(args, monkeypatch):
    """``mqctl ARGS sim up --port 0`` in-process, stopped by its own SIGTERM handler as soon
    as it has written what started (no timing: the signal is queued at the end of the
    cluster's start and sent when ``sim up`` first waits, after it installed its handlers
    and wrote what started)."""
    from mqctl.sim import SimCluster

    start = SimCluster.start

    async def then_stop(self):
        await start(self)
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(SimCluster, "start", then_stop)
    return run_cli([*args, "sim", "up", "--port", "0"])


def test_sim_up_quiet_prints_nothing(monkeypatch):
    r = _sim_up_in_process(["-q", "-o", "json"], monkeypatch)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""  # -q: nothing but errors ("stopped" too)


def test_sim_up_json_is_one_document(monkeypatch):
    r = _sim_up_in_process(["-o", "json"], monkeypatch)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)  # the whole stdout is one JSON document
    assert doc["scenario"] == "demo" and doc["cluster"] == "DefaultCluster"
    assert doc["clock"] == {"mode": "real", "speed": None}
    assert [(b["name"], b["role"]) for b in doc["brokers"]] == [
        ("broker-a", "master"), ("broker-a", "slave"), ("broker-b", "master")]
    ports = [doc["namesrv"]["port"]] + [b["port"] for b in doc["brokers"]]
    assert all(p > 0 for p in ports) and len(set(ports)) == 4
    assert doc["namesrv"]["address"] == f"127.0.0.1:{doc['namesrv']['port']}"
    assert (doc["topics"], doc["groups"], doc["tls_certificate"]) == (5, 8, None)
    assert "stopped" in r.stderr


def test_sim_up_text_and_csv(monkeypatch):
    r = _sim_up_in_process(["-o", "plain"], monkeypatch)
    lines = r.stdout.splitlines()
    assert lines[0] == "mqctl sim: scenario demo (2 broker(s), 5 topic(s), 8 group(s)), clock real"
    ns = lines[1].removeprefix("name server: ")
    assert [x.split(":")[0] for x in lines[2:5]] == [
        "broker broker-a", "broker broker-a#1", "broker broker-b"]
    assert lines[5:] == [f"export NAMESRV_ADDR={ns}"]
    r = _sim_up_in_process(["-o", "csv"], monkeypatch)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["server"], x["role"]) for x in rows] == [
        ("namesrv", "namesrv"), ("broker-a", "master"), ("broker-a#1", "slave"),
        ("broker-b", "master")]

"""What a pause does on the simulated cluster, as RocketMQ does it: the brokers refuse the
group's pulls (NO_PERMISSION), its consumers log it and consume only what they had cached,
then the committed offsets stop moving and consumeOKTPS falls to 0; a resume lets them go on."""

from __future__ import annotations

from pathlib import Path

from mqctl.models import MessageQueue


def scenario(log_dir):
    return {"name": "pause", "clock": {"mode": "manual"}, "log_dir": str(log_dir),
            "brokers": [{"name": "broker-a"}],
            "topics": [{"name": "T", "queues": 1, "rate": 50, "history": "10m"}],
            "groups": [{"name": "G", "topics": ["T"], "initial_lag": 5000,
                        "consumers": [{"id": "10.9.8.1@1", "rate": 20}]}]}


def test_a_paused_group_consumes_its_cache_then_stops(cli, sim_factory, tmp_path):
    s = sim_factory(scenario(tmp_path / "logs"))
    mq = MessageQueue("T", "broker-a", 0)
    s.advance(10)
    r = cli(["-n", s.namesrv_addr, "group", "pause", "G", "--execute", "--yes", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    eff = r.json["effect"]
    assert eff["pulls_refused_on"] == ["broker-a"]
    s.advance(5)  # the next pull is refused: the client keeps what it had pulled
    cached = s.call(lambda c: c.consumer("10.9.8.1@1").running_info())
    n = sum(q["cachedMsgCount"] for q in cached["mqTable"].values())
    assert n > 0  # messages already cached: NOT stopped by a pause
    at = s.call(lambda c: c.committed_offset("G", mq))
    s.advance(n / 20 + 30)  # consumed at 20/s, then nothing is left
    drained = s.call(lambda c: c.committed_offset("G", mq))
    assert drained > at
    s.advance(30)
    assert s.call(lambda c: c.committed_offset("G", mq)) == drained  # frozen
    log = next(Path(tmp_path / "logs").rglob("rocketmq_client.log")).read_text()
    assert "subscription group no permission, G" in log
    assert "execute the pull request exception" in log
    r = cli(["-n", s.namesrv_addr, "group", "resume", "G", "--execute", "--yes", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    s.advance(30)
    assert s.call(lambda c: c.committed_offset("G", mq)) > drained

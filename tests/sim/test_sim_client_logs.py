"""The simulated clients' rocketmq_client.log reproduces the lines of the real 4.9.3 and 5.3.3
clients that the lag report relies on:

- a restart with the SAME client id starts with the real start-up lines
  (client-logs/cl-c2_rocketmq_client.log: its second run);
- the legacy (broker-pushed) reset writes the real sequence of lines
  (4.9.3/reset/client_log_after_reset.log).
"""

from __future__ import annotations

import re

import pytest
from conftest import REAL_CORPUS, needs_corpus
from replay.replay_corpus import invoke

from mqctl.remoting.codes import RequestCode
from mqctl.versions import V4_9_3, V5_3_3

REAL = REAL_CORPUS
pytestmark = needs_corpus(REAL)
VERSIONS = {"4.9.3": V4_9_3, "5.3.3": V5_3_3}
LINE_V4 = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (?P<level>\w+) RocketmqClient - "
                     r"(?P<msg>.*)$")
LINE_V5 = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} (?P<level>\w+) +\[(?P<pid>\d+)\] "
                     r"\[[^]]*\] \[[^]]*\] - (?P<msg>.*)$")


def messages(text: str, v5: bool) -> list[tuple[str, str, str]]:
    """(level, pid, message) of every client line (other loggers and stack traces skipped)."""
    out = []
    for line in text.splitlines():
        m = (LINE_V5 if v5 else LINE_V4).match(line.rstrip("\r"))
        if m:
            out.append((m["level"], m["pid"] if v5 else "", m["msg"]))
    return out


def template(msg: str) -> str:
    """A message with its variable parts (queues, ids, addresses, numbers) replaced."""
    msg = re.sub(r"MessageQueue \[[^]]*\]", "MQ", msg)
    msg = re.sub(r"\[[^]]*\]", "[X]", msg)
    msg = re.sub(r"\d+\.\d+\.\d+\.\d+(:\d+)?(@\w+)?", "ADDR", msg)
    msg = re.sub(r"\b(CL_G|RS_G|G)\b", "GROUP", msg)
    msg = re.sub(r"\b(RS_T|T)\b", "TOPIC", msg)
    return re.sub(r"\d+", "N", msg)


START = ("start beginning", "client factory", "start OK")


@pytest.mark.parametrize("version", list(VERSIONS))
def test_a_restart_with_the_same_client_id_writes_the_real_start_up_lines(sim_factory, tmp_path,
                                                                          version):
    v5 = version == "5.3.3"
    real = messages((REAL / version / "client-logs" / "cl-c2_rocketmq_client.log").read_text(),
                    v5)
    starts = [i for i, (_, _, m) in enumerate(real) if "start beginning" in m]
    assert len(starts) == 2                               # the kill -9, then the restart
    real_lines = [template(m) for _, _, m in real[starts[1]:] if any(k in m for k in START)
                  and "CLIENT_INNER_PRODUCER" not in m][:3]
    ip = "127.0.1" if version == "4.9.3" else "127.0.2"
    c1, c2 = f"{ip}.81@c1", f"{ip}.82@c2"
    sc = {"name": "cl", "clock": {"mode": "manual"},
          "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
          "topics": [{"name": "CL_T", "queues": 4, "rate": 0}],
          "groups": [{"name": "CL_G", "topics": ["CL_T"], "consumers": [
              {"id": c1, "version": VERSIONS[version]},
              {"id": c2, "version": VERSIONS[version], "join_at": "30s", "crash_at": "65s",
               "restart_at": "110s"}]}]}                    # restarted with the same id
    sim = sim_factory(sc, log_dir=str(tmp_path))
    sim.advance(140)
    text = sim.call(lambda c: c.consumer(c2).log.path.read_text())
    mine = messages(text, v5)
    runs = [i for i, (_, _, m) in enumerate(mine) if "start beginning" in m]
    assert len(runs) == 2
    second = mine[runs[1]:]
    # the second run starts with the real start-up lines, before any rebalance line
    assert [template(m) for _, _, m in second[:3]] == real_lines
    first_change = next(i for i, (_, _, m) in enumerate(second)
                        if "rebalanced result changed" in m)
    assert first_change > 2
    if v5:
        # a new process: the 5.x lines carry another pid (real: 19093, then 21634)
        real_pids = {p for _, p, _ in real[:starts[1]]}, {p for _, p, _ in real[starts[1]:]}
        assert len(real_pids[0]) == len(real_pids[1]) == 1 and real_pids[0] != real_pids[1]
        assert {p for _, p, _ in mine[:runs[1]]} != {p for _, p, _ in second}


KINDS = ("invoke reset offset operation from broker", "suspend this consumer",
         "resume this consumer", "[persist] Group", "remove unnecessary messageQueue offset",
         "add a new mq", "rebalanced result changed", "remove unnecessary mq")


def reset_sequence(msgs: list[tuple[str, str, str]]) -> list[str]:
    """The reset's lines, by kind, in order (consecutive repeats folded: queue counts aside)."""
    out: list[str] = []
    for _, _, m in msgs:
        kind = next((k for k in KINDS if k in m), None)
        if kind is not None and (not out or out[-1] != kind):
            out.append(kind)
    return out


def test_the_legacy_reset_writes_the_real_4_9_3_lines(sim_factory, tmp_path):
    """4.9.3 broker (no server-side reset): both pushes are logged at once, then each is
    applied 10 s apart: suspend, persist + remove offset per queue, the rebalance that adds
    them again (with a `rebalanced result changed` line, the set unchanged), resume."""
    real_text = (REAL / "4.9.3" / "reset" / "client_log_after_reset.log").read_text()
    real = messages(real_text, False)
    start = next(i for i, (_, _, m) in enumerate(real) if "invoke reset offset" in m)
    want = reset_sequence(real[start:])
    assert want.count("rebalanced result changed") == 2    # the corpus: one per broker push
    assert "remove unnecessary mq" not in want
    cid = "127.0.1.71@rs1"
    sc = {"name": "rs", "clock": {"mode": "manual"},
          "brokers": [{"name": "broker-a", "version": V4_9_3},
                      {"name": "broker-b", "version": V4_9_3}],
          "topics": [{"name": "RS_T", "queues": 4, "rate": 0, "max_offset": 50}],
          "groups": [{"name": "RS_G", "topics": ["RS_T"], "consumers": [
              {"id": cid, "version": V4_9_3}]}]}
    sim = sim_factory(sc, log_dir=str(tmp_path))
    sim.advance(40)
    ts = sim.clock.now_ms() - 86_400_000                   # before the first message: 0
    for broker in ("broker-b", "broker-a"):                # mqadmin's order in the corpus
        r = invoke(sim, broker, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
                   {"topic": "RS_T", "group": "RS_G", "timestamp": str(ts), "isForce": "true"},
                   version=V4_9_3)
        assert r.code == 0, r.remark
    sim.advance(25)
    mine = messages(sim.call(lambda c: c.consumer(cid).log.path.read_text()), False)
    first = next(i for i, (_, _, m) in enumerate(mine) if "invoke reset offset" in m)
    got = reset_sequence(mine[first:])
    assert got == want, (got, want)
    resets = [m for _, _, m in mine if "[persist] Group" in m]
    assert len(resets) == 8 and all(m.endswith(" 0") for m in resets)
    # each push applied 10 s after the previous one: the resume lines are 10 s apart
    assert sum("invoke reset offset" in m for _, _, m in mine) == 2
    assert sum("resume this consumer" in m for _, _, m in mine) == 2
    real_tpl = {template(m) for _, _, m in real[start:]
                if any(k in m for k in KINDS if k != "remove unnecessary mq")}
    mine_tpl = {template(m) for _, _, m in mine[first:] if any(k in m for k in KINDS)}
    assert mine_tpl <= real_tpl, mine_tpl - real_tpl


SERVER_KINDS = ("the pull request offset illegal", "[persist] Group",
                "remove unnecessary messageQueue offset", "Fix Offset",
                "fix the pull request offset", "invoke reset offset", "rebalanced result changed")


def per_queue_sequence(msgs: list[tuple[str, str, str]], mq: str) -> list[str]:
    """The kinds of the lines about one queue, in order (the rebalance line names none)."""
    out = []
    for _, _, m in msgs:
        kind = next((k for k in SERVER_KINDS if k in m), None)
        if kind is not None and (mq in m or kind == "rebalanced result changed"):
            out.append(kind)
    return out


def test_the_server_side_reset_writes_the_real_5_3_3_lines(sim_factory, tmp_path):
    """5.3.3 broker with useServerSideResetOffset: no `invoke reset offset` line; each queue's
    next pull answers OFFSET_ILLEGAL, then [persist] twice, removeOffset, `Fix Offset`, `fix the
    pull request offset` (reset/client_log_after_reset.log), and the queue is added again."""
    real = messages((REAL / "5.3.3" / "reset" / "client_log_after_reset.log").read_text(), True)
    mq = "MessageQueue [topic=RS_T, brokerName=broker-b, queueId=3]"
    want = per_queue_sequence(real, mq)[:5]
    assert want == ["the pull request offset illegal", "[persist] Group", "[persist] Group",
                    "remove unnecessary messageQueue offset", "Fix Offset"]
    cid = "127.0.2.71@rs1"
    sc = {"name": "rs5", "clock": {"mode": "manual"},
          "brokers": [{"name": "broker-a", "version": V5_3_3},
                      {"name": "broker-b", "version": V5_3_3}],
          "topics": [{"name": "RS_T", "queues": 4, "rate": 0, "max_offset": 50}],
          "groups": [{"name": "RS_G", "topics": ["RS_T"], "consumers": [
              {"id": cid, "version": V5_3_3}]}]}
    sim = sim_factory(sc, log_dir=str(tmp_path))
    sim.advance(40)
    ts = sim.clock.now_ms() - 86_400_000
    for broker in ("broker-b", "broker-a"):
        r = invoke(sim, broker, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
                   {"topic": "RS_T", "group": "RS_G", "timestamp": str(ts), "isForce": "true"},
                   version=V5_3_3)
        assert r.code == 0, r.remark
    sim.advance(5)
    mine = messages(sim.call(lambda c: c.consumer(cid).log.path.read_text()), True)
    got = per_queue_sequence(mine, mq)
    got = got[got.index("the pull request offset illegal"):]   # the log extract's start
    assert got[:5] == want
    assert "fix the pull request offset" in got and "invoke reset offset" not in got
    persisted = [m for _, _, m in mine if "[persist] Group" in m and mq in m]
    assert persisted and all(m.endswith(" 0") for m in persisted)

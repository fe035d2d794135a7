"""The 4.9.3 scenario example of docs/scenario.md ("Fidelity to real RocketMQ, per version")
loads and answers as the corpus' 4.9.3 brokers do."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from replay_corpus import invoke

from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode as C

DOC = Path(__file__).resolve().parents[2] / "docs" / "scenario.md"


def test_the_documented_4_9_3_scenario(sim_factory: Any) -> None:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"```yaml\n(name: rw-493\n.*?)```", text, re.S)
    assert m, "the rw-493 example is missing from docs/scenario.md"
    s = sim_factory(yaml.safe_load(m.group(1)))
    stats = invoke(s, "broker-a", C.GET_TOPIC_STATS_INFO, {"topic": "RW_T"}, version=399)
    table = fastjson.mq_map(fastjson.loads(stats.body)["offsetTable"])
    assert sorted((mq.queue_id, v["maxOffset"]) for mq, v in table.items()) == [(0, 50), (1, 50)]
    assert b"topicPutTps" not in stats.body and stats.version == 399
    cs = invoke(s, "broker-a", C.GET_CONSUME_STATS, {"consumerGroup": "RW_G", "topic": "RW_T"},
                version=399)
    offs = fastjson.mq_map(fastjson.loads(cs.body)["offsetTable"])
    assert sorted((mq.queue_id, w["consumerOffset"]) for mq, w in offs.items()) == [
        (0, 50), (1, 50), (2, 25), (3, 25)]
    assert all("pullOffset" not in w for w in offs.values())

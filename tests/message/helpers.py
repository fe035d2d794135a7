"""One simulated cluster in which a message of topic T reaches every state of `message track`
in one group each (the knobs each group turns are named by the state)."""

from __future__ import annotations

from typing import Any

TOPIC = "T"

# one broker, one queue: every group sees the same message at the same offset
TRACK_SCENARIO: dict[str, Any] = {
    "name": "track", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a"}],
    "topics": [{"name": TOPIC, "queues": 1, "rate": 1, "history": "10m"}],
    "groups": [
        {"name": "G_CONSUMED", "topics": [TOPIC], "consumers": [{"id": "10.7.0.1@1"}]},
        {"name": "G_WAITING", "topics": [TOPIC], "initial_lag": 400,
         "consumers": [{"id": "10.7.0.2@1", "behaviour": "stuck"}]},
        {"name": "G_FILTERED", "topics": [TOPIC], "consumers": [
            {"id": "10.7.0.3@1", "subscriptions": {TOPIC: "NoSuchTag"}}]},
        {"name": "G_RETRYING", "topics": [TOPIC], "consumers": [
            {"id": "10.7.0.4@1", "fail_ratio": 1.0, "max_reconsume_times": 16}]},
        {"name": "G_DEAD", "topics": [TOPIC], "consumers": [
            {"id": "10.7.0.5@1", "fail_ratio": 1.0, "max_reconsume_times": 0}]},
        {"name": "G_BROADCAST", "topics": [TOPIC], "model": "BROADCASTING",
         "consumers": [{"id": "10.7.0.6@1"}]},
        {"name": "G_OFFLINE", "topics": [TOPIC], "initial_lag": 400},
        # a 5.x pop consumer: what it does not ack is revived into %RETRY%G_POP_T after its
        # invisible time (60 s): not yet
        {"name": "G_POP", "topics": [TOPIC], "consume_type": "CONSUME_POP",
         "consumers": [{"id": "10.7.0.7@1", "fail_ratio": 1.0}]},
    ],
}

EXPECTED = {"G_CONSUMED": "consumed", "G_WAITING": "waiting", "G_FILTERED": "filtered",
            "G_RETRYING": "retrying", "G_DEAD": "dead-lettered",
            "G_BROADCAST": "broadcast: unknown", "G_OFFLINE": "offline", "G_POP": "unknown"}

"""``MQVersion.Version`` ordinals <-> names (what clients send as ``version``).

The enum in apache/rocketmq ``common/.../MQVersion.java`` is regular, so the table is generated
rather than listed: 3.0.0 pre-releases, then ``_SNAPSHOT``/release pairs for 3.0.1-3.0.15,
3.1.0-3.2.9, 3.3.1-3.9.9 (no x.y.0), 4.0.0-5.9.9, then ``HIGHER_VERSION``. Checked against the
ordinals quoted in rocketmq-protocol.md (V3_0_7_SNAPSHOT 28, V4_9_4 401, V5_3_3 479, ...).
"""

from __future__ import annotations

from functools import cache


@cache
def version_names() -> tuple[str, ...]:
    names = ["V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1"]
    names += [f"V3_0_0_BETA{i}" for i in range(1, 6)]
    for i in range(6, 10):
        names += [f"V3_0_0_BETA{i}_SNAPSHOT", f"V3_0_0_BETA{i}"]
    names.append("V3_0_0_FINAL")

    def pair(v: str) -> list[str]:
        return [f"V{v}_SNAPSHOT", f"V{v}"]

    for patch in range(1, 16):
        names += pair(f"3_0_{patch}")
    for minor in (1, 2):
        for patch in range(10):
            names += pair(f"3_{minor}_{patch}")
    for minor in range(3, 10):
        for patch in range(1, 10):
            names += pair(f"3_{minor}_{patch}")
    for major in (4, 5):
        for minor in range(10):
            for patch in range(10):
                names += pair(f"{major}_{minor}_{patch}")
    names.append("HIGHER_VERSION")
    return tuple(names)


def version_name(ordinal: int) -> str:
    """``MQVersion.getVersionDesc``: ordinals past the end map to the last name."""
    names = version_names()
    if ordinal < 0:
        return f"UNKNOWN({ordinal})"
    return names[min(ordinal, len(names) - 1)]


def version_ordinal(name: str) -> int:
    try:
        return version_names().index(name.upper())
    except ValueError:
        raise ValueError(f"unknown RocketMQ version name {name!r}") from None


# The ordinals mqctl and the simulated cluster compare against, and what changed at each.
V3_0_7_SNAPSHOT = version_ordinal("V3_0_7_SNAPSHOT")  # clients take broker-pushed resets
V3_1_8_SNAPSHOT = version_ordinal("V3_1_8_SNAPSHOT")  # clients answer GET_CONSUMER_RUNNING_INFO
V4_9_3 = version_ordinal("V4_9_3")  # 399: the 4.x release of the real-RocketMQ corpus
# name servers: GET_ROUTEINFO_BY_TOPIC in standard JSON for >= 4.9.4 clients or
# acceptStandardJsonOnly (4.9.3 answers fastjson's non-standard {0:"..."} maps)
V4_9_4 = version_ordinal("V4_9_4")
# clients log in the logback format; brokers honour QUERY_CONSUMER_OFFSET setZeroIfNotFound,
# add DataVersion.stateVersion, the 5.x SubscriptionGroupConfig fields, dataVersion and
# groupTopicMap in GET_ALL_CONSUMER_OFFSET, and answer GET_MIN_OFFSET with remark ""
V5_0_0 = version_ordinal("V5_0_0")
V5_1_0 = version_ordinal("V5_1_0")  # brokers: server-side reset (RIP-48, useServerSideResetOffset)
# brokers: SEARCH_OFFSET_BY_TIMESTAMP with a boundaryType (apache/rocketmq#6429); before it the
# search returns the nearest message
V5_1_1 = version_ordinal("V5_1_1")
# brokers: SubscriptionGroupConfig gains ``attributes`` (GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
V5_1_3 = version_ordinal("V5_1_3")
# clients fix an OFFSET_ILLEGAL pull at once (#7635); brokers default useServerSideResetOffset
# to true
V5_2_0 = version_ordinal("V5_2_0")
# brokers: GET_TOPIC_STATS_INFO covers max(read, write) queues, not only the write queues
# (apache/rocketmq#7951)
V5_3_0 = version_ordinal("V5_3_0")
# brokers: GET_CONSUME_STATS takes a topicList (apache/rocketmq#9153)
V5_3_2 = version_ordinal("V5_3_2")
# brokers: GET_TOPIC_STATS_INFO adds topicPutTps (apache/rocketmq#9297); 479, the 5.x release of
# the real-RocketMQ corpus
V5_3_3 = version_ordinal("V5_3_3")

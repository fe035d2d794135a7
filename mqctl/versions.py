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

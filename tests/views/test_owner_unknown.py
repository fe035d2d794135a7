"""Owner unknown in ``group progress``: a member whose GET_CONSUMER_RUNNING_INFO does not
answer while it stays a member leaves its queues' owner unknown -- OWNER ``unknown``, not
counted as unowned, with a note naming the member -- never "unowned" (the sim's
``silent_at``/``silent_for``; real 4.9.3: consumer e2 stalled ~40 s and kept its queues)."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

E1, E2 = "10.25.0.1@e1", "10.25.0.2@e2"


def scenario(silent: bool) -> dict[str, Any]:
    e2: dict[str, Any] = {"id": E2, "version": "V4_9_3"}
    if silent:
        e2.update(silent_at="30s", silent_for="60s")
    return {"name": "silent-member", "clock": {"mode": "manual",
                                               "start": "2024-06-01T00:00:00Z"},
            "running_info_timeout": "0.3s",
            "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                        {"name": "broker-b", "version": "V4_9_3"}],
            "topics": [{"name": "T", "queues": 4, "rate": 1, "history": "10m"}],
            "groups": [{"name": "G", "topics": ["T"], "consumers": [
                {"id": E1, "version": "V4_9_3"}, e2]}]}


async def progress(silent: bool) -> Any:
    from mqctl.admin import Admin
    from mqctl.remoting.client import ClientOptions, RemotingClient
    from mqctl.sim import SimCluster
    from mqctl.timeparse import set_clock
    from mqctl.views.progress_capture import capture_progress

    cluster = SimCluster(scenario(silent), clock="manual")
    await cluster.start()
    set_clock(cluster.clock.now_ms)
    try:
        async with RemotingClient(ClientOptions(timeout=5.0)) as client:
            await cluster.advance(45)
            return await capture_progress(Admin(client, cluster.namesrv_addr), "G", "T")
    finally:
        set_clock(None)
        await cluster.stop()


def test_an_unanswered_member_leaves_owners_unknown_not_unowned():
    from mqctl.render import emit
    from mqctl.views.progress_rows import progress_result

    for silent in (True, False):
        p = asyncio.run(progress(silent))
        result = progress_result(p)
        out = io.StringIO()
        emit(result, "json", out)
        doc = json.loads(out.getvalue())
        rows = [r for r in doc["queues"] if r["topic"] == "T"]
        unknown = [r for r in rows if r["owner_unknown"]]
        topic = next(t for t in doc["topics"] if t["topic"] == "T")
        if not silent:  # the guard: both answer, every queue has its owner
            assert not unknown and topic["unowned"] == 0
            assert {r["owner"] for r in rows} == {E1, E2}
            continue
        assert p.unanswered == [E2]
        assert len(unknown) == 4 and all(r["owner"] is None for r in unknown)
        assert {r["owner"] for r in rows if not r["owner_unknown"]} == {E1}
        assert topic["unowned"] == 0  # unknown is not unowned
        text = io.StringIO()
        emit(result, "plain", text)
        plain = text.getvalue()
        assert "unknown" in plain
        assert f"{E2} did not answer GET_CONSUMER_RUNNING_INFO" in plain

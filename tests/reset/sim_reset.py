"""Helpers for the reset tests on a simulated cluster with a manual clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mqctl.admin import Admin
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.reset import Target, apply_plan, default_wait, make_plan, verify


def offsets(s: Any, group: str = "G", topic: str = "T") -> dict[Any, int | None]:
    """The group's committed offset of every queue of the topic, as the broker has it."""
    qs = s.call(lambda c: c.subscribe_queues(topic))
    return {mq: s.call(lambda c, mq=mq: c.committed_offset(group, mq)) for mq in qs}


def reset_on_manual_clock(s: Any, target: Target, *,
                          applied: Callable[[list[Any]], None] | None = None,
                          **verify_kw: Any) -> tuple[Any, Any, list[dict[Any, int | None]]]:
    """Plan, apply and verify (group G, topic T) with verify's waits advancing the simulated
    clock; returns the plan, the results and the broker's offsets after each wait.
    ``applied`` sees apply's results before verify starts."""
    seen: list[dict[Any, int | None]] = []

    async def go() -> tuple[Any, Any]:
        async with RemotingClient(ClientOptions(timeout=5)) as client:
            admin = Admin(client, s.namesrv_addr)
            plan = await make_plan(admin, "G", "T", target)
            assert not plan.refusals, plan.refusals
            results = await apply_plan(admin, plan)
            if applied is not None:
                applied(results)

            async def advance(sec: float) -> None:
                await asyncio.to_thread(s.advance, sec)
                seen.append(offsets(s))

            res = await verify(admin, plan, results, wait_s=default_wait(plan), waiter=advance,
                               **verify_kw)
            return plan, res

    plan, res = asyncio.run(go())
    return plan, res, seen

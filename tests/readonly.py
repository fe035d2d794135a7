"""The one check that a command was read-only: used by every test that says
"read-only", so all of them are as strict as the strictest was."""

from __future__ import annotations

from typing import Any

from mqctl.remoting.codes import is_mutating, request_name


def _requests(source: Any) -> list[tuple[int, dict[str, str] | None]]:
    """(code, ext_fields) of every request ``source`` received: a simulated cluster (its
    ``request_log``), a FakeCluster (``received``: (role, code), no fields), or records."""
    if hasattr(source, "request_log"):
        return [(r.code, r.ext_fields) for r in source.request_log]
    if hasattr(source, "received"):
        return [(code, None) for _, code in source.received]
    return [(r.code, getattr(r, "ext_fields", None)) for r in source]


def assert_read_only(source: Any) -> None:
    """Nothing that changes cluster state was sent (mqctl.remoting.codes.is_mutating: HEART_BEAT,
    LOCK/UNLOCK_BATCH_MQ, offset updates, resets, ... and a PULL that commits an offset, or
    whose flags cannot be read), and something was sent at all (a command that sent nothing
    proves nothing)."""
    sent = _requests(source)
    assert sent, "the command sent nothing at all"
    bad = sorted({request_name(code) for code, ext in sent if is_mutating(code, ext)})
    assert bad == [], f"read-only command sent {bad}"

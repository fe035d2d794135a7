"""Reading a broker's or name server's answer: the JSON body and the numeric header fields."""

from __future__ import annotations

from typing import Any

from mqctl.errors import MqctlError, ProtocolError
from mqctl.remoting import fastjson
from mqctl.remoting.frame import RemotingCommand


def json_body(resp: RemotingCommand, what: str) -> Any:
    """The answer's body decoded (fastjson); ``{}`` when it has none. A body that does not
    decode raises with ``what`` in front of the message."""
    if not resp.body:
        return {}
    try:
        return fastjson.loads(resp.body)
    except MqctlError as exc:
        exc.message = f"{what}: {exc.message}"
        raise


def ext_offset(resp: RemotingCommand, key: str = "offset") -> int:
    """A numeric header field of the answer (0 when absent)."""
    v = resp.ext(key)
    try:
        return int(v) if v is not None else 0
    except ValueError:
        raise ProtocolError(f"response field {key!r} is not a number: {v!r}") from None

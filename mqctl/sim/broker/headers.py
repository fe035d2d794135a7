"""Reading a request's header fields and answering it, as every simulated processor does
(``decodeCommandCustomHeader``: an absent or unparsable field reads as its default)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.remoting.frame import RemotingCommand

if TYPE_CHECKING:
    pass

R = ResponseCode
C = RequestCode

    # ------------------------------------------------------------------ handlers


# ---------------------------------------------------------------------- request handlers

def hdr(cmd: RemotingCommand, key: str, default: str | None = None) -> str | None:
    return (cmd.ext_fields or {}).get(key, default)


def hdr_int(cmd: RemotingCommand, key: str, default: int = 0) -> int:
    v = hdr(cmd, key)
    try:
        return int(v) if v is not None else default
    except ValueError:
        return default


def hdr_opt_int(cmd: RemotingCommand, key: str) -> int | None:
    """A header field decoded like ``decodeCommandCustomHeader``: absent or unparsable -> null.
    """
    v = hdr(cmd, key)
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def hdr_bool(cmd: RemotingCommand, key: str, default: bool = False) -> bool:
    v = hdr(cmd, key)
    return default if v is None else v.lower() == "true"


def success(cmd: RemotingCommand, body: Any = None, ext: dict[str, Any] | None = None,
            remark: str | None = None) -> RemotingCommand:
    b = b"" if body is None else fastjson.dumps_fastjson(body).encode("utf-8")
    return cmd.response(R.SUCCESS, remark, ext, b)


def failure(cmd: RemotingCommand, code: int, remark: str) -> RemotingCommand:
    return cmd.response(code, remark)

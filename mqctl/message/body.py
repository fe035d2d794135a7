"""``message find --body FILE``: the body of the newest message found, written to a file as
the producer sent it (zlib bodies uncompressed: ``MessageDecoder``'s sys flag), atomically and
bounded; an existing file is never replaced."""

from __future__ import annotations

import os

from mqctl.errors import UsageError
from mqctl.fsutil import atomic_writer, local_path_error, shown_path
from mqctl.message.find import FindResult

MAX_BODY_BYTES = 64 * 1024 * 1024  # a body is at most maxMessageSize (4 MiB by default)


def write_body(res: FindResult, path: str) -> int:
    """Write the first (newest) message's body to ``path``; the bytes written."""
    if not res.messages:
        raise UsageError("no message found: no body written",
                         hint="`mqctl message find` without --body shows what was searched")
    m = res.messages[0].message
    plain = m.plain_body()
    if plain is None:
        raise UsageError(f"the body is compressed with {m.compression}: not written",
                         hint="mqctl uncompresses zlib bodies only; -o json has bodyHeadBase64")
    if len(plain) > MAX_BODY_BYTES:
        raise UsageError(f"the body is {len(plain)} bytes, more than {MAX_BODY_BYTES}: not "
                         "written", hint="read it with a client of the application")
    if os.path.lexists(path):
        raise UsageError(f"body file {shown_path(path)} exists: not replaced",
                         hint="remove it or give another file")
    try:
        # latin-1 maps each byte to one character and back: the bytes as they are
        with atomic_writer(path, encoding="latin-1") as fh:
            fh.write(plain.decode("latin-1"))
    except OSError as exc:
        raise local_path_error(exc, path, "body file") from None
    return len(plain)


__all__ = ["MAX_BODY_BYTES", "write_body"]

"""The one place a :class:`~mqctl.remoting.client.RemotingClient` is built: from the settings
(name servers, timeout, TLS, ACL credentials: :mod:`mqctl.config`), or from explicit client
options (the demo, the simulated cluster's own tools). Every command, the API, shell
completion and the demo connect through :func:`connect` (``tests/api/test_api.py`` fails on a
client built anywhere else).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mqctl.config import Settings

if TYPE_CHECKING:
    from mqctl.config import Settings
    from mqctl.remoting.client import ClientOptions, RemotingClient


def client_options(settings: Settings, *, timeout: float | None = None,
                   connect_timeout: float | None = None,
                   max_in_flight: int | None = None) -> ClientOptions:
    """The client's options from ``settings`` (TLS files checked), with the changes given."""
    opts = settings.client_options()
    changes: dict[str, Any] = {}
    if timeout is not None:
        changes["timeout"] = timeout
    if connect_timeout is not None:
        changes["connect_timeout"] = connect_timeout
    if max_in_flight is not None:
        changes["max_in_flight"] = max_in_flight
    return replace(opts, **changes) if changes else opts


@asynccontextmanager
async def connect(options: Settings | ClientOptions, **changes: Any
                  ) -> AsyncIterator[RemotingClient]:
    """A connected client (its pooled connections closed at the end of the block).
    ``options``: settings (``changes`` as :func:`client_options` takes them) or client options."""
    from mqctl.remoting.client import RemotingClient

    opts = client_options(options, **changes) if isinstance(options, Settings) else (
        replace(options, **changes) if changes else options)
    async with RemotingClient(opts) as client:
        yield client

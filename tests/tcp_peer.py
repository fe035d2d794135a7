"""A tiny TCP server on 127.0.0.1 for the peers that are not what the address says (tests of
tests/cli/test_environment_errors.py and tests/cli/test_cluster_data_escaped.py): its own event loop
in a thread,
``handle(reader, writer)`` per connection, ``addr`` as host:port."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager


@contextmanager
def refused_port() -> Iterator[int]:
    """A port of 127.0.0.1 that refuses every connection while the block runs: bound and never
    listening, so no other process can take it meanwhile (a port closed before use can be)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class TcpPeer:
    def __init__(self, handle: Handler):
        self.loop = asyncio.new_event_loop()
        self.tasks: set[asyncio.Task[None]] = set()
        ready = threading.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            self.tasks.add(task)
            try:
                await handle(reader, writer)
            except (asyncio.CancelledError, ConnectionError):
                pass
            finally:
                writer.close()

        async def main() -> None:
            self.server = await asyncio.start_server(serve, "127.0.0.1", 0)
            self.addr = f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
            ready.set()

        self.thread = threading.Thread(target=lambda: (self.loop.run_until_complete(main()),
                                                       self.loop.run_forever()), daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def close(self) -> None:
        async def shutdown() -> None:
            self.server.close()
            for t in self.tasks:
                t.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

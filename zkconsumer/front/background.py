"""A front on an event loop of its own thread, in the calling process: for an application or a test that plugs its
own local APIs in (:mod:`.handlers`) and wants them beside its other code. A separate process is
:mod:`.launcher`'s."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from zkconsumer.front.legacy.legacy_versions import old_versions
from zkconsumer.front.proxy.config import FrontConfig
from zkconsumer.front.proxy.handlers import LocalApis
from zkconsumer.front.proxy.server import FrontServer


@contextmanager
def front_in_thread(config: FrontConfig, local: LocalApis | None = None,
                    timeout: float = 10.0) -> Iterator[FrontServer]:
    """A started front (its ``port`` and ``advertised`` set) until the block ends, then stopped."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="zkconsumer-front", daemon=True)
    thread.start()
    server = FrontServer(config, local, legacy=old_versions(config, local or {}))
    try:
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout)
        yield server
    finally:
        try:
            asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            loop.close()

"""The order every server is provided in: an address from the environment, else Docker, else a local process."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from zkconsumer.embedded import docker
from zkconsumer.embedded.process import LocalServer


@contextlib.contextmanager
def provide(
    server: str,
    env_var: str,
    check_external: Callable[[str], None],
    container: Callable[[], AbstractContextManager[str]],
    local_server: Callable[[], LocalServer],
) -> Iterator[str]:
    """Yield an address; ``check_external`` raises a clear error when the address in ``env_var`` is dead."""
    external = os.environ.get(env_var)
    if external:
        check_external(external)
        yield external
    elif docker.available(server):
        with container() as address:
            yield address
    else:
        with local_server() as process:
            yield process.address

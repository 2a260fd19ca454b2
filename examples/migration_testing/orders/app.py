"""Each order message is processed once per partition: its value kept in the application's own state directory."""

import os
from pathlib import Path


def handle(message) -> None:
    state = Path(os.environ["ZKCONSUMER_STATE_DIR"])
    with open(state / f"processed-{os.getpid()}.txt", "a") as out:
        out.write(f"{message.key.decode()} {message.value.decode()}\n")


def on_revoke(partitions) -> None:
    """Nothing buffered to flush: every order is written as it is processed."""

"""``python -m zkconsumer.front --bootstrap-server HOST:PORT [options]``: the front as its own process, what
:mod:`zkconsumer.embedded.front_process` starts. Its events are JSON lines on stderr when ``ZKCONSUMER_LOG_JSON=1``."""

from __future__ import annotations

import argparse
import sys

from zkconsumer.errors import ZkConsumerError
from zkconsumer.log import configure_logging


def main(argv: list[str] | None = None) -> int:
    # kio gives each of its types a hypothesis strategy whenever hypothesis can be imported (it can, wherever the
    # test extra is installed): close to a third of the front's start (0.28 of 0.92 CPU-seconds), for strategies no
    # front uses, and a suite starts fronts by the dozen. This process is the front's own, so hypothesis is made
    # unimportable in it before the front's modules import kio.
    sys.modules.setdefault("hypothesis", None)  # type: ignore[arg-type]
    from zkconsumer.front.command_line import add_front_options, config_of, run_front

    parser = argparse.ArgumentParser(prog="python -m zkconsumer.front", description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT...]",
                        help="the broker the front relays to")
    add_front_options(parser)
    args = parser.parse_args(argv)
    configure_logging()
    try:
        return run_front(config_of(args, args.bootstrap_server), args.port_file)
    except ZkConsumerError as exc:
        print(f"zkconsumer front: {exc}", file=sys.stderr)
        return exc.exit_status


if __name__ == "__main__":
    sys.exit(main())

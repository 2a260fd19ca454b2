"""What a filtered-out event costs: a debug event on the fetch path while the level is info or higher.

Run: ``.venv/bin/python benchmarks/log_filtered.py [--repeat N] [--number N]``. Each line is the best of N runs, in
nanoseconds per call, of the data path's busiest debug event (``fetcher.chunk_enqueued``, four fields and a bound
context) with debug off:

* ``floor``: a method that does nothing, called with the same arguments (building the keyword arguments is the
  caller's cost, whatever the logger does);
* ``stdlib``: the standard library's own filtered ``logger.debug("...", arg)``, the peer a library is held to;
* ``zkconsumer``: our logger, unconfigured (the standard library's level decides), and under the command line's
  structlog configuration (``make_filtering_bound_logger``); ``debug`` at a fixed level, and ``emit``, at the level
  the event's declaration gives (what the fetcher writes);
* ``structlog``: structlog's own filtering bound logger of that configuration, called directly (what a module-level
  logger could do at best if the library configured structlog itself, which it must not).

The variants are timed in turns, round after round, so that a busy machine slows them alike; each keeps its best
round. Ratios are against ``floor`` and ``stdlib`` measured in the same run. This is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import io
import logging
import platform
import timeit

import structlog

from zkconsumer.events import catalogue as ev
from zkconsumer.log import configure_logging, get_logger, reset_logging


class _Floor:
    def debug(self, event: str, **fields: object) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=200_000)
    args = parser.parse_args()
    call = 'log.debug(EVENT, topic="events", partition=3, fetch_offset=1200, messages=250)'
    # what the fetcher writes: the event at the level its declaration gives
    emit = 'log.emit(EVENT, topic="events", partition=3, fetch_offset=1200, messages=250)'
    ours = get_logger("zkconsumer.fetcher").bind(consumer_id="c", fetcher_id=0, broker_id=1)
    configure_logging(level="info", stream=io.StringIO(), force=True)
    direct = structlog.get_logger("zkconsumer.fetcher").bind(consumer_id="c", fetcher_id=0, broker_id=1)
    reset_logging()
    variants: dict[str, tuple[str, object, bool]] = {
        "floor (no-op method, same arguments)": (call, _Floor(), False),
        "stdlib logger.debug, filtered": ('log.debug("fetcher.chunk_enqueued %s", 250)',
                                          logging.getLogger("zkconsumer.benchmark"), False),
        "zkconsumer, unconfigured (stdlib level)": (call, ours, False),
        "zkconsumer, command-line configuration": (call, ours, True),
        "zkconsumer emit, unconfigured": (emit, ours, False),
        "zkconsumer emit, command-line configuration": (emit, ours, True),
        "structlog, same configuration, direct": (call, direct, True),
    }
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(args.repeat):
        for label, (statement, log, configured) in variants.items():
            if configured:
                configure_logging(level="info", stream=io.StringIO(), force=True)
            seconds = timeit.timeit(statement, globals={"log": log, "EVENT": ev.FETCHER_CHUNK_ENQUEUED},
                                    number=args.number)
            reset_logging()
            best[label] = min(best[label], seconds / args.number * 1e9)
    floor, stdlib = best["floor (no-op method, same arguments)"], best["stdlib logger.debug, filtered"]
    print(f"filtered debug event, ns per call, best of {args.repeat} rounds x {args.number} "
          f"({platform.python_implementation()} {platform.python_version()}, {platform.machine()})")
    for label, ns in best.items():
        print(f"  {label:<42} {ns:7.0f} ns   {ns / floor:5.2f}x floor   {ns / stdlib:5.2f}x stdlib")


if __name__ == "__main__":
    main()

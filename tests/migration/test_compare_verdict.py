"""The sentences the comparison's page leads with (:mod:`zkconsumer.migration.verdict`), from hand-made report
figures: against the legacy group, overall and per scene, to the tenth; the cases without a legacy group, without
any pause, with a run that stopped early, with production that differs."""

from __future__ import annotations

import pytest

from zkconsumer.migration.verdict import Verdict, verdict

pytestmark = pytest.mark.migration


def scene(number: int, label: str, paused: float, partitions: int, longest_ms: float) -> dict:
    return {"scene": number, "label": f"{number}. {label}", "partition_seconds_paused": paused,
            "paused_partitions": partitions, "max_pause_ms": longest_ms}


def protocol(title: str, family: str, paused: float, partitions: int, longest_ms: float, scenes: list[dict],
             produced: int = 1104, lost: int = 0, duplicates: int = 0, error: str | None = None) -> dict:
    return {"title": title, "family": family, "partition_seconds_paused": paused, "paused_partitions": partitions,
            "max_pause_ms": longest_ms, "produced": produced, "lost": lost, "duplicates": duplicates,
            "error": error, "scenes": scenes}


def report() -> dict[str, dict]:
    return {
        "legacy-range": protocol("legacy-range", "legacy", 5.9, 4, 4000.0,
                                 [scene(1, "m1 starts", 0.0, 0, 0.0), scene(2, "m2 joins", 1.2, 4, 400.0)],
                                 duplicates=2),
        "cooperative-sticky": protocol("cooperative-sticky", "modern", 29.0, 4, 7500.0,
                                       [scene(1, "m1 starts", 0.0, 0, 0.0), scene(2, "m2 joins", 5.6, 2, 5200.0)]),
        "range": protocol("eager range", "modern", 38.7, 4, 6500.0,
                          [scene(1, "m1 starts", 0.0, 0, 0.0), scene(2, "m2 joins", 8.04, 4, 2100.0)],
                          duplicates=3),
    }


def test_overall_and_per_scene_against_the_legacy_group():
    said = verdict(report())
    assert said.overall == (
        "Overall, legacy-range paused 4 partitions for 5.9 partition-seconds (longest pause 4.0 s); "
        "cooperative-sticky paused 4 partitions for 29.0 partition-seconds, 4.9 times the legacy group's 5.9 "
        "(longest pause 7.5 s); eager range 4 for 38.7 (6.6 times, longest pause 6.5 s).",
        "From fewest partition-seconds paused to most: legacy-range 5.9, cooperative-sticky 29.0, eager range 38.7.",
        "Every protocol was sent the same 1,104 messages over the same time (the scenes began together), and every "
        "one was delivered. Delivered twice (consumed again after a rebalance, before a commit): legacy-range 2, "
        "eager range 3.",
    )
    assert said.scenes == (
        ("1. m1 starts", "No protocol paused a partition."),
        ("2. m2 joins", "legacy-range paused 4 partitions for 1.2 partition-seconds (longest pause 0.4 s); "
                        "cooperative-sticky paused 2 partitions for 5.6 partition-seconds, 4.7 times the legacy "
                        "group's 1.2 (longest pause 5.2 s); eager range 4 for 8.0 (6.7 times, longest pause 2.1 s). "
                        "Fewest: legacy-range."),
    )


def test_a_run_that_stopped_early_is_named_and_left_out():
    figures = report()
    figures["consumer-uniform"] = protocol("KIP-848 consumer (uniform)", "modern", 0.0, 0, 0.0, [], produced=7,
                                           lost=7, error="the broker's own group coordinator ... does not run ...")
    said = verdict(figures)
    assert said.overall[-1] == ("Stopped early, left out of the comparison: KIP-848 consumer (uniform) (see the "
                                "problems below).")
    assert all("uniform" not in sentence for sentence in said.overall[:-1])
    assert said.scenes == verdict(report()).scenes
    assert verdict({"consumer-uniform": figures["consumer-uniform"]}) == Verdict(
        ("Stopped early, left out of the comparison: KIP-848 consumer (uniform) (see the problems below).",), ())


def test_without_a_legacy_group_the_protocol_that_paused_least_is_the_reference():
    figures = {name: f for name, f in report().items() if name != "legacy-range"}
    figures["range"]["lost"] = 3
    figures["range"]["produced"] = 1103
    said = verdict(figures)
    assert said.overall[0] == ("Overall, cooperative-sticky paused 4 partitions for 29.0 partition-seconds "
                               "(longest pause 7.5 s); eager range paused 4 partitions for 38.7 partition-seconds, "
                               "1.3 times cooperative-sticky's 29.0 (longest pause 6.5 s).")
    assert len(said.overall) == 2  # no ranking for two
    assert said.overall[1].startswith("The protocols were sent between 1,103 and 1,104 messages over the same time")
    assert ": eager range lost 3." in said.overall[1]
    # a scene where the reference paused nothing: no ratio to nothing
    figures["cooperative-sticky"]["scenes"][1] = scene(2, "m2 joins", 0.0, 0, 0.0)
    assert verdict(figures).scenes[1][1] == ("cooperative-sticky paused none; eager range paused 4 partitions for "
                                             "8.0 partition-seconds (longest pause 2.1 s).")


def test_a_second_legacy_protocol_is_compared_after_the_modern_ones():
    figures = {"legacy-range": report()["legacy-range"],
               "legacy-roundrobin": protocol("legacy-roundrobin", "legacy", 6.0, 4, 4100.0, []),
               "range": report()["range"]}
    assert verdict(figures).overall[0] == (
        "Overall, legacy-range paused 4 partitions for 5.9 partition-seconds (longest pause 4.0 s); eager range "
        "paused 4 partitions for 38.7 partition-seconds, 6.6 times the legacy group's 5.9 (longest pause 6.5 s); "
        "legacy-roundrobin 4 for 6.0 (1.0 times, longest pause 4.1 s).")

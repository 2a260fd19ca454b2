"""The steps of the legacy rebalance, as data: number, event name, title and what each means in plain words.

One table serves the connector (which emits ``rebalance.<name>`` with the step's number), the demo's live
narration and the trace tools, so that the words a learner reads match the events a machine reads. Numbers
follow what Kafka's ``ZKRebalancerListener.rebalance`` does, in its order, as ``docs/events.md`` lists them; two
events can share a number (step 2 stops the fetchers, then commits).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RebalanceStep:
    number: int
    name: str
    title: str
    meaning: str

    @property
    def event(self) -> str:
        return f"rebalance.{self.name}"


STEPS: tuple[RebalanceStep, ...] = (
    RebalanceStep(1, "read_cluster", "read the cluster",
                  "read the live brokers from /brokers/ids; with none, the member owns nothing and waits"),
    RebalanceStep(2, "stop_fetchers", "stop fetchers",
                  "stop the world: fetcher threads stop and fetched-but-unread chunks are dropped"),
    RebalanceStep(2, "commit_offsets", "commit offsets",
                  "write what was consumed to /consumers/<group>/offsets, so the next owner resumes there"),
    RebalanceStep(3, "listener_before_release", "listener: before release",
                  "the application's rebalance listener sees its partitions before they are released"),
    RebalanceStep(4, "release", "release ownership",
                  "delete our /consumers/<group>/owners znodes: the partitions are free for anyone to claim"),
    RebalanceStep(5, "assign", "assign",
                  "every member computes the same assignment on its own from the sorted members and partitions"),
    RebalanceStep(6, "fetch_offsets", "fetch offsets",
                  "read the committed offset of each partition assigned to us (-1: never committed)"),
    RebalanceStep(7, "build_registry", "rebuild topicRegistry",
                  "one PartitionTopicInfo per partition, wired to the queue of the stream that will read it"),
    RebalanceStep(8, "claim", "claim ownership",
                  "create the owner znodes; one still held by a slower member is a conflict: back off, retry"),
    RebalanceStep(9, "listener_before_start", "listener: before start",
                  "the application's rebalance listener sees the new assignment before fetching resumes"),
    RebalanceStep(9, "start_fetchers", "restart fetchers",
                  "hand the new registry to the fetcher manager; messages flow again"),
)

BY_EVENT: dict[str, RebalanceStep] = {step.event: step for step in STEPS}
BY_NAME: dict[str, RebalanceStep] = {step.name: step for step in STEPS}

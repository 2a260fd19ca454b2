"""The README's example runs as written: three consumers share a topic, a third of the partitions each."""

from __future__ import annotations

import re
import subprocess
import sys

from support import REPO

EXAMPLE = REPO / "examples" / "three_consumers.py"


def test_three_consumers_share_a_topic(kafka_zk, bootstrap_servers, topic_name):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--zookeeper", kafka_zk, "--bootstrap-server", bootstrap_servers,
         "--topic", topic_name], capture_output=True, text=True, timeout=90,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = re.findall(r"^example_consumer(\d): owns partitions \[(.*)\], got (\d+) messages", done.stdout, re.M)
    assert sorted(n for n, _, _ in lines) == ["1", "2", "3"], done.stdout
    owned = {n: [int(p) for p in parts.split(", ")] for n, parts, _ in lines}
    assert owned == {"1": [0, 1], "2": [2, 3], "3": [4, 5]}  # range over consumer1-0, consumer2-0, consumer3-0
    assert sum(int(count) for _, _, count in lines) >= 60

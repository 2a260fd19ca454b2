"""Which servers the launchers may take from containers, and from which images (no engine needed)."""

from __future__ import annotations

import pytest

from zkconsumer.embedded import docker
from zkconsumer.embedded.broker import KAFKA_IMAGE, kafka_image
from zkconsumer.embedded.zookeeper import ZOOKEEPER_IMAGE, zookeeper_image
from zkconsumer.errors import EnvironmentSetupError


@pytest.mark.parametrize(
    ("value", "ruled_out"),
    [
        ("", set()),
        ("0", set()),
        ("1", {"zookeeper", "kafka"}),
        ("all", {"zookeeper", "kafka"}),
        ("kafka", {"kafka"}),
        (" Kafka , zookeeper ", {"zookeeper", "kafka"}),
    ],
)
def test_no_docker_names_all_servers_or_some(monkeypatch, value, ruled_out):
    monkeypatch.setenv(docker.NO_DOCKER_ENV, value)
    assert docker.ruled_out() == ruled_out


def test_an_unknown_server_name_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(docker.NO_DOCKER_ENV, "kafka,zk")
    with pytest.raises(EnvironmentSetupError, match=r"ZKCONSUMER_NO_DOCKER='kafka,zk' names no server zk"):
        docker.ruled_out()


def test_the_images_are_the_official_ones_unless_the_environment_names_others(monkeypatch):
    monkeypatch.delenv("ZKCONSUMER_ZOOKEEPER_IMAGE", raising=False)
    monkeypatch.delenv("ZKCONSUMER_KAFKA_IMAGE", raising=False)
    assert (zookeeper_image(), kafka_image()) == (ZOOKEEPER_IMAGE, KAFKA_IMAGE) == ("zookeeper:3.8",
                                                                                      "confluentinc/cp-kafka:7.7.1")
    monkeypatch.setenv("ZKCONSUMER_ZOOKEEPER_IMAGE", "zkconsumer/zookeeper:3.8-debian")
    monkeypatch.setenv("ZKCONSUMER_KAFKA_IMAGE", " ")
    assert (zookeeper_image(), kafka_image()) == ("zkconsumer/zookeeper:3.8-debian", KAFKA_IMAGE)

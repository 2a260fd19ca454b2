"""The public API: every legacy name importable from ``zkconsumer``, and importing the package stays cheap."""

from __future__ import annotations

import subprocess
import sys

import zkconsumer


def test_every_public_name_resolves_to_its_definition():
    assert sorted(zkconsumer.__all__) == sorted(zkconsumer._EXPORTS)
    for name in zkconsumer.__all__:
        value = getattr(zkconsumer, name)
        assert value.__name__ == name
        assert name in dir(zkconsumer)


def test_an_unknown_name_is_an_attribute_error():
    try:
        zkconsumer.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_import_loads_neither_kazoo_nor_confluent_kafka():
    """The pure parts (assignors, trace) must not pay for the connector's clients."""
    code = ("import sys, zkconsumer, zkconsumer.assignors.comparison, zkconsumer.trace.timeline; "
            "print(sorted(m for m in ('kazoo', 'confluent_kafka') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_legacy_names_import_as_before():
    code = ("from zkconsumer import ConsumerConfig, create_connector, Whitelist, Blacklist, "
            "ConsumerTimeoutException, ConsumerRebalanceFailedException, KafkaStream; "
            "import sys; print('kazoo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"  # the connector's names did load its client, on demand

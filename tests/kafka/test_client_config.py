"""Client settings (:mod:`zkconsumer.kafka.client_config`): a properties file read as Java's properties are written,
what each client must say itself refused, and a file that changes read again; no value in any error."""

from __future__ import annotations

import os

import pytest

from zkconsumer.errors import UsageError
from zkconsumer.kafka.client_config import CLIENT_CONFIG_ENV, client_settings, parse_properties, with_client_settings


def test_lines_comments_and_both_separators():
    text = "# a comment\n! another\n\nsecurity.protocol = SASL_SSL\nsasl.mechanism: SCRAM-SHA-512\nsasl.password=a=b\n"
    assert parse_properties(text, "f") == {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                           "sasl.password": "a=b"}


@pytest.mark.parametrize(("text", "said"), [
    ("sasl.password\n", "f line 1: expected KEY=VALUE"),
    ("=hunter2\n", "f line 1: expected KEY=VALUE"),
    ("# ok\nbootstrap.servers=elsewhere:9092\n", "f line 2: bootstrap.servers is set by each client itself, not by "
                                                  "client settings"),
    ("group.id=theirs\n", "f line 1: group.id is set by each client itself, not by client settings"),
])
def test_a_bad_line_is_one_line_without_its_value(text, said):
    with pytest.raises(UsageError) as refused:
        parse_properties(text, "f")
    assert str(refused.value) == said and "hunter2" not in str(refused.value)


def test_the_file_the_variable_names_is_merged_over_a_client_s_own_and_read_again_once_changed(tmp_path, monkeypatch):
    path = tmp_path / "client.properties"
    path.write_text("security.protocol=SASL_PLAINTEXT\n")
    monkeypatch.delenv(CLIENT_CONFIG_ENV, raising=False)
    assert with_client_settings({"bootstrap.servers": "b:1"}) == {"bootstrap.servers": "b:1"}
    monkeypatch.setenv(CLIENT_CONFIG_ENV, str(path))
    assert with_client_settings({"bootstrap.servers": "b:1", "security.protocol": "PLAINTEXT"}) == {
        "bootstrap.servers": "b:1", "security.protocol": "SASL_PLAINTEXT"}
    path.write_text("security.protocol=SSL\n")
    os.utime(path, (1, 1))  # a new modification time, whatever the file system's resolution
    assert client_settings() == {"security.protocol": "SSL"}
    with pytest.raises(UsageError, match=r"^client settings .*missing\.properties: No such file or directory$"):
        client_settings({CLIENT_CONFIG_ENV: str(tmp_path / "missing.properties")})

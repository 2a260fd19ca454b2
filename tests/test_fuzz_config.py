"""The consumer config fuzzed as a ``.properties`` file: any text gives a config or one InvalidConfigError naming
a key (the project's typed error), never another exception."""

from __future__ import annotations

import tempfile
from pathlib import Path

from fuzzing import FUZZ, text_lines
from hypothesis import given
from hypothesis import strategies as st

from zkconsumer.config import KEYS, ConsumerConfig, InvalidConfigError

VALID = ["group.id=g", "zookeeper.connect=127.0.0.1:2181", "zookeeper.session.timeout.ms = 6000",
         "auto.offset.reset: smallest", "zookeeper.auth=digest:alice:secret",
         "zookeeper.acl=auth::cdrwa,world:anyone:r",
         "metrics.http.port=0", "socket.timeout.ms=100", "# comment", "offsets.storage=KAFKA", "continued=a\\",
         "auto.commit.enable=tru", "zookeeper.multi.max.bytes=-1", "client.id=a b"]


@FUZZ
@given(text_lines(VALID), st.sampled_from([b"", b"", b"\xff", b"\nzookeeper.auth=digest:bob:secret\xc3"]))
def test_any_properties_file_loads_or_fails_in_one_line_without_the_secret(text, tail):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "consumer.properties"
        path.write_bytes(text.encode("utf-8", errors="surrogatepass") + tail)
        try:
            config = ConsumerConfig.from_properties(path)
        except InvalidConfigError as exc:
            assert str(exc).startswith(("config ", "cannot read consumer properties"))
            assert "secret" not in str(exc)
            return
    for key in KEYS:
        config.get(key.name)
    assert "secret" not in repr(config)

"""The offsets file (ExportZkOffsets' format), fuzzed: parsing gives entries or one OffsetsFileError naming a
line; what it gives back formats to lines that parse to the same entries."""

from __future__ import annotations

from fuzzing import FUZZ, text_lines
from hypothesis import given

from zkconsumer.tools.zk_offsets_file import OffsetsFileError, format_lines, parse_offsets_file

VALID = ["/consumers/group1/offsets/topic1/0:286894308", "/consumers/g:x/offsets/t.1/12:0",
         "/consumers/g/offsets/t/2147483647:-1", "/consumers/g/offsets/t/3:9223372036854775807"]


@FUZZ
@given(text_lines(VALID))
def test_any_offsets_file_round_trips_or_fails_naming_a_line(text):
    try:
        entries = parse_offsets_file(text)
    except OffsetsFileError as exc:
        assert str(exc).startswith("line ") or "line" in str(exc)
        return
    assert parse_offsets_file(format_lines(entries)) == entries

"""Hypothesis strategies for the fuzz tests: bytes and text a stranger (a broken writer, another client, an
attacker with write access) could leave where we read, from plain noise to valid documents with one field wrong.
Kept small so that each fuzz test runs in a fraction of a second (see ``FUZZ``)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from time_scale import scaled

#: the fuzz tests' settings: enough examples to find the usual escapes, a deadline so that a hang fails; generation
#: is what costs (the parsers take microseconds), so the strategies stay shallow; the deadline on the suite's time scale
FUZZ = settings(max_examples=100, deadline=scaled(1000), suppress_health_check=[HealthCheck.too_slow])  # ms

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
    st.sampled_from(["", "0", "-1", "١٢", "²", "1_0", " 7 ", "PLAINTEXT://h:1", "static", "white_list",
                     "black_list", "(", "*", "a" * 300, 2**70, -(2**64), 1.5]),
)
JSON_VALUES = st.one_of(
    SCALARS, st.lists(SCALARS, max_size=3), st.dictionaries(st.text(max_size=6), SCALARS, max_size=3),
    st.dictionaries(st.sampled_from(["0", "1", "x"]), st.lists(SCALARS, max_size=2), max_size=2),
)
#: texts that break naive JSON parsers: deep nesting, huge numbers, lone surrogates, NaN
NASTY_TEXT = st.sampled_from([
    "[" * 5000, '{"a":' * 3000, "1" * 5000, '{"version": ' + "9" * 5000 + "}", "NaN", '"\\ud800"', "{}", "[]",
    "\x00", "\ufeff{}", '{"a": 1, "a": 2}', "-", "1e999999",
])


def mutated(valid: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``valid`` with one field replaced by anything or dropped, and maybe one field added."""
    keys = sorted(valid)
    return st.builds(
        lambda key, value, drop, extra: {
            **{k: v for k, v in valid.items() if not (drop and k == key)}, **({} if drop else {key: value}),
            **extra},
        st.sampled_from(keys), JSON_VALUES, st.booleans(), st.dictionaries(st.text(max_size=4), SCALARS, max_size=1),
    )


def znode_data(valid: dict[str, Any]) -> st.SearchStrategy[bytes | None]:
    """What a znode may hold: nothing, noise, any JSON, nasty text, or ``valid`` mutated."""
    return st.one_of(
        st.none(), st.binary(max_size=64), NASTY_TEXT.map(str.encode),
        JSON_VALUES.map(lambda v: json.dumps(v).encode()),
        mutated(valid).map(lambda v: json.dumps(v).encode()),
    )


def text_lines(valid_lines: list[str]) -> st.SearchStrategy[str]:
    """Lines of a text file: valid ones, valid ones cut or spliced, and noise."""
    line = st.one_of(
        st.sampled_from(valid_lines), st.text(max_size=40), NASTY_TEXT,
        st.tuples(st.sampled_from(valid_lines), st.integers(0, 80), st.text(max_size=6)).map(
            lambda t: t[0][:t[1]] + t[2] + t[0][t[1]:]),
    )
    return st.lists(line, max_size=5).map("\n".join)

"""The printer and the parser are inverses on every well-formed stage-I program.

Laws, for a random script ``s``: ``parse(print(parse(s)))`` equals ``parse(s)`` (structurally and
by hash), and ``print`` is a fixed point: ``print(parse(print(f))) == print(f)``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings

import sparsetir
from script_programs import programs, random_programs


def _check_roundtrip(text: str) -> None:
    func = sparsetir.parse(text, "<generated>")
    printed = func.script()
    again = sparsetir.parse(printed, "<printed>")
    sparsetir.assert_structural_equal(func, again)
    assert sparsetir.structural_hash(func) == sparsetir.structural_hash(again)
    assert again.script() == printed, f"printing is not a fixed point:\n{printed}\n---\n{again.script()}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_parse_print_parse_is_identity(text: str):
    _check_roundtrip(text)


def test_seeded_corpus_roundtrips():
    """A fixed corpus from the same generator: the fuzzer's seeds, checked here first."""
    for text in random_programs(seed=2024, count=150):
        _check_roundtrip(text)


def test_generated_programs_are_varied():
    """The generator reaches every construct the round trip is meant to cover."""
    corpus = "\n".join(random_programs(seed=2024, count=150))
    for construct in (
        "T.dense_fixed(",
        "T.dense_variable(",
        "T.sparse_fixed(",
        "T.sparse_variable(",
        "T.match_sparse_buffer(",
        "T.alloc_sparse_buffer(",
        "T.fuse(",
        "T.attach(",
        "with T.init():",
        "T.sp_iter_attr(",
        "T.func_attr(",
        "T.cast(",
        "T.max(",
        "T.min(",
        "T.if_then_else(",
        "T.select(",
        "T.exp(",
        "T.pow(",
        "+=",
        " // ",
        " % ",
        " / ",
        "not ",
        " and ",
        " or ",
        "sorted=False",
        'idtype="int64"',
        '"bool"',
    ):
        assert construct in corpus, construct


# Valid programs the round trip once got wrong (or the parser once rejected), kept as examples.
REGRESSION_HEADER = """\
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, m: T.int32, nnz: T.int32, x: T.float32) -> None:
"""
REGRESSIONS = {
    # Negative and infinite attribute values, and strings that need escapes.
    "attr-values": '    T.func_attr({"offset": -1, "big": 1e400, "small": -1e400, "text": "a\\nb\\"c\\\\ü", "zero": -0.0, "plus": +2})\n'
    "    I = T.dense_fixed(m)\n",
    # -0.0 printed as 0 lost its sign.
    "negative-zero": "    I = T.dense_fixed(m)\n    T.evaluate(x + -0.0)\n    T.evaluate(T.float32(-0.0))\n",
    # extra_storage=None is the documented default; spelt out, it was rejected.
    "extra-storage-none": '    I = T.dense_fixed(m)\n    A = T.match_sparse_buffer(a, (I,), "float32", extra_storage=None)\n',
    # Keyword arguments of T.cast and T.evaluate.
    "keyword-arguments": '    I = T.dense_fixed(m)\n    T.evaluate(value=T.cast(value=m, dtype="float32"))\n',
    # Math on two literals is on floats, as T.exp(1) is.
    "pow-of-literals": "    I = T.dense_fixed(m)\n    T.evaluate(T.pow(2, 3) + x)\n",
    # Two untyped literals, one needing int64, unify to int64 whichever side it is on.
    "int64-literal-pair": "    I = T.dense_fixed(m)\n    T.evaluate(1 + 9223372036854775806)\n",
}


@pytest.mark.parametrize("body", list(REGRESSIONS.values()), ids=list(REGRESSIONS))
def test_roundtrip_regressions(body: str):
    _check_roundtrip(REGRESSION_HEADER + body)


def test_attr_values_survive_the_roundtrip():
    func = sparsetir.parse(REGRESSION_HEADER + REGRESSIONS["attr-values"])
    again = sparsetir.parse(func.script())
    attrs = dict(again.attrs)
    assert attrs["offset"] == -1 and attrs["plus"] == 2
    assert attrs["big"] == math.inf and attrs["small"] == -math.inf
    assert attrs["text"] == 'a\nb"c\\ü'
    assert math.copysign(1.0, attrs["zero"]) == -1.0

"""The printer and the parser are inverses on every well-formed stage-I program.

Laws, for a random script ``s``: ``parse(print(parse(s)))`` equals ``parse(s)`` (structurally and
by hash), and ``print`` is a fixed point: ``print(parse(print(f))) == print(f)``.
"""

from __future__ import annotations

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


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
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

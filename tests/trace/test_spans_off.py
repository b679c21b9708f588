"""``parse(..., spans=False)``: a program with no spans, which the pipeline fills none into.

The seed's ``TVM_SPANFILLING=0`` as an argument: the script's nodes carry no span, lowering
writes no ``sparsetir.spans`` block table, printed stages carry no span table and parse back
equal, and the compiled kernel still computes its reference.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sparsetir
from sparsetir._tvm import s_tir, structural_walk, tirx, tvm
from sparsetir.trace.fill import keeps_spans
from sparsetir.transforms import pipeline

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "csr_spmm.py"


def _spans(prim) -> list:
    """The spans on the statements of ``prim``."""
    found = []
    structural_walk(prim.body, [((tirx.Stmt, s_tir.SBlock), lambda n: found.append(n.span) if n.span is not None else None)])
    return found


def test_a_program_parsed_without_spans_carries_none_through_the_pipeline():
    f = sparsetir.parse_file(SCRIPT, spans=False)
    assert f.span is None and not keeps_spans(f)
    for name, program in pipeline.steps(f):
        prim = program.prim if isinstance(program, sparsetir.Stage2Function) else program
        assert not keeps_spans(program), name
        assert _spans(prim) == [], name
        assert "sparsetir.spans" not in program.script(), name


def test_the_same_script_with_spans_fills_them():
    f = sparsetir.parse_file(SCRIPT)
    f3 = pipeline.lower(f)
    assert keeps_spans(f3) and _spans(f3)
    assert "sparsetir.spans" in f3.script()


def test_printed_stages_without_spans_round_trip():
    f = sparsetir.parse_file(SCRIPT, spans=False)
    again = sparsetir.parse(f.script(), spans=False)
    assert again.script() == f.script()
    f2 = pipeline.lower(f, until=pipeline.STAGE_II)
    text = f2.script()
    f2_again = sparsetir.parse(text)
    assert f2_again.script() == text
    tvm.ir.assert_structural_equal(f2_again.prim, f2.prim)
    f3 = pipeline.lower(f)
    f3_again = tvm.script.from_source(f3.script())
    tvm.ir.assert_structural_equal(f3_again, f3)
    # the same program with spans differs only by them
    tvm.ir.assert_structural_equal(pipeline.lower(sparsetir.parse_file(SCRIPT)).without_attr("sparsetir.spans"), f3)


def test_a_kernel_built_without_spans_computes_the_reference():
    f = sparsetir.parse_file(SCRIPT, spans=False).specialize({"feat_size": 8})
    assert f.span is None
    kernel = sparsetir.build(f)
    rng = np.random.default_rng(3)
    m, n, feat = 5, 7, 8
    dense = rng.random((m, n)).astype("float32") * (rng.random((m, n)) < 0.4)
    dense[2] = 0  # an empty row
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(1))]).astype("int32")
    indices = np.nonzero(dense)[1].astype("int32")
    a = dense[dense != 0].astype("float32")
    b = rng.random((n, feat)).astype("float32")
    c = np.zeros((m, feat), "float32")
    kernel(a=a, b=b, c=c, indptr=indptr, indices=indices, m=m, n=n, nnz=len(a))
    np.testing.assert_allclose(c, dense @ b, rtol=1e-5)


def test_errors_while_parsing_are_located_without_spans():
    with pytest.raises(sparsetir.ScriptError) as info:
        sparsetir.parse("@T.prim_func\ndef f(a: T.handle) -> None:\n    import os\n", "x.py", spans=False)
    assert info.value.line == 3

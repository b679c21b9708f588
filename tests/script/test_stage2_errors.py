"""Stage-II scripts: every mistake is a ScriptSyntaxError at its line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

import sparsetir

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"


@pytest.fixture(scope="module")
def stage2_text() -> str:
    return sparsetir.lower_sparse_iter(sparsetir.parse_file(SCRIPT)).script()


def error_of(text: str) -> sparsetir.ScriptSyntaxError:
    with pytest.raises(sparsetir.ScriptSyntaxError) as info:
        sparsetir.parse(text, "stage2.py")
    return info.value


def line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


def test_undefined_variable_in_the_body(stage2_text):
    bad = stage2_text.replace("vk = T.axis.spatial(feat_size, k)", "vk = T.axis.spatial(feat_size, kk)")
    err = error_of(bad)
    assert "Undefined variable: kk" in err.message
    assert err.line == line_of(bad, "feat_size, kk)")
    assert err.col == bad.splitlines()[err.line - 1].index("vk") + 1
    assert str(err).startswith(f"stage2.py:{err.line}:{err.col}: error:")


def test_python_syntax_error(stage2_text):
    bad = stage2_text.replace("for i in range(m):", "for i in range(m)")
    err = error_of(bad)
    assert err.line == line_of(bad, "for i in range(m)")


def test_structure_array_must_be_matched(stage2_text):
    bad = stage2_text.replace("(n, nnz), (indptr, indices)", "(n, nnz), (m, indices)", 1)
    err = error_of(bad)
    assert "axis J: 'm' is not matched to a buffer" in err.message
    assert err.line == line_of(bad, "J = T.sparse_variable(")


def test_unknown_name_in_the_header(stage2_text):
    bad = stage2_text.replace("I = T.dense_fixed(m", "I = T.dense_fixed(mm")
    err = error_of(bad)
    assert "unknown name 'mm'" in err.message
    line = line_of(bad, "T.dense_fixed(mm")
    assert (err.line, err.col) == (line, bad.splitlines()[line - 1].index("mm") + 1)


def test_attributes_must_be_literals(stage2_text):
    bad = stage2_text.replace('"tir.noalias": True', '"tir.noalias": sorted')
    err = error_of(bad)
    assert "attribute 'tir.noalias' must be a literal" in err.message


def test_the_level_must_stay_one(stage2_text):
    bad = stage2_text.replace('"sparse_tir_level": 1', '"sparse_tir_level" "sparse_tir_level": 1')
    err = error_of(bad)
    assert '"sparse_tir_level": 1' in err.message

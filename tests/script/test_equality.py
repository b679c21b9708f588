"""Structural equality: blind to variable names, spans and spelling; sensitive to the program."""

from __future__ import annotations

import re

import pytest

import sparsetir

BASE = """\
from sparsetir.script import tir as T


@T.prim_func
def rowsum(a: T.handle, b: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    K = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I,), "float32")
    C = T.alloc_sparse_buffer((I, K), "float32")
    with T.sp_iter([I, J], "SR", "rowsum") as [i, j]:
        with T.init():
            B[i] = T.float32(0)
        B[i] = B[i] + A[i, j]
    with T.sp_iter([I, K], "SS", "fill") as [i, k]:
        C[i, 0] = 0.0
"""


def _rename(text: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, text)


def _base():
    return sparsetir.parse(BASE, "base.py")


@pytest.mark.parametrize(
    "old,new",
    [
        ("i", "row"),  # an iterator
        ("j", "col"),
        ("a", "a_data"),  # a handle parameter
        ("m", "num_rows"),  # a scalar parameter
        ("indptr", "row_ptr"),
        ("A", "Values"),  # a sparse buffer
        ("C", "scratch"),  # an allocated buffer
    ],
)
def test_insensitive_to_variable_names(old: str, new: str):
    renamed = sparsetir.parse(_rename(BASE, old, new), "renamed.py")
    sparsetir.assert_structural_equal(_base(), renamed)
    assert sparsetir.structural_hash(_base()) == sparsetir.structural_hash(renamed)


def test_insensitive_to_iterator_names_reused_across_iterations():
    text = BASE.replace('"fill") as [i, k]', '"fill") as [r, k]').replace("C[i, 0]", "C[r, 0]")
    sparsetir.assert_structural_equal(_base(), sparsetir.parse(text))


def test_insensitive_to_spans_and_layout():
    """Comments, blank lines, line breaks and the file name move every span, not the program."""
    moved = (
        BASE.replace("    I = T.dense_fixed(m)\n", "    # rows\n\n    I = T.dense_fixed(\n        m\n    )\n")
        .replace('"SR", "rowsum") as [i, j]:', '"SR",\n        "rowsum",\n    ) as [i, j]:')
        .replace("B[i] = B[i] + A[i, j]", "B[i] = (\n            B[i] + A[i, j]\n        )  # accumulate")
    )
    other = sparsetir.parse(moved, "elsewhere.py")
    base = _base()
    assert other.axes[0].span.line != base.axes[0].span.line
    assert other.body[0].body[0].span.line != base.body[0].body[0].span.line
    sparsetir.assert_structural_equal(base, other)
    assert sparsetir.structural_hash(base) == sparsetir.structural_hash(other)


@pytest.mark.parametrize(
    "old,new",
    [
        ("(indptr, indices))", '(indptr, indices), "int32")'),  # idtype positional
        ("(indptr, indices))", '(indptr, indices), idtype="int32", sorted=True)'),  # defaults spelt out
        ('(a, (I, J), "float32")', '(a, [I, J], dtype="float32")'),  # list, keyword dtype
        ('(b, (I,), "float32")', "(b, (I,))"),  # float32 is the default dtype
        ("T.float32(0)\n", "0.0\n"),  # a literal takes the buffer's dtype
        ("B[i] + A[i, j]", "(B[i] + A[i, j])"),
    ],
)
def test_insensitive_to_spelling(old: str, new: str):
    assert old in BASE
    sparsetir.assert_structural_equal(_base(), sparsetir.parse(BASE.replace(old, new, 1)))


@pytest.mark.parametrize(
    "old,new,path",
    [
        ("I = T.dense_fixed(m)", "I = T.dense_fixed(17)", ".axes[0].length"),
        ("K = T.dense_fixed(n)", "K = T.dense_fixed(m)", ".axes[2].length"),
        ("(n, nnz)", "(n, 5)", ".axes[1].nnz"),
        ('(I, K), "float32"', '(I, K), "float64"', ".buffers[2].buffer"),
        ('"SS", "fill"', '"SR", "fill"', ".body[1].kinds"),
        ("(a, (I, J)", "(a, (I, K)", ".buffers[0].axes[1]"),
        ("(b, (I,)", "(b, (K,)", ".buffers[1]"),  # the shape, then the axes, differ
        ("(indptr, indices))", '(indptr, indices), idtype="int64")', ".axes[1].idtype"),
        ("(indptr, indices))", "(indptr, indices), sorted=False)", ".axes[1].sorted"),
        ('"rowsum") as', '"rowsum2") as', ".body[0].name"),
        ("T.float32(0)\n", "T.float32(1)\n", ".body[0].init[0].value"),
        ("B[i] + A[i, j]", "A[i, j] + B[i]", ".body[0].body[0].value"),
    ],
)
def test_sensitive_to_program_changes(old: str, new: str, path: str):
    assert old in BASE
    changed = sparsetir.parse(BASE.replace(old, new, 1))
    base = _base()
    assert not sparsetir.structural_equal(base, changed)
    with pytest.raises(AssertionError) as info:
        sparsetir.assert_structural_equal(base, changed)
    message = str(info.value)
    first = message.splitlines()[1]
    assert first.startswith(f"first mismatch: lhs{path}"), first
    assert f"rhs{path}" in first
    # Both programs follow, so the reader sees the two sides.
    assert "--- lhs ---" in message and "--- rhs ---" in message
    assert new.strip() in message.split("--- rhs ---")[1]


def test_sensitive_to_swapped_parameter_roles():
    """Parameters are definitions: swapping which handle feeds which buffer changes the program."""
    swapped = BASE.replace("(a, (I, J)", "(TMP, (I, J)").replace("(b, (I,)", "(a, (I,)").replace("(TMP, (I, J)", "(b, (I, J)")
    assert not sparsetir.structural_equal(_base(), sparsetir.parse(swapped))


def test_equal_programs_need_no_message():
    sparsetir.assert_structural_equal(_base(), _base())

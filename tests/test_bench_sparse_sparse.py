"""``sparsetir bench --kernels spgemm,add,multiply``: the kernels of two sparse operands.

Each runs in two variants, sparsetir twice (the full call, and the call on structures seen
before), answers checked on the product's structural pattern. No test looks at a timing.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import scipy.sparse

from sparsetir import cli
from sparsetir.bench import command, report
from sparsetir.bench.kernels import KERNELS, WrongShape
from sparsetir.bench.sparse_sparse import on_pattern

ROWS = ["spgemm A@A", "spgemm A@At", "add A+B", "add A+At", "multiply A*B", "multiply A*At"]


def test_spgemm_add_multiply_on_cora_match_scipy_with_full_and_cached_calls(tmp_path, capsys):
    pytest.importorskip("sparsetir.ops")
    status = cli.main(["bench", "cora", "--kernels", "spgemm,add,multiply", "--rounds", "1", "--quiet",
                       "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    document = json.loads((tmp_path / report.JSON_NAME).read_text())
    assert [row["kernel"] for row in document["rows"]] == ROWS
    assert all(row["width"] is None for row in document["rows"])
    has_mkl = document["environment"]["versions"]["mkl"] is not None
    for row in document["rows"]:
        assert row["passed"] is True
        impls = set(row["impls"])
        assert {"sparsetir", "sparsetir:cached", "scipy"} <= impls
        assert ("mkl" in impls) == (has_mkl and row["kernel"].startswith("spgemm"))
        # spgemm also runs with sorted=False (rows as MKL leaves them), checked like the others.
        assert ("sparsetir:unsorted" in impls) == row["kernel"].startswith("spgemm")
        assert all(impl["results_checked"] > 0 for impl in row["impls"].values())
        assert row["cached_gain"] > 0 and row["bytes_moved"] > 0
    assert "cached ms" in captured.out and "full/cached" in captured.out
    assert "spgemm A@A: a call on structures seen before (cached symbolic phase) is" in captured.out
    assert document["summary"]["spgemm A@A"]["cached_gain"]["rows"] == 1
    assert "unsorted ms" in captured.out
    if has_mkl:
        assert document["summary"]["spgemm A@A"]["unsorted_vs_mkl"]["rows"] == 1
        assert "spgemm A@A, rows left unsorted (sorted=False, as MKL leaves them): geomean speedup over mkl" \
            in captured.out



def test_a_product_too_large_for_the_memory_is_skipped_with_its_size(tmp_path, capsys, monkeypatch):
    # soc_slashdot0902's A@A was killed for memory; a case whose products would need more than
    # the machine's share is skipped, saying how much, and the other kernels still run.
    from sparsetir.bench import sparse_sparse

    monkeypatch.setattr(sparse_sparse, "MEMORY_SHARE", 1e-9)
    status = cli.main(["bench", "cora", "--kernels", "spgemm,add", "--rounds", "1", "--quiet", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert re.search(r"spgemm.*its products \(115,158, which bound the result's entries\) would need about", " ".join((captured.out + captured.err).split()))
    document = json.loads((tmp_path / report.JSON_NAME).read_text())
    assert [row["kernel"] for row in document["rows"]] == ["add A+B", "add A+At"]

def test_the_default_run_leaves_them_out():
    assert not {"spgemm", "add", "multiply"} & set(command.DEFAULT_KERNELS)
    assert {"spgemm", "add", "multiply"} <= set(KERNELS)


def _fake_ops(**overrides):
    import types

    ops = types.ModuleType("fake_sparse_sparse_ops")
    ops.spgemm = lambda a, b: a @ b
    ops.add = lambda a, b: a + b
    ops.multiply = lambda a, b: a.multiply(b)
    for name, op in overrides.items():
        setattr(ops, name, op)
    return ops


def _extra_entry(a, b):
    result = (a @ b).tolil()
    result[3, 1] = 5.0  # cora's A @ A has no entry at (3, 1)
    return result.tocsr()


def _one_value_off(a, b):
    result = (a + b).tocsr()
    result.data[4] += 1.0
    return result


@pytest.mark.parametrize("kernel, wrong, message", [
    ("spgemm", _extra_entry, "outside the product's pattern"),
    ("add", _one_value_off, "1 of"),
], ids=["extra-entry", "wrong-value"])
def test_a_wrong_answer_fails_the_run(tmp_path, capsys, kernel, wrong, message):
    args = cli.build_parser().parse_args(["bench", "cora", "--kernels", kernel, "--rounds", "1", "--quiet",
                                          "--out", str(tmp_path)])
    assert command.run(args, ops=_fake_ops(**{kernel: wrong})) == 1
    err = capsys.readouterr().err
    assert f"sparsetir {kernel} " in err and message in err


def test_values_are_read_at_the_pattern_in_any_row_order():
    pattern = scipy.sparse.csr_matrix(np.array([[1.0, 0, 2], [0, 3, 4]]))
    shuffled = scipy.sparse.csr_matrix((np.array([2.0, 1, 4]), np.array([2, 0, 2]), np.array([0, 2, 3])), shape=(2, 3))
    shuffled.has_sorted_indices = False
    np.testing.assert_array_equal(on_pattern(shuffled, pattern), [1.0, 2.0, 0.0, 4.0])
    zero_outside = scipy.sparse.csr_matrix((np.array([0.0]), np.array([1]), np.array([0, 1, 1])), shape=(2, 3))
    np.testing.assert_array_equal(on_pattern(zero_outside, pattern), [0.0, 0.0, 0.0, 0.0])
    with pytest.raises(WrongShape, match=r"result stores 5 at \[1, 0\], outside the product's pattern"):
        on_pattern(scipy.sparse.csr_matrix(np.array([[0.0, 0, 0], [5.0, 0, 0]])), pattern)

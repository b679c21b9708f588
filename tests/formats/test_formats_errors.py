"""Bad input: ``sparsetir.ArgumentError`` naming the function, the argument and the problem."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sparsetir import ArgumentError
from sparsetir import formats as F


def good():
    return sp.csr_matrix(np.array([[1, 0, 2], [0, 0, 3]], np.float32))


def broken(**arrays):
    """A SciPy CSR matrix whose arrays are replaced after construction (SciPy would refuse)."""
    A = good()
    for name, value in arrays.items():
        setattr(A, name, np.asarray(value))
    return A


STRUCTURE = [
    (dict(indptr=np.array([0, 2], np.int32)), r"indptr: has 2 entries, expected 2 rows \+ 1 = 3"),
    (dict(indptr=np.array([1, 2, 3], np.int32)), r"indptr: must start at 0, got indptr\[0\]=1"),
    (dict(indptr=np.array([0, 2, 1], np.int32)), r"indptr: not non-decreasing at position 1 \(indptr\[1\]=2 > indptr\[2\]=1\)"),
    (dict(indptr=np.array([0, 1, 2], np.int32)), r"indptr: ends at indptr\[2\]=2, expected the number of stored values 3"),
    (dict(indices=np.array([0, 3, 2], np.int32)), r"column index 3 is out of range for 3 columns"),
    (dict(indices=np.array([0, -1, 2], np.int32)), r"column index -1 is out of range for 3 columns"),
    (dict(indices=[0.0, 1.0, 2.0]), r"indices must be an integer array, got dtype float64"),
    (dict(indices=np.array([0, 2**40, 2], np.int64)), r"indices has values that do not fit in int32"),
    (dict(data=np.array([1, 2, 3], np.int64)), r"values must be float32 or float64, got int64"),
    (dict(data=np.array([1, 2, 3], np.float16)), r"values must be float32 or float64, got float16"),
]


@pytest.mark.parametrize("arrays, message", STRUCTURE)
def test_malformed_csr(arrays, message):
    for convert, name in [(F.canonical, "canonical"), (lambda A: F.Bsr.from_csr(A, (2, 2)), "Bsr.from_csr"),
                          (lambda A: F.Hybrid.from_csr(A, 2, (1, 2)), "Hybrid.from_csr"), (F.stats, "stats")]:
        with pytest.raises(ArgumentError, match=rf"^{name}: A: {message}"):
            convert(broken(**arrays))


@pytest.mark.parametrize("arrays, message", STRUCTURE)
def test_messages_match_sparsetir_ops(arrays, message):
    ops = pytest.importorskip("sparsetir.ops")
    A = broken(**arrays)
    with pytest.raises(ArgumentError) as ours:
        F.Ell.from_csr(A, 2)
    with pytest.raises(ArgumentError) as theirs:
        ops.spmm(A, np.zeros((3, 2), A.dtype if A.dtype.kind == "f" else np.float32))
    assert str(ours.value).removeprefix("Ell.from_csr: A: ") == str(theirs.value).removeprefix("spmm: A: ")


ACCEPTED = "a scipy.sparse CSR matrix, a torch sparse CSR tensor or sparsetir.formats.csr.from_arrays(...)"


@pytest.mark.parametrize("value, got", [
    (sp.coo_matrix(np.eye(3, dtype=np.float32)), "a scipy.sparse 'coo' matrix; convert it with .tocsr()"),
    (sp.csc_array(np.eye(3, dtype=np.float32)), "a scipy.sparse 'csc' matrix; convert it with .tocsr()"),
    (np.eye(3, dtype=np.float32), "a dense numpy array of shape (3, 3); make it sparse with scipy.sparse.csr_matrix(a)"),
    ([[1.0]], "list"),
    ("A", "str"),
], ids=["coo", "csc-array", "ndarray", "list", "str"])
def test_not_a_csr_input(value, got):
    """Each kind of input is told what it is and, where one exists, the call that makes it CSR."""
    with pytest.raises(ArgumentError) as info:
        F.Csc.from_csr(value)
    assert str(info.value) == f"Csc.from_csr: A: expected {ACCEPTED}, got {got}"


def test_a_missing_input_is_called_missing():
    with pytest.raises(ArgumentError) as info:
        F.Ell.from_csr(None, 2)
    assert str(info.value) == f"Ell.from_csr: A: is None; expected {ACCEPTED}"


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch: sparse CSR is beta
def test_torch_inputs():
    torch = pytest.importorskip("torch")
    expected = "Dcsr.from_csr: A: expected a torch sparse CSR tensor (layout torch.sparse_csr), got "
    with pytest.raises(ArgumentError) as info:
        F.Dcsr.from_csr(torch.eye(3))
    assert str(info.value) == expected + "a dense torch tensor (layout torch.strided); convert it with .to_sparse_csr()"
    with pytest.raises(ArgumentError) as info:
        F.Dcsr.from_csr(torch.eye(3).to_sparse())
    assert str(info.value) == expected + ("a torch sparse COO tensor (layout torch.sparse_coo); "
                                          "convert it with .to_sparse_csr()")
    with pytest.raises(ArgumentError) as info:
        F.Dcsr.from_csr(torch.eye(4).to_sparse_bsr((2, 2)))
    assert str(info.value) == expected + ("a torch tensor of layout torch.sparse_bsr; "
                                          "convert it with .to_sparse_coo().to_sparse_csr()")
    half = torch.eye(3, dtype=torch.float16).to_sparse_csr()
    with pytest.raises(ArgumentError, match=r"^Dcsr\.from_csr: A: values must be float32 or float64, got torch\.float16"):
        F.Dcsr.from_csr(half)


@pytest.mark.parametrize("shape", [(2,), (2, -1), [2, 3], (2.0, 3), None])
def test_from_arrays_shape(shape):
    with pytest.raises(ArgumentError, match=r"^from_arrays: shape must be a tuple of two non-negative integers"):
        F.from_arrays([0, 0, 0], [], np.zeros(0, np.float32), shape)


def test_from_arrays_validates():
    with pytest.raises(ArgumentError, match=r"^from_arrays: indptr: must start at 0"):
        F.from_arrays([1, 1], [0], np.zeros(1, np.float32), (1, 1))
    with pytest.raises(ArgumentError, match=r"^from_arrays: indices must have shape \(1,\)"):
        F.from_arrays([0, 1], [0, 0], np.zeros(1, np.float32), (1, 1))
    a = F.from_arrays(np.array([0, 1], np.uint64), np.array([0], np.int16), np.ones(1), (1, 1))
    assert a.indptr.dtype == a.indices.dtype == np.int32 and a.dtype == "float64"


@pytest.mark.parametrize("call, message", [
    (lambda A: F.Bsr.from_csr(A, (0, 2)), r"^Bsr\.from_csr: blocksize: block dimensions must be positive integers, got \(0, 2\)"),
    (lambda A: F.Bsr.from_csr(A, 4), r"^Bsr\.from_csr: blocksize: expected \(rows, columns\) of a block, got 4"),
    (lambda A: F.Bsr.from_csr(A, (2, 2.5)), r"^Bsr\.from_csr: blocksize: block dimensions must be positive integers"),
    (lambda A: F.Ell.from_csr(A, 0), r"^Ell\.from_csr: width: must be a positive integer, got 0"),
    (lambda A: F.Ell.from_csr(A, True), r"^Ell\.from_csr: width: must be a positive integer, got True"),
    (lambda A: F.PaddedCsr.from_csr(A, -2), r"^PaddedCsr\.from_csr: pad: must be a positive integer, got -2"),
    (lambda A: F.Hybrid.from_csr(A, 0, (1, 2)), r"^Hybrid\.from_csr: col_parts: must be a positive integer, got 0"),
    (lambda A: F.Hybrid.from_csr(A, 1, (1, 3)), r"^Hybrid\.from_csr: widths: bucket widths must be powers of two .*got 3 in \(1, 3\)"),
    (lambda A: F.Hybrid.from_csr(A, 1, (4, 2)), r"^Hybrid\.from_csr: widths: bucket widths must be strictly increasing, got 2 after 4"),
    (lambda A: F.Hybrid.from_csr(A, 1, (2, 2)), r"^Hybrid\.from_csr: widths: bucket widths must be strictly increasing"),
    (lambda A: F.Hybrid.from_csr(A, 1, ()), r"^Hybrid\.from_csr: widths: needs at least one bucket width"),
    (lambda A: F.Hybrid.from_csr(A, 1, 4), r"^Hybrid\.from_csr: widths: expected a sequence of bucket widths, got int"),
    (lambda A: F.Hybrid.from_csr(A, 1, (1, 0)), r"^Hybrid\.from_csr: widths: bucket widths must be powers of two"),
    (lambda A: F.Hybrid.from_csr(A, 1, (1, 2), remainder="largest"), r"^Hybrid\.from_csr: remainder: must be one of 'smallest', 'widest', got 'largest'"),
    (lambda A: F.Hybrid.from_csr(A, 1, (1, 2)).row_bounds(0), r"^Hybrid\.row_bounds: parts: must be a positive integer, got 0"),
    (lambda A: F.Hybrid.from_csr(A, 1, (1, 2)).row_bounds(np.array([0, 3])), r"^Hybrid\.row_bounds: parts: row boundaries must be a non-decreasing 1-D array from 0 to 2"),
    (lambda A: F.Ell.from_csr(A, 2).row_partition(1.5), r"^Ell\.row_partition: parts: must be a positive integer, got 1\.5"),
    (lambda A: F.Hybrid.from_csr(A, 2, (1, 2)).bucket(0, 4), r"^Hybrid\.bucket: no bucket of width 4 in column range 0 \(widths \(1, 2\), 2 column ranges\)"),
    (lambda A: F.Hybrid.from_csr(A, 2, (1, 2)).bucket(2, 1), r"^Hybrid\.bucket: no bucket of width 1 in column range 2"),
    (lambda A: F.stats(A, sample=0), r"^stats: sample: must be a positive number of entries or None, got 0"),
])
def test_bad_parameters(call, message):
    with pytest.raises(ArgumentError, match=message):
        call(good())


def test_values_checks_its_argument():
    f = F.Bsr.from_csr(good(), (2, 2))
    with pytest.raises(ArgumentError, match=r"^Bsr\.values: data: expected 3 values \(shape \(3,\), one per stored entry of the input\), got shape \(2,\)"):
        f.values(np.ones(2, np.float32))
    with pytest.raises(ArgumentError, match=r"^Bsr\.values: data: dtype float64 does not match the format's dtype float32"):
        f.values(np.ones(3))
    with pytest.raises(ArgumentError, match=r"^Bsr\.values: data: expected a numpy array or torch tensor of values, got list"):
        f.values([1.0, 2.0, 3.0])


@pytest.mark.parametrize("out, got", [
    (np.zeros(3, np.float32), r"float32 array of shape \(3,\)"),
    (np.zeros(8, np.float64), r"float64 array of shape \(8,\)"),
    (np.zeros(16, np.float32)[::2], r"float32 array of shape \(8,\) \(not writeable C-contiguous\)"),
    ([0.0] * 8, r"list"),
])
def test_values_checks_out(out, got):
    f = F.Bsr.from_csr(good(), (2, 2))
    with pytest.raises(ArgumentError, match=rf"^Bsr\.values: out: expected a writeable C-contiguous float32 array of "
                                            rf"shape \(8,\), got {got}$"):
        f.values(good().data, out=out)


def test_argument_error_is_a_value_error():
    with pytest.raises(ValueError):
        F.Ell.from_csr(good(), 0)


def test_formats_do_not_import_ops():
    # sparsetir.ops will import sparsetir.formats, never the other way round.
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, sparsetir.formats; assert hasattr(sparsetir.formats, 'Bsr'); "
            "print(any(m.startswith('sparsetir.ops') for m in sys.modules))")
    checkout = Path(__file__).resolve().parents[2]  # this checkout's package, not an installed one
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=checkout)
    assert out.stdout.strip() == "False"

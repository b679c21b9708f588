"""The benchmarked kernels of two sparse operands: ``spgemm`` (``A @ B``), ``add`` and ``multiply``.

Each runs in two variants on a matrix A (its pattern, random standard-normal float32 values):

- ``spgemm``: ``A@A`` and ``A@At`` (At: A's transpose, in CSR);
- ``add`` / ``multiply``: ``A+B`` / ``A*B`` with B on A's pattern (B's own values, A's index
  arrays: the case sparsetir's cached symbolic phase is made for), and ``A+At`` / ``A*At``
  (another pattern).

sparsetir runs twice: ``sparsetir`` is the full operation as a first call makes it (the cached
structures and symbolic phase of its operands are dropped before every call: the operands'
checks, the symbolic phase and the numeric one), ``sparsetir:cached`` the same call again on
structures already seen (the numeric phase alone: new values on known structures, as in a
training loop). ``spgemm`` runs a third time, ``sparsetir:unsorted``: the full call with
``sorted=False``, whose rows are left in the order the products reach them, as MKL leaves its
result's (SciPy's are sorted). The peers: SciPy (``A @ B``, ``A + B``, ``A.multiply(B)``), torch
(``torch.sparse.mm``, ``torch.add``, ``torch.mul`` on CSR tensors; an op the installed torch
lacks on CSR is left out, with a note) and MKL (``sparse_dot_mkl.dot_product_mkl``, SpGEMM only).

The answer is sparse: the reference is the float64 result on the structural pattern of the
operation applied to ``|A|`` and ``|B|`` (nothing cancels there), each value's magnitude the
float64 result on ``|A|``, ``|B|``. An answer's stored entries are read at that pattern: a
value it leaves out counts as 0 (SciPy and MKL drop entries that cancel to 0); a non-zero value
outside the pattern is a wrong structure.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from typing import Any, Optional

import numpy as np
import scipy.sparse

from .kernels import WORD, Impl, Kernel, PeerMissing, WrongShape


#: Per kernel: its variants, and the float64 operation (on SciPy matrices) they compute.
OPERATIONS: dict[str, tuple[tuple[str, str], Callable[[Any, Any], Any]]] = {
    "spgemm": (("A@A", "A@At"), lambda x, y: x @ y),
    "add": (("A+B", "A+At"), lambda x, y: x + y),
    "multiply": (("A*B", "A*At"), lambda x, y: x.multiply(y)),
}


def _square_only(matrix) -> Optional[str]:
    rows, cols = matrix.shape
    return None if rows == cols else f"its variants need a square matrix, not {rows}x{cols}"


#: Bytes a case of ``spgemm`` holds at its peak per entry of the product: the float64 reference
#: and its magnitudes, their canonical copies and the pattern check's int64 keys, and the four
#: libraries' answers (measured on email_enron: a peak of 6.7 GB for its A@A and A@At, 51.5
#: million products each, 30.5 million entries).
BYTES_PER_PRODUCT = 130
#: The share of the machine's memory a ``spgemm`` case may take; a larger one is skipped.
MEMORY_SHARE = 0.4


def _spgemm_skip(matrix) -> Optional[str]:
    """Why ``spgemm`` skips ``matrix``: not square, or a product too large for this machine's
    memory (its number of products, which bounds the result's entries, times
    ``BYTES_PER_PRODUCT``; soc_slashdot0902's A@A, 117 million products, was killed for memory
    on a 24 GB machine)."""
    reason = _square_only(matrix)
    if reason is not None:
        return reason
    csr = scipy.sparse.csr_matrix(matrix)
    lengths, columns = np.diff(csr.indptr), np.diff(csr.tocsc().indptr)
    products = max(int(lengths[csr.indices].sum()), int(columns[csr.indices].sum()))  # A@A, A@At
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    need = products * BYTES_PER_PRODUCT
    if need > MEMORY_SHARE * memory:
        return (f"its products ({products:,}, which bound the result's entries) would need about "
                f"{need / 2**30:.3g} GiB for the reference and the four answers, over {MEMORY_SHARE:.0%} of this "
                f"machine's {memory / 2**30:.0f} GiB")
    return None


def _canonical(matrix: scipy.sparse.csr_matrix) -> scipy.sparse.csr_matrix:
    matrix = scipy.sparse.csr_matrix(matrix, copy=True)
    matrix.sum_duplicates()  # sorts the rows too
    return matrix


def _operands(kernel: str) -> Callable:
    def operands(matrix, variant: str, rng: np.random.Generator) -> tuple:
        pattern = _canonical(matrix)
        a = scipy.sparse.csr_matrix(
            (rng.standard_normal(pattern.nnz, dtype=np.float32), pattern.indices, pattern.indptr),
            shape=pattern.shape)
        if variant.endswith("At"):
            b = _canonical(a.T.tocsr())
        elif kernel == "spgemm":
            b = a
        else:  # B: A's index arrays, values of its own
            b = scipy.sparse.csr_matrix(
                (rng.standard_normal(a.nnz, dtype=np.float32), a.indices, a.indptr), shape=a.shape)
        return a, b
    return operands


def _reference(kernel: str) -> Callable:
    combine = OPERATIONS[kernel][1]

    def reference(matrix, operands) -> tuple[np.ndarray, np.ndarray, scipy.sparse.csr_matrix]:
        a, b = (x.astype(np.float64) for x in operands)
        magnitude = _canonical(combine(abs(a), abs(b)))
        magnitude.data[magnitude.data == 0] = np.finfo(np.float32).tiny  # stored zeros of |.|
        expected = on_pattern(_canonical(combine(a, b)), magnitude)
        return expected, magnitude.data, magnitude
    return reference


def on_pattern(result: scipy.sparse.csr_matrix, pattern: scipy.sparse.csr_matrix) -> np.ndarray:
    """The values of ``result`` at the entries of ``pattern`` (sorted rows, no repeats), 0 where
    it stores none; ``WrongShape`` for a non-zero value outside ``pattern``."""
    if not result.has_sorted_indices:  # SciPy's and MKL's products: rows in any order
        result = result.sorted_indices()
    if (np.array_equal(result.indptr, pattern.indptr)
            and np.array_equal(result.indices, pattern.indices)):
        return np.asarray(result.data, np.float64)  # the usual case: checked in O(nnz)
    n = np.int64(pattern.shape[1])
    keys = _rows(pattern) * n + pattern.indices
    theirs = _rows(result) * n + result.indices
    where = np.minimum(np.searchsorted(keys, theirs), max(keys.size - 1, 0))
    inside = keys[where] == theirs if keys.size else np.zeros(theirs.size, bool)
    outside = ~inside & (result.data != 0)
    if outside.any():
        p = int(np.argmax(outside))
        raise WrongShape(f"result stores {result.data[p]:.6g} at [{int(theirs[p] // n)}, {int(theirs[p] % n)}], "
                         "outside the product's pattern")
    values = np.zeros(pattern.nnz, np.float64)
    np.add.at(values, where[inside], result.data[inside])
    return values


def _rows(matrix) -> np.ndarray:
    return np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))


def _scipy_values(pattern) -> Callable[[Any], np.ndarray]:
    return lambda output: on_pattern(scipy.sparse.csr_matrix(output), pattern)


def _torch_values(pattern) -> Callable[[Any], np.ndarray]:
    def values(output) -> np.ndarray:
        output = output.to_sparse_csr()
        matrix = scipy.sparse.csr_matrix(
            (output.values().numpy(), output.col_indices().numpy(), output.crow_indices().numpy()),
            shape=tuple(output.shape))
        return on_pattern(matrix, pattern)
    return values


def _own_index_arrays(a, b) -> tuple:
    """Copies of ``a`` and ``b`` with index arrays of their own (``b`` sharing ``a``'s when it
    did), so that dropping their cached structures leaves the originals' in place."""
    a2 = scipy.sparse.csr_matrix((a.data, a.indices.copy(), a.indptr.copy()), shape=a.shape)
    if b is a:
        return a2, a2
    if b.indices is a.indices:
        return a2, scipy.sparse.csr_matrix((b.data, a2.indices, a2.indptr), shape=b.shape)
    return a2, scipy.sparse.csr_matrix((b.data, b.indices.copy(), b.indptr.copy()), shape=b.shape)


def _ours(kernel: str) -> Callable:
    def ours(op, matrix, operands, reference_pattern) -> list[Impl]:
        a, b = operands
        values = _scipy_values(reference_pattern)
        # The module of sparsetir's op keeps its caches (``sparsetir.ops.sparse_sparse``); a
        # stand-in op (the bench's own tests) may have none.
        forget = getattr(sys.modules.get(getattr(op, "__module__", ""), None), "forget", None)
        a_full, b_full = _own_index_arrays(a, b)

        def full() -> Any:
            if forget is not None:
                forget(a_full, b_full)
            return op(a_full, b_full)

        impls = [Impl("sparsetir", full, values), Impl("sparsetir:cached", lambda: op(a, b), values)]
        if kernel == "spgemm" and "sorted" in inspect.signature(op).parameters:
            def unsorted() -> Any:
                if forget is not None:
                    forget(a_full, b_full)
                return op(a_full, b_full, sorted=False)

            impls.append(Impl("sparsetir:unsorted", unsorted, values))
        return impls
    return ours


def _scipy_peer(kernel: str) -> Callable:
    combine = OPERATIONS[kernel][1]

    def scipy_peer(matrix, operands, reference_pattern) -> Impl:
        a, b = operands
        return Impl("scipy", lambda: combine(a, b), _scipy_values(reference_pattern))
    return scipy_peer


_TORCH_OPS = {
    "spgemm": ("torch.sparse.mm", lambda torch: torch.sparse.mm),
    "add": ("torch.add", lambda torch: torch.add),
    "multiply": ("torch.mul", lambda torch: torch.mul),
}


def _torch_csr(torch, matrix):
    return torch.sparse_csr_tensor(
        torch.from_numpy(matrix.indptr.astype(np.int64)), torch.from_numpy(matrix.indices.astype(np.int64)),
        torch.from_numpy(matrix.data), size=matrix.shape, check_invariants=True)


def _torch_peer(kernel: str) -> Callable:
    name, function_of = _TORCH_OPS[kernel]

    def torch_peer(torch, matrix, operands, reference_pattern) -> Impl:
        function = function_of(torch)
        tiny = _torch_csr(torch, scipy.sparse.identity(2, dtype=np.float32, format="csr"))
        try:
            function(tiny, tiny)
        except (NotImplementedError, RuntimeError) as err:
            raise PeerMissing(f"torch {torch.__version__} has no {name} of two CPU CSR tensors "
                              f"({str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__})") from err
        a, b = (_torch_csr(torch, x) for x in operands)
        return Impl("torch", lambda: function(a, b), _torch_values(reference_pattern))
    return torch_peer


def _mkl_spgemm(mkl, matrix, operands, reference_pattern) -> Impl:
    a, b = operands
    return Impl("mkl", lambda: mkl.dot_product_mkl(a, b), _scipy_values(reference_pattern))


def _bytes(operands, expected) -> int:
    """A minimal kernel's traffic: both operands read (values, indices, row pointers) and the
    result written, once each."""
    a, b = operands
    rows = a.shape[0] + 1
    return WORD * (2 * a.nnz + a.shape[0] + 1 + 2 * b.nnz + b.shape[0] + 1 + 2 * expected.size + rows)


def _kernel(name: str) -> Kernel:
    return Kernel(
        name=name,
        has_width=False,
        operands=_operands(name),
        reference=_reference(name),
        bytes_moved=lambda matrix, width: 0,  # from the operands and the answer: ``bytes_of``
        ours=_ours(name),
        scipy_peer=_scipy_peer(name),
        torch_peer=_torch_peer(name),
        mkl_peer=_mkl_spgemm if name == "spgemm" else None,
        skip=_spgemm_skip if name == "spgemm" else _square_only,
        variants=OPERATIONS[name][0],
        bytes_of=_bytes,
        default=False,
    )


SPARSE_SPARSE: dict[str, Kernel] = {name: _kernel(name) for name in OPERATIONS}

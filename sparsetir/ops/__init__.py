"""``sparsetir.ops``: ready-made fast CPU sparse kernels with a SciPy/torch-style interface,
and their CUDA versions for torch CUDA tensors (``ops/cuda``).

Every operation is a SparseTIR stage-I script (``scripts.py``) lowered, scheduled and compiled
by sparsetir itself (``kernels.py``); see ``docs/ops.md``.

- ``spmm(A, X)``: ``A @ X`` for CSR ``A`` (scipy or torch) and dense ``X`` (numpy or torch).
- ``tune_spmm(A, X, budget_s)``: the format and kernel choices of ``spmm(A, X, format="tuned")``
  searched on ``A`` and ``X`` and remembered (``tuned.py``).
- ``sddmm(A, X, Y)``: ``A[i, j] * dot(X[i], Y[j])`` on ``A``'s pattern, as a CSR like ``A``.
- ``spmv(A, x)``: ``A @ x`` for a vector ``x``.
- ``segment_sum(values, offsets)``: sums of consecutive segments of ``values``.
- ``bsr_spmm(A, X)``: ``A @ X`` for a scipy BSR ``A``.
- ``ell_spmm(indices, values, X)``: ``A @ X`` for ``A`` in ELL form.
- ``softmax(A)``: row-wise softmax over the stored entries of CSR ``A``.
- ``add(A, B)``, ``multiply(A, B)``, ``spgemm(A, B, mask=None, sorted=True)``: two sparse operands
  (``sparse_sparse.py``: a cached symbolic phase, then a numeric one).

With torch, the ops record gradients (``autograd.py``) and are registered as ``torch.library``
custom ops, so ``torch.compile`` traces them (``torch_library.py``; a model holds its matrix as
``CsrTensors``, since Dynamo cannot trace sparse tensors).

Compilation happens once per configuration (operation, dtype, feature width, block shape) and
is cached for the process; per-matrix preparation (structure validation, private int32 copies
of the indices, nnz-balanced partition points) is cached per matrix object (see ``inputs.py``); values are
read afresh on every call. Inputs are never modified. Bad input raises ``sparsetir.ArgumentError`` (a ``ValueError``) naming the
argument and the problem.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

import numpy as np

from ..runtime.launch import launch
from ..runtime.parallel import num_threads
from .inputs import (
    VALUE_DTYPES,
    CsrInput,
    PreparedCache,
    aligned_empty,
    as_int32,
    check_offsets,
    check_structure,
    current_values,
    dense_operand,
    fail,
    is_torch_tensor,
    own_int32,
    plain,
    prepare_csr,
    row_partition,
    value_dtype_name,
    torch_module,
)
from .csr_tensors import CsrTensors, csr_tensors
from .kernels import KernelKey, KernelLibrary, vector_lanes
from . import kernels as _kernels
from ..schedule.default.prefetch import DOT, TILE, operand_bytes, prefetch_lines
from ..schedule.default.register_tile import tile_extent
from . import autograd as _autograd
from . import auto as _auto
from . import formatted
from . import tuned as _tuned
from .formatted import SpmmFormat
from .tuned import tune_spmm
from .sparse_sparse import add, multiply, spgemm
from . import cuda as _cuda  # torch CUDA tensors go there (each op's first lines)

__all__ = [
    "CsrTensors",
    "SpmmFormat",
    "add",
    "bsr_spmm",
    "csr_tensors",
    "ell_spmm",
    "forget",
    "library",
    "multiply",
    "prepared",
    "sddmm",
    "segment_sum",
    "softmax",
    "spgemm",
    "spmm",
    "spmv",
    "schedule_of",
    "tune_spmm",
]

#: The compiled kernels of this process (one per configuration).
library = KernelLibrary()
#: Per-matrix preparations (validation, int32 indices, partition points).
prepared = PreparedCache()


def schedule_of(op: str, width: int = 0, dtype: str = "float32", **key: Any) -> Any:
    """The ``sparsetir.Schedule`` ops schedule the kernel of ``op`` with, at feature width
    ``width`` (``key``: the other ``KernelKey`` fields, e.g. ``block=(4, 4)``, and
    ``target="cuda"`` for the GPU kernel): its ``history`` holds the steps, so
    ``sparsetir.explore(ops.schedule_of("spmm", width=32))`` shows them."""
    if key.get("target") == "cuda":
        from .cuda.kernels import schedule_of as cuda_schedule_of

        return cuda_schedule_of(KernelKey(op, dtype, feat=width, **key))
    return _kernels.schedule_of(KernelKey(op, dtype, feat=width, **key))


def forget(A: Any) -> None:
    """Drop the cached preparation of ``A``: needed only after editing its index arrays in place,
    which the calls until then do not see (they use copies taken when ``A`` was prepared)."""
    if type(A) is CsrTensors:  # prepared by its index tensors' memory (``tensor_structures.py``)
        from . import torch_library

        torch_library.structures.forget(A.crow_indices, A.col_indices)
    elif is_torch_tensor(A) and getattr(A, "layout", None) is torch_module().sparse_csr:
        from . import torch_library  # add, multiply and spgemm know a tensor's structure from here

        torch_library.structures.forget(A.crow_indices(), A.col_indices())
    elif hasattr(A, "indptr") and hasattr(A, "indices"):
        from . import sparse_sparse

        sparse_sparse.forget(A)
    prepared.forget(A)
    _cuda.ops.forget(A)


def _sddmm_prefetch(a: CsrInput, Y: Any) -> int:
    """How SDDMM prefetches ``Y``'s rows for ``a``: -1 not at all, 0 whole rows, k > 0 the first
    k lines (the default schedule's rule, ``schedule/default/prefetch.py``)."""
    row_bytes, y_bytes = operand_bytes(Y)
    return prefetch_lines(DOT, row_bytes, y_bytes, a.column_locality)


def _spmm_prefetch(a: CsrInput, feat: int) -> bool:
    """Whether SpMM at width ``feat`` prefetches the rows of ``X`` it gathers for ``a`` (the
    default schedule's rule for a register tile, which reads a row in one pass unless the width
    is split into a main part and a tail)."""
    row_bytes = feat * np.dtype(a.dtype).itemsize
    one_pass = tile_extent(feat, vector_lanes(a.dtype)) == feat
    return prefetch_lines(TILE, row_bytes, 0, a.column_locality, whole_rows=one_pass) >= 0


def _parts() -> int:
    return max(num_threads(), 1)


def _csr(what: str, A: Any) -> CsrInput:
    return prepared.get("csr", A, lambda: prepare_csr(what, A, _parts()))


def _run(key: KernelKey, work: int, *args: Any) -> None:
    launch(library.get(key), args, work)


#: Run a kernel on arguments (in its parameter order) with ``work`` to do: ``runtime.launch``.
_call = launch


def _kernel(a: CsrInput, op: str, feat: int, Y: Any = None) -> Any:
    """The kernel of ``op`` at width ``feat`` for the prepared matrix ``a``, memoized on ``a``
    (a kernel's configuration depends only on the matrix, the operation and the width)."""
    found = a.kernels.get((op, feat))
    if found is not None and found[0] is library:
        return found[1]
    if op == "sddmm":
        lines = _sddmm_prefetch(a, Y)
        key = KernelKey(op, a.dtype, feat, prefetch=lines >= 0, prefetch_lines=max(lines, 0))
    elif op == "spmm" and _spmm_prefetch(a, feat):
        key = KernelKey(op, a.dtype, feat, prefetch=True)
    else:
        key = KernelKey(op, a.dtype, feat)
    kernel = library.get(key)
    a.kernels[(op, feat)] = (library, kernel)
    return kernel


def _empty(shape: tuple[int, ...], dtype: str, like_torch: bool) -> Any:
    out = aligned_empty(shape, dtype)
    return torch_module().from_numpy(out) if like_torch else out


def spmm(A: Any, X: Any, format: Any = "csr") -> Any:
    """``A @ X``: CSR ``A`` (scipy, or torch sparse CSR) times dense 2-D ``X`` (numpy or torch).

    Returns a new dense ``(A.shape[0], X.shape[1])`` array of the same kind as ``X``; ``A`` and
    ``X`` must have the same dtype (float32 or float64). ``format`` computes on another format
    than CSR, converted once per sparse structure: ``"bsr"``, ``"ell"``, ``"hyb"``, ``"auto"``
    (chosen per matrix and width by timing candidates on first use), ``"tuned"`` (the format
    and the CSR kernel's choices searched within a budget, kept on disk: ``tune_spmm``), or an
    ``SpmmFormat`` with its parameters (``formatted.py``, ``auto.py``, ``tuned.py``; docs/ops.md).
    On CUDA tensors: ``"csr"``, ``"ell"``, ``"hyb"`` or an ``SpmmFormat`` of those (docs/gpu.md).
    """
    if _cuda.on_cuda(A, X):
        return _cuda.ops.spmm(A, X, format)
    if _autograd.wants_torch(A, X):
        return _autograd.spmm(A, X, format)
    a = _csr("spmm: A", A)
    X = dense_operand("spmm: X", X, a.dtype, a.shape[1])
    if format != "csr":
        return _spmm_formatted(A, a, X, format)
    return _spmm_csr(A, a, X)


def _spmm_csr(A: Any, a: CsrInput, X: Any) -> Any:
    """``spmm`` on CSR, ``A`` prepared as ``a`` and ``X`` checked."""
    m, feat = a.shape[0], int(X.shape[1])
    C = _empty((m, feat), a.dtype, is_torch_tensor(X))
    if m == 0 or feat == 0:
        C[...] = 0
        return C
    _call(_kernel(a, "spmm", feat), (current_values(A, a), X, C) + a.tail, a.nnz * feat)
    return C


def _spmm_csr_with(A: Any, a: CsrInput, X: Any, kernel: Any, tail: tuple) -> Any:
    """``_spmm_csr`` with another CSR kernel than ``_kernel``'s (a tuned plan's choices) and its
    arguments after the dense ones (``a.tail`` with the plan's row chunks)."""
    m, feat = a.shape[0], int(X.shape[1])
    C = _empty((m, feat), a.dtype, is_torch_tensor(X))
    if m == 0 or feat == 0:
        C[...] = 0
        return C
    _call(kernel, (current_values(A, a), X, C) + tail, a.nnz * feat)
    return C


def spmm_gathered(a: CsrInput, values: Any, src: Any, X: Any) -> Any:
    """``A @ X`` for the structure ``a`` with values ``values[src]`` (kernel views or arrays):
    the product with a matrix whose values are another's in another order (Aᵀ's, read from A's
    value array in the backward passes), without reordering them first."""
    X = dense_operand("spmm: X", X, a.dtype, a.shape[1])
    m, feat = a.shape[0], int(X.shape[1])
    C = _empty((m, feat), a.dtype, is_torch_tensor(X))
    if m == 0 or feat == 0 or a.nnz == 0:
        C[...] = 0
        return C
    kernel = library.get(KernelKey("csr_gather_spmm", a.dtype, feat))
    indptr, indices, rows, cols, nnz, part, parts = a.tail
    _call(kernel, (values, src, X, C, indptr, indices, rows, cols, nnz, part, parts), a.nnz * feat)
    return C


def _spmm_formatted(A: Any, a: CsrInput, X: Any, spec: Any) -> Any:
    """``spmm`` on format ``spec`` (resolved per matrix; ``"auto"`` chosen by ``auto.choose``,
    ``"tuned"`` by ``tuned.decision``)."""
    if isinstance(spec, str) and spec == "auto":
        fmt = _auto.choose(A, a, X)
    elif isinstance(spec, str) and spec == "tuned":
        made = _tuned.decision(A, X, a)
        if made.kernel_key is not None:  # CSR with other choices
            return _spmm_csr_with(A, a, X, made.kernel(library), made.tail)
        fmt = made.plan.format
        if fmt is formatted.CSR:
            return _spmm_csr(A, a, X)
    else:
        fmt = formatted.resolve("spmm: format", spec, _stats(A, a))
    m = a.shape[0]
    feat = int(X.shape[1])
    if fmt.name == "csr" or m == 0 or feat == 0 or a.nnz == 0:
        return _spmm_csr(A, a, X)
    form = converted(A, a, fmt)
    C, view = formatted.output(form, m, feat, a.dtype)
    _call(_format_kernel(form, a.dtype, feat), _format_arguments(A, a, form, X, C), a.nnz * feat)
    return torch_module().from_numpy(view) if is_torch_tensor(X) else view


def converted(A: Any, a: CsrInput, fmt: "formatted.SpmmFormat") -> Any:
    """``A`` (prepared as ``a``) in format ``fmt``: converted on first use, cached with ``A``."""
    return prepared.get(f"format {fmt}", A, lambda: formatted.convert(a, _raw_values(A, a), fmt, _parts()))


def _stats(A: Any, a: CsrInput) -> Any:
    """``sparsetir.formats.stats`` of ``A``'s structure, cached with ``A``."""
    from .. import formats

    return prepared.get("stats", A, lambda: formats.stats(formats.from_arrays(a.indptr, a.indices,
                                                                              np.ones(a.nnz, a.dtype), a.shape)))


def _format_kernel(form: Any, dtype: str, feat: int) -> Any:
    if isinstance(form, formatted.BsrForm):
        b = form.fmt.block
        return library.get(KernelKey("bsr_gather_spmm", dtype, feat, (b, b)))
    return library.get(KernelKey("hybrid_spmm", dtype, feat, widths=form.fmt.widths))


def _format_arguments(A: Any, a: CsrInput, form: Any, X: Any, C: Any) -> tuple:
    # A form whose values are re-laid out per call (duplicate entries) needs them as NumPy.
    values = _raw_values(A, a) if form.refresh else current_values(A, a)
    if isinstance(form, formatted.BsrForm):
        return form.arguments(values, formatted.padded_operand(form, X), C, a.nnz)
    return form.arguments(values, X, C, a.shape, a.nnz)


def _raw_values(A: Any, a: CsrInput) -> np.ndarray:
    """``A``'s current values as a NumPy array (not a kernel view)."""
    return current_values(A, a) if a.is_torch else a.data


def sddmm(A: Any, X: Any, Y: Any) -> Any:
    """``A[i, j] * dot(X[i, :], Y[j, :])`` on the stored entries of CSR ``A``.

    ``X`` is ``(m, k)`` and ``Y`` is ``(n, k)`` for an ``(m, n)`` matrix ``A``. The result has
    ``A``'s pattern and kind (scipy CSR or torch sparse CSR) and owns its index arrays.
    """
    if _cuda.on_cuda(A, X, Y):
        return _cuda.ops.sddmm(A, X, Y)
    if _autograd.wants_torch(A, X, Y):
        return _autograd.sddmm(A, X, Y)
    a = _csr("sddmm: A", A)
    X, Y, feat = _sddmm_operands(a, X, Y)
    nnz = a.tail[4]
    out = aligned_empty((nnz,), a.dtype)
    values = current_values(A, a)
    if nnz and feat and a.max_row_length > a.shape[1]:
        sddmm_gathered(a, _raw_values(A, a), X, Y, out)
    elif nnz and feat:
        _call(_kernel(a, "sddmm", feat, Y), (values, X, Y, out) + a.tail, nnz * feat)
    else:
        # An empty dot product is 0, and A * 0 keeps A's NaN and makes its infinities NaN, as in NumPy.
        with np.errstate(invalid="ignore"):
            np.multiply(values if a.is_torch else a.data, 0, out=out)
    return _same_pattern(A, a, out)


def sddmm_gathered(a: CsrInput, values: Any, X: Any, Y: Any, out: Any, chunk: int = 1 << 15) -> Any:
    """SDDMM into ``out`` by gathering the rows of ``X`` and ``Y`` of each entry (NumPy arrays or
    torch tensors alike), for a matrix with a row longer than its column count (duplicate
    entries): the scheduled kernel bounds a row's positions by the column count (TVM adds the
    guard ``j < n`` to the blocks it moves under the row loop) and would cut such rows short."""
    rows = np.repeat(np.arange(a.shape[0], dtype=np.int64), np.diff(a.indptr))
    cols = np.asarray(a.indices, np.int64)
    if isinstance(out, np.ndarray):  # the eager op: everything as NumPy arrays
        values, X, Y = (plain(v).numpy() if is_torch_tensor(v) else np.asarray(v) for v in (values, X, Y))
    else:  # torch tensors
        rows, cols = (torch_module().from_numpy(v) for v in (rows, cols))
    for start in range(0, int(rows.shape[0]), chunk):
        part = slice(start, start + chunk)
        out[part] = values[part] * (X[rows[part]] * Y[cols[part]]).sum(1)
    return out


def _sddmm_operands(a: CsrInput, X: Any, Y: Any) -> tuple[Any, Any, int]:
    """The checks of an SDDMM over the prepared ``a``: ``X`` and ``Y`` as the kernel takes them,
    and the feature width."""
    m, n = a.shape
    X = dense_operand("sddmm: X", X, a.dtype, m)
    Y = dense_operand("sddmm: Y", Y, a.dtype, n)
    if X.shape[1] != Y.shape[1]:
        fail("sddmm: Y", f"has {Y.shape[1]} columns, but X has {X.shape[1]}")
    return X, Y, int(X.shape[1])


def _same_pattern(A: Any, a: CsrInput, values: np.ndarray) -> Any:
    """A CSR matrix of ``A``'s kind (``a`` is its preparation) with ``A``'s pattern (copied index
    arrays) and ``values``."""
    # The index arrays are copies of the preparation's (in A's index dtype): the structure
    # ``values`` were computed on, even when A's own arrays were edited in place since.
    if a.is_torch:
        torch = torch_module()
        # The structure was validated when A was prepared; torch's own checks are off, and said so
        # (torch warns when they are off implicitly).
        # Copied by NumPy, on this thread: torch would copy arrays this large on its OpenMP
        # team, which waits for a preempted thread on a busy machine (a slow op, for a copy).
        crow = torch.from_numpy(a.indptr.astype(str(A.crow_indices().dtype).removeprefix("torch.")))
        col = torch.from_numpy(a.indices.astype(str(A.col_indices().dtype).removeprefix("torch.")))
        result = torch.sparse_csr_tensor(crow, col, torch.from_numpy(values), size=tuple(A.shape),
                                         check_invariants=False)
        prepared.share("csr", result, a)  # the same structure: ops on the result skip preparing it
        return result
    # A shallow copy of A keeps every attribute of A's class (shape, format flags, which stay
    # true for an identical pattern) and skips the constructor's format checks (~10 us).
    result = _shallow_copy(A)
    result.data = values
    result.indices = a.indices.astype(A.indices.dtype)
    result.indptr = a.indptr.astype(A.indptr.dtype)
    return result


#: Classes whose shallow copy is a new instance with a copy of the instance ``__dict__``: what
#: ``copy.copy`` does for them, without its generic ``__reduce_ex__`` path (~2 us).
_PLAIN_COPY: dict[type, bool] = {}


def _shallow_copy(A: Any) -> Any:
    cls = type(A)
    plain = _PLAIN_COPY.get(cls)
    if plain is None:
        plain = _PLAIN_COPY[cls] = (
            getattr(cls, "__copy__", None) is None
            and cls.__reduce_ex__ is object.__reduce_ex__
            and cls.__reduce__ is object.__reduce__
            and getattr(cls, "__getstate__", object.__getstate__) is object.__getstate__
            and not any(getattr(k, "__slots__", ()) for k in cls.__mro__)
            and hasattr(A, "__dict__")
        )
    if not plain:
        return copy.copy(A)
    result = cls.__new__(cls)
    result.__dict__.update(A.__dict__)
    return result


def spmv(A: Any, x: Any) -> Any:
    """``A @ x`` for CSR ``A`` and a dense vector ``x`` (numpy or torch), same kind as ``x``."""
    if _cuda.on_cuda(A, x):
        return _cuda.ops.spmv(A, x)
    if _autograd.wants_torch(A, x):
        return _autograd.spmv(A, x)
    a = _csr("spmv: A", A)
    x = dense_operand("spmv: x", x, a.dtype, a.shape[1], ndim=1)
    m, n = a.shape
    # A vector's scalar stores never straddle cache lines: no need for an aligned allocation.
    y = np.empty((m,), a.dtype)
    if is_torch_tensor(x):
        y = torch_module().from_numpy(y)
    if m == 0:
        return y
    # SpMV is the SpMM kernel with one feature column: its scalar row accumulator then lives in
    # a register tile (a script with a scalar output keeps it in memory, ~3x slower).
    _call(_kernel(a, "spmm", 1), (current_values(A, a), x.reshape(n, 1), y.reshape(m, 1)) + a.tail, a.nnz)
    return y


def segment_sum(values: Any, offsets: Any) -> Any:
    """Sums of segments: ``out[i] = values[offsets[i]:offsets[i + 1]].sum(axis=0)``.

    ``values`` is 1-D ``(nnz,)`` or 2-D ``(nnz, k)`` (numpy or torch), ``offsets`` an integer
    array of ``segments + 1`` non-decreasing entries from 0 to ``nnz`` (like a CSR ``indptr``;
    the ``torch_scatter.segment_sum_csr`` convention). Empty segments sum to 0. Returns
    ``(segments,)`` or ``(segments, k)`` of the same kind as ``values``. ``offsets`` is
    validated on every call (O(segments)).
    """
    if _cuda.on_cuda(values):
        return _cuda.ops.segment_sum(values, offsets)
    if _autograd.wants_torch(values):
        return _autograd.segment_sum(values, offsets)
    return _segment_sum(values, offsets)


def _segment_sum(values: Any, offsets: Any) -> Any:
    """``segment_sum`` without gradients (also the ``sparsetir::segment_sum`` custom op's body)."""
    torch_kind = is_torch_tensor(values)
    dtype = value_dtype_name(values)
    if dtype not in VALUE_DTYPES:
        fail("segment_sum: values", f"must be float32 or float64, got {dtype or type(values).__name__}")
    ndim = values.dim() if torch_kind else getattr(values, "ndim", 0)
    if ndim not in (1, 2):
        fail("segment_sum: values", f"expected a 1-D or 2-D array, got shape {tuple(values.shape)}")
    values = dense_operand("segment_sum: values", values, dtype, None, ndim=ndim)
    offs = plain(offsets).cpu().numpy() if is_torch_tensor(offsets) else np.asarray(offsets)
    offs = as_int32("segment_sum: offsets", "offsets", offs)
    if offs.ndim != 1 or offs.shape[0] < 1:
        fail("segment_sum: offsets", f"expected a 1-D array of segments + 1 entries, got shape {offs.shape}")
    nnz = int(values.shape[0])
    segments = offs.shape[0] - 1
    check_offsets("segment_sum", "offsets", offs, segments, nnz)
    feat = int(values.shape[1]) if ndim == 2 else 1
    out = _empty((segments, feat) if ndim == 2 else (segments,), dtype, torch_kind)
    if segments == 0 or feat == 0:
        return out
    flat_in = values.reshape(nnz, feat)
    flat_out = out.reshape(segments, feat)
    max_len = int((offs[1:] - offs[:-1]).max())
    part = row_partition(offs, _parts())
    _run(KernelKey("segment_sum", dtype, feat), nnz * feat, flat_in, flat_out, offs, segments, max_len, nnz, part, part.shape[0] - 1)
    return out


def bsr_spmm(A: Any, X: Any) -> Any:
    """``A @ X`` for a ``scipy.sparse`` BSR matrix ``A`` (any block shape) and dense ``X``."""
    if _cuda.on_cuda(A, X):
        return _cuda.ops.bsr_spmm(A, X)
    if _autograd.wants_torch(X):
        return _autograd.bsr_spmm(A, X)
    what = "bsr_spmm: A"
    if getattr(A, "format", None) != "bsr":
        fail(what, f"expected a scipy.sparse BSR matrix, got {getattr(A, 'format', type(A).__name__)}; use .tobsr()")
    a = prepared.get("bsr", A, lambda: _prepare_bsr(what, A))
    data, indptr, indices, (br, bc), part = a
    m, n = A.shape
    X = dense_operand("bsr_spmm: X", X, str(data.dtype), n)
    feat = int(X.shape[1])
    C = _empty((m, feat), str(data.dtype), is_torch_tensor(X))
    if m == 0 or feat == 0:
        C[...] = 0
        return C
    _run(KernelKey("bsr_spmm", str(data.dtype), feat, (br, bc)), data.size * feat, np.ascontiguousarray(data), X, C, indptr, indices,
         m // br, n // bc, data.shape[0], part, part.shape[0] - 1)
    return C


def _prepare_bsr(what: str, A: Any) -> tuple:
    data = A.data  # cached as A holds it; each call reads its current values (``bsr_spmm``)
    if str(data.dtype) not in VALUE_DTYPES:
        fail(what, f"values must be float32 or float64, got {data.dtype}")
    br, bc = (int(b) for b in A.blocksize)
    if br < 1 or bc < 1:
        fail(what, f"block size {(br, bc)} must be positive (data has shape {data.shape})")
    m, n = A.shape
    indptr = own_int32(what, "indptr", np.asarray(A.indptr))
    indices = own_int32(what, "indices", np.asarray(A.indices))
    if data.ndim != 3 or data.shape[1:] != (br, bc):
        fail(what, f"data must have shape (nnz_blocks, {br}, {bc}), got {data.shape}")
    check_structure(what, indptr, indices, m // br, n // bc, data.shape[0])
    return data, indptr, indices, (br, bc), row_partition(indptr, _parts())


def ell_spmm(indices: Any, values: Any, X: Any, rows: Optional[int] = None) -> Any:
    """``A @ X`` for ``A`` in ELL form: row ``i`` stores ``values[i, t]`` at column ``indices[i, t]``.

    ``indices`` and ``values`` each come as ``(m, width)`` or flat ``(m * width,)`` in row-major
    order (pad short rows with value 0 at any valid column); the 2-D one gives the shape, and
    when both are flat ``rows`` (m) must be given. ``A`` has ``X.shape[0]`` columns. Returns
    ``(m, X.shape[1])``, the same kind as ``X``. The indices are validated on every call
    (O(m * width)).
    """
    if _cuda.on_cuda(values, X):
        return _cuda.ops.ell_spmm(indices, values, X, rows)
    if _autograd.wants_torch(values, X):
        return _autograd.ell_spmm(indices, values, X, rows)
    return _ell_spmm(indices, values, X, rows)


def _ell_spmm(indices: Any, values: Any, X: Any, rows: Optional[int]) -> Any:
    """``ell_spmm`` without gradients (also the ``sparsetir::ell_spmm`` custom op's body)."""
    vals = plain(values).numpy() if is_torch_tensor(values) else np.asarray(values)
    if str(vals.dtype) not in VALUE_DTYPES:
        fail("ell_spmm: values", f"must be float32 or float64, got {vals.dtype}")
    idx = plain(indices).cpu().numpy() if is_torch_tensor(indices) else np.asarray(indices)
    m, width = _ell_shape(idx.shape, vals.shape, rows)
    vals = vals.reshape(m, width)
    idx = as_int32("ell_spmm: indices", "indices", idx.reshape(m * width))
    dtype = str(vals.dtype)
    if not is_torch_tensor(X) and not isinstance(X, np.ndarray):
        fail("ell_spmm: X", f"expected a numpy array or torch tensor, got {type(X).__name__}")
    n = int(X.shape[0]) if len(X.shape) else 0
    X = dense_operand("ell_spmm: X", X, dtype, None)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        fail("ell_spmm: indices", f"column index {bad} is out of range for X with {n} rows")
    feat = int(X.shape[1])
    C = _empty((m, feat), dtype, is_torch_tensor(X))
    if m == 0 or feat == 0 or width == 0:
        C[...] = 0
        return C
    _run(KernelKey("ell_spmm", dtype, feat), m * width * feat, np.ascontiguousarray(vals), X, C, idx, m, n, width)
    return C


def _ell_shape(idx_shape: tuple, vals_shape: tuple, rows: Optional[int]) -> tuple[int, int]:
    """``(m, width)`` of an ELL matrix from its indices' and values' shapes (each 2-D or flat)."""
    for name, shape in (("indices", idx_shape), ("values", vals_shape)):
        if len(shape) not in (1, 2):
            fail(f"ell_spmm: {name}", f"expected a 2-D (rows, width) or flat (rows * width,) array, got shape {shape}")
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 0):
        fail("ell_spmm: rows", f"expected a non-negative integer, got {rows!r}")
    square = [s for s in (idx_shape, vals_shape) if len(s) == 2]
    if square:
        m, width = (int(d) for d in square[0])
        if rows is not None and rows != m:
            fail("ell_spmm: rows", f"is {rows}, but the arrays have {m} rows")
    elif rows is None:
        fail("ell_spmm: indices", "and values are both flat; pass rows= (the number of rows) or a 2-D array")
    else:
        m = int(rows)
        size = int(idx_shape[0])
        if (m == 0 and size) or (m and size % m):
            fail("ell_spmm: indices", f"has {size} entries, which is not a multiple of rows={m}")
        width = size // m if m else 0
    for name, shape in (("indices", idx_shape), ("values", vals_shape)):
        if len(shape) == 2 and tuple(shape) != (m, width):
            fail(f"ell_spmm: {name}", f"shape {tuple(shape)} does not match the other array's shape {(m, width)}")
        if len(shape) == 1 and shape[0] != m * width:
            fail(f"ell_spmm: {name}", f"has {shape[0]} entries, expected rows * width = {m} * {width} = {m * width}")
    return m, width


def softmax(A: Any) -> Any:
    """Row-wise softmax over the stored entries of CSR ``A`` (entries not stored take no part).

    Returns a CSR matrix of ``A``'s kind with ``A``'s pattern; an empty row stays empty.
    """
    if _cuda.on_cuda(A):
        return _cuda.ops.softmax(A)
    if _autograd.wants_torch(A):
        return _autograd.softmax(A)
    a = _csr("softmax: A", A)
    out = aligned_empty((a.nnz,), a.dtype)
    _softmax_values(a, current_values(A, a), out)
    return _same_pattern(A, a, out)


def _softmax_values(a: CsrInput, values: Any, out: np.ndarray) -> None:
    """The row-wise softmax of the prepared matrix ``a`` with ``values``, into ``out`` (nnz,):
    a kernel subtracts each row's maximum, NumPy exponentiates (vectorized: the kernels call the
    C library's scalar ``exp`` per entry, 5x the time of all the rest), a kernel divides by each
    row's sum. (Cora's 8 GAT heads, 106k entries: 0.64 ms in one kernel, see bench/notes.)"""
    if not a.nnz:
        return
    _call(_kernel(a, "softmax_shift", 0), (values, out) + a.tail, 2 * a.nnz)
    np.exp(out, out=out)
    _call(_kernel(a, "softmax_scale", 0), (out,) + a.tail, 2 * a.nnz)

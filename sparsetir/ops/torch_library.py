"""``sparsetir.ops`` as ``torch.library`` custom ops, so that ``torch.compile`` traces models
that call them without graph breaks.

Each op takes plain tensors: a CSR matrix comes as ``crow_indices, col_indices, values`` and
its shape as two ints (Dynamo refuses sparse tensors; a model holds ``ops.CsrTensors``). Each
has a fake implementation (the result's shape and dtype, for tracing) and an autograd formula
whose backward calls these same ops, so the backward graph has no breaks either:

- ``spmm(crow, col, values, rows, cols, X, transpose=False)``: ``A @ X`` (``Aᵀ @ X``);
  dX = Aᵀ·G (``spmm`` with ``transpose`` flipped: the cached transposed structure),
  d values = G[i]·X[j] at A's entries (``sddmm``);
- ``sddmm(crow, col, values, rows, cols, X, Y)``: the result's values; with W = values ⊙ dO,
  dX = W·Y, dY = Wᵀ·X (``spmm``), d values = dO ⊙ (X Yᵀ) (``sddmm`` with dO as values);
- ``spmv(crow, col, values, rows, cols, x, transpose=False)``: dx = Aᵀ·g (``spmv``),
  d values = g[i]·x[j] (a gather);
- ``segment_sum(values, offsets)``: d values = G of each entry's segment (``repeat_interleave``);
- ``softmax(crow, col, values, rows, cols)``: the result's values P;
  dV = P ⊙ (dP − rowsum(dP ⊙ P)) (``segment_sum`` for the row sums);
- ``ell_spmm(indices, values, X)`` with (m, width) ``indices``/``values``: dX = Aᵀ·G (``spmm``
  over the ELL matrix as CSR), d values = G[i]·X[j] (``sddmm``; a gather when a row is longer
  than the column count).

These are the gradient rules of ``autograd.py``. The real implementations call the same
compiled kernels as the eager ops; a structure is prepared once, keyed by its index tensors'
memory and version (``tensor_structures.py``). In eager mode a call that records no gradient
runs the implementation directly, without the dispatcher.

The front functions at the end (``spmm(A, X)``, ...) take the eager ops' arguments; the eager
ops route here under ``torch.compile`` and for ``CsrTensors`` (``autograd.wants_torch``).
"""

from __future__ import annotations

import numbers

from typing import Any, Optional

import numpy as np
import torch

from sparsetir import ops as _ops

from .csr_tensors import CsrTensors, csr_tensors
from .inputs import dense_operand, fail, plain
from .tensor_structures import Structure, TensorStructures

Tensor = torch.Tensor

#: Structures of the matrices the custom ops have seen (see ``tensor_structures.py``).
structures = TensorStructures()


def _structure(what: str, crow: Tensor, col: Tensor, values: Tensor, rows: int, cols: int) -> Structure:
    for name, t in (("crow_indices", crow), ("col_indices", col), ("values", values)):
        if not isinstance(t, Tensor):
            fail(what, f"{name} must be a torch tensor, got {type(t).__name__}")
        if t.device.type != "cpu":
            fail(what, f"{name} is on {t.device}; sparsetir.ops runs on the CPU")
    dtype = str(values.dtype).removeprefix("torch.")
    if dtype not in ("float32", "float64"):
        fail(what, f"values must be float32 or float64, got {dtype}")
    if values.dim() != 1 or values.shape[0] != col.shape[0]:
        fail(what, f"values must have shape ({col.shape[0]},) (one per column index), got {tuple(values.shape)}")
    return structures.get(what, crow, col, (int(rows), int(cols)), dtype, _ops._parts())


def _values(values: Tensor) -> Tensor:
    """A matrix's values as a kernel takes them (TVM refuses tensors that require grad; a
    negative view's memory holds the negated values)."""
    return plain(values).contiguous()


# --- the ops ------------------------------------------------------------------------------------


def _spmm(crow: Tensor, col: Tensor, values: Tensor, rows: int, cols: int, X: Tensor,
          transpose: bool = False) -> Tensor:
    s = _structure("spmm: A", crow, col, values, rows, cols)
    if transpose:  # Aᵀ's values read from A's through the permutation, inside the kernel
        return _ops.spmm_gathered(s.transposed, _values(values), s.transposed_src, X)
    a, vals = s.csr, _values(values)
    X = dense_operand("spmm: X", X, a.dtype, a.shape[1])
    m = a.shape[0]
    feat = int(X.shape[1])
    C = _ops._empty((m, feat), a.dtype, True)
    if m == 0 or feat == 0:
        return C.zero_()
    _ops._call(_ops._kernel(a, "spmm", feat), (vals, X, C) + a.tail, a.nnz * feat)
    return C


def _sddmm(crow: Tensor, col: Tensor, values: Tensor, rows: int, cols: int, X: Tensor, Y: Tensor) -> Tensor:
    a = _structure("sddmm: A", crow, col, values, rows, cols).csr
    X, Y, feat = _ops._sddmm_operands(a, X, Y)
    vals = _values(values)
    if not (a.nnz and feat):
        return vals * 0  # an empty dot product: A * 0, NaN for A's infinities, as in the eager op
    out = torch.empty_like(vals)
    if a.max_row_length > cols:
        return _ops.sddmm_gathered(a, vals, X, Y, out)
    _ops._call(_ops._kernel(a, "sddmm", feat, Y), (vals, X, Y, out) + a.tail, a.nnz * feat)
    return out


def _spmv(crow: Tensor, col: Tensor, values: Tensor, rows: int, cols: int, x: Tensor,
          transpose: bool = False) -> Tensor:
    s = _structure("spmv: A", crow, col, values, rows, cols)
    if transpose:
        a, vals = s.transposed, s.transposed_values(_values(values).numpy())
    else:
        a, vals = s.csr, _values(values)
    m, n = a.shape
    x = dense_operand("spmv: x", x, a.dtype, n, ndim=1)
    y = torch.empty(m, dtype=values.dtype)
    if m:
        _ops._call(_ops._kernel(a, "spmm", 1), (vals, x.reshape(n, 1), y.reshape(m, 1)) + a.tail, a.nnz)
    return y


def _segment_sum(values: Tensor, offsets: Tensor) -> Tensor:
    return _ops._segment_sum(values.detach(), offsets)


def _softmax(crow: Tensor, col: Tensor, values: Tensor, rows: int, cols: int) -> Tensor:
    a = _structure("softmax: A", crow, col, values, rows, cols).csr
    vals = _values(values)
    out = torch.empty_like(vals)
    _ops._softmax_values(a, vals, out.numpy())
    return out


def _ell_spmm(indices: Tensor, values: Tensor, X: Tensor) -> Tensor:
    return _ops._ell_spmm(indices, values.detach(), X.detach(), None)


# The registered ops (``torch.ops.sparsetir.<name>``); calling one goes through the dispatcher.
spmm_op = torch.library.custom_op("sparsetir::spmm", _spmm, mutates_args=())
sddmm_op = torch.library.custom_op("sparsetir::sddmm", _sddmm, mutates_args=())
spmv_op = torch.library.custom_op("sparsetir::spmv", _spmv, mutates_args=())
segment_sum_op = torch.library.custom_op("sparsetir::segment_sum", _segment_sum, mutates_args=())
softmax_op = torch.library.custom_op("sparsetir::softmax", _softmax, mutates_args=())
ell_spmm_op = torch.library.custom_op("sparsetir::ell_spmm", _ell_spmm, mutates_args=())


# --- fake implementations: the result's shape and dtype -----------------------------------------


@spmm_op.register_fake
def _(crow, col, values, rows, cols, X, transpose=False):
    return values.new_empty((cols if transpose else rows, X.shape[1]))


@sddmm_op.register_fake
def _(crow, col, values, rows, cols, X, Y):
    return torch.empty_like(values)


@spmv_op.register_fake
def _(crow, col, values, rows, cols, x, transpose=False):
    return values.new_empty((cols if transpose else rows,))


@segment_sum_op.register_fake
def _(values, offsets):
    return values.new_empty((offsets.shape[0] - 1,) + tuple(values.shape[1:]))


@softmax_op.register_fake
def _(crow, col, values, rows, cols):
    return torch.empty_like(values)


@ell_spmm_op.register_fake
def _(indices, values, X):
    return values.new_empty((values.shape[0], X.shape[1]))


# --- gradients ----------------------------------------------------------------------------------


def _entry_rows(crow: Tensor, nnz: int) -> Tensor:
    """The row of each stored entry (nnz,), from the row pointers."""
    counts = crow.diff()
    rows = torch.arange(counts.shape[0], device=crow.device)
    return torch.repeat_interleave(rows, counts, output_size=nnz)


def _spmm_setup(ctx, inputs, output):
    crow, col, values, rows, cols, X = inputs[:6]
    ctx.save_for_backward(crow, col, values, X)
    ctx.shape = (rows, cols)
    ctx.transpose = inputs[6] if len(inputs) > 6 else False


def _spmm_backward(ctx, G):
    crow, col, values, X = ctx.saved_tensors
    rows, cols = ctx.shape
    dvalues = dX = None
    if ctx.needs_input_grad[5]:
        dX = spmm_op(crow, col, values, rows, cols, G, not ctx.transpose)
    if ctx.needs_input_grad[2]:
        ones = torch.ones_like(values)
        left, right = (X, G) if ctx.transpose else (G, X)
        dvalues = sddmm_op(crow, col, ones, rows, cols, left, right)
    return None, None, dvalues, None, None, dX, None


def _sddmm_setup(ctx, inputs, output):
    crow, col, values, rows, cols, X, Y = inputs
    ctx.save_for_backward(crow, col, values, X, Y)
    ctx.shape = (rows, cols)


def _sddmm_backward(ctx, dO):
    crow, col, values, X, Y = ctx.saved_tensors
    rows, cols = ctx.shape
    dvalues = dX = dY = None
    if ctx.needs_input_grad[5] or ctx.needs_input_grad[6]:
        W = values * dO
        if ctx.needs_input_grad[5]:
            dX = spmm_op(crow, col, W, rows, cols, Y)
        if ctx.needs_input_grad[6]:
            dY = spmm_op(crow, col, W, rows, cols, X, True)
    if ctx.needs_input_grad[2]:
        dvalues = sddmm_op(crow, col, dO, rows, cols, X, Y)
    return None, None, dvalues, None, None, dX, dY


def _spmv_setup(ctx, inputs, output):
    crow, col, values, rows, cols, x = inputs[:6]
    ctx.save_for_backward(crow, col, values, x)
    ctx.shape = (rows, cols)
    ctx.transpose = inputs[6] if len(inputs) > 6 else False


def _spmv_backward(ctx, g):
    crow, col, values, x = ctx.saved_tensors
    rows, cols = ctx.shape
    dvalues = dx = None
    if ctx.needs_input_grad[5]:
        dx = spmv_op(crow, col, values, rows, cols, g, not ctx.transpose)
    if ctx.needs_input_grad[2]:
        # One multiply per entry: a gather, as in autograd.py (no SDDMM of width 1 to compile).
        at_rows, at_cols = (x, g) if ctx.transpose else (g, x)
        dvalues = at_rows[_entry_rows(crow, values.shape[0])] * at_cols[col]
    return None, None, dvalues, None, None, dx, None


def _segment_sum_setup(ctx, inputs, output):
    values, offsets = inputs
    ctx.save_for_backward(offsets)
    ctx.nnz = values.shape[0]


def _segment_sum_backward(ctx, G):
    (offsets,) = ctx.saved_tensors
    if not ctx.needs_input_grad[0]:
        return None, None
    return torch.repeat_interleave(G, offsets.diff(), dim=0, output_size=ctx.nnz), None


def _softmax_setup(ctx, inputs, output):
    crow, col, values, rows, cols = inputs
    ctx.save_for_backward(crow, output)


def _softmax_backward(ctx, dP):
    crow, P = ctx.saved_tensors
    dot = segment_sum_op(dP * P, crow)  # rowsum(dP ⊙ P), one per row
    dvalues = P * (dP - torch.repeat_interleave(dot, crow.diff(), output_size=P.shape[0]))
    return None, None, dvalues, None, None


def _ell_spmm_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _ell_spmm_backward(ctx, G):
    indices, values, X = ctx.saved_tensors
    m, width = values.shape
    n = X.shape[0]
    # The ELL matrix as CSR: row i's entries are positions i*width ... i*width + width - 1
    # (padding takes part with its stored 0). Its structure is prepared on each backward.
    crow = torch.arange(m + 1, device=values.device) * width
    col = indices.reshape(-1)
    dvalues = dX = None
    if ctx.needs_input_grad[2]:
        dX = spmm_op(crow, col, values.reshape(-1), m, n, G, True)
    if ctx.needs_input_grad[1]:
        if width <= n:
            d = sddmm_op(crow, col, torch.ones_like(values).reshape(-1), m, n, G, X)
        else:
            # sddmm refuses rows longer than the column count (repeated padding columns).
            d = (G.repeat_interleave(width, dim=0) * X[col]).sum(dim=1)
        dvalues = d.reshape(m, width)
    return None, dvalues, dX


spmm_op.register_autograd(_spmm_backward, setup_context=_spmm_setup)
sddmm_op.register_autograd(_sddmm_backward, setup_context=_sddmm_setup)
spmv_op.register_autograd(_spmv_backward, setup_context=_spmv_setup)
segment_sum_op.register_autograd(_segment_sum_backward, setup_context=_segment_sum_setup)
softmax_op.register_autograd(_softmax_backward, setup_context=_softmax_setup)
ell_spmm_op.register_autograd(_ell_spmm_backward, setup_context=_ell_spmm_setup)


# --- the front functions: the eager ops' arguments ----------------------------------------------


def _parts(what: str, A: Any) -> CsrTensors:
    """``A`` as ``CsrTensors``; a SciPy matrix (reaching here only under ``torch.compile``) is
    converted in the graph."""
    if type(A) is CsrTensors:
        for name, t in zip(("crow_indices", "col_indices", "values"), A[:3]):
            if not isinstance(t, Tensor):
                fail(what, f"{name} must be a torch tensor, got {type(t).__name__}")
        shape = A.shape
        if not (isinstance(shape, (tuple, list)) and len(shape) == 2
                and all(isinstance(d, numbers.Integral) and not isinstance(d, bool) for d in shape)):
            fail(what, f"shape must be two ints (rows, cols), got {shape!r}")
        return A
    if getattr(A, "format", None) == "csr":
        return csr_tensors(A)
    fail(what, f"expected ops.CsrTensors or a SciPy CSR matrix, got {type(A).__name__}; under torch.compile, "
               "pass ops.csr_tensors(A) made outside the compiled code (Dynamo cannot trace sparse tensors)")
    raise AssertionError("unreachable")


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else torch.from_numpy(np.ascontiguousarray(x))


def _direct(*tensors: Tensor) -> bool:
    """Whether a call runs its implementation directly: eager, and recording no gradient."""
    if torch.compiler.is_compiling():
        return False
    return not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors))


def spmm(A: Any, X: Any) -> Tensor:
    """``ops.spmm`` through ``sparsetir::spmm``."""
    crow, col, values, (rows, cols) = _parts("spmm: A", A)
    X = _tensor(X)
    if _direct(values, X):
        return _spmm(crow, col, values, rows, cols, X)
    return spmm_op(crow, col, values, rows, cols, X)


def sddmm(A: Any, X: Any, Y: Any) -> CsrTensors:
    """``ops.sddmm`` through ``sparsetir::sddmm``: ``CsrTensors`` with ``A``'s index tensors."""
    crow, col, values, (rows, cols) = _parts("sddmm: A", A)
    X, Y = _tensor(X), _tensor(Y)
    if _direct(values, X, Y):
        out = _sddmm(crow, col, values, rows, cols, X, Y)
    else:
        out = sddmm_op(crow, col, values, rows, cols, X, Y)
    return CsrTensors(crow, col, out, (rows, cols))


def spmv(A: Any, x: Any) -> Tensor:
    """``ops.spmv`` through ``sparsetir::spmv``."""
    crow, col, values, (rows, cols) = _parts("spmv: A", A)
    x = _tensor(x)
    if _direct(values, x):
        return _spmv(crow, col, values, rows, cols, x)
    return spmv_op(crow, col, values, rows, cols, x)


def softmax(A: Any) -> CsrTensors:
    """``ops.softmax`` through ``sparsetir::softmax``: ``CsrTensors`` with ``A``'s index tensors."""
    crow, col, values, (rows, cols) = _parts("softmax: A", A)
    if _direct(values):
        out = _softmax(crow, col, values, rows, cols)
    else:
        out = softmax_op(crow, col, values, rows, cols)
    return CsrTensors(crow, col, out, (rows, cols))


def segment_sum(values: Any, offsets: Any) -> Tensor:
    """``ops.segment_sum`` through ``sparsetir::segment_sum``."""
    values, offsets = _tensor(values), _tensor(offsets)
    if _direct(values):
        return _segment_sum(values, offsets)
    return segment_sum_op(values, offsets)


def ell_spmm(indices: Any, values: Any, X: Any, rows: Optional[int] = None) -> Tensor:
    """``ops.ell_spmm`` through ``sparsetir::ell_spmm`` (indices and values as (m, width))."""
    indices, values, X = _tensor(indices), _tensor(values), _tensor(X)
    m, width = _ops._ell_shape(tuple(indices.shape), tuple(values.shape), rows)
    indices, values = indices.reshape(m, width), values.reshape(m, width)
    if _direct(values, X):
        return _ell_spmm(indices, values, X)
    return ell_spmm_op(indices, values, X)


def _bsr_spmm_eager(A: Any, X: Any) -> Any:
    return _ops.bsr_spmm(A, X)


#: ``ops.bsr_spmm`` under ``torch.compile``: not a custom op yet (its SciPy ``A`` would need a
#: tensor form like ``CsrTensors``), so it runs eagerly, in a graph break.
bsr_spmm = torch.compiler.disable(_bsr_spmm_eager)

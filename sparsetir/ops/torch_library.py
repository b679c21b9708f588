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
  than the column count);
- ``add``, ``multiply`` and ``spgemm`` (two CSR operands given by their components, and for
  ``spgemm`` an optional mask's ``crow, col``): the result's ``crow, col, values``, its number
  of entries known only at run time (an unbacked size while tracing, the mask's with a mask);
  their backward is one more op, ``sparse_pair_backward``, with ``sparse_sparse.gradients``'
  rules (for spgemm, masked SpGEMMs over the operands' own patterns).

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


def _operands(a_crow: Tensor, a_col: Tensor, a_values: Tensor, a_rows: int, a_cols: int, b_crow: Tensor,
              b_col: Tensor, b_values: Tensor, b_rows: int, b_cols: int, m_crow: Optional[Tensor],
              m_col: Optional[Tensor]) -> tuple[Tensor, Tensor, Optional[Tensor]]:
    """The operands as torch sparse CSR tensors (no copies; their structures are prepared and
    checked by ``sparse_sparse``, once per structure)."""
    A = torch.sparse_csr_tensor(a_crow, a_col, _values(a_values), size=(a_rows, a_cols), check_invariants=False)
    B = torch.sparse_csr_tensor(b_crow, b_col, _values(b_values), size=(b_rows, b_cols), check_invariants=False)
    M = None
    if m_crow is not None and m_col is not None:
        M = torch.sparse_csr_tensor(m_crow, m_col, torch.zeros(m_col.shape[0], dtype=a_values.dtype),
                                    size=(a_rows, b_cols), check_invariants=False)
    return A, B, M


def _own(t: Tensor, inputs: tuple) -> Tensor:
    """``t``, copied when it shares memory with one of ``inputs`` (a custom op's outputs may not
    alias its inputs: a masked product's structure is the mask's)."""
    ptr = t.untyped_storage().data_ptr()
    if any(isinstance(x, Tensor) and x.untyped_storage().data_ptr() == ptr for x in inputs):
        return t.clone()
    return t


def _pair(op: str, *args: Any) -> tuple[Tensor, Tensor, Tensor]:
    from . import sparse_sparse

    A, B, M = _operands(*args)
    out = sparse_sparse.compute(op, A, B, M)[0]
    inputs = tuple(a for a in args if isinstance(a, Tensor))
    return (_own(out.crow_indices(), inputs), _own(out.col_indices(), inputs), _own(out.values(), inputs))


def _add(a_crow: Tensor, a_col: Tensor, a_values: Tensor, a_rows: int, a_cols: int, b_crow: Tensor, b_col: Tensor,
         b_values: Tensor, b_rows: int, b_cols: int) -> tuple[Tensor, Tensor, Tensor]:
    return _pair("add", a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols, None, None)


def _multiply(a_crow: Tensor, a_col: Tensor, a_values: Tensor, a_rows: int, a_cols: int, b_crow: Tensor,
              b_col: Tensor, b_values: Tensor, b_rows: int, b_cols: int) -> tuple[Tensor, Tensor, Tensor]:
    return _pair("multiply", a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols,
                 None, None)


def _spgemm(a_crow: Tensor, a_col: Tensor, a_values: Tensor, a_rows: int, a_cols: int, b_crow: Tensor,
            b_col: Tensor, b_values: Tensor, b_rows: int, b_cols: int, m_crow: Optional[Tensor] = None,
            m_col: Optional[Tensor] = None) -> tuple[Tensor, Tensor, Tensor]:
    return _pair("spgemm", a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols,
                 m_crow, m_col)


def _sparse_pair_backward(op: str, a_crow: Tensor, a_col: Tensor, a_values: Tensor, a_rows: int, a_cols: int,
                          b_crow: Tensor, b_col: Tensor, b_values: Tensor, b_rows: int, b_cols: int,
                          m_crow: Optional[Tensor], m_col: Optional[Tensor], g_values: Tensor, want_a: bool,
                          want_b: bool) -> tuple[Tensor, Tensor]:
    """The gradients of ``A``'s and ``B``'s values (zeros where not wanted) from the result's
    values' gradient ``g_values``, at the result's entries in ``op``'s own order."""
    from . import sparse_sparse

    A, B, M = _operands(a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols,
                        m_crow, m_col)
    _, a, b, pattern = sparse_sparse.compute(op, A, B, M, sources=True)  # the pattern is cached: the values again
    g = _values(g_values).numpy()
    dA, dB = sparse_sparse.gradients(op, a, b, pattern, g, (want_a, want_b))
    zeros = lambda v: torch.zeros_like(v)  # noqa: E731
    return (torch.from_numpy(dA) if dA is not None else zeros(a_values),
            torch.from_numpy(dB) if dB is not None else zeros(b_values))


# The registered ops (``torch.ops.sparsetir.<name>``); calling one goes through the dispatcher.
spmm_op = torch.library.custom_op("sparsetir::spmm", _spmm, mutates_args=())
sddmm_op = torch.library.custom_op("sparsetir::sddmm", _sddmm, mutates_args=())
spmv_op = torch.library.custom_op("sparsetir::spmv", _spmv, mutates_args=())
segment_sum_op = torch.library.custom_op("sparsetir::segment_sum", _segment_sum, mutates_args=())
softmax_op = torch.library.custom_op("sparsetir::softmax", _softmax, mutates_args=())
ell_spmm_op = torch.library.custom_op("sparsetir::ell_spmm", _ell_spmm, mutates_args=())
add_op = torch.library.custom_op("sparsetir::add", _add, mutates_args=())
multiply_op = torch.library.custom_op("sparsetir::multiply", _multiply, mutates_args=())
spgemm_op = torch.library.custom_op("sparsetir::spgemm", _spgemm, mutates_args=())
sparse_pair_backward_op = torch.library.custom_op("sparsetir::sparse_pair_backward", _sparse_pair_backward,
                                                  mutates_args=())


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


def _pair_fake(a_crow, b_crow, a_values, rows, nnz):
    index = torch.int64 if torch.int64 in (a_crow.dtype, b_crow.dtype) else torch.int32
    return a_crow.new_empty((rows + 1,), dtype=index), a_crow.new_empty((nnz,), dtype=index), a_values.new_empty((nnz,))


@add_op.register_fake
def _(a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols):
    return _pair_fake(a_crow, b_crow, a_values, a_rows, torch.library.get_ctx().new_dynamic_size())


@multiply_op.register_fake
def _(a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols):
    return _pair_fake(a_crow, b_crow, a_values, a_rows, torch.library.get_ctx().new_dynamic_size())


@spgemm_op.register_fake
def _(a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols, m_crow=None, m_col=None):
    nnz = m_col.shape[0] if m_col is not None else torch.library.get_ctx().new_dynamic_size()
    return _pair_fake(a_crow, b_crow, a_values, a_rows, nnz)


@sparse_pair_backward_op.register_fake
def _(op, a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols, m_crow, m_col,
      g_values, want_a, want_b):
    return torch.empty_like(a_values), torch.empty_like(b_values)


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


def _pair_setup(op: str) -> Any:
    def setup(ctx, inputs, output):
        ctx.op = op
        tensors = [x for x in inputs if isinstance(x, Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.layout = [isinstance(x, Tensor) for x in inputs]
        ctx.scalars = [x for x in inputs if not isinstance(x, Tensor)]
        ctx.count = len(inputs)
    return setup


def _pair_backward(ctx, g_crow, g_col, g_values):
    saved, scalars = iter(ctx.saved_tensors), iter(ctx.scalars)
    inputs = [next(saved) if is_tensor else next(scalars) for is_tensor in ctx.layout]
    if ctx.count == 10:  # add and multiply have no mask
        inputs += [None, None]
    dA, dB = sparse_pair_backward_op(ctx.op, *inputs, g_values, bool(ctx.needs_input_grad[2]),
                                     bool(ctx.needs_input_grad[7]))
    grads = [None] * ctx.count
    grads[2] = dA if ctx.needs_input_grad[2] else None
    grads[7] = dB if ctx.needs_input_grad[7] else None
    return tuple(grads)


spmm_op.register_autograd(_spmm_backward, setup_context=_spmm_setup)
add_op.register_autograd(_pair_backward, setup_context=_pair_setup("add"))
multiply_op.register_autograd(_pair_backward, setup_context=_pair_setup("multiply"))
spgemm_op.register_autograd(_pair_backward, setup_context=_pair_setup("spgemm"))
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


def _pair_front(op: str, A: Any, B: Any, mask: Any = None) -> CsrTensors:
    a_crow, a_col, a_values, (a_rows, a_cols) = _parts(f"{op}: A", A)
    b_crow, b_col, b_values, (b_rows, b_cols) = _parts(f"{op}: B", B)
    args = (a_crow, a_col, a_values, a_rows, a_cols, b_crow, b_col, b_values, b_rows, b_cols)
    if mask is not None:
        m_crow, m_col, _, _ = _parts(f"{op}: mask", mask)
        args += (m_crow, m_col)
    direct = _direct(a_values, b_values)
    if op == "add":
        crow, col, values = _add(*args) if direct else add_op(*args)
    elif op == "multiply":
        crow, col, values = _multiply(*args) if direct else multiply_op(*args)
    else:
        crow, col, values = _spgemm(*args) if direct else spgemm_op(*args)
    return CsrTensors(crow, col, values, (a_rows, b_cols))


def add(A: Any, B: Any) -> CsrTensors:
    """``ops.add`` through ``sparsetir::add``: ``CsrTensors`` on the union of the patterns."""
    return _pair_front("add", A, B)


def multiply(A: Any, B: Any) -> CsrTensors:
    """``ops.multiply`` through ``sparsetir::multiply``: ``CsrTensors`` on the intersection."""
    return _pair_front("multiply", A, B)


def spgemm(A: Any, B: Any, mask: Any = None) -> CsrTensors:
    """``ops.spgemm`` through ``sparsetir::spgemm``: ``CsrTensors`` of ``A @ B`` (on ``mask``'s
    pattern with a mask)."""
    return _pair_front("spgemm", A, B, mask)


def _bsr_spmm_eager(A: Any, X: Any) -> Any:
    return _ops.bsr_spmm(A, X)


#: ``ops.bsr_spmm`` under ``torch.compile``: not a custom op yet (its SciPy ``A`` would need a
#: tensor form like ``CsrTensors``), so it runs eagerly, in a graph break.
bsr_spmm = torch.compiler.disable(_bsr_spmm_eager)

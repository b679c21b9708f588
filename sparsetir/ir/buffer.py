"""Sparse buffers: values laid out by a list of axes.

The value array of a sparse tensor is bound to a buffer; its structure arrays (indptr, indices)
belong to the axes, so buffers of the same structure share them (the RFC's SDDMM X and Y).
Stage I addresses a sparse buffer in coordinate space, so ``buffer`` is a TVM buffer variable
whose shape is the axes' coordinate extents; loads and stores in bodies are ordinary TVM
``TensorLoad`` / ``BufferStore`` nodes on it.
"""

from __future__ import annotations

from typing import Optional

from .._tvm import Expr, Object, Span, Var, field, py_class
from .axis import Axis


@py_class("sparsetir.SparseBuffer", frozen=True)
class SparseBuffer(Object):
    """A buffer over sparse axes, matched to a handle parameter, allocated, or a dense view
    (``T.decl_buffer``, seed 002) of another buffer's data: ``view_of`` is that buffer's var."""

    buffer: Var = field(structural_eq="def")
    axes: list[Axis]
    handle: Optional[Var]
    scope: str
    extra_storage: Optional[Expr]
    span: Optional[Span] = field(default=None, structural_eq="ignore")
    view_of: Optional[Var] = None

    @property
    def name(self) -> str:
        """The script name of the buffer."""
        return self.buffer.name

    @property
    def dtype(self) -> str:
        """Element data type."""
        return str(self.buffer.ty.dtype)

    @property
    def is_allocated(self) -> bool:
        """Created with ``alloc_sparse_buffer`` rather than bound to a parameter or viewing one."""
        return self.handle is None and self.view_of is None

    def __repr__(self) -> str:
        return f"SparseBuffer({self.name}, [{', '.join(a.name for a in self.axes)}], {self.dtype})"

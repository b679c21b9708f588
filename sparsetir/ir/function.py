"""Stage-I functions: parameters, sparse axes, sparse buffers and a body of sparse iterations."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .._tvm import Object, Span, Var, field, py_class
from .axis import Axis
from .buffer import SparseBuffer
from .text import form

STAGE_I_LEVEL = 2


@py_class("sparsetir.SparseFunction", frozen=True)
class SparseFunction(Object):
    """A stage-I SparseTIR function, as written with ``@T.prim_func``.

    ``params`` are handle variables (``T.handle``) and scalar variables (``T.int32``...), in
    signature order. ``axes`` and ``buffers`` are the header declarations in definition order.
    """

    name: str
    params: list[Var] = field(structural_eq="def")
    attrs: dict[str, Any]
    axes: list[Axis]
    buffers: list[SparseBuffer]
    body: list[Any]
    span: Optional[Span] = field(default=None, structural_eq="ignore")

    def script(self) -> str:
        """The function as a SparseTIR script that parses back to an equal function."""
        return form("print_stage1")(self)

    def specialize(self, bindings: Mapping[Any, Any]) -> "SparseFunction":
        """Bind scalar parameters (given as Var or name) to constants; they leave the signature."""
        return form("specialize")(self, bindings)

    def param(self, name: str) -> Var:
        """The parameter called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no parameter {name!r}")

    def axis(self, name: str) -> Axis:
        """The axis called ``name``."""
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(f"{self.name} has no axis {name!r}")

    def buffer(self, name: str) -> SparseBuffer:
        """The sparse buffer called ``name``."""
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(f"{self.name} has no sparse buffer {name!r}")

    def __repr__(self) -> str:
        return f"SparseFunction({self.name})"

    def __str__(self) -> str:
        return self.script()

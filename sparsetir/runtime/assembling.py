"""The kernel of a program with assembled axes: a symbolic kernel, then the numeric one.

``sparsetir.build`` of a stage-I function with an assembled axis (``ir/assembly.py``) compiles
two programs: the *symbolic* one (``transforms/assemble.py``), which counts the coordinates of
each output row, and the program itself, the *numeric* one, whose co-iteration writes each row's
coordinates and values at consecutive positions. The kernel returned here is called with the
function's parameters *less* what an assembled axis lays out (its ``indptr``, ``indices`` and
``nnz`` parameters and the buffers over it, which the caller cannot size), and:

1. checks the arguments once, as the numeric kernel would, less the checks of what it makes
   (the inputs' structure: ranges, sorted rows for the merge; shapes and dtypes);
2. runs the symbolic kernel, and sums its counts into each axis's row pointer (refusing a total
   its index type cannot hold);
3. allocates the indices and every buffer over the axis (large ones on memory used before,
   ``output_pool``), and runs the numeric kernel;
4. returns them: a dict from those parameters' names to the new arrays (and to the ``nnz``).

Each kernel is an ordinary one (the default schedule applies to both, rows in parallel), so
``symbolic`` and ``numeric`` can be shown, explored or called on their own.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..errors import ArgumentError
from . import output_pool
from .kernel import KernelBase, bind_arguments
from .signature import BufferParam, Signature
from .sizes import compile_size
from .validate import CallValidator


@dataclass(frozen=True)
class AssembledOutput:
    """One assembled axis as the call sees it: where its counts come from, what it makes."""

    axis: str
    rows: Any  # the row count: a size expression over the scalar parameters
    idtype: str
    counts: str  # the symbolic kernel's counts parameter
    indptr: str
    indices: str
    nnz: str
    buffers: tuple[str, ...]  # the numeric kernel's parameters laid out by the axis


class AssemblingKernel(KernelBase):
    """``symbolic``, then ``numeric``, with the assembled outputs made between them; called with
    the function's other parameters, returning the assembled arrays by name."""

    def __init__(self, symbolic: Any, numeric: Any, outputs: list[AssembledOutput]):
        made = {n for o in outputs for n in (o.indptr, o.indices, o.nnz, *o.buffers)}
        params = tuple(p for p in numeric.signature.params if p.name not in made)
        nnz_from = tuple((size, array) for size, array in numeric.signature.nnz_from if array not in made)
        super().__init__(Signature(numeric.signature.name, params, nnz_from))
        # the numeric kernel's checks of the arguments the caller gives (its validator's)
        checks = [c for c in numeric._validator.constraints
                  if c.array not in made and getattr(c, "row_indptr", None) not in made]
        self._validator = CallValidator(self.signature, checks, device="cpu")
        self.symbolic = symbolic
        self.numeric = numeric
        self.assembled = list(outputs)
        self._rows = [compile_size(o.rows) for o in outputs]
        # each array made here: its shape (over the scalars and the nnz) and dtype
        self._made = {p.name: ([compile_size(d) for d in p.shape], p.dtype) for p in numeric.signature.params
                      if isinstance(p, BufferParam) and p.name in made}
        self._scalars = [p.name for p in params if not isinstance(p, BufferParam)]

    def __call__(self, *args: Any, check: bool = True, **kwargs: Any) -> dict[str, Any]:
        """Run both kernels; return the assembled arrays (and ``nnz``) by parameter name.
        ``check=False`` skips the checks (malformed input is then undefined)."""
        values = bind_arguments(self, args, kwargs)
        given = dict(zip(self.params, self._validator(values) if check else values))
        env = {name: _size(name, given[name]) for name in self._scalars}
        counts = {}
        for out, rows_of in zip(self.assembled, self._rows):
            rows = rows_of(env)
            if rows < 0:
                raise ArgumentError(f"{self.name}(): the rows of assembled axis '{out.axis}' number {rows}")
            counts[out.counts] = np.empty(rows, out.idtype)
        self.symbolic(*[given[n] if n in given else counts[n] for n in self.symbolic.params], check=False)
        made: dict[str, Any] = {}
        for out in self.assembled:
            count = counts[out.counts]
            total = int(count.sum(dtype=np.int64))
            if total > np.iinfo(out.idtype).max:
                raise ArgumentError(f"{self.name}(): assembled axis '{out.axis}' would hold {total} entries, more than "
                                    f"its index type {out.idtype} can address")
            indptr = np.zeros(count.shape[0] + 1, out.idtype)
            np.cumsum(count, out=indptr[1:])
            made[out.indptr], made[out.nnz] = indptr, total
        sizes = {**env, **{o.nnz: made[o.nnz] for o in self.assembled}}
        for out in self.assembled:
            for name in (out.indices, *out.buffers):
                shape, dtype = self._made[name]
                made[name] = output_pool.empty(tuple(fn(sizes) for fn in shape), dtype)
        self.numeric(*[given[n] if n in given else made[n] for n in self.numeric.params], check=False)
        return made

    def source(self, fmt: Optional[str] = None, **widths: int) -> str:
        """Generated code of both kernels (``fmt`` as ``Kernel.source``; ``widths`` for the
        numeric kernel's variant), each under a comment line naming it."""
        mark = "#" if fmt in ("asm", "s") else ";"
        axes = ", ".join(o.axis for o in self.assembled)
        numeric = self.numeric.source(fmt, **widths) if widths else self.numeric.source(fmt)
        return (f"{mark} symbolic kernel {self.symbolic.name}: the entries of each row of {axes}\n"
                f"{self.symbolic.source(fmt)}\n{mark} numeric kernel {self.numeric.name}\n{numeric}")

    def __repr__(self) -> str:
        outputs = ", ".join(n for o in self.assembled for n in (o.indptr, o.indices, *o.buffers))
        return f"AssemblingKernel({self.name}({', '.join(self.params)}) -> {outputs})"


def _size(name: str, value: Any) -> int:
    """A scalar argument as an int (the kernels check its range)."""
    if isinstance(value, bool):
        raise ArgumentError(f"argument '{name}': expected an integer, got a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise ArgumentError(f"argument '{name}': expected an integer, got {type(value).__name__}") from None

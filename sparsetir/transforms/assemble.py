"""The symbolic program of a function with assembled axes (``ir/assembly.py``).

For each assembled axis, the iteration that assembles it is kept up to its merge, and its body
becomes a count: the iterators before the merge stay spatial, the merge becomes a reduction,
and the new int buffer ``<axis>_count`` over the rows gets one per coordinate visited::

    with T.sp_iter([I, T.union(JA, JB)], "SS", "csr_add") as [i, j]:     # the numeric program
        C[i, j] = A[i, j] + B[i, j]

    with T.sp_iter([I, T.union(JA, JB)], "SR", "csr_add") as [i, j]:     # its symbolic program
        with T.init():
            JC_count[i] = 0
        JC_count[i] = JC_count[i] + 1

The symbolic program keeps the parameters the other axes need (their structure arrays and
scalars, in the original order), no buffer but the counts, and takes the counts last. The row pointer of the axis is the running sum
of its counts (``runtime/assembling.py``). The symbolic program is an ordinary stage-I
function: it prints, parses back and gets the default schedule like any other.
"""

from __future__ import annotations

from .._tvm import Var, structural_walk, tirx
from ..ir.assembly import Assembly, assemblies
from ..ir.axis import MergedAxis, iter_axes
from ..ir.buffer import SparseBuffer
from ..ir.function import SparseFunction
from ..ir.iteration import SparseIteration

#: The suffix of the counts' parameter and buffer (``JC`` → ``jc_count`` / ``JC_count``).
COUNT = "_count"


def counts_name(func: SparseFunction, assembly: Assembly) -> str:
    """The handle parameter of ``assembly``'s counts in the symbolic program."""
    taken = {p.name for p in func.params}
    name = assembly.axis.name.lower() + COUNT
    while name in taken:
        name += "_"
    return name


def symbolic_function(func: SparseFunction) -> SparseFunction:
    """The program that counts the coordinates of each row of every assembled axis of ``func``
    (a verified stage-I function with at least one)."""
    found = assemblies(func)
    if not found:
        raise ValueError(f"{func.name} has no assembled axis")
    axes = [a for a in func.axes if not a.assembled]
    needed = {v.name for a in axes for v in (a.indptr, a.indices) if v is not None} | _scalars_used(axes)
    params = [p for p in func.params if p.name in needed]
    buffers = []
    groups: list[list] = []  # axes one merge assembles share its count iteration
    for assembly in found:
        handle = tirx.Var(counts_name(func, assembly), "handle")
        rows = assembly.axis.parent
        counts = tirx.decl_buffer([rows.length], assembly.axis.idtype, name=f"{assembly.axis.name}{COUNT}")
        buffers.append(SparseBuffer(counts, [rows], handle, "global", None, assembly.axis.span))
        params.append(handle)
        group = next((g for g in groups if g[0][0].iteration.same_as(assembly.iteration)), None)
        if group is None:
            groups.append([(assembly, counts)])
        else:
            group.append((assembly, counts))
    body = [_count_iteration(group) for group in groups]
    attrs = dict(func.attrs)
    if "global_symbol" in attrs:
        attrs["global_symbol"] = f"{attrs['global_symbol']}_symbolic"
    return SparseFunction(func.name + "_symbolic", params, attrs, axes, buffers, body, func.span)


def _count_iteration(group: list) -> SparseIteration:
    """The iteration that counts, for each ``(assembly, counts)`` of one iteration, the
    coordinates its merge visits per row."""
    assembly = group[0][0]
    it, merge = assembly.iteration, assembly.merge
    entries, kinds, iters = [], "", []
    position = 0
    row = None
    for entry in it.axes:
        width = 1 if isinstance(entry, MergedAxis) else len(iter_axes(entry))
        own = list(it.iter_vars[position:position + width])
        entries.append(entry)
        iters.extend(own)
        if entry.same_as(merge):
            kinds += "R"
            break
        kinds += "S" * width
        for var, axis in zip(own, iter_axes(entry)):
            if axis.same_as(assembly.axis.parent):
                row = var
        position += width
    dtype = assembly.axis.idtype
    init = [tirx.BufferStore(counts, tirx.const(0, dtype), [row], span=it.span) for _, counts in group]
    step = [tirx.BufferStore(counts, tirx.BufferLoad(counts, [row]) + tirx.const(1, dtype), [row], span=it.span)
            for _, counts in group]
    return SparseIteration(it.name, entries, kinds, iters, init, step, dict(it.attrs), it.span)


def _scalars_used(axes: list) -> set[str]:
    """Names of the scalar parameters the axes' extents mention."""
    names: set[str] = set()

    def visit(node) -> bool:
        if isinstance(node, Var):
            names.add(node.name)
        return True

    for axis in axes:
        for expr in (axis.length, axis.nnz, axis.nnz_cols):
            if expr is not None:
                structural_walk(expr, visit)
    return names

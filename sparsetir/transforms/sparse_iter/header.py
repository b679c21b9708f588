"""Stage-II header: parameters, axes, structure and value buffers of a lowered function.

Every structure array (an axis's ``indptr`` or ``indices`` handle) becomes a position-space
buffer named after its axis (``J_indptr`` over ``[I]`` with one extra element, ``J_indices``
over ``[I, J_dense]``); every sparse axis gets a *dense twin* (``J_dense``) that indexes the
positions of its structure arrays. Value buffers keep their names, shaped by the axes' maximum
lengths. Parameters keep the stage-I order and count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..._tvm import Var, tirx
from ...ir.axis import DENSE_FIXED, DENSE_VARIABLE, Axis, make_axis
from ...ir.buffer import SparseBuffer
from ...ir.function import SparseFunction
from ...ir.stage2 import ALLOCATED, INDICES, INDPTR, VALUE, Stage2Buffer
from ...trace.spans import span_texts


@dataclass
class Header:
    """The stage-II signature and sparse metadata of one function."""

    params: list[Var]
    axes: dict[str, Axis]  # stage-I axis name -> stage-II axis
    axes_out: list[Axis]  # stage-II axes in order, dense twins after their axis
    values: dict[Any, Stage2Buffer]  # stage-I buffer var -> stage-II value buffer
    metadata: list[Stage2Buffer]  # value buffers, then structure buffers
    root_allocs: list[Var]  # buffers without a handle: allocated in the root block
    spans: dict[str, list[str]]  # allocated buffer name -> script lines

    @property
    def buffers(self) -> list[Var]:
        """Every buffer visible in the whole body: buffer parameters, then root allocations."""
        return [p for p in self.params if isinstance(p.ty, tirx.BufferType)] + list(self.root_allocs)

    def value_of(self, var: Any) -> Stage2Buffer:
        """The stage-II value buffer of a stage-I buffer var."""
        return self.values[var]

    def extent(self, axis: Axis, parent_row: list) -> Any:
        """The number of positions of ``axis`` in the row ``parent_row`` (a position vector)."""
        if not axis.is_variable:
            return axis.positions
        indptr = self.axes[axis.name].indptr
        end_row = parent_row[:-1] + [parent_row[-1] + 1]
        return tirx.BufferLoad(indptr, end_row) - tirx.BufferLoad(indptr, parent_row)

    def coord(self, axis: Axis, row: list) -> Any:
        """The coordinate at position vector ``row`` of ``axis`` (its last element, if dense)."""
        if axis.is_dense:
            return row[-1]
        return tirx.BufferLoad(self.axes[axis.name].indices, row)


def build_header(func: SparseFunction, fresh: Callable[[str], str]) -> Header:
    """The header of ``func``'s stage II; ``fresh`` gives generated names that no script name takes."""
    uses = _handle_uses(func)
    struct = _structure_buffers(uses, fresh)
    axes, twins, axes_out = _stage2_axes(func, struct, fresh)
    spans: dict[str, list[str]] = {}
    values: dict[Any, Stage2Buffer] = {}
    params = []
    for p in func.params:
        use = uses.get(p.name)
        if use is None:
            params.append(p)
        elif use[0] == VALUE:
            params.append(_value_buffer(use[1], axes, values, spans))
        else:
            params.append(struct[p.name])
    root_allocs = [_value_buffer(sb, axes, values, spans) for sb in func.buffers if sb.handle is None]
    metadata = [values[sb.buffer] for sb in func.buffers] + _structure_metadata(uses, struct, axes, twins)
    return Header(params, axes, axes_out, values, metadata, root_allocs, spans)


def _handle_uses(func: SparseFunction) -> dict[str, tuple[str, Any]]:
    """handle name -> (role, stage-I buffer or axis), the first use of each handle."""
    uses: dict[str, tuple[str, Any]] = {}
    for sb in func.buffers:
        if sb.handle is not None:
            uses.setdefault(sb.handle.name, (VALUE, sb))
    for axis in func.axes:
        if axis.indptr is not None:
            uses.setdefault(axis.indptr.name, (INDPTR, axis))
        if axis.indices is not None:
            uses.setdefault(axis.indices.name, (INDICES, axis))
    return uses


def _structure_buffers(uses: dict[str, tuple[str, Any]], fresh: Callable[[str], str]) -> dict[str, Var]:
    """handle name -> stage-II structure buffer (``J_indptr``, ``J_indices``)."""
    struct: dict[str, Var] = {}
    for handle, (role, axis) in uses.items():
        if role == INDPTR:
            dims = [a.positions for a in axis.ancestors()]
            dims[-1] = dims[-1] + 1
            struct[handle] = tirx.decl_buffer(dims, axis.idtype, name=fresh(f"{axis.name}_indptr"), layout=None)
        elif role == INDICES:
            dims = [a.positions for a in axis.ancestors()] + [axis.positions]
            struct[handle] = tirx.decl_buffer(dims, axis.idtype, name=fresh(f"{axis.name}_indices"), layout=None)
    return struct


def _stage2_axes(func: SparseFunction, struct: dict[str, Var], fresh: Callable[[str], str]):
    """(axes by stage-I name, dense twins by sparse axis name, all stage-II axes in order)."""
    axes: dict[str, Axis] = {}
    twins: dict[str, Axis] = {}
    out: list[Axis] = []
    for axis in func.axes:
        parent = axes[axis.parent.name] if axis.parent is not None else None
        indptr = struct[axis.indptr.name] if axis.indptr is not None else None
        indices = struct[axis.indices.name] if axis.indices is not None else None
        new = Axis(axis.name, axis.kind_name, parent, axis.length, axis.nnz, axis.nnz_cols, indptr, indices,
                   axis.idtype, axis.sorted, axis.span, axis.assembled)
        axes[axis.name] = new
        out.append(new)
        if axis.is_sparse:
            twin_parent = twins.get(axis.parent.name, axes[axis.parent.name]) if axis.parent is not None else None
            if axis.is_variable:
                twin = make_axis(fresh(axis.name + "_dense"), DENSE_VARIABLE, twin_parent, length=axis.length,
                                 nnz=axis.nnz, indptr=indptr, idtype=axis.idtype, span=axis.span)
            else:
                twin = make_axis(fresh(axis.name + "_dense"), DENSE_FIXED, length=axis.nnz_cols,
                                 idtype=axis.idtype, span=axis.span)
            twins[axis.name] = twin
            out.append(twin)
    return axes, twins, out


def _structure_metadata(uses, struct, axes, twins) -> list[Stage2Buffer]:
    """Metadata of the structure buffers: over the dense twins of the axes they describe."""

    def twin_chain(chain: list[Axis]) -> list[Axis]:
        return [twins.get(a.name, axes[a.name]) if a.is_sparse else axes[a.name] for a in chain]

    out = []
    for handle, (role, axis) in uses.items():
        if role == INDPTR:
            out.append(Stage2Buffer(struct[handle], twin_chain(axis.ancestors()), handle, tirx.const(1, "int32"),
                                    INDPTR, axis.span))
        elif role == INDICES:
            chain = twin_chain(axis.ancestors()) + [twins[axis.name]]
            out.append(Stage2Buffer(struct[handle], chain, handle, None, INDICES, axis.span))
    return out


def _value_buffer(sb: SparseBuffer, axes: dict[str, Axis], values: dict, spans: dict) -> Var:
    """The stage-II buffer of a stage-I sparse buffer, recorded in ``values`` (and ``spans``)."""
    dims = [a.positions for a in sb.axes]
    if sb.extra_storage is not None:
        dims[-1] = dims[-1] + sb.extra_storage
    if sb.handle is None:
        buf = tirx.decl_buffer(dims, sb.dtype, name=sb.name, scope=sb.scope or "global", layout=None)
    else:
        buf = tirx.decl_buffer(dims, sb.dtype, name=sb.name, layout=None)
    role = ALLOCATED if sb.handle is None else VALUE
    if role == ALLOCATED and sb.span is not None:
        spans[sb.name] = span_texts(sb.span)
    handle = sb.handle.name if sb.handle is not None else ""
    values[sb.buffer] = Stage2Buffer(buf, [axes[a.name] for a in sb.axes], handle, sb.extra_storage, role, sb.span)
    return buf

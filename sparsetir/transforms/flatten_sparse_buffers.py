"""FlattenSparseBuffers, the last pass of LowerSparseBuffer: stage II (position space) → stage III.

Each stage-II buffer becomes the parameter the caller passes (seed 002: parameters describe
exactly the arrays given), named by its stage-I handle:

- structure arrays (indptr, indices) are 1-D: ``indptr`` (rows + 1,), ``indices`` (nnz,);
- a value array collapses only its *sparse prefix* — every axis up to the last variable one —
  into one dimension of nnz positions and keeps the dense suffix (stage2.md §4): CSR values
  are (nnz,), BSR values (nnzb, blk, blk), a ragged (I, J, K) tensor (nnz, feat), ELL (m, c),
  and a dense (n, feat) buffer stays 2-D.

An array laid out by a sparse fixed axis (ELL) is accepted in two shapes: the values with the
axes up to the last sparse one collapsed to one dimension or not, ``(m * nnz_cols,)`` or
``(m, nnz_cols)``, and so its indices. The shape declared is the one above; the other is
recorded in the ``sparsetir.alt_shapes`` attribute, and the call boundary reshapes an array
given in it (``runtime/validate.py``).

Accesses are rewritten post-order with ``structural_map``; a position vector ``(p0, ..., pk)``
maps to ``indptr[flat] + p`` at a variable axis and ``flat * extent + p`` at a fixed one.
Point regions map to points; other regions cover the whole collapsed dimension. No aliasing
views are needed, because the parameters already have the partially flattened shapes.
Last, ``guard_accesses`` guards every access not provably inside its array.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from .._tvm import TensorLoad, TensorRegion, Var, structural_map, tirx, tvm
from ..errors import LoweringError
from ..ir.axis import Axis, after_sibling
from ..ir.stage2 import (ALLOCATED, ALT_SHAPES_ATTR, INDICES, INDPTR, NNZ_FROM_ATTR, VALUE, Stage2Buffer,
                         Stage2Function, partitions_of)

if TYPE_CHECKING:
    from .guard_accesses import ValueRange

Range = tvm.ir.Range
STAGE_III_LEVEL = 0


def flatten_sparse_buffers(f2: Stage2Function) -> tirx.PrimFunc:
    """A plain TVM ``s_tir`` PrimFunc over the caller's arrays, from a prepared stage-II function.

    "Prepared": ``auto_decompose_reduction`` and ``bound_cache_extents`` have run (the pipeline
    runs them just before this pass).
    """
    return _Flatten(f2).run()


def _last_variable(axes: list[Axis]) -> int:
    last = -1
    for k, a in enumerate(axes):
        if a.is_variable:
            last = k
    return last


def _product(exprs: list[Any]) -> Any:
    out = exprs[0]
    for e in exprs[1:]:
        out = out * e
    return out


class _Flatten:
    def __init__(self, f2: Stage2Function):
        self.f2 = f2
        self.info: dict[Any, tuple[Stage2Buffer, Var]] = {}  # stage-II var -> (meta, stage-III var)
        self.analyzer = tvm.sym.Analyzer()
        self.nnz_vars: dict[str, tuple[Axis, Var]] = {}  # axes without nnz: axis name -> (axis, size var)

    def _nnz(self, axis: Axis) -> Any:
        """The number of positions of variable ``axis``: its nnz, or for one that declares none
        (``T.dense_variable(I, n, indptr)``) a size variable, ``J_nnz``, that the array laid out
        by it binds (its length) and the call checks against the last entry of the indptr."""
        if axis.nnz is not None:
            return axis.nnz
        if axis.name not in self.nnz_vars:
            taken = set(self.f2.param_names) | {str(v.name) for _, v in self.nnz_vars.values()}
            name = f"{axis.name}_nnz"
            while name in taken:
                name += "_"
            self.nnz_vars[axis.name] = (axis, Var(name, axis.idtype))
        return self.nnz_vars[axis.name][1]

    def _count(self, axes: list[Axis]) -> Any:
        """Number of positions of the whole axis chain (flat)."""
        last = _last_variable(axes)
        if last >= 0:
            return _product([self._nnz(axes[last])] + [a.positions for a in axes[last + 1 :]])
        return _product([a.positions for a in axes])

    def _shape(self, meta: Stage2Buffer) -> list[Any]:
        axes = list(meta.axes)
        extra = meta.extra_storage
        if meta.role in (INDPTR, INDICES):
            count = self._count(axes)
            return [count + extra if extra is not None else count]
        last = _last_variable(axes)
        if last >= 0:
            nnz = self._nnz(axes[last])
            head = nnz + extra if extra is not None else nnz
            return [head] + [a.positions for a in axes[last + 1 :]]
        dims = [a.positions for a in axes]
        if extra is not None:
            dims[0] = dims[0] + extra
        return dims

    def _alt_shape(self, meta: Stage2Buffer) -> Optional[list[Any]]:
        """The other shape a caller may give an array laid out by a sparse fixed axis in, or None.

        Values keep a dimension per axis after the last variable one; the sparse fixed axes among
        them may also come collapsed with everything before them: ELL ``(m, c)`` or ``(m * c,)``.
        Indices are one dimension; they may also come shaped like values, ``(m, c)``.
        """
        axes = list(meta.axes)
        if meta.extra_storage is not None or meta.role not in (VALUE, INDICES):
            return None
        last = _last_variable(axes)
        head = [axes[last].nnz] if last >= 0 else []
        if any(h is None for h in head):
            return None
        by_axis = head + [a.positions for a in axes[last + 1:]]  # the values' shape
        if meta.role == INDICES:
            return by_axis if len(by_axis) > 1 else None
        sparse = max((k for k, a in enumerate(axes) if a.is_sparse), default=-1)
        collapsed = sparse - max(last, 0) + 1  # the dimensions up to the last sparse axis's
        if sparse <= last or collapsed < 2:
            return None
        return [_product(by_axis[:collapsed])] + by_axis[collapsed:]

    def run(self) -> tirx.PrimFunc:
        f2 = self.f2
        prim = f2.prim
        params = []
        alt_shapes: dict[str, list[str]] = {}
        for p, name in zip(prim.params, f2.param_names):
            meta = self._meta_of(p)
            if meta is None:
                params.append(p)
                continue
            new = tirx.decl_buffer(self._shape(meta), meta.dtype, name=name, layout=None)
            self.info[p] = (meta, new)
            params.append(new)
            alt = self._alt_shape(meta)
            if alt is not None:  # as text: see ALT_SHAPES_ATTR
                alt_shapes[name] = [str(self.analyzer.simplify(d)) for d in alt]
        flattened: list[tuple[Var, Var]] = []  # allocations over a variable axis: (stage II, stage III)
        for meta in f2.buffers:
            if meta.role == ALLOCATED:
                new = meta.buffer
                if _last_variable(list(meta.axes)) >= 0:
                    # Its positions are the variable axis's nnz (times the fixed axes after it),
                    # stored flat like a value array's: allocated by that total size.
                    new = tirx.decl_buffer(self._shape(meta), meta.dtype, name=meta.name,
                                           scope=meta.buffer.ty.storage_scope, layout=None)
                    flattened.append((meta.buffer, new))
                self.info[meta.buffer] = (meta, new)
        body = structural_map(
            prim.body,
            [(TensorLoad, self.on_load), (tirx.BufferStore, self.on_store), (TensorRegion, self.on_region)],
        )
        if flattened:  # what is left of the old buffers: the blocks' allocations
            body = structural_map(body, [(Var, lambda v: next((new for old, new in flattened if v.same_as(old)), v))])
        nnz_from = self._nnz_sources(params)
        out = tirx.PrimFunc(params, body, prim.ret_type)
        from .guard_accesses import guard_accesses  # here: it reads sparse_iter, which imports the pipeline

        out = guard_accesses(out, self._checked_values(), allocated=[new for _, new in flattened])
        attrs = dict(prim.attrs) if prim.attrs is not None else {}
        attrs["sparse_tir_level"] = STAGE_III_LEVEL
        if alt_shapes:
            attrs[ALT_SHAPES_ATTR] = alt_shapes
        if nnz_from:
            attrs[NNZ_FROM_ATTR] = nnz_from
        for key, value in attrs.items():
            out = out.with_attr(key, value)
        return out

    def _nnz_sources(self, params: list[Var]) -> dict[str, str]:
        """{size variable: the indptr parameter whose last entry it is} for the axes that declare
        no nnz; each variable must be the length of an array parameter, which binds it."""
        sources = {}
        for axis, var in self.nnz_vars.values():
            indptr = str(self._indptr3(axis).name)
            if not any(isinstance(p.ty, tirx.BufferType) and any(d.same_as(var) for d in p.ty.shape) for p in params):
                raise LoweringError(
                    f"axis '{axis.name}' declares no nnz, and no array laid out by it gives its number of positions; "
                    f"declare it: T.dense_variable({axis.parent.name}, ({axis.length}, nnz), {indptr})")
            sources[str(var.name)] = indptr
        return sources

    def _checked_values(self) -> dict[Any, ValueRange]:
        """The ranges the argument checks (``driver.constraints_of``) give the elements of the
        structure arrays: an indptr in ``[0, nnz]``, indices in ``[0, length)``, a row-partition
        array in ``[0, rows]``."""
        from .guard_accesses import ValueRange

        values: dict[Any, ValueRange] = {}
        for meta, new in self.info.values():
            for axis in self.f2.axes:
                if meta.role == INDPTR and axis.is_variable and axis.indptr.same_as(meta.buffer) \
                        and (axis.nnz is not None or axis.name in self.nnz_vars):
                    nnz = self._nnz(axis)
                    values[new] = ValueRange(_zero(nnz), nnz)
                    break
                if meta.role == INDICES and axis.is_sparse and axis.indices.same_as(meta.buffer):
                    values[new] = ValueRange(_zero(axis.length), axis.length - 1)
                    break
        by_name = {str(p.name): p for p in self.f2.prim.params}
        for parts, _, extent, _ in partitions_of(self.f2.prim.attrs):
            end = tirx.const(int(extent), "int32") if extent.isdigit() else by_name.get(extent)
            if parts in by_name and end is not None:
                values[by_name[parts]] = ValueRange(_zero(end), end)
        return values

    def _meta_of(self, var: Any) -> Optional[Stage2Buffer]:
        for meta in self.f2.buffers:
            if meta.buffer.same_as(var):
                return meta
        return None

    def _lookup(self, var: Any) -> Optional[tuple[Stage2Buffer, Var]]:
        for key, value in self.info.items():
            if key.same_as(var):
                return value
        return None

    def _indptr3(self, axis: Axis) -> Var:
        found = self._lookup(axis.indptr)
        if found is None:
            raise LoweringError(f"the indptr of axis '{axis.name}' is not a parameter")
        return found[1]

    def _flat(self, axes: list[Axis], indices: list[Any]) -> Any:
        flat = None
        flats: list[Any] = []  # the position after each axis
        for k, (axis, p) in enumerate(zip(axes, indices)):
            if k == 0:
                if axis.is_variable:
                    raise LoweringError(f"a buffer cannot start with variable axis '{axis.name}'")
                flat = p
            elif axis.is_variable and after_sibling(axes, k):
                # The parent row's block (from the axis's indptr), split evenly among the rows
                # of the sibling before it: (B, I, IJ)'s X[b, i, j] is at
                # IJ_indptr[b] + i * (block of b // rows of I in b) + j.
                row = flats[k - 2]
                ptr, sibling = self._indptr3(axis), self._indptr3(axes[k - 1])
                start = tirx.BufferLoad(ptr, [row])
                block = tirx.BufferLoad(ptr, [row + 1]) - start
                rows = tirx.BufferLoad(sibling, [row + 1]) - tirx.BufferLoad(sibling, [row])
                width = tirx.floordiv(block, tirx.max(rows, tirx.const(1, str(rows.ty.dtype))))
                flat = start + indices[k - 1] * width + p
            elif axis.is_variable:
                flat = tirx.BufferLoad(self._indptr3(axis), [flat]) + p
            else:
                flat = flat * axis.positions + p
            flats.append(flat)
        # Canonical form, so that TVMScript prints and parses the index back to the same tree.
        return self.analyzer.simplify(flat)

    def new_indices(self, meta: Stage2Buffer, indices: list[Any]) -> list[Any]:
        axes = list(meta.axes)
        if meta.role == ALLOCATED and _last_variable(axes) < 0:
            return indices
        if meta.role in (INDPTR, INDICES):
            return [self._flat(axes, indices)]
        last = _last_variable(axes)
        if last < 0:
            return indices
        return [self._flat(axes[: last + 1], indices[: last + 1])] + list(indices[last + 1 :])

    def on_load(self, load: Any) -> Any:
        found = self._lookup(load.source)
        if found is None:
            return load
        meta, new = found
        return tirx.BufferLoad(new, self.new_indices(meta, list(load.indices)), span=load.span)

    def on_store(self, store: Any) -> Any:
        found = self._lookup(store.buffer)
        if found is None:
            return store
        meta, new = found
        return tirx.BufferStore(new, store.value, self.new_indices(meta, list(store.indices)), span=store.span)

    def on_region(self, region: Any) -> Any:
        found = self._lookup(region.source)
        if found is None:
            return region
        meta, new = found
        ranges = list(region.region)
        axes = list(meta.axes)
        if meta.role == ALLOCATED and _last_variable(axes) < 0:
            return region
        if meta.role in (INDPTR, INDICES):
            collapse = len(axes)
        else:
            last = _last_variable(axes)
            collapse = last + 1 if last >= 0 else 0
        shape = list(new.ty.shape)
        if collapse == 0:
            return tirx.BufferRegion(new, ranges)
        head = ranges[:collapse]
        if all(_is_one(r.extent) for r in head):
            flat = self._flat(axes[:collapse], [r.min for r in head])
            return tirx.BufferRegion(new, [Range.from_min_extent(flat, 1)] + ranges[collapse:])
        return tirx.BufferRegion(new, [Range.from_min_extent(0, shape[0])] + ranges[collapse:])


def _zero(like: Any) -> Any:
    return tirx.const(0, str(like.ty.dtype))


def _is_one(expr: Any) -> bool:
    return isinstance(expr, tirx.IntImm) and int(expr.value) == 1

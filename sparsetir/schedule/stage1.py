"""Stage-I schedule primitives (RFC D2): they rewrite sparse iterations, never loops.

Each primitive is a pure function ``SparseFunction -> SparseFunction`` that names the sparse
iteration it changes; the ``Schedule`` object records them. The result is verified, so a
primitive can never produce an invalid program.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .._tvm import TensorLoad, Var, structural_walk, tirx, tvm
from ..errors import ScheduleError
from ..ir.analysis import same_indices, uses_var
from ..ir.axis import AttachedAxis, Axis, FusedAxis, MergedAxis, dense_fixed
from ..ir.function import SparseFunction
from ..ir.iteration import SparseIteration
from ..ir.verifier import verify
from ..transforms.sparse_iter.context import substitute


def find_iteration(func: SparseFunction, name: str) -> SparseIteration:
    """The sparse iteration called ``name`` anywhere in ``func``."""
    found: list[SparseIteration] = []

    def walk(stmts: Sequence[Any]) -> None:
        for stmt in stmts:
            if isinstance(stmt, SparseIteration):
                if stmt.name == name:
                    found.append(stmt)
                walk(stmt.body)

    walk(func.body)
    if not found:
        names = ", ".join(iteration_names(func)) or "none"
        raise ScheduleError(f"{func.name} has no sparse iteration named '{name}' (it has: {names})")
    return found[0]


def iteration_names(func: SparseFunction) -> list[str]:
    """Names of every sparse iteration, outermost first."""
    out: list[str] = []

    def walk(stmts: Sequence[Any]) -> None:
        for stmt in stmts:
            if isinstance(stmt, SparseIteration):
                out.append(stmt.name)
                walk(stmt.body)

    walk(func.body)
    return out


def replace_iteration(
    func: SparseFunction, name: str, rewrite: Callable[[SparseIteration], SparseIteration]
) -> SparseFunction:
    """``func`` with the iteration ``name`` replaced by ``rewrite(it)``, then verified."""
    find_iteration(func, name)

    def walk(stmts: Sequence[Any]) -> list[Any]:
        out = []
        for stmt in stmts:
            if isinstance(stmt, SparseIteration):
                stmt = rewrite(stmt) if stmt.name == name else _replace(stmt, body=walk(stmt.body))
            out.append(stmt)
        return out

    new = SparseFunction(func.name, list(func.params), dict(func.attrs), list(func.axes), list(func.buffers), walk(func.body), func.span)
    try:
        return verify(new)
    except ScheduleError:
        raise
    except Exception as err:
        raise ScheduleError(f"the schedule step would make an invalid program: {err}") from err


def _replace(it: SparseIteration, **changes: Any) -> SparseIteration:
    """A copy of ``it`` with some fields changed (py_class nodes are frozen)."""
    fields = dict(name=it.name, axes=list(it.axes), kinds=it.kinds, iter_vars=list(it.iter_vars), init=it.init, body=list(it.body), attrs=dict(it.attrs), span=it.span)
    fields.update(changes)
    return SparseIteration(**fields)


def _entry_axes(entry: Any) -> list[Axis]:
    if isinstance(entry, FusedAxis):
        return list(entry.axes)
    if isinstance(entry, AttachedAxis):
        return [entry.axis]
    return [entry]


def _entry_name(entry: Any) -> str:
    return "+".join(a.name for a in _entry_axes(entry))


def _split_entries(it: SparseIteration) -> list[tuple[Any, str, list[Var]]]:
    """(entry, kinds, iterators) for each entry of the iteration's axis list."""
    out = []
    pos = 0
    for entry in it.axes:
        count = len(_entry_axes(entry))
        out.append((entry, it.kinds[pos : pos + count], list(it.iter_vars[pos : pos + count])))
        pos += count
    return out


def _refuse_merged(it: SparseIteration, primitive: str) -> None:
    """Reordering and fusing do not know co-iteration yet: a merge's position is a pointer walk,
    not a loop over an axis, so neither rewrite would keep its meaning."""
    merged = next((e for e in it.axes if isinstance(e, MergedAxis)), None)
    if merged is not None:
        axes = ", ".join(a.name for a in merged.axes)
        raise ScheduleError(f"{primitive}: sparse iteration '{it.name}' co-iterates T.{merged.op}({axes}), which "
                            f"{primitive} does not support")


def _axis_name(axis: Any) -> str:
    return axis if isinstance(axis, str) else axis.name


def sparse_reorder(func: SparseFunction, iteration: str, order: Sequence[Any]) -> SparseFunction:
    """Reorder the axes of a sparse iteration; ``order`` names every axis (or fused group) once.

    A dependent axis must still follow its parent, so ``[J, I]`` for a CSR ``J`` is refused.
    """
    it = find_iteration(func, iteration)
    _refuse_merged(it, "sparse_reorder")
    entries = _split_entries(it)
    by_name = {_entry_name(e): (e, k, v) for e, k, v in entries}
    wanted = [_axis_name(a) if not isinstance(a, FusedAxis) else _entry_name(a) for a in order]
    if sorted(wanted) != sorted(by_name):
        raise ScheduleError(
            f"sparse_reorder of '{iteration}' must list each of its axes once: expected a permutation of [{', '.join(by_name)}], got [{', '.join(wanted)}]"
        )
    placed: list[Axis] = []
    for name in wanted:
        entry = by_name[name][0]
        parent = entry.new_parent if isinstance(entry, AttachedAxis) else _entry_axes(entry)[0].parent
        inner_names = {a.name for a in _entry_axes(entry)}
        if parent is not None and parent.name in {e for e in by_name} - inner_names and not any(p.same_as(parent) for p in placed):
            raise ScheduleError(f"sparse_reorder: axis '{name}' depends on '{parent.name}', which must come before it")
        placed.extend(_entry_axes(entry))
    new_entries = [by_name[n] for n in wanted]

    def rewrite(it: SparseIteration) -> SparseIteration:
        return _replace(
            it,
            axes=[e for e, _, _ in new_entries],
            kinds="".join(k for _, k, _ in new_entries),
            iter_vars=[v for _, _, vs in new_entries for v in vs],
        )

    return replace_iteration(func, iteration, rewrite)


def sparse_fuse(func: SparseFunction, iteration: str, axes: Sequence[Any]) -> SparseFunction:
    """Fuse adjacent axes of a sparse iteration into one loop (TACO's ``collapse``).

    The axes must be consecutive in the iteration, each the parent of the next (fusing I and the
    CSR axis J under it iterates all nonzeros in one loop), and of the same iterator kind.
    """
    it = find_iteration(func, iteration)
    _refuse_merged(it, "sparse_fuse")
    names = [_axis_name(a) for a in axes]
    if len(names) < 2:
        raise ScheduleError("sparse_fuse needs two or more axes")
    entries = _split_entries(it)
    plain = [_entry_name(e) for e, _, _ in entries]
    missing = [n for n in names if n not in plain]
    if missing:
        raise ScheduleError(f"sparse_fuse: '{missing[0]}' is not an unfused axis of sparse iteration '{iteration}' (axes: {', '.join(plain)})")
    start = plain.index(names[0])
    if plain[start : start + len(names)] != names:
        raise ScheduleError(f"sparse_fuse: axes [{', '.join(names)}] are not consecutive in '{iteration}'; reorder them first")
    group = entries[start : start + len(names)]
    chain = [e for e, _, _ in group]
    for outer, inner in zip(chain, chain[1:]):
        if isinstance(outer, (FusedAxis, AttachedAxis)) or isinstance(inner, (FusedAxis, AttachedAxis)):
            raise ScheduleError("sparse_fuse: fused or attached entries cannot be fused again")
        if inner.parent is None or not inner.parent.same_as(outer):
            raise ScheduleError(f"sparse_fuse: '{inner.name}' is not a child of '{outer.name}'; only an axis and its descendants can be fused")
    kinds = {k for _, k, _ in group}
    if len(kinds) != 1:
        raise ScheduleError("sparse_fuse: fused axes must all be spatial or all be reductions")

    def rewrite(it: SparseIteration) -> SparseIteration:
        fused = FusedAxis(list(chain), None)
        new_axes = [e for e, _, _ in entries[:start]] + [fused] + [e for e, _, _ in entries[start + len(names) :]]
        return _replace(it, axes=new_axes)

    return replace_iteration(func, iteration, rewrite)


def annotate_sparse_iter(func: SparseFunction, iteration: str, key: str, value: Any) -> SparseFunction:
    """Attach ``key: value`` to a sparse iteration's attributes (``T.sp_iter_attr``)."""
    if not isinstance(key, str) or not key:
        raise ScheduleError("annotate_sparse_iter: the key must be a non-empty string")
    if not isinstance(value, (bool, int, float, str)):
        raise ScheduleError(f"annotate_sparse_iter: the value must be a str, int, float or bool, got {type(value).__name__}")

    def rewrite(it: SparseIteration) -> SparseIteration:
        attrs = dict(it.attrs)
        attrs[key] = value
        return _replace(it, attrs=attrs)

    return replace_iteration(func, iteration, rewrite)


def sparse_split(func: SparseFunction, iteration: str, axis: Any, at: Optional[int] = None,
                 multiple_of: Optional[int] = None) -> SparseFunction:
    """Split a sparse iteration into two consecutive ones: over coordinates ``[0, at)`` of its
    dense axis ``axis`` and over ``[at, extent)`` (named ``<iteration>_tail``, its iterator
    offset by ``at``). ``multiple_of=N`` instead of ``at`` splits after the largest multiple of
    ``N`` that fits, which also works for an extent known only at run time (a width parameter):
    the first part's extent ``extent - extent % N`` is then a multiple of ``N`` that the
    schedule can tile, the second part's ``extent % N``.

    The axis must be a dense fixed axis that the iteration runs as a spatial axis with no axis
    under it, and every statement must store at a coordinate of that axis and read what the
    iteration stores only where it stores it: then each coordinate's computation is independent
    of the others, and running the two ranges one after the other computes the same values.
    This gives an awkward feature width (500) a part of whole vectors and a tail, each with a
    tile of its own, where one tile for all of it would use narrow vectors.
    """
    it = find_iteration(func, iteration)
    name = _axis_name(axis)
    flat = it.flat_axes()
    index = next((k for k, a in enumerate(flat) if a.name == name), None)
    if index is None:
        raise ScheduleError(f"sparse_split: '{name}' is not an axis of sparse iteration '{iteration}'")
    target = flat[index]
    if any(isinstance(e, (FusedAxis, AttachedAxis)) and target.name in {a.name for a in _entry_axes(e)} for e in it.axes):
        raise ScheduleError(f"sparse_split: axis '{name}' is fused or attached in '{iteration}'")
    if target.kind.value != "dense_fixed":
        raise ScheduleError(f"sparse_split: axis '{name}' is not a dense fixed axis")
    dtype = str(target.length.ty.dtype)
    if (at is None) == (multiple_of is None):
        raise ScheduleError("sparse_split: give the split point (at) or the multiple to split after (multiple_of)")
    if at is not None:
        if not isinstance(target.length, tirx.IntImm):
            raise ScheduleError(f"sparse_split: axis '{name}' has no constant extent to split at {at!r}; "
                                "use multiple_of")
        extent = int(target.length.value)
        if isinstance(at, bool) or not isinstance(at, int) or not 0 < at < extent:
            raise ScheduleError(f"sparse_split: the split point must be an integer in (0, {extent}), got {at!r}")
        head_length, tail_length, offset = tirx.IntImm(dtype, at), tirx.IntImm(dtype, extent - at), tirx.IntImm(dtype, at)
    else:
        if isinstance(multiple_of, bool) or not isinstance(multiple_of, int) or multiple_of < 2:
            raise ScheduleError(f"sparse_split: multiple_of must be an integer of at least 2, got {multiple_of!r}")
        analyzer = tvm.sym.Analyzer()
        step = tirx.IntImm(dtype, multiple_of)
        head_length = analyzer.simplify(tirx.floordiv(target.length, step) * step)
        tail_length = analyzer.simplify(target.length - head_length)
        offset = head_length
        if isinstance(head_length, tirx.IntImm) and int(head_length.value) == 0 or \
                isinstance(tail_length, tirx.IntImm) and int(tail_length.value) == 0:
            raise ScheduleError(f"sparse_split: axis '{name}' of extent {target.length} splits into an empty part "
                                f"after a multiple of {multiple_of}")
    if it.kinds[index] != "S":
        raise ScheduleError(f"sparse_split: axis '{name}' is a reduction in '{iteration}'; only a spatial axis splits")
    if any(a.parent is not None and a.parent.same_as(target) for a in flat):
        raise ScheduleError(f"sparse_split: axis '{name}' has an axis under it in '{iteration}'")
    var = it.iter_vars[index]
    _check_independent_columns(it, var, iteration, name)
    outer = _enclosing(func, iteration)
    if outer is not None and it.init is not None:
        # Both parts would reduce into the same buffer inside the outer iteration's block; TVM
        # decomposes a reduction only where one block writes its buffer there.
        raise ScheduleError(f"sparse_split: '{iteration}' reduces inside the sparse iteration '{outer}'; its two "
                            "parts would both write the reduced buffer in one block, which TVM cannot lower "
                            "(split an iteration that is not nested in another)")
    taken = {a.name for a in func.axes}
    head = dense_fixed(_fresh(f"{name}_head", taken), head_length, target.idtype, target.span)
    taken.add(head.name)
    tail = dense_fixed(_fresh(f"{name}_tail", taken), tail_length, target.idtype, target.span)
    tail_name = _fresh(f"{iteration}_tail", set(iteration_names(func)))

    def copy_with(new_axis: Axis, shift: Any, new_name: str) -> SparseIteration:
        axes = [new_axis if not isinstance(e, (FusedAxis, AttachedAxis)) and e.same_as(target) else e for e in it.axes]
        fresh = [Var(v.name, v.ty) for v in it.iter_vars]
        mapping = [(old, new) for old, new in zip(it.iter_vars, fresh) if not old.same_as(var)]
        moved = fresh[index] + tirx.Cast(str(var.ty.dtype), shift) if shift is not None else fresh[index]
        mapping.append((var, tvm.sym.Analyzer().simplify(moved)))
        init = [substitute(st, mapping) for st in it.init] if it.init is not None else None
        return _replace(it, name=new_name, axes=axes, iter_vars=fresh, init=init,
                        body=[substitute(st, mapping) for st in it.body])

    pair = [copy_with(head, None, iteration), copy_with(tail, offset, tail_name)]

    def walk(stmts: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for stmt in stmts:
            if isinstance(stmt, SparseIteration) and stmt.name == iteration:
                out.extend(pair)
            elif isinstance(stmt, SparseIteration):
                out.append(_replace(stmt, body=walk(stmt.body)))
            else:
                out.append(stmt)
        return out

    position = next(k for k, a in enumerate(func.axes) if a.same_as(target)) + 1
    axes = list(func.axes[:position]) + [head, tail] + list(func.axes[position:])
    body = walk(func.body)
    if not _axis_used(target, func.buffers, body):  # an axis an earlier split made: nothing else uses it
        axes = [a for a in axes if not a.same_as(target)]
    new = SparseFunction(func.name, list(func.params), dict(func.attrs), axes, list(func.buffers), body, func.span)
    try:
        return verify(new)
    except Exception as err:
        raise ScheduleError(f"the schedule step would make an invalid program: {err}") from err


def _enclosing(func: SparseFunction, name: str) -> Optional[str]:
    """The name of the sparse iteration whose body holds the iteration ``name`` (None at the top)."""
    parents: dict[str, Optional[str]] = {}

    def walk(stmts: Sequence[Any], parent: Optional[str]) -> None:
        for stmt in stmts:
            if isinstance(stmt, SparseIteration):
                parents[stmt.name] = parent
                walk(stmt.body, stmt.name)

    walk(func.body, None)
    return parents.get(name)


def _axis_used(axis: Axis, buffers: Sequence[Any], body: Sequence[Any]) -> bool:
    """Whether a buffer is laid out by ``axis`` or an iteration in ``body`` runs over it."""
    if any(any(a.same_as(axis) for a in b.axes) for b in buffers):
        return True

    def used(stmts: Sequence[Any]) -> bool:
        return any(isinstance(st, SparseIteration) and (any(a.same_as(axis) for a in st.flat_axes()) or used(st.body))
                   for st in stmts)

    return used(body)


def _check_independent_columns(it: SparseIteration, var: Var, iteration: str, axis: str) -> None:
    """Refuse unless every statement of ``it`` stores at a coordinate given by ``var`` and reads a
    buffer the iteration stores only at exactly the stored indices."""
    stmts = list(it.init or []) + list(it.body)
    stores: dict[str, list[Any]] = {}
    for st in stmts:
        if not isinstance(st, tirx.BufferStore):
            raise ScheduleError(f"sparse_split: '{iteration}' holds a {type(st).__name__}; only stores split")
        if not any(uses_var(i, var) for i in st.indices):
            raise ScheduleError(f"sparse_split: a store of '{iteration}' does not depend on axis '{axis}'")
        stores.setdefault(str(st.buffer.name), []).append(st.indices)
    for st in stmts:
        loads: list[Any] = []
        structural_walk(st.value, lambda n: loads.append(n) if isinstance(n, TensorLoad) else None)
        for load in loads:
            written = stores.get(str(load.source.name))
            if written is not None and not all(same_indices(load.indices, w) for w in written):
                raise ScheduleError(f"sparse_split: '{iteration}' reads '{load.source.name}' where it does not store it")


def _fresh(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}{n}"
    return candidate


# compute_at.py builds on the helpers above, so it is imported once they exist.
from .compute_at import sparse_compute_at  # noqa: E402

STAGE1_PRIMITIVES: dict[str, Callable[..., SparseFunction]] = {
    "sparse_reorder": sparse_reorder,
    "sparse_fuse": sparse_fuse,
    "sparse_split": sparse_split,
    "annotate_sparse_iter": annotate_sparse_iter,
    "sparse_compute_at": sparse_compute_at,
}

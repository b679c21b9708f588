"""Stage-I schedule primitives (RFC D2): they rewrite sparse iterations, never loops.

Each primitive is a pure function ``SparseFunction -> SparseFunction`` that names the sparse
iteration it changes; the ``Schedule`` object records them. The result is verified, so a
primitive can never produce an invalid program.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .._tvm import Var
from ..errors import ScheduleError
from ..ir.axis import AttachedAxis, Axis, FusedAxis
from ..ir.function import SparseFunction
from ..ir.iteration import SparseIteration
from ..ir.verifier import verify


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


def _axis_name(axis: Any) -> str:
    return axis if isinstance(axis, str) else axis.name


def sparse_reorder(func: SparseFunction, iteration: str, order: Sequence[Any]) -> SparseFunction:
    """Reorder the axes of a sparse iteration; ``order`` names every axis (or fused group) once.

    A dependent axis must still follow its parent, so ``[J, I]`` for a CSR ``J`` is refused.
    """
    it = find_iteration(func, iteration)
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


STAGE1_PRIMITIVES: dict[str, Callable[..., SparseFunction]] = {
    "sparse_reorder": sparse_reorder,
    "sparse_fuse": sparse_fuse,
    "annotate_sparse_iter": annotate_sparse_iter,
}

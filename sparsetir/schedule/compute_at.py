"""``sparse_compute_at``: run a producer iteration inside its consumer's loop over an axis.

The stage-I counterpart of TVM's ``compute_at`` (seed 000 names it among the stage-I primitives
to come). Loops do not exist at stage I, so the consumer's loop over an axis is made explicit:
the consumer ``C`` over ``[I, J, K]`` computed at ``I`` becomes an iteration ``C_outer`` over
``[I]`` whose body is the producer restricted to row ``i`` (over its remaining axes) followed by
``C`` over ``[J, K]``. Lowering turns that into one loop over ``I`` holding both loop nests::

    with T.sp_iter([I, J], "SS", "scale") as [i, j]:          with T.sp_iter([I], "S", "spmm_outer") as [i]:
        S[i, j] = A[i, j] * T.float32(2)                          with T.sp_iter([J], "S", "scale") as [j]:
    with T.sp_iter([I, J, K], "SRS", "spmm") as [i, j, k]:  ->         S[i, j] = A[i, j] * T.float32(2)
        with T.init():                                            with T.sp_iter([J, K], "RS", "spmm") as [j, k]:
            C[i, k] = T.float32(0)                                    with T.init():
        C[i, k] = C[i, k] + S[i, j] * B[j, k]                             C[i, k] = T.float32(0)
                                                                      C[i, k] = C[i, k] + S[i, j] * B[j, k]
"""

from __future__ import annotations

from typing import Any, Sequence

from .._tvm import TensorLoad, Var, structural_walk, tirx
from ..errors import ScheduleError
from ..ir.axis import Axis
from ..ir.function import SparseFunction
from ..ir.iteration import SPATIAL, SparseIteration
from ..ir.verifier import verify
from ..transforms.sparse_iter.context import substitute
from .stage1 import _axis_name, _fresh, _replace, find_iteration, iteration_names


def sparse_compute_at(func: SparseFunction, iteration: str, target_iteration: str, axis: Any) -> SparseFunction:
    """Compute the producer ``iteration`` inside ``target_iteration``'s loop over ``axis``.

    ``axis`` and the consumer's axes before it (its *prefix*) must be plain spatial axes of the
    consumer, and the producer's first axes must be the same axes, spatial, in the same order:
    the producer's work at one prefix point (its slice there) then runs in the consumer's loop
    just before the consumer's work at that point, the producer over its remaining axes (with
    none left, its stores go there directly). The consumer keeps its name, its init and its
    remaining axes; the loop over the prefix is the new iteration ``<consumer>_outer``.

    Refused, naming both iterations and the axis, unless the result is the same: the two must
    be in the same body, the producer first, with nothing between them touching what the
    producer writes or writing what it reads; the consumer must read something the producer
    writes, and only at the prefix point it is at (each prefix iterator of the producer's stores
    of that buffer and the consumer's accesses at the same index), so no slice is read before it
    is computed; the consumer must not write what the producer reads or writes.
    """
    name = _axis_name(axis)
    what = f"sparse_compute_at of '{iteration}' at axis '{name}' of '{target_iteration}'"
    producer = find_iteration(func, iteration)
    consumer = find_iteration(func, target_iteration)
    if iteration == target_iteration:
        raise ScheduleError(f"{what}: an iteration cannot be computed inside itself")
    flat = [(e.name if isinstance(e, Axis) else None) for e in consumer.axes]
    if name not in flat:
        names = ", ".join(a.name for a in consumer.flat_axes())
        raise ScheduleError(f"{what}: '{target_iteration}' does not iterate axis '{name}' as an axis of its own "
                            f"(its axes: {names})")
    depth = flat.index(name) + 1
    prefix = list(consumer.axes[:depth])
    if not all(isinstance(e, Axis) for e in prefix):
        raise ScheduleError(f"{what}: the axes of '{target_iteration}' up to '{name}' must be unfused")
    reduced = [a.name for a, k in zip(prefix, consumer.kinds) if k != SPATIAL]
    if reduced:
        raise ScheduleError(f"{what}: '{target_iteration}' reduces over '{reduced[0]}'; only under spatial axes is "
                            "each slice of the producer used by one point of the consumer")
    head = list(producer.axes[:depth])
    if len(producer.axes) < depth or not all(isinstance(e, Axis) and e.same_as(a) for e, a in zip(head, prefix)):
        want = ", ".join(a.name for a in prefix)
        raise ScheduleError(f"{what}: '{iteration}' must start with the axes [{want}] (those of '{target_iteration}' "
                            f"up to '{name}'), unfused and in that order")
    if producer.kinds[:depth] != SPATIAL * depth:
        raise ScheduleError(f"{what}: '{iteration}' reduces over an axis up to '{name}'")
    body, position = _common_body(func, producer, consumer, what)
    between = body[position[0] + 1 : position[1]]
    _check_dependences(func, producer, consumer, between, depth, what)

    outer_vars = list(consumer.iter_vars[:depth])
    moved = _restrict(producer, depth, outer_vars, {v.name for v in outer_vars})
    inner = _inner(consumer, depth)
    outer_name = _fresh(f"{target_iteration}_outer", set(iteration_names(func)))
    outer = SparseIteration(outer_name, prefix, SPATIAL * depth, outer_vars, None, moved + inner, {}, consumer.span)

    def walk(stmts: Sequence[Any]) -> list[Any]:
        names = [st.name for st in stmts if isinstance(st, SparseIteration)]
        if iteration in names and target_iteration in names:  # the body holding both (names are unique)
            return list(stmts[: position[0]]) + list(between) + [outer] + list(stmts[position[1] + 1 :])
        return [_replace(st, body=walk(st.body)) if isinstance(st, SparseIteration) else st for st in stmts]

    new = SparseFunction(func.name, list(func.params), dict(func.attrs), list(func.axes), list(func.buffers),
                         walk(func.body), func.span)
    try:
        return verify(new)
    except Exception as err:
        raise ScheduleError(f"{what} would make an invalid program: {err}") from err


def _common_body(func: SparseFunction, producer: SparseIteration, consumer: SparseIteration,
                 what: str) -> tuple[list[Any], tuple[int, int]]:
    """The statement list holding both iterations, and their positions in it (producer first)."""
    found = _positions_by_name(func.body, producer.name, consumer.name)
    if found is None:
        raise ScheduleError(f"{what}: the two iterations are not in the same body")
    body, (p, c) = found
    if p > c:
        raise ScheduleError(f"{what}: '{producer.name}' comes after '{consumer.name}'; only an earlier iteration "
                            "moves into a later one")
    return body, (p, c)


def _positions_by_name(stmts: Sequence[Any], producer: str, consumer: str) -> Any:
    """(body, (producer position, consumer position)) by iteration name, or None."""
    stmts = list(stmts)
    names = [st.name if isinstance(st, SparseIteration) else None for st in stmts]
    if producer in names and consumer in names:
        return stmts, (names.index(producer), names.index(consumer))
    for st in stmts:
        if isinstance(st, SparseIteration):
            found = _positions_by_name(st.body, producer, consumer)
            if found is not None:
                return found
    return None


def _accesses(stmts: Sequence[Any]) -> tuple[list[tuple[str, list[Any]]], list[tuple[str, list[Any]]], bool]:
    """(stores, loads, opaque) of some statements, nested iterations and inits included: each
    access as (buffer name, indices); ``opaque`` when a ``T.evaluate`` may do anything."""
    stores: list[tuple[str, list[Any]]] = []
    loads: list[tuple[str, list[Any]]] = []
    opaque = [False]

    def visit(node: Any) -> bool:
        if isinstance(node, tirx.BufferStore):
            stores.append((str(node.buffer.name), list(node.indices)))
        elif isinstance(node, TensorLoad):
            loads.append((str(node.source.name), list(node.indices)))
        elif isinstance(node, tirx.Evaluate):
            opaque[0] = True
        return True

    for st in stmts:
        structural_walk(st, visit)
    return stores, loads, opaque[0]


def _statements(it: SparseIteration) -> list[Any]:
    return list(it.init or []) + list(it.body)


def _storage(func: SparseFunction) -> dict[str, str]:
    """Each buffer's name to the name of the buffer whose data it is: a view (``T.decl_buffer``)
    shares its data's, so accesses through it are accesses of that buffer."""
    out = {}
    for b in func.buffers:
        data = next((x for x in func.buffers if b.view_of is not None and x.buffer.same_as(b.view_of)), b)
        out[b.name] = data.name
    return out


def _check_dependences(func: SparseFunction, producer: SparseIteration, consumer: SparseIteration,
                       between: Sequence[Any], depth: int, what: str) -> None:
    """Refuse unless computing each slice of the producer just before the consumer's work at the
    same prefix point gives what computing all of it first gave (see ``sparse_compute_at``)."""
    storage = _storage(func)
    p_stores, p_loads, p_opaque = _accesses(_statements(producer))
    c_stores, c_loads, c_opaque = _accesses(_statements(consumer))
    if p_opaque or c_opaque:
        raise ScheduleError(f"{what}: a T.evaluate in '{producer.name if p_opaque else consumer.name}' may do anything; "
                            "it cannot be reordered")
    written = {storage.get(b, b) for b, _ in p_stores}
    read = {storage.get(b, b) for b, _ in p_loads}
    for st in between:
        o_stores, o_loads, opaque = _accesses([st])
        label = st.name if isinstance(st, SparseIteration) else type(st).__name__
        touched = {storage.get(b, b) for b, _ in o_stores + o_loads}
        if opaque or touched & written or {storage.get(b, b) for b, _ in o_stores} & read:
            raise ScheduleError(f"{what}: '{label}' between them uses what '{producer.name}' writes or writes what it "
                                "reads; the producer cannot move past it")
    clash = {storage.get(b, b) for b, _ in c_stores} & (written | read)
    if clash:
        raise ScheduleError(f"{what}: '{consumer.name}' writes '{sorted(clash)[0]}', which '{producer.name}' "
                            f"{'writes' if sorted(clash)[0] in written else 'reads'}")
    used = [(b, idx) for b, idx in c_loads if storage.get(b, b) in written]
    if not used:
        raise ScheduleError(f"{what}: '{consumer.name}' reads nothing '{producer.name}' writes")
    p_vars, c_vars = producer.iter_vars[:depth], consumer.iter_vars[:depth]
    for buf, idx in used:
        stores = [s for b, s in p_stores if storage.get(b, b) == storage.get(buf, buf)]
        if any(b != buf for b, _ in p_stores if storage.get(b, b) == storage.get(buf, buf)) or \
                not all(_same_slice(s, idx, p_vars, c_vars) for s in stores):
            raise ScheduleError(
                f"{what}: '{consumer.name}' reads '{buf}' at elements '{producer.name}' writes at other positions "
                f"of the axes up to '{_axis_name(consumer.axes[depth - 1])}' (each of their iterators must index "
                "the same dimension of both accesses)")


def _same_slice(store: list[Any], load: list[Any], p_vars: Sequence[Var], c_vars: Sequence[Var]) -> bool:
    """Whether, for every prefix axis, some dimension is indexed by its iterator in the producer's
    store and by its iterator in the consumer's load: the load then reads only the slice the
    producer writes at the consumer's prefix point."""
    if len(store) != len(load):
        return False
    return all(any(_is(s, pv) and _is(ld, cv) for s, ld in zip(store, load)) for pv, cv in zip(p_vars, c_vars))


def _is(expr: Any, var: Var) -> bool:
    return isinstance(expr, Var) and expr.same_as(var)


def _restrict(producer: SparseIteration, depth: int, outer_vars: list[Var], outer_names: set[str]) -> list[Any]:
    """The producer's slice at the consumer's prefix point: an iteration over its remaining axes
    (or its statements, with none left), its prefix iterators replaced by the consumer's."""
    fresh = [Var(_fresh(v.name, outer_names), v.ty) if v.name in outer_names else v for v in producer.iter_vars[depth:]]
    mapping = list(zip(producer.iter_vars[:depth], outer_vars))
    mapping += [(old, new) for old, new in zip(producer.iter_vars[depth:], fresh) if not old.same_as(new)]
    init = [substitute(st, mapping) for st in producer.init] if producer.init is not None else None
    body = [substitute(st, mapping) for st in producer.body]
    if len(producer.axes) == depth:
        return list(init or []) + body
    return [_replace(producer, axes=list(producer.axes[depth:]), kinds=producer.kinds[depth:], iter_vars=fresh,
                     init=init, body=body)]


def _inner(consumer: SparseIteration, depth: int) -> list[Any]:
    """The consumer over its remaining axes (or its statements, with none left)."""
    if len(consumer.axes) == depth:
        return list(consumer.init or []) + list(consumer.body)
    return [_replace(consumer, axes=list(consumer.axes[depth:]), kinds=consumer.kinds[depth:],
                     iter_vars=list(consumer.iter_vars[depth:]))]

"""format_decompose: rewrite a stage-I function to compute on composable formats (RFC D1).

A ``FormatRewriteRule`` says how a sparse buffer is stored in another format: the format as a
stage-I function (its axes and one sparse buffer), which of the function's buffers take it, the
correspondence between the old axes and the new ones, and the maps between old coordinates and
new ones, as Python callables over index variables::

    FormatRewriteRule("4", bsr.specialize({block_size: 4}), ["A"], ["I", "J"], ["IO", "JO", "II", "JI"],
                      {"I": ["IO", "II"], "J": ["JO", "JI"]},
                      lambda i, j: (i // 4, j // 4, i % 4, j % 4),      # old -> new coordinates
                      lambda io, jo, ii, ji: (io * 4 + ii, jo * 4 + ji))  # new -> old

``format_decompose(f, rules)`` returns a stage-I function with, for every rule (its name is the
suffix of everything it adds: ``A_4``, ``IO_4``, ``indptr_4``...):

- the format's parameters, axes and a new buffer per rewritten buffer;
- a *preprocess* iteration (``T.sp_iter_attr({"preprocess": True})``) copying each rewritten
  buffer into its new form in the new coordinates: ``A_4[io, jo, ii, ji] = A[io * 4 + ii, ...]``;
- a copy of every iteration that reads a rewritten buffer, iterating the new axes in place of
  the old ones (each old axis becomes the new axes it maps to, with its iterator kind), its
  old iterators replaced by the inverse map and the rewritten buffer read in the new format.

Where the RFC's example keeps ``T.init()`` in every copy, an iteration with an init gets the
init as an iteration of its own over its spatial axes, before the copies: a later copy's init
would otherwise erase what an earlier one summed, and output points that no format stores
(an empty row) would never be initialised.

What the rules must guarantee (the conversion routines of ``sparsetir.formats`` do): together
the new formats hold each stored coordinate of the rewritten buffer exactly once, and any other
coordinate they hold (a zero-filled block cell, an ELL padding slot) is not stored in it. Only
buffers the function reads can be rewritten. ``extract_preprocess`` splits the preprocess
iterations into a kernel of their own, run once per sparse structure.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from .._tvm import Expr, TensorLoad, Var, structural_map, tirx, tvm
from ..errors import LoweringError, VerifyError
from ..ir.analysis import contains
from ..ir.axis import AttachedAxis, Axis, FusedAxis, MergedAxis, iter_axes, make_axis
from ..ir.buffer import SparseBuffer
from ..ir.function import SparseFunction
from ..ir.iteration import REDUCE, SPATIAL, SparseIteration
from ..ir.verifier import verify
from .sparse_iter.context import substitute

#: The iteration attribute that marks a preprocess iteration (the RFC's spelling).
PREPROCESS_ATTR = "preprocess"
#: The function attribute of a decomposed function (the RFC's spelling).
COMPOSABLE_ATTR = "composable"


@dataclass(frozen=True)
class FormatRewriteRule:
    """How buffers of a function are stored in another format (RFC ``FormatRewriteRule``).

    ``name`` suffixes what the rule adds; ``new_format`` is a stage-I function declaring the new
    format's axes and one sparse buffer over ``axes_after`` (its body is ignored);
    ``buffers_to_rewrite`` name the function's buffers, each laid out over ``axes_before``;
    ``axis_map`` maps every old axis to the new axes that replace it; ``idx_map`` takes old
    coordinates (one per old axis) to new ones (one per new axis) and ``inv_idx_map`` back.
    """

    name: str
    new_format: SparseFunction
    buffers_to_rewrite: Sequence[str]
    axes_before: Sequence[str]
    axes_after: Sequence[str]
    axis_map: Mapping[str, Sequence[str]]
    idx_map: Callable[..., Any]
    inv_idx_map: Callable[..., Any]
    _template: SparseBuffer = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for attr in ("buffers_to_rewrite", "axes_before", "axes_after"):
            value = getattr(self, attr)
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise TypeError(f"FormatRewriteRule {self.name!r}: {attr} must be a list of names, got {value!r}")
            object.__setattr__(self, attr, tuple(value))
        object.__setattr__(self, "axis_map", {str(k): tuple(v) for k, v in dict(self.axis_map).items()})
        if not isinstance(self.name, str) or not f"x_{self.name}".isidentifier():
            raise ValueError(f"FormatRewriteRule name {self.name!r} must be usable as a name suffix (letters, digits, _)")
        if not isinstance(self.new_format, SparseFunction):
            raise TypeError(f"FormatRewriteRule {self.name!r}: new_format must be a stage-I SparseFunction, "
                            f"got {type(self.new_format).__name__}")
        if not self.buffers_to_rewrite:
            raise ValueError(f"FormatRewriteRule {self.name!r}: buffers_to_rewrite is empty")
        if len(self.new_format.buffers) != 1:
            raise ValueError(f"FormatRewriteRule {self.name!r}: the format '{self.new_format.name}' must declare exactly "
                             f"one sparse buffer (the values), it declares {len(self.new_format.buffers)}")
        template = self.new_format.buffers[0]
        if template.handle is None:
            raise ValueError(f"FormatRewriteRule {self.name!r}: the format's buffer '{template.name}' must be "
                             "matched to a handle parameter (T.match_sparse_buffer)")
        if [a.name for a in template.axes] != list(self.axes_after):
            raise ValueError(f"FormatRewriteRule {self.name!r}: axes_after {list(self.axes_after)} must be the axes "
                             f"of the format's buffer '{template.name}' in order: {[a.name for a in template.axes]}")
        if sorted(self.axis_map) != sorted(self.axes_before) or len(set(self.axes_before)) != len(self.axes_before):
            raise ValueError(f"FormatRewriteRule {self.name!r}: axis_map must map each of axes_before "
                             f"{list(self.axes_before)} once, got keys {sorted(self.axis_map)}")
        mapped = [a for k in self.axes_before for a in self.axis_map[k]]
        if sorted(mapped) != sorted(self.axes_after):
            raise ValueError(f"FormatRewriteRule {self.name!r}: axis_map must send the old axes to every new axis "
                             f"once; it gives {mapped} for axes_after {list(self.axes_after)}")
        for fn, arity, what in ((self.idx_map, len(self.axes_before), "idx_map"),
                                (self.inv_idx_map, len(self.axes_after), "inv_idx_map")):
            _check_arity(self.name, fn, arity, what)
        object.__setattr__(self, "_template", template)

    def new_name(self, name: str) -> str:
        """The name something called ``name`` gets in the decomposed function."""
        return f"{name}_{self.name}"


def _check_arity(rule: str, fn: Any, arity: int, what: str) -> None:
    if not callable(fn):
        raise TypeError(f"FormatRewriteRule {rule!r}: {what} must be callable")
    try:
        inspect.signature(fn).bind(*range(arity))
    except TypeError:
        raise ValueError(f"FormatRewriteRule {rule!r}: {what} must take {arity} index variables") from None
    except ValueError:  # a builtin without a signature: checked when it is called
        pass


def format_decompose(func: SparseFunction, rules: Sequence[FormatRewriteRule],
                     include_preprocess: bool = True) -> SparseFunction:
    """``func`` computing on the formats of ``rules``, with the iterations that fill them (see the
    module documentation); ``include_preprocess=False`` leaves those out (the caller fills the new
    buffers). Given a ``tvm.IRModule``, every stage-I function of it (``FormatDecompose``)."""
    if hasattr(func, "functions"):
        from .module_passes import FormatDecompose

        return FormatDecompose(rules, include_preprocess)(func)
    if not isinstance(func, SparseFunction):
        raise TypeError(f"format_decompose takes a stage-I SparseFunction or an IRModule, got {type(func).__name__}")
    rules = list(rules)
    if not rules:
        return func
    if len({r.name for r in rules}) != len(rules):
        raise ValueError("format_decompose: two rules have the same name; each name suffixes what its rule adds")
    taken = {p.name for p in func.params} | {a.name for a in func.axes} | {b.name for b in func.buffers}
    installed = [_Installed.of(func, rule, taken) for rule in rules]
    rewritten = {name for inst in installed for name in inst.rule.buffers_to_rewrite}
    _check_only_read(func, rewritten)
    params = list(func.params) + [p for inst in installed for p in inst.params]
    axes = list(func.axes) + [a for inst in installed for a in inst.axes.values()]
    buffers = list(func.buffers) + [b for inst in installed for b in inst.buffers.values()]
    body: list[Any] = []
    if include_preprocess:
        body += [inst.preprocess(func, name) for inst in installed for name in inst.rule.buffers_to_rewrite]
    iteration_names = _iteration_names(func)
    for stmt in func.body:
        readers = [inst for inst in installed if isinstance(stmt, SparseIteration) and _reads_any(stmt, inst.old_buffers)]
        if not readers:
            body.append(stmt)
            continue
        _check_one_decomposition(stmt, readers)
        if stmt.init is not None:
            body.append(_init_iteration(stmt, iteration_names))
        body += [inst.compute(stmt, iteration_names) for inst in readers]
    attrs = dict(func.attrs)
    attrs[COMPOSABLE_ATTR] = True
    result = SparseFunction(func.name, params, attrs, axes, buffers, body, func.span)
    try:
        return verify(result)
    except VerifyError as err:
        raise LoweringError(f"format_decompose made an invalid function: {err}") from err


@dataclass
class _Installed:
    """One rule's additions to the function: renamed parameters, axes and buffers."""

    rule: FormatRewriteRule
    params: list[Var]
    axes: dict[str, Axis]  # by the format's own axis name
    buffers: dict[str, SparseBuffer]  # by the rewritten buffer's name
    old_buffers: dict[str, SparseBuffer]
    old_axes: list[Axis]

    @classmethod
    def of(cls, func: SparseFunction, rule: FormatRewriteRule, taken: set[str]) -> "_Installed":
        fmt, template = rule.new_format, rule._template
        old_buffers = {}
        for name in rule.buffers_to_rewrite:
            buf = next((b for b in func.buffers if b.name == name), None)
            if buf is None:
                raise ValueError(f"format_decompose: rule {rule.name!r} rewrites '{name}', which is not a sparse buffer "
                                 f"of {func.name} (it has {', '.join(b.name for b in func.buffers)})")
            if [a.name for a in buf.axes] != list(rule.axes_before):
                raise ValueError(f"format_decompose: rule {rule.name!r}: buffer '{name}' is laid out over "
                                 f"{[a.name for a in buf.axes]}, not over axes_before {list(rule.axes_before)}")
            if buf.is_allocated:
                raise ValueError(f"format_decompose: rule {rule.name!r}: '{name}' is an allocated buffer; only "
                                 "buffers bound to parameters can be rewritten")
            old_buffers[name] = buf
        old_axes = list(old_buffers[rule.buffers_to_rewrite[0]].axes)
        # Parameters: the format's, renamed; its value handle once per rewritten buffer.
        mapping: list[tuple[Var, Any]] = []
        params: list[Var] = []
        handles: dict[str, Var] = {}
        for p in fmt.params:
            if p.same_as(template.handle):
                for name, buf in old_buffers.items():
                    handle = Var(_fresh(rule.new_name(buf.handle.name), taken), p.ty)
                    handles[name] = handle
                    params.append(handle)
                continue
            new = Var(_fresh(rule.new_name(p.name), taken), p.ty)
            mapping.append((p, new))
            params.append(new)
        axes: dict[str, Axis] = {}
        for a in fmt.axes:
            axes[a.name] = _renamed_axis(a, _fresh(rule.new_name(a.name), taken), axes, mapping)
        new_axes = [axes[a.name] for a in template.axes]
        buffers = {}
        for name, buf in old_buffers.items():
            new_name = _fresh(rule.new_name(name), taken)
            storage = tirx.decl_buffer([a.length for a in new_axes], buf.dtype, name=new_name, scope=template.scope)
            extra = substitute(template.extra_storage, mapping) if template.extra_storage is not None else None
            buffers[name] = SparseBuffer(storage, new_axes, handles[name], template.scope, extra, template.span)
        return cls(rule, params, axes, buffers, old_buffers, old_axes)

    def new_axes(self) -> list[Axis]:
        """The new axes in the rule's ``axes_after`` order."""
        return [self.axes[name] for name in self.rule.axes_after]

    def preprocess(self, func: SparseFunction, name: str) -> SparseIteration:
        """``A_r[new] = A[inv_idx_map(new)]`` over the new buffer's axes, all spatial."""
        new_buf, old_buf = self.buffers[name], self.old_buffers[name]
        iters = [Var(a.name.lower(), a.idtype) for a in new_buf.axes]
        old_coords = _call_map(self.rule, self.rule.inv_idx_map, iters, len(self.rule.axes_before), "inv_idx_map")
        old_coords = [_as_index(c, a.idtype) for c, a in zip(old_coords, old_buf.axes)]
        value = tirx.BufferLoad(old_buf.buffer, old_coords)
        # The copy has no script line of its own: it belongs to the declaration of the buffer it fills.
        store = tirx.BufferStore(new_buf.buffer, value, iters, old_buf.span)
        label = f"rewrite_{name}_{self.rule.name}"
        return SparseIteration(label, list(new_buf.axes), SPATIAL * len(iters), iters, None, [store],
                               {PREPROCESS_ATTR: True}, old_buf.span)

    def compute(self, it: SparseIteration, taken_names: set[str]) -> SparseIteration:
        """A copy of ``it`` over the new axes, reading the rewritten buffers in the new format."""
        rule = self.rule
        old_index = {a.name: k for k, a in enumerate(self.old_axes)}
        entries, kinds, iters = [], [], []
        old_iter: dict[str, Var] = {}
        new_iter: dict[str, Var] = {}
        kept: list[tuple[Var, Var]] = []
        pos = 0
        for entry in it.axes:
            count = len(iter_axes(entry))
            entry_kinds = it.kinds[pos:pos + count]
            entry_vars = list(it.iter_vars[pos:pos + count])
            pos += count
            if isinstance(entry, Axis) and entry.name in old_index and entry.same_as(self.old_axes[old_index[entry.name]]):
                old_iter[entry.name] = entry_vars[0]
                for new_name in rule.axis_map[entry.name]:
                    axis = self.axes[new_name]
                    var = Var(axis.name.lower(), axis.idtype)
                    new_iter[new_name] = var
                    entries.append(axis)
                    kinds.append(entry_kinds)
                    iters.append(var)
                continue
            if isinstance(entry, MergedAxis) and any(a.name in old_index for a in entry.axes):
                raise LoweringError(f"format_decompose: iteration '{it.name}' co-iterates T.{entry.op}("
                                    f"{', '.join(a.name for a in entry.axes)}); rewrite rule {rule.name!r} needs its "
                                    "axes as plain entries")
            if any(a.name in old_index for a in iter_axes(entry)):
                raise LoweringError(f"format_decompose: iteration '{it.name}' iterates '{_entry_name(entry)}' fused or "
                                    f"attached; rewrite rule {rule.name!r} needs its axes as plain entries")
            entries.append(entry)
            kinds.append(entry_kinds)
            fresh = [Var(v.name, v.ty) for v in entry_vars]  # each copy defines its own iterators
            kept.extend(zip(entry_vars, fresh))
            iters.extend(fresh)
        missing = [name for name in rule.axes_before if name not in old_iter]
        if missing:
            raise LoweringError(f"format_decompose: iteration '{it.name}' reads {', '.join(sorted(self.old_buffers))} but "
                                f"does not iterate axis '{missing[0]}' (rule {rule.name!r} rewrites it)")
        new_vars = [new_iter[name] for name in rule.axes_after]
        old_coords = _call_map(rule, rule.inv_idx_map, new_vars, len(rule.axes_before), "inv_idx_map")
        substitution = kept + [(old_iter[name], _as_index(c, old_iter[name].ty.dtype))
                               for name, c in zip(rule.axes_before, old_coords)]
        analyzer = tvm.sym.Analyzer()
        for name, var in new_iter.items():
            axis = self.axes[name]
            analyzer.bind(var, tvm.ir.Range.from_min_extent(tirx.const(0, axis.idtype), _as_index(axis.length, axis.idtype)))
        old_vars = [old_iter[name] for name in rule.axes_before]
        rewrite = _BufferRewrite(self, analyzer, old_vars, new_vars)

        def convert(stmts: list[Any]) -> list[Any]:
            return [rewrite.general(substitute(rewrite.direct(s), substitution)) for s in stmts]

        name = _fresh_name(f"{it.name}_{rule.name}", taken_names)
        return SparseIteration(name, entries, "".join(kinds), iters, None, convert(list(it.body)), dict(it.attrs), it.span)


class _BufferRewrite:
    """Loads of rewritten buffers as loads of their new form.

    ``direct``: a load at exactly the iterators of the old axes, ``A[i, j]``, reads the new
    buffer at the new iterators, ``A_r[io, jo, ii, ji]`` (the common case, and the only one for
    a map that is not a bijection of coordinates, such as a padded format's). ``general``, after
    the old iterators are replaced by the inverse map: any other load ``A[c]`` reads
    ``A_r[idx_map(c)]``, simplified with the new iterators' ranges."""

    def __init__(self, inst: _Installed, analyzer: Any, old_vars: list[Var], new_vars: list[Var]):
        self.inst = inst
        self.analyzer = analyzer
        self.old_vars = old_vars
        self.new_vars = new_vars

    def direct(self, stmt: Any) -> Any:
        return structural_map(stmt, [(TensorLoad, self._direct)])

    def general(self, stmt: Any) -> Any:
        return structural_map(stmt, [(TensorLoad, self._general)])

    def _new_buffer(self, load: Any) -> Optional[SparseBuffer]:
        for name, old in self.inst.old_buffers.items():
            if load.source.same_as(old.buffer):
                return self.inst.buffers[name]
        return None

    def _direct(self, load: Any) -> Any:
        new = self._new_buffer(load)
        if new is None or len(load.indices) != len(self.old_vars):
            return load
        if all(isinstance(x, Var) and x.same_as(v) for x, v in zip(load.indices, self.old_vars)):
            return tirx.BufferLoad(new.buffer, list(self.new_vars), load.span)
        return load

    def _general(self, load: Any) -> Any:
        new = self._new_buffer(load)
        if new is None:
            return load
        rule = self.inst.rule
        coords = _call_map(rule, rule.idx_map, list(load.indices), len(rule.axes_after), "idx_map")
        coords = [self.analyzer.simplify(_as_index(c, a.idtype)) for c, a in zip(coords, new.axes)]
        return tirx.BufferLoad(new.buffer, coords, load.span)


def _renamed_axis(a: Axis, name: str, done: dict[str, Axis], mapping: list[tuple[Var, Any]]) -> Axis:
    parent = done[a.parent.name] if a.parent is not None else None

    def sub(expr: Any) -> Any:
        return substitute(expr, mapping) if expr is not None else None

    def handle(var: Optional[Var]) -> Optional[Var]:
        return next((new for old, new in mapping if old.same_as(var)), var) if var is not None else None

    return make_axis(name, a.kind, parent, length=sub(a.length), nnz=sub(a.nnz), nnz_cols=sub(a.nnz_cols),
                     indptr=handle(a.indptr), indices=handle(a.indices), idtype=a.idtype, sorted=a.sorted, span=a.span)


def _init_iteration(it: SparseIteration, taken_names: set[str]) -> SparseIteration:
    """The init of ``it`` as an iteration of its own over ``it``'s spatial axes."""
    entries, kinds, iters = [], [], []
    pos = 0
    for entry in it.axes:
        count = len(iter_axes(entry))
        entry_kinds = it.kinds[pos:pos + count]
        entry_vars = list(it.iter_vars[pos:pos + count])
        pos += count
        if REDUCE in entry_kinds:
            if entry_kinds != REDUCE * count:
                raise LoweringError(f"format_decompose: iteration '{it.name}' mixes spatial and reduction axes in "
                                    f"'{_entry_name(entry)}'; its init cannot be split out")
            continue
        entries.append(entry)
        kinds.append(entry_kinds)
        iters.extend(entry_vars)
    fresh = [Var(v.name, v.ty) for v in iters]
    kept = {a.name for e in entries for a in iter_axes(e)}
    for entry in entries:
        for axis in iter_axes(entry):
            parent = entry.new_parent if isinstance(entry, AttachedAxis) else axis.parent
            if parent is not None and parent.name not in kept and not (isinstance(entry, FusedAxis) and axis is not iter_axes(entry)[0]):
                raise LoweringError(f"format_decompose: the init of '{it.name}' cannot be split out: spatial axis "
                                    f"'{axis.name}' hangs under reduction axis '{parent.name}'")
    if not entries:
        raise LoweringError(f"format_decompose: iteration '{it.name}' has an init but no spatial axis to run it over")
    name = _fresh_name(f"{it.name}_init", taken_names)
    body = [substitute(s, list(zip(iters, fresh))) for s in it.init]
    return SparseIteration(name, entries, "".join(kinds), fresh, None, body, {}, it.span)


def _entry_name(entry: Any) -> str:
    return "+".join(a.name for a in iter_axes(entry))


def _reads_any(it: SparseIteration, buffers: Mapping[str, SparseBuffer]) -> bool:
    def reads(node: Any) -> bool:
        return isinstance(node, TensorLoad) and any(node.source.same_as(b.buffer) for b in buffers.values())

    return any(contains(stmt, reads) for stmt in list(it.body) + list(it.init or []))


def _check_only_read(func: SparseFunction, names: set[str]) -> None:
    buffers = [b for b in func.buffers if b.name in names]

    def walk(stmts: Sequence[Any], where: str) -> None:
        for stmt in stmts:
            if isinstance(stmt, SparseIteration):
                walk(list(stmt.init or []) + list(stmt.body), stmt.name)
                continue
            target = getattr(stmt, "buffer", None)
            if target is not None and any(target.same_as(b.buffer) for b in buffers):
                raise LoweringError(f"format_decompose rewrites buffers the function only reads; '{target.name}' is "
                                    f"written by iteration '{where}'")

    walk(func.body, func.name)


def _check_one_decomposition(it: SparseIteration, readers: list[_Installed]) -> None:
    """Every rule that rewrites a buffer ``it`` reads rewrites the same buffers (one copy per rule)."""
    first = sorted(readers[0].old_buffers)
    for inst in readers[1:]:
        if sorted(inst.old_buffers) != first:
            raise LoweringError(f"format_decompose: iteration '{it.name}' reads buffers that rules "
                                f"{readers[0].rule.name!r} and {inst.rule.name!r} rewrite differently "
                                f"({', '.join(first)} vs {', '.join(sorted(inst.old_buffers))})")
    for inst in readers:
        unread = [name for name in inst.old_buffers if not _reads_any(it, {name: inst.old_buffers[name]})]
        if unread:
            raise LoweringError(f"format_decompose: iteration '{it.name}' does not read '{unread[0]}', which rule "
                                f"{inst.rule.name!r} rewrites together with what it reads")


def _call_map(rule: FormatRewriteRule, fn: Callable[..., Any], args: list[Any], arity: int, what: str) -> list[Any]:
    """``fn(*args)`` as a list of ``arity`` index expressions."""
    try:
        out = fn(*args)
    except Exception as err:
        raise LoweringError(f"format_decompose: rule {rule.name!r}: {what} failed on index variables: {err}") from err
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(out) != arity:
        raise LoweringError(f"format_decompose: rule {rule.name!r}: {what} must return {arity} indices, got {len(out)}")
    exprs = []
    for value in out:
        if isinstance(value, bool) or not isinstance(value, (int, Expr)) or (isinstance(value, Expr) and not str(value.ty.dtype).startswith(("int", "uint"))):
            raise LoweringError(f"format_decompose: rule {rule.name!r}: {what} must return integer index expressions, "
                                f"got {type(value).__name__}")
        exprs.append(tirx.const(value, "int32") if isinstance(value, int) else value)
    return exprs


def _as_index(expr: Any, dtype: str) -> Any:
    return expr if str(expr.ty.dtype) == dtype else tirx.Cast(dtype, expr)


def _fresh(name: str, taken: set[str]) -> str:
    if name in taken:
        raise ValueError(f"format_decompose: the decomposed function would have two things named '{name}'; "
                         "rename the rule or the function's parameter/axis/buffer")
    taken.add(name)
    return name


def _fresh_name(name: str, taken: set[str]) -> str:
    base, k = name, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def _iteration_names(func: SparseFunction) -> set[str]:
    names: set[str] = set()

    def walk(stmts: Sequence[Any]) -> None:
        for stmt in stmts:
            if isinstance(stmt, SparseIteration):
                names.add(stmt.name)
                walk(stmt.body)

    walk(func.body)
    return names


__all__ = ["COMPOSABLE_ATTR", "FormatRewriteRule", "PREPROCESS_ATTR", "format_decompose"]

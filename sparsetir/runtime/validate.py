"""Checking a kernel's arguments before they reach compiled code.

A kernel indexes its arrays with no bounds checks, so every call is validated unless the user
opts out: scalar types and values, each array's dtype, rank, shape (the parameter's shape
evaluated with the scalar arguments), memory layout, and then the sparse structure
(``structure.py``). The first violation raises ``ArgumentError`` naming the argument.
Everything that depends only on the function is prepared once, in the constructor.
"""

from __future__ import annotations

import numbers
import weakref
from dataclasses import replace
from typing import Any, Optional, Sequence

import numpy as np

from .._tvm import Var
from ..errors import ArgumentError, LoweringError
from .arrays import ArrayInfo, inspect_array, is_array
from .constraints import Constraint, IndicesConstraint, IndptrConstraint, LastOf
from .signature import BufferParam, ScalarParam, Signature
from .sizes import compile_size, size_names, size_text
from .structure import check_indices, check_indptr, content_plan, quick_check

#: Whether a NumPy array object's data address is fixed for its life (NumPy 2 refuses to set
#: ``.data``), which lets a compiled plan of checks keep the addresses of the arrays it checks.
_FIXED_ADDRESSES = int(np.__version__.split(".")[0]) >= 2


class CallValidator:
    """Validates and prepares the arguments of one kernel, given in parameter order."""

    def __init__(self, signature: Signature, constraints: Sequence[Constraint], device: str = "cpu"):
        self.signature = signature
        self.device = device
        constraints = _with_nnz_from(signature, constraints)
        # Index pointers first: checking coordinates uses the row boundaries.
        self.constraints = _merged_indptrs([c for c in constraints if isinstance(c, IndptrConstraint)]) + [
            c for c in constraints if isinstance(c, IndicesConstraint)
        ]
        self.structure_arrays = sorted(_structure_arrays(self.constraints))
        params = signature.params
        self._scalars = [(i, p, _int_range(p)) for i, p in enumerate(params) if isinstance(p, ScalarParam)]
        self._buffers = [
            (i, p, [compile_size(d) for d in p.shape], _shape_text(p.shape))
            for i, p in enumerate(params)
            if isinstance(p, BufferParam)
        ]
        # Arrays a caller may also pass in another shape (``BufferParam.alt_shape``), by name.
        self._alt = {p.name: ([compile_size(d) for d in p.alt_shape], _shape_text(p.alt_shape))
                     for _, p, _, _ in self._buffers if p.alt_shape is not None}
        self._dim_bindings = _dim_bindings(signature)
        self._check_against_signature()
        self._checked = CheckedStructures()  # device structure arrays already checked
        # The fast path's view of the same checks: plain tuples, numpy dtypes resolved.
        self._fast_buffers = [(i, p.name, _numpy_dtype(p.dtype), fns, p.is_output)
                              for i, p, fns, _ in self._buffers]
        self._fast_scalars = [(i, p.name, int(b.min), int(b.max), p.is_size) for i, p, b in self._scalars
                              if b is not None]
        self._fast = device == "cpu" and len(self._fast_scalars) == len(self._scalars) \
            and all(dtype is not None for _, _, dtype, _, _ in self._fast_buffers)
        self._positions = {p.name: i for i, p, _, _ in self._buffers}
        self._last: Optional[tuple] = None  # ``_snapshot`` of the last call the fast path checked whole
        self._quick = [(c, quick_check(c)) for c in self.constraints]
        self._structure_positions = [self._positions[name] for name in self.structure_arrays]
        # The structure arrays of recent calls (``_structure_key``), and the compiled plan of
        # their checks once a call has repeated them.
        self._seen_structure: Optional[tuple] = None
        self._plan: Any = None

    def __call__(self, values: Sequence[Any]) -> list[Any]:
        """Check ``values`` (one per parameter); return what to pass to the compiled function."""
        return self.prepare(values)[0]

    def prepare(self, values: Sequence[Any]) -> tuple[list[Any], Optional[tuple]]:
        """``self(values)``, and the record (``_snapshot``) of the fast path's last whole check
        when ``values`` are that call's arguments (the very array objects, equal scalars), else
        None. Two calls given the same record passed the same objects: a caller may keep what it
        derived from the first call's arguments for the second."""
        if self._fast:
            found = self._fast_path(values)
            if found is not None:
                return found
        return self._general(values), None

    def _general(self, values: Sequence[Any]) -> list[Any]:
        prepared = list(values)
        env: dict[str, int] = {}
        for i, p, bounds in self._scalars:
            prepared[i] = _scalar_value(values[i], p, bounds)
            if bounds is not None:
                env[p.name] = prepared[i]
        infos = {p.name: self._array(p, values[i]) for i, p, _, _ in self._buffers}
        ranks = {p.name: len(p.shape) for _, p, _, _ in self._buffers}
        for size, array in self.signature.nnz_from:
            # The positions of an axis without nnz: its indptr's last entry, which the arrays laid
            # out by it must hold (so a short one is named, not its indptr); checked below.
            ptr = infos[array].host
            if ptr is not None and ptr.ndim == 1 and ptr.size and ptr.dtype.kind == "i" and ptr[-1] >= 0:
                env[size] = int(ptr[-1])
        for array, dim, var in self._dim_bindings:
            if len(infos[array].shape) == ranks[array]:
                env.setdefault(var, infos[array].shape[dim])
        for i, p, shape_fns, text in self._buffers:
            info = infos[p.name]
            expected = tuple(fn(env) for fn in shape_fns)
            if len(info.shape) != len(expected):  # the other shape the array may come in
                alt_fns, alt_text = self._alt[p.name]
                alt = tuple(fn(env) for fn in alt_fns)
                if alt != info.shape:
                    _fail(p.name, f"expected shape {alt_text} = {alt} (or {text} = {expected}), got {info.shape}")
                prepared[i] = _reshaped(_passable(info, p), expected)
                continue
            if expected != info.shape:
                _fail(p.name, f"expected shape {text} = {expected}, got {info.shape}")
            prepared[i] = _passable(info, p)
        self._check_overlap(infos)
        structure = [infos[name].value for name in self.structure_arrays]
        if self.device != "cpu" and self._checked.seen(structure, env):
            return prepared
        hosts = {name: infos[name].host_array() for name in self.structure_arrays}
        for c in self.constraints:
            if isinstance(c, IndptrConstraint):
                check_indptr(c, hosts, env)
            else:
                check_indices(c, hosts, env)
        if self.device != "cpu":
            self._checked.remember(structure, env)
        return prepared

    def check_structure(self, values: Sequence[Any]) -> None:
        """Only the structure constraints, on a call's arguments that were checked otherwise
        already (by a validator of the same signature): a variant of a kernel may need more of
        them than the script (sorted coordinates a parallel loop relies on)."""
        if self._fast and self._fast_path(values) is not None:
            return  # plain numpy arguments: checked as a call (from the second on, by a plan)
        env: dict[str, int] = {p.name: int(values[i]) for i, p, bounds in self._scalars if bounds is not None}
        for array, dim, var in self._dim_bindings:
            env.setdefault(var, int(inspect_array(values[self._positions[array]]).shape[dim]))
        hosts = {name: inspect_array(values[self._positions[name]]).host_array() for name in self.structure_arrays}
        for c in self.constraints:
            if isinstance(c, IndptrConstraint):
                check_indptr(c, hosts, env)
            else:
                check_indices(c, hosts, env)

    def _fast_path(self, values: Sequence[Any]) -> Optional[tuple[list[Any], tuple]]:
        """The checks of ``__call__`` for the common call (integer scalars in range; contiguous,
        aligned, writeable, non-empty numpy arrays of the right dtype and rank), at a fraction
        of its cost, with the record of the call (``_snapshot``); None when anything is unusual,
        for the general path to check (or adapt) and explain. The structure checks are the
        general path's and raise its errors.

        A call with the very array objects of the last one (same shapes, strides, flags and
        dtypes: a model's loop) and the same scalars skips all but the structure checks, which
        look at the arrays' contents: those may have changed in place."""
        last = self._last
        same = self._same_as(values, last) if last is not None else None
        if same is not None:
            self._contents(values, same, known=True)
            return list(values), last
        env: dict[str, int] = {}
        for i, name, lo, hi, is_size in self._fast_scalars:
            v = values[i]
            if type(v) is not int or not lo <= v <= hi or (is_size and v < 0):
                return None
            env[name] = v
        for i, _, dtype, fns, _ in self._fast_buffers:
            a = values[i]
            if type(a) is not np.ndarray or a.dtype != dtype or a.ndim != len(fns) or not a.size:
                return None
            flags = a.flags
            if not (flags.c_contiguous and flags.aligned and flags.writeable):
                return None
        for array, dim, var in self._dim_bindings:
            env.setdefault(var, values[self._positions[array]].shape[dim])
        for i, _, _, fns, _ in self._fast_buffers:
            shape = values[i].shape
            for d, fn in enumerate(fns):
                if fn(env) != shape[d]:
                    return None
        for i, _, _, _, is_output in self._fast_buffers:
            if is_output:
                out = values[i]
                for j, _, _, _, _ in self._fast_buffers:
                    if j != i and np.may_share_memory(out, values[j]):
                        return None
        self._contents(values, env)
        snapshot = self._last = self._snapshot(values, env)
        return list(values), snapshot

    def _contents(self, values: Sequence[Any], env: dict[str, int], known: bool = False) -> None:
        """The structure checks on a fast-path call's numpy arrays: by the compiled plan of the
        last calls' checks when this call has their structure arrays and sizes (a model's loop;
        ``known``: the caller found the call's arrays to be the last call's), else each
        constraint's quick check."""
        if not _FIXED_ADDRESSES:
            self._check_contents(values, env)
            return
        seen = self._seen_structure
        if seen is None or not (known or _same_structure(seen, env, values, self._structure_positions)):
            self._check_contents(values, env)
            # Checked whole: remember these arrays, for a plan if the next call repeats them.
            self._seen_structure, self._plan = self._structure_key(values, env), None
            return
        if self._plan is None:
            hosts = {name: values[self._positions[name]] for name in self.structure_arrays}
            self._plan = content_plan(self.constraints, hosts, env) or False
        if self._plan is False or self._plan.first_failing() >= 0:
            self._check_contents(values, env)

    def _structure_key(self, values: Sequence[Any], env: dict[str, int]) -> tuple:
        """What identifies a call's structure arrays and sizes for ``_same_structure``."""
        arrays = tuple((weakref.ref(values[i]), values[i].shape, values[i].strides, values[i].dtype)
                       for i in self._structure_positions)
        return arrays, env

    def _check_contents(self, values: Sequence[Any], env: dict[str, int]) -> None:
        """The structure checks on numpy arrays: each constraint's quick check, and where that
        says no, the full one (which raises, naming the problem)."""
        hosts = {name: values[self._positions[name]] for name in self.structure_arrays}
        for c, holds in self._quick:
            if not holds(hosts, env):
                if isinstance(c, IndptrConstraint):
                    check_indptr(c, hosts, env)
                else:
                    check_indices(c, hosts, env)

    def _snapshot(self, values: Sequence[Any], env: dict[str, int]) -> tuple:
        """What ``_same_as`` compares a later call with (weak references: the arrays are
        never kept alive by it, and an identity cannot be reused while it is alive)."""
        arrays = tuple((weakref.ref(values[i]), values[i].shape, values[i].strides, values[i].flags.num,
                        values[i].dtype) for i, _, _, _, _ in self._fast_buffers)
        return tuple(values[i] for i, _, _, _, _ in self._fast_scalars), arrays, env

    def _same_as(self, values: Sequence[Any], last: tuple) -> Optional[dict[str, int]]:
        """The sizes of the fully checked call ``last`` (a ``_snapshot``) when ``values`` are
        that call's arguments (identical array objects, unchanged in shape, strides, flags and
        dtype; equal scalars)."""
        scalars, arrays, env = last
        for (i, *_), v in zip(self._fast_scalars, scalars):
            if values[i] is not v and (type(values[i]) is not int or values[i] != v):
                return None
        for (i, *_), (ref, shape, strides, flags, dtype) in zip(self._fast_buffers, arrays):
            a = values[i]
            if ref() is not a or a.shape != shape or a.strides != strides or a.flags.num != flags or a.dtype is not dtype:
                return None
        return env

    def _array(self, p: BufferParam, value: Any) -> ArrayInfo:
        if not is_array(value):
            _fail(p.name, f"expected an array (numpy, torch or DLPack), got {type(value).__name__}")
        try:
            info = inspect_array(value)
        except (TypeError, BufferError, RuntimeError) as err:
            raise ArgumentError(f"argument '{p.name}': cannot read the array: {err}") from err
        if not info.device.startswith(self.device):
            _fail(p.name, f"is on {info.device}, but the kernel runs on {self.device}")
        if info.dtype != p.dtype:
            _fail(p.name, f"expected dtype {p.dtype}, got {info.dtype}")
        if len(info.shape) != len(p.shape) and (p.alt_shape is None or len(info.shape) != len(p.alt_shape)):
            also = f" or {len(p.alt_shape)} {_shape_text(p.alt_shape)}" if p.alt_shape is not None else ""
            _fail(
                p.name,
                f"expected {len(p.shape)} dimension(s) {_shape_text(p.shape)}{also}, "
                f"got {len(info.shape)} (shape {info.shape})",
            )
        if self.device == "cuda" and not info.device_aligned:
            if p.is_output:
                _fail(p.name, f"data is not {DEVICE_ALIGNMENT}-byte aligned, which the GPU kernel's vector "
                              "stores need; pass a fresh tensor (.clone())")
        if p.is_output:
            if getattr(value, "requires_grad", False) is True:
                _fail(p.name, "is a torch tensor that requires grad, but the kernel writes it in place, which autograd "
                              "cannot record; pass one that does not (torch.empty(...), or .detach() it)")
            if not info.writeable:
                _fail(p.name, "is read-only, but the kernel writes it")
            if not info.c_contiguous:
                _fail(p.name, "must be C-contiguous, because the kernel writes it in place")
            if not info.aligned:
                _fail(p.name, "is not aligned to its element size, but the kernel writes it in place")
        return info

    def _check_overlap(self, infos: dict[str, ArrayInfo]) -> None:
        for out in self.signature.outputs:
            mine = infos[out]
            for name, info in infos.items():
                if name == out:
                    continue
                if mine.host is not None and info.host is not None:
                    shared = np.may_share_memory(mine.host, info.host)
                else:  # device arrays: their byte ranges
                    shared = _byte_ranges_overlap(mine.value, info.value)
                if shared:
                    _fail(out, f"shares memory with argument '{name}', but the kernel writes it")

    def _check_against_signature(self) -> None:
        """Refuse, at build time, constraints and shapes that no call could satisfy."""
        buffers = {p.name: p for _, p, _, _ in self._buffers}
        for name in self.structure_arrays:
            if name not in buffers:
                raise LoweringError(f"structure constraint on '{name}', which is not an array parameter")
            if buffers[name].dtype not in ("int32", "int64"):
                raise LoweringError(f"structure array '{name}' has dtype {buffers[name].dtype}")
        known = {p.name for _, p, bounds in self._scalars if bounds is not None}
        known |= {var for _, _, var in self._dim_bindings}
        for where, expr in _size_exprs(self.signature, self.constraints):
            missing = size_names(expr) - known
            if missing:
                raise LoweringError(
                    f"{where} uses {', '.join(sorted(missing))}, which no integer argument provides"
                )


def _same_structure(seen: tuple, env: dict[str, int], values: Sequence[Any], positions: Sequence[int]) -> bool:
    """Whether a call's structure arrays are the very objects ``seen`` (``_structure_key``)
    had, unchanged in shape, strides and dtype, and its sizes ``env`` the same."""
    arrays, seen_env = seen
    if env != seen_env:
        return False
    for (ref, shape, strides, dtype), i in zip(arrays, positions):
        a = values[i]
        if ref() is not a or a.shape != shape or a.strides != strides or a.dtype is not dtype:
            return False
    return True


def _numpy_dtype(name: str) -> Optional[np.dtype]:
    """NumPy's dtype called ``name`` (None for one NumPy lacks, such as bfloat16)."""
    try:
        return np.dtype(name)
    except TypeError:
        return None


def _with_nnz_from(signature: Signature, constraints: Sequence[Constraint]) -> list[Constraint]:
    """``constraints`` with the indptr of each axis that declares no nnz required to end at the
    length of the arrays laid out by it (``Signature.nnz_from``), which the kernel indexes
    through it; an indptr constraint that already names an end keeps it."""
    ends = {array: Var(size, "int64") for size, array in signature.nnz_from}
    return [replace(c, nnz=ends[c.array]) if isinstance(c, IndptrConstraint) and c.nnz is None and c.array in ends
            else c for c in constraints]


def _merged_indptrs(constraints: list[IndptrConstraint]) -> list[IndptrConstraint]:
    """The indptr constraints with those on one array over the same rows and nnz checked once
    (a sparse axis and its dense twin share their indptr): the one that also bounds the row
    length stands for one that does not."""
    kept: list[IndptrConstraint] = []
    for c in constraints:
        twin = next((i for i, k in enumerate(kept) if k.array == c.array and _same(k.rows, c.rows)
                     and _same(k.nnz, c.nnz) and (k.max_row_length is None or c.max_row_length is None)), None)
        if twin is None:
            kept.append(c)
        elif kept[twin].max_row_length is None:
            kept[twin] = c
    return kept


def _same(a: Any, b: Any) -> bool:
    """Whether two sizes (expressions, numbers, tuples of them, or None) are the same."""
    return size_text(a) == size_text(b) if not isinstance(a, tuple) else (
        isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b)))


def prepare_unchecked(signature: Signature, values: Sequence[Any]) -> list[Any]:
    """The ``check=False`` path: values as given, but numpy arrays TVM refuses are adapted, and
    an array given in its other shape (``BufferParam.alt_shape``) is reshaped."""
    result = list(values)
    for i, (p, value) in enumerate(zip(signature.params, values)):
        if isinstance(p, BufferParam) and p.alt_shape is not None and is_array(value) \
                and len(value.shape) == len(p.alt_shape) != len(p.shape):
            env = {q.name: int(v) for q, v in zip(signature.params, values)
                   if isinstance(q, ScalarParam) and isinstance(v, numbers.Integral)}
            value = result[i] = _reshaped(value, tuple(compile_size(d)(env) for d in p.shape))
        if isinstance(p, BufferParam) and isinstance(value, np.ndarray):
            if not value.flags.writeable:
                result[i] = np.array(value)
            elif value.size == 0:
                result[i] = _empty_like(value)
        elif isinstance(p, BufferParam) and is_array(value) and _is_empty_on_cpu(value):
            result[i] = _empty_like(inspect_array(value).host_array())
    return result


def _is_empty_on_cpu(value: Any) -> bool:
    """Whether a torch or DLPack array has no elements and lives on the CPU (cheap checks first)."""
    shape = getattr(value, "shape", None)
    if shape is None or all(int(d) for d in shape):
        return False
    try:
        return inspect_array(value).device == "cpu"
    except (TypeError, BufferError, RuntimeError):
        return False


def _structure_arrays(constraints: Sequence[Constraint]) -> set[str]:
    """Names of every array the constraints read."""
    names: set[str] = set()
    for c in constraints:
        names.add(c.array)
        if isinstance(c, IndicesConstraint) and c.row_indptr is not None:
            names.add(c.row_indptr)
        counts = c.rows if isinstance(c, IndptrConstraint) else c.positions
        names.update(f.array for f in counts if isinstance(f, LastOf))
    return names


def _size_exprs(signature: Signature, constraints: Sequence[Constraint]) -> list[tuple[str, Any]]:
    """Every size expression a call evaluates, with where it comes from."""
    found = [
        (f"the shape of '{p.name}'", d)
        for p in signature.params
        if isinstance(p, BufferParam)
        for d in p.shape
    ]
    for c in constraints:
        where = f"the constraint on '{c.array}'"
        counts = c.rows if isinstance(c, IndptrConstraint) else c.positions
        found += [(where, f) for f in counts if not isinstance(f, LastOf)]
        if isinstance(c, IndptrConstraint):
            found += [(where, e) for e in (c.nnz, c.max_row_length) if e is not None]
        else:
            found += [(where, e) for e in (c.length, c.row_width) if e is not None]
    return found


def _dim_bindings(signature: Signature) -> list[tuple[str, int, str]]:
    """Shape variables that are not scalar parameters, bound (as TVM does) by the first array
    dimension that is exactly that variable: (array, dimension, variable)."""
    scalars = {p.name for p in signature.params if isinstance(p, ScalarParam)}
    bindings = []
    for p in signature.params:
        if isinstance(p, BufferParam):
            for dim, expr in enumerate(p.shape):
                names = size_names(expr)
                if len(names) == 1 and size_text(expr) in names and not names & scalars:
                    bindings.append((p.name, dim, size_text(expr)))
    return bindings


def _passable(info: ArrayInfo, p: BufferParam) -> Any:
    """What to hand to TVM for an array: itself, or a copy TVM can take (inputs only)."""
    value = info.value
    if info.host is None and not info.device.startswith("cpu"):  # a device tensor: contiguous and aligned
        if p.is_output or (info.c_contiguous and info.device_aligned):
            return value
        return value.contiguous().clone()
    if isinstance(value, np.ndarray) and value.size == 0:
        return _empty_like(value)
    if info.host is not None and info.host.size == 0:  # a torch or DLPack array with no elements
        return _empty_like(info.host)
    if p.is_output or (info.writeable and info.c_contiguous and info.aligned):
        return value
    if hasattr(value, "contiguous") and not isinstance(value, np.ndarray):
        return value.contiguous()
    return np.array(info.host_array(), order="C", copy=True)


def _reshaped(value: Any, shape: tuple[int, ...]) -> Any:
    """``value`` (a numpy array or torch tensor, or another DLPack array on the CPU) with
    ``shape``: a view of a contiguous array, so that a kernel's writes land in the caller's."""
    if isinstance(value, np.ndarray) or hasattr(value, "reshape") and hasattr(value, "data_ptr"):
        reshaped = value.reshape(shape)
    else:
        reshaped = np.from_dlpack(value).reshape(shape)
    return _empty_like(reshaped) if isinstance(reshaped, np.ndarray) and reshaped.size == 0 else reshaped


def _empty_like(array: np.ndarray) -> np.ndarray:
    """A zero-size array with the strides TVM calls compact: each the product of the extents
    after it (0 before a 0 extent), which numpy does not give (``np.ones((4, 0))`` has strides
    ``(0, 0)``)."""
    strides, step = [], array.dtype.itemsize
    for extent in reversed(array.shape):
        strides.append(step)
        step *= extent
    base = np.empty(1, dtype=array.dtype)
    return np.lib.stride_tricks.as_strided(base, shape=array.shape, strides=tuple(reversed(strides)))


#: Device arrays' data must start on this boundary: GPU kernels load up to 16 bytes at once.
DEVICE_ALIGNMENT = 16


class CheckedStructures:
    """Structure arrays on a device that passed their checks, with the sizes they were checked
    for. Checking device arrays copies them to the host, so a kernel called again on the same
    matrix checks it once: the same tensor objects (weak references), unchanged as far as torch
    knows (their data pointers, shapes, strides and ``_version``, which every in-place torch edit
    increments). A write torch does not see (through another library's view of the memory) is
    not noticed; ``kernel(..., check=True)`` on a fresh tensor object checks again."""

    #: Entries kept (the oldest is dropped first).
    LIMIT = 16

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple] = {}

    def seen(self, arrays: Sequence[Any], env: dict[str, int]) -> bool:
        """Whether ``arrays`` (in their current state) were checked with ``env``'s sizes."""
        refs = self._entries.get(self._key(arrays, env))
        return refs is not None and all(ref() is array for ref, array in zip(refs, arrays))

    def remember(self, arrays: Sequence[Any], env: dict[str, int]) -> None:
        """Record that ``arrays`` passed their checks with ``env``'s sizes."""
        try:
            refs = tuple(weakref.ref(array) for array in arrays)
        except TypeError:  # not weak-referenceable: checked on every call
            return
        if len(self._entries) >= self.LIMIT:
            self._entries.pop(next(iter(self._entries)))
        self._entries[self._key(arrays, env)] = refs

    @staticmethod
    def _key(arrays: Sequence[Any], env: dict[str, int]) -> tuple:
        return tuple(_memory_key(a) for a in arrays), tuple(sorted(env.items()))


def _memory_key(value: Any) -> tuple:
    return (id(value), value.data_ptr(), tuple(value.shape), tuple(value.stride()),
            -1 if value.is_inference() else value._version)


def _byte_ranges_overlap(a: Any, b: Any) -> bool:
    """Whether two torch tensors' storage ranges on one device intersect."""
    if not (hasattr(a, "data_ptr") and hasattr(b, "data_ptr")) or a.device != b.device:
        return False
    if a.numel() == 0 or b.numel() == 0:
        return False
    start_a, start_b = a.data_ptr(), b.data_ptr()
    end_a = start_a + _extent_bytes(a)
    end_b = start_b + _extent_bytes(b)
    return start_a < end_b and start_b < end_a


def _extent_bytes(t: Any) -> int:
    return (sum((d - 1) * s for d, s in zip(t.shape, t.stride())) + 1) * t.element_size()


def _int_range(p: ScalarParam) -> Any:
    if p.dtype.startswith(("int", "uint")):
        return np.iinfo(p.dtype)
    return None


def _scalar_value(value: Any, p: ScalarParam, bounds: Any) -> Any:
    """``value`` as a Python number of ``p``'s kind, or ``ArgumentError``."""
    if bounds is not None:
        if type(value) is int and bounds.min <= value <= bounds.max and (value >= 0 or not p.is_size):
            return value  # the common case, checked without the general path below
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            _fail(p.name, f"expected an integer ({p.dtype}), got {type(value).__name__} {value!r}")
        number = int(value)
        if not bounds.min <= number <= bounds.max:
            _fail(p.name, f"value {number} does not fit in {p.dtype}")
        if p.is_size and number < 0:
            _fail(p.name, f"is a size and must be non-negative, got {number}")
        return number
    if p.dtype.startswith(("float", "bfloat")):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            _fail(p.name, f"expected a real number ({p.dtype}), got {type(value).__name__} {value!r}")
        return float(value)
    if p.dtype == "bool":
        if not isinstance(value, (bool, np.bool_)):
            _fail(p.name, f"expected a bool, got {type(value).__name__} {value!r}")
        return bool(value)
    return value


def _shape_text(shape: Sequence[Any]) -> str:
    inner = ", ".join(size_text(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _fail(name: str, message: str) -> None:
    raise ArgumentError(f"argument '{name}': {message}")

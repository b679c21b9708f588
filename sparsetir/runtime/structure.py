"""Checking structure constraints on concrete indptr/indices arrays, vectorized with numpy.

Each check finds the *first* offending position with one pass over the array, so validating
a cora- or pubmed-sized matrix costs a small fraction of the kernel. Comparisons are written
so that int32 data cannot overflow (``a[1:] < a[:-1]``, never ``np.diff``).
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from ..errors import ArgumentError
from .constraints import Constraint, Count, IndicesConstraint, IndptrConstraint, LastOf
from . import native_checks
from .native_checks import indptr_valid, range_limit
from .sizes import Env, compile_size, size_text

Arrays = Mapping[str, np.ndarray]


def count_value(count: Count, arrays: Arrays, env: Env) -> int:
    """The number a product of ``Count`` factors stands for."""
    total = 1
    for factor in count:
        if isinstance(factor, LastOf):
            array = arrays[factor.array]
            total *= int(array[-1]) if array.size else 0
        else:
            total *= compile_size(factor)(env)
    return total


def count_function(count: Count) -> Callable[[Arrays, Env], int]:
    """``count_value`` of ``count`` with its sizes compiled once."""
    parts = [(f.array, None) if isinstance(f, LastOf) else (None, compile_size(f)) for f in count]

    def value(arrays: Arrays, env: Env) -> int:
        total = 1
        for array, size in parts:
            if size is not None:
                total *= size(env)
            else:
                a = arrays[array]
                total *= int(a[-1]) if a.size else 0
        return total

    return value


def quick_check(c: Constraint) -> Callable[[Arrays, Env], bool]:
    """A check of ``c`` that only says whether it holds, at the least cost per call (sizes
    compiled once, one compiled pass over an indptr); where it says no, ``check_indptr`` or
    ``check_indices`` runs and names the problem."""
    name = c.array
    if isinstance(c, IndptrConstraint):
        rows_of = count_function(c.rows)
        nnz_of = compile_size(c.nnz) if c.nnz is not None else None
        limit_of = compile_size(c.max_row_length) if c.max_row_length is not None else None

        def indptr_holds(arrays: Arrays, env: Env) -> bool:
            ptr = arrays[name]
            rows = rows_of(arrays, env)
            limit = limit_of(env) if limit_of is not None and rows else None
            return ptr.ndim == 1 and bool(indptr_valid(ptr, rows, nnz_of(env) if nnz_of is not None else None, limit))

        return indptr_holds
    if c.sorted:
        return lambda arrays, env: False  # the full check is the check
    positions_of = count_function(c.positions)
    length_of = compile_size(c.length)

    def indices_hold(arrays: Arrays, env: Env) -> bool:
        idx = arrays[name]
        positions = positions_of(arrays, env)
        return idx.ndim == 1 and idx.size == positions and (positions == 0 or in_range(idx, length_of(env)))

    return indices_hold


def content_plan(constraints: Sequence[Constraint], arrays: Arrays, env: Env) -> Optional[native_checks.Plan]:
    """The checks of ``constraints`` on these very arrays and sizes as one compiled call, for a
    later call with the same arrays whose contents may have changed; None where a size depends
    on an array's contents (a count given by another array's last entry) or the checks are not
    compiled. ``arrays`` must be the call's NumPy arrays (the plan keeps their addresses)."""
    entries = []
    for c in constraints:
        counts = c.rows if isinstance(c, IndptrConstraint) else c.positions
        if any(isinstance(f, LastOf) for f in counts):
            return None
        array = arrays[c.array]
        if array.ndim != 1:
            return None
        if isinstance(c, IndptrConstraint):
            rows = count_value(c.rows, arrays, env)
            nnz = compile_size(c.nnz)(env) if c.nnz is not None else -1
            limit = compile_size(c.max_row_length)(env) if c.max_row_length is not None and rows else -1
            if array.size != rows + 1:
                return None
            entries.append((native_checks.INDPTR, array, rows, nnz, limit, None))
            continue
        positions = count_value(c.positions, arrays, env)
        if array.size != positions:
            return None
        length = compile_size(c.length)(env)
        entries.append((native_checks.RANGE, array, positions, range_limit(array.dtype, length), 0, None))
        if c.sorted and c.row_indptr is not None:
            ptr = arrays[c.row_indptr]
            if ptr.ndim != 1 or ptr.size < 1:
                return None
            entries.append((native_checks.SORTED_ROWS, array, positions, ptr.size - 1, 0, ptr))
        elif c.sorted:
            entries.append((native_checks.SORTED_WIDTH, array, positions, compile_size(c.row_width)(env), 0, None))
    return native_checks.plan(entries)


def count_text(count: Count) -> str:
    """A product of factors as the user would write it (``m``, ``nnz_i * 4``, ``1``)."""
    if not count:
        return "1"
    return " * ".join(f"{f.array}[-1]" if isinstance(f, LastOf) else _factor_text(f) for f in count)


def check_indptr(c: IndptrConstraint, arrays: Arrays, env: Env) -> None:
    """Raise ``ArgumentError`` unless ``arrays[c.array]`` is a valid indptr for axis ``c.axis``."""
    name, ptr = c.array, arrays[c.array].reshape(-1)
    rows = count_value(c.rows, arrays, env)
    nnz = compile_size(c.nnz)(env) if c.nnz is not None else None
    limit = compile_size(c.max_row_length)(env) if c.max_row_length is not None and rows else None
    if indptr_valid(ptr, rows, nnz, limit):
        return  # valid, by the one-pass compiled check (anything else: the checks below say why)
    if indptr_problem(name, ptr, rows, nnz) is not None:
        # Found a problem: say it again with the sizes as the script writes them (printing
        # them costs more than the check, so only now).
        nnz_text = _equals(c.nnz, nnz) if nnz is not None else None
        _fail(name, indptr_problem(name, ptr, rows, nnz, count_text(c.rows), nnz_text))
    if limit is not None:
        lengths = ptr[1:] - ptr[:-1]
        if lengths.max() > limit:
            r = int(np.flatnonzero(lengths > limit)[0])
            _fail(
                name,
                f"row {r} has {lengths[r]} entries ({name}[{r}]={ptr[r]}, {name}[{r + 1}]={ptr[r + 1]}), "
                f"more than the length of axis {c.axis} ({_equals(c.max_row_length, limit)})",
            )


def indptr_problem(name: str, ptr: np.ndarray, rows: int, nnz: Optional[int] = None,
                   rows_text: Optional[str] = None, nnz_text: Optional[str] = None) -> Optional[str]:
    """What is wrong with the 1-D array ``ptr`` (called ``name``) as the indptr of ``rows`` rows
    over ``nnz`` entries (None: any end), or None: ``rows + 1`` entries, starting at 0, never
    decreasing, ending at ``nnz``. The one indptr validator: kernels (``check_indptr``) and
    ``sparsetir.ops`` both use it; ``*_text`` say how the sizes were written."""
    if indptr_valid(ptr, rows, nnz, None):  # one compiled pass; NumPy's passes below name a problem
        return None
    if ptr.size != rows + 1:
        return f"has {ptr.size} entries, expected {rows_text or f'{rows} rows'} + 1 = {rows + 1}"
    if ptr[0] != 0:
        return f"must start at 0, got {name}[0]={ptr[0]}"
    if ptr.size > 1 and (ptr[1:] < ptr[:-1]).any():
        k = int(np.flatnonzero(ptr[1:] < ptr[:-1])[0])
        return f"not non-decreasing at position {k} ({name}[{k}]={ptr[k]} > {name}[{k + 1}]={ptr[k + 1]})"
    if nnz is not None and ptr[-1] != nnz:
        return f"ends at {name}[{rows}]={ptr[-1]}, expected {nnz_text or nnz}"
    return None


def check_indices(c: IndicesConstraint, arrays: Arrays, env: Env) -> None:
    """Raise ``ArgumentError`` unless ``arrays[c.array]`` holds valid coordinates of ``c.axis``."""
    name, idx = c.array, arrays[c.array].reshape(-1)
    positions = count_value(c.positions, arrays, env)
    if idx.size != positions:
        _fail(name, f"has {idx.size} entries, expected {_equals_count(c.positions, positions)}")
    if positions == 0:
        return
    length = compile_size(c.length)(env)
    if not in_range(idx, length):
        k = int(np.flatnonzero((idx < 0) | (idx >= length))[0])
        _fail(
            name,
            f"out of range at position {k} ({name}[{k}]={idx[k]}, "
            f"expected 0 <= value < {_equals(c.length, length)})",
        )
    if c.sorted:
        _check_sorted(c, idx, arrays, env)


def in_range(idx: np.ndarray, length: int) -> bool:
    """Whether every entry of the integer array ``idx`` is in ``[0, length)``: one pass over it
    viewed as unsigned (a negative entry becomes one of the largest), where min and max take two."""
    kind = idx.dtype.kind
    if kind in "iu" and idx.dtype.isnative and idx.flags.c_contiguous and length > 0:
        if kind == "u":
            return int(idx.max()) < length
        return int(idx.view(f"u{idx.dtype.itemsize}").max()) < range_limit(idx.dtype, length)
    return not (idx.min() < 0 or idx.max() >= length)


def _check_sorted(c: IndicesConstraint, idx: np.ndarray, arrays: Arrays, env: Env) -> None:
    name, positions = c.array, idx.size
    if c.row_indptr is not None:
        ptr = arrays[c.row_indptr].reshape(-1)
        starts = np.zeros(positions + 1, dtype=bool)
        starts[ptr[:-1]] = True
        row_of: Callable[[int], int] = lambda k: int(np.searchsorted(ptr, k, side="right")) - 1
    else:
        width = max(compile_size(c.row_width)(env), 1)
        starts = np.arange(positions + 1) % width == 0
        row_of = lambda k: k // width
    bad = np.flatnonzero((idx[1:] <= idx[:-1]) & ~starts[1:positions])
    if bad.size:
        k = int(bad[0]) + 1
        _fail(
            name,
            f"not strictly increasing within row {row_of(k)} at position {k} "
            f"({name}[{k - 1}]={idx[k - 1]} >= {name}[{k}]={idx[k]}); axis {c.axis} must be sorted",
        )


def _fail(name: str, message: str) -> None:
    raise ArgumentError(f"argument '{name}': {message}")


def _factor_text(expr: object) -> str:
    text = size_text(expr)
    return f"({text})" if " " in text else text


def _equals(expr: object, value: int) -> str:
    text = size_text(expr)
    return str(value) if text == str(value) else f"{text} = {value}"


def _equals_count(count: Count, value: int) -> str:
    text = count_text(count)
    return str(value) if text == str(value) else f"{text} = {value}"

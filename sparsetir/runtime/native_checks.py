"""The indptr check compiled once per machine (``native/structure_checks.c``).

``structure.py`` checks an indptr with NumPy in several passes (starts at 0, never decreases,
ends at nnz, no row too long), each with a fixed cost that outweighs the pass itself on a small
matrix (a few microseconds per call on cora: a kernel's whole run). ``indptr_valid`` says in
one pass whether it is valid; on a failure (or where it cannot run: no C compiler, an unusual
array) ``structure.py``'s checks run and name the first bad position, so messages are the same
either way. (An indices array needs one NumPy pass already: its maximum, viewed unsigned.)

A kernel called again with its last call's arrays runs every check of the call in one compiled
call (``Plan``): the sizes and the arrays' addresses are the last call's, only the contents may
have changed.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from . import toolchain

SOURCE = Path(__file__).parent / "native" / "structure_checks.c"
_SUFFIX = {np.dtype(np.int32): "i32", np.dtype(np.int64): "i64"}


#: The kinds of check a ``Plan`` runs (``native/structure_checks.c``).
INDPTR, RANGE, SORTED_ROWS, SORTED_WIDTH = range(4)


class _Check(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_long), ("wide", ctypes.c_long), ("array", ctypes.c_void_p),
                ("count", ctypes.c_long), ("a", ctypes.c_long), ("b", ctypes.c_long),
                ("ptr", ctypes.c_void_p), ("ptr_wide", ctypes.c_long)]


class _Library:
    def __init__(self, path: Path):
        lib = ctypes.CDLL(str(path))
        self.plan = lib.sparsetir_check_plan
        self.plan.argtypes, self.plan.restype = [ctypes.c_void_p, ctypes.c_long], ctypes.c_long
        self.indptr = {}
        for dtype, suffix in _SUFFIX.items():
            f = getattr(lib, f"sparsetir_check_indptr_{suffix}")
            f.argtypes, f.restype = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_long], ctypes.c_int
            self.indptr[dtype] = f


_state: dict = {}
_lock = threading.Lock()


def _library() -> Optional[_Library]:
    if "lib" not in _state:
        with _lock:
            if "lib" not in _state:
                try:
                    from .disk_cache import native_directory

                    _state["lib"] = _Library(toolchain.build_c_library(SOURCE, native_directory()))
                except (toolchain.ToolchainError, OSError, AttributeError):
                    _state["lib"] = None
    return _state["lib"]


def _plain(array: np.ndarray) -> bool:
    return array.dtype in _SUFFIX and array.flags.c_contiguous and array.dtype.isnative


def indptr_valid(ptr: np.ndarray, rows: int, nnz: Optional[int], max_len: Optional[int]) -> Optional[bool]:
    """Whether ``ptr`` is the indptr of ``rows`` rows (``rows + 1`` entries from 0, never
    decreasing, ending at ``nnz`` unless None, no row longer than ``max_len`` unless None);
    None when this cannot tell (no compiled checks, an unusual array)."""
    lib = _library()
    if lib is None or not _plain(ptr) or ptr.size != rows + 1 or rows < 0:
        return None
    address = ptr.__array_interface__["data"][0]
    return bool(lib.indptr[ptr.dtype](address, rows, -1 if nnz is None else nnz, -1 if max_len is None else max_len))


class Plan:
    """Checks of fixed arrays with fixed sizes, run together by one compiled call: each entry is
    ``(kind, array, count, a, b, ptr)`` as ``native/structure_checks.c`` reads them. The arrays
    must stay alive and unmoved while the plan is used (the caller holds them)."""

    def __init__(self, lib: _Library, entries: Sequence[tuple]):
        checks = (_Check * len(entries))()
        for slot, (kind, array, count, a, b, ptr) in zip(checks, entries):
            slot.kind, slot.wide, slot.array = kind, array.dtype.itemsize == 8, _address(array)
            slot.count, slot.a, slot.b = count, a, b
            if ptr is not None:
                slot.ptr, slot.ptr_wide = _address(ptr), ptr.dtype.itemsize == 8
        self._checks = checks
        self._run = lib.plan
        self._address = ctypes.addressof(checks)
        self._count = len(entries)

    def first_failing(self) -> int:
        """The position of the first entry that does not hold, or -1."""
        return self._run(self._address, self._count)


def plan(entries: Sequence[tuple]) -> Optional[Plan]:
    """A ``Plan`` of ``entries``; None when there are no compiled checks or an array is unusual."""
    lib = _library()
    if lib is None or not all(_plain(e[1]) and (e[5] is None or _plain(e[5])) for e in entries):
        return None
    return Plan(lib, entries)


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def range_limit(dtype: np.dtype, length: int) -> int:
    """``length`` as the bound of a range check on entries of ``dtype`` viewed unsigned: at most
    the first negative value's unsigned image, so a negative entry never passes."""
    return min(length, 1 << 31 if dtype.itemsize == 4 else (1 << 63) - 1)

"""The indptr check compiled once per machine (``native/structure_checks.c``).

``structure.py`` checks an indptr with NumPy in several passes (starts at 0, never decreases,
ends at nnz, no row too long), each with a fixed cost that outweighs the pass itself on a small
matrix (a few microseconds per call on cora: a kernel's whole run). ``indptr_valid`` says in
one pass whether it is valid; on a failure (or where it cannot run: no C compiler, an unusual
array) ``structure.py``'s checks run and name the first bad position, so messages are the same
either way. (An indices array needs one NumPy pass already: its maximum, viewed unsigned.)
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path
from typing import Optional

import numpy as np

from . import toolchain

SOURCE = Path(__file__).parent / "native" / "structure_checks.c"
_SUFFIX = {np.dtype(np.int32): "i32", np.dtype(np.int64): "i64"}


class _Library:
    def __init__(self, path: Path):
        lib = ctypes.CDLL(str(path))
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

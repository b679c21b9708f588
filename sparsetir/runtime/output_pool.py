"""Memory for large outputs, used again once every array on it is gone.

An op returns a new array on every call (``Y = ops.spmm(A, X)`` in a training loop), and a
large one comes from fresh pages: NumPy maps them on allocation and the kernel's first writes
fault them in one 4 KiB page at a time. On the 2-core VM an SpMM on pubmed at width 512 (a 40 MB
output) ran its kernel in 5 ms into an array written before and in 25 ms into a fresh one; the
first calls into fresh huge pages took up to 60 ms while the kernel compacted memory for them.
Peers pay the same (SciPy's and torch's outputs come from ``malloc``, which maps an allocation
this large afresh every time); a caching allocator, as MKL's and torch's GPU ones are, need not.

The pool hands out arrays over memory it mapped itself (``empty``), each through a small
``ctypes`` buffer object that NumPy keeps as the array's base, so every view of the array, and a
torch tensor made from it, holds that object. When the last of them goes, a finalizer puts the
memory back in the pool: the next output of that size class is written to pages that are
already there. Memory is never handed out twice at once, and the caller sees ordinary NumPy
arrays (writable, C-contiguous, page-aligned).

The pool keeps at most ``limit`` bytes of memory that no array uses (512 MiB by default,
``set_limit``) and at most ``PER_CLASS`` idle blocks of a size class; a block coming back
beyond either makes room by unmapping the longest idle ones. ``release()`` unmaps what is
idle. Outputs under ``MIN_BYTES`` come from NumPy as before.
"""

from __future__ import annotations

import collections
import ctypes
import math
import mmap
import threading
import weakref
from typing import Any, Callable

import numpy as np

#: Outputs smaller than this come from NumPy: ``malloc`` keeps such blocks for reuse itself,
#: and hands back the one freed last, still in the cache (measured: ``ops.add`` on bcsstk16,
#: 1.2 MB outputs, 0.35 ms a call from ``malloc``, 0.45 ms from the pool).
MIN_BYTES = 4 << 20
#: Idle blocks kept per size class.
PER_CLASS = 4
#: Idle bytes kept by default.
DEFAULT_LIMIT = 512 << 20


def size_class(nbytes: int) -> int:
    """The block size that serves ``nbytes``: rounded up to an eighth of its power of two (at
    most 12.5% unused), and to whole 64 KiB."""
    step = max(1 << max(nbytes.bit_length() - 4, 0), 1 << 16)
    return -(-nbytes // step) * step


class _Block:
    """One mapping: its memory stays mapped while the pool or an array holds it."""

    __slots__ = ("size", "map", "address")

    def __init__(self, size: int):
        self.size = size
        self.map = mmap.mmap(-1, size)
        if size >= 4 << 20 and hasattr(mmap, "MADV_HUGEPAGE"):
            self.map.madvise(mmap.MADV_HUGEPAGE)  # as NumPy advises its large allocations
        self.address = ctypes.addressof(ctypes.c_char.from_buffer(self.map))


class OutputPool:
    """Idle blocks, oldest first; ``empty`` takes the newest of its size class (or maps a new
    one), an array's end gives it back."""

    def __init__(self, limit: int = DEFAULT_LIMIT):
        self.limit = limit
        self._idle: list[_Block] = []  # in the order they came back
        self._lock = threading.Lock()
        # Blocks whose arrays are gone. A finalizer may run inside ``empty`` (a garbage
        # collection under the lock), so it only appends here (atomic); the lock's holders
        # sort them in.
        self._returned: collections.deque[_Block] = collections.deque()
        #: blocks mapped, and handed out again from the pool (for tests and ``stats``)
        self.mapped = 0
        self.reused = 0

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised C-contiguous array of ``shape`` and ``dtype``, page-aligned; from the
        pool when it is at least ``MIN_BYTES``."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < MIN_BYTES:
            return np.empty(shape, dtype)
        block = self._take(size_class(nbytes))
        buffer = (ctypes.c_char * nbytes).from_address(block.address)
        weakref.finalize(buffer, self._returned.append, block).atexit = False
        return np.frombuffer(buffer, dtype, count=nbytes // dtype.itemsize).reshape(shape)

    def release(self) -> None:
        """Unmap every idle block."""
        self._unmap(lambda idle: True)

    def set_limit(self, limit: int) -> None:
        """Keep at most ``limit`` idle bytes from now on (0: none; what is idle beyond it now is
        unmapped)."""
        self.limit = max(int(limit), 0)
        self._unmap(lambda idle: sum(b.size for b in idle) > self.limit)

    @property
    def idle_bytes(self) -> int:
        """Bytes mapped that no array uses."""
        with self._lock:
            self._settle()
            return sum(b.size for b in self._idle)

    def _take(self, size: int) -> _Block:
        with self._lock:
            self._settle()
            for i in range(len(self._idle) - 1, -1, -1):  # the newest: the likeliest in cache
                if self._idle[i].size == size:
                    self.reused += 1
                    return self._idle.pop(i)
            self.mapped += 1
        return _Block(size)

    def _settle(self) -> None:
        """Sort the returned blocks in (under the lock). A class's oldest idle block makes room
        for a newer one, and the longest idle blocks of any class for one beyond the byte
        limit: memory that large outputs of one size left behind does not keep others out."""
        while self._returned:
            block = self._returned.popleft()
            same = [b for b in self._idle if b.size == block.size]
            if len(same) >= PER_CLASS:
                self._idle.remove(same[0])
                same[0].map.close()
            while self._idle and sum(b.size for b in self._idle) + block.size > self.limit:
                self._idle.pop(0).map.close()
            if block.size <= self.limit:
                self._idle.append(block)
            else:
                block.map.close()

    def _unmap(self, more: Callable[[list[_Block]], bool]) -> None:
        """Unmap the longest idle blocks while ``more(idle blocks)`` says so."""
        with self._lock:
            self._settle()
            extra = []
            while self._idle and more(self._idle):
                extra.append(self._idle.pop(0))
        for block in extra:
            block.map.close()


#: The process's pool, used by every op's output.
POOL = OutputPool()


def empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``POOL.empty``: an output array, on reused memory when large."""
    return POOL.empty(shape, dtype)


def release() -> None:
    """Unmap the idle memory of large outputs (``POOL.release``)."""
    POOL.release()


def set_limit(limit: int) -> None:
    """Keep at most ``limit`` bytes of idle output memory (``POOL.set_limit``)."""
    POOL.set_limit(limit)

"""The kernel cache: compiled kernels by program and target, in memory and on disk.

Compiling a stage-III function costs 0.1-0.3 s. A second build of a structurally equal function
for the same target returns the same compiled object (in memory); a build in a later process
loads the kernel library the first one left on disk (``disk_cache.py``) instead of compiling.
Memory entries are keyed by the function's structural hash and the target's canonical text,
and confirmed with structural equality, so a hash collision can never return the wrong code.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from ..ir.stage2 import SPANS_ATTR
from .._tvm import structural_equal, structural_hash, tirx, tvm
from .constraints import Constraint
from .cpu_form import module_for
from .disk_cache import DiskCache, StoredKernel, default_disk, program_key


@dataclass(frozen=True)
class Compiled:
    """A compiled stage-III function: its entry, how to call it and where it came from.

    ``invoke(args)`` runs the entry on a tuple of arguments, through sparsetir's parallel
    launcher when the library is attached to it (``parallel.py``), else with the caller kept
    off TVM's pool workers. ``library`` is the kernel library on disk (None for a kernel
    compiled in memory), ``key`` its disk-cache key. A GPU kernel's ``entry`` is a
    ``runtime.cuda.Launcher`` of its ``program``.
    """

    func: "tirx.PrimFunc"
    target: "tvm.target.Target"
    entry: Any
    invoke: Callable[[tuple], Any]
    executable: Any = None
    library: Optional[Path] = None
    key: Optional[str] = None
    #: for a GPU target, the ``runtime.cuda.CudaProgram`` the entry launches
    program: Any = None
    _lazy: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def source_module(self) -> Any:
        """A TVM module that can print the generated code (compiled again when this kernel was
        loaded from disk: a linked library keeps machine code only)."""
        if self.executable is None and "executable" not in self._lazy:
            symbol = str(self.func.attrs["global_symbol"])
            self._lazy["executable"] = tvm.compile(module_for(self.func, symbol, self.target), target=self.target)
        return (self.executable if self.executable is not None else self._lazy["executable"]).mod


#: Compiles one function for a target into a ``Compiled`` (``build.py``), storing it on disk
#: under the given key with its constraints when the cache has a disk.
CompileFn = Callable[["tirx.PrimFunc", "tvm.target.Target", Sequence[Constraint], Optional[DiskCache], str],
                     Compiled]
#: Loads a stored kernel (``build.py``).
LoadFn = Callable[[StoredKernel, "tirx.PrimFunc", "tvm.target.Target"], Compiled]


class KernelCache:
    """Compiled kernels by (structure of the function, target), backed by ``disk`` (the process's
    disk cache by default; None for memory only); safe to share between threads."""

    def __init__(self, disk: Optional[DiskCache] = default_disk) -> None:
        self.disk = disk
        self._entries: dict[tuple[int, str], list[Compiled]] = {}
        self._lock = threading.Lock()
        self.compilations = 0
        self.loads = 0
        self.hits = 0

    def get_or_compile(
        self,
        func: "tirx.PrimFunc",
        target: "tvm.target.Target",
        constraints: Sequence[Constraint],
        compile_fn: CompileFn,
        load_fn: LoadFn,
    ) -> Compiled:
        """The cached compilation of ``func`` for ``target``: from memory, else from disk, else
        compiled now (and stored)."""
        keyed = without_trace(func)
        key = (structural_hash(keyed, map_free_vars=True), str(target))
        with self._lock:
            found = self._find(key, keyed)
            if found is not None:
                self.hits += 1
                return found
            disk_key = program_key(keyed, target)
            compiled = self._from_disk(func, keyed, target, disk_key, load_fn)
            if compiled is None:
                compiled = compile_fn(func, target, constraints, self.disk, disk_key)
                self.compilations += 1
            self._entries.setdefault(key, []).append(compiled)
            return compiled

    def _from_disk(self, func: "tirx.PrimFunc", keyed: "tirx.PrimFunc", target: "tvm.target.Target",
                   disk_key: str, load_fn: LoadFn) -> Optional[Compiled]:
        """``func`` (``keyed`` without its trace) loaded from the disk entry ``disk_key``, if stored."""
        if self.disk is None or not self.disk.enabled:
            return None
        stored = self.disk.load(disk_key)
        if stored is None or not structural_equal(without_trace(stored.func), keyed, map_free_vars=True):
            return None
        self.loads += 1
        return load_fn(stored, func, target)

    def clear(self) -> None:
        """Forget every compiled kernel held in memory (the disk keeps its entries)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return sum(len(v) for v in self._entries.values())

    def _find(self, key: tuple[int, str], func: "tirx.PrimFunc") -> Optional[Compiled]:
        for entry in self._entries.get(key, []):
            if structural_equal(without_trace(entry.func), func, map_free_vars=True):
                return entry
        return None


def without_trace(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` without its source-line table: the same program read from another file is a hit."""
    attrs = func.attrs
    return func.without_attr(SPANS_ATTR) if attrs is not None and SPANS_ATTR in attrs else func


default_cache = KernelCache()

"""The in-process cache of compiled kernels.

Compiling a stage-III function costs 0.1-0.2 s; a second build of a structurally equal
function for the same target returns the same compiled object. Entries are keyed by the
function's structural hash and the target's canonical text, and confirmed with structural
equality so that a hash collision can never return the wrong code.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..ir.stage2 import SPANS_ATTR
from .._tvm import structural_equal, structural_hash, tirx, tvm


@dataclass(frozen=True)
class Compiled:
    """A compiled stage-III function: TVM's executable and its entry function."""

    func: "tirx.PrimFunc"
    target: "tvm.target.Target"
    executable: Any
    entry: Any


class KernelCache:
    """Compiled kernels by (structure of the function, target); safe to share between threads."""

    def __init__(self) -> None:
        self._entries: dict[tuple[int, str], list[Compiled]] = {}
        self._lock = threading.Lock()
        self.compilations = 0
        self.hits = 0

    def get_or_compile(
        self,
        func: "tirx.PrimFunc",
        target: "tvm.target.Target",
        compile_fn: Callable[["tirx.PrimFunc", "tvm.target.Target"], Compiled],
    ) -> Compiled:
        """The cached compilation of ``func`` for ``target``, compiling it on a miss."""
        keyed = _without_trace(func)
        key = (structural_hash(keyed, map_free_vars=True), str(target))
        with self._lock:
            found = self._find(key, keyed)
            if found is not None:
                self.hits += 1
                return found
            compiled = compile_fn(func, target)
            self.compilations += 1
            self._entries.setdefault(key, []).append(compiled)
            return compiled

    def clear(self) -> None:
        """Forget every compiled kernel."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return sum(len(v) for v in self._entries.values())

    def _find(self, key: tuple[int, str], func: "tirx.PrimFunc") -> Optional[Compiled]:
        for entry in self._entries.get(key, []):
            if structural_equal(_without_trace(entry.func), func, map_free_vars=True):
                return entry
        return None


def _without_trace(func: "tirx.PrimFunc") -> "tirx.PrimFunc":
    """``func`` without its source-line table: the same program read from another file is a hit."""
    attrs = func.attrs
    return func.without_attr(SPANS_ATTR) if attrs is not None and SPANS_ATTR in attrs else func


default_cache = KernelCache()

"""A kernel that compiles a variant of itself per value of its width parameters.

The default schedule (``schedule/default``) needs constant extents to tile and vectorize a
feature axis, but a script's feature width is usually a parameter (``feat: T.int32``). So the
kernel ``build`` returns for such a script takes the script's own arguments, checks them once,
and runs a *variant*: the program specialized to the call's widths, scheduled and compiled on
the first call with those values, and kept (in memory here, on disk by the build cache). A
variant may also take arguments the script has not: the boundaries of its row partitions,
computed here from the call's ``indptr`` (chunks of equal work, a few per thread on a large
call: ``runtime/partition.py``; O(chunks * log rows)).

A call whose widths are unusual (not positive, or more distinct values than
``MAX_VARIANTS``) runs the *generic* variant: the same schedule without specialized widths.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..errors import ArgumentError
from .kernel import Kernel, KernelBase, bind_arguments
from .launch import launch
from .partition import ROW_COST, chunk_count, row_partition, uniform_partition
from .signature import Signature
from .validate import CallValidator, prepare_unchecked

#: Distinct width values a kernel compiles a variant for; calls with others run the generic one.
MAX_VARIANTS = 16
#: Widths from 1 up to this are specialized (larger ones run the generic variant).
MAX_WIDTH = 1 << 16


@dataclass(frozen=True)
class Partition:
    """How a variant's row-partition arguments are computed from a call's arguments."""

    parts: int  # the variant's parameter for the boundaries
    count: Optional[int]  # the variant's parameter for the chunk count (None: shared, set by another)
    rows: Callable[[list], int]  # the partitioned loop's extent, from the prepared arguments
    weights: Optional[int]  # the script's indptr parameter whose rows the chunks balance
    dtype: str = "int32"  # the boundaries' element type (the partitioned loop's index type)


@dataclass(frozen=True)
class Prefetch:
    """How a variant decides, per call, whether a variant that prefetches gathered rows should
    run instead (``schedule/default/prefetch.py``): the arguments it looks at, by position in
    the script's parameters, and ``decide(dense, indptr, indices) -> lines`` (-1: none)."""

    dense: int
    indptr: int
    indices: int
    decide: Callable[[Any, Any, Any], int]


@dataclass(frozen=True)
class Variant:
    """One compiled variant: its kernel and where each of its arguments comes from."""

    kernel: Kernel
    #: per parameter of the variant: the index of the script's argument it takes, or None for
    #: an argument computed here (a partition's boundaries or chunk count)
    sources: tuple[Optional[int], ...]
    partitions: tuple[Partition, ...]
    #: the script's array arguments, whose sizes add up to an estimate of a call's work
    arrays: tuple[int, ...] = ()
    #: the per-call prefetch decision, for a variant that does not prefetch
    prefetch: Optional[Prefetch] = None
    #: structure checks the variant needs beyond the script's (coordinates its parallel loops
    #: rely on being sorted), run on checked calls: ``CallValidator.check_structure``
    checks: Optional[Callable[[list], None]] = None

    def arguments(self, prepared: list, threads: int) -> list:
        """The variant's arguments for a call whose checked arguments are ``prepared``."""
        args = [prepared[i] if i is not None else None for i in self.sources]
        if not self.partitions:
            return args
        # one chunk count for all (partitions may share their count parameter), from the most work
        found = [(p, p.rows(prepared), prepared[p.weights] if p.weights is not None else None)
                 for p in self.partitions]
        work = max((_last(ptr) if ptr is not None else 0) + ROW_COST * rows for _, rows, ptr in found)
        chunks = chunk_count(work, threads)
        for p, rows, ptr in found:
            args[p.parts] = _boundaries(ptr, rows, chunks, p.dtype)
            if p.count is not None:
                args[p.count] = chunks
        return args

    def estimated_work(self, prepared: list) -> int:
        """The elements of the call's arrays: a kernel reads or writes most of them (at least a
        row of every dense operand per stored entry), so a call with few is not worth a launch."""
        total = 0
        for i in self.arrays:
            value = prepared[i]
            size = getattr(value, "size", None)
            total += int(size) if isinstance(size, int) else int(value.numel()) if hasattr(value, "numel") else 1 << 20
        return total


class SpecializedKernel(KernelBase):
    """A kernel built by ``sparsetir.build`` with the default schedule, called with the script's
    parameters (in order or by name, as ``Kernel``); see the module docs."""

    def __init__(self, signature: Signature, validator: CallValidator, widths: Sequence[str],
                 make: Callable[[Optional[dict[str, int]], int], Variant], threads: Callable[[], int]):
        super().__init__(signature)
        self._validator = validator
        self.widths = list(widths)
        self._width_positions = [signature.names.index(w) for w in self.widths]
        self._make = make
        self._threads = threads
        #: (the validator's record of a call, threads, variant, the launch arguments computed
        #: here by position, work) of the last checked call the validator's fast path accepted:
        #: a call repeating it reuses them (the record holds the call's arrays weakly)
        self._memo: Optional[tuple] = None
        # by (width values or None for the generic variant, prefetched lines or -1 for none)
        self._variants: dict[tuple[Optional[tuple[int, ...]], int], Variant] = {}
        self._lock = threading.Lock()

    def variant(self, **widths: int) -> Kernel:
        """The compiled kernel for these width values (all of ``widths``; none: the generic one),
        compiled now if no call has needed it yet. Its parameters are the script's, without the
        widths, plus the row partitions' (``part``, ``P``)."""
        unknown = sorted(set(widths) - set(self.widths))
        if unknown:
            raise ArgumentError(f"{self.name}: {', '.join(unknown)} is not a width parameter "
                                f"(the widths are: {', '.join(self.widths) or 'none'})")
        if widths and set(widths) != set(self.widths):
            raise ArgumentError(f"{self.name}: give every width ({', '.join(self.widths)}) or none")
        key = tuple(int(widths[w]) for w in self.widths) if widths else None
        return self._get((key, -1)).kernel

    @property
    def generic(self) -> Kernel:
        """The variant that runs any width."""
        return self._get((None, -1)).kernel

    @property
    def func(self) -> Any:
        """The stage-III ``PrimFunc`` of the generic variant."""
        return self.generic.func

    @property
    def target(self) -> Any:
        """The ``tvm.target.Target`` the variants are compiled for."""
        return self.generic.target

    @property
    def compiled(self) -> Any:
        """The generic variant's compiled function."""
        return self.generic.compiled

    def compiled_variants(self) -> dict[tuple[Optional[tuple[int, ...]], int], Kernel]:
        """The variants compiled so far, by (their width values or None for the generic one, the
        cache lines of each gathered row they prefetch: -1 none, 0 all)."""
        return {key: v.kernel for key, v in self._variants.items()}

    def source(self, fmt: Optional[str] = None, **widths: int) -> str:
        """Generated code of the variant for ``widths`` (none given: the generic variant)."""
        return self.variant(**widths).source(fmt)

    def __call__(self, *args: Any, check: bool = True, **kwargs: Any) -> None:
        """Run the kernel; with ``check=False`` skip validation (malformed input is then undefined)."""
        values = bind_arguments(self, args, kwargs)
        threads = max(self._threads(), 1)
        if check:
            prepared, seen = self._validator.prepare(values)
            memo = self._memo
            if seen is not None and memo is not None and memo[0] is seen and memo[1] == threads:
                # The very arguments of the call the memo was made for (a model's loop): its
                # variant, its partition and its launch arguments hold (the partition and the
                # prefetch decision read the contents of arrays that may have changed in place
                # since, which costs balance or speed only, never correctness).
                _, _, variant, computed, work = memo
                if variant.checks is not None:
                    variant.checks(prepared)
                arguments = [prepared[i] if i is not None else computed[k] for k, i in enumerate(variant.sources)]
                launch(variant.kernel, arguments, work)
                return
        else:
            prepared, seen = prepare_unchecked(self.signature, values), None
        key = (self._key(prepared), -1)
        variant = self._variants.get(key) or self._get(key)
        if check and variant.checks is not None:
            variant.checks(prepared)
        if variant.prefetch is not None:
            p = variant.prefetch
            lines = _decided(p, prepared[p.dense], prepared[p.indptr], prepared[p.indices])
            if lines >= 0:
                key = (key[0], lines)
                variant = self._variants.get(key) or self._get(key)
        arguments, work = variant.arguments(prepared, threads), variant.estimated_work(prepared)
        if seen is not None:
            # only the arguments computed here: the caller's arrays are not kept alive by it
            computed = {k: arguments[k] for k, i in enumerate(variant.sources) if i is None}
            self._memo = (seen, threads, variant, computed, work)
        launch(variant.kernel, arguments, work)

    def _key(self, prepared: list) -> Optional[tuple[int, ...]]:
        if not self.widths:
            return None
        key = tuple(int(prepared[i]) for i in self._width_positions)
        if any(not 1 <= w <= MAX_WIDTH for w in key):
            return None
        if (key, -1) not in self._variants:
            specialized = sum(1 for widths, lines in self._variants if widths is not None and lines == -1)
            if specialized >= MAX_VARIANTS:
                return None
        return key

    def _get(self, key: tuple[Optional[tuple[int, ...]], int]) -> Variant:
        found = self._variants.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._variants.get(key)
            if found is None:
                widths, lines = key
                found = self._make(dict(zip(self.widths, widths)) if widths is not None else None, lines)
                self._variants[key] = found
            return found

    def __repr__(self) -> str:
        widths = f", specialized per {', '.join(self.widths)}" if self.widths else ""
        return f"SpecializedKernel({self.name}({', '.join(self.params)}){widths})"


#: Recent partitions: (identity and length of the indptr, its last entry, rows, chunks, dtype)
#: -> boundaries. Any non-decreasing boundaries from 0 to the row count are a valid partition, so
#: one computed for other contents of the array (edited in place, or another array that got its
#: identity) is still safe: only less balanced.
_RECENT: dict[tuple, np.ndarray] = {}
_RECENT_LIMIT = 64


def _last(indptr: Any) -> int:
    """The last entry of an ``indptr`` argument (its stored entries), 0 when it is empty."""
    ptr = indptr if type(indptr) is np.ndarray else _host_ints(indptr)
    return max(int(ptr[-1]), 0) if ptr.size else 0


def _boundaries(indptr: Any, rows: int, chunks: int, dtype: str) -> np.ndarray:
    """``chunks + 1`` row boundaries of equal work (equal rows without an ``indptr``)."""
    if indptr is None:
        return uniform_partition(rows, chunks).astype(dtype, copy=False)
    ptr = indptr if type(indptr) is np.ndarray else _host_ints(indptr)
    key = (id(indptr), ptr.shape[0], int(ptr[-1]) if ptr.size else 0, rows, chunks, dtype)
    found = _RECENT.get(key)
    if found is None:
        if len(_RECENT) >= _RECENT_LIMIT:
            _RECENT.clear()
        found = row_partition(ptr, chunks, ROW_COST) if ptr.shape[0] == rows + 1 else uniform_partition(rows, chunks)
        found = _RECENT[key] = found.astype(dtype, copy=False)
    return found


#: Recent prefetch decisions: (the structure arrays' identities and the operand's shape and
#: dtype) -> lines. A decision is a matter of speed only, so a stale one is safe.
_DECIDED: dict[tuple, int] = {}


def _decided(p: Prefetch, dense: Any, indptr: Any, indices: Any) -> int:
    key = (id(indices), id(indptr), dense.shape, dense.dtype, p.decide)
    found = _DECIDED.get(key)
    if found is None:
        if len(_DECIDED) >= _RECENT_LIMIT:
            _DECIDED.clear()
        found = _DECIDED[key] = p.decide(dense, _host_ints(indptr), _host_ints(indices))
    return found


def _host_ints(value: Any) -> np.ndarray:
    """An integer array argument as a NumPy array (a view where possible)."""
    if isinstance(value, np.ndarray):
        return value
    numpy = getattr(value, "numpy", None)
    if numpy is not None:
        try:
            return value.detach().numpy() if hasattr(value, "detach") else numpy()
        except (RuntimeError, TypeError):
            pass
    return np.from_dlpack(value) if hasattr(value, "__dlpack__") else np.asarray(value)

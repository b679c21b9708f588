"""``ops.spmm(A, X, format="tuned")`` and ``ops.tune_spmm``: the format and the CSR kernel's
choices searched on the caller's matrix and width within a time budget, then remembered with
the matrix and on disk.

``format="auto"`` (``auto.py``) picks among a few formats by a short trial. The tuned mode
runs a longer trial over more: a *plan* is a format with its parameters, and for CSR the
default schedule's ``Choices`` that act on SpMM. The candidates:

- **CSR with the default choices**, always: the reference every other result is checked
  against and every other time is compared with (what ``format="csr"`` runs);
- the **formats** ``auto.candidates`` proposes, plus BSR at every block size whose blocks are
  at least ``EXTRA_BSR_DENSITY`` full and the hybrid whenever 90 % of the rows fit its widest
  bucket;
- **CSR with one choice changed** (``KNOBS``): ``chunks_per_thread`` (row chunks per thread of
  the launch: more chunks even out threads that start late), ``prefetch`` (the lines of each
  gathered row of ``X`` fetched ahead; the default decides per matrix, ``ops._spmm_prefetch``),
  ``max_vectors`` (the vector accumulators of the register tile) and ``prefetch_distance``
  (how many entries ahead whole rows are prefetched, tried with ``prefetch=0``: a narrow row of
  a large ``X`` waits on L3 longer than 8 entries take; soc_slashdot0902 at width 32, 1.5x at
  16-32).

The search spends ``budget_s`` seconds, conversions and compilations included:

1. *prepare*, until ``PREPARE_SHARE`` of the budget (or less, when the fewest rounds of the
   candidates so far would pass ``ROUNDS_SHARE``): each candidate, most promising first, is
   converted or compiled (once per process; kernels are kept on disk) and run once; its result
   must be ``np.allclose`` to CSR's, or it is rejected. A candidate whose kernel is one already
   prepared (the same compiled program, the same chunks) is skipped.
2. *rounds*, until ``ROUNDS_SHARE``: the candidates take turns, one product each per round in a
   rotating order, so a slow spell of the machine falls on all of them alike; a candidate's
   score is the median over the rounds of its time over CSR's time in the same round.
3. *combine*: the best value of each CSR choice that beat the default, all together, is
   prepared as one more candidate when two or more did.
4. *decide*, until the budget is spent: CSR, the three best-scored candidates and the
   combination take turns afresh (the search picked them among noisy measurements, which
   flatters them). The best median wins if it beats CSR by ``MARGIN`` and its fastest product
   is faster than CSR's fastest; otherwise CSR with the default choices.

Every measuring phase runs at least ``MIN_ROUNDS`` timed rounds and at most ``MAX_ROUNDS``, so
a tiny budget still decides (on fewer candidates) and a fast kernel does not spin for the
whole budget.

The decision (``TunedSpmm``) is kept with the matrix per width and dtype (``decision(A, X)``)
and written to a ``DecisionStore`` (JSON files under ``ops-tuned/`` of the disk cache root),
keyed by the operation, the width, the dtype, the thread count, the target and the matrix (its
sizes, its row-length histogram and a digest of its structure): another process with the same
matrix reads the decision and measures nothing. ``sparsetir.tune``'s ``TuningDatabase`` keeps
``Choices`` only (its records are points of that space), not a format, so the tuned mode has a
store of its own.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import statistics
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np

from ..errors import ArgumentError
from ..runtime.arrays import kernel_view
from ..runtime.disk_cache import default_root
from ..runtime.target import host_target
from ..schedule.default import Choices
from . import auto, formatted
from .formatted import CSR, SpmmFormat
from .inputs import CsrInput, dense_operand, fail, is_torch_tensor, row_partition
from .kernels import KernelKey

#: Seconds ``format="tuned"`` spends on a matrix and width it has no decision for.
BUDGET_S = 5.0
#: The CSR choices searched, each value tried with the others at their defaults.
KNOBS: dict[str, tuple[int, ...]] = {
    "chunks_per_thread": (2, 4, 8),
    "prefetch": (-1, 0, 1, 2, 4),
    "max_vectors": (2, 4, 16),
    "prefetch_distance": (16, 32),
}
#: What a knob's candidates set besides the knob: a distance acts only where rows are prefetched.
WITH_KNOB: dict[str, dict[str, int]] = {"prefetch_distance": {"prefetch": 0}}
#: BSR block sizes tried beyond auto's: those whose blocks are at least this full.
EXTRA_BSR_DENSITY = 0.45
#: Shares of the budget at which preparing and the first rounds stop.
PREPARE_SHARE = 0.5
ROUNDS_SHARE = 0.75
WARMUPS = 1
MIN_ROUNDS = 3
MAX_ROUNDS = 1000
#: Finalists besides CSR and the combination.
FINALISTS = 3
#: How much faster than CSR with the default choices a plan must be to be chosen.
MARGIN = 1.03
#: Version of the store's records; a record of another version is ignored.
STORE_VERSION = 1

DEFAULT_CHOICES = Choices()


@dataclass(frozen=True)
class Plan:
    """How a product runs: a format, and for CSR the choices of its kernel (``prefetch`` None:
    the ops' own per-matrix decision)."""

    format: SpmmFormat = CSR
    choices: Choices = DEFAULT_CHOICES

    @property
    def is_default(self) -> bool:
        """Whether this is what ``format="csr"`` runs."""
        return self.format.name == "csr" and self.choices == DEFAULT_CHOICES

    def __str__(self) -> str:
        if self.format.name != "csr":
            return str(self.format)
        changed = [f"{name}={getattr(self.choices, name)}" for name in KNOBS
                   if getattr(self.choices, name) != getattr(DEFAULT_CHOICES, name)]
        return f"csr({', '.join(changed)})" if changed else "csr"

    def as_json(self) -> dict:
        """The plan as the store writes it."""
        return {"format": self.format.name, "block": self.format.block, "widths": list(self.format.widths),
                **{name: getattr(self.choices, name) for name in KNOBS}}

    @classmethod
    def from_json(cls, record: dict) -> "Plan":
        """The plan ``as_json`` wrote; ``ValueError`` for anything else."""
        fmt = SpmmFormat(record["format"], int(record["block"]), tuple(int(w) for w in record["widths"]))
        try:
            fmt = formatted.resolve("stored plan", fmt, None)
        except ArgumentError as err:
            raise ValueError(str(err)) from err
        fmt = CSR if fmt == CSR else fmt  # the one object ``spmm`` tests for
        values = {}
        for name in KNOBS:
            value = record.get(name, getattr(DEFAULT_CHOICES, name))  # a knob newer than the record
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"{name} must be an integer, got {value!r}")
            values[name] = value
        if values["chunks_per_thread"] is None or values["chunks_per_thread"] < 1 or \
                values["max_vectors"] is None or values["max_vectors"] < 1 or \
                (values["prefetch"] is not None and values["prefetch"] < -1) or \
                values["prefetch_distance"] is None or values["prefetch_distance"] < 1:
            raise ValueError(f"choices out of range: {values}")
        return cls(fmt, dataclasses.replace(DEFAULT_CHOICES, **values))


@dataclass
class TunedSpmm:
    """The plan the tuned mode chose for one matrix, width and dtype, and how it was decided."""

    plan: Plan
    width: int
    dtype: str
    #: "measured" (searched now), "stored" (read from the store), "default" (nothing to tune:
    #: an empty product; or a budget of 0 and nothing stored).
    how: str
    #: CSR's time over the plan's (the median ratio of the deciding rounds), when measured.
    speedup: Optional[float] = None
    #: Fastest product in seconds of each candidate measured (by its ``str``), in the last
    #: rounds it took part in.
    seconds: dict = field(default_factory=dict)
    #: Median time relative to CSR of each candidate measured, in the last rounds it took part in.
    ratios: dict = field(default_factory=dict)
    #: Candidates left out, and why (a result unlike CSR's, an error).
    rejected: dict = field(default_factory=dict)
    #: The whole search, or reading the store.
    trial_seconds: float = 0.0
    #: How a CSR plan with other choices runs: its kernel's key and the kernel's arguments after
    #: the dense ones (``CsrInput.tail`` with the plan's row chunks); None for the default.
    kernel_key: Optional[KernelKey] = field(default=None, repr=False)
    tail: Optional[tuple] = field(default=None, repr=False)
    _kernel: Any = field(default=None, init=False, repr=False, compare=False)

    def kernel(self, library: Any) -> Any:
        """The compiled kernel of a CSR plan with other choices in ``library`` (``ops.library``;
        None: the default kernel), resolved once per library."""
        if self.kernel_key is None:
            return None
        if self._kernel is None or self._kernel[0] is not library:
            self._kernel = (library, library.get(self.kernel_key))
        return self._kernel[1]

    def describe(self) -> str:
        """One line: the plan, how it was decided, and the speedup over CSR."""
        gain = f", {self.speedup:.2f}x csr" if self.speedup else ""
        tried = f", {len(self.seconds)} candidates measured" if self.how == "measured" else ""
        return (f"width {self.width} {self.dtype}: {self.plan} ({self.how}{gain}{tried}; "
                f"{1e3 * self.trial_seconds:.0f} ms)")


def tune_spmm(A: Any, X: Any, budget_s: float = BUDGET_S, *, store: Any = None, retune: bool = False) -> TunedSpmm:
    """The plan of ``spmm(A, X, format="tuned")`` for ``A`` at ``X``'s width and dtype: the one
    kept with ``A``, else the one in ``store`` (a directory or a ``DecisionStore``; default:
    ``ops-tuned/`` under the disk cache root), else searched on ``X`` within ``budget_s``
    seconds (0: CSR with the default choices, not stored). ``retune=True`` searches again and
    replaces the decision."""
    budget_s = _checked_budget(budget_s)
    if not isinstance(retune, bool):
        fail("tune_spmm: retune", f"must be True or False, got {retune!r}")
    store = as_store(store)
    ops = _ops()
    a = ops._csr("tune_spmm: A", A)
    X = dense_operand("tune_spmm: X", X, a.dtype, a.shape[1])
    return _decision(A, a, X, budget_s, store, retune)


def decision(A: Any, X: Any, a: Optional[CsrInput] = None) -> TunedSpmm:
    """The plan ``format="tuned"`` runs for ``A`` at ``X``'s width (``X`` checked by the caller),
    decided now with ``BUDGET_S`` when ``A`` has none yet."""
    if a is None:
        a = _ops()._csr("spmm: A", A)
    made = a.kernels.get(("tuned", int(X.shape[1])))
    return made if made is not None else _decision(A, a, X, BUDGET_S, as_store(None), False)


def _decision(A: Any, a: CsrInput, X: Any, budget_s: float, store: "DecisionStore", retune: bool) -> TunedSpmm:
    # Kept with A's preparation (its dtype is A's), beside the kernels its calls resolve
    # (``CsrInput.kernels``): a call finds it with one dict lookup.
    key = ("tuned", int(X.shape[1]))
    made = a.kernels.get(key)
    if made is None or retune:
        made = a.kernels[key] = _decide(A, a, X, budget_s, store, retune)
    return made


def _decide(A: Any, a: CsrInput, X: Any, budget_s: float, store: "DecisionStore", retune: bool) -> TunedSpmm:
    start = time.perf_counter()
    width = int(X.shape[1])
    if a.nnz == 0 or width == 0:
        return TunedSpmm(Plan(), width, a.dtype, "default")
    key = _store_key(A, a, width)
    record = None if retune else store.load(key)
    if record is not None:
        made = TunedSpmm(record["plan"], width, a.dtype, "stored", record.get("speedup"),
                         dict(record.get("seconds", {})), dict(record.get("ratios", {})))
    elif budget_s == 0:
        made = TunedSpmm(Plan(), width, a.dtype, "default")
    else:
        made = _Search(A, a, X, budget_s).run()
        store.save(key, {"plan": made.plan, "speedup": made.speedup, "seconds": made.seconds, "ratios": made.ratios})
    made.kernel_key, made.tail = _runtime(a, width, made.plan)
    made.trial_seconds = time.perf_counter() - start
    return made


def _checked_budget(budget_s: Any) -> float:
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float, np.integer, np.floating)):
        fail("tune_spmm: budget_s", f"must be a number of seconds, got {type(budget_s).__name__}")
    if not math.isfinite(budget_s) or budget_s < 0:
        fail("tune_spmm: budget_s", f"must be a finite number of seconds >= 0, got {budget_s!r}")
    return float(budget_s)


def _ops() -> Any:
    from sparsetir import ops  # the package imports this module: resolve it at call time

    return ops


# --- running a plan ---------------------------------------------------------------------------


def _runtime(a: CsrInput, width: int, plan: Plan) -> tuple[Optional[KernelKey], Optional[tuple]]:
    """The kernel key and kernel arguments of a CSR plan with other choices (None, None for the
    default and for other formats, which run as ``format=`` runs them)."""
    if plan.format.name != "csr" or plan.is_default:
        return None, None
    return _kernel_key(a, width, plan.choices), _tail(a, plan.choices.chunks_per_thread)


def _kernel_key(a: CsrInput, width: int, choices: Choices) -> KernelKey:
    """The CSR kernel of ``choices`` at ``width``: the schedule's choices in ``choices=``, the
    prefetch in the key's own fields (``ops._spmm_prefetch`` decides for None)."""
    lines = choices.prefetch
    if lines is None:
        prefetch, lines = _ops()._spmm_prefetch(a, width), 0
    else:
        prefetch, lines = lines >= 0, max(lines, 0)
    schedule = dataclasses.replace(choices, prefetch=None, chunks_per_thread=1)
    return KernelKey("spmm", a.dtype, width, prefetch=prefetch, prefetch_lines=lines, choices=schedule)


def _tail(a: CsrInput, chunks_per_thread: int) -> tuple:
    """``a.tail`` with ``chunks_per_thread`` row chunks per thread (the kernel's ``part``, ``P``)."""
    if chunks_per_thread == 1:
        return a.tail
    part = row_partition(a.indptr, _ops()._parts() * chunks_per_thread)
    return a.tail[:5] + (kernel_view(part), int(part.shape[0]) - 1)


def runner(A: Any, X: Any, plan: Plan) -> Callable[[], Any]:
    """``A @ X`` on ``plan``, ready to run again and again (converted, compiled): what the search
    times, for tests and benchmarks."""
    ops = _ops()
    a = ops._csr("runner: A", A)
    return _run_plan(A, a, dense_operand("runner: X", X, a.dtype, a.shape[1]), plan)[0]


def _run_plan(A: Any, a: CsrInput, X: Any, plan: Plan) -> tuple[Callable[[], Any], tuple]:
    """A product on ``plan`` (prepared: converted, compiled) and what identifies the program it
    runs, so that two plans that run the same are measured once."""
    ops = _ops()
    if plan.format.name != "csr":
        ops._format_kernel(ops.converted(A, a, plan.format), a.dtype, int(X.shape[1]))  # compiled now
        return (lambda: ops._spmm_formatted(A, a, X, plan.format)), ("format", str(plan.format))
    key, tail = _runtime(a, int(X.shape[1]), plan)
    if key is None:
        kernel = ops._kernel(a, "spmm", int(X.shape[1]))
        return (lambda: ops._spmm_csr(A, a, X)), ("csr", kernel.compiled.key or "default", a.tail[-1])
    kernel = ops.library.get(key)
    return (lambda: ops._spmm_csr_with(A, a, X, kernel, tail)), ("csr", kernel.compiled.key or repr(key), tail[-1])


# --- the search ---------------------------------------------------------------------------------


@dataclass
class _Entry:
    plan: Plan
    run: Callable[[], Any]
    seconds: float  # one product, when it was checked


def candidates(stats: Any) -> list[Plan]:
    """Every plan worth a trial for a matrix with ``stats``, CSR with the default choices first
    and the most promising next."""
    formats = auto.candidates(stats)[1:]
    formats += [SpmmFormat("bsr", block=b) for b, d in stats.block_density
                if d >= EXTRA_BSR_DENSITY and SpmmFormat("bsr", block=b) not in formats]
    if stats.row_p90 <= formatted.HYB_MAX_WIDTH and not any(f.name == "hyb" for f in formats):
        formats.append(SpmmFormat("hyb", widths=formatted.hyb_widths(stats)))
    knob = [Plan(CSR, dataclasses.replace(DEFAULT_CHOICES, **WITH_KNOB.get(name, {}), **{name: value}))
            for name, values in KNOBS.items() for value in values]
    return [Plan()] + knob[:2] + [Plan(f) for f in formats] + knob[2:]


class _Search:
    """One search on ``A`` (prepared as ``a``) and ``X`` within ``budget_s`` (module docs)."""

    def __init__(self, A: Any, a: CsrInput, X: Any, budget_s: float):
        self.A, self.a, self.X = A, a, X
        self.start = time.perf_counter()
        self.budget = budget_s
        self.rejected: dict[str, str] = {}
        self.seen: set = set()
        self.reference: Optional[np.ndarray] = None
        self.prepare_seconds: list[float] = []

    def run(self) -> TunedSpmm:
        width = int(self.X.shape[1])
        pool = candidates(_ops()._stats(self.A, self.a))
        entries = [self._prepare(pool[0])]
        for plan in pool[1:]:
            # Stop when the next candidate's preparation would pass PREPARE_SHARE, or the
            # fewest rounds of every candidate (the next one as slow as CSR) would pass
            # ROUNDS_SHARE: large products leave time for fewer candidates.
            expected = statistics.fmean(self.prepare_seconds)
            product = sum(e.seconds for e in entries) + entries[0].seconds
            if self._elapsed() + expected > PREPARE_SHARE * self.budget or \
                    self._elapsed() + expected + (WARMUPS + MIN_ROUNDS) * product > ROUNDS_SHARE * self.budget:
                break
            entry = self._prepare(plan)
            if entry is not None:
                entries.append(entry)
        made = TunedSpmm(Plan(), width, self.a.dtype, "measured", rejected=self.rejected)
        if len(entries) == 1:
            made.speedup = 1.0
            return made
        scores = _rounds(entries, self.start + ROUNDS_SHARE * self.budget, WARMUPS)
        ranked = sorted(entries[1:], key=lambda e: scores[str(e.plan)][1])
        finalists = [entries[0]] + ranked[:FINALISTS]
        combined = self._combined(entries, scores)
        if combined is not None:
            finalists.append(combined)
        final = _rounds(finalists, self.start + self.budget, 0 if combined is None else WARMUPS)
        made.seconds = {name: best for name, (best, _) in {**scores, **final}.items()}
        made.ratios = {name: ratio for name, (_, ratio) in {**scores, **final}.items()}
        default = str(entries[0].plan)
        winner = min(finalists, key=lambda e: final[str(e.plan)][1])
        best, ratio = final[str(winner.plan)]
        if ratio * MARGIN <= 1.0 and best < final[default][0]:
            made.plan, made.speedup = winner.plan, 1.0 / ratio
        else:
            made.speedup = 1.0
        return made

    def _elapsed(self) -> float:
        return time.perf_counter() - self.start

    def _prepare(self, plan: Plan) -> Optional[_Entry]:
        """``plan`` converted or compiled, run once and checked against CSR (None: rejected, or a
        program already prepared)."""
        t0 = time.perf_counter()
        try:
            run, program = _run_plan(self.A, self.a, self.X, plan)
            if program in self.seen:
                return None
            t1 = time.perf_counter()
            result = _as_numpy(run())
            seconds = time.perf_counter() - t1
        except Exception as err:  # a candidate TVM or a rule refuses: the others still compete
            if plan.is_default:
                raise
            self.rejected[str(plan)] = f"{type(err).__name__}: {err}"
            return None
        finally:
            self.prepare_seconds.append(time.perf_counter() - t0)
        self.seen.add(program)
        if self.reference is None:
            self.reference = result
        elif not _close(result, self.reference):
            self.rejected[str(plan)] = "its result differs from CSR's"
            return None
        return _Entry(plan, run, seconds)

    def _combined(self, entries: list[_Entry], scores: dict) -> Optional[_Entry]:
        """The best value of every CSR choice that beat the default, together, prepared; None
        when fewer than two did, or no time is left."""
        best: dict[str, tuple[float, Any]] = {}
        for e in entries[1:]:
            if e.plan.format.name != "csr":
                continue
            ratio = scores[str(e.plan)][1]
            for name in KNOBS:
                value = getattr(e.plan.choices, name)
                if value != getattr(DEFAULT_CHOICES, name) and ratio < 1.0 and ratio < best.get(name, (1.0, None))[0]:
                    best[name] = (ratio, value)
        if len(best) < 2 or self._elapsed() + max(self.prepare_seconds) > self.budget:
            return None
        return self._prepare(Plan(CSR, dataclasses.replace(DEFAULT_CHOICES, **{n: v for n, (_, v) in best.items()})))


def _rounds(entries: list[_Entry], until: float, warmups: int) -> dict[str, tuple[float, float]]:
    """Round robin over ``entries`` (the first one the default) until ``until`` (between
    ``MIN_ROUNDS`` and ``MAX_ROUNDS`` timed rounds): each one's fastest product and its median
    time over the default's in the same round, by its ``str``."""
    times: list[list[float]] = [[] for _ in entries]
    rounds = 0
    n = len(entries)
    while rounds < warmups + MIN_ROUNDS or (rounds < warmups + MAX_ROUNDS and time.perf_counter() < until):
        for k in range(n):
            j = (rounds + k) % n  # a rotating order: no candidate always runs right after another
            t0 = time.perf_counter()
            entries[j].run()
            if rounds >= warmups:
                times[j].append(time.perf_counter() - t0)
        rounds += 1
    base = times[0]
    return {str(e.plan): (min(t), statistics.median(x / b for x, b in zip(t, base)))
            for e, t in zip(entries, times)}


def _as_numpy(out: Any) -> np.ndarray:
    return out.numpy() if is_torch_tensor(out) else np.asarray(out)


def _close(result: np.ndarray, reference: np.ndarray) -> bool:
    """Whether ``result`` equals CSR's ``reference`` up to rounding (``sparsetir.tune``'s test)."""
    finite = np.abs(reference[np.isfinite(reference)])
    scale = float(finite.max()) if finite.size else 1.0
    return result.shape == reference.shape and bool(
        np.allclose(result, reference, rtol=1e-4, atol=1e-5 * max(scale, 1e-30), equal_nan=True))


# --- the store ----------------------------------------------------------------------------------


class DecisionStore:
    """The tuned mode's decisions on disk: one JSON file per key in ``directory`` (default:
    ``ops-tuned/`` under the disk cache root, ``$SPARSETIR_CACHE_DIR`` else ``~/.cache/sparsetir``).
    A file that cannot be read is reported (a warning) and ignored: the search runs again."""

    def __init__(self, directory: Union[str, os.PathLike, None] = None):
        self._directory = Path(directory) if directory is not None else None

    @property
    def directory(self) -> Path:
        """Where the files are (the default is read when first needed)."""
        return self._directory if self._directory is not None else default_root() / "ops-tuned"

    def path(self, key: dict) -> Path:
        """The file of ``key``."""
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
        return self.directory / f"{key['op']}-{digest}.json"

    def load(self, key: dict) -> Optional[dict]:
        """The record stored for ``key`` (its ``plan`` a ``Plan``), or None."""
        path = self.path(key)
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        except OSError as err:
            warnings.warn(f"sparsetir.ops: cannot read the tuned decision {path} ({err}); tuning again", stacklevel=4)
            return None
        try:
            record = json.loads(text)
            if record.get("version") != STORE_VERSION or record.get("key") != key:
                return None  # another version's, or a digest collision
            record["plan"] = Plan.from_json(record["plan"])
            if record.get("speedup") is not None and not isinstance(record["speedup"], (int, float)):
                raise ValueError(f"speedup must be a number, got {record['speedup']!r}")
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            warnings.warn(f"sparsetir.ops: ignoring the unreadable tuned decision {path} ({err})", stacklevel=4)
            return None
        return record

    def save(self, key: dict, record: dict) -> None:
        """Store ``record`` for ``key`` (written whole, then renamed: a reader never sees half)."""
        body = dict(record, version=STORE_VERSION, key=key, plan=record["plan"].as_json())
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as handle:
                json.dump(body, handle, indent=1, sort_keys=True)
            os.replace(handle.name, path)
        except OSError as err:
            warnings.warn(f"sparsetir.ops: cannot store the tuned decision in {path} ({err}); it is kept "
                          "for this process only", stacklevel=4)

    def __repr__(self) -> str:
        return f"DecisionStore({self.directory})"


def as_store(store: Any) -> DecisionStore:
    """``tune_spmm``'s ``store=``: None (the default directory), a directory or a ``DecisionStore``."""
    if store is None or isinstance(store, (str, os.PathLike)):
        return DecisionStore(store)
    if isinstance(store, DecisionStore):
        return store
    fail("tune_spmm: store", f"must be a directory (str or os.PathLike) or an ops.tuned.DecisionStore, "
                             f"got {type(store).__name__}")


def _store_key(A: Any, a: CsrInput, width: int) -> dict:
    """What a decision is for: the operation, width, dtype, threads, target and matrix."""
    ops = _ops()
    matrix = ops.prepared.get("tuned matrix", A, lambda: _matrix_key(a))
    return {"op": "spmm", "width": width, "dtype": a.dtype, "threads": ops._parts(), "target": _target(),
            "matrix": matrix}


def _matrix_key(a: CsrInput) -> dict:
    """The matrix as the store knows it: ``sparsetir.tune``'s fingerprint of its rows (sizes,
    row-length histogram) and a digest of its structure, so equal keys are the same matrix."""
    from ..tune.fingerprint import row_lengths

    rows = row_lengths("indptr", a.indptr)
    digest = hashlib.blake2b(a.indptr.tobytes(), digest_size=16)
    digest.update(a.indices.tobytes())
    return {"rows": a.shape[0], "columns": a.shape[1], "nnz": a.nnz, "histogram": list(rows.histogram),
            "structure": digest.hexdigest()}


@lru_cache(maxsize=None)
def _target() -> str:
    return str(host_target())


__all__ = ["BUDGET_S", "DecisionStore", "Plan", "TunedSpmm", "candidates", "decision", "runner", "tune_spmm"]

"""``sparsetir bench --scripts``: users' scripts built with ``sparsetir.build(f)``, checked and timed.

Two parts, each result checked against a float64 NumPy/SciPy reference (``script_cases.py``):

- **vs peers**: the README's SpMM and SDDMM scripts (``README_SPMM``, ``README_SDDMM``: the
  computations of ``sparsetir.ops.spmm`` and ``ops.sddmm``), built with the default schedule and called
  the way a user calls them (by name, arguments checked), timed against ``sparsetir.ops``, SciPy,
  torch and MKL on the chosen matrices and widths, exactly as ``sparsetir bench`` times its
  kernels (``kernels.KERNELS`` gives the peers, the operands and the reference);
- **vs serial**: every ``examples/*.py`` (not ``gnn/``) built with defaults against the same script
  built with ``schedule="none"``, on inputs of realistic size (``script_cases.SPECS``: built from
  each chosen matrix where the example is graph-like, random otherwise), with what the default
  schedule did (``default_build.schedule_of(f, **widths).applied``).

A script's kernel writes into an output array the caller allocates; each checked answer is read
and the array is put back to its initial contents right after (NaN where the script writes every
element), outside the timed region, so a kernel that stops writing cannot pass on a stale answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

import numpy as np
import scipy.sparse

from . import interleave
from .check import mismatch
from .kernels import KERNELS, Case, Impl
from .report import PEERS, Measured, align, geomean, ms_cell, ratio_bars
from .script_cases import NAMES, SPECS, Spec, fitted, magnitude_of, nans
from .timing import ALONE, Interleave, Timing, measure

#: The SpMM script of README.md's section "A script", verbatim (a test keeps the two equal).
README_SPMM = '''\
from sparsetir.script import tir as T


@T.prim_func
def csr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
             m: T.int32, n: T.int32, feat: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 2})
    I = T.dense_fixed(m)                                          # rows of A and C
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")  # A's stored columns, per row
    J_dense = T.dense_fixed(n)                                    # rows of B
    K = T.dense_fixed(feat)                                       # columns of B and C
    A = T.match_sparse_buffer(a, (I, J), dtype="float32")
    B = T.match_sparse_buffer(b, (J_dense, K), dtype="float32")
    C = T.match_sparse_buffer(c, (I, K), dtype="float32")
    with T.sp_iter([I, J, K], "SRS", "spmm") as [i, j, k]:        # i, k spatial; j reduced
        with T.init():
            C[i, k] = T.float32(0)
        C[i, k] = C[i, k] + A[i, j] * B[j, k]
'''

#: The SDDMM script of README.md's section "A script", verbatim (a test keeps the two equal).
README_SDDMM = '''\
from sparsetir.script import tir as T


@T.prim_func
def sddmm(a: T.handle, x: T.handle, y: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
          m: T.int32, n: T.int32, feat: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    J_dense = T.dense_fixed(n)
    K = T.dense_fixed(feat)
    A = T.match_sparse_buffer(a, (I, J), dtype="float32")
    X = T.match_sparse_buffer(x, (I, K), dtype="float32")
    Y = T.match_sparse_buffer(y, (J_dense, K), dtype="float32")
    C = T.match_sparse_buffer(c, (I, J), dtype="float32")
    with T.sp_iter([I, J, K], "SSR", "sddmm") as [i, j, k]:        # i, j spatial; k reduced
        with T.init():
            C[i, j] = T.float32(0)
        C[i, j] = C[i, j] + A[i, j] * X[i, k] * Y[j, k]
'''

#: The README's scripts by the name the bench gives them.
README_SCRIPTS = {"readme_spmm": README_SPMM, "readme_sddmm": README_SDDMM}

#: Where the examples live: beside the package in a checkout (``examples/``).
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# The implementations' names in the tables and the JSON.
SCRIPT = "script"
OPS = "ops"
DEFAULT = "default"
SERIAL = "serial"

# The vs-peers part: which kernel of kernels.KERNELS each script computes.
VS_PEERS = {"csr_spmm": "spmm", "sddmm": "sddmm"}


# ------------------------------------------------------------------------------------ results


@dataclass
class PeerRow(Measured):
    """The script, sparsetir.ops and the peers on one case (matrix, kernel, width)."""

    matrix: str
    shape: tuple[int, int]
    nnz: int
    kernel: str
    width: int
    script: str  # where the script comes from, in words
    timings: dict[str, Timing]
    interleaved_with: Optional[str] = None

    def ratio(self, other: Optional[str], best: bool = False) -> Optional[float]:
        """The script's speed over ``other``'s: its time over the script's (above 1: the script is faster)."""
        ours, theirs = self.ms(SCRIPT, best), self.ms(other, best) if other else None
        return theirs / ours if ours and theirs else None

    def to_json(self) -> dict[str, Any]:
        others = [name for name in (OPS, *PEERS) if name in self.timings]
        return {
            "matrix": self.matrix, "shape": list(self.shape), "nnz": self.nnz, "kernel": self.kernel,
            "width": self.width, "script": self.script, "interleaved_with": self.interleaved_with,
            "passed": not self.errors,
            "impls": {name: _timing_json(t) for name, t in self.timings.items()},
            "script_vs": {name: self.ratio(name) for name in others},
            "script_vs_from_best_rounds": {name: self.ratio(name, best=True) for name in others},
            "faster_peer": self.faster_peer,
            "script_vs_faster_peer": self.ratio(self.faster_peer),
        }


@dataclass
class SerialRow(Measured):
    """One example built with the default schedule and serially, on one input."""

    script: str
    input: str  # the matrix (and how it was cut) or "random"
    sizes: dict[str, int]  # the script's scalar arguments
    timings: dict[str, Timing]
    kernel_type: str = ""  # the class of the default build's kernel
    rules: list[str] = field(default_factory=list)  # "rule@block" of every rule that applied
    schedule_error: Optional[str] = None  # schedule_of failed: why
    interleaved_with: Optional[str] = None
    # sparsetir.build's time per build, the first time this run built the script (the compiled
    # kernels are cached, on disk too: a later run may find them); a width's variant of the
    # default build compiles on its first call, in the JSON's first_call_ms
    build_ms: dict[str, Optional[float]] = field(default_factory=dict)

    @property
    def parallel(self) -> bool:
        return any(rule.startswith("row_parallel@") for rule in self.rules)

    def speedup(self, best: bool = False) -> Optional[float]:
        """The serial build's time over the default build's (above 1: the default is faster)."""
        default, serial = self.ms(DEFAULT, best), self.ms(SERIAL, best)
        return serial / default if default and serial else None

    def to_json(self) -> dict[str, Any]:
        return {
            "script": self.script, "input": self.input, "sizes": self.sizes,
            "interleaved_with": self.interleaved_with, "passed": not self.errors,
            "impls": {name: _timing_json(t) for name, t in self.timings.items()},
            "speedup": self.speedup(), "speedup_from_best_rounds": self.speedup(best=True),
            "kernel": self.kernel_type, "parallel": self.parallel, "rules_applied": self.rules,
            "schedule_error": self.schedule_error, "build_ms": self.build_ms,
        }


def _timing_json(t: Timing) -> dict[str, Any]:
    return {"ms": t.median_ms, "best_ms": t.best_ms, "first_call_ms": t.first_call_ms,
            "calls_per_round": t.calls_per_round, "round_ms": t.round_ms,
            "results_checked": t.results_checked, "error": t.error}


@dataclass
class Results:
    """Both parts of a ``--scripts`` run."""

    peer_rows: list[PeerRow] = field(default_factory=list)
    serial_rows: list[SerialRow] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """Per kernel of the vs-peers part: geometric mean and worst of the script's ratio over
        ops, the faster of SciPy and torch, and MKL; for the vs-serial part, of the speedup."""
        peers: dict[str, Any] = {}
        for kernel in dict.fromkeys(row.kernel for row in self.peer_rows):
            rows = [row for row in self.peer_rows if row.kernel == kernel]
            peers[kernel] = {
                "vs_ops": _stats([(row.ratio(OPS), row, OPS) for row in rows],
                                 [row.ratio(OPS, best=True) for row in rows]),
                "vs_faster_peer": _stats([(row.ratio(row.faster_peer), row, row.faster_peer) for row in rows],
                                         [row.ratio(row.faster_peer, best=True) for row in rows]),
                "vs_mkl": _stats([(row.ratio("mkl"), row, "mkl") for row in rows],
                                 [row.ratio("mkl", best=True) for row in rows]) if any(
                    "mkl" in row.timings for row in rows) else None,
            }
        serial = _stats([(row.speedup(), row, SERIAL) for row in self.serial_rows],
                        [row.speedup(best=True) for row in self.serial_rows])
        serial["parallelized"] = sum(row.parallel for row in self.serial_rows)
        serial["scripts"] = len(self.serial_rows)
        return {"vs_peers": peers, "vs_serial": serial}

    def to_json(self) -> dict[str, Any]:
        return {
            "readme_spmm": README_SPMM, "readme_sddmm": README_SDDMM, "examples": str(EXAMPLES),
            "passed": not self.failures(),
            "vs_peers": [row.to_json() for row in self.peer_rows],
            "vs_serial": [row.to_json() for row in self.serial_rows],
            "summary": self.summary(),
        }

    def failures(self) -> list[str]:
        """One line per implementation that answered wrongly or raised."""
        lines = [f"{impl} {row.kernel} script on {row.matrix} (width {row.width}): {error}"
                 for row in self.peer_rows for impl, error in row.errors.items()]
        lines += [f"{row.script} built {impl} on {row.input}: {error}"
                  for row in self.serial_rows for impl, error in row.errors.items()]
        return lines

    def checked(self) -> int:
        rows: list = [*self.peer_rows, *self.serial_rows]
        return sum(t.results_checked for row in rows for t in row.timings.values())


def _stats(ratios: Iterable[tuple[Optional[float], Any, Optional[str]]],
           best: Iterable[Optional[float]] = ()) -> dict[str, Any]:
    """The number, geometric mean and minimum (with where) of the measured ``ratios``, and the
    geometric mean of the same ratios from each one's fastest round (``best``)."""
    measured = [(r, row, peer) for r, row, peer in ratios if r]
    if not measured:
        return {"rows": 0, "geomean": None, "min": None, "min_at": None, "geomean_from_best_rounds": None}
    low, row, peer = min(measured, key=lambda item: item[0])
    if isinstance(row, PeerRow):
        where = {"matrix": row.matrix, "width": row.width, "vs": peer}
    else:
        where = {"script": row.script, "input": row.input}
    best = [r for r in best if r]
    return {"rows": len(measured), "geomean": geomean([r for r, _, _ in measured]), "min": low, "min_at": where,
            "geomean_from_best_rounds": geomean(best) if best else None}


# ------------------------------------------------------------------------------------ running


def script_function(name: str) -> Any:
    """The parsed example ``name`` (a README script for ``"readme_spmm"``, ``"readme_sddmm"``)."""
    import sparsetir

    if name in README_SCRIPTS:
        return sparsetir.parse(README_SCRIPTS[name], "README.md")
    return sparsetir.parse_file(EXAMPLES / f"{name}.py")


def unknown_examples() -> list[str]:
    """The examples/*.py files (gnn/ aside) that have no spec here: not run, with a note."""
    if not EXAMPLES.is_dir():
        return []
    return sorted(path.stem for path in EXAMPLES.glob("*.py") if path.stem not in SPECS)


def run(options, ours: dict, torch: Optional[ModuleType], mkl: Optional[ModuleType],
        matrices: Sequence[tuple[str, scipy.sparse.csr_matrix, str]], notes: list[str],
        progress: Callable[[list], Iterable] = lambda work: work) -> Results:
    """Both parts on ``matrices`` (name, matrix, file): the scripts ``options.scripts`` names (all
    of ``SPECS`` when empty), at ``options.widths``, ``options.rounds`` rounds, in ``options.mode``.

    ``ours`` holds sparsetir.ops's ``spmm`` and ``sddmm`` (a missing one is left out, with a note
    from the caller).
    """
    import sparsetir

    selected = list(options.scripts or NAMES)
    interleaved = options.mode != ALONE
    results = Results()
    if not EXAMPLES.is_dir():
        notes.append(f"scripts: {EXAMPLES} does not exist (sparsetir is not run from a checkout): "
                     "only the README's SpMM script is run")
        selected = ["csr_spmm"] if "csr_spmm" in selected else []
    elif not options.scripts:
        for name in unknown_examples():
            notes.append(f"scripts: examples/{name}.py has no inputs and reference in "
                         "sparsetir/bench/script_cases.py: not run")

    work: list[tuple] = []
    for name, matrix, _ in matrices:
        for script, kernel in VS_PEERS.items():
            if script in selected:
                work += [("peers", script, kernel, name, matrix, width) for width in options.widths]
    for script in selected:
        if not EXAMPLES.is_dir():
            break
        if SPECS[script].graph:
            work += [("serial", script, name, matrix) for name, matrix, _ in matrices]
        else:
            work.append(("serial", script, "random", None))

    built: dict[str, tuple] = {}

    def build(script: str, schedule: str):
        """(function, kernel, error, build ms) of ``script`` for the vs-peers part ("peers": the
        README's script for csr_spmm and sddmm), or built with the default schedule or serially."""
        key = f"{script}:{schedule}"
        if key not in built:
            start = time.perf_counter()
            try:
                readme = {"csr_spmm": "readme_spmm", "sddmm": "readme_sddmm"}.get(script) if schedule == "peers" else None
                func = script_function(readme or script)
                kernel = sparsetir.build(func) if schedule in (DEFAULT, "peers") else \
                    sparsetir.build(func, schedule="none")
                built[key] = (func, kernel, None, (time.perf_counter() - start) * 1e3)
            except Exception as err:
                built[key] = (None, None, f"raised {type(err).__name__}: {err}", None)
        return built[key]

    for item in progress(work):
        if item[0] == "peers":
            _, script, kernel_name, name, matrix, width = item
            results.peer_rows.append(_peer_case(script, kernel_name, name, matrix, width, options,
                                                ours, torch, mkl, build(script, "peers"), interleaved))
        else:
            _, script, name, matrix = item
            results.serial_rows.append(_serial_case(SPECS[script], name, matrix, options, torch,
                                                    build(script, "default"), build(script, SERIAL),
                                                    interleaved))
    return results


def _script_impl(name: str, kernel: Any, arguments: dict, output: str, accumulates: bool = False,
                 build_error: Optional[str] = None) -> Impl:
    """The kernel called by name as a user calls it (arguments checked), writing into its own
    copy of ``arguments[output]``; reading an answer puts that array back to its initial value."""
    if build_error is not None:
        def fail():
            raise RuntimeError(f"sparsetir.build failed: {build_error}")
        return Impl(name, fail, lambda output: output)
    if hasattr(kernel, "assembled"):  # an AssemblingKernel: it makes its output and returns it
        given = {k: v for k, v in arguments.items() if k in kernel.params}
        return Impl(name, lambda: kernel(**given)[output], lambda result: np.array(result, copy=True))
    buffer = np.array(arguments[output], copy=True)
    initial = buffer.copy()
    call_arguments = {**arguments, output: buffer}

    if accumulates:
        def call():
            np.copyto(buffer, initial)
            kernel(**call_arguments)
            return buffer
    else:
        def call():
            kernel(**call_arguments)
            return buffer

    def values(result: np.ndarray) -> np.ndarray:
        answer = result.copy()
        np.copyto(buffer, initial)
        return answer

    return Impl(name, call, values)


def _peer_case(script: str, kernel_name: str, matrix_name: str, matrix, width: int, options, ours: dict,
               torch, mkl, built: tuple, interleaved: bool) -> PeerRow:
    kernel_spec = KERNELS[kernel_name]
    case = kernel_spec.case(matrix_name, matrix, width, options.seed)
    _, kernel, error, _ = built
    m, n = matrix.shape
    if kernel_name == "spmm":
        (x,) = case.operands
        arguments = dict(a=matrix.data, b=x, c=nans(m, width), indptr=matrix.indptr, indices=matrix.indices,
                         m=m, n=n, feat=width, nnz=matrix.nnz)
        impl = _script_impl(SCRIPT, kernel, arguments, "c", build_error=error)
        where = "README.md's csr_spmm"
    else:
        # The README's SDDMM computes what ops.sddmm(A, X, Y) does, on A's pattern.
        x_rows, y_cols = case.operands
        arguments = dict(a=matrix.data, x=x_rows, y=y_cols, c=nans(matrix.nnz), indptr=matrix.indptr,
                         indices=matrix.indices, m=m, n=n, feat=width, nnz=matrix.nnz)
        impl = _script_impl(SCRIPT, kernel, arguments, "c", build_error=error)
        where = "README.md's sddmm"
    impls = [impl]
    if kernel_name in ours:
        impls += [replace(found, name=OPS) if found.name == "sparsetir" else found
                  for found in kernel_spec.impls(case, ours[kernel_name], torch, mkl)]
    else:
        impls += [found for found in kernel_spec.impls(case, _missing, torch, mkl)
                  if found.name != "sparsetir"]
    between = interleave.between_op(case, torch) if interleaved else None
    timings = measure(impls, options.rounds, lambda impl, out: _judge(case, impl, out), between)
    shape = (int(m), int(n))
    return PeerRow(matrix_name, shape, int(matrix.nnz), kernel_name, width, where, timings,
                   between.description if between else None)


def _missing(*args):
    raise RuntimeError("sparsetir.ops has no such kernel")


def _judge(case: Case, impl: Impl, output: Any) -> Optional[str]:
    problem = mismatch(case, impl, output)
    return problem.replace("differ from SciPy", "differ from the float64 reference") if problem else None


def _serial_case(spec: Spec, matrix_name: str, matrix, options, torch, default: tuple, serial: tuple,
                 interleaved: bool) -> SerialRow:
    rng = np.random.default_rng(options.seed)
    label = matrix_name
    if spec.graph:
        graph, side = fitted(spec, matrix)
        if side is not None:
            label = f"{matrix_name}[:{side},:{side}]"
        inputs = spec.inputs(graph, rng)
    else:
        inputs = spec.inputs(rng)
    expected = spec.reference(inputs)
    case = Case(label, scipy.sparse.csr_matrix((1, 1), dtype=np.float32), spec.name, None, (),
                np.asarray(expected, dtype=np.float64), np.asarray(magnitude_of(spec, inputs), dtype=np.float64), 0)
    sizes = {k: int(v) for k, v in inputs.items() if isinstance(v, (int, np.integer))}
    func, kernel, error, default_ms = default
    _, serial_kernel, serial_error, serial_ms = serial
    impls = [_script_impl(DEFAULT, kernel, inputs, spec.output, spec.accumulates, error),
             _script_impl(SERIAL, serial_kernel, inputs, spec.output, spec.accumulates, serial_error)]
    between = _between(inputs, spec.output, torch) if interleaved else None
    timings = measure(impls, options.rounds, lambda impl, out: _judge(case, impl, out), between)
    row = SerialRow(spec.name, label, sizes, timings, interleaved_with=between.description if between else None,
                    build_ms={DEFAULT: default_ms, SERIAL: serial_ms})
    if kernel is not None:
        row.kernel_type = type(kernel).__name__
        try:
            from sparsetir import default_build

            widths = {w: sizes[w] for w in getattr(kernel, "widths", [])}
            applied = default_build.schedule_of(func, **widths).applied
            row.rules = [f"{d.rule}@{d.where}" for d in applied]
        except Exception as err:
            row.schedule_error = f"{type(err).__name__}: {err}"
    return row


def _between(inputs: dict, output: str, torch) -> Interleave:
    """The op run before every timed call of an example: X @ W on its largest 2-D float input (a
    random (4096, 32) one where it has none), as ``interleave.between_op`` does for the kernels."""
    dense = [v for k, v in inputs.items() if k != output and isinstance(v, np.ndarray) and v.ndim == 2
             and v.dtype == np.float32 and v.shape[0] > 1]
    return interleave.dense_op(max(dense, key=lambda v: v.size) if dense else None, 4096, torch)


# ------------------------------------------------------------------------------------ output


def tables(results: Results) -> list[str]:
    """The printed report: both tables and their summaries."""
    lines: list[str] = []
    summary = results.summary()
    if results.peer_rows:
        others = [name for name in (OPS, *PEERS) if any(name in row.timings for row in results.peer_rows)]
        header = ["matrix", "kernel", "width", "script ms", *[f"{name} ms" for name in others],
                  "script/ops", "vs faster", *(["vs mkl"] if "mkl" in others else [])]
        body = []
        for row in results.peer_rows:
            line = [row.matrix, row.kernel, str(row.width), *[ms_cell(row.timings.get(n)) for n in [SCRIPT, *others]],
                    _x(row.ratio(OPS)), _x(row.ratio(row.faster_peer))]
            if "mkl" in others:
                line.append(_x(row.ratio("mkl")))
            body.append(line)
        lines.append("scripts vs peers: the README's SpMM and SDDMM scripts, built with "
                     "sparsetir.build(f); ratios are the script's speed over the other's (above 1x: "
                     "the script is faster)")
        lines.append(align([header, *body], text_columns={0, 1}))
        lines.append("")
        for kernel, stats in summary["vs_peers"].items():
            for label, key in (("sparsetir.ops", "vs_ops"), ("the faster of scipy/torch", "vs_faster_peer"),
                               ("mkl", "vs_mkl")):
                if stats[key] is not None:
                    lines.append(_summary_line(f"{kernel} script", label, stats[key]))
        lines.append("")
    if results.serial_rows:
        header = ["script", "input", "default ms", "serial ms", "speedup", "parallel", "rules applied"]
        body = [[row.script, row.input, ms_cell(row.timings.get(DEFAULT)), ms_cell(row.timings.get(SERIAL)),
                 _x(row.speedup()), "yes" if row.parallel else "no",
                 ", ".join(row.rules) or (f"? ({row.schedule_error})" if row.schedule_error else "none")]
                for row in results.serial_rows]
        lines.append("examples: sparsetir.build(f) (default schedule) vs sparsetir.build(f, schedule=\"none\") "
                     "(serial); speedup: serial time over default time")
        lines.append(align([header, *body], text_columns={0, 1, 6}))
        lines.append("")
        stats = summary["vs_serial"]
        lines.append(_summary_line("default schedule", "the serial build", stats, script=True)
                     + f"; {stats['parallelized']} of {stats['scripts']} rows parallelized")
    return lines


def _summary_line(what: str, over: str, stats: dict, script: bool = False) -> str:
    if not stats["rows"]:
        return f"{what}: no ratio over {over} measured"
    where = stats["min_at"]
    at = (f"{where['script']} on {where['input']}" if script
          else f"{where['matrix']} width {where['width']}, vs {where['vs']}")
    best = stats.get("geomean_from_best_rounds")
    return (f"{what}: geomean {stats['geomean']:.2f}x over {over} on {stats['rows']} rows"
            + (f" ({best:.2f}x from best rounds)" if best else "")
            + f"; worst {stats['min']:.2f}x ({at})")


def _x(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}x"


def write_plot(path: Path, results: Results) -> None:
    """Bars of the script's ratios over ops and the faster peer, and of each example's speedup
    over its serial build, to ``path`` (log scale, growing from 1x)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    panels = []
    if results.peer_rows:
        labels = [f"{row.kernel}\n{row.matrix}\nw{row.width}" for row in results.peer_rows]
        panels.append(("script vs ops and peers", labels, {
            "vs ops": [row.ratio(OPS) for row in results.peer_rows],
            "vs faster of scipy/torch": [row.ratio(row.faster_peer) for row in results.peer_rows]}))
    if results.serial_rows:
        labels = [f"{row.script}\n{row.input}" for row in results.serial_rows]
        panels.append(("default schedule vs serial build", labels,
                       {"speedup": [row.speedup() for row in results.serial_rows]}))
    if not panels:
        return
    most = max(len(labels) for _, labels, _ in panels)
    figure, axes = pyplot.subplots(len(panels), 1, figsize=(max(6.0, 0.9 * most + 2), 3.6 * len(panels)),
                                   squeeze=False)
    for axis, (title, labels, series) in zip(axes[:, 0], panels):
        ratio_bars(axis, series)
        axis.set_xticks(range(len(labels)))
        axis.set_xticklabels(labels, fontsize="x-small", rotation=90 if len(labels) > 12 else 0)
        axis.set_title(title, fontsize="medium")
        axis.set_ylabel("above 1x: the script\n(default build) is faster", fontsize="small")
        axis.legend(loc="best", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


__all__ = ["README_SCRIPTS", "README_SDDMM", "README_SPMM", "VS_PEERS", "Results", "run", "tables",
           "write_plot"]

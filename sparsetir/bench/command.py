"""``sparsetir bench``: check sparsetir's kernels against SciPy and time them against peers.

The run, top to bottom: read the options and every matrix (a bad one stops the run before any
timing), find sparsetir's kernels in ``sparsetir.ops`` and the installed peers, then for each
matrix, kernel and width build the case, time sparsetir, SciPy, torch and MKL in rotating
rounds (each call after a model's dense op by default, or ``--alone``) while checking every
answer, and finally print the table and write the JSON and the plot. ``--scripts`` runs users'
scripts built with ``sparsetir.build`` instead of the kernels (``scripts.py``; what each example
is run on and must compute: ``script_cases.py``).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import platform
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Optional

import numpy as np
import scipy
import scipy.sparse

import sparsetir
from sparsetir import data

from . import interleave, peers, report, script_cases, scripts
from .check import RTOL, mismatch
from .kernels import KERNELS
from .timing import ALONE, INTERLEAVED, PAUSE_S, measure

DEFAULT_MATRIX = "cora"
DEFAULT_WIDTHS = (32, 128, 512)
# Every kernel of one sparse operand: the default run on cora checks and times them all (14
# cases); spgemm, add and multiply run when --kernels names them.
DEFAULT_KERNELS = tuple(name for name, kernel in KERNELS.items() if kernel.default)
DEFAULT_ROUNDS = 10
# The formats spmm also runs on by default (CSR is always its "sparsetir" row).
DEFAULT_FORMATS = ("bsr", "hyb", "auto")
FORMAT_NAMES = ("bsr", "ell", "hyb", "auto")
DEFAULT_OUT = "bench-results"
SMOKE_WIDTHS = (32,)
SMOKE_ROUNDS = 3
# A load average above this at the start means another process competes for the cores.
BUSY_LOAD = 0.5

EXIT_FAILED = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """A bad option or matrix: reported in one line, exit code 2, before anything is timed."""


@dataclass(frozen=True)
class Options:
    """The bench subcommand's options, with the defaults (and ``--smoke``'s) filled in."""

    matrices: tuple[str, ...]
    widths: tuple[int, ...]
    kernels: tuple[str, ...]
    rounds: int
    threads: Optional[int]  # None: each library's own default
    seed: int
    out: Path
    smoke: bool
    quiet: bool
    mode: str = INTERLEAVED  # or ALONE (--alone)
    formats: tuple[str, ...] = ()  # spmm's other formats (--formats)
    # --scripts: the example scripts to run instead of the kernels (empty: all); None: the kernels
    scripts: Optional[tuple[str, ...]] = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Options":
        """The options given on the command line, checked."""
        smoke = bool(getattr(args, "smoke", False))
        matrices = [*_given(args, "matrices", []), *_given(args, "matrix", [])]
        widths = _given(args, "widths", SMOKE_WIDTHS if smoke else DEFAULT_WIDTHS)
        kernels = _given(args, "kernels", DEFAULT_KERNELS)
        rounds = _given(args, "rounds", SMOKE_ROUNDS if smoke else DEFAULT_ROUNDS)
        if not widths or not kernels:
            raise UsageError("--widths and --kernels need at least one value")
        unknown = [name for name in kernels if name not in KERNELS]
        if unknown:
            others = [name for name in KERNELS if name not in DEFAULT_KERNELS]
            raise UsageError(
                f"unknown kernel {unknown[0]!r} (choose from {', '.join(DEFAULT_KERNELS)})"
                + (f" or, not run by default, {', '.join(others)}" if others else "")
            )
        if any(width < 1 for width in widths):
            raise UsageError(f"--widths must be positive, got {','.join(map(str, widths))}")
        if rounds < 1:
            raise UsageError(f"--rounds must be at least 1, got {rounds}")
        threads = getattr(args, "threads", None)
        if threads is not None and threads < 1:
            raise UsageError(f"--threads must be at least 1, got {threads}")
        formats = _given(args, "formats", () if smoke else DEFAULT_FORMATS)
        formats = () if list(formats) == ["none"] else formats
        unknown = [name for name in formats if name not in FORMAT_NAMES]
        if unknown:
            raise UsageError(f"unknown format {unknown[0]!r} (choose from {', '.join(FORMAT_NAMES)}, or none)")
        chosen = [*_given(args, "script", [])]
        unknown = [name for name in chosen if name not in script_cases.NAMES]
        if unknown:
            raise UsageError(f"unknown script {unknown[0]!r} (choose from {', '.join(script_cases.NAMES)})")
        run_scripts = bool(getattr(args, "scripts", False)) or bool(chosen)
        return cls(
            matrices=tuple(dict.fromkeys(matrices or [DEFAULT_MATRIX])),
            widths=tuple(dict.fromkeys(widths)),
            kernels=tuple(dict.fromkeys(kernels)),
            rounds=rounds,
            threads=threads,
            seed=_given(args, "seed", 0),
            out=Path(getattr(args, "out", None) or DEFAULT_OUT),
            smoke=smoke,
            quiet=bool(getattr(args, "quiet", False)),
            mode=ALONE if getattr(args, "alone", False) else INTERLEAVED,
            formats=tuple(dict.fromkeys(formats)),
            scripts=tuple(dict.fromkeys(chosen)) if run_scripts else None,
        )


def _given(args: argparse.Namespace, name: str, default):
    value = getattr(args, name, None)
    return default if value is None else value


def run(args: argparse.Namespace, ops: Optional[ModuleType] = None) -> int:
    """Run the benchmark for ``args``; the exit code (0 passed, 1 a wrong answer, 2 usage).

    ``ops`` is where sparsetir's kernels come from (default: ``sparsetir.ops``); tests pass a
    stand-in to check the benchmark itself.
    """
    try:
        options = Options.from_args(args)
        matrices = [_load_matrix(spec) for spec in options.matrices]
    except UsageError as err:
        print(f"sparsetir bench: {err}", file=sys.stderr)
        return EXIT_USAGE

    notes: list[str] = []
    wanted = tuple(scripts.VS_PEERS.values()) if options.scripts is not None else options.kernels
    ours = _our_kernels(ops, wanted, notes)
    if not ours and options.scripts is None:
        print(f"sparsetir bench: nothing to run: {'; '.join(notes)}", file=sys.stderr)
        return EXIT_USAGE
    torch = peers.load_torch(notes)
    if torch is None and options.mode == INTERLEAVED:
        notes.append(
            "interleaved: without torch, a NumPy dense matmul runs before every timed call"
        )
    _set_threads(options.threads, torch)
    # sparsetir's launcher takes its helper threads from the OpenMP runtime loaded when it
    # starts: started now, it finds torch's, as in a program that uses torch and sparsetir.
    # Started after MKL's import, it could find MKL's (another runtime) instead.
    backend = _parallel_backend()
    mkl = peers.load_mkl(notes)
    if mkl is not None and options.threads is not None:
        mkl.mkl_set_num_threads(options.threads)
    environment = _environment(torch, mkl, backend)
    if environment["load_average"][0] > BUSY_LOAD:
        notes.append(
            f"load average {environment['load_average'][0]:.2f} at the start: other processes "
            "use the CPU, so timings may be unreliable"
        )

    if options.scripts is not None:
        return _run_scripts(options, ours, torch, mkl, matrices, environment, notes)
    formats = options.formats if "spmm" in ours and _takes_format(ours["spmm"]) else ()
    if options.formats and not formats and "spmm" in ours:
        notes.append("--formats: this spmm takes no format= argument; formats not run")
    work = _work(matrices, ours, options.widths, notes)
    if not work:
        print(f"sparsetir bench: nothing to run: {'; '.join(notes)}", file=sys.stderr)
        return EXIT_USAGE
    rows: list[report.Row] = []
    for (name, matrix, source), kernel, width, variant in _progress(work, options.quiet):
        case = KERNELS[kernel].case(name, matrix, width, options.seed, variant)
        impls = KERNELS[kernel].impls(case, ours[kernel], torch, mkl, formats, notes)
        between = interleave.between_op(case, torch) if options.mode == INTERLEAVED else None
        timings = measure(
            impls, options.rounds, lambda impl, out: mismatch(case, impl, out), between
        )
        row = report.Row.of(case, source, timings, between)
        if KERNELS[kernel].formatted is not None and formats:
            row.formats = _format_facts(ops, case, formats)
        rows.append(row)
    environment["load_average_end"] = list(os.getloadavg())

    print(report.mode_line(options.mode, interleave.describe(torch), PAUSE_S))
    print(report.table(rows))
    print()
    for line in report.summary_lines(rows):
        print(line)
    if any(row.formats for row in rows):
        print()
        print(report.format_table(rows))
        print()
        for line in report.format_summary_lines(rows):
            print(line)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    _write_results(options, environment, notes, rows, interleave.describe(torch))
    return _verdict(rows)


def _run_scripts(options: Options, ours: dict, torch, mkl, matrices, environment: dict,
                 notes: list[str]) -> int:
    """``--scripts``: the example scripts built with defaults, against ops, the peers and their
    serial builds (sparsetir/bench/scripts.py); the same JSON, with the results under ``scripts``."""
    results = scripts.run(options, ours, torch, mkl, matrices, notes,
                          lambda work: _progress(work, options.quiet))
    environment["load_average_end"] = list(os.getloadavg())
    print(report.mode_line(options.mode, interleave.describe(torch), PAUSE_S))
    for line in scripts.tables(results):
        print(line)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    _write_results(options, environment, notes, [], interleave.describe(torch), results)
    failures = results.failures()
    if failures:
        print(
            f"sparsetir bench: FAILED: {len(failures)} implementation(s) gave a wrong answer or "
            f"an error (answers checked against float64 NumPy/SciPy references, rtol {RTOL:g} of "
            "each value's magnitude):\n" + "\n".join(f"  {_shortened(line)}" for line in failures),
            file=sys.stderr,
        )
        return EXIT_FAILED
    print(f"all {results.checked()} results matched their float64 references (rtol {RTOL:g} of "
          "each value's magnitude)")
    return 0


def _work(matrices, ours: dict, widths, notes: list[str]) -> list:
    """The (matrix, kernel, width, variant) cases to run; a note for each kernel skipped on a matrix.

    A kernel whose format does not suit a matrix (ELL on a skewed graph) is skipped on it, and
    how a kernel's input is derived from a matrix (the BSR block size) is noted.
    """
    work = []
    for matrix in matrices:
        name, csr, _ = matrix
        for kernel in ours:
            reason = KERNELS[kernel].skip(csr)
            if reason:
                notes.append(f"skipped {kernel} on {name}: {reason}")
                continue
            remark = KERNELS[kernel].describe(csr)
            if remark:
                notes.append(f"{kernel} on {name}: {remark}")
            if KERNELS[kernel].variants:
                work += [(matrix, kernel, None, variant) for variant in KERNELS[kernel].variants]
                continue
            for width in widths if KERNELS[kernel].has_width else (None,):
                work.append((matrix, kernel, width, None))
    return work


def _takes_format(spmm) -> bool:
    """Whether ``spmm`` takes ``format=`` (sparsetir.ops's does; the bench's tests pass others)."""
    try:
        return "format" in inspect.signature(spmm).parameters
    except (TypeError, ValueError):
        return False


def _format_facts(ops: Optional[ModuleType], case, formats: tuple[str, ...]) -> dict:
    """Per format of ``formats``: what its conversion cost, and for ``auto`` what it chose and
    what its trial cost (read from the conversions the timed calls made and cached)."""
    if ops is None:
        ops = importlib.import_module("sparsetir.ops")
    if not hasattr(ops, "converted"):  # a stand-in ops module (the bench's own tests)
        return {}
    matrix, (x,) = case.matrix, case.operands
    a = ops._csr("spmm: A", matrix)
    facts = {}
    for name in formats:
        if name == "auto":
            made = ops.auto.choice(matrix, x, a)
            facts[name] = {"choice": str(made.format), "trial_ms": 1e3 * made.trial_seconds,
                           "candidates_ms": {k: 1e3 * v for k, v in made.seconds.items()}}
            continue
        fmt = ops.formatted.resolve("spmm: format", name, ops._stats(matrix, a))
        facts[name] = {"format": str(fmt), "conversion_ms": 1e3 * ops.converted(matrix, a, fmt).seconds}
    return facts


def _load_matrix(spec: str) -> tuple[str, scipy.sparse.csr_matrix, str]:
    """The name, matrix and file of ``spec``: a data set name (``cora``) or an ``.npz`` file."""
    is_path = spec.endswith(data.SUFFIX) or os.sep in spec or "/" in spec
    try:
        path = Path(spec) if is_path else data.find(spec)
        if is_path and not path.is_file():
            raise UsageError(f"matrix file {spec}: no such file")
        return path.stem, data.load_file(path), str(path)
    except (FileNotFoundError, ValueError) as err:
        raise UsageError(str(err)) from err


def _our_kernels(ops: Optional[ModuleType], kernels, notes: list[str]) -> dict:
    """The kernels of ``ops`` (default: sparsetir.ops) asked for; a note for each one missing."""
    if ops is None:
        try:
            ops = importlib.import_module("sparsetir.ops")
        except ModuleNotFoundError as err:
            if err.name != "sparsetir.ops":
                raise  # sparsetir.ops exists but needs something missing: a real error
            notes.append("sparsetir.ops does not exist yet")
            return {}
    found = {}
    for name in kernels:
        kernel = getattr(ops, name, None)
        if kernel is None:
            notes.append(f"skipped {name}: {ops.__name__} has no {name}()")
        else:
            found[name] = kernel
    return found


def _set_threads(threads: Optional[int], torch: Optional[ModuleType]) -> None:
    """With ``--threads N``, run sparsetir's and torch's parallel ops on N threads, as a user
    would through each library's own call; without, leave every library at its default."""
    if threads is None:
        return
    from sparsetir.runtime import parallel

    parallel.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)


def _parallel_backend() -> str:
    """How sparsetir runs its parallel loops in this process, in words."""
    from sparsetir.runtime import parallel

    return parallel.backend()


def _environment(torch: Optional[ModuleType], mkl: Optional[ModuleType], backend: str) -> dict:
    """What the timings depend on: the machine, the thread counts and the library versions."""
    from sparsetir._tvm import tvm
    from sparsetir.runtime import parallel

    versions = {
        "sparsetir": sparsetir.__version__,
        "tvm": tvm.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "torch": torch.__version__ if torch else None,
        "mkl": peers.mkl_version(mkl) if mkl else None,
        "python": platform.python_version(),
    }
    return {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        # SciPy's sparse products run on one thread.
        "threads": {
            "sparsetir": parallel.num_threads(),
            "torch": torch.get_num_threads() if torch else None,
            "mkl": int(mkl.mkl_get_max_threads()) if mkl else None,
            "scipy": 1,
        },
        "parallel_backend": backend,
        "versions": versions,
        "load_average": list(os.getloadavg()),
    }


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _progress(work: list, quiet: bool):
    try:
        from tqdm import tqdm
    except ModuleNotFoundError:  # the bench extra is not installed: no progress bar
        return work
    # disable=None: no bar when stderr is not a terminal (CI logs, tests).
    return tqdm(work, desc="sparsetir bench", unit="case", file=sys.stderr,
                disable=True if quiet else None)


def _write_results(
    options: Options, environment: dict, notes: list[str], rows, interleaved_with: str,
    script_results: Optional["scripts.Results"] = None,
) -> None:
    options.out.mkdir(parents=True, exist_ok=True)
    alone = options.mode == ALONE
    settings = {
        "matrices": list(options.matrices),
        "kernels": list(options.kernels) if options.scripts is None else [],
        "widths": list(options.widths),
        "rounds": options.rounds,
        "mode": options.mode,
        "interleaved_with": None if alone else interleaved_with,
        "pause_ms": PAUSE_S * 1e3 if alone else None,
        "threads": options.threads,
        "formats": list(options.formats) if options.scripts is None else [],
        "seed": options.seed,
        "smoke": options.smoke,
        "rtol": RTOL,
        "reference": "SciPy/NumPy in float64",
    }
    if options.scripts is not None:
        settings["scripts"] = list(options.scripts or script_cases.NAMES)
    json_path = options.out / report.JSON_NAME
    report.write_json(json_path, environment, settings, notes, rows)
    if script_results is not None:
        document = json.loads(json_path.read_text())
        document["scripts"] = script_results.to_json()
        document["passed"] = document["passed"] and not script_results.failures()
        json_path.write_text(json.dumps(document, indent=2) + "\n")
    written = [str(json_path)]
    try:
        import matplotlib  # noqa: F401
    except ModuleNotFoundError:
        print("note: no plot: matplotlib is not installed (pip install 'sparsetir[bench]')",
              file=sys.stderr)
    else:
        plot_path = options.out / report.PLOT_NAME
        if script_results is not None:
            scripts.write_plot(plot_path, script_results)
        else:
            report.write_plot(plot_path, rows)
        if plot_path.is_file():
            written.append(str(plot_path))
    print(f"\nwrote {' and '.join(written)}")


def _verdict(rows) -> int:
    failures = [
        f"  {impl} {row.kernel} on {row.matrix}"
        + ("" if row.width is None else f" (width {row.width})")
        + f": {_shortened(error)}"
        for row in rows
        for impl, error in row.errors.items()
    ]
    checked = sum(t.results_checked for row in rows for t in row.timings.values())
    if failures:
        print(
            f"sparsetir bench: FAILED: {len(failures)} implementation(s) gave a wrong answer or "
            f"an error (answers checked against SciPy in float64, rtol {RTOL:g} of each "
            "value's magnitude):\n"
            + "\n".join(failures),
            file=sys.stderr,
        )
        return EXIT_FAILED
    print(f"all {checked} results matched SciPy (rtol {RTOL:g} of each value's magnitude)")
    return 0


def _shortened(error: str, head: int = 3, tail: int = 4) -> str:
    # A compiler error can quote a whole program; its first and last lines say what went
    # wrong, and the JSON keeps every line.
    lines = [line for line in error.splitlines() if line.strip()]
    if len(lines) <= head + tail + 1:
        return error
    skipped = len(lines) - head - tail
    return "\n".join(
        [*lines[:head], f"    ... {skipped} more lines in {report.JSON_NAME} ...", *lines[-tail:]]
    )

"""The ``sparsetir`` command: one entry point for benchmarks, stage dumps and the explorer.

Each subcommand is a ``run(args)`` function in its own module, imported only when that
subcommand runs: ``sparsetir --help`` stays fast, and a feature that is not built yet answers
"not implemented yet" instead of breaking the other commands.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from sparsetir import __version__
from sparsetir.errors import InternalError, ScriptError, SparseTIRError

# The module whose ``run(args) -> int | None`` implements each subcommand.
COMMANDS = {
    "bench": "sparsetir.bench",
    "show": "sparsetir.show",
    "explore": "sparsetir.explorer",
    "cache": "sparsetir.runtime.cache_command",
}

EXIT_ERROR = 1
EXIT_NOT_IMPLEMENTED = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``sparsetir`` command and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="sparsetir",
        description="SparseTIR: a sparse tensor compiler on Apache TVM.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    bench = commands.add_parser(
        "bench",
        help="compile the bundled kernels, check them against SciPy, time them against peers",
        description="Compile the bundled sparse kernels for each matrix, check the results "
        "against SciPy, and print timings next to SciPy, PyTorch and Intel MKL (when installed) "
        "measured in the same run. By default every timed call follows an untimed torch dense "
        "matmul, the way a model calls sparse ops; --alone times each library on its own. "
        "--model times GNN training instead, --distributed P the per-rank costs of a "
        "distributed spmm.",
    )
    bench.add_argument(
        "matrices",
        nargs="*",
        metavar="MATRIX",
        help="matrix names (see sparsetir.data.available()) or .npz files; default: cora",
    )
    bench.add_argument(
        "--matrix",
        action="append",
        metavar="PATH",
        help="a matrix to add: an .npz file saved by scipy.sparse.save_npz, or a name "
        "(repeatable)",
    )
    bench.add_argument(
        "--widths",
        type=_comma_list(int),
        metavar="N,N,...",
        help="dense feature widths (default: 32,128,512; with --smoke: 32)",
    )
    bench.add_argument(
        "--kernels",
        type=_comma_list(str),
        metavar="NAME,...",
        help="kernels to run: spmm, sddmm, spmv, segment_sum, bsr_spmm, ell_spmm, softmax "
        "(default: all of these; ell_spmm is skipped on matrices whose longest row is over 8x the mean); "
        "also, not by default: spgemm (A@A, A@At), add and multiply (A and B on A's pattern, A and At), "
        "each timed as a full call and as a call on structures seen before",
    )
    bench.add_argument(
        "--rounds",
        type=int,
        metavar="R",
        help="timed rounds per case; the median is reported (default: 10; with --smoke: 3)",
    )
    bench.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="threads for sparsetir, torch and MKL, set through each library's own call "
        "(default: each library's default)",
    )
    bench.add_argument(
        "--formats",
        type=_comma_list(str),
        metavar="NAME,...",
        help="formats sparsetir's spmm also runs on, each timed and checked beside CSR, with "
        "its conversion time and auto's choice: bsr, ell, hyb, auto, or none (default: "
        "bsr,hyb,auto; with --smoke: none)",
    )
    bench.add_argument(
        "--alone",
        action="store_true",
        help="time each library alone, in batches of back-to-back calls after a pause, "
        "instead of each call after an untimed torch op (the default, as in a model)",
    )
    bench.add_argument(
        "--scripts",
        action="store_true",
        help="instead of the kernels: the README's SpMM and SDDMM scripts built with "
        "sparsetir.build(f), timed against sparsetir.ops, SciPy, torch and MKL; and every "
        "examples/*.py built with defaults against its serial build (schedule=\"none\"); every "
        "result checked",
    )
    bench.add_argument(
        "--script",
        action="append",
        metavar="NAME",
        help="with --scripts, only this example (a file stem of examples/, e.g. csr_spmm; "
        "repeatable; implies --scripts)",
    )
    bench.add_argument("--seed", type=int, default=0, help="seed of the dense operands")
    bench.add_argument(
        "--out",
        metavar="DIR",
        help="where to write bench.json and bench.png (default: bench-results)",
    )
    bench.add_argument(
        "--smoke", action="store_true", help="a tiny, fast run: cora, width 32, 3 rounds"
    )
    bench.add_argument("--quiet", action="store_true", help="no progress bar")
    # The GPU bench: sparsetir/bench/cuda.py.
    bench.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="cuda: time the GPU SpMM and SDDMM on torch CUDA tensors against cuSPARSE "
        "(torch.sparse.mm, torch.sparse.sampled_addmm; --kernels spmm,sddmm, and spmm_hyb: SpMM on the "
        "hybrid format, not by default); exit code 3 without a CUDA device",
    )
    bench.add_argument(
        "--export",
        metavar="DIR",
        help="with --device cuda: write the cases as a bundle that runs on a GPU machine without "
        "TVM (python3 DIR/run.py there) instead of running them",
    )
    # GNN training instead of kernels: sparsetir/bench/gnn.py.
    bench.add_argument(
        "--model",
        choices=["gcn", "gat"],
        help="time training epochs of this GNN on sparsetir, torch.sparse and PyG instead of "
        "the kernels; the MATRIX names are the data sets (default: cora pubmed)",
    )
    bench.add_argument(
        "--epochs",
        type=int,
        metavar="E",
        help="with --model: training epochs per backend (default: 200; with --smoke: 10)",
    )
    bench.add_argument(
        "--features",
        metavar="PATH",
        help="with --model: the real node features, labels and split (.npz with x, y, "
        "train_mask, val_mask, test_mask; or a directory of <dataset>.npz); default: "
        "the bundled Planetoid data of cora and citeseer, synthetic data of the real shapes for "
        "other graphs",
    )

    # One distributed spmm's per-rank costs instead of kernels: sparsetir/bench/distributed.py.
    bench.add_argument(
        "--distributed",
        type=int,
        metavar="P",
        help="instead of the kernels: for each matrix (default: cora and every matrix "
        "sparsetir.data.available() finds), METIS against contiguous partitions over P ranks: "
        "each rank's local spmm timed in this process one rank after another (--threads per "
        "rank, default 1; one --widths width, default 128), the halo fraction and the bytes one "
        "spmm exchanges, computed from the halo plan (not timed); see docs/distributed.md",
    )

    show = commands.add_parser(
        "show",
        help="print a script at a compiler stage, or the generated code",
        description="Parse a script file and print its functions after lowering to the given "
        "stage (1: sparse iterations, 2: loops over sparse buffers, 3: TVM TensorIR), or the "
        "generated kernel code.",
    )
    show.add_argument("file", metavar="FILE", help="a sparse script (.py)")
    show.add_argument(
        "--stage", choices=["1", "2", "3", "code"], default="1", help="what to print (default: 1)"
    )
    show.add_argument("--func", metavar="NAME", help="only this function of the file")
    show.add_argument(
        "--passes",
        action="store_true",
        help="print the program after every pass of the pipeline, with the time each took "
        "(instead of one --stage)",
    )
    show.add_argument(
        "--schedule", choices=["none", "default"], default=None,
        help="stages 2 and 3 as written (none, the default for them) or after the default CPU schedule "
        "that sparsetir.build applies (default); the code is always what build makes with this choice "
        "(default: the default schedule)",
    )
    show.add_argument(
        "--width", action="append", metavar="NAME=VALUE",
        help="bind a scalar parameter (a feature width) to a value first, as a call with it would; repeatable",
    )

    explore = commands.add_parser(
        "explore",
        help="open the explorer: every stage side by side, linked to the script",
        description="The explorer for a script file: the script, stage I, II and III and the "
        "generated code side by side, every line linked to the script lines it came from, the "
        "passes of the pipeline with their diffs, and the program after every schedule step. "
        "It is served on 127.0.0.1 only, where the script can be edited and recompiled; --html "
        "writes one self-contained page instead. Schedule steps come from a history file "
        "(data, never Python): --schedule, or NAME.schedule.json beside the script; without "
        "one, the steps of the default CPU schedule that sparsetir.build applies.",
    )
    explore.add_argument("file", metavar="FILE", help="a sparse script (.py)")
    explore.add_argument("--func", metavar="NAME", help="the function to show (default: the file's first)")
    explore.add_argument(
        "--schedule",
        metavar="JSON",
        help="a schedule history to replay, as sch.history.to_json() writes it "
        "(default: FILE's NAME.schedule.json, if there is one, else the default schedule's steps); "
        "'default': the default schedule's steps; 'none': no steps",
    )
    explore.add_argument(
        "--target", default="llvm", metavar="TARGET", help="generate code for llvm (the host CPU, default) or cuda"
    )
    explore.add_argument(
        "--code",
        choices=["ll", "asm", "cuda"],
        help="the generated code to show: LLVM IR (default on CPU), assembly, or CUDA (default on GPU)",
    )
    explore.add_argument(
        "--html", metavar="OUT", help="write one self-contained HTML page to OUT instead of serving"
    )
    explore.add_argument(
        "--port", type=int, default=0, metavar="N", help="the port on 127.0.0.1 to serve on (default: any free one)"
    )
    explore.add_argument("--no-browser", action="store_true", help="do not open a browser on the page")
    explore.add_argument(
        "--compile-timeout", type=float, default=30.0, metavar="SECONDS",
        help="stop a compile of an edited script after this long (default: 30)",
    )
    explore.add_argument(
        "--width", action="append", metavar="NAME=VALUE",
        help="bind a scalar parameter (a feature width) to a value first, as a call with it would "
        "(the default schedule then shows that call's variant); repeatable",
    )

    cache = commands.add_parser(
        "cache",
        help="show or clear the compiled-kernel cache on disk",
        description="Show where compiled kernels are kept between processes (SPARSETIR_CACHE_DIR, "
        "else XDG_CACHE_HOME/sparsetir, else ~/.cache/sparsetir), how much it holds, and how "
        "parallel loops run; --clear removes every entry.",
    )
    cache.add_argument("--clear", action="store_true", help="remove every compiled kernel")
    return parser


def _comma_list(item_type):
    """An argparse type: a comma-separated list of ``item_type`` values, as a tuple."""

    def parse(text: str) -> tuple:
        try:
            return tuple(item_type(item.strip()) for item in text.split(",") if item.strip())
        except ValueError as err:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a comma-separated list of {item_type.__name__} values"
            ) from err

    parse.__name__ = f"list of {item_type.__name__}"
    return parse


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``sparsetir`` command with ``argv`` (default: ``sys.argv[1:]``); the exit code.

    A user's mistake a command did not report itself (a missing file, a directory that is not
    there, a refused argument) ends as one line, ``sparsetir: error: ...``, and exit code 1; a
    script error keeps its location and caret. A reader that stops reading (``| head``) ends
    the command quietly. Anything else is a bug in sparsetir and keeps its traceback."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version and usage errors
        return stop.code if isinstance(stop.code, int) else 1
    try:
        code = _dispatch(args)
        sys.stdout.flush()  # output still buffered meets a closed pipe here, inside the try
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except InternalError:
        raise
    except ScriptError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_ERROR
    except (OSError, SparseTIRError, ValueError) as err:
        print(f"sparsetir: error: {_error_text(err)}", file=sys.stderr)
        return EXIT_ERROR


def _silence_stdout() -> None:
    """Point stdout at devnull: the reader is gone, and Python's own flush at exit would fail
    on the closed pipe again (the recipe in the ``signal`` module's documentation)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a stream without a descriptor
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _error_text(err: Exception) -> str:
    """The one line that says what went wrong: for a file, its path and the problem (a missing
    directory named as such, since "No such file" about a file being written misleads)."""
    if not isinstance(err, OSError) or err.filename is None:
        return str(err)
    path = Path(os.fsdecode(err.filename))
    if isinstance(err, FileNotFoundError) and not path.parent.is_dir():
        return f"{path}: directory {path.parent} does not exist"
    return f"{path}: {err.strerror or err}"


def _dispatch(args: argparse.Namespace) -> int:
    module_name = COMMANDS[args.command]
    if args.command == "bench" and getattr(args, "distributed", None) is not None:
        module_name = "sparsetir.bench.distributed"
    elif args.command == "bench" and getattr(args, "model", None):
        module_name = "sparsetir.bench.gnn"
    elif args.command == "bench" and (getattr(args, "device", "cpu") == "cuda" or getattr(args, "export", None)):
        module_name = "sparsetir.bench.cuda"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        # Only the command's own module being absent means "not built yet"; a module that is
        # there but fails to import is a bug (or a missing dependency) and keeps its traceback.
        if err.name is None or not (module_name + ".").startswith(err.name + "."):
            raise
        return _not_implemented(args.command, f"there is no module {module_name}")
    run = getattr(module, "run", None)
    if run is None:
        return _not_implemented(args.command, f"{module_name} has no run(args)")
    return int(run(args) or 0)


def _not_implemented(command: str, reason: str) -> int:
    print(f"sparsetir {command}: not implemented yet ({reason})", file=sys.stderr)
    return EXIT_NOT_IMPLEMENTED

"""sparsetir: a sparse tensor compiler for Python, built on Apache TVM.

Write sparse kernels as scripts (``from sparsetir.script import tir as T``), lower them through
three stages to TVM TensorIR, schedule them, build them for CPU or GPU, and look at every
stage side by side with ``sparsetir.explore``.
"""

__version__ = "0.1.0"

from . import _tvm  # noqa: F401  (sets the TVM thread count before TVM starts its pool)
from . import data
from .errors import (
    ArgumentError,
    DeviceError,
    InternalError,
    LoweringError,
    ScheduleError,
    ScriptError,
    ScriptSyntaxError,
    SparseTIRError,
    VerifyError,
)
from .ir import (
    SparseFunction,
    assert_structural_equal,
    structural_equal,
    structural_hash,
    verify,
)
from .script import parse, parse_file
from .ir.stage2 import Stage2Function
from .transforms import FormatRewriteRule, extract_preprocess, format_decompose, lower_sparse_buffer, lower_sparse_iter
from .driver import build
from .schedule import Schedule, replay
from .runtime.parallel import num_threads, set_num_threads
from .explorer import explore
from .tune import tune

# Subpackages reached as attributes (``sparsetir.ops.spmm``) but imported on first use (PEP 562):
# they pull in torch or matplotlib, or are commands, which ``import sparsetir`` should not pay for.
_LAZY_SUBPACKAGES = ("bench", "distributed", "formats", "models", "ops")


def __getattr__(name: str):
    """Import a lazy subpackage the first time ``sparsetir.<name>`` is read."""
    if name in _LAZY_SUBPACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBPACKAGES))

__all__ = [
    "ArgumentError",
    "FormatRewriteRule",
    "InternalError",
    "LoweringError",
    "Schedule",
    "ScheduleError",
    "ScriptError",
    "ScriptSyntaxError",
    "SparseFunction",
    "SparseTIRError",
    "Stage2Function",
    "VerifyError",
    "__version__",
    "assert_structural_equal",
    "build",
    "explore",
    "extract_preprocess",
    "format_decompose",
    "lower_sparse_buffer",
    "lower_sparse_iter",
    "num_threads",
    "parse",
    "parse_file",
    "replay",
    "set_num_threads",
    "structural_equal",
    "structural_hash",
    "tune",
    "verify",
]

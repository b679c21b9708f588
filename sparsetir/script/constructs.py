"""Every construct of the script language, in one place.

The parser accepts exactly what these tables list (plus the statement forms in
``parser.py``); the printer prints only these spellings. docs/language.md documents them.
"""

from __future__ import annotations

import difflib
import re

from .._tvm import tirx
from ..ir.axis import AxisKind

# Data types a value, a scalar parameter or a cast may have.
VALUE_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
)

# Header constructs: ``NAME = T.<construct>(...)`` at function level, in definition order.
AXIS_CONSTRUCTS = tuple(kind.value for kind in AxisKind)
BUFFER_CONSTRUCTS = ("match_sparse_buffer", "alloc_sparse_buffer")
# ``B = T.decl_buffer((I, J), dtype, data=A.data)``: a dense view of a parameter's data (seed 002),
# in the stage-I header; at stage II the same name is a ``DeclBuffer`` statement of the body.
VIEW_CONSTRUCT = "decl_buffer"

# Statement constructs: ``T.<construct>(...)`` as an expression statement.
STATEMENT_CONSTRUCTS = ("func_attr", "sp_iter_attr", "evaluate")

# ``with T.<construct>(...)`` scopes.
SCOPE_CONSTRUCTS = ("sp_iter", "init")

# The name of a sparse iteration (its third argument) names its blocks after lowering: letters,
# digits, '_', '-' and '.', as in the reference implementation's "rgcn-homo-forward".
_ITERATION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
MAX_NAME_LENGTH = 256


def is_iteration_name(name: str) -> bool:
    """Whether ``name`` may name a sparse iteration (and the blocks lowered from it)."""
    return len(name) <= MAX_NAME_LENGTH and _ITERATION_NAME.fullmatch(name) is not None


# Entries of a sparse iteration's axis list besides plain axes.
ITER_AXIS_CONSTRUCTS = ("fuse", "attach", "intersect", "union")

# Expression functions: T.<name>(x) mapped to the TVM operator that builds the node. Each one
# yields a ``Call`` whose op the printer maps back to the same name.
UNARY_MATH = {
    "exp": tirx.exp,
    "exp2": tirx.exp2,
    "log": tirx.log,
    "log2": tirx.log2,
    "log1p": tirx.log1p,
    "sqrt": tirx.sqrt,
    "rsqrt": tirx.rsqrt,
    "tanh": tirx.tanh,
    "sigmoid": tirx.sigmoid,
    "sin": tirx.sin,
    "cos": tirx.cos,
    "erf": tirx.erf,
    "floor": tirx.floor,
    "ceil": tirx.ceil,
    "round": tirx.round,
    "trunc": tirx.trunc,
}
BINARY_MATH = {"pow": tirx.pow, "atan2": tirx.atan2, "fmod": tirx.fmod}

# Math functions TVM 0.27 has no code for on some operand types. On those the parser computes in
# float32 and casts back, written out in the IR (and so in the printed script); T.fmod has no CPU
# code on any type and is refused.
MATH_VIA_FLOAT32 = {"pow": ("bfloat16",), "log1p": ("float16",), "erf": ("float16",), "atan2": ("float16",)}
MATH_REFUSED = ("fmod",)

# Other expression constructs, handled one by one in expr_parser.py.
EXPR_CONSTRUCTS = ("cast", "reinterpret", "if_then_else", "select", "max", "min", "abs", "min_value", "max_value")

# Decorators: ``@T.prim_func`` reads a function; ``@T.macro`` keeps statements to expand where a
# script calls them (macro.py). ``@I.ir_module`` (script/ir.py) gathers functions in a module.
DECORATORS = ("prim_func", "macro")

# Parameter annotations.
HANDLE = "handle"
SCALAR_PARAM_DTYPES = VALUE_DTYPES


# Stage-II constructs (stage2_parser.py), besides the header's and the expressions' above: buffer
# parameters and allocations, views, blocks and what opens them, loops, integer division, and the
# TIR statements TVMScript spells as calls (``T.attr``; ``x: T.int32 = ...`` names a dtype).
STAGE2_CONSTRUCTS = (
    "Buffer", "alloc_buffer", "sblock_alloc_buffer", "match_buffer", "decl_buffer", "attr",
    "sblock", "block", "init", "axis", "where", "reads", "writes", "sblock_attr", "block_attr",
    "serial", "parallel", "vectorized", "unroll", "thread_binding", "grid",
    "truncdiv", "truncmod",
)

# Names a newcomer may reach for (SparseTIR's original ``T.iter``, the docs' "sparse iteration"),
# suggested as the construct they mean when a script uses a name that is none.
OTHER_SPELLINGS = {"iter": "sp_iter", "iteration": "sp_iter"}


def all_constructs() -> list[str]:
    """Every ``T.<name>`` the language accepts at stage I, sorted."""
    names = set(AXIS_CONSTRUCTS + BUFFER_CONSTRUCTS + STATEMENT_CONSTRUCTS + SCOPE_CONSTRUCTS) | {VIEW_CONSTRUCT}
    names |= set(ITER_AXIS_CONSTRUCTS + EXPR_CONSTRUCTS + VALUE_DTYPES)
    names |= set(UNARY_MATH) | set(BINARY_MATH) | set(DECORATORS) | {HANDLE}
    return sorted(names)


def known_constructs() -> frozenset[str]:
    """Every ``T.<name>`` of the language, at stage I or II: a script naming anything else has
    misspelled a construct."""
    return frozenset(all_constructs()) | frozenset(STAGE2_CONSTRUCTS)


def unknown_construct(alias: str, name: str) -> str:
    """The message for ``alias.name``, which is no construct: it names the closest one, if any."""
    meant = {known: known for known in known_constructs()} | OTHER_SPELLINGS
    close = difflib.get_close_matches(name, sorted(meant), n=1)
    hint = f"; did you mean '{alias}.{meant[close[0]]}'?" if close else ""
    return f"unknown construct '{alias}.{name}'{hint}"

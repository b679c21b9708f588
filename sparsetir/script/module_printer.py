"""An ``IRModule`` of sparse programs → the class form of scripts (seed 003), which
``sparsetir.parse`` reads back to an equal module.

Each function is printed by its stage's printer, indented into the class; functions come in
name order (TVM keeps none). Stage III is TVM's TensorIR, which this script language does not
read, so a module holding a stage-III function is refused here: print it with TVM's
``mod.script()``.
"""

from __future__ import annotations

from typing import Any

from ..errors import SparseTIRError
from ..ir.function import SparseFunction
from ..ir.module import functions
from ..ir.stage2 import Stage2Function
from .printer import print_function
from .stage2_printer import print_stage2

_HEADER = "from sparsetir.script import ir as I\nfrom sparsetir.script import tir as T\n\n\n"


def print_module(mod: Any, name: str = "Module") -> str:
    """The script of ``mod``: ``@I.ir_module class <name>:`` holding each function."""
    if not name.isidentifier():
        raise ValueError(f"a module's class name must be a Python identifier, got {name!r}")
    parts = []
    for key, func in functions(mod).items():
        if isinstance(func, SparseFunction):
            text = print_function(func)
        elif isinstance(func, Stage2Function):
            text = print_stage2(func)
        else:
            raise SparseTIRError(f"function '{key}' of the module is at stage III (TVM TensorIR), which scripts do "
                                 "not spell; print it with TVM's mod.script()")
        if func.name != key:
            raise SparseTIRError(f"the module holds function '{func.name}' under the name '{key}'; the class form "
                                 "names each function once, so both must agree")
        parts.append("\n".join("    " + line if line else line for line in text.rstrip("\n").split("\n")))
    return _HEADER + f"@I.ir_module\nclass {name}:\n" + "\n\n".join(parts) + "\n"

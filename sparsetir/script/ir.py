"""The ``I`` of scripts: ``from sparsetir.script import ir as I``.

``@I.ir_module`` over a class whose methods are ``@T.prim_func`` functions (stage I or II, each
already parsed by its own decorator when Python ran the class body) gives a ``tvm.IRModule``
holding them by method name (``ir/module.py`` says how a stage-I function is held). Scripts
spell the same class in text, which ``sparsetir.parse`` reads and ``print_module`` prints.
"""

from __future__ import annotations

import types
from typing import Any

from .._tvm import tirx
from ..errors import ScriptError
from ..ir.function import SparseFunction
from ..ir.module import make_module
from ..ir.stage2 import Stage2Function


def ir_module(cls: type) -> Any:
    """Gather a decorated class's functions in a ``tvm.IRModule``, by name, in definition order."""
    if not isinstance(cls, type):
        raise ScriptError(f"@I.ir_module decorates a class, not a {type(cls).__name__}")
    functions: dict[str, Any] = {}
    for name, value in vars(cls).items():
        if isinstance(value, (SparseFunction, Stage2Function, tirx.PrimFunc)):
            functions[name] = value
        elif isinstance(value, types.FunctionType):
            raise ScriptError(f"'{cls.__name__}.{name}' is not decorated with @T.prim_func; an @I.ir_module class "
                              "holds script functions only")
    if not functions:
        raise ScriptError(f"@I.ir_module class '{cls.__name__}' holds no @T.prim_func function")
    return make_module(functions)

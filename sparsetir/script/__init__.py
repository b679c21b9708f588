"""The script language: parser, printer and the ``T`` namespace (``from sparsetir.script import tir as T``)."""

from ..ir import text as _text
from . import ir, tir
from .api import parse, parse_file
from .module_printer import print_module
from .parser import specialize as _specialize
from .printer import print_function as _print_function
from .stage2_printer import print_stage2 as _print_stage2

_text.install(print_stage1=_print_function, print_stage2=_print_stage2, specialize=_specialize)

__all__ = ["ir", "parse", "parse_file", "print_module", "tir"]

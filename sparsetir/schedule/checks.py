"""The program checks a ``sparsetir.Schedule`` runs after every step at stages II and III.

A step that fails one is refused and rolled back. Each check returns the program's script, which
the history records, so that printing is done once per step.

- Stage II: every metadata buffer is still a parameter (a primitive that rebuilt parameters
  would leave the sparse structure pointing at nothing), TVM's s_tir well-formedness holds, and
  the RFC-style script parses back to an equal function.
- Stage III: well-formedness, and TVMScript parses back to an equal function.
"""

from __future__ import annotations

from typing import Any, Callable

from .._tvm import s_tir, tirx, tvm
from ..errors import ScheduleError
from ..ir.equality import structural_equal
from ..ir.stage2 import ALLOCATED, Stage2Function
from ..script.api import parse


def check_stage2(f2: Stage2Function, round_trip: bool = True) -> str:
    """The stage-II script of ``f2``, or ``ScheduleError`` saying which check it fails
    (``round_trip=False``: all but the parse-back)."""
    params = list(f2.prim.params)
    for meta in f2.buffers:
        if meta.role != ALLOCATED and not any(p.same_as(meta.buffer) for p in params):
            raise ScheduleError(f"the step would detach sparse buffer '{meta.name}' from the function's parameters")
    _well_formed(f2.func)
    if not round_trip:
        return f2.script()
    return _round_trip(f2, Stage2Function.script, parse)


def check_stage3(prim: tirx.PrimFunc, round_trip: bool = True) -> str:
    """The TVMScript of ``prim``, or ``ScheduleError`` saying which check it fails."""
    _well_formed(prim)
    if not round_trip:
        return prim.script()
    return _round_trip(prim, tirx.PrimFunc.script, tvm.script.from_source)


def _well_formed(func: tirx.PrimFunc) -> None:
    try:
        s_tir.analysis.verify_well_formed(func)
    except Exception as err:  # TVM reports ill-formed IR as a generic error
        raise ScheduleError(f"the step would make an ill-formed program: {err}") from err


def _round_trip(func: Any, print_: Callable[[Any], str], parse: Callable[[str], Any]) -> str:
    text = print_(func)
    try:
        again = parse(text)
    except Exception as err:  # any parser failure means the printed program is not faithful
        raise ScheduleError(f"the step would make a program whose script does not parse back: {err}") from err
    if not structural_equal(again, func):
        raise ScheduleError("the step would make a program whose script parses back to a different program")
    return text

"""``sparsetir show FILE``: a script's functions at one compiler stage, or their generated code.

Stage 1 is the script as the compiler reads it back (printed from the IR, so it is also a check
that the file means what it says). Stages 2 and 3 are the lowered programs with every line
annotated with the script line(s) it came from (``# <- lines 26, 29``); ``code`` is what TVM
generates for the host CPU (LLVM IR). ``--passes`` prints the program after every pass of the
pipeline instead, each under a header naming the pass (as MLIR's ``print-ir-after-all``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from .driver import build
from .schedule.default import default_schedule, is_scheduled
from .errors import SparseTIRError, ScriptError
from .ir.module import by_name
from .script import parse_file
from .trace.listing import listing
from .trace.passes import record_passes
from .transforms import pipeline

STAGES = ("1", "2", "3", "code")
STAGE_NAMES = {1: "I", 2: "II", 3: "III"}


def run(args: argparse.Namespace) -> int:
    """Print the requested stage of every (or the ``--func``) function of ``args.file``."""
    from .explorer.command import parse_widths

    try:
        widths = parse_widths(getattr(args, "width", None))
        functions = _functions(args.file, args.func)
        for k, func in enumerate(functions):
            if k:
                print()
            if widths:
                func = _specialized(func, widths)
            schedule = getattr(args, "schedule", None)
            text = render_passes(func, home=args.file) if args.passes else render(func, args.stage, home=args.file,
                                                                                  schedule=schedule)
            print(text, end="")
    except ScriptError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except (OSError, SparseTIRError, ValueError) as err:
        print(f"sparsetir show: {err}", file=sys.stderr)
        return 1
    return 0


def render(func: Any, stage: str, home: Optional[str] = None, schedule: Optional[str] = None) -> str:
    """The text of ``func`` (stage I or II) at ``stage``; lines after stage I carry their origin.

    ``schedule`` is ``"none"`` (the program as written) or ``"default"`` (after the default CPU
    schedule ``build`` applies); by default stages 2 and 3 are shown as written and the code as
    ``build`` makes it."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
    if stage == "code":
        return _ending(build(func, schedule=schedule or "default").source())
    if stage == "1":
        if pipeline.stage_of(func) != 1:
            raise SparseTIRError(f"{func.name} is a stage-II script; there is no stage I to show")
        return _ending(func.script())
    if schedule == "default" and not is_scheduled(func):
        func = default_schedule(func).schedule.func
    lowered = pipeline.lower(func, until=int(stage))
    return _ending(listing(lowered).annotated(home))


def _specialized(func: Any, widths: dict[str, int]) -> Any:
    if pipeline.stage_of(func) != 1:
        raise SparseTIRError(f"--width binds parameters of a stage-I function; {pipeline.function_name(func)} is not one")
    try:
        return func.specialize(widths)
    except (KeyError, TypeError) as err:
        raise SparseTIRError(err.args[0] if err.args else str(err)) from err


def render_passes(func: Any, home: Optional[str] = None) -> str:
    """The program after every pass of the pipeline, each under a ``# ---- after NAME`` header."""
    parts = []
    for record in record_passes(func):
        header = (f"# ---- after {record.name} (stage {STAGE_NAMES[record.stage_after]}, "
                  f"{record.seconds * 1e3:.1f} ms) ----")
        parts.append(header + "\n" + _ending(listing(record.after).annotated(home)))
    if not parts:
        return f"# {pipeline.function_name(func)} is at stage III: no pass left to run\n"
    return "\n".join(parts)


def _functions(path: str, name: Optional[str]) -> list[Any]:
    parsed = parse_file(path)
    found = by_name(parsed)  # an @I.ir_module class gives its functions
    if name is None:
        return list(found.values())
    if name not in found:
        raise SparseTIRError(f"{path} has no function {name!r}; it has {', '.join(sorted(found))}")
    return [found[name]]


def _ending(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"

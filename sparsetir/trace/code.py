"""The listing of generated code: each line of LLVM IR or assembly with the script line it runs.

TVM's LLVM code generator turns the span of every store it lowers into debug line information
(the ``!DILocation`` records that ``!dbg`` refers to in LLVM IR, ``.loc`` directives in
assembly), with the line number of the span — a line of the script, since that is where the
spans of stage III point. Lines with line 0 (argument checks, TVM's calling convention) come
from no script line. CUDA C carries no line information, so its lines have none.
"""

from __future__ import annotations

import re

from .listing import Listing

_DILOCATION = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+)")
_DBG = re.compile(r"!dbg !(\d+)")
_LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)")
_ASM_INSTRUCTION = re.compile(r"^\s+[a-z]")  # indented, not a directive (".p2align") or a label

#: the code formats ``code_listing`` reads: LLVM IR, assembly, CUDA C
FORMATS = ("ll", "asm", "cuda")


def code_listing(text: str, fmt: str, home: str) -> Listing:
    """``text`` (generated code in ``fmt``) with every line mapped to the line of ``home`` it runs."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown code format {fmt!r}; use one of {', '.join(FORMATS)}")
    lines = text.splitlines()
    if fmt == "ll":
        numbers = _llvm_lines(lines)
    elif fmt == "asm":
        numbers = _asm_lines(lines)
    else:
        numbers = [0] * len(lines)
    return Listing(text, tuple(((home, n),) if n > 0 else () for n in numbers))


def _llvm_lines(lines: list[str]) -> list[int]:
    locations = {}
    for line in lines:
        found = _DILOCATION.match(line)
        if found:
            locations[found.group(1)] = int(found.group(2))
    out = []
    for line in lines:
        ref = _DBG.search(line)
        out.append(locations.get(ref.group(1), 0) if ref and not line.startswith("define") else 0)
    return out


def _asm_lines(lines: list[str]) -> list[int]:
    out, current = [], 0
    for line in lines:
        loc = _LOC.match(line)
        if loc:
            current = int(loc.group(1))
            out.append(0)
        elif _ASM_INSTRUCTION.match(line) and not line.lstrip().startswith("."):
            out.append(current)
        else:
            out.append(0)
    return out

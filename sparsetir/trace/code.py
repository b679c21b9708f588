"""The listing of generated code: each line of LLVM IR, assembly or CUDA C with the script line it runs.

TVM's LLVM code generator turns the span of every store it lowers into debug line information
(the ``!DILocation`` records that ``!dbg`` refers to in LLVM IR, ``.loc`` directives in
assembly), with the line number of the span — a line of the script, since that is where the
spans of stage III point. Lines with line 0 (argument checks, TVM's calling convention) come
from no script line.

CUDA C carries no line information, so it is generated twice: once as it is, once from the
program with a marker call before every store that has a span (``mark_stores``: an extern call
named ``__sparsetir_line_N``, which TVM's CUDA code generator prints as a statement of its own).
In the marked source each store line takes the line of the marker before it; the lines of the
marked source (markers removed) are then matched to the real source's (difflib), and the lines
that match carry their script lines. Where the markers changed the code (a vectorized loop that
a call inside keeps scalar), the lines that differ are left unlinked.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Optional

from .._tvm import structural_map, tirx
from .listing import Listing

_DILOCATION = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\(line: (\d+)")
_DBG = re.compile(r"!dbg !(\d+)")
_LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)")
_ASM_INSTRUCTION = re.compile(r"^\s+[a-z]")  # indented, not a directive (".p2align") or a label

#: the code formats ``code_listing`` reads: LLVM IR, assembly, CUDA C
FORMATS = ("ll", "asm", "cuda")


_MARKER = "__sparsetir_line_"
_MARKER_LINE = re.compile(r"^\s*" + _MARKER + r"(\d+)\(\);\s*$")
_DECLARATION = re.compile(r"^\s*(?:const\s+)?[A-Za-z_][\w:]*\d*\s+[A-Za-z_]\w*\s*$")  # "int cse_v1"


def code_listing(text: str, fmt: str, home: str, marked: Optional[str] = None) -> Listing:
    """``text`` (generated code in ``fmt``) with every line mapped to the line of ``home`` it runs;
    for CUDA C, ``marked`` is the source of the same program after ``mark_stores`` (without it,
    no CUDA line is linked)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown code format {fmt!r}; use one of {', '.join(FORMATS)}")
    lines = text.splitlines()
    if fmt == "ll":
        numbers = _llvm_lines(lines)
    elif fmt == "asm":
        numbers = _asm_lines(lines)
    elif marked is not None:
        numbers = _cuda_lines(lines, marked.splitlines())
    else:
        numbers = [0] * len(lines)
    return Listing(text, tuple(((home, n),) if n > 0 else () for n in numbers))


def mark_stores(stage3: Any) -> Any:
    """``stage3`` with a call ``__sparsetir_line_N()`` before every store whose span is on line N:
    compiled for CUDA, its source shows which store came from which script line."""
    def mark(store: Any) -> Any:
        if store.span is None or int(store.span.line) <= 0:
            return store
        call = tirx.call_extern("int32", f"{_MARKER}{int(store.span.line)}")
        return tirx.SeqStmt([tirx.Evaluate(call), store])

    return structural_map(stage3, [(tirx.BufferStore, mark)])


def _cuda_lines(lines: list[str], marked: list[str]) -> list[int]:
    """The script line of each of ``lines`` (CUDA C), read from the marked source's markers."""
    plain, numbers, pending = [], [], 0
    for line in marked:
        found = _MARKER_LINE.match(line)
        if found:
            pending = int(found.group(1))  # a marker with no store after it is dropped
            continue
        plain.append(line)
        if pending and _is_store(line):
            numbers.append(pending)
            pending = 0
        else:
            numbers.append(0)
    out = [0] * len(lines)
    matcher = difflib.SequenceMatcher(None, plain, lines, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        out[b:b + size] = numbers[a:a + size]
    return out


def _is_store(line: str) -> bool:
    """Whether a line of CUDA C assigns to memory (``c_ptr[...] = ``, ``*(float4*)(...) = ``),
    not a declaration of a local (``int cse_v1 = ...``, hoisted between a marker and its store)."""
    if " = " not in line:
        return False
    target = line.split(" = ", 1)[0]
    return not _DECLARATION.match(target) and ("[" in target or target.lstrip().startswith(("*", "(")))


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

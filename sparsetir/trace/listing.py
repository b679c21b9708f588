"""Listings: a program's printed text with, for every line, the script lines it came from.

The line of a statement gets the places its span names (``spans.span_locations``), and a loop
that wraps a block or another loop (the loop nest of a block) also those of what it wraps; the
lines printed inside a statement that are not statements themselves (a block's ``T.axis``
lines, its reads and writes) get the places of that statement; header lines get the span of
what they declare (the function, an axis, a buffer). The text is the one ``sparsetir show`` prints:

- stage I and II: the project's own printers, watched line by line while they print (which
  object each emitted line belongs to);
- stage III: TVMScript, printed with every statement annotated by TVM's printer
  (``obj_to_annotate``), the annotations then read back and removed.

Generated code has its own listing (``code_listing``), from the debug line information TVM puts
in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from .._tvm import s_tir, structural_walk, tirx
from ..ir.function import SparseFunction
from ..ir.stage2 import AXES_ATTR, Stage2Function
from ..script.printer import FunctionPrinter
from ..script.stage2_printer import Stage2Printer
from .fill import fill_spans
from .spans import buffer_lines, merge_spans, span_locations, span_table, text_span, where_text

Location = tuple[str, int]


@dataclass(frozen=True)
class Listing:
    """A printed program and, per line of ``text``, the ``(file, line)`` places it came from."""

    text: str
    origins: tuple[tuple[Location, ...], ...]

    def __post_init__(self) -> None:
        if len(self.origins) != len(self.text.splitlines()):
            raise ValueError(f"a listing of {len(self.text.splitlines())} lines has {len(self.origins)} origins")

    @property
    def lines(self) -> list[str]:
        """The lines of ``text``."""
        return self.text.splitlines()

    def lines_in(self, home: Optional[str]) -> list[list[int]]:
        """Per line, the line numbers of its places in the file ``home``."""
        return [sorted({line for name, line in where if name == home}) for where in self.origins]

    def annotated(self, home: Optional[str] = None) -> str:
        """The text with ``  # <- lines 25, 28`` after every line that has places (bare numbers
        for places in ``home``, ``file:line`` for the others)."""
        out = [f"{line}  # <- {where_text(where, home)}" if where else line for line, where in zip(self.lines, self.origins)]
        return "\n".join(out) + "\n"


def listing(program: Any) -> Listing:
    """The listing of a program at stage I (``SparseFunction``), II or III (``PrimFunc``)."""
    program = fill_spans(program)
    if isinstance(program, SparseFunction):
        return _Stage1Lines(program).listing()
    if isinstance(program, tirx.PrimFunc) and program.attrs is not None and AXES_ATTR in program.attrs:
        program = Stage2Function.from_func(program)
    if isinstance(program, Stage2Function):
        return _Stage2Lines(program).listing()
    if isinstance(program, tirx.PrimFunc):
        return _stage3_listing(program)
    raise TypeError(f"expected a program at stage I, II or III, got {type(program).__name__}")


def home_of(program: Any) -> Optional[str]:
    """The file a program was written in: where the span of the function (or its root) points."""
    span = getattr(program, "span", None)
    if span is None:
        prim = getattr(program, "prim", program)
        body = getattr(prim, "body", None)
        span = getattr(body, "span", None)
    where = span_locations(span)
    return where[0][0] if where else None


def line_span(stmt: Any) -> Any:
    """The span a statement's own line shows: its span, and for a loop nest around a block the
    spans of what the loop wraps too."""
    if isinstance(stmt, tirx.For) and isinstance(stmt.body, (tirx.For, s_tir.SBlockRealize)):
        return merge_spans([stmt.span, line_span(stmt.body)])
    return stmt.span


class _Watch:
    """Mixin for the project's printers: remembers which object every emitted line belongs to."""

    def start_watching(self, owner: Any) -> None:
        self.owners: list[Any] = []
        self.current: list[Any] = [owner]

    def emit(self, depth: int, text: str) -> None:
        super().emit(depth, text)  # type: ignore[misc]
        self.owners.append(self.current[-1])

    def watched(self, node: Any, print_it: Any) -> None:
        self.current.append(node)
        try:
            print_it()
        finally:
            self.current.pop()

    def header_owner(self, line: str, declared: dict[str, Any]) -> Any:
        """What a header line ``NAME = ...`` declares, if it is one of ``declared``."""
        name = line.strip().split(" = ", 1)[0]
        return declared.get(name)


class _Stage1Lines(_Watch, FunctionPrinter):
    """The stage-I printer, watched."""

    def __init__(self, func: SparseFunction):
        super().__init__(func)
        self.start_watching(func)

    def statement(self, stmt: Any, depth: int) -> None:
        self.watched(stmt, lambda: super(_Stage1Lines, self).statement(stmt, depth))

    def listing(self) -> Listing:
        text = self.run()
        declared = {self.names(a): a for a in self.func.axes} | {self.names(b.buffer): b for b in self.func.buffers}
        origins = []
        for line, owner in zip(text.splitlines(), self.owners):
            if owner is self.func:
                owner = self.header_owner(line, declared) or owner
            origins.append(tuple(span_locations(owner.span)))
        return Listing(text, tuple(origins))


class _Stage2Lines(_Watch, Stage2Printer):
    """The stage-II printer, watched."""

    def __init__(self, f2: Stage2Function):
        super().__init__(f2)
        self.start_watching(f2)

    def stmt(self, s: Any, depth: int) -> None:
        if isinstance(s, tirx.SeqStmt):  # its statements are the lines; the sequence is not one
            return super().stmt(s, depth)
        self.watched(s, lambda: super(_Stage2Lines, self).stmt(s, depth))

    def listing(self) -> Listing:
        text = self.run()
        root = self.f2.prim.body
        function_span = root.span
        declared = {self.names(a): a for a in self.f2.axes} | {self.names(m.buffer): m for m in self.f2.buffers}
        table = span_table(self.f2)
        origins = []
        for line, owner in zip(text.splitlines(), self.owners):
            if owner is self.f2:
                header = self.header_owner(line, declared)
                if header is not None and header.span is not None:
                    span: Any = header.span
                else:
                    allocated = buffer_lines(table, line.strip().split(" = ", 1)[0])
                    span = text_span(allocated[-1]) if allocated else function_span
            else:
                span = line_span(owner)
            origins.append(tuple(span_locations(span)))
        return Listing(text, tuple(origins))


_MARK = "sparsetir-span:"
_LEADING = re.compile(r"^(\s*)# " + _MARK + r"(\d+)$")
_TRAILING = re.compile(r"  # " + _MARK + r"(\d+)$")
_ALLOC = re.compile(r"^\s*(\w+) = T\.(?:sblock_)?alloc_buffer\(")


def _stage3_listing(prim: Any) -> Listing:
    """TVMScript of ``prim``; each statement's line (and the lines inside it) get its span."""
    stmts: list[Any] = []

    def visit(node: Any) -> bool:
        if isinstance(node, (tirx.Stmt, s_tir.SBlock)) and not isinstance(node, tirx.SeqStmt):
            stmts.append(node)
        return True

    structural_walk(prim.body, visit)
    marked = prim.script(obj_to_annotate={s: f"{_MARK}{k}" for k, s in enumerate(stmts)})
    table = span_table(prim)
    function_span = prim.body.span
    lines: list[str] = []
    origins: list[tuple[Location, ...]] = []
    pending: Optional[int] = None
    open_stmts: list[tuple[int, int]] = []  # (indentation, statement index) enclosing this line
    for raw in marked.splitlines():
        lead = _LEADING.match(raw)
        if lead:
            pending = int(lead.group(2))
            continue
        trail = _TRAILING.search(raw)
        line = raw[: trail.start()] if trail else raw
        if not line.strip() or line.lstrip().startswith("#"):  # blank lines and TVM's comments
            lines.append(line)
            origins.append(())
            continue
        indent = len(line) - len(line.lstrip())
        while open_stmts and indent <= open_stmts[-1][0]:
            open_stmts.pop()
        if trail:
            owner: Optional[int] = int(trail.group(1))
        elif pending is not None:
            owner, pending = pending, None
            open_stmts.append((indent, owner))
        else:
            owner = open_stmts[-1][1] if open_stmts else None
        alloc = _ALLOC.match(line)
        if owner is not None:
            span = line_span(stmts[owner])
        elif alloc:
            allocated = buffer_lines(table, alloc.group(1))
            span = text_span(allocated[-1]) if allocated else function_span
        else:
            span = function_span
        lines.append(line)
        origins.append(tuple(span_locations(span)))
    return Listing("\n".join(lines) + ("\n" if marked.endswith("\n") else ""), tuple(origins))

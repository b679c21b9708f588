"""Script source text and the mapping from ``ast`` positions to file locations and spans."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import NoReturn, Optional

from .._tvm import SourceName, Span
from ..errors import ScriptError, ScriptSyntaxError


@dataclass(frozen=True)
class Source:
    """Text of a script and where it sits in its file.

    ``line_offset`` and ``col_offset`` shift ``ast`` positions of a dedented excerpt (the
    source of a decorated function) back to positions in the original file.
    """

    text: str
    filename: str = "<script>"
    line_offset: int = 0
    col_offset: int = 0

    def parse(self) -> ast.Module:
        """Python's ``ast`` of the text; a Python syntax error becomes a ``ScriptSyntaxError``."""
        try:
            return ast.parse(self.text, filename=self.filename)
        except SyntaxError as err:
            line = err.lineno or 1
            col = (err.offset or 1) + (self.col_offset if line > 0 else 0)
            raise ScriptSyntaxError(
                f"invalid Python syntax: {err.msg}",
                self.filename,
                line + self.line_offset,
                col,
                self._line_text(line),
            ) from err

    def _line_text(self, line: int) -> Optional[str]:
        lines = self.text.splitlines()
        if 1 <= line <= len(lines):
            return " " * self.col_offset + lines[line - 1]
        return None

    def location(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, col, end_line, end_col) of a node in the file, 1-based columns."""
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + 1 + self.col_offset
        end_line = getattr(node, "end_lineno", line) or line
        end_col = (getattr(node, "end_col_offset", None) or (col - 1 - self.col_offset)) + 1
        end_col += self.col_offset
        return line + self.line_offset, col, end_line + self.line_offset, end_col

    def span(self, node: ast.AST) -> Span:
        """A TVM span for a node."""
        line, col, end_line, end_col = self.location(node)
        return Span(SourceName(self.filename), line, end_line, col, end_col)

    def error(self, node: ast.AST, message: str, kind: type = ScriptError) -> ScriptError:
        """An error of type ``kind`` located at ``node``."""
        line, col, end_line, end_col = self.location(node)
        text = self._line_text(line - self.line_offset)
        return kind(message, self.filename, line, col, text, end_col if end_line == line else None)

    def fail(self, node: ast.AST, message: str, kind: type = ScriptError) -> NoReturn:
        """Raise ``error(node, message, kind)``."""
        raise self.error(node, message, kind)

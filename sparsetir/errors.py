"""The error types users see, with source locations rendered like a compiler's.

Every error sparsetir raises on purpose derives from ``SparseTIRError``. Errors about a script
carry the file, line and column, the offending source line and a caret; the message names the
problem in the script's terms and never contains sparsetir's own frames.
"""

from __future__ import annotations

from typing import Optional


#: The most characters of a source line an error shows: a longer line (a generated script can
#: hold one of megabytes) is cut to a window around the caret, marked with "...".
MAX_EXCERPT = 400


class SparseTIRError(Exception):
    """Base class of every error sparsetir raises on purpose."""


class ScriptError(SparseTIRError):
    """A problem in a script, located at ``filename:line:col`` (1-based line and column)."""

    def __init__(
        self,
        message: str,
        filename: str = "<script>",
        line: Optional[int] = None,
        col: Optional[int] = None,
        source_line: Optional[str] = None,
        end_col: Optional[int] = None,
    ):
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.end_col = end_col
        self.source_line = source_line
        super().__init__(self.render())

    def render(self) -> str:
        """``file:line:col: error: message``, then the line and a caret under the problem."""
        if self.line is None:
            return f"{self.filename}: error: {self.message}"
        col = self.col or 1
        head = f"{self.filename}:{self.line}:{col}: error: {self.message}"
        if self.source_line is None:
            return head
        text = self.source_line.rstrip("\n")
        width = 1
        if self.end_col is not None and self.end_col > col:
            width = min(self.end_col - col, max(1, len(text) - col + 1))
        if len(text) > MAX_EXCERPT:
            start = max(0, min(col - 1 - MAX_EXCERPT // 4, len(text) - MAX_EXCERPT))
            before = "..." if start > 0 else ""
            after = "..." if start + MAX_EXCERPT < len(text) else ""
            width = min(width, start + MAX_EXCERPT - (col - 1))
            text, col = before + text[start : start + MAX_EXCERPT] + after, col - start + len(before)
        caret = " " * (col - 1) + "^" * width
        return f"{head}\n  {text}\n  {caret}"

    def __str__(self) -> str:
        return self.render()


class ScriptSyntaxError(ScriptError):
    """The script uses syntax or a construct the language does not have."""


class VerifyError(ScriptError):
    """The script is well-formed text but not a valid program (checked by the verifier)."""


class LoweringError(SparseTIRError):
    """A pass could not lower a program it accepted as valid."""


class ScheduleError(SparseTIRError):
    """A schedule primitive was refused; the message says why."""


class ArgumentError(SparseTIRError, ValueError):
    """A kernel was called with arguments that do not describe a valid input."""


class DeviceError(SparseTIRError, RuntimeError):
    """A GPU kernel could not be compiled for its device or run on it (no NVIDIA driver, no
    nvcc, a failed driver call); the message says which, the cause is chained."""


class InternalError(SparseTIRError):
    """sparsetir failed where it should have accepted the input or refused it with a clear
    error: a bug in sparsetir. The original error is chained as the cause; please report it."""

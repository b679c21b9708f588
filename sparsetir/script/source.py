"""Script source text and the mapping from ``ast`` positions to file locations and spans.

``Source.parse`` is the one door from text to syntax tree. Past it, the tree is known to nest no
deeper than ``MAX_SYNTAX_DEPTH`` levels in any expression (Python's own indentation limit bounds
the statements), so no step that reads it can be sent arbitrarily deep. Those steps walk
expressions without recursion (an explicit stack, ``ast.walk``, ``same_syntax``); if Python's
recursion limit is reached all the same (statements do recurse, at most about 100 levels as Python
indents them, and a caller may already be deep in its own stack), ``Source.too_deep`` turns that
into a located error too.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Iterator, NoReturn, Optional

from .._tvm import SourceName, Span
from ..errors import ScriptError, ScriptSyntaxError, VerifyError

#: How many levels of syntax one expression may nest (``a + b + c`` is three: two additions and
#: a name; brackets add none, ``A[i, j]`` adds the subscript and its tuple). It is checked over the
#: whole tree before anything reads it. Far above what the printers write (about 20) and what
#: ``expr_parser.MAX_EXPR_DEPTH`` admits (1,000 operations, plus at most 200 levels of the tuples
#: in nested subscripts, as Python nests brackets at most 200 deep), and far below Python's own
#: parser's limit (about 3,000).
MAX_SYNTAX_DEPTH = 1500
#: How long a script may be, in characters: Python's parser alone takes about a second for
#: 100 MB, so reading any script takes bounded time. The programs we print are kilobytes long
#: (the ops kernels' stage II at most 7 KB).
MAX_SCRIPT_CHARS = 10_000_000
#: How many tokens one line may hold, counted (roughly: a string literal or a comment is one) on
#: lines longer than ``MAX_LINE_CHARS`` characters. Python's parser takes time by the syntax
#: nodes, not the characters: a fuzzed 1.8 MB line (a comparison chained 10,000 times over a
#: 180-character operand: 460,000 tokens, 700,000 nodes) took 3 s to parse and 14 s to refuse on
#: the development VM. A long string literal is one token, and prints back longer (its escapes):
#: it is not refused. The lines the printers write hold a few hundred tokens.
MAX_LINE_TOKENS = 50_000
MAX_LINE_CHARS = 200_000
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: A rough token, enough to find where a deep expression is: a name or number, a quoted string
#: on one line, a comment, or any other visible character.
_ROUGH_TOKEN = re.compile(r"""[\w.]+|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|#.*|\S""")


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
    #: ``False``: the nodes read from this text carry no span (``span`` gives ``None``); errors
    #: found while reading it are located all the same (``error`` reads the syntax tree).
    spans: bool = True

    def parse(self) -> ast.Module:
        """Python's ``ast`` of the text; whatever Python's parser refuses (a syntax error, or
        nesting too deep for it) becomes a located ``ScriptSyntaxError``."""
        if len(self.text) > MAX_SCRIPT_CHARS:
            raise ScriptError(f"the script is {len(self.text):,} characters long; at most {MAX_SCRIPT_CHARS:,} "
                              "are read (split it into several files)", self.filename, 1 + self.line_offset, 1)
        if len(self.text) > MAX_LINE_CHARS:
            for k, line in enumerate(self._lines, 1):
                if len(line) > MAX_LINE_CHARS and len(tokens := _ROUGH_TOKEN.findall(line)) > MAX_LINE_TOKENS:
                    raise self._located(f"this line holds about {len(tokens):,} tokens; at most {MAX_LINE_TOKENS:,} "
                                        "are read on one line (split the expression over several statements)", k, 1)
        try:
            with warnings.catch_warnings():  # Python's own warnings about odd literals: the text is data here
                warnings.simplefilter("ignore", SyntaxWarning)
                tree = ast.parse(self.text, filename=self.filename)
        except SyntaxError as err:
            if err.lineno is None and "\0" in self.text:  # Python gives no position for a NUL
                raise self._located(f"invalid Python syntax: {err.msg}", *self._nul_position()) from err
            line = err.lineno or 1
            col = (err.offset or 1) + (self.col_offset if line > 0 else 0)
            raise ScriptSyntaxError(
                f"invalid Python syntax: {err.msg}",
                self.filename,
                line + self.line_offset,
                col,
                self._line_text(line),
            ) from err
        except (RecursionError, MemoryError) as err:
            # Python's parser gives up on nesting thousands of levels deep, without a location;
            # the line with the most tokens is where such an expression is.
            line, col = self._busiest_line()
            message = "this nests too deeply for Python's parser (thousands of operations or brackets in one expression); split it"
            raise self._located(message, line, col) from err
        except ValueError as err:  # older Pythons: a NUL character is a ValueError
            raise self._located(f"invalid Python source: {err}", *self._nul_position()) from err
        self._check_tree(tree)
        return tree

    def _check_tree(self, tree: ast.Module) -> None:
        """One pass over the tree, in source order, before anything reads it: no expression nests
        deeper than ``MAX_SYNTAX_DEPTH`` (refused at the first node past it), and every string
        literal is text that UTF-8 can encode, as TVM stores strings (an escape such as
        ``"\\ud800"``, a lone surrogate, is refused at its location)."""
        for node, depth in _nodes_with_depth(tree):
            if depth > MAX_SYNTAX_DEPTH:
                raise self.error(node, f"expression nested deeper than {MAX_SYNTAX_DEPTH} levels; split it "
                                       "(e.g. accumulate a long sum in several stores)", ScriptSyntaxError)
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:
                    node.value.encode("utf-8")
                except UnicodeEncodeError as err:
                    raise self.error(node, f"this string holds a lone surrogate ({node.value[err.start]!r}), "
                                           "which is not text; TVM stores strings as UTF-8", VerifyError) from err

    def too_deep(self, node: ast.AST) -> ScriptSyntaxError:
        """The located error for Python's recursion limit reached while reading ``node`` (a
        function definition): it points at the most deeply nested part of it, statements and
        expressions counted together, which is what to simplify. Reading is meant never to
        recurse that far; this backstop keeps such a failure a located error all the same."""
        deepest, depth = _deepest(node)
        return self.error(deepest, f"reading this reached Python's recursion limit ({sys.getrecursionlimit()}); "
                                   f"this part of the function nests {depth} levels deep: simplify it", ScriptSyntaxError)

    def _located(self, message: str, line: int, col: int) -> ScriptSyntaxError:
        """A syntax error at ``line``, ``col`` of the text (1-based), in file coordinates."""
        return ScriptSyntaxError(message, self.filename, line + self.line_offset, col + self.col_offset, self._line_text(line))

    def _nul_position(self) -> tuple[int, int]:
        """(line, col) of the first NUL character, or (1, 1)."""
        nul = self.text.find("\0")
        if nul < 0:
            return 1, 1
        return self.text.count("\n", 0, nul) + 1, nul - (self.text.rfind("\n", 0, nul) + 1) + 1

    def _busiest_line(self) -> tuple[int, int]:
        """(line, col) of the first token on the line holding the most tokens, counted by a
        regular expression per line (a string literal or a comment is one token); Python's
        ``tokenize`` took 6 s over a 7 MB fuzzed script."""
        best, line, col = 0, 1, 1
        for k, text in enumerate(self._lines, 1):
            tokens = _ROUGH_TOKEN.findall(text)
            if len(tokens) > best:
                best, line = len(tokens), k
                col = len(text) - len(text.lstrip()) + 1
        return line, col

    @functools.cached_property
    def _lines(self) -> list[str]:
        """The text's lines as Python's tokenizer counts them: broken at ``\n``, ``\r\n`` and
        ``\r`` only (``str.splitlines`` also breaks at form feeds and U+2028, which Python does not)."""
        return _LINE_BREAK.split(self.text)

    @functools.cached_property
    def _encoded(self) -> dict[int, bytes]:
        """UTF-8 bytes of the lines met so far by line number, ``b""`` for an ASCII line (``_column``)."""
        return {}

    def _line_text(self, line: int) -> Optional[str]:
        lines = self._lines
        if 1 <= line <= len(lines):
            return " " * self.col_offset + lines[line - 1]
        return None

    def _column(self, line: int, byte_offset: int) -> int:
        """The 0-based character column of ``ast``'s ``byte_offset`` (UTF-8 bytes) on ``line``."""
        lines = self._lines
        if not 1 <= line <= len(lines):
            return byte_offset
        encoded = self._encoded.get(line)
        if encoded is None:
            text = lines[line - 1]
            encoded = self._encoded[line] = b"" if text.isascii() else text.encode("utf-8")
        return len(encoded[:byte_offset].decode("utf-8", errors="ignore")) if encoded else byte_offset

    def location(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, col, end_line, end_col) of a node in the file, 1-based columns (characters)."""
        line = getattr(node, "lineno", 1)
        col = self._column(line, getattr(node, "col_offset", 0)) + 1 + self.col_offset
        end_line = getattr(node, "end_lineno", line) or line
        end_offset = getattr(node, "end_col_offset", None)
        end_col = (self._column(end_line, end_offset) if end_offset is not None else col - 1 - self.col_offset) + 1
        end_col += self.col_offset
        return line + self.line_offset, col, end_line + self.line_offset, end_col

    def span(self, node: ast.AST) -> Optional[Span]:
        """A TVM span for a node (``None`` when this source keeps no spans)."""
        if not self.spans:
            return None
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


def _nodes_with_depth(root: ast.AST) -> Iterator[tuple[ast.AST, int]]:
    """Every node under ``root`` in source order (preorder), with its expression depth: 1 for an
    expression that is not inside another, one more for each expression it is inside (the
    ``keyword`` of a call passes its parent's depth on), 0 for statements and the rest.
    Iterative, so any depth is safe to measure."""
    stack: list[tuple[ast.AST, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        children = list(ast.iter_child_nodes(node))
        for child in reversed(children):
            if isinstance(child, ast.expr):
                stack.append((child, depth + 1))
            else:
                stack.append((child, 0 if isinstance(child, ast.stmt) else depth))


def _deepest(root: ast.AST) -> tuple[ast.AST, int]:
    """The first node (in source order) of those nested deepest under ``root`` that have a
    position (not ``Load`` nor ``Add``), and how deep, every node counted; iterative."""
    best: tuple[ast.AST, int] = (root, 0)
    stack: list[tuple[ast.AST, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > best[1] and hasattr(node, "lineno"):
            best = (node, depth)
        stack.extend((child, depth + 1) for child in reversed(list(ast.iter_child_nodes(node))))
    return best


def same_syntax(a: ast.AST, b: ast.AST) -> bool:
    """Whether two syntax trees are the same code, positions aside (``ast.dump(a) == ast.dump(b)``
    without its recursion, which a deep expression would exhaust)."""
    stack: list[tuple[Any, Any]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            stack.extend((getattr(x, name, None), getattr(y, name, None)) for name in x._fields)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y:
            return False
    return True

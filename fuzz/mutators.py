"""Mutations of a script's text, each a function ``(text, rng) -> text``, deterministic in ``rng``.

Families: token edits (Python's ``tokenize``), line edits, injected Python payloads at named
positions (``payloads.py``), deep nesting, huge literals, arithmetic with ``None``, stage-level
edits, and combinations of these. ``mutate(seed_text, rng)`` picks one family (weighted) and
returns the mutant with the names of the mutations applied.
"""

from __future__ import annotations

import ast
import io
import random
import re
import tokenize
import warnings
from dataclasses import dataclass
from typing import Callable, Optional

from . import payloads

Mutator = Callable[[str, random.Random], str]


# --- tokens ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    """One token of a script with its character offsets."""

    text: str
    start: int
    end: int
    kind: int


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def tokens_of(text: str) -> list[Token]:
    """The non-empty tokens of ``text``; as many as tokenize reads before a broken spot."""
    starts = _line_starts(text)
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if not tok.string or tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
                continue
            if tok.start[0] > len(starts) - 1 or tok.end[0] > len(starts) - 1:
                break
            out.append(Token(tok.string, starts[tok.start[0] - 1] + tok.start[1],
                             starts[tok.end[0] - 1] + tok.end[1], tok.type))
    except (tokenize.TokenError, SyntaxError):
        pass  # an earlier mutation broke tokenizing; the tokens read so far still serve
    return out


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


#: Tokens a replacement may come from, besides the script's own.
VOCABULARY = [
    "None", "True", "False", "0", "-1", "1", "2147483648", "1e400", "T", "range", "lambda", "yield",
    "await", "import", "global", "(", ")", "[", "]", "{", "}", ":", ",", ".", "=", ":=", "**", "@",
    "->", "...", "__import__", "open", "exec", "eval", "__class__", "__globals__", "\\", ";", "#",
    '"sparse_tir_level"', "T.handle", "int32", "float32", "'S'", "b''", "0j", "0x10", "if", "else",
]


def tok_delete(text: str, rng: random.Random) -> str:
    toks = tokens_of(text)
    if not toks:
        return text
    t = rng.choice(toks)
    return _splice(text, t.start, t.end, "")


def tok_swap(text: str, rng: random.Random) -> str:
    toks = tokens_of(text)
    if len(toks) < 2:
        return text
    a, b = sorted(rng.sample(toks, 2), key=lambda t: t.start)
    return text[: a.start] + b.text + text[a.end : b.start] + a.text + text[b.end :]


def tok_duplicate(text: str, rng: random.Random) -> str:
    toks = tokens_of(text)
    if not toks:
        return text
    t = rng.choice(toks)
    return _splice(text, t.end, t.end, rng.choice(["", " "]) + t.text)


def tok_replace(text: str, rng: random.Random) -> str:
    """One token replaced by another of the script (same kind if possible) or of ``VOCABULARY``."""
    toks = tokens_of(text)
    if not toks:
        return text
    t = rng.choice(toks)
    if rng.random() < 0.5:
        same = [o.text for o in toks if o.kind == t.kind and o.text != t.text]
        new = rng.choice(same or [o.text for o in toks])
    else:
        new = rng.choice(VOCABULARY)
    return _splice(text, t.start, t.end, new)


def truncate(text: str, rng: random.Random) -> str:
    toks = tokens_of(text)
    if rng.random() < 0.5 or not toks:
        return text[: rng.randrange(len(text) + 1)]
    return text[: rng.choice(toks).end]


def rename_identifier(text: str, rng: random.Random) -> str:
    names = [t for t in tokens_of(text) if t.kind == tokenize.NAME and t.text.isidentifier()]
    distinct = sorted({t.text for t in names})
    if len(distinct) < 2:
        return tok_delete(text, rng)
    t = rng.choice(names)
    return _splice(text, t.start, t.end, rng.choice([n for n in distinct if n != t.text]))


# --- lines -------------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [""]


def line_delete(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    del lines[rng.randrange(len(lines))]
    return "".join(lines)


def line_duplicate(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    k = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[k] if lines[k].endswith("\n") else lines[k] + "\n")
    return "".join(lines)


def line_swap(text: str, rng: random.Random) -> str:
    lines = _lines(text)
    if len(lines) < 2:
        return text
    a, b = rng.sample(range(len(lines)), 2)
    lines[a], lines[b] = lines[b], lines[a]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def line_indent(text: str, rng: random.Random) -> str:
    """One line (or a run of lines) indented more, less, by a tab, or by one space."""
    lines = _lines(text)
    k = rng.randrange(len(lines))
    count = rng.choice([1, 1, 1, 3, 10])
    change = rng.choice(["+4", "-4", "+1", "tab", "flush"])
    for i in range(k, min(k + count, len(lines))):
        line = lines[i]
        if change == "+4":
            lines[i] = "    " + line
        elif change == "-4":
            lines[i] = line[4:] if line.startswith("    ") else line.lstrip(" ")
        elif change == "+1":
            lines[i] = " " + line
        elif change == "tab":
            lines[i] = "\t" + line.lstrip(" ")
        else:
            lines[i] = line.lstrip()
    return "".join(lines)


# --- positions in the Python AST of a (still parseable) script --------------------------------


@dataclass(frozen=True)
class Place:
    """A span of the text (character offsets) and what kind of position it is."""

    kind: str
    start: int
    end: int


_LOOP_CALLS = {"range", "grid", "serial", "parallel", "vectorized", "unroll", "thread_binding",
               "dense_fixed", "dense_variable", "sparse_fixed", "sparse_variable"}
_ATTR_CALLS = {"func_attr", "sblock_attr", "block_attr"}
_NAME_CALLS = {"sblock", "block", "sp_iter"}


def _call_name(node: ast.AST) -> Optional[str]:
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    if isinstance(node.func, ast.Name):
        return node.func.id
    return None


def places(text: str) -> list[Place]:
    """Every expression position of a script that Python can parse, tagged by kind."""
    try:
        with warnings.catch_warnings():  # a mutant's odd literals: Python would warn from "<unknown>"
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    starts = _line_starts(text)
    lines = text.splitlines(keepends=True)

    def offset(line: int, col_bytes: int) -> int:
        return starts[line - 1] + len(lines[line - 1].encode()[:col_bytes].decode(errors="ignore"))

    def span(node: ast.AST) -> tuple[int, int]:
        return offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)

    out: list[Place] = []

    def add(kind: str, node: ast.AST) -> None:
        if getattr(node, "end_lineno", None) is not None:
            out.append(Place(kind, *span(node)))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                add("decorator", dec)
                if isinstance(dec, ast.Call):
                    for arg in dec.args:
                        add("decorator_arg", arg)
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                if arg.annotation is not None:
                    add("annotation", arg.annotation)
            if node.args.args and node.args.args[-1].annotation is not None:
                end = span(node.args.args[-1].annotation)[1]
                out.append(Place("default", end, end))
            if node.returns is not None:
                add("return_annotation", node.returns)
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                add("docstring", first.value)
            else:
                out.append(Place("docstring_new", span(first)[0], span(first)[0]))
        name = _call_name(node)
        if name in _ATTR_CALLS and node.args and isinstance(node.args[0], ast.Dict):
            for key, value in zip(node.args[0].keys, node.args[0].values):
                if key is not None:
                    add("attr_key", key)
                add("attr_value", value)
        if name in _LOOP_CALLS:
            for arg in node.args:
                add("extent", arg)
        if name in _NAME_CALLS and node.args:
            add("block_name", node.args[-1] if name == "sp_iter" else node.args[0])
        if isinstance(node, ast.Call):
            for arg in node.args:
                add("call_arg", arg)
        if isinstance(node, ast.Subscript):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for item in items:
                add("subscript", item)
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            add("rhs", node.value)
        if isinstance(node, ast.expr) and not isinstance(node, (ast.Starred, ast.Slice)):
            add("any", node)
    return out


def _replace_place(text: str, place: Place, new: str) -> str:
    if place.kind == "default":
        return _splice(text, place.start, place.end, f" = {new}")
    if place.kind == "docstring_new":
        line_start = text.rfind("\n", 0, place.start) + 1
        indent = text[line_start : place.start]
        return _splice(text, place.start, place.start, f"{new}\n{indent}")
    return _splice(text, place.start, place.end, new)


# --- injected Python ---------------------------------------------------------------------------


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _body_lines(text: str) -> list[int]:
    """Indices of lines after the first ``def`` line (statements of a function body)."""
    lines = text.splitlines()
    first = next((k for k, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)
    return [k for k in range(first, len(lines)) if lines[k].strip()]


def insert_statement(text: str, stmt: str, rng: random.Random) -> str:
    """``stmt`` as a statement after a random body line, at that line's block's indentation."""
    lines = text.splitlines(keepends=True)
    body = _body_lines(text)
    if not body:
        return text + "\n" + stmt + "\n"
    k = rng.choice(body)
    indent = _indent_of(lines[k])
    head = lines[k].rstrip()
    if head.endswith(":") or head.endswith("-> None:"):
        nxt = next((lines[j] for j in range(k + 1, len(lines)) if lines[j].strip()), None)
        indent = _indent_of(nxt) if nxt is not None else indent + "    "
    block = "".join(indent + line + "\n" for line in stmt.split("\n"))
    if not lines[k].endswith("\n"):
        lines[k] += "\n"
    lines.insert(k + 1, block)
    return "".join(lines)


def inject_statement(text: str, rng: random.Random) -> str:
    return insert_statement(text, payloads.statement(rng.randrange(1000)), rng)


#: Kinds of place ``inject_expression`` aims at, in turn: every named kind gets its share.
PLACE_KINDS = ["attr_value", "attr_key", "annotation", "return_annotation", "default", "decorator",
               "decorator_arg", "extent", "subscript", "block_name", "call_arg", "rhs", "any",
               "docstring", "docstring_new"]


def _payload_for(kind: str, rng: random.Random) -> str:
    if kind in ("docstring", "docstring_new"):
        inner = payloads.doc_text(rng.randrange(100)) if rng.random() < 0.5 else payloads.expression(rng.randrange(1000))
        quote = rng.choice(['"""', "'''", 'f"""', "f'''"]) if "'" not in inner and '"' not in inner else rng.choice(['"""', "'''"])
        if quote.startswith("f") and rng.random() < 0.7:
            return f'f"""{{{payloads.expression(rng.randrange(1000))}}}"""'
        return f"{quote.lstrip('f')}{inner}{quote.lstrip('f')}"
    if kind == "decorator":
        return f"T.prim_func({payloads.expression(rng.randrange(1000))})"
    return payloads.expression(rng.randrange(1000))


def inject_expression(text: str, rng: random.Random) -> str:
    """A payload expression in place of an expression of a chosen kind (a statement if none)."""
    found = places(text)
    if not found:
        return inject_statement(text, rng)
    kind = rng.choice(PLACE_KINDS)
    fitting = [p for p in found if p.kind == kind] or found
    place = rng.choice(fitting)
    return _replace_place(text, place, _payload_for(place.kind, rng))


def inject_func_attr(text: str, rng: random.Random) -> str:
    """A payload as a key or value of ``T.func_attr``, or a new entry in it."""
    match = re.search(r"T\.func_attr\(\{", text)
    payload = payloads.expression(rng.randrange(1000))
    if match is None:
        return inject_expression(text, rng)
    entry = rng.choice([f'"fz": {payload}, ', f"{payload}: 1, ", f'"sparse_tir_level": {payload}, ',
                        f"**{{'x': {payload}}}, "])
    return _splice(text, match.end(), match.end(), entry)


def level_in_docstring(text: str, rng: random.Random) -> str:
    """A docstring or comment that mentions ``"sparse_tir_level": 1`` (and a payload)."""
    doc = payloads.doc_text(rng.randrange(100))
    if rng.random() < 0.5:
        return insert_statement(text, f"# {doc}", rng)
    return inject_at(text, rng, "docstring_new", f'"""{doc}"""') if '"""' not in doc else text


def inject_at(text: str, rng: random.Random, kind: str, new: str) -> str:
    found = [p for p in places(text) if p.kind == kind]
    if not found:
        return insert_statement(text, new, rng)
    return _replace_place(text, rng.choice(found), new)


# --- deep nesting ------------------------------------------------------------------------------

DEPTHS = [30, 100, 300, 1000, 3000, 10000]


def _some_expression(text: str, rng: random.Random) -> Optional[Place]:
    found = [p for p in places(text) if p.kind in ("extent", "subscript", "rhs", "call_arg", "any")]
    return rng.choice(found) if found else None


def deep_expression(text: str, rng: random.Random) -> str:
    """An expression wrapped in deep parentheses, unary minus, a long sum, calls or lists."""
    place = _some_expression(text, rng)
    if place is None:
        return text
    inner = text[place.start : place.end]
    n = rng.choice(DEPTHS)
    shape = rng.choice(["parens", "neg", "not", "sum", "product", "calls", "max", "list", "subscript", "ifexp", "compare"])
    if shape == "parens":
        new = "(" * n + inner + ")" * n
    elif shape == "neg":
        new = "-" * n + inner if rng.random() < 0.5 else "- " * n + inner
    elif shape == "not":
        new = "not " * n + inner
    elif shape == "sum":
        new = " + ".join([inner] * n)
    elif shape == "product":
        new = " * ".join([inner] + ["1"] * n)
    elif shape == "calls":
        new = "T.int32(" * n + inner + ")" * n
    elif shape == "max":
        new = "T.max(" * n + inner + ", 0)" * n
    elif shape == "list":
        new = "[" * n + inner + "]" * n
    elif shape == "subscript":
        new = inner + "[0]" * n
    elif shape == "ifexp":
        new = " if True else ".join([inner] * n)
    else:
        new = " < ".join([inner] * n)
    return _splice(text, place.start, place.end, new)


def deep_statements(text: str, rng: random.Random) -> str:
    """Deeply nested ``with``/``for``/``if`` blocks as one statement of the body."""
    n = rng.choice([10, 50, 100, 200, 1000])
    kind = rng.choice(["with_init", "for", "if", "sblock", "mixed"])
    lines = []
    for k in range(n):
        pick = kind if kind != "mixed" else rng.choice(["with_init", "for", "if", "sblock"])
        head = {"with_init": "with T.init():", "for": f"for fz{k} in range(2):", "if": "if True:",
                "sblock": f'with T.sblock("fz{k}"):'}[pick]
        lines.append("    " * k + head)
    lines.append("    " * n + "T.evaluate(0)")
    return insert_statement(text, "\n".join(lines), rng)


# --- literals ----------------------------------------------------------------------------------

HUGE = ["10**30", "1000000000000000000000000000000", "2**31", "2147483648", "2147483647", "-1", "-2147483649",
        "0", "-0", "1e400", "-1e400", "1e308", "1e-400", "0.0", "nan", "inf", "9" * 400, "0x" + "f" * 64,
        "1_000_000_000_000", "0o777777777777777777777", "1j", "True", "-(2**63)", "2**64", "18446744073709551616"]


def huge_literal(text: str, rng: random.Random) -> str:
    numbers = [t for t in tokens_of(text) if t.kind == tokenize.NUMBER]
    if not numbers:
        names = [t for t in tokens_of(text) if t.kind == tokenize.NAME]
        if not names:
            return text
        t = rng.choice(names)
    else:
        t = rng.choice(numbers)
    return _splice(text, t.start, t.end, rng.choice(HUGE))


def huge_extent(text: str, rng: random.Random) -> str:
    """A loop extent, axis length or call argument replaced by a huge or negative literal."""
    found = [p for p in places(text) if p.kind in ("extent", "subscript", "call_arg")]
    if not found:
        return huge_literal(text, rng)
    return _replace_place(text, rng.choice(found), rng.choice(HUGE))


def long_string(text: str, rng: random.Random) -> str:
    strings = [t for t in tokens_of(text) if t.kind == tokenize.STRING]
    if not strings:
        return text
    t = rng.choice(strings)
    n = rng.choice([1000, 100_000, 1_000_000])
    fill = rng.choice(["x", "\\x00", "é", "\\n", "'", '{', "\\u202e"])
    return _splice(text, t.start, t.end, '"' + fill * (n // len(fill)) + '"')


def long_name(text: str, rng: random.Random) -> str:
    names = [t for t in tokens_of(text) if t.kind == tokenize.NAME and t.text.isidentifier()]
    if not names:
        return text
    old = rng.choice(names).text
    new = rng.choice(["x" * rng.choice([1000, 100_000]), "é" + old, "_" + old + "_", "ᵢ", "ℌ" + old])
    return re.sub(rf"\b{re.escape(old)}\b", new, text)


# --- None arithmetic and stage levels ----------------------------------------------------------


def none_arithmetic(text: str, rng: random.Random) -> str:
    """``x % None``, ``x // None`` and the like, as a statement or in place of an expression."""
    op = rng.choice(["%", "//", "/", "*", "+", "-", "<", "==", "**", "&", "<<"])
    if rng.random() < 0.5:
        name = rng.choice(["m", "n", "0", "1.5", "T.int32(1)", "None"])
        pair = f"{name} {op} None" if rng.random() < 0.7 else f"None {op} {name}"
        return insert_statement(text, f"T.evaluate({pair})", rng)
    place = _some_expression(text, rng)
    if place is None:
        return text
    inner = text[place.start : place.end]
    return _splice(text, place.start, place.end, f"({inner} {op} None)")


def level_swap(text: str, rng: random.Random) -> str:
    """The ``sparse_tir_level`` value changed: 1 <-> 2, or something odd."""
    match = re.search(r"([\"']sparse_tir_level[\"']\s*:\s*)([^,}]*)", text)
    if match is None:
        return inject_func_attr(text, rng)
    old = match.group(2).strip()
    new = {"1": "2", "2": "1"}.get(old, "1") if rng.random() < 0.6 else rng.choice(
        ["3", "0", "-1", "True", '"1"', "1.0", "None", "2147483648", "(1)", "1 + 0", "[1]"])
    return _splice(text, match.start(2), match.end(2), new)


# --- choosing --------------------------------------------------------------------------------

#: Every mutator with its weight; injected Python carries the most weight.
MUTATORS: list[tuple[Mutator, int]] = [
    (tok_delete, 4), (tok_swap, 3), (tok_duplicate, 3), (tok_replace, 5), (truncate, 1),
    (rename_identifier, 2),
    (line_delete, 2), (line_duplicate, 2), (line_swap, 2), (line_indent, 2),
    (inject_statement, 6), (inject_expression, 10), (inject_func_attr, 3), (level_in_docstring, 2),
    (deep_expression, 3), (deep_statements, 2),
    (huge_literal, 3), (huge_extent, 3), (long_string, 1), (long_name, 1),
    (none_arithmetic, 3), (level_swap, 3),
]


def _pick(rng: random.Random) -> Mutator:
    funcs, weights = zip(*MUTATORS)
    return rng.choices(funcs, weights)[0]


#: The longest mutant: twice the parser's own limit (``sparsetir.script.source.MAX_SCRIPT_CHARS``,
#: 10 M characters, refused at once; the harness does not import sparsetir). A longer one checks
#: nothing more and costs seconds to send to a worker (seed 93002 made a 1 GB mutant, a long
#: name over a deep expression, which counted as a hang).
MAX_MUTANT_CHARS = 20_000_000


def mutate(text: str, rng: random.Random) -> tuple[str, list[str]]:
    """The mutant of ``text``: one mutation (70%) or a combination of two to four; one longer
    than ``MAX_MUTANT_CHARS`` is cut there, and mutated no further."""
    count = 1 if rng.random() < 0.7 else rng.choice([2, 2, 3, 4])
    applied = []
    for _ in range(count):
        mutator = _pick(rng)
        text = mutator(text, rng)
        applied.append(mutator.__name__)
        if len(text) > MAX_MUTANT_CHARS:
            text = text[:MAX_MUTANT_CHARS]
            applied.append("cut")
            break
    return text, applied

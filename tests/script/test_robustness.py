"""The stage-I language at its edges: deep expressions, empty bodies, extreme literals, and the
reference implementation's spellings. Each refusal is a located error; the tests assert the
message and the line and column, as the table in ``test_errors.py`` does.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse

import sparsetir
from sparsetir import ScriptError, ScriptSyntaxError, VerifyError
from sparsetir._tvm import tirx
from sparsetir.script.expr_parser import MAX_EXPR_DEPTH
from sparsetir.explorer.init_lines import init_lines
from sparsetir.script.expr_printer import ExprPrinter
from sparsetir.script.stage2_parser import is_stage2_text

HEADER = """\
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    K = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
"""
L1 = HEADER.count("\n") + 1  # the line of a body's first line
STORE = "        C[i, k] = "  # the prefix of a store line in ITERATION
ITERATION = '    with T.sp_iter([I, J, K], "SRS", "s") as [i, j, k]:\n'


def _store(expr: str) -> str:
    return HEADER + ITERATION + STORE + expr + "\n"


def _error(text: str) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        sparsetir.parse(text, "case.py")
    err = info.value
    assert err.filename == "case.py" and err.line is not None and err.col is not None, str(err)
    return err


def _check(text: str, kind: type, message: str, line: int, col: int) -> None:
    err = _error(text)
    assert isinstance(err, kind), f"{type(err).__name__}: {err}"
    assert message in err.message, err.message
    assert (err.line, err.col) == (line, col), str(err)


def _roundtrip(func: sparsetir.SparseFunction) -> None:
    printed = func.script()
    again = sparsetir.parse(printed, "<printed>")
    sparsetir.assert_structural_equal(func, again)
    assert again.script() == printed


# --- deep expressions -----------------------------------------------------------------------

DEEP = {
    # MAX_EXPR_DEPTH - 1 additions over loads: exactly at the limit
    "sum": " + ".join(["A[i, j]"] * MAX_EXPR_DEPTH),
    "unary-minus": "-" * (MAX_EXPR_DEPTH - 1) + "A[i, j]",
    "mixed": " * ".join(["(A[i, j] - 1.0)"] * 300),
    "and-chain": "T.if_then_else(" + " and ".join(["A[i, j] > 0.0"] * (MAX_EXPR_DEPTH - 2)) + ", 1.0, 0.0)",
    "not-chain": "T.if_then_else(" + "not " * 900 + "(A[i, j] > 0.0), 1.0, 0.0)",
    "calls": "T.exp(" * 150 + "A[i, j]" + ")" * 150,
}


@pytest.mark.parametrize("expr", list(DEEP.values()), ids=list(DEEP))
def test_deep_expressions_parse_and_print_back(expr: str):
    func = sparsetir.parse(_store(expr))
    _roundtrip(func)


def test_deep_sums_lower_build_and_compute():
    """500 terms and 500 unary minuses reach TVM and the kernel computes them."""
    text = (
        HEADER
        + ITERATION
        + "        with T.init():\n            C[i, k] = T.float32(0)\n"
        + STORE + "C[i, k] + (" + " + ".join(["A[i, j]"] * 500) + ") + " + "-" * 500 + "A[i, j]\n"
    )
    kernel = sparsetir.build(sparsetir.parse(text))
    a = scipy.sparse.random(7, 5, density=0.5, format="csr", random_state=0, dtype=np.float32)
    a.sort_indices()
    c = np.full((7, 5), np.nan, dtype=np.float32)
    kernel(a=a.data, c=c, indptr=a.indptr, indices=a.indices, m=7, n=5, nnz=a.nnz)
    expected = np.repeat(np.asarray(a.sum(axis=1)) * 501, 5, axis=1)
    np.testing.assert_allclose(c, expected, rtol=1e-4)


def test_a_sum_one_term_too_long_is_refused_at_its_first_term():
    text = _store(" + ".join(["A[i, j]"] * (MAX_EXPR_DEPTH + 1)))
    _check(text, ScriptSyntaxError, f"this expression nests more than {MAX_EXPR_DEPTH} operations deep", L1 + 1, len(STORE) + 1)


def test_too_many_unary_minuses_are_refused_where_the_limit_is_passed():
    text = _store("-" * MAX_EXPR_DEPTH + "A[i, j]")
    _check(text, ScriptSyntaxError, "nests more than", L1 + 1, len(STORE) + MAX_EXPR_DEPTH + 1)


def test_a_too_long_and_chain_is_refused_at_the_chain():
    chain = " and ".join(["A[i, j] > 0.0"] * (MAX_EXPR_DEPTH + 2))
    text = _store(f"T.if_then_else({chain}, 1.0, 0.0)")
    _check(text, ScriptSyntaxError, "nests more than", L1 + 1, len(STORE) + len("T.if_then_else(") + 1)


def test_nesting_beyond_pythons_parser_is_located():
    # Lines within MAX_LINE_CHARS (200,000 characters), nested far beyond Python's parser.
    text = _store("+".join(["a"] * 90_000))
    _check(text, ScriptSyntaxError, "nests too deeply for Python's parser", L1 + 1, 9)
    text = _store("-" * 100_000 + "A[i, j]")
    _check(text, ScriptSyntaxError, "nests too deeply for Python's parser", L1 + 1, 9)
    # The deep line is the one with the most tokens; a long string literal or comment on another
    # line is one token (the count is a regular expression's: tokenize took 6 s over 7 MB).
    text = _store("+".join(["a"] * 50_000)).replace(STORE, "        # " + "x " * 90_000 + "\n" + STORE, 1)
    _check(text, ScriptSyntaxError, "nests too deeply for Python's parser", L1 + 2, 9)


def test_too_many_parentheses_are_located():
    text = _store("(" * 300 + "A[i, j]" + ")" * 300)
    _check(text, ScriptSyntaxError, "too many nested parentheses", L1 + 1, len(STORE) + 201)


def test_a_nul_character_is_located():
    text = HEADER + "    T.evaluate(m\0)\n"
    _check(text, ScriptSyntaxError, "null bytes", L1, len("    T.evaluate(m") + 1)


def test_pythons_warnings_about_odd_literals_are_not_shown():
    # ``0.0and`` makes Python's parser warn "invalid decimal literal" from "<unknown>"; the script
    # is data here, so reading it (telling its stage, finding its init lines) warns of nothing.
    text = _store("T.if_then_else(A[i, j] > 0.0and A[i, j] < 1.0, 1.0, 0.0)")
    for read in (lambda: sparsetir.parse(text, "case.py"), lambda: is_stage2_text(text), lambda: init_lines(text)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            read()
        assert [str(w.message) for w in caught] == []


def test_printer_prints_ir_deeper_than_the_parser_accepts():
    """IR built by code may nest deeper than scripts; printing it never recurses."""
    x = tirx.Var("x", "float32")
    expr = x
    for _ in range(20_000):
        expr = tirx.Add(expr, x)
    expr = tirx.Mul(tirx.Cast("float32", tirx.Var("i", "int32")), expr)
    text = ExprPrinter(lambda v: v.name)(expr)
    assert text.startswith("T.cast(i, \"float32\") * (x + x + x")
    assert text.count("+") == 20_000


# --- huge scripts: bounded time, readable errors -----------------------------------------------


def test_a_script_longer_than_the_limit_is_refused_before_it_is_parsed():
    """A fuzzed 100 MB script (a 100,000-character name a thousand times over, seed 31337) took
    seconds to parse and to render its error: a hang."""
    from sparsetir.script.source import MAX_SCRIPT_CHARS

    text = _store(" + ".join(["A[i, j]"] * (MAX_SCRIPT_CHARS // 10)))  # 10 characters a term
    err = _error(text)
    assert err.message == (f"the script is {len(text):,} characters long; at most {MAX_SCRIPT_CHARS:,} are read "
                           "(split it into several files)")
    assert (err.line, err.col) == (1, 1)


def test_a_script_file_too_large_to_read_is_refused_before_it_is_read(tmp_path):
    """A fuzzed 1 GB script (a long name over a deep expression, seed 93002) took 5 s to read from
    disk before its length was refused; a file of more bytes than the longest script read can
    hold (4 bytes a character) is refused by its size (a file of NUL bytes: read, its 40 M
    characters would be refused by their count, with another message)."""
    from sparsetir.script.source import MAX_SCRIPT_CHARS

    path = tmp_path / "huge.py"
    with path.open("wb") as f:
        f.truncate(4 * MAX_SCRIPT_CHARS + 1)  # a sparse file: no data written
    with pytest.raises(ScriptError) as info:
        sparsetir.parse_file(path)
    err = info.value
    assert err.message == (f"the script file is {4 * MAX_SCRIPT_CHARS + 1:,} bytes long; at most {MAX_SCRIPT_CHARS:,} "
                           "characters are read (split it into several files)")
    assert (err.filename, err.line, err.col) == (str(path), 1, 1)


def test_a_line_of_too_many_tokens_is_refused_at_its_line_before_it_is_parsed():
    """A fuzzed 1.8 MB line (a comparison chained 10,000 times over a long operand, seed 92001)
    took 14 s to refuse: Python's parser alone took 3 s over its 700,000 nodes."""
    import time

    from sparsetir.script.source import MAX_LINE_CHARS, MAX_LINE_TOKENS

    operand = "T.if_then_else(i < m, A[i, j], T.float32(0))"
    line = " < ".join([operand] * (MAX_LINE_CHARS // len(operand) + 10))
    text = _store(line)
    start = time.perf_counter()
    err = _error(text)
    assert time.perf_counter() - start < 1.0
    import re

    found = re.fullmatch(rf"this line holds about ([\d,]+) tokens; at most {MAX_LINE_TOKENS:,} are read on one "
                         r"line \(split the expression over several statements\)", err.message)
    terms = MAX_LINE_CHARS // len(operand) + 10
    assert found and int(found[1].replace(",", "")) == 19 * terms - 1 + 7  # 18 rough tokens a term, "<" between, 7 in "C[i, k] ="
    assert (err.line, err.col) == (L1 + 1, 1)


def test_a_long_string_on_one_line_is_read():
    # One token, however long: a fuzzed sblock_attr key of 100,000 "é" (seed 92002) printed as
    # 600,000 characters of escapes, which must parse back.
    from sparsetir.script.source import MAX_LINE_CHARS, Source

    text = 'x = {"' + "\\u00e9" * (MAX_LINE_CHARS // 6 + 1000) + '": True}\n'
    assert len(text) > MAX_LINE_CHARS
    tree = Source(text, "case.py").parse()
    assert len(tree.body[0].value.keys[0].value) == MAX_LINE_CHARS // 6 + 1000


def test_an_error_on_a_long_line_shows_a_window_around_the_caret():
    from sparsetir.errors import MAX_EXCERPT

    name = "x" * 100_000
    text = _store(f"A[i, j] + {name}")
    err = _error(text)
    assert err.message == f"undefined name '{name}'" and (err.line, err.col) == (L1 + 1, len(STORE) + 11)
    _, excerpt, caret = str(err).split("\n")[-3:]
    assert len(excerpt) <= MAX_EXCERPT + 8  # the indent and the "..." marks
    assert excerpt.startswith("  ") and excerpt.endswith("...") and "+ xxx" in excerpt
    assert caret.index("^") == excerpt.index("+ xxx") + 2 and set(caret.strip()) == {"^"}
    assert len(str(err)) < 2 * len(name)  # the message names it once; the excerpt adds little


# --- empty bodies ---------------------------------------------------------------------------

EMPTY = {
    "init-only": (ITERATION + "        with T.init():\n            C[i, k] = T.float32(0)\n",
                  "sparse iteration 's' has only a T.init() block and no update", L1, 5),
    "pass-only": (ITERATION + "        pass\n", "sparse iteration 's' has an empty body", L1, 5),
    "nested-empty": ('    with T.sp_iter([I], "S", "outer") as [i]:\n        with T.sp_iter([J], "R", "inner") as [j]:\n            pass\n',
                     "sparse iteration 'inner' has an empty body", L1 + 1, 9),
    "empty-init": (ITERATION + "        with T.init():\n            pass\n        C[i, k] = C[i, k] + A[i, j]\n",
                   "this T.init() block is empty; leave it out", L1 + 1, 9),
}


@pytest.mark.parametrize("body,message,line,col", list(EMPTY.values()), ids=list(EMPTY))
def test_empty_bodies_are_located_errors(body: str, message: str, line: int, col: int):
    _check(HEADER + body, VerifyError, message, line, col)


def test_an_iteration_of_only_evaluate_lowers():
    func = sparsetir.parse(HEADER + '    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        T.evaluate(0)\n')
    sparsetir.lower_sparse_iter(func)


# --- extents and literals -------------------------------------------------------------------

LITERALS = {
    "extent-beyond-int32": ("    L = T.dense_fixed(2147483648)\n",
                            "the length of axis 'L' is 2147483648, beyond the largest extent 2147483647", L1, 23),
    "extent-beyond-int32-int64-axis": ('    L = T.dense_fixed(2147483648, idtype="int64")\n',
                                       "beyond the largest extent", L1, 23),
    "negative-extent": ("    L = T.dense_fixed(-5)\n", "the length of axis 'L' is -5; an extent cannot be negative", L1, 23),
    "negative-nnz-cols": ("    L = T.sparse_fixed(I, (n, -2), indices)\n",
                          "the nnz_cols of axis 'L' is -2; an extent cannot be negative", L1, 31),
    "negative-nnz": ("    L = T.sparse_variable(I, (n, -3), (indptr, indices))\n",
                     "the nnz of axis 'L' is -3", L1, 34),
    "negative-length-under-parent": ("    L = T.dense_variable(I, (-1, nnz), indptr)\n",
                                     "the length of axis 'L' is -1", L1, 30),
    "negative-extra-storage": ('    E = T.match_sparse_buffer(e, (I,), "float32", extra_storage=-1)\n',
                               "the extra_storage of buffer 'E' is -1", L1, 65),
    "negative-coordinate": ('    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        C[i, -1] = 1.0\n',
                            "coordinate -1 of axis 'K' in 'C' is outside [0, 2147483647]", L1 + 1, 14),
    "coordinate-beyond-int32": ('    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        C[i, k] = C[2147483648, k]\n',
                                "coordinate 2147483648 of axis 'I' in 'C' is outside", L1 + 1, 21),
    "float-literal-overflow": ('    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        C[i, k] = T.float32(1e400)\n',
                               "this float literal is too large (it overflows to infinity)", L1 + 1, 29),
    "int-literal-too-large-for-a-float": ('    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        C[i, k] = T.float64(' + "9" * 400 + ")\n",
                                          "is too large for a float", L1 + 1, 29),
    "int-literal-mixed-with-a-float": ('    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        C[i, k] = 1.5 * ' + "9" * 400 + "\n",
                                       "is too large for a float", L1 + 1, 19),
    "huge-hex-literal": ('    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        C[i, 0x' + "f" * 5000 + "] = 1.0\n",
                         "literal <an integer of 20000 bits> does not fit in int64", L1 + 1, 14),
    "power-operator": ('    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        C[i, k] = T.float32(10**30)\n',
                       "'**' is not supported; use T.pow(a, b)", L1 + 1, 29),
    "typed-literal-beyond-int64": ("    T.evaluate(T.int64(99999999999999999999))\n",
                                   "literal 99999999999999999999 does not fit in int64", L1, 24),
    "float16-literal-beyond-range": ('    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        T.evaluate(T.float16(70000))\n',
                                     "literal 70000.0 does not fit in float16", L1 + 1, 30),
}


@pytest.mark.parametrize("body,message,line,col", list(LITERALS.values()), ids=list(LITERALS))
def test_extreme_literals_are_located_errors(body: str, message: str, line: int, col: int):
    header = HEADER.replace("nnz: T.int32)", "nnz: T.int32, e: T.handle)")
    _check(header + body, VerifyError if "'**'" not in message else ScriptSyntaxError, message, line, col)


def test_literal_extents_within_int32_build():
    text = HEADER + (
        "    L = T.dense_fixed(2147483647)\n    D = T.alloc_sparse_buffer((I,), \"float32\")\n"
        '    with T.sp_iter([I, K], "SS", "s") as [i, k]:\n        C[i, k] = C[i, 0]\n'
    )
    sparsetir.build(sparsetir.parse(text))


# --- the reference implementation's spellings -----------------------------------------------


def test_iteration_names_like_the_reference_lower_and_build():
    text = HEADER + (
        '    with T.sp_iter([I, J, K], "SRS", "rgcn-homo-forward") as [i, j, k]:\n'
        "        C[i, k] = C[i, k] + A[i, j]\n"
    )
    func = sparsetir.parse(text)
    assert func.body[0].name == "rgcn-homo-forward"
    assert '"rgcn-homo-forward"' in func.script()
    _roundtrip(func)
    stage2 = sparsetir.lower_sparse_iter(func)
    assert 'T.sblock("rgcn-homo-forward0")' in stage2.script()
    sparsetir.build(func)


@pytest.mark.parametrize("name,col", [('"a b"', 30), ('""', 30), ("'a\"b'", 30), ('"' + "x" * 300 + '"', 30), ('"-x\\n"', 30)])
def test_iteration_names_are_restricted_to_name_characters(name: str, col: int):
    text = HEADER + f'    with T.sp_iter([I], "S", {name}) as [i]:\n        C[i, 0] = 1.0\n'
    _check(text, VerifyError, "the name of a sparse iteration is letters, digits, '_', '-' and '.'", L1, col)


def test_math_dtype_keyword_is_the_operands_type():
    plain = sparsetir.parse(_store("T.exp(A[i, j]) + T.pow(A[i, j], 2.0)"))
    spelled = sparsetir.parse(_store('T.exp(A[i, j], dtype="float32") + T.pow(A[i, j], 2.0, dtype="float32")'))
    sparsetir.assert_structural_equal(plain, spelled)
    assert "dtype=" not in spelled.script()  # printed in the canonical spelling


DTYPE_KEYWORD_ERRORS = {
    "mismatch": ('T.exp(A[i, j], dtype="float64")',
                 'T.exp(..., dtype="float64") got a float32 operand', len(STORE) + 7),
    "unknown-dtype": ('T.exp(A[i, j], dtype="float31")', "unknown dtype 'float31'", len(STORE) + 22),
    "other-keyword": ("T.exp(A[i, j], precise=True)", "T.exp() got an unexpected keyword argument 'precise'", len(STORE) + 16),
    "twice": ('T.exp(A[i, j], dtype="float32", dtype="float32")', "T.exp() got multiple values for argument 'dtype'", len(STORE) + 33),
    "on-max": ('T.max(A[i, j], 1.0, dtype="float32")', "T.max() takes no keyword arguments", len(STORE) + 21),
    "kwargs": ("T.exp(A[i, j], **{})", "T.exp() does not accept **kwargs", len(STORE) + 16),
    "starred": ("T.exp(*A)", "T.exp() does not accept *args", len(STORE) + 1),
}


@pytest.mark.parametrize("expr,message,col", list(DTYPE_KEYWORD_ERRORS.values()), ids=list(DTYPE_KEYWORD_ERRORS))
def test_math_keyword_errors_are_located(expr: str, message: str, col: int):
    _check(_store(expr), VerifyError, message, L1 + 1, col)


def test_float16_math_without_tvm_code_computes_in_float32():
    text = HEADER.replace('(I, K), "float32"', '(I, K), "float16"') + ITERATION + STORE + "T.erf(T.float16(0.5)) + T.log1p(C[i, k])\n"
    func = sparsetir.parse(text)
    assert 'T.cast(T.erf(T.cast(T.float16(0.5), "float32")), "float16")' in func.script()
    _roundtrip(func)
    sparsetir.build(func)


def test_fmod_is_refused_where_it_is_written():
    _check(_store("T.fmod(A[i, j], 2.0)"), VerifyError, "T.fmod cannot be compiled for the CPU", L1 + 1, len(STORE) + 1)


# --- odd arguments: every construct refuses what it cannot take, at the argument -------------

ODD = {
    "string-extent": ('    L = T.dense_fixed("x")\n', "a string is not a value here", L1, 23),
    "none-extent": ("    L = T.dense_fixed(None)\n", "constant None is not supported", L1, 23),
    "complex-literal": ("    T.evaluate(1j)\n", "constant 1j is not supported", L1, 16),
    "ellipsis": ("    T.evaluate(...)\n", "constant Ellipsis is not supported", L1, 16),
    "bytes": ("    T.evaluate(b'x')\n", "constant b'x' is not supported", L1, 16),
    "list-as-value": ("    T.evaluate([1, 2])\n", "'List' syntax is not supported", L1, 16),
    "invert": ("    T.evaluate(~m)\n", "operator '~' is not supported", L1, 16),
    "matmul": ("    T.evaluate(m @ m)\n", "operator MatMult is not supported", L1, 16),
    "kinds-not-a-string": ("    with T.sp_iter([I], 3, \"s\") as [i]:\n        C[i, 0] = 1.0\n",
                           "the iterator kinds must be a string literal", L1, 25),
    "name-not-a-string": ("    with T.sp_iter([I], \"S\", 3) as [i]:\n        C[i, 0] = 1.0\n",
                          "the name of a sparse iteration must be a string literal", L1, 30),
    "idtype-int16": ('    L = T.dense_fixed(m, idtype="int16")\n', "unknown index dtype 'int16'", L1, 33),
    "sorted-not-bool": ("    L = T.sparse_fixed(I, (n, 2), indices, sorted=1)\n", "sorted must be True or False", L1, 51),
    "axis-as-extent": ("    L = T.dense_fixed(I)\n", "axis 'I' cannot be used as a value", L1, 23),
    "handle-as-extent": ("    L = T.dense_fixed(a)\n", "handle 'a' cannot be used as a value", L1, 23),
    "cast-to-nothing": ("    T.evaluate(T.cast(m, None))\n", "expected a dtype string", L1, 26),
    "min-value-of-bool": ('    T.evaluate(T.min_value("bool"))\n', "T.min_value needs a numeric dtype, got bool", L1, 28),
    "fuse-one-axis": ("    with T.sp_iter([T.fuse(I)], \"S\", \"s\") as [i]:\n        C[i, 0] = 1.0\n",
                      "T.fuse() takes two or more axes", L1, 21),
}


@pytest.mark.parametrize("body,message,line,col", list(ODD.values()), ids=list(ODD))
def test_odd_arguments_are_located_errors(body: str, message: str, line: int, col: int):
    err = _error(HEADER + body)
    assert message in err.message, err.message
    assert (err.line, err.col) == (line, col), str(err)


def test_casts_nest_at_most_max_cast_depth():
    """TVM's simplifier is exponential in nested casts: nine deep is refused at the ninth."""
    from sparsetir.script.expr_parser import MAX_CAST_DEPTH

    inner = "A[i, j]"
    for _ in range(MAX_CAST_DEPTH):
        inner = f"T.cast({inner}, \"float32\")"
    ok = sparsetir.parse(_store(inner))
    _roundtrip(ok)
    deeper = f"T.cast({inner}, \"float32\")"
    _check(_store(deeper), VerifyError, f"casts nest at most {MAX_CAST_DEPTH} deep", L1 + 1, len(STORE) + 1)


def test_nested_integer_abs_is_refused_before_it_explodes():
    """An integer T.abs uses its operand three times; nested, the tree grows 3x per level."""
    inner = "i"
    for _ in range(12):
        inner = f"T.abs({inner})"
    text = _store(f"T.cast({inner}, \"float32\")")
    err = _error(text)
    assert isinstance(err, VerifyError) and "T.abs expands to more than" in err.message
    assert err.line == L1 + 1

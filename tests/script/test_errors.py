"""Invalid scripts: each error names the problem, its line and column, and shows a caret.

The table holds (script, message substring, line, column). A script that does not start with
``from`` is a body snippet appended to ``HEADER``, so its first line is line ``L1`` of the
parsed text; snippets keep their 4-space indentation so the columns can be read off the page.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

import sparsetir
from sparsetir import ScriptError, ScriptSyntaxError, VerifyError
from sparsetir.script import tir as T

FILENAME = "case.py"
PACKAGE_DIR = str(Path(sparsetir.__file__).resolve().parent)

HEADER = """\
from sparsetir.script import tir as T


@T.prim_func
def f(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32, x: T.float32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices))
    K = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I,), "float32")
    C = T.match_sparse_buffer(c, (I, K), "float32")
"""
L1 = HEADER.count("\n") + 1  # the line of a snippet's first line

# Values a script may try to capture from its Python scope; only numbers, bools, dtypes pass.
CAPTURES = {"helper": print, "shape": [4, 4], "block": 4, "dt": "float32"}


def _script(text: str) -> str:
    text = text.lstrip("\n")
    return text if text.startswith("from ") else HEADER + text


def case(name: str, text: str, message: str, line: int, col: int):
    return pytest.param(_script(text), message, line, col, id=name)


CASES = [
    # --- unknown constructs and wrong arity ---------------------------------------------------
    case("unknown-statement-construct", """
    T.frobnicate(1)
""", "unknown construct 'T.frobnicate'", L1, 5),
    case("unknown-expression-construct", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.bar(x)
""", "unknown construct 'T.bar'", L1 + 1, 16),
    case("stage2-construct-as-stage1-statement", """
    T.reads(x)
""", "T.reads is not a construct of stage-I scripts", L1, 5),
    case("statement-construct-in-expression", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.func_attr(x)
""", "T.func_attr is not an expression construct", L1 + 1, 16),
    # --- misspelled constructs: the closest one is named --------------------------------------
    case("misspelled-axis", """
    L = T.sparse_variabel(I, (n, nnz), (indptr, indices))
""", "unknown construct 'T.sparse_variabel'; did you mean 'T.sparse_variable'?", L1, 9),
    case("misspelled-dense-axis", """
    L = T.dense_fixd(m)
""", "unknown construct 'T.dense_fixd'; did you mean 'T.dense_fixed'?", L1, 9),
    case("misspelled-buffer", """
    D = T.match_sparse_bufer(b, (I,), "float32")
""", "unknown construct 'T.match_sparse_bufer'; did you mean 'T.match_sparse_buffer'?", L1, 9),
    case("misspelled-iteration", """
    with T.iterationn([I], "S", "s") as [i]:
        B[i] = x
""", "unknown construct 'T.iterationn'; did you mean 'T.sp_iter'?", L1, 10),
    case("original-sparsetir-iter", """
    with T.iter([I], "S", "s") as [i]:
        B[i] = x
""", "unknown construct 'T.iter'; did you mean 'T.sp_iter'?", L1, 10),
    case("misspelled-in-expression", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.exq(x)
""", "unknown construct 'T.exq'; did you mean 'T.exp'?", L1 + 1, 16),
    case("construct-as-value", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.float32
""", "T.float32 is not a value", L1 + 1, 16),
    case("first-of-two-misspellings", """
    L = T.dense_fixd(m)
    with T.sp_itr([I], "S", "s") as [i]:
        B[i] = x
""", "unknown construct 'T.dense_fixd'", L1, 9),
    case("expression-construct-as-statement", """
    T.exp(x)
""", "T.exp is not a statement", L1, 5),
    case("arity-expression", """
    with T.sp_iter([I, J], "SR", "s") as [i, j]:
        B[i] = T.max(A[i, j])
""", "T.max() takes 2 arguments but 1 were given", L1 + 1, 16),
    case("arity-math", """
    T.evaluate(T.exp(x, x))
""", "T.exp() takes 1 argument but 2 were given", L1, 16),
    case("arity-header", """
    L = T.dense_fixed(m, "int32", 5)
""", "T.dense_fixed() takes 1 to 2 arguments but 3 were given", L1, 9),
    case("missing-argument", """
    L = T.sparse_variable(I, (n, nnz))
""", "T.sparse_variable() is missing argument 'data'", L1, 9),
    case("unexpected-keyword", """
    L = T.dense_fixed(m, length_hint=4)
""", "T.dense_fixed() got an unexpected keyword argument 'length_hint'", L1, 26),
    case("sp-iter-without-with", """
    T.sp_iter([I], "S", "s")
""", "T.sp_iter() is a scope: write 'with T.sp_iter(...):'", L1, 5),
    case("attribute-call-not-T", """
    os.system("ls")
""", "only T.<construct>(...) calls are supported", L1, 5),
    # --- names ---------------------------------------------------------------------------------
    case("undefined-axis", """
    with T.sp_iter([I, Q], "SR", "s") as [i, j]:
        B[i] = x
""", "undefined name 'Q'", L1, 24),
    case("undefined-parent-axis", """
    L = T.dense_variable(P, n, indptr)
""", "undefined name 'P'", L1, 26),
    case("undefined-name", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = zz
""", "undefined name 'zz'", L1 + 1, 16),
    case("duplicate-axis", """
    I = T.dense_fixed(m)
""", "'I' is already defined (line 6)", L1, 5),
    case("iterator-shadows-parameter", """
    with T.sp_iter([I], "S", "s") as [m]:
        B[m] = x
""", "'m' is already defined (line 5)", L1, 39),
    case("duplicate-parameter", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32, m: T.int32) -> None:
    T.evaluate(0)
""", "'m' is already defined (line 3)", 3, 19),
    case("handle-bound-twice", """
    D = T.match_sparse_buffer(b, (I,), "float32")
""", "handle 'b' is already bound to a sparse buffer (line 10)", L1, 31),
    case("duplicate-iteration-name", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = x
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = x
""", "two sparse iterations are named 's'", L1 + 2, 5),
    case("captured-function", """
    T.evaluate(helper)
""", "'helper' is a Python builtin_function_or_method from the enclosing scope; only ints, floats, bools and dtype strings can be captured", L1, 16),
    case("captured-list", """
    L = T.dense_fixed(shape)
""", "'shape' is a Python list from the enclosing scope", L1, 23),
    # --- axes, buffers and iterations --------------------------------------------------------
    case("index-count", """
    with T.sp_iter([I, J], "SR", "s") as [i, j]:
        B[i, j] = x
""", "sparse buffer 'B' has 1 axes (I) but is indexed with 2 indices", L1 + 1, 9),
    case("index-count-load", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = A[i]
""", "sparse buffer 'A' has 2 axes (I, J) but is indexed with 1 indices", L1 + 1, 16),
    case("bad-kind-letter", """
    with T.sp_iter([I, J], "SX", "s") as [i, j]:
        B[i] = x
""", "iterator kind 'X' is not 'S' (spatial) or 'R' (reduction)", L1, 28),
    case("kinds-length", """
    with T.sp_iter([I], "SS", "s") as [i]:
        B[i] = x
""", "kinds string 'SS' has 2 letters but the iteration has 1 iterator", L1, 25),
    case("kinds-not-literal", """
    with T.sp_iter([I], m, "s") as [i]:
        B[i] = x
""", "the iterator kinds must be a string literal", L1, 25),
    case("iterator-count", """
    with T.sp_iter([I], "S", "s") as [i, j]:
        B[i] = x
""", "T.sp_iter binds 1 iterators but 2 names are given", L1, 38),
    case("iteration-name-with-spaces", """
    with T.sp_iter([I], "S", "not a name") as [i]:
        B[i] = x
""", "the name of a sparse iteration is letters, digits, '_', '-' and '.'", L1, 30),
    case("parent-not-iterated", """
    with T.sp_iter([J], "S", "s") as [j]:
        T.evaluate(0)
""", "axis 'J' depends on 'I', which must be iterated before it", L1, 5),
    case("parent-iterated-after-child", """
    with T.sp_iter([J, I], "RS", "s") as [j, i]:
        B[i] = x
""", "axis 'J' depends on 'I', which must be iterated before it", L1, 5),
    case("buffer-axis-order", """
    D = T.alloc_sparse_buffer((J, I), "float32")
""", "axis 'J' of buffer 'D' depends on 'I', which must come before it in the buffer's axes", L1, 9),
    case("attach-root-axis", """
    with T.sp_iter([I, T.attach(K, I)], "SS", "s") as [i, k]:
        B[i] = x
""", "axis 'K' has no parent, so it cannot be attached to another", L1, 24),
    case("axis-in-body", """
    with T.sp_iter([I], "S", "s") as [i]:
        L = T.dense_fixed(m)
""", "T.dense_fixed declares a function-level name and must be written before the sparse iterations", L1 + 1, 9),
    case("unknown-dtype-buffer", """
    D = T.alloc_sparse_buffer((I,), "float33")
""", "unknown dtype 'float33'", L1, 37),
    case("unknown-dtype-cast", """
    T.evaluate(T.cast(m, "float7"))
""", "unknown dtype 'float7'", L1, 26),
    case("unknown-index-dtype", """
    L = T.dense_fixed(m, idtype="int16")
""", "unknown index dtype 'int16'", L1, 33),
    case("unknown-parameter-type", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32, q: T.exp) -> None:
    T.evaluate(0)
""", "parameter 'q' has an unknown type", 3, 22),
    case("misspelled-parameter-type", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32, q: T.float8) -> None:
    T.evaluate(0)
""", "unknown construct 'T.float8'; did you mean 'T.float64'?", 3, 22),
    case("parameter-without-type", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32, q) -> None:
    T.evaluate(0)
""", "parameter 'q' needs a type", 3, 19),
    # --- init and stores ---------------------------------------------------------------------
    case("init-outside-iteration", """
    with T.init():
        B[0] = x
""", "T.init() is only allowed directly inside a sparse iteration", L1, 5),
    case("init-without-reduction", """
    with T.sp_iter([I], "S", "s") as [i]:
        with T.init():
            B[i] = x
        B[i] = x
""", "T.init() in sparse iteration 's', which has no reduction ('R') iterator", L1, 5),
    case("init-twice", """
    with T.sp_iter([I, J], "SR", "s") as [i, j]:
        with T.init():
            B[i] = x
        with T.init():
            B[i] = x
""", "a sparse iteration has at most one T.init() block", L1 + 3, 9),
    case("store-outside-iteration", """
    B[0] = x
""", "a buffer store must be inside a sparse iteration", L1, 5),
    case("reduction-indexes-output", """
    with T.sp_iter([I, J], "SR", "s") as [i, j]:
        A[i, j] = x
""", "the store into 'A' is indexed by reduction iterator 'j'", L1 + 1, 9),
    case("store-wrong-dtype", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = m
""", "storing a int32 value into 'B' of dtype float32", L1 + 1, 16),
    case("store-into-scalar", """
    with T.sp_iter([I], "S", "s") as [i]:
        m[i] = x
""", "'m' is a value, not a sparse buffer, and cannot be indexed", L1 + 1, 9),
    case("assign-name-in-iteration", """
    with T.sp_iter([I], "S", "s") as [i]:
        t = x
""", "assigning to a name ('t') is not supported inside a sparse iteration", L1 + 1, 9),
    case("assign-name-at-function-level", """
    t = 3
""", "assigning to a name ('t') is not supported", L1, 5),
    case("sp-iter-attr-not-first", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = x
        T.sp_iter_attr({"preprocess": True})
""", "T.sp_iter_attr must be the first statement of a T.sp_iter body", L1 + 2, 9),
    case("func-attr-twice", """
    T.func_attr({"a": 1})
    T.func_attr({"a": 1})
""", "T.func_attr may appear only once", L1 + 1, 5),
    case("func-attr-duplicate-key", """
    T.func_attr({"a": 1, "b": 2, "a": 3})
""", "attribute key 'a' is given twice (first on line", L1, 34),
    case("func-attr-duplicate-level", """
    T.func_attr({"sparse_tir_level": 2,
                 "sparse_tir_level": True})
""", "attribute key 'sparse_tir_level' is given twice", L1 + 1, 18),
    case("sp-iter-attr-duplicate-nested-key", """
    with T.sp_iter([I], "S", "s") as [i]:
        T.sp_iter_attr({"hint": {"x": 1, "x": 2}})
        B[i] = x
""", "attribute key 'x' is given twice", L1 + 1, 42),
    case("func-attr-non-literal", """
    T.func_attr({"a": m})
""", "attribute values must be literals", L1, 23),
    case("string-lone-surrogate", """
    T.func_attr({"k": "\\ud800"})
""", "this string holds a lone surrogate ('\\ud800')", L1, 23),
    # --- constants a build would refuse -------------------------------------------------------
    case("abs-of-int-min", """
    T.evaluate(T.abs(T.min_value("int32")))
""", "T.abs(-2147483648) does not fit in int32", L1, 16),
    case("abs-of-int-min-literal", """
    T.evaluate(T.abs(-2147483648))
""", "T.abs(-2147483648) does not fit in int32", L1, 16),
    case("abs-of-int8-min", """
    T.evaluate(m + T.int32(T.abs(T.int8(-128))))
""", "T.abs(-128) does not fit in int8", L1, 28),
    case("floordiv-by-zero", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.float32(i // 0)
""", "integer division by zero: the right operand of '//' is always 0", L1 + 1, 31),
    case("mod-by-folded-zero", """
    T.evaluate(m % (2 * 3 - 6))
""", "integer division by zero: the right operand of '%' is always 0", L1, 21),
    case("floordiv-by-expression-always-zero", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.float32(i // (i - i))
""", "integer division by zero: the right operand of '//' is always 0", L1 + 1, 32),
    case("unsigned-constant-underflow", """
    T.evaluate(T.uint32(0) - T.uint32(1))
""", "0 - 1 is -1, which does not fit in uint32 (0 to 4294967295)", L1, 16),
    case("signed-constant-overflow", """
    T.evaluate(m + (2147483647 + 5))
""", "2147483647 + 5 is 2147483652, which does not fit in int32", L1, 21),
    case("negated-unsigned", """
    T.evaluate(T.cast(-T.uint8(3), "int32"))
""", "unary '-' is not defined on an unsigned operand (uint8)", L1, 23),
    case("bool-compared", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.float32((i < 2) == (i < 3))
""", "comparing bool values is not supported", L1 + 1, 26),
    case("cast-nan-to-int", """
    T.evaluate(T.cast(T.float32("nan"), "int32"))
""", "cannot cast nan (float32) to the integer type int32", L1, 16),
    case("cast-inf-to-int", """
    T.evaluate(T.int64(T.float64("-inf")))
""", "cannot cast -inf (float64) to the integer type int64", L1, 16),
    case("cast-float-out-of-range", """
    T.evaluate(T.cast(T.float32(3e9), "int32"))
""", "the constant 3000000000.0 (float32) does not fit in int32", L1, 16),
    case("cast-negative-float-to-unsigned", """
    T.evaluate(T.int32(T.uint8(T.float32(-1.5))))
""", "the constant -1.5 (float32) does not fit in uint8", L1, 24),
    case("cast-int-constant-narrowing", """
    T.evaluate(T.int32(T.max_value("int64")))
""", "the constant 9223372036854775807 (int64) does not fit in int32", L1, 16),
    # --- expression types --------------------------------------------------------------------
    case("mix-int-float", """
    with T.sp_iter([I, J], "SR", "s") as [i, j]:
        B[i] = A[i, j] + m
""", "operands of '+' have different types float32 and int32", L1 + 1, 16),
    case("int-true-division", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.float32(m / 2)
""", "'/' divides floats only; use '//' for integer (floor) division", L1 + 1, 26),
    case("float-floor-division", """
    T.evaluate(x // x)
""", "'//' needs integer operands, got float32", L1, 16),
    case("handle-as-value", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = T.float32(a)
""", "handle 'a' cannot be used as a value", L1 + 1, 26),
    case("axis-as-value", """
    T.evaluate(I + 1)
""", "axis 'I' cannot be used as a value", L1, 16),
    case("buffer-as-value", """
    T.evaluate(B)
""", "sparse buffer 'B' cannot be used as a value", L1, 16),
    case("string-in-expression", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[i] = "hello"
""", "a string is not a value here", L1 + 1, 16),
    case("math-on-int", """
    T.evaluate(T.exp(m))
""", "T.exp needs a float operand, got int32", L1, 22),
    case("condition-not-bool", """
    T.evaluate(T.if_then_else(m, x, x))
""", "the condition of T.if_then_else must be bool, got int32", L1, 31),
    case("not-on-float", """
    T.evaluate(not x)
""", "'not' needs a bool operand, got float32", L1, 16),
    case("literal-overflow", """
    T.evaluate(T.int8(300))
""", "literal 300 does not fit in int8", L1, 23),
    case("float-literal-as-index", """
    with T.sp_iter([I], "S", "s") as [i]:
        B[1.5] = x
""", "index 0 of 'B' must be an integer, got 1.5", L1 + 1, 11),
    # Each of these once escaped as a TVM ValueError/InternalError or an IndexError.
    case("float32-literal-range", """
    T.evaluate(T.float32(1e39))
""", "literal 1e+39 does not fit in float32", L1, 26),
    case("float16-literal-range-in-binop", """
    T.evaluate(T.float16(1) + 1e10)
""", "literal 10000000000.0 does not fit in float16", L1, 16),
    case("int-literal-beyond-int64", """
    T.evaluate(100000000000000000000000000000)
""", "literal 100000000000000000000000000000 does not fit in int64", L1, 16),
    case("int-literals-beyond-int64-in-max", """
    T.evaluate(T.max(1, 99999999999999999999999))
""", "literal 99999999999999999999999 does not fit in int64", L1, 16),
    case("pow-on-ints", """
    T.evaluate(T.pow(m, m))
""", "T.pow needs float operands, got int32", L1, 16),
    case("select-condition-not-bool", """
    T.evaluate(T.select(m, x, x))
""", "the condition of T.select must be bool, got int32", L1, 25),
    case("min-value-of-bool", """
    T.evaluate(T.min_value("bool"))
""", "T.min_value needs a numeric dtype, got bool", L1, 28),
    case("abs-of-bool", """
    T.evaluate(T.abs(True))
""", "T.abs needs a numeric operand, got bool", L1, 22),
    case("negated-bool", """
    T.evaluate(-(m < 1))
""", "unary '-' is not defined on a bool operand", L1, 16),
    case("evaluate-keyword-typo", """
    T.evaluate(val=m)
""", "T.evaluate() got an unexpected keyword argument 'val'", L1, 16),
    # --- Python syntax the language does not have -------------------------------------------
    case("for-loop", """
    for q in range(3):
        pass
""", "a for loop (iterate with T.sp_iter) is not supported in a script", L1, 5),
    case("while-loop", """
    while True:
        pass
""", "a while loop is not supported in a script", L1, 5),
    case("if-statement", """
    if m > 0:
        pass
""", "an if statement (use T.if_then_else in an expression) is not supported", L1, 5),
    case("try-statement", """
    try:
        pass
    except ValueError:
        pass
""", "try is not supported in a script", L1, 5),
    case("return-statement", """
    return 1
""", "return is not supported in a script", L1, 5),
    case("nested-def", """
    def g():
        pass
""", "a nested function definition is not supported", L1, 5),
    case("import-in-function", """
    import os
""", "an import inside a function is not supported", L1, 5),
    case("conditional-expression", """
    T.evaluate(m if m else 1)
""", "a conditional expression (use T.if_then_else(cond, a, b)) is not supported", L1, 16),
    case("lambda", """
    T.evaluate(lambda: 1)
""", "a lambda is not supported in a script expression", L1, 16),
    case("list-comprehension", """
    T.evaluate([q for q in range(3)])
""", "a list comprehension is not supported in a script expression", L1, 16),
    case("power-operator", """
    T.evaluate(m ** 2)
""", "'**' is not supported; use T.pow(a, b)", L1, 16),
    case("eval-call", """
    T.evaluate(eval("1"))
""", "'eval' is not allowed: scripts are never executed", L1, 16),
    case("dunder-import", """
    T.evaluate(__import__("os").getpid())
""", "'__import__' is not allowed: scripts are never executed", L1, 16),
    case("python-syntax-error", """
    with T.sp_iter([I], "S", "s") as [i]
        B[i] = x
""", "invalid Python syntax: expected ':'", L1, 41),
    # --- signature and module level ------------------------------------------------------------
    case("other-decorator", """
from sparsetir.script import tir as T
@T.prim_func
@staticmethod
def f(m: T.int32) -> None:
    T.evaluate(0)
""", "only the @T.prim_func decorator is supported", 3, 2),
    case("decorator-with-arguments", """
from sparsetir.script import tir as T
@T.prim_func(check=False)
def f(m: T.int32) -> None:
    T.evaluate(0)
""", "only the @T.prim_func decorator is supported", 2, 2),
    case("star-args", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32, *args) -> None:
    T.evaluate(0)
""", "*args parameters are not supported", 3, 20),
    case("star-star-kwargs", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32, **kw) -> None:
    T.evaluate(0)
""", "**kwargs parameters are not supported", 3, 21),
    case("default-argument", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32 = 3) -> None:
    T.evaluate(0)
""", "parameters cannot have default values", 3, 20),
    case("return-annotation", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32) -> int:
    T.evaluate(0)
""", "a script function returns nothing", 3, 22),
    case("undecorated-function", """
from sparsetir.script import tir as T
def f(m: T.int32) -> None:
    T.evaluate(0)
""", "function 'f' is not decorated with @T.prim_func", 2, 1),
    case("module-level-statement", """
from sparsetir.script import tir as T
block = 4
""", "a script file holds imports, @T.prim_func functions, @T.macro helpers and @I.ir_module classes only", 2, 1),
    case("stage-level-given-twice", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32) -> None:
    T.func_attr({"sparse_tir_level": True, "sparse_tir_level": 1})
""", "attribute key 'sparse_tir_level' is given twice", 4, 44),
    case("stage-level", """
from sparsetir.script import tir as T
@T.prim_func
def f(m: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 3})
""", '"sparse_tir_level" is 2 (stage I) or 1 (stage II)', 4, 38),
]


def _parse(script: str) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        sparsetir.parse(script, FILENAME, captures=CAPTURES)
    return info.value


@pytest.mark.parametrize("script,message,line,col", CASES)
def test_invalid_script(script: str, message: str, line: int, col: int):
    err = _parse(script)
    assert message in err.message
    assert (err.filename, err.line, err.col) == (FILENAME, line, col), str(err)
    rendered = str(err).splitlines()
    assert rendered[0] == f"{FILENAME}:{line}:{col}: error: {err.message}"
    assert rendered[1] == "  " + script.splitlines()[line - 1]
    assert rendered[2].startswith("  " + " " * (col - 1) + "^")
    assert set(rendered[2].strip()) == {"^"}
    assert "sparsetir/" not in str(err)
    assert PACKAGE_DIR not in str(err)


def test_there_are_many_distinct_cases():
    assert len(CASES) >= 25
    assert len({c.values[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    "snippet,kind",
    [
        ("    for q in range(3):\n        pass\n", ScriptSyntaxError),
        ("    T.evaluate(eval('1'))\n", ScriptSyntaxError),
        ("    with T.sp_iter([I], 'S', 's') as [i]\n        pass\n", ScriptSyntaxError),
        ("    T.evaluate(zz)\n", VerifyError),
        ("    with T.sp_iter([J], 'S', 's') as [j]:\n        pass\n", VerifyError),
    ],
)
def test_error_classes(snippet: str, kind: type):
    err = _parse(HEADER + snippet)
    assert type(err) is kind


def test_python_syntax_error_keeps_its_cause():
    err = _parse(HEADER + "    T.evaluate(m +)\n")
    assert isinstance(err.__cause__, SyntaxError)
    assert (err.line, err.col) == (L1, 19)  # the ")" Python stopped at


def test_parse_file_names_the_file(tmp_path: Path):
    path = tmp_path / "kernel.py"
    path.write_text(HEADER + "    T.evaluate(zz)\n")
    with pytest.raises(VerifyError) as info:
        sparsetir.parse_file(path)
    assert info.value.filename == str(path)
    assert str(info.value).startswith(f"{path}:{L1}:16: error: undefined name 'zz'")


# --- nothing in a script is executed ----------------------------------------------------------

# Every place an expression can hide: if any of them were evaluated, the marker file would exist.
EVAL_SITES = [
    HEADER + "    with T.sp_iter([I], 'S', 's') as [i]:\n        B[i] = {payload}\n",
    HEADER + "    T.evaluate({payload})\n",
    HEADER + "    L = T.dense_fixed({payload})\n",
    HEADER + "    D = T.alloc_sparse_buffer((I,), {payload})\n",
    HEADER + "    T.func_attr({{'a': {payload}}})\n",
    HEADER + "    with T.sp_iter([I], {payload}, 's') as [i]:\n        pass\n",
    HEADER + "    with T.sp_iter([{payload}], 'S', 's') as [i]:\n        pass\n",
    HEADER + "    {payload}\n",
    "from sparsetir.script import tir as T\n{payload}\n",
    "from sparsetir.script import tir as T\n@T.prim_func\ndef f(m: T.int32 = {payload}) -> None:\n    T.evaluate(0)\n",
    "from sparsetir.script import tir as T\n@T.prim_func\ndef f(m: {payload}) -> None:\n    T.evaluate(0)\n",
    "from sparsetir.script import tir as T\n@T.prim_func\ndef f(m: T.int32) -> {payload}:\n    T.evaluate(0)\n",
    "from sparsetir.script import tir as T\n@{payload}\ndef f(m: T.int32) -> None:\n    T.evaluate(0)\n",
    "from sparsetir.script import tir as T\n@T.prim_func\n@{payload}\ndef f(m: T.int32) -> None:\n    T.evaluate(0)\n",
]
PAYLOADS = [
    '__import__("os").system("touch {marker}")',
    'open("{marker}", "w").write("x")',
    'eval(\'open("{marker}", "w")\')',
    'exec(\'open("{marker}", "w")\')',
    '(lambda: open("{marker}", "w"))()',
    '[open("{marker}", "w") for _ in range(1)]',
]


@pytest.mark.parametrize("site", EVAL_SITES)
def test_eval_attempts_are_rejected_and_not_run(site: str, tmp_path: Path):
    marker = tmp_path / "pwned"
    for payload in PAYLOADS:
        script = site.format(payload=payload.format(marker=marker))
        err = _parse(script)
        assert not marker.exists(), f"the script ran: {script}"
        assert err.line is not None and err.col is not None
        assert "sparsetir/" not in str(err)


def test_eval_payloads_would_create_the_marker(tmp_path: Path):
    """The control: each payload, when Python runs it, does create the file."""
    for k, payload in enumerate(PAYLOADS):
        marker = tmp_path / f"ran{k}"
        code = payload.format(marker=marker)
        eval(compile(code, "<payload>", "eval"), {})  # noqa: S307 - the point of the control
        assert marker.exists(), code


# --- errors in decorated Python functions point into this file ---------------------------------


def _locate(tag: str, text: str) -> tuple[int, int]:
    """(line, col) of ``text`` on the line of this file that ends with the comment ``# <-tag``."""
    lines = Path(__file__).read_text().splitlines()
    hits = [k for k, line in enumerate(lines) if line.rstrip().endswith(f"# <-{tag}")]
    assert len(hits) == 1, tag
    return hits[0] + 1, lines[hits[0]].index(text) + 1


def _check_decorated(err: ScriptError, tag: str, text: str) -> None:
    line, col = _locate(tag, text)
    assert err.filename == __file__
    assert (err.line, err.col) == (line, col), str(err)
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"{__file__}:{line}:{col}: error: ")
    assert rendered[1].strip() == Path(__file__).read_text().splitlines()[line - 1].strip()
    assert rendered[2].index("^") == rendered[1].index(text)
    assert PACKAGE_DIR not in str(err)


def test_decorated_function_type_error():
    def make(block_size: int):
        @T.prim_func
        def func(a: T.handle, m: T.int32) -> None:
            I = T.dense_fixed(m)
            J = T.dense_fixed(block_size)
            A = T.match_sparse_buffer(a, (I, J), "float32")
            with T.sp_iter([I, J], "SS", "s") as [i, j]:
                A[i, j] = T.float32(m / block_size)  # <-int-div

        return func

    with pytest.raises(VerifyError) as info:
        make(4)
    assert "'/' divides floats only" in info.value.message
    _check_decorated(info.value, "int-div", "m / block_size")


def test_decorated_function_disallowed_capture():
    sizes = [4, 8]
    with pytest.raises(VerifyError) as info:

        @T.prim_func
        def func(m: T.int32) -> None:
            I = T.dense_fixed(sizes)  # <-capture

    assert "'sizes' is a Python list from the enclosing scope" in info.value.message
    _check_decorated(info.value, "capture", "sizes)")


def test_decorated_function_unsupported_statement():
    with pytest.raises(ScriptSyntaxError) as info:

        @T.prim_func
        def func(m: T.int32) -> None:
            while m > 0:  # <-while
                pass

    assert "a while loop is not supported" in info.value.message
    _check_decorated(info.value, "while", "while")


def test_decorated_function_verifier_error():
    """Errors found by the verifier (from IR spans) also point at the script line."""
    with pytest.raises(VerifyError) as info:

        @T.prim_func
        def func(a: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, nnz: T.int32) -> None:
            I = T.dense_fixed(m)
            J = T.sparse_variable(I, (m, nnz), (indptr, indices))
            A = T.match_sparse_buffer(a, (I, J), "float32")
            with T.sp_iter([J, I], "SS", "s") as [j, i]:  # <-order
                A[i, j] = T.float32(0)

    assert "axis 'J' depends on 'I', which must be iterated before it" in info.value.message
    _check_decorated(info.value, "order", "with")


def test_decorated_error_has_no_internal_frames_in_message():
    with pytest.raises(ScriptError) as info:

        @T.prim_func
        def func(m: T.int32) -> None:
            T.evaluate(zz)  # noqa: F821  # <-undefined

    _check_decorated(info.value, "undefined", "zz")
    assert "sparsetir/" not in info.value.message
    assert inspect.getsourcefile(test_decorated_error_has_no_internal_frames_in_message) == __file__
    assert os.path.basename(__file__) in str(info.value)


def test_column_counts_characters_not_utf8_bytes():
    """Python's ast gives byte offsets; with non-ASCII text earlier on the line the column and
    the caret still point at the offending character."""
    line = '    with T.sp_iter([I], "S", "f") as [i]:\n        B[i] = T.float32(len("ééééé"))\n'
    with pytest.raises(ScriptError) as info:
        sparsetir.parse(HEADER + line, FILENAME)
    err = info.value
    text = (HEADER + line).split("\n")[err.line - 1]
    assert err.line == L1 + 1 and "ééééé" in text
    assert err.col == text.index("len(") + 1, str(err)


@pytest.mark.parametrize("separator", ["\u2028", "\x0c", "\x1c", "\x85"])
def test_excerpt_is_the_line_python_counts(separator):
    """A character that str.splitlines() breaks at but Python's tokenizer does not (U+2028, form
    feed, ...) inside a comment leaves the error's excerpt on the reported line."""
    body = f'    # a comment {separator} holding a line separator\n    with T.sp_iter([I], "X", "f") as [i]:\n        B[i] = x\n'
    with pytest.raises(ScriptError) as info:
        sparsetir.parse(HEADER + body, FILENAME)
    err = info.value
    assert err.line == L1 + 1
    assert '"X"' in str(err).splitlines()[1] and err.col == str(err).splitlines()[1].index('"X"') - 1


@pytest.mark.parametrize("attr,message", [
    ('"global_symbol": "a b c"', "global_symbol names the compiled function and must be a Python identifier, got 'a b c'"),
    ('"global_symbol": "class"', "must be a Python identifier, got 'class'"),
    ('"sparsetir.spans": 5', '"sparsetir.spans" maps block names to lists of "file:line" strings, got 5'),
    ('"sparsetir.buffers": []', '"sparsetir.buffers" is not an attribute a script sets'),
])
def test_func_attr_that_would_break_printing_or_building(attr, message):
    """A global_symbol that is no identifier printed a stage II that did not parse back; malformed
    sparsetir.* bookkeeping crashed passes with a KeyError or TypeError. Both are refused at the key."""
    body = f'    T.func_attr({{{attr}}})\n    with T.sp_iter([I], "S", "f") as [i]:\n        B[i] = x\n'
    with pytest.raises(VerifyError) as info:
        sparsetir.parse(HEADER + body, FILENAME)
    err = info.value
    assert message in err.message
    assert (err.line, err.col) == (L1, body.index(attr) + 1), str(err)


@pytest.mark.parametrize("script,at", [
    ('from sparsetir.script import tir as T\n\n\n@T.prim_func\ndef f(a: T.handle, T: T.int32) -> None:\n'
     '    I = T.dense_fixed(4)\n', "T: T.int32"),
    ('from sparsetir.script import tir as T\n\n\n@T.prim_func\ndef f(a: T.handle, m: T.int32) -> None:\n'
     '    T = T.dense_fixed(m)\n', "T = "),
])
def test_module_alias_is_not_a_name(script, at):
    """A parameter or axis called T printed as T_1 (the printers write the module as T), so the
    kernel's parameter names changed on a round trip; it is refused where it is defined."""
    with pytest.raises(VerifyError) as info:
        sparsetir.parse(script, FILENAME)
    err = info.value
    assert "'T' names the sparsetir.script module in scripts" in err.message
    line = next(k for k, text in enumerate(script.split("\n"), 1) if at in text)
    assert (err.line, err.col) == (line, script.split("\n")[line - 1].index(at) + 1), str(err)

"""Seed 003's class form and the passes over an IRModule (issue 21 item 9, parts a and c).

``@I.ir_module class M:`` gathers script functions in a ``tvm.IRModule``; it prints back to the
same class and parses to an equal module; each function builds from the module and computes what
NumPy does; the lowering passes run as ``tvm.transform`` passes over the module.
"""

from __future__ import annotations

import numpy as np
import pytest

import sparsetir
from sparsetir import ScriptSyntaxError, VerifyError
from sparsetir._tvm import tirx, tvm
from sparsetir.ir.module import STAGE1_ATTR, function, functions, make_module, to_prim_func
from sparsetir.script import ir as I
from sparsetir.script import print_module
from sparsetir.script import tir as T
from sparsetir.transforms import FormatDecompose, LowerSparseBuffer, LowerSparseIter, pipeline


@I.ir_module
class Module:
    @T.prim_func
    def csrmv(a: T.handle, x: T.handle, y: T.handle, indptr: T.handle, indices: T.handle,
              m: T.int32, n: T.int32, nnz: T.int32) -> None:
        I = T.dense_fixed(m)
        J = T.sparse_variable(I, (n, nnz), (indptr, indices))
        J_dense = T.dense_fixed(n)
        A = T.match_sparse_buffer(a, (I, J), "float32")
        X = T.match_sparse_buffer(x, (J_dense,), "float32")
        Y = T.match_sparse_buffer(y, (I,), "float32")
        with T.sp_iter([I, J], "SR", "csrmv") as [i, j]:
            with T.init():
                Y[i] = T.float32(0)
            Y[i] = Y[i] + A[i, j] * X[j]

    @T.prim_func
    def scale(a: T.handle, m: T.int32) -> None:
        I = T.dense_fixed(m)
        A = T.match_sparse_buffer(a, (I,), "float32")
        with T.sp_iter([I], "S", "scale") as [i]:
            A[i] = A[i] * T.float32(3)


def _csr(rng, m=7, n=9):
    dense = rng.uniform(-1, 1, (m, n)).astype(np.float32) * (rng.random((m, n)) < 0.4)
    rows, cols = np.nonzero(dense)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))]).astype(np.int32)
    return dense, dict(a=dense[rows, cols].copy(), indptr=indptr, indices=cols.astype(np.int32),
                       m=m, n=n, nnz=len(cols))


def _check_csrmv(kernel):
    dense, args = _csr(np.random.default_rng(0))
    x = np.random.default_rng(1).uniform(-1, 1, args["n"]).astype(np.float32)
    y = np.full(args["m"], np.nan, np.float32)
    kernel(x=x, y=y, **args)
    np.testing.assert_allclose(y, dense @ x, rtol=1e-5, atol=1e-5)


def _check_scale(kernel):
    a = np.arange(5, dtype=np.float32)
    kernel(a=a, m=5)
    np.testing.assert_allclose(a, np.arange(5) * 3.0)


def _assert_same_functions(a, b):
    """Equal modules, function by function at their own stage (a stage-II PrimFunc's metadata
    attributes compare only through its ``Stage2Function``)."""
    assert sorted(functions(a)) == sorted(functions(b))
    for name in functions(a):
        sparsetir.assert_structural_equal(function(a, name), function(b, name))


def test_the_class_form_is_an_irmodule_of_its_functions():
    assert isinstance(Module, tvm.IRModule)
    assert sorted(functions(Module)) == ["csrmv", "scale"]
    carrier = Module["csrmv"]
    assert isinstance(carrier, tirx.PrimFunc) and STAGE1_ATTR in carrier.attrs
    assert isinstance(function(Module, "csrmv"), sparsetir.SparseFunction)
    assert [p.name for p in carrier.params] == [p.name for p in function(Module, "csrmv").params]


def test_the_class_form_prints_and_parses_back_equal():
    text = print_module(Module)
    assert text.startswith("from sparsetir.script import ir as I\nfrom sparsetir.script import tir as T\n")
    assert "@I.ir_module\nclass Module:\n    @T.prim_func\n    def csrmv(" in text
    again = sparsetir.parse(text)
    assert isinstance(again, tvm.IRModule)
    sparsetir.assert_structural_equal(again, Module)
    assert print_module(again) == text


def test_each_function_of_the_module_builds_and_matches_numpy():
    _check_csrmv(sparsetir.build(Module["csrmv"]))
    _check_scale(sparsetir.build(Module["scale"]))


def test_a_stage1_function_goes_into_a_tvm_irmodule():
    f = function(Module, "scale")
    mod = tvm.IRModule({"scale": to_prim_func(f)})  # what TVM itself accepts: a PrimFunc carrier
    assert function(mod, "scale").same_as(f)
    assert pipeline.stage_of(mod["scale"]) == 1
    sparsetir.assert_structural_equal(mod, make_module({"scale": f}))
    with pytest.raises(TypeError):
        tvm.IRModule({"scale": f})  # TVM 0.27 refuses a function that is no BaseFunc


def test_lowering_passes_are_tvm_module_passes():
    mod2 = LowerSparseIter()(Module)
    for name in ("csrmv", "scale"):
        assert pipeline.stage_of(mod2[name]) == 2
        sparsetir.assert_structural_equal(function(mod2, name), sparsetir.lower_sparse_iter(function(Module, name)))
    assert print_module(sparsetir.parse(print_module(mod2))) == print_module(mod2)  # stage II round trips too
    _check_csrmv(sparsetir.build(mod2["csrmv"]))
    mod3 = LowerSparseBuffer()(mod2)
    assert all(pipeline.stage_of(mod3[name]) == 3 for name in ("csrmv", "scale"))
    sparsetir.assert_structural_equal(mod3["scale"], pipeline.lower(function(Module, "scale")))
    seq = tvm.transform.Sequential([LowerSparseIter(), LowerSparseBuffer()])(Module)
    sparsetir.assert_structural_equal(seq, mod3)
    # the public lowering calls take a module too
    _assert_same_functions(sparsetir.lower_sparse_iter(Module), mod2)
    sparsetir.assert_structural_equal(sparsetir.lower_sparse_buffer(mod2), mod3)


def test_a_pass_leaves_functions_of_other_stages_alone():
    mixed = make_module({"csrmv": function(Module, "csrmv"),
                         "scale": sparsetir.lower_sparse_iter(function(Module, "scale"))})
    lowered = LowerSparseIter()(mixed)
    assert lowered["scale"].same_as(mixed["scale"])
    assert pipeline.stage_of(lowered["csrmv"]) == 2


def test_format_decompose_over_a_module_as_the_seed_spells_it():
    """``mod = format_decompose(mod, rewrites)`` (seed 000): each stage-I function decomposed."""
    from sparsetir.formats.rules import bsr_rule

    csrmv = function(Module, "csrmv")
    stage2 = sparsetir.lower_sparse_iter(function(Module, "scale"))  # other stages pass through
    before = make_module({"csrmv": csrmv, "scale": stage2})
    mod = sparsetir.format_decompose(before, [bsr_rule(2)])
    expected = make_module({"csrmv": sparsetir.format_decompose(csrmv, [bsr_rule(2)]), "scale": stage2})
    _assert_same_functions(mod, expected)
    _assert_same_functions(FormatDecompose([bsr_rule(2)])(before), expected)
    _assert_same_functions(sparsetir.parse(print_module(mod)), mod)
    with pytest.raises(ValueError, match="buffer 'A' is laid out over"):  # a rule applies to every stage-I function
        sparsetir.format_decompose(Module, [bsr_rule(2)])


def test_stage3_functions_are_printed_by_tvm_not_as_scripts():
    mod3 = LowerSparseBuffer()(LowerSparseIter()(Module))
    with pytest.raises(sparsetir.SparseTIRError, match=r"stage III .*mod.script\(\)"):
        print_module(mod3)


HEADER = "from sparsetir.script import ir as I\nfrom sparsetir.script import tir as T\n\n\n"

ERRORS = [
    (HEADER + "@I.ir_module\nclass M:\n    x = 1\n",
     "an @I.ir_module class holds @T.prim_func functions only", 7, 5, ScriptSyntaxError),
    (HEADER + "class M:\n    pass\n",
     "class 'M' must be decorated with @I.ir_module", 5, 1, ScriptSyntaxError),
    (HEADER + "@I.ir_module\nclass M:\n    \"\"\"nothing\"\"\"\n",
     "module 'M' holds no @T.prim_func function", 6, 1, VerifyError),
    (HEADER + "@I.ir_module\nclass M:\n    @T.prim_func\n    def f(m: T.int32):\n        I = T.dense_fixed(m)\n"
              "    @T.prim_func\n    def f(m: T.int32):\n        I = T.dense_fixed(m)\n",
     "function 'f' is defined twice in 'M'", 11, 5, VerifyError),
]


@pytest.mark.parametrize("text, message, line, col, kind", ERRORS)
def test_class_form_errors_are_located(text, message, line, col, kind):
    with pytest.raises(kind) as info:
        sparsetir.parse(text, "mod.py")
    err = info.value
    assert message in err.message
    assert (err.filename, err.line, err.col) == ("mod.py", line, col)
    assert f"mod.py:{line}:{col}: error: " in str(err) and "^" in str(err)


def test_a_class_with_an_undecorated_method_is_refused():
    with pytest.raises(sparsetir.ScriptError, match="'Bad.helper' is not decorated with @T.prim_func"):
        @I.ir_module
        class Bad:
            def helper(self):
                return 1


def test_sparsetir_show_reads_a_module_file(tmp_path, capsys):
    from sparsetir import cli
    from sparsetir.ir.module import by_name

    path = tmp_path / "module.py"
    path.write_text(print_module(Module))
    assert sorted(by_name(sparsetir.parse_file(path))) == ["csrmv", "scale"]
    assert cli.main(["show", str(path), "--func", "scale"]) == 0
    out = capsys.readouterr().out
    assert "def scale(" in out and "def csrmv(" not in out


def test_a_schedule_takes_a_module_function_as_it_stands():
    """``Schedule(M["f"])``: the stand-in PrimFunc of a stage-I function schedules as the
    function itself, and the scheduled program computes what NumPy does."""
    sch = sparsetir.Schedule(Module["csrmv"])
    assert sch.stage == 1
    sparsetir.assert_structural_equal(sch.initial, function(Module, "csrmv"))
    sch.lower_sparse_iter()
    assert sch.stage == 2
    _check_csrmv(sparsetir.build(sch))

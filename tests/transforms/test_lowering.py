"""LowerSparseIter and LowerSparseBuffer on every workload fixture: shape, round trips, results."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import sparsetir
from sparsetir._tvm import s_tir, tvm
from sparsetir.ir.stage2 import Stage2Function
from sparsetir.trace.listing import listing
from sparsetir.trace.spans import span_table
from workloads import WORKLOADS

NAMES = sorted(WORKLOADS)


def _stage1(name):
    w = WORKLOADS[name]
    f = sparsetir.parse_file(w.path)
    return f[w.function] if isinstance(f, dict) else f


_CACHE: dict = {}


def _lowered(name):
    if name not in _CACHE:
        f = _stage1(name)
        f2 = sparsetir.lower_sparse_iter(f)
        _CACHE[name] = (f, f2, sparsetir.lower_sparse_buffer(f2))
    return _CACHE[name]


def _build(f3):
    target = {"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu()}
    return tvm.compile(tvm.IRModule({"main": f3}), target=target)["main"]


def _run_and_check(name, f3, cases=None):
    w = WORKLOADS[name]
    kernel = _build(f3)
    for case in cases or w.cases:
        inputs = w.make_inputs(np.random.default_rng(7), case)
        expected = w.reference(inputs)
        kernel(*[inputs[p] for p in w.params])
        for out in w.outputs:
            np.testing.assert_allclose(inputs[out], expected[out], rtol=2e-5, atol=2e-5, err_msg=f"{name}/{case}/{out}")


@pytest.mark.parametrize("name", NAMES)
def test_stage2_is_schedulable_tvm(name):
    _, f2, _ = _lowered(name)
    assert isinstance(f2, Stage2Function)
    assert s_tir.analysis.verify_well_formed(f2.func)
    s_tir.Schedule(copy.deepcopy(f2.func))  # TVM accepts it as is (and would mutate its input)
    assert [p for p in f2.param_names] == [p.name for p in _stage1(name).params]
    assert len(f2.prim.params) == len(f2.param_names)


@pytest.mark.parametrize("name", NAMES)
def test_stage2_round_trip(name):
    _, f2, _ = _lowered(name)
    text = f2.script()
    assert '"sparse_tir_level": 1' in text
    again = sparsetir.parse(text)
    assert isinstance(again, Stage2Function)
    sparsetir.assert_structural_equal(f2, again)
    assert again.script() == text


@pytest.mark.parametrize("name", NAMES)
def test_stage3_round_trip(name):
    _, _, f3 = _lowered(name)
    assert [p.name for p in f3.params] == list(WORKLOADS[name].params)
    again = tvm.script.from_source(f3.script())
    assert sparsetir.structural_equal(again, f3)


@pytest.mark.parametrize("name", NAMES)
def test_built_kernel_matches_reference_with_argument_checks(name):
    """Through sparsetir.build: the structure checks accept every valid case of every workload."""
    w = WORKLOADS[name]
    f, f2, f3 = _lowered(name)
    kernel = sparsetir.build(f2)
    for case in w.cases:
        inputs = w.make_inputs(np.random.default_rng(11), case)
        expected = w.reference(inputs)
        kernel(*[inputs[p] for p in w.params])
        for out in w.outputs:
            np.testing.assert_allclose(inputs[out], expected[out], rtol=2e-5, atol=2e-5, err_msg=f"{name}/{case}/{out}")


@pytest.mark.parametrize("name", NAMES)
def test_lowered_kernel_matches_reference(name):
    _, _, f3 = _lowered(name)
    _run_and_check(name, f3)


def test_csr_spmm_stage2_shape():
    _, f2, _ = _lowered("csr_spmm")
    text = f2.script()
    for line in [
        "def csr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, feat_size: T.int32, nnz: T.int32) -> None:",
        'J = T.sparse_variable(I, (n, nnz), (indptr, indices))',
        'J_dense = T.dense_variable(I, (n, nnz), indptr)',
        'A = T.match_sparse_buffer(a, (I, J), "float32")',
        'J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)',
        'J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")',
        "for i in range(m):",
        'with T.sblock("csr_spmm0"):',
        "for j, k in T.grid(J_indptr[vi + 1] - J_indptr[vi], feat_size):",
        'with T.sblock("csr_spmm1"):',
        "vj = T.axis.reduce(n, j)",
        "C[vi, vk] = C[vi, vk] + A[vi, vj] * B[J_indices[vi, vj], vk]",
    ]:
        assert line in text, line


def test_bsrmm_stage2_matches_rfc():
    """The RFC's bsrmm_stage_ii, line for line modulo TVM 0.27 spelling (sblock, range)."""
    _, f2, _ = _lowered("rfc_bsrmm")
    body = [line.strip() for line in f2.script().splitlines()]
    expected = [
        'I = T.dense_fixed(nb)',
        'J = T.sparse_variable(I, (mb, nnzb), (indptr, indices))',
        'J_dense = T.dense_variable(I, (mb, nnzb), indptr)',
        'J_detach = T.dense_fixed(mb)',
        'A = T.match_sparse_buffer(a, (I, J, BI, BJ), "float32")',
        'B = T.match_sparse_buffer(b, (J_detach, BJ, F), "float32")',
        'C = T.match_sparse_buffer(c, (I, BI, F), "float32")',
        'J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)',
        'J_indices = T.match_sparse_buffer(indices, (I, J_dense), "int32")',
        "for i, bi, bj, f in T.grid(nb, blk, blk, feat_size):",
        'with T.sblock("bsrmm0"):',
        'vi, vbi, vbj, vf = T.axis.remap("SSRS", [i, bi, bj, f])',
        "T.reads(J_indptr[vi:vi + 2], A[vi, 0:mb, vbi, vbj], B[0:mb, vbj, vf], J_indices[vi, 0:mb])",
        "T.writes(C[vi, vbi, vf])",
        'T.sblock_attr({"sparse": True})',
        "with T.init():",
        "C[vi, vbi, vf] = T.float32(0)",
        "for j in range(J_indptr[vi + 1] - J_indptr[vi]):",
        'with T.sblock("bsrmm1"):',
        "vj = T.axis.reduce(mb, j)",
        "C[vi, vbi, vf] = C[vi, vbi, vf] + A[vi, vj, vbi, vbj] * B[J_indices[vi, vj], vbj, vf]",
    ]
    positions = [body.index(line) for line in expected]
    assert positions == sorted(positions)


def test_bsrmm_stage3_matches_rfc_flattening():
    _, _, f3 = _lowered("rfc_bsrmm")
    text = f3.script()
    assert "c[vi, vbi, vf] = c[vi, vbi, vf] + a[indptr[vi] + vj, vbi, vbj] * b[indices[indptr[vi] + vj], vbj, vf]" in text
    shapes = {p.name: len(p.ty.shape) for p in f3.params if hasattr(p.ty, "shape")}
    assert shapes == {"a": 3, "b": 3, "c": 3, "indptr": 1, "indices": 1}


def test_parameter_shapes_are_what_the_caller_passes():
    _, _, f3 = _lowered("csr_spmm")
    dims = {p.name: [str(d) for d in p.ty.shape] for p in f3.params if hasattr(p.ty, "shape")}
    assert dims == {"a": ["nnz"], "b": ["n", "feat_size"], "c": ["m", "feat_size"], "indptr": ["m + 1"], "indices": ["nnz"]}
    _, _, f3 = _lowered("ell_spmm")
    dims = {p.name: [str(d) for d in p.ty.shape] for p in f3.params if hasattr(p.ty, "shape")}
    assert dims["a"] == ["m", "nnz_cols"] and dims["indices"] == ["m * nnz_cols"]


def test_unstored_coordinate_lookup_is_visible_in_stage2():
    _, f2, _ = _lowered("csr_spmm_detached")
    text = f2.script()
    assert 'T.sblock("csr_spmm_detached0_J_search0")' in text
    assert "while lohi[0] < lohi[1]:" in text
    assert "T.if_then_else(csr_spmm_detached0_J_pos0[vi, vj] >= 0, A[vi, csr_spmm_detached0_J_pos0[vi, vj]], T.float32(0))" in text


def test_write_to_unstored_coordinate_is_dropped():
    _, f2, _ = _lowered("csr_to_bsr")
    text = f2.script()
    # The block row i // 4 is not provably below mb (another parameter): that store is guarded too,
    # and so is the search in that block row (an index past mb would read past JO's indptr, and
    # then the indices at whatever offsets those bytes hold: an intermittent segfault).
    assert "if vi // 4 < mb and csr_to_bsr1_JO_pos0[vj] >= 0:" in text
    assert "lohi[1] = T.if_then_else(vi // 4 < mb, JO_indptr[vi // 4 + 1] - JO_indptr[vi // 4], 0)" in text


def test_dense_coordinates_outside_their_axis_are_guarded():
    _, f2, _ = _lowered("rgcn_homogeneous")
    text = f2.script()
    # The relation of each edge is data: W is read only for relations inside its axis.
    assert "T.if_then_else(ETYPE[vi, vj] >= 0 and ETYPE[vi, vj] < num_rel, W[ETYPE[vi, vj], vfi, vfo], T.float32(0))" in text
    # Iterators of an axis index a buffer over the same extent without a guard.
    _, f2, _ = _lowered("csr_spmm")
    assert "if_then_else" not in f2.script()
    _, f2, _ = _lowered("bsr_spmm")  # vio * 4 + vii < mb * 4 is proven from vio < mb, vii < 4
    assert "if_then_else" not in f2.script() and " if " not in f2.script()


def test_relations_outside_the_weights_read_zero():
    w = WORKLOADS["rgcn_homogeneous"]
    inputs = w.make_inputs(np.random.default_rng(8), "random")
    bad = inputs["etype"].copy()
    bad[::3] = inputs["num_rel"] + 5
    bad[1::5] = -7
    inputs["etype"] = bad
    kernel = sparsetir.build(_stage1("rgcn_homogeneous"))
    kernel(*[inputs[p] for p in w.params])  # no out-of-bounds read, whatever the relation ids say
    keep = (bad >= 0) & (bad < inputs["num_rel"])
    expected = w.reference({**inputs, "a": np.where(keep, inputs["a"], 0).astype(np.float32),
                            "etype": np.where(keep, bad, 0).astype(np.int32)})
    np.testing.assert_allclose(inputs["y"], expected["y"], rtol=2e-5, atol=2e-5)


def test_fused_iteration_is_one_loop_over_nnz():
    _, f2, _ = _lowered("sddmm_fused")
    text = f2.script()
    assert "for ij, k in T.grid(nnz, feat_size):" in text or "for ij in range(nnz):" in text


def test_tvm_schedule_primitives_apply_to_stage2():
    _, f2, _ = _lowered("csr_spmm")
    sch = s_tir.Schedule(copy.deepcopy(f2.func))
    block = sch.get_sblock("csr_spmm1")
    j, k = sch.get_loops(block)[-2:]
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(ko, j, ki)
    (i,) = sch.get_loops(sch.get_sblock("csr_spmm0"))
    sch.parallel(i)
    scheduled = Stage2Function.from_func(sch.mod["main"])
    _run_and_check("csr_spmm", sparsetir.lower_sparse_buffer(scheduled))


def test_empty_rows_get_their_init():
    """The init under the data-dependent j loop is hoisted (stage2.md condition 2)."""
    _, _, f3 = _lowered("csr_spmm")
    assert 'T.sblock("csr_spmm1_init")' in f3.script()
    _run_and_check("csr_spmm", f3, ["empty_rows"])


def test_spans_side_table_and_annotation():
    f, f2, f3 = _lowered("csr_spmm")
    table = span_table(f2)
    path = str(WORKLOADS["csr_spmm"].path)
    assert any(x.endswith("csr_spmm.py:25") for x in table["csr_spmm0"])
    assert any(x.endswith("csr_spmm.py:28") for x in table["csr_spmm1"])
    text = listing(f3).annotated()
    store = next(line for line in text.splitlines() if "c[vi, vk] = c[vi, vk] +" in line)
    assert "csr_spmm.py:28" in store
    init = next(line for line in text.splitlines() if "c[vi, vk] = T.float32(0.0)" in line)
    assert "csr_spmm.py:27" in init
    assert all(x.startswith(path + ":") for lines in table.values() for x in lines)


def test_stores_keep_stage1_spans():
    f, f2, f3 = _lowered("csr_spmm")
    from sparsetir._tvm import structural_walk, tirx

    lines = []

    def visit(node):
        if isinstance(node, tirx.BufferStore) and node.span is not None:
            lines.append(int(node.span.line))
        return True

    structural_walk(f3.body, visit)
    assert 28 in lines and 27 in lines


@pytest.mark.parametrize("name", NAMES)
def test_every_statement_keeps_a_span_into_the_script(name):
    """Stage II and III: loops, blocks, stores, branches and binary searches all point at script
    lines, also the init blocks TVM's decompose_reduction creates (the pipeline fills their spans)."""
    from sparsetir._tvm import SequentialSpan, structural_walk, tirx

    f, f2, f3 = _lowered(name)
    path = str(WORKLOADS[name].path)
    n_lines = len(open(path).read().splitlines())
    kinds = (tirx.For, tirx.BufferStore, tirx.While, tirx.IfThenElse, s_tir.SBlock, s_tir.SBlockRealize)
    for stage, prim in ((2, f2.prim), (3, f3)):
        missing, outside = [], []

        def visit(node):
            span = node.span
            if span is None:
                missing.append(type(node).__name__)
                return
            for part in list(span.spans) if isinstance(span, SequentialSpan) else [span]:
                if str(part.source_name.name) != path or not 1 <= int(part.line) <= n_lines:
                    outside.append((type(node).__name__, str(part.source_name.name), int(part.line)))

        structural_walk(prim.body, [(kinds, visit)])
        assert not missing and not outside, (stage, missing, outside)


def test_generated_names_never_take_a_script_name():
    """A script axis called J_dense (the name lowering gives J's dense twin) stays distinct."""
    text = WORKLOADS["csr_spmm"].path.read_text().replace("J_detach", "J_dense")
    f2 = sparsetir.lower_sparse_iter(sparsetir.parse(text, "renamed.py"))
    names = [a.name for a in f2.axes]
    assert len(names) == len(set(names)) and "J_dense" in names
    again = sparsetir.parse(f2.script())
    sparsetir.assert_structural_equal(f2, again)
    _run_and_check("csr_spmm", sparsetir.lower_sparse_buffer(f2), ["random"])

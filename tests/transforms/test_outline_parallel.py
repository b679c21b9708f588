"""The CPU build's outlining of parallel loop bodies into ``noalias`` functions
(``transforms/outline_parallel.py``): which loops move, what the called function takes, that
LLVM sees its arrays as not aliasing, and that kernels still compute the NumPy reference."""

from __future__ import annotations

import numpy as np
import scipy.sparse

from sparsetir._tvm import BufferType, structural_walk, tirx, tvm
from sparsetir._tvm import tvmscript_tirx as T
from sparsetir.runtime.build import build_stage3
from sparsetir.runtime.cpu_form import cpu_form, cpu_module
from sparsetir.runtime.target import host_target
from sparsetir.transforms.outline_parallel import outline_parallel_loops


@T.prim_func(s_tir=True)
def scale_rows(
    a: T.Buffer(("nnz",), "float32"),
    b: T.Buffer(("nnz",), "float32"),
    w: T.Buffer(("m",), "float32"),
    indptr: T.Buffer(("m + 1",), "int32"),
    part: T.Buffer(("parts + 1",), "int32"),
    m: T.int32,
    nnz: T.int32,
    parts: T.int32,
):
    T.func_attr({"tir.noalias": True})
    for t in T.parallel(parts):
        for i in range(part[t + 1] - part[t]):
            with T.sblock("row"):
                vi = T.axis.spatial(m, part[t] + i)
                lohi = T.sblock_alloc_buffer((2,), "int32")  # 8 bytes: a stack slot
                lohi[0] = indptr[vi]
                for j in range(indptr[vi + 1] - indptr[vi]):
                    with T.sblock("scale"):
                        vj = T.axis.spatial(indptr[vi + 1] - indptr[vi], j)
                        b[lohi[0] + vj] = a[indptr[vi] + vj] * w[vi]


@T.prim_func(s_tir=True)
def with_workspace(
    a: T.Buffer(("n",), "float32"),
    part: T.Buffer(("parts + 1",), "int32"),
    n: T.int32,
    parts: T.int32,
):
    T.func_attr({"tir.noalias": True})
    for t in T.parallel(parts):
        with T.sblock("chunk"):
            tmp = T.sblock_alloc_buffer((1024,), "float32")  # 4 KiB, all of it live: a workspace call
            for k in range(1024):
                tmp[k] = T.float32(2)
            for i in range(part[t + 1] - part[t]):
                a[part[t] + i] = a[part[t] + i] * tmp[(i * 7) % 1024]


def _calls(func):
    found = []
    structural_walk(func.body, lambda n: found.append(n) if isinstance(n, tvm.ir.Call)
                    and isinstance(n.op, tvm.ir.GlobalVar) else None)
    return found


def test_a_parallel_body_becomes_a_noalias_function_of_its_arrays_and_sizes():
    main, outlined = outline_parallel_loops(scale_rows, "scale_rows")
    assert [g.name_hint for g in outlined] == ["scale_rows_parallel0"]
    (callee,) = outlined.values()
    assert bool(callee.attrs["tir.noalias"])
    pointers = [p for p in callee.params if isinstance(p.ty, tvm.ir.PointerType)]
    scalars = [str(p.name) for p in callee.params if not isinstance(p.ty, tvm.ir.PointerType)]
    assert sorted(str(p.name) for p in pointers) == ["a_data", "b_data", "indptr_data", "part_data", "w_data"]
    assert sorted(scalars) == ["m", "nnz", "parts", "t"]  # the loop variable and the arrays' sizes
    (call,) = _calls(main)
    assert call.op.same_as(next(iter(outlined)))
    # the parallel loop keeps only the call
    loops = []
    structural_walk(main.body, lambda n: loops.append(n) if isinstance(n, tirx.For) else None)
    assert [lp.kind for lp in loops] == [tirx.ForKind.PARALLEL] and isinstance(loops[0].body, tirx.Evaluate)


def _array_alias_classes(module) -> set[str]:
    """The TBAA tags of the parallel closure's memory accesses, as LLVM compiled them."""
    ll = tvm.compile(module, target=host_target()).mod.inspect_source("ll")
    body = ll[ll.index("@__tvm_parallel_lambda("):]
    body = body[:body.index("\n}\n")]
    return {line.rsplit("!tbaa ", 1)[1] for line in body.splitlines() if "!tbaa " in line}


def test_llvm_sees_the_arrays_of_the_outlined_body_as_not_aliasing():
    # TVM tags each array of a noalias function with an alias class of its own; in a closure
    # every array shares one, so each store may change every array.
    func = scale_rows.with_attr("global_symbol", "scale_rows")
    assert len(_array_alias_classes(tvm.IRModule({"scale_rows": cpu_form(func)}))) == 1
    assert len(_array_alias_classes(cpu_module(func, "scale_rows"))) >= 4


def test_loops_that_cannot_move_stay():
    # no tir.noalias: nothing to gain
    assert outline_parallel_loops(scale_rows.without_attr("tir.noalias"), "f")[1] == {}
    # a 4 KiB scratch is a workspace allocation, which needs the entry's device
    assert outline_parallel_loops(with_workspace, "f")[1] == {}
    module = cpu_module(with_workspace.with_attr("global_symbol", "f"), "f")
    assert len(module.functions) == 1


def test_outlined_kernels_compute_the_reference():
    rng = np.random.default_rng(8)
    matrix = scipy.sparse.random(300, 200, density=0.05, format="csr", dtype=np.float32, random_state=8)
    m, nnz = matrix.shape[0], matrix.nnz
    w = rng.standard_normal(m).astype(np.float32)
    indptr = matrix.indptr.astype(np.int32)
    for parts in (1, 3, 7):
        part = np.searchsorted(indptr, np.linspace(0, nnz, parts + 1)).clip(0, m).astype(np.int32)
        part[0], part[-1] = 0, m
        b = np.full(nnz, np.nan, np.float32)
        kernel = build_stage3(scale_rows.with_attr("global_symbol", "scale_rows"), [])
        kernel(matrix.data, b, w, indptr, part, m, nnz, parts)
        np.testing.assert_allclose(b, matrix.data * np.repeat(w, np.diff(indptr)), rtol=1e-6)
    a = rng.standard_normal(5000).astype(np.float32)
    expected = a * 2
    build_stage3(with_workspace.with_attr("global_symbol", "with_workspace"), [])(
        a, np.array([0, 2500, 5000], np.int32), 5000, 2)
    np.testing.assert_allclose(a, expected)


def test_a_lookup_result_per_entry_is_compacted_and_the_loop_outlined():
    """csr_to_bsr's default build looks each entry's block up in a sorted row: the lowering
    declares the result for every entry of the row (``(n,)``, a size known at run time), which
    TVM compacts to one element per entry; ``cpu_module`` compacts first, so the body outlines."""
    from pathlib import Path

    import sparsetir
    from sparsetir.default_build import schedule_of
    from sparsetir.transforms import pipeline

    f = sparsetir.parse_file(Path(__file__).resolve().parents[2] / "examples" / "csr_to_bsr.py")
    f3 = pipeline.lower(schedule_of(f).schedule.func).with_attr("global_symbol", "f")
    assert outline_parallel_loops(f3, "f")[1] == {}  # as lowered: a scratch of n entries
    assert len(cpu_module(f3, "f").functions) == 2


@T.prim_func(s_tir=True)
def wide_entries(
    a: T.Buffer(("nnz",), "int32"),
    b: T.Buffer(("nnz",), "int32"),
    nnz: T.int32,
):
    T.func_attr({"tir.noalias": True})
    for p in T.parallel(T.Cast("int64", nnz)):  # a fused loop over an int64-indexed axis's entries
        b[p] = a[p] * 2


@T.prim_func(s_tir=True)
def wide_offset(
    a: T.Buffer(("nnz",), "int32"),
    b: T.Buffer(("nnz",), "int32"),
    nnz: T.int32,
):
    T.func_attr({"tir.noalias": True})
    start: T.let = T.Cast("int64", nnz) // T.int64(2)  # an int64 value of the caller's own
    for p in T.parallel(nnz // 2):
        b[start + T.Cast("int64", p)] = a[start + T.Cast("int64", p)] + 1


def test_an_int64_loop_that_fits_in_32_bits_is_outlined_as_int32():
    """TVM's NarrowDataType makes such a loop's variable int32 in the caller but never a
    callee's parameter: the call would pass an int32 where the function takes an int64 (found
    by the semantic fuzzer: ``T.fuse(I, J)`` over an axis with int64 indices failed to compile)."""
    main, outlined = outline_parallel_loops(wide_entries, "wide")
    (callee,) = outlined.values()
    assert {str(p.name): str(p.ty.dtype) for p in callee.params if not isinstance(p.ty, tvm.ir.PointerType)} == {
        "p": "int32", "nnz": "int32"}
    a = np.arange(1000, dtype=np.int32)
    b = np.zeros(1000, np.int32)
    build_stage3(wide_entries.with_attr("global_symbol", "wide"), [])(a, b, 1000)
    np.testing.assert_array_equal(b, a * 2)


def test_a_body_needing_an_int64_value_of_the_caller_stays():
    assert outline_parallel_loops(wide_offset, "f")[1] == {}
    a = np.arange(1001, dtype=np.int32)
    b = np.zeros(1001, np.int32)
    build_stage3(wide_offset.with_attr("global_symbol", "f"), [])(a, b, 1001)
    np.testing.assert_array_equal(b[500:1000], a[500:1000] + 1)


def test_a_fused_iteration_over_int64_indices_builds_and_computes_the_reference():
    import sparsetir

    script = '''
@T.prim_func
def fused(a: T.handle, r: T.handle, o: T.handle, indptr: T.handle, indices: T.handle,
          m: T.int32, n: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int64")
    A = T.match_sparse_buffer(a, (I, J), dtype="int32")
    R = T.match_sparse_buffer(r, (I,), dtype="int32")
    O = T.match_sparse_buffer(o, (I, J), dtype="int32")
    with T.sp_iter([T.fuse(I, J)], "SS", "it0") as [i, j]:
        O[i, j] = T.min(R[i], A[i, j])
'''
    f = sparsetir.parse("from sparsetir.script import tir as T\n" + script)
    matrix = scipy.sparse.random(257, 16, density=0.05, format="csr", random_state=3)
    a = np.arange(matrix.nnz, dtype=np.int32)
    r = np.arange(257, dtype=np.int32) - 100
    o = np.zeros(matrix.nnz, np.int32)
    sparsetir.build(f)(a=a, r=r, o=o, indptr=matrix.indptr.astype(np.int64),
                       indices=matrix.indices.astype(np.int64), m=257, n=16, nnz=matrix.nnz)
    np.testing.assert_array_equal(o, np.minimum(np.repeat(r, np.diff(matrix.indptr)), a))

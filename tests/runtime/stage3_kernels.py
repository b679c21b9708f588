"""Hand-written stage-III kernels (TVMScript) and the sparse axes they were lowered from.

Parameters are written as TVM's printer writes them: buffers first, with shapes that refer to
the scalar parameters after them quoted. That needs postponed annotations, so that Python does
not evaluate the quoted shapes before the TVMScript parser sees them.
"""

from __future__ import annotations

from sparsetir._tvm import Var, tirx

IntImm = tirx.IntImm
from sparsetir._tvm import tvmscript_tirx as T
from sparsetir.ir.axis import Axis, dense_fixed


@T.prim_func(s_tir=True)
def csrmm(
    a: T.Buffer(("nnz",), "float32"),
    b: T.Buffer(("n", "feat_size"), "float32"),
    c: T.Buffer(("m", "feat_size"), "float32"),
    indptr: T.Buffer(("m + 1",), "int32"),
    indices: T.Buffer(("nnz",), "int32"),
    m: T.int32,
    n: T.int32,
    feat_size: T.int32,
    nnz: T.int32,
):
    for i in range(m):
        with T.sblock("row"):
            vi = T.axis.spatial(m, i)
            for k in range(feat_size):
                with T.sblock("init"):
                    vk = T.axis.spatial(feat_size, k)
                    c[vi, vk] = T.float32(0)
            for j, k in T.grid(indptr[vi + 1] - indptr[vi], feat_size):
                with T.sblock("spmm"):
                    vj = T.axis.reduce(indptr[vi + 1] - indptr[vi], j)
                    vk = T.axis.spatial(feat_size, k)
                    c[vi, vk] = c[vi, vk] + a[indptr[vi] + vj] * b[indices[indptr[vi] + vj], vk]


def csr_axes() -> list[Axis]:
    """The axes of ``csrmm``: I (dense fixed, m) > J (sparse variable, n columns, nnz)."""
    m, n, nnz = Var("m", "int32"), Var("n", "int32"), Var("nnz", "int32")
    i = dense_fixed("I", m)
    j = Axis("J", "sparse_variable", i, n, nnz, None, Var("indptr", "handle"),
             Var("indices", "handle"), "int32", True)
    return [i, j]


@T.prim_func(s_tir=True)
def dcsrmm(
    a: T.Buffer(("nnz_j",), "float32"),
    b: T.Buffer(("n", "feat_size"), "float32"),
    c: T.Buffer(("m", "feat_size"), "float32"),
    indptr_i: T.Buffer((2,), "int32"),
    indices_i: T.Buffer(("nnz_i",), "int32"),
    indptr_j: T.Buffer(("nnz_i + 1",), "int32"),
    indices_j: T.Buffer(("nnz_j",), "int32"),
    m: T.int32,
    n: T.int32,
    feat_size: T.int32,
    nnz_i: T.int32,
    nnz_j: T.int32,
):
    for i, k in T.grid(m, feat_size):
        with T.sblock("init"):
            vi, vk = T.axis.remap("SS", [i, k])
            c[vi, vk] = T.float32(0)
    for p in range(nnz_i):
        with T.sblock("row"):
            vp = T.axis.opaque(nnz_i, p)
            for q, k in T.grid(indptr_j[vp + 1] - indptr_j[vp], feat_size):
                with T.sblock("spmm"):
                    vq = T.axis.opaque(indptr_j[vp + 1] - indptr_j[vp], q)
                    vk = T.axis.spatial(feat_size, k)
                    c[indices_i[vp], vk] = (
                        c[indices_i[vp], vk]
                        + a[indptr_j[vp] + vq] * b[indices_j[indptr_j[vp] + vq], vk]
                    )


def dcsr_axes() -> list[Axis]:
    """The axes of ``dcsrmm``: O (dense, 1) > I (sparse variable, m) > J (sparse variable, n)."""
    m, n = Var("m", "int32"), Var("n", "int32")
    nnz_i, nnz_j = Var("nnz_i", "int32"), Var("nnz_j", "int32")
    o = dense_fixed("O", IntImm("int32", 1))
    i = Axis("I", "sparse_variable", o, m, nnz_i, None, Var("indptr_i", "handle"),
             Var("indices_i", "handle"), "int32", True)
    j = Axis("J", "sparse_variable", i, n, nnz_j, None, Var("indptr_j", "handle"),
             Var("indices_j", "handle"), "int32", True)
    return [o, i, j]


@T.prim_func
def scale_rows(x: T.Buffer(("m", 16), "float32"), y: T.Buffer(("m", 16), "float32"), m: T.int32):
    """Vectorized: with TVM's default 64-byte alignment LLVM emits aligned vector moves."""
    for i in T.parallel(m):
        for k in T.vectorized(16):
            y[i, k] = x[i, k] * T.float32(2)


@T.prim_func(s_tir=True)
def copy_rows_via_view(x: T.Buffer(("m", 4), "float32"), y: T.Buffer(("m", 4), "float32"), m: T.int32):
    """Writes ``y`` only through a block-level ``match_buffer`` alias of one row."""
    for i in range(m):
        with T.sblock("row"):
            vi = T.axis.spatial(m, i)
            y_row = T.match_buffer(y[vi, 0:4], (4,), "float32", offset_factor=1)
            for k in range(4):
                with T.sblock("copy"):
                    vk = T.axis.spatial(4, k)
                    y_row[vk] = x[vi, vk]


@T.prim_func(s_tir=True)
def gpu_scale(x: T.Buffer(("n",), "float32"), y: T.Buffer(("n",), "float32"), n: T.int32):
    """A thread-bound kernel: compiles to CUDA source without a GPU."""
    for bx in T.thread_binding((n + 127) // 128, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            with T.sblock("scale"):
                vi = T.axis.spatial(n, bx * 128 + tx)
                T.where(bx * 128 + tx < n)
                y[vi] = x[vi] * T.float32(2)

# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def csr_multiply_assembled(a: T.Buffer(("nnz_a",), "float32"), b: T.Buffer(("nnz_b",), "float32"), c: T.Buffer(("nnz_c",), "float32"), indptr_a: T.Buffer(("m + 1",), "int32"), indices_a: T.Buffer((nnz_a,), "int32"), indptr_b: T.Buffer((m + 1,), "int32"), indices_b: T.Buffer((nnz_b,), "int32"), indptr_c: T.Buffer((m + 1,), "int32"), indices_c: T.Buffer((nnz_c,), "int32"), m: T.int32, n: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.searched_axes": ["JA", "JB"], "sparsetir.spans": {"csr_multiply_assembled0": ["examples/csr_multiply_assembled.py:32"], "csr_multiply_assembled1": ["examples/csr_multiply_assembled.py:32", "examples/csr_multiply_assembled.py:33"], "csr_multiply_assembled_j_merge": ["examples/csr_multiply_assembled.py:32"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for i in range(m):
        with T.sblock("csr_multiply_assembled0"):
            vi = T.axis.spatial(m, i)
            T.reads(indptr_a[0:m + 1], indptr_b[0:m + 1], indices_a[0:nnz_a], indices_b[0:nnz_b], indptr_c[0:m + 1], a[0:nnz_a], b[0:nnz_b])
            T.writes(c[0:nnz_c], indices_c[0:nnz_c])
            T.sblock_attr({"sparse": True})
            with T.sblock("csr_multiply_assembled1"):
                T.reads(indptr_a[0:m + 1], indptr_b[0:m + 1], indices_a[0:nnz_a], indices_b[0:nnz_b], indptr_c[0:m + 1], a[0:nnz_a], b[0:nnz_b])
                T.writes(c[0:nnz_c], indices_c[0:nnz_c])
                T.sblock_attr({"sparse": True})
                csr_multiply_assembled_j_merge = T.sblock_alloc_buffer((4,), "int32", scope="local")
                csr_multiply_assembled_j_merge[0] = 0
                csr_multiply_assembled_j_merge[1] = 0
                csr_multiply_assembled_j_merge[3] = 0
                while csr_multiply_assembled_j_merge[0] < indptr_a[vi + 1] - indptr_a[vi] and csr_multiply_assembled_j_merge[1] < indptr_b[vi + 1] - indptr_b[vi]:
                    csr_multiply_assembled_j_merge[2] = T.min(T.if_then_else(indptr_a[vi] + csr_multiply_assembled_j_merge[0] >= 0 and indptr_a[vi] + csr_multiply_assembled_j_merge[0] < nnz_a, indices_a[indptr_a[vi] + csr_multiply_assembled_j_merge[0]], 0), T.if_then_else(indptr_b[vi] + csr_multiply_assembled_j_merge[1] >= 0 and indptr_b[vi] + csr_multiply_assembled_j_merge[1] < nnz_b, indices_b[indptr_b[vi] + csr_multiply_assembled_j_merge[1]], 0))
                    if T.if_then_else(indptr_a[vi] + csr_multiply_assembled_j_merge[0] >= 0 and indptr_a[vi] + csr_multiply_assembled_j_merge[0] < nnz_a, indices_a[indptr_a[vi] + csr_multiply_assembled_j_merge[0]], 0) == csr_multiply_assembled_j_merge[2] and T.if_then_else(indptr_b[vi] + csr_multiply_assembled_j_merge[1] >= 0 and indptr_b[vi] + csr_multiply_assembled_j_merge[1] < nnz_b, indices_b[indptr_b[vi] + csr_multiply_assembled_j_merge[1]], 0) == csr_multiply_assembled_j_merge[2]:
                        if csr_multiply_assembled_j_merge[3] < indptr_c[vi + 1] - indptr_c[vi]:
                            if indptr_c[vi] + csr_multiply_assembled_j_merge[3] >= 0 and indptr_c[vi] + csr_multiply_assembled_j_merge[3] < nnz_c:
                                c[indptr_c[vi] + csr_multiply_assembled_j_merge[3]] = T.if_then_else(indptr_a[vi] + csr_multiply_assembled_j_merge[0] >= 0 and indptr_a[vi] + csr_multiply_assembled_j_merge[0] < nnz_a, a[indptr_a[vi] + csr_multiply_assembled_j_merge[0]], T.float32(0.0)) * T.if_then_else(indptr_b[vi] + csr_multiply_assembled_j_merge[1] >= 0 and indptr_b[vi] + csr_multiply_assembled_j_merge[1] < nnz_b, b[indptr_b[vi] + csr_multiply_assembled_j_merge[1]], T.float32(0.0))
                        if csr_multiply_assembled_j_merge[3] < indptr_c[vi + 1] - indptr_c[vi]:
                            if indptr_c[vi] + csr_multiply_assembled_j_merge[3] >= 0 and indptr_c[vi] + csr_multiply_assembled_j_merge[3] < nnz_c:
                                indices_c[indptr_c[vi] + csr_multiply_assembled_j_merge[3]] = csr_multiply_assembled_j_merge[2]
                        csr_multiply_assembled_j_merge[3] = csr_multiply_assembled_j_merge[3] + 1
                    if T.if_then_else(indptr_a[vi] + csr_multiply_assembled_j_merge[0] >= 0 and indptr_a[vi] + csr_multiply_assembled_j_merge[0] < nnz_a, indices_a[indptr_a[vi] + csr_multiply_assembled_j_merge[0]], 0) == csr_multiply_assembled_j_merge[2]:
                        csr_multiply_assembled_j_merge[0] = csr_multiply_assembled_j_merge[0] + 1
                    if T.if_then_else(indptr_b[vi] + csr_multiply_assembled_j_merge[1] >= 0 and indptr_b[vi] + csr_multiply_assembled_j_merge[1] < nnz_b, indices_b[indptr_b[vi] + csr_multiply_assembled_j_merge[1]], 0) == csr_multiply_assembled_j_merge[2]:
                        csr_multiply_assembled_j_merge[1] = csr_multiply_assembled_j_merge[1] + 1

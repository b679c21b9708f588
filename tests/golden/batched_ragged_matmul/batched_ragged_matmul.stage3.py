# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

@T.prim_func(s_tir=True)
def batched_ragged_matmul(x: T.Buffer(("nnz_ij",), "float32"), y: T.Buffer(("nnz_jk",), "float32"), z: T.Buffer(("nnz_ik",), "float32"), indptr_i: T.Buffer(("batch + 1",), "int32"), indptr_j: T.Buffer((batch + 1,), "int32"), indptr_k: T.Buffer((batch + 1,), "int32"), indptr_ij: T.Buffer(("nnz_i + 1",), "int32"), indptr_jk: T.Buffer(("nnz_j + 1",), "int32"), indptr_ik: T.Buffer((nnz_i + 1,), "int32"), batch: T.int32, max_i: T.int32, max_j: T.int32, max_k: T.int32, nnz_i: T.int32, nnz_j: T.int32, nnz_ij: T.int32, nnz_jk: T.int32, nnz_ik: T.int32):
    T.func_attr({"sparse_tir_level": 0, "sparsetir.spans": {"batched_ragged_matmul0": ["examples/batched_ragged_matmul.py:41"], "batched_ragged_matmul1": ["examples/batched_ragged_matmul.py:41", "examples/batched_ragged_matmul.py:44"], "batched_ragged_matmul1_init": ["examples/batched_ragged_matmul.py:41", "examples/batched_ragged_matmul.py:43"]}, "tir.noalias": True})
    # with T.sblock("root"):
    for b in range(batch):
        with T.sblock("batched_ragged_matmul0"):
            vb = T.axis.spatial(batch, b)
            T.reads(indptr_i[0:batch + 1], indptr_j[0:batch + 1], indptr_k[0:batch + 1], x[0:nnz_ij], y[0:nnz_jk])
            T.writes(z[0:nnz_ik])
            T.sblock_attr({"sparse": True})
            for i in range(indptr_i[vb + 1] - indptr_i[vb]):
                for k_init in range(indptr_k[vb + 1] - indptr_k[vb]):
                    with T.sblock("batched_ragged_matmul1_init"):
                        vi = T.axis.spatial(max_i, i)
                        vk = T.axis.spatial(max_k, k_init)
                        T.reads()
                        T.writes(z[indptr_ik[indptr_i[vb] + vi] + vk])
                        T.sblock_attr({"sparse": True})
                        if indptr_ik[indptr_i[vb] + vi] + vk < nnz_ik:
                            z[indptr_ik[indptr_i[vb] + vi] + vk] = T.float32(0.0)
                for j, k in T.grid(indptr_j[vb + 1] - indptr_j[vb], indptr_k[vb + 1] - indptr_k[vb]):
                    with T.sblock("batched_ragged_matmul1_update"):
                        vi = T.axis.spatial(max_i, i)
                        vj = T.axis.reduce(max_j, j)
                        vk = T.axis.spatial(max_k, k)
                        T.reads(z[indptr_ik[indptr_i[vb] + vi] + vk], x[indptr_ij[indptr_i[vb] + vi] + vj], y[indptr_jk[indptr_j[vb] + vj] + vk])
                        T.writes(z[indptr_ik[indptr_i[vb] + vi] + vk])
                        T.sblock_attr({"sparse": True})
                        if indptr_ik[indptr_i[vb] + vi] + vk < nnz_ik:
                            z[indptr_ik[indptr_i[vb] + vi] + vk] = T.if_then_else(indptr_ik[indptr_i[vb] + vi] + vk < nnz_ik, z[indptr_ik[indptr_i[vb] + vi] + vk], T.float32(0.0)) + T.if_then_else(indptr_ij[indptr_i[vb] + vi] + vj < nnz_ij, x[indptr_ij[indptr_i[vb] + vi] + vj], T.float32(0.0)) * T.if_then_else(indptr_jk[indptr_j[vb] + vj] + vk < nnz_jk, y[indptr_jk[indptr_j[vb] + vj] + vk], T.float32(0.0))

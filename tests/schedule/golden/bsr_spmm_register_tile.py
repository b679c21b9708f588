# from sparsetir.script import tir as T

@T.prim_func
def bsr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, mb: T.int32, nb: T.int32, nnzb: T.int32, feat_size: T.int32):
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"bsr_spmm0": ["bsr_spmm.py:29"], "bsr_spmm1": ["bsr_spmm.py:29", "bsr_spmm.py:32"], "bsr_spmm1_init": ["bsr_spmm.py:29", "bsr_spmm.py:31"]}, "tir.noalias": True})
    IO = T.dense_fixed(mb, idtype="int32")
    JO = T.sparse_variable(IO, (nb, nnzb), (indptr, indices), idtype="int32", sorted=True)
    JO_dense = T.dense_variable(IO, (nb, nnzb), indptr, idtype="int32")
    II = T.dense_fixed(4, idtype="int32")
    JI = T.dense_fixed(4, idtype="int32")
    M = T.dense_fixed(mb * 4, idtype="int32")
    N = T.dense_fixed(nb * 4, idtype="int32")
    K = T.dense_fixed(feat_size, idtype="int32")
    A = T.match_sparse_buffer(a, [IO, JO, II, JI], dtype="float32")
    B = T.match_sparse_buffer(b, [N, K], dtype="float32")
    C = T.match_sparse_buffer(c, [M, K], dtype="float32")
    JO_indptr = T.match_sparse_buffer(indptr, [IO], dtype="int32", extra_storage=1)
    JO_indices = T.match_sparse_buffer(indices, [IO, JO_dense], dtype="int32")
    # body
    # with T.sblock("root"):
    for io in T.parallel(mb):
        for ii in range(4):
            with T.sblock("bsr_spmm0"):
                vio, vii = T.axis.remap("SS", [io, ii])
                T.reads(JO_indptr[vio:vio + 2], A[vio, 0:nb, vii, 0:4], B[0:nb * 4, 0:feat_size], JO_indices[vio, 0:nb])
                T.writes(C[vio * 4 + vii, 0:feat_size])
                T.sblock_attr({"sparse": True})
                C_local = T.sblock_alloc_buffer((1, feat_size), scope="local")
                A_local = T.sblock_alloc_buffer((1, nb, 1, 4), scope="local")
                for k_0 in range((feat_size + 3) // 4):
                    for k_1_init in T.vectorized(4):
                        with T.sblock("bsr_spmm1_init"):
                            vk = T.axis.spatial(feat_size, k_0 * 4 + k_1_init)
                            T.where(k_0 * 4 + k_1_init < feat_size)
                            T.reads()
                            T.writes(C_local[0, vk])
                            T.sblock_attr({"sparse": True})
                            C_local[0, vk] = T.float32(0.0)
                    for jo in range(JO_indptr[vio + 1] - JO_indptr[vio]):
                        for ax0 in range(4):
                            with T.sblock("A_local"):
                                v0 = T.axis.spatial(1, 0)
                                v1 = T.axis.spatial(nb, jo)
                                v2 = T.axis.spatial(1, 0)
                                v3 = T.axis.spatial(4, ax0)
                                T.where(jo < nb)
                                T.reads(A[vio + v0, v1, vii + v2, v3])
                                T.writes(A_local[v0, v1, v2, v3])
                                A_local[v0, v1, v2, v3] = A[vio + v0, v1, vii + v2, v3]
                        for ji in range(4):
                            for k_1 in T.vectorized(4):
                                with T.sblock("bsr_spmm1_update"):
                                    vjo = T.axis.reduce(nb, jo)
                                    vji = T.axis.reduce(4, ji)
                                    vk = T.axis.spatial(feat_size, k_0 * 4 + k_1)
                                    T.where(k_0 * 4 + k_1 < feat_size)
                                    T.reads(C_local[0, vk], A_local[0, vjo, 0, vji], B[JO_indices[vio, vjo] * 4 + vji, vk], JO_indices[vio, vjo])
                                    T.writes(C_local[0, vk])
                                    T.sblock_attr({"sparse": True})
                                    C_local[0, vk] = C_local[0, vk] + A_local[0, vjo, 0, vji] * B[JO_indices[vio, vjo] * 4 + vji, vk]
                    for ax0 in range(4):
                        with T.sblock("C_local"):
                            v0 = T.axis.spatial(1, 0)
                            v1 = T.axis.spatial(feat_size, k_0 * 4 + ax0)
                            T.where(k_0 * 4 + ax0 < feat_size)
                            T.reads(C_local[v0, v1])
                            T.writes(C[vio * 4 + vii + v0, v1])
                            C[vio * 4 + vii + v0, v1] = C_local[v0, v1]

@T.prim_func
def bsr_spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle, mb: T.int32, nb: T.int32, nnzb: T.int32, feat_size: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"bsr_spmm0": ["examples/bsr_spmm.py:29"], "bsr_spmm1": ["examples/bsr_spmm.py:29", "examples/bsr_spmm.py:32"], "bsr_spmm1_init": ["examples/bsr_spmm.py:29", "examples/bsr_spmm.py:31"]}, "tir.noalias": True})
    IO = T.dense_fixed(mb)
    JO = T.sparse_variable(IO, (nb, nnzb), (indptr, indices))
    JO_dense = T.dense_variable(IO, (nb, nnzb), indptr)
    II = T.dense_fixed(4)
    JI = T.dense_fixed(4)
    M = T.dense_fixed(mb * 4)
    N = T.dense_fixed(nb * 4)
    K = T.dense_fixed(feat_size)
    A = T.match_sparse_buffer(a, (IO, JO, II, JI), "float32")
    B = T.match_sparse_buffer(b, (N, K), "float32")
    C = T.match_sparse_buffer(c, (M, K), "float32")
    JO_indptr = T.match_sparse_buffer(indptr, (IO,), "int32", extra_storage=1)
    JO_indices = T.match_sparse_buffer(indices, (IO, JO_dense), "int32")
    for io, ii in T.grid(mb, 4):
        with T.sblock("bsr_spmm0"):
            vio, vii = T.axis.remap("SS", [io, ii])
            T.reads(JO_indptr[vio:vio + 2], A[vio, 0:nb, vii, 0:4], B[0:nb * 4, 0:feat_size], JO_indices[vio, 0:nb])
            T.writes(C[vio * 4 + vii, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for jo, ji, k in T.grid(JO_indptr[vio + 1] - JO_indptr[vio], 4, feat_size):
                with T.sblock("bsr_spmm1"):
                    vjo = T.axis.reduce(nb, jo)
                    vji = T.axis.reduce(4, ji)
                    vk = T.axis.spatial(feat_size, k)
                    T.reads(A[vio, vjo, vii, vji], B[JO_indices[vio, vjo] * 4 + vji, vk], JO_indices[vio, vjo])
                    T.writes(C[vio * 4 + vii, vk])
                    T.sblock_attr({"sparse": True})
                    with T.init():
                        C[vio * 4 + vii, vk] = T.float32(0)
                    C[vio * 4 + vii, vk] = C[vio * 4 + vii, vk] + A[vio, vjo, vii, vji] * B[JO_indices[vio, vjo] * 4 + vji, vk]

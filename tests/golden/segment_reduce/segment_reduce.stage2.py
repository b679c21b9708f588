@T.prim_func
def segment_reduce(x: T.handle, out: T.handle, indptr: T.handle, m: T.int32, max_len: T.int32, feat_size: T.int32, nnz: T.int32) -> None:
    T.func_attr({"sparse_tir_level": 1, "sparsetir.spans": {"segment_reduce0": ["examples/segment_reduce.py:21"], "segment_reduce1": ["examples/segment_reduce.py:21", "examples/segment_reduce.py:24"], "segment_reduce1_init": ["examples/segment_reduce.py:21", "examples/segment_reduce.py:23"]}, "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.dense_variable(I, (max_len, nnz), indptr)
    K = T.dense_fixed(feat_size)
    X = T.match_sparse_buffer(x, (I, J, K), "float32")
    OUT = T.match_sparse_buffer(out, (I, K), "float32")
    J_indptr = T.match_sparse_buffer(indptr, (I,), "int32", extra_storage=1)
    for i in range(m):
        with T.sblock("segment_reduce0"):
            vi = T.axis.spatial(m, i)
            T.reads(J_indptr[vi:vi + 2], X[vi, 0:max_len, 0:feat_size])
            T.writes(OUT[vi, 0:feat_size])
            T.sblock_attr({"sparse": True})
            for j, k in T.grid(J_indptr[vi + 1] - J_indptr[vi], feat_size):
                with T.sblock("segment_reduce1"):
                    vj = T.axis.reduce(max_len, j)
                    vk = T.axis.spatial(feat_size, k)
                    T.reads(X[vi, vj, vk])
                    T.writes(OUT[vi, vk])
                    T.sblock_attr({"sparse": True})
                    with T.init():
                        OUT[vi, vk] = T.float32(0)
                    OUT[vi, vk] = OUT[vi, vk] + X[vi, vj, vk]

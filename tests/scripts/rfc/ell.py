from sparsetir.script import tir as T


# RFC 000, D0: ELLPack with 4 stored columns per row, wrapped in a function.
@T.prim_func
def ell(a: T.handle, indices: T.handle, m: T.int32, n: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.sparse_fixed(I, (n, 4), indices, idtype="int32")
    A = T.match_sparse_buffer(a, (I, J), dtype="float32")
    T.evaluate(0)

from sparsetir.script import tir as T


# RFC 000, D0: a 2-D ragged tensor, wrapped in a function.
@T.prim_func
def ragged(a: T.handle, indptr: T.handle, m: T.int32, n: T.int32) -> None:
    I = T.dense_fixed(m)
    J = T.dense_variable(I, n, indptr, idtype="int32")
    A = T.match_sparse_buffer(a, (I, J), dtype="float32")
    T.evaluate(0)

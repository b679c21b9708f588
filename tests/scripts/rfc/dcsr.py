from sparsetir.script import tir as T


# RFC 000, D0: doubly compressed sparse row, wrapped in a function.
@T.prim_func
def dcsr(
    a: T.handle,
    indptr_i: T.handle,
    indices_i: T.handle,
    indptr_j: T.handle,
    indices_j: T.handle,
    m: T.int32,
    n: T.int32,
    nnz1: T.int32,
    nnz2: T.int32,
) -> None:
    O = T.dense_fixed(1)  # A placeholder axis to create axis I.
    I = T.sparse_variable(O, (m, nnz1), (indptr_i, indices_i), idtype="int32")
    J = T.sparse_variable(I, (n, nnz2), (indptr_j, indices_j), idtype="int32")
    A = T.match_sparse_buffer(a, (O, I, J), dtype="float32")
    T.evaluate(0)

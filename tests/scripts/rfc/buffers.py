from sparsetir.script import tir as T


# RFC 000, D0 "Sparse Buffer": match_sparse_buffer with a scope and alloc_sparse_buffer,
# over the axes I, J1, J2 of the axis examples (axes.py).
@T.prim_func
def buffers(
    a: T.handle,
    indices_1: T.handle,
    indptr_2: T.handle,
    m: T.int32,
    n: T.int32,
    c: T.int32,
) -> None:
    I = T.dense_fixed(m)
    J1 = T.sparse_fixed(I, (n, c), indices_1, idtype="int32")
    J2 = T.dense_variable(I, n, indptr_2, idtype="int32")
    A = T.match_sparse_buffer(a, (I, J1), dtype="float32", scope="global")
    # The RFC writes (I, j2): a typo for the axis J2.
    B = T.alloc_sparse_buffer((I, J2), dtype="float32", scope="shared")
    T.evaluate(0)

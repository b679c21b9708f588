from sparsetir.script import tir as T


# RFC 000, D0 "Sparse Axis": the four axis examples, wrapped in a function that declares the
# handles and scalars they use. The body is only a placeholder.
@T.prim_func
def axes(
    indices_1: T.handle,
    indptr_2: T.handle,
    indptr_3: T.handle,
    indices_3: T.handle,
    m: T.int32,
    n: T.int32,
    c: T.int32,
    n1: T.int32,
    nnz: T.int32,
) -> None:
    I = T.dense_fixed(m)
    # sparse fixed under I: at most n columns, c stored per row (ELL-like)
    J1 = T.sparse_fixed(I, (n, c), indices_1, idtype="int32")
    # dense variable under I: row lengths from indptr_2, at most n
    J2 = T.dense_variable(I, n, indptr_2, idtype="int32")
    # sparse variable under J1: at most n1 per row, nnz in total over (I, J1, J3)
    # The RFC writes idtype="int34", a typo: its own comment says the index type is int64.
    J3 = T.sparse_variable(J1, (n1, nnz), (indptr_3, indices_3), idtype="int64")
    T.evaluate(0)

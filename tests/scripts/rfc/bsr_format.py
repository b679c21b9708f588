from sparsetir.script import tir as T


# RFC 000, D1: the BSR format description. The RFC defines it inside a Python function
# `bsr(block_size)` whose prim_func `func` captures `block_size`; here block_size is the
# literal 4, i.e. the body of `bsr(4)`.
@T.prim_func
def func(
    a: T.handle,
    indptr: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    nnz: T.int32
) -> None:
    IO = T.dense_fixed(m)
    JO = T.sparse_variable(IO, (n, nnz), (indptr, indices), "int32")
    II = T.dense_fixed(4)
    JI = T.dense_fixed(4)
    A = T.match_sparse_buffer(a, (IO, JO, II, JI), "float32")
    T.evaluate(0)  # placeholder, indicates it's the end of the script.


# The RFC then writes `bsr.params[-1]` and `bsr.specialize({block_size_symbol: 4})`, which
# needs block_size as the last scalar parameter: that reading of the same format.
@T.prim_func
def bsr(
    a: T.handle,
    indptr: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    nnz: T.int32,
    block_size: T.int32,
) -> None:
    IO = T.dense_fixed(m)
    JO = T.sparse_variable(IO, (n, nnz), (indptr, indices), "int32")
    II = T.dense_fixed(block_size)
    JI = T.dense_fixed(block_size)
    A = T.match_sparse_buffer(a, (IO, JO, II, JI), "float32")
    T.evaluate(0)

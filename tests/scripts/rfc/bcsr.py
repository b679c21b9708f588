from sparsetir.script import tir as T


# RFC 000, D0: block compressed sparse row, wrapped in a function; the RFC leaves block_size
# free, here it is a scalar parameter.
@T.prim_func
def bcsr(
    a: T.handle,
    indptr: T.handle,
    indices: T.handle,
    mb: T.int32,
    nb: T.int32,
    nnzb: T.int32,
    block_size: T.int32,
) -> None:
    IO = T.dense_fixed(mb)
    JO = T.sparse_variable(IO, (nb, nnzb), (indptr, indices), idtype="int32")
    II = T.dense_fixed(block_size)
    JI = T.dense_fixed(block_size)
    A = T.match_sparse_buffer(a, (IO, JO, II, JI), dtype="float32")
    T.evaluate(0)

from sparsetir.script import tir as T


# Softmax over the stored entries of each CSR row (entries not stored do not take part):
# one outer iteration over rows, three inner ones for the row max, the row sum and the output.
@T.prim_func
def sparse_softmax(
    a: T.handle,
    b: T.handle,
    indptr: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    nnz: T.int32,
) -> None:
    T.func_attr({"global_symbol": "sparse_softmax", "tir.noalias": True, "sparse_tir_level": 2})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I, J), "float32")
    ROW_MAX = T.alloc_sparse_buffer((I,), dtype="float32")
    ROW_SUM = T.alloc_sparse_buffer((I,), dtype="float32")
    with T.sp_iter([I], "S", "sparse_softmax") as [i]:
        with T.sp_iter([J], "R", "row_max") as [j]:
            with T.init():
                ROW_MAX[i] = T.min_value("float32")
            ROW_MAX[i] = T.max(ROW_MAX[i], A[i, j])
        with T.sp_iter([J], "R", "row_sum") as [j]:
            with T.init():
                ROW_SUM[i] = T.float32(0)
            ROW_SUM[i] = ROW_SUM[i] + T.exp(A[i, j] - ROW_MAX[i])
        with T.sp_iter([J], "S", "normalize") as [j]:
            B[i, j] = T.exp(A[i, j] - ROW_MAX[i]) / ROW_SUM[i]

"""The stage-III kernels of the sparse-sparse ops (``sparse_sparse.py``), written in TVMScript.

Two phases, as MKL's ``sp2m``: a symbolic phase finds the output's structure (a kernel counts
each output row's entries, NumPy's prefix sum makes them the row pointer, a second kernel writes
the sorted column indices), a numeric phase fills the values. Every kernel runs its rows in
chunks (the ``part`` boundaries, ``runtime.partition.row_partition``), one chunk per iteration of
a parallel loop, and gives each chunk its own row of a dense workspace (``marker``/``pos``, one
row of ``n`` per chunk, passed in by the caller):

- ``spgemm_count`` / ``spgemm_fill``: ``A @ B``'s pattern; each chunk marks the columns a row
  reaches with the row's number (Gustavson's algorithm), and the fill sorts each row's indices
  (insertion sort up to ``SHORT_ROW`` entries, heapsort beyond).
- ``merge_count`` / ``merge_fill``: the union (``add``) or intersection (``multiply``) of two
  patterns with sorted rows, a two-pointer merge per row; the fill also records, for every output
  entry, which entry of ``A`` and of ``B`` it comes from (``src_a``/``src_b``, -1: none).
- ``spgemm_values``: ``A @ B`` on a given pattern (the product's own, or a mask): a chunk maps
  the row's columns to their output positions in its ``pos`` row, accumulates every product that
  lands on one, and clears the map again.
- ``merge_values``: the values of ``add``/``multiply`` gathered through ``src_a``/``src_b``.

The kernels are plain ``@T.prim_func`` TIR (not SparseTIR scripts: the data-dependent control
flow of a merge or a sort has no sparse iteration to describe it), compiled by
``runtime.build_stage3``. Every loop starts at 0 and its data-dependent start is added to the loop
variable in the body: written as ``range(part[t], part[t + 1])`` inside the parallel loop, or as
``range(b_indptr[a_indices[p]], b_indptr[a_indices[p] + 1])``, the count kernel compiled by a
plain ``tvm.compile`` (TVM 0.27) computed wrong rows (a chunk's rows as if it started at row 0;
inner loops over the wrong entries). The cause was not isolated; the zero-based form is right.
"""

from __future__ import annotations

from .._tvm import tirx
from .._tvm import tvmscript_tirx as T

#: Rows with at most this many entries are sorted by insertion, longer ones by heapsort.
SHORT_ROW = 32


def spgemm_count() -> "tirx.PrimFunc":
    """``counts[i]``: the number of distinct columns of row ``i`` of ``A @ B``."""

    @T.prim_func
    def spgemm_count(a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                     b_indptr: T.Buffer(("k + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                     counts: T.Buffer(("m",), "int32"), marker: T.Buffer(("parts", "n"), "int32"),
                     part: T.Buffer(("parts + 1",), "int32"),
                     m: T.int32, n: T.int32, k: T.int32, nnz_a: T.int32, nnz_b: T.int32, parts: T.int32):
        T.func_attr({"global_symbol": "ops_spgemm_count", "tir.noalias": True})
        for t in T.parallel(parts):
            for j in range(n):
                marker[t, j] = -1
            for ii in range(part[t + 1] - part[t]):
                i = part[t] + ii
                count = T.alloc_buffer((1,), "int32", scope="local")
                count[0] = 0
                for pp in range(a_indptr[i + 1] - a_indptr[i]):
                    p = a_indptr[i] + pp
                    r = a_indices[p]
                    for qq in range(b_indptr[r + 1] - b_indptr[r]):
                        q = b_indptr[r] + qq
                        c = b_indices[q]
                        if marker[t, c] != i:
                            marker[t, c] = i
                            count[0] = count[0] + 1
                counts[i] = count[0]

    return spgemm_count


@T.macro
def _sift_down(x, lo, root, child, end):
    """Heapsort's sift-down of ``x[lo + root[0]]`` within the heap ``x[lo : lo + end]``."""
    while root[0] * 2 + 1 < end:
        child[0] = root[0] * 2 + 1
        if child[0] + 1 < end:
            if x[lo + child[0]] < x[lo + child[0] + 1]:
                child[0] = child[0] + 1
        if x[lo + root[0]] < x[lo + child[0]]:
            top = x[lo + root[0]]
            x[lo + root[0]] = x[lo + child[0]]
            x[lo + child[0]] = top
            root[0] = child[0]
        else:
            root[0] = end  # in place: stop


def spgemm_fill() -> "tirx.PrimFunc":
    """``c_indices``: the sorted columns of each row of ``A @ B`` at the row pointer ``c_indptr``
    (from ``spgemm_count``)."""

    @T.prim_func
    def spgemm_fill(a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                    b_indptr: T.Buffer(("k + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                    c_indptr: T.Buffer(("m + 1",), "int32"), c_indices: T.Buffer(("nnz_c",), "int32"),
                    marker: T.Buffer(("parts", "n"), "int32"), part: T.Buffer(("parts + 1",), "int32"),
                    m: T.int32, n: T.int32, k: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32,
                    parts: T.int32):
        T.func_attr({"global_symbol": "ops_spgemm_fill", "tir.noalias": True})
        for t in T.parallel(parts):
            for j in range(n):
                marker[t, j] = -1
            for ii in range(part[t + 1] - part[t]):
                i = part[t] + ii
                lo = c_indptr[i]
                length = c_indptr[i + 1] - lo
                count = T.alloc_buffer((1,), "int32", scope="local")
                count[0] = 0
                for pp in range(a_indptr[i + 1] - a_indptr[i]):
                    p = a_indptr[i] + pp
                    r = a_indices[p]
                    for qq in range(b_indptr[r + 1] - b_indptr[r]):
                        q = b_indptr[r] + qq
                        c = b_indices[q]
                        if marker[t, c] != i:
                            marker[t, c] = i
                            c_indices[lo + count[0]] = c
                            count[0] = count[0] + 1
                h = T.alloc_buffer((1,), "int32", scope="local")
                moving = T.alloc_buffer((1,), "int32", scope="local")
                if length <= SHORT_ROW:
                    for ss in range(length - 1):
                        key = c_indices[lo + ss + 1]
                        h[0] = ss + 1
                        moving[0] = 1
                        while moving[0] == 1:
                            if h[0] > 0:
                                if c_indices[lo + h[0] - 1] > key:
                                    c_indices[lo + h[0]] = c_indices[lo + h[0] - 1]
                                    h[0] = h[0] - 1
                                else:
                                    moving[0] = 0
                            else:
                                moving[0] = 0
                        c_indices[lo + h[0]] = key
                else:
                    half = length // 2
                    for ss in range(half):
                        h[0] = half - 1 - ss
                        _sift_down(c_indices, lo, h, moving, length)
                    for ss in range(length - 1):
                        end = length - 1 - ss
                        top = c_indices[lo]
                        c_indices[lo] = c_indices[lo + end]
                        c_indices[lo + end] = top
                        h[0] = 0
                        _sift_down(c_indices, lo, h, moving, end)

    return spgemm_fill


def merge_count(union: bool) -> "tirx.PrimFunc":
    """``counts[i]``: the size of the union (``union``) or intersection of row ``i``'s columns
    in ``A`` and ``B`` (sorted rows without duplicates)."""

    @T.prim_func
    def merge_count(a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                    b_indptr: T.Buffer(("m + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                    counts: T.Buffer(("m",), "int32"), part: T.Buffer(("parts + 1",), "int32"),
                    m: T.int32, nnz_a: T.int32, nnz_b: T.int32, parts: T.int32):
        T.func_attr({"global_symbol": "ops_union_count" if union else "ops_intersection_count",
                     "tir.noalias": True})
        for t in T.parallel(parts):
            for ii in range(part[t + 1] - part[t]):
                i = part[t] + ii
                pa = T.alloc_buffer((1,), "int32", scope="local")
                pb = T.alloc_buffer((1,), "int32", scope="local")
                count = T.alloc_buffer((1,), "int32", scope="local")
                pa[0] = a_indptr[i]
                pb[0] = b_indptr[i]
                count[0] = 0
                while pa[0] < a_indptr[i + 1] and pb[0] < b_indptr[i + 1]:
                    ca = a_indices[pa[0]]
                    cb = b_indices[pb[0]]
                    if ca == cb:
                        count[0] = count[0] + 1
                        pa[0] = pa[0] + 1
                        pb[0] = pb[0] + 1
                    elif ca < cb:
                        if union:
                            count[0] = count[0] + 1
                        pa[0] = pa[0] + 1
                    else:
                        if union:
                            count[0] = count[0] + 1
                        pb[0] = pb[0] + 1
                if union:
                    counts[i] = count[0] + (a_indptr[i + 1] - pa[0]) + (b_indptr[i + 1] - pb[0])
                else:
                    counts[i] = count[0]

    return merge_count


def merge_fill(union: bool) -> "tirx.PrimFunc":
    """The columns of the union or intersection at the row pointer ``c_indptr`` (from
    ``merge_count``), and for each output entry the entry of ``A`` and of ``B`` it comes from
    (``src_a``, ``src_b``; -1 where the operand has none)."""

    @T.prim_func
    def merge_fill(a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                   b_indptr: T.Buffer(("m + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                   c_indptr: T.Buffer(("m + 1",), "int32"), c_indices: T.Buffer(("nnz_c",), "int32"),
                   src_a: T.Buffer(("nnz_c",), "int32"), src_b: T.Buffer(("nnz_c",), "int32"),
                   part: T.Buffer(("parts + 1",), "int32"),
                   m: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32, parts: T.int32):
        T.func_attr({"global_symbol": "ops_union_fill" if union else "ops_intersection_fill",
                     "tir.noalias": True})
        for t in T.parallel(parts):
            for ii in range(part[t + 1] - part[t]):
                i = part[t] + ii
                pa = T.alloc_buffer((1,), "int32", scope="local")
                pb = T.alloc_buffer((1,), "int32", scope="local")
                q = T.alloc_buffer((1,), "int32", scope="local")
                pa[0] = a_indptr[i]
                pb[0] = b_indptr[i]
                q[0] = c_indptr[i]
                while pa[0] < a_indptr[i + 1] and pb[0] < b_indptr[i + 1]:
                    ca = a_indices[pa[0]]
                    cb = b_indices[pb[0]]
                    if ca == cb:
                        c_indices[q[0]] = ca
                        src_a[q[0]] = pa[0]
                        src_b[q[0]] = pb[0]
                        q[0] = q[0] + 1
                        pa[0] = pa[0] + 1
                        pb[0] = pb[0] + 1
                    elif ca < cb:
                        if union:
                            c_indices[q[0]] = ca
                            src_a[q[0]] = pa[0]
                            src_b[q[0]] = -1
                            q[0] = q[0] + 1
                        pa[0] = pa[0] + 1
                    else:
                        if union:
                            c_indices[q[0]] = cb
                            src_a[q[0]] = -1
                            src_b[q[0]] = pb[0]
                            q[0] = q[0] + 1
                        pb[0] = pb[0] + 1
                if union:
                    for rr in range(a_indptr[i + 1] - pa[0]):
                        c_indices[q[0] + rr] = a_indices[pa[0] + rr]
                        src_a[q[0] + rr] = pa[0] + rr
                        src_b[q[0] + rr] = -1
                    q[0] = q[0] + (a_indptr[i + 1] - pa[0])
                    for rr in range(b_indptr[i + 1] - pb[0]):
                        c_indices[q[0] + rr] = b_indices[pb[0] + rr]
                        src_a[q[0] + rr] = -1
                        src_b[q[0] + rr] = pb[0] + rr

    return merge_fill


def merge_values(union: bool, dtype: str) -> "tirx.PrimFunc":
    """The values of ``A + B`` (``union``) or ``A ⊙ B`` on the pattern ``merge_fill`` made."""

    @T.prim_func
    def merge_values(a_values: T.Buffer(("nnz_a",), dtype), b_values: T.Buffer(("nnz_b",), dtype),
                     c_values: T.Buffer(("nnz_c",), dtype), c_indptr: T.Buffer(("m + 1",), "int32"),
                     src_a: T.Buffer(("nnz_c",), "int32"), src_b: T.Buffer(("nnz_c",), "int32"),
                     part: T.Buffer(("parts + 1",), "int32"),
                     m: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32, parts: T.int32):
        T.func_attr({"global_symbol": "ops_add_values" if union else "ops_multiply_values",
                     "tir.noalias": True})
        for t in T.parallel(parts):
            for ii in range(part[t + 1] - part[t]):
                i = part[t] + ii
                for qq in range(c_indptr[i + 1] - c_indptr[i]):
                    q = c_indptr[i] + qq
                    if union:
                        # An entry in one operand only is copied (x + 0 would turn -0.0 into 0.0).
                        if src_a[q] < 0:
                            c_values[q] = b_values[src_b[q]]
                        elif src_b[q] < 0:
                            c_values[q] = a_values[src_a[q]]
                        else:
                            c_values[q] = a_values[src_a[q]] + b_values[src_b[q]]
                    else:
                        c_values[q] = a_values[src_a[q]] * b_values[src_b[q]]

    return merge_values


def spgemm_values(dtype: str) -> "tirx.PrimFunc":
    """``A @ B`` at the entries of the pattern ``(c_indptr, c_indices)`` (rows without duplicate
    columns); products that fall outside it are dropped, an entry no product reaches is 0."""

    @T.prim_func
    def spgemm_values(a_values: T.Buffer(("nnz_a",), dtype), b_values: T.Buffer(("nnz_b",), dtype),
                      c_values: T.Buffer(("nnz_c",), dtype),
                      a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                      b_indptr: T.Buffer(("k + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                      c_indptr: T.Buffer(("m + 1",), "int32"), c_indices: T.Buffer(("nnz_c",), "int32"),
                      pos: T.Buffer(("parts", "n"), "int32"), part: T.Buffer(("parts + 1",), "int32"),
                      m: T.int32, n: T.int32, k: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32,
                      parts: T.int32):
        T.func_attr({"global_symbol": "ops_spgemm_values", "tir.noalias": True})
        for t in T.parallel(parts):
            for j in range(n):
                pos[t, j] = -1
            for ii in range(part[t + 1] - part[t]):
                i = part[t] + ii
                lo = c_indptr[i]
                for pp in range(c_indptr[i + 1] - lo):
                    pos[t, c_indices[lo + pp]] = lo + pp
                    c_values[lo + pp] = T.cast(0, dtype)
                for pp in range(a_indptr[i + 1] - a_indptr[i]):
                    p = a_indptr[i] + pp
                    r = a_indices[p]
                    av = a_values[p]
                    for qq in range(b_indptr[r + 1] - b_indptr[r]):
                        q = b_indptr[r] + qq
                        w = pos[t, b_indices[q]]
                        if w >= 0:
                            c_values[w] = c_values[w] + av * b_values[q]
                for pp in range(c_indptr[i + 1] - lo):
                    pos[t, c_indices[lo + pp]] = -1

    return spgemm_values

"""The stage-III kernels of the sparse-sparse ops (``sparse_sparse.py``), written in TVMScript.

Two phases, as MKL's ``sp2m``: a symbolic phase finds the output's structure (a kernel counts
each output row's entries and sums them into the row pointer, a second kernel writes the sorted
column indices), a numeric phase fills the values. For ``spgemm`` the first call's
second kernel writes the values too (the numeric kernel alone runs on later calls). Every kernel runs its rows in
chunks (the ``part`` boundaries, ``runtime.partition.row_partition``), one chunk per iteration of
a parallel loop, and gives each chunk its own row of a dense workspace (``marker``/``pos``, one
row of ``n`` per chunk, passed in by the caller):

- ``spgemm_count`` / ``spgemm_fill``: ``A @ B``'s pattern and values; each chunk marks the
  columns a row reaches with the row's number (Gustavson's algorithm); the fill sums the row in a
  dense accumulator row and puts its columns in order (insertion, a scan of the marker over the
  row's span, or a radix sort: ``spgemm_fill``), or leaves them in the order the products reach
  them (``spgemm_fill_unsorted``, for ``sorted=False``).
- ``merge_count`` / ``merge_fill``: the union (``add``) or intersection (``multiply``) of two
  patterns with sorted rows, a two-pointer merge per row; the count checks the rows as it reads
  them, the fill writes columns and values and, once a pair's pattern is met again, for every
  output entry which entry of ``A`` and of ``B`` it comes from (``src_a``/``src_b``, -1: none).
- ``spgemm_values``: ``A @ B`` on a given pattern (the product's own, or a mask): a chunk maps
  the row's columns to their output positions in its ``pos`` row, accumulates every product that
  lands on one, and clears the map again.
- ``merge_values``: the values of ``add``/``multiply`` gathered through ``src_a``/``src_b``.

The kernels are plain ``@T.prim_func`` TIR (not SparseTIR scripts: the data-dependent control
flow of a merge or a sort has no sparse iteration to describe it), compiled by
``runtime.build_stage3``. Every loop starts at 0, its data-dependent start added to the loop
variable in the body. Written as ``range(b_indptr[a_indices[p]], ...)`` inside a loop that itself
starts at ``a_indptr[i]``, the kernels computed wrong rows under a plain ``tvm.compile``: TVM
0.27's ``CanonicalizeLoop`` shifts a loop's variable in its body but not in nested loops' bounds.
``build_stage3`` now counts every loop from 0 first (``transforms/loops_from_zero.py``), so both
forms are right there; these kernels keep the zero-based form.
"""

from __future__ import annotations

from .._tvm import tirx
from .._tvm import tvmscript_tirx as T

#: Rows of ``A @ B`` with at most this many entries are sorted by insertion.
SHORT_ROW = 32
#: A longer row whose columns lie within this many times its length of each other is put in
#: order by scanning its marker row over that span; a wider one by a radix sort.
SCAN_SPAN = 4
#: A row whose span is at most this many times its length is listed in order from a bitmap
#: of its columns (a 64-bit word per 64 columns of the span); 0: never.
BITMAP_SPAN = 64
#: The radix sort's digits: one byte.
RADIX = 256
#: A row sorted by buckets uses at most this many (a chunk's ``hist`` row holds them).
BUCKETS = 4096
#: A bucket holding more entries than this makes the row go to the radix sort.
CROWDED = 16


@T.macro
def _chunk_offsets(ptr, sizes, part, parts):
    # ``sizes[t + 1]`` holds chunk ``t``'s total and its rows' entries of ``ptr`` (a row pointer
    # or a running sum) count from 0: sum the sizes in order, then add each chunk's offset to
    # its rows (an int32 pointer's casts wrap only when the total is past the int32 range,
    # which the caller refuses).
    ptr[0] = T.Cast(ptr.dtype, 0)
    sizes[0] = T.int64(0)
    for t in range(parts):
        sizes[t + 1] = sizes[t + 1] + sizes[t]
    for t in T.parallel(parts):
        offset: T.let = T.Cast(ptr.dtype, sizes[t])
        if offset != 0:
            for rr in range(part[t + 1] - part[t]):
                ptr[part[t] + rr + 1] = ptr[part[t] + rr + 1] + offset


def row_bounds() -> "tirx.PrimFunc":
    """``lows[r]``, ``highs[r]``: the least and greatest column of row ``r`` (``n`` and -1 for
    an empty row; rows in any order)."""

    @T.prim_func
    def row_bounds(indptr: T.Buffer(("m + 1",), "int32"), indices: T.Buffer(("nnz",), "int32"),
                   lows: T.Buffer(("m",), "int32"), highs: T.Buffer(("m",), "int32"),
                   part: T.Buffer(("parts + 1",), "int32"), m: T.int32, n: T.int32, nnz: T.int32, parts: T.int32):
        T.func_attr({"global_symbol": "ops_row_bounds", "tir.noalias": True})
        for t in T.parallel(parts):
            for ii in range(part[t + 1] - part[t]):
                i: T.let = part[t] + ii
                least = T.alloc_buffer((1,), "int32", scope="global")
                most = T.alloc_buffer((1,), "int32", scope="global")
                least[0] = n
                most[0] = -1
                for pp in range(indptr[i + 1] - indptr[i]):
                    least[0] = T.min(least[0], indices[indptr[i] + pp])
                    most[0] = T.max(most[0], indices[indptr[i] + pp])
                lows[i] = least[0]
                highs[i] = most[0]

    return row_bounds


def spgemm_count() -> "tirx.PrimFunc":
    """The row pointer ``c_indptr`` of ``A @ B`` (each row's distinct columns) and ``work``, the
    running sum of each row's products and columns (the fill's work, int64: the fill's chunks);
    ``sizes[t + 1]`` and ``work_sizes[t + 1]``: the entries and the work of chunks ``0..t``
    (int64, so the caller sees a total past the int32 range); ``longest[t]``: chunk ``t``'s most
    entries in a row; ``lows[i]``, ``highs[i]``: row ``i``'s least and greatest column (``n``
    and -1 for an empty row), from those of ``B``'s rows (``row_bounds``). The sums run in the
    kernel, as ``merge_count``'s."""

    @T.prim_func
    def spgemm_count(a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                     b_indptr: T.Buffer(("k + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                     c_indptr: T.Buffer(("m + 1",), "int32"), work: T.Buffer(("m + 1",), "int64"),
                     sizes: T.Buffer(("parts + 1",), "int64"), work_sizes: T.Buffer(("parts + 1",), "int64"),
                     longest: T.Buffer(("parts",), "int32"),
                     lows: T.Buffer(("m",), "int32"), highs: T.Buffer(("m",), "int32"),
                     b_lows: T.Buffer(("k",), "int32"), b_highs: T.Buffer(("k",), "int32"),
                     marker: T.Buffer(("parts", "n"), "int32"), part: T.Buffer(("parts + 1",), "int32"),
                     m: T.int32, n: T.int32, k: T.int32, nnz_a: T.int32, nnz_b: T.int32, parts: T.int32):
        T.func_attr({"global_symbol": "ops_spgemm_count", "tir.noalias": True})
        for t in T.parallel(parts):
            run = T.alloc_buffer((1,), "int64", scope="global")
            run_work = T.alloc_buffer((1,), "int64", scope="global")
            most_row = T.alloc_buffer((1,), "int32", scope="global")
            run[0] = T.int64(0)
            run_work[0] = T.int64(0)
            most_row[0] = 0
            for j in range(n):
                marker[t, j] = -1
            for ii in range(part[t + 1] - part[t]):
                i: T.let = part[t] + ii
                count = T.alloc_buffer((1,), "int32", scope="global")
                products = T.alloc_buffer((1,), "int64", scope="global")
                least = T.alloc_buffer((1,), "int32", scope="global")
                most = T.alloc_buffer((1,), "int32", scope="global")
                count[0] = 0
                products[0] = T.int64(0)
                least[0] = n
                most[0] = -1
                for pp in range(a_indptr[i + 1] - a_indptr[i]):
                    p: T.let = a_indptr[i] + pp
                    r: T.let = a_indices[p]
                    products[0] = products[0] + T.Cast("int64", b_indptr[r + 1] - b_indptr[r])
                    least[0] = T.min(least[0], b_lows[r])
                    most[0] = T.max(most[0], b_highs[r])
                    for qq in range(b_indptr[r + 1] - b_indptr[r]):
                        # Branch-free: whether a column is new is a coin toss for the predictor.
                        c: T.let = b_indices[b_indptr[r] + qq]
                        count[0] = count[0] + T.Cast("int32", marker[t, c] != i)
                        marker[t, c] = i
                run[0] = run[0] + T.Cast("int64", count[0])
                run_work[0] = run_work[0] + products[0] + T.Cast("int64", count[0])
                c_indptr[i + 1] = T.Cast("int32", run[0])
                work[i + 1] = run_work[0]
                most_row[0] = T.max(most_row[0], count[0])
                lows[i] = least[0]
                highs[i] = most[0]
            sizes[t + 1] = run[0]
            work_sizes[t + 1] = run_work[0]
            longest[t] = most_row[0]
        _chunk_offsets(c_indptr, sizes, part, parts)
        _chunk_offsets(work, work_sizes, part, parts)

    return spgemm_count


@T.macro
def _insertion_sort(x, lo, length, h):
    """Sort ``x[lo : lo + length]`` in place by insertion (short rows, or nearly sorted ones)."""
    for ss in range(length - 1):
        key: T.let = x[lo + ss + 1]
        h[0] = ss + 1
        # Both sides are evaluated (no short circuit in TIR): the index is clamped into the row.
        while h[0] > 0 and x[lo + T.max(h[0] - 1, 0)] > key:
            x[lo + h[0]] = x[lo + h[0] - 1]
            h[0] = h[0] - 1
        x[lo + h[0]] = key


@T.macro
def _radix_pass(src, src_lo, dst, dst_lo, length, low, shift, hist, t, run):
    """One pass of an LSD radix sort: ``src[src_lo : src_lo + length]`` stably by the byte
    ``(x - low) >> shift`` into ``dst[dst_lo : dst_lo + length]`` (``hist``: chunk ``t``'s 256
    counters)."""
    for d in range(RADIX):
        hist[t, d] = 0
    for pp in range(length):
        digit: T.let = ((src[src_lo + pp] - low) >> shift) & (RADIX - 1)
        hist[t, digit] = hist[t, digit] + 1
    run[0] = 0
    for d in range(RADIX):
        size: T.let = hist[t, d]
        hist[t, d] = run[0]
        run[0] = run[0] + size
    for pp in range(length):
        x: T.let = src[src_lo + pp]
        digit: T.let = ((x - low) >> shift) & (RADIX - 1)
        dst[dst_lo + hist[t, digit]] = x
        hist[t, digit] = hist[t, digit] + 1


@T.macro
def _mark_and_sum(a_indptr, a_indices, a_values, b_indptr, b_indices, b_values, marker, acc, bits, t, i, with_bits,
                  listed, lo, length, count, with_list):
    """Row ``i``'s products in one pass: each column marked in chunk ``t``'s marker row (and,
    ``with_bits``, its bit set in the chunk's ``bits`` row; ``with_list``, appended to
    ``listed[lo:lo + length]`` at ``count[0]``, which it advances), its first product starting
    its sum in ``acc``, the others adding to it."""
    for pp in range(a_indptr[i + 1] - a_indptr[i]):
        p: T.let = a_indptr[i] + pp
        r: T.let = a_indices[p]
        av: T.let = a_values[p]
        for qq in range(b_indptr[r + 1] - b_indptr[r]):
            q: T.let = b_indptr[r] + qq
            c: T.let = b_indices[q]
            if marker[t, c] != i:
                marker[t, c] = i
                acc[t, c] = av * b_values[q]
                if with_bits:
                    bits[t, c >> 6] = bits[t, c >> 6] | (T.uint64(1) << T.Cast("uint64", c & 63))
                if with_list:
                    # At most ``length`` columns are new (the count found them); the clamp
                    # keeps a wrong row pointer's writes inside the row.
                    listed[lo + T.min(count[0], length - 1)] = c
                    count[0] = count[0] + 1
            else:
                acc[t, c] = acc[t, c] + av * b_values[q]


def spgemm_fill(dtype: str) -> "tirx.PrimFunc":
    """``A @ B`` at the row pointer ``c_indptr`` (from ``spgemm_count``): the sorted columns
    ``c_indices`` and the values ``c_values``, the first time a pair of structures meets.

    A chunk keeps a dense accumulator row (``acc``) beside its marker row, and sums each row's
    products there. The columns are put in order the cheapest way for the row: by scanning the
    marker over the
    columns between the row's least and greatest (the span, known from ``spgemm_count``) when
    the span is at most ``SCAN_SPAN`` times the row's length (and the row longer than
    ``SHORT_ROW``); from a bitmap of the columns (one 64-bit word per 64 columns of the span,
    set bits read lowest first) when the span is at most ``BITMAP_SPAN`` times the length; the
    rows that remain, whose columns a first pass lists (unsorted, in the chunk's ``width``
    places of ``tmp``, ``width`` the longest row plus one), by insertion (at most ``SHORT_ROW``
    entries), else by a counting sort into at most one bucket per entry, finished by insertion,
    or, when a bucket holds more than ``CROWDED`` entries, an LSD radix sort on
    ``column - least`` (one pass per byte of the span). The values are read from the
    accumulator in that order. The scan and the bitmap mark and sum in one pass.
    """

    @T.prim_func
    def spgemm_fill(a_values: T.Buffer(("nnz_a",), dtype), b_values: T.Buffer(("nnz_b",), dtype),
                    c_values: T.Buffer(("nnz_c",), dtype),
                    a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                    b_indptr: T.Buffer(("k + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                    c_indptr: T.Buffer(("m + 1",), "int32"), c_indices: T.Buffer(("nnz_c",), "int32"),
                    lows: T.Buffer(("m",), "int32"), highs: T.Buffer(("m",), "int32"),
                    marker: T.Buffer(("parts", "n"), "int32"), acc: T.Buffer(("parts", "n"), dtype),
                    bits: T.Buffer(("parts", "words"), "uint64"),
                    tmp: T.Buffer(("parts * width",), "int32"), hist: T.Buffer(("parts", BUCKETS), "int32"),
                    part: T.Buffer(("parts + 1",), "int32"),
                    m: T.int32, n: T.int32, k: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32,
                    width: T.int32, words: T.int32, parts: T.int32):
        T.func_attr({"global_symbol": "ops_spgemm_fill", "tir.noalias": True})
        for t in T.parallel(parts):
            for j in range(n):
                marker[t, j] = -1
            for ii in range(part[t + 1] - part[t]):
                i: T.let = part[t] + ii
                lo: T.let = c_indptr[i]
                length: T.let = c_indptr[i + 1] - lo
                low: T.let = lows[i]
                span: T.let = highs[i] - low + 1
                count = T.alloc_buffer((1,), "int32", scope="global")
                h = T.alloc_buffer((1,), "int32", scope="global")
                crowd = T.alloc_buffer((1,), "int32", scope="global")
                if span > SCAN_SPAN * length and span <= BITMAP_SPAN * length:
                    # Columns spread over a span up to BITMAP_SPAN x the row: one pass marks them
                    # (marker and a bit per column in the chunk's ``bits`` row) and sums the
                    # products; the set bits, word by word, then list them in order, and the
                    # words are cleared again.
                    _mark_and_sum(a_indptr, a_indices, a_values, b_indptr, b_indices, b_values, marker, acc, bits, t, i,
                                  True, c_indices, lo, length, count, False)
                    h[0] = lo
                    for ww in range((highs[i] >> 6) - (low >> 6) + 1):
                        w: T.let = (low >> 6) + ww
                        word = T.alloc_buffer((1,), "uint64", scope="global")
                        word[0] = bits[t, w]
                        bits[t, w] = T.uint64(0)
                        while word[0] != T.uint64(0):
                            # The lowest set bit's place: word ^ (word - 1) sets it and the bits
                            # below it.
                            c: T.let = w * 64 + T.Cast("int32", T.popcount(word[0] ^ (word[0] - T.uint64(1)))) - 1
                            c_indices[h[0]] = c
                            c_values[h[0]] = acc[t, c]
                            h[0] = h[0] + 1
                            word[0] = word[0] & (word[0] - T.uint64(1))
                elif length > SHORT_ROW and span <= SCAN_SPAN * length:
                    # The columns lie close: one branch-free pass marks them and sums the
                    # products (a column's first product starts its sum); the marker row then
                    # lists them in order (below).
                    _mark_and_sum(a_indptr, a_indices, a_values, b_indptr, b_indices, b_values, marker, acc, bits, t, i,
                                  False, c_indices, lo, length, count, False)
                else:
                    # Two branch-free passes over the row's products (whether a column is new
                    # is a coin toss for the predictor: one pass with a branch measured slower):
                    # the first lists the new columns in ``tmp`` (every column is written at the
                    # next free place, which moves on only for a new one; ``tmp`` has a spare
                    # place past the longest row), the second sums every product into the
                    # accumulator, cleared at the row's columns in between.
                    count[0] = 0
                    for pp in range(a_indptr[i + 1] - a_indptr[i]):
                        r: T.let = a_indices[a_indptr[i] + pp]
                        for qq in range(b_indptr[r + 1] - b_indptr[r]):
                            c: T.let = b_indices[b_indptr[r] + qq]
                            tmp[t * width + count[0]] = c
                            count[0] = count[0] + T.Cast("int32", marker[t, c] != i)
                            marker[t, c] = i
                    for pp in range(length):
                        acc[t, tmp[t * width + pp]] = T.cast(0, dtype)
                    for pp in range(a_indptr[i + 1] - a_indptr[i]):
                        p: T.let = a_indptr[i] + pp
                        r: T.let = a_indices[p]
                        av: T.let = a_values[p]
                        for qq in range(b_indptr[r + 1] - b_indptr[r]):
                            q: T.let = b_indptr[r] + qq
                            acc[t, b_indices[q]] = acc[t, b_indices[q]] + av * b_values[q]
                if span > SCAN_SPAN * length and span <= BITMAP_SPAN * length:
                    h[0] = 0  # written above
                elif length <= SHORT_ROW:
                    for pp in range(length):
                        c_indices[lo + pp] = tmp[t * width + pp]
                    _insertion_sort(c_indices, lo, length, h)
                    for pp in range(length):
                        c_values[lo + pp] = acc[t, c_indices[lo + pp]]
                elif span <= SCAN_SPAN * length:
                    # The marker row lists the row's columns in order. Branch-free: every column
                    # of the span is written at the next free place, which moves on only past a
                    # column of the row; the last column of the span is one, so no write leaves
                    # the row.
                    h[0] = lo
                    for cc in range(span):
                        c_indices[h[0]] = low + cc
                        c_values[h[0]] = acc[t, low + cc]
                        h[0] = h[0] + T.Cast("int32", marker[t, low + cc] == i)
                else:
                    # Buckets of 2^shift columns, at most one per entry (and BUCKETS): a counting
                    # sort into them leaves the row nearly in order for an insertion sort, unless
                    # a bucket is crowded (columns bunched), then an LSD radix sort.
                    h[0] = 0
                    while ((span - 1) >> h[0]) >= T.min(length, BUCKETS):
                        h[0] = h[0] + 1
                    shift: T.let = h[0]
                    buckets: T.let = ((span - 1) >> shift) + 1
                    for d in range(buckets):
                        hist[t, d] = 0
                    for pp in range(length):
                        digit: T.let = (tmp[t * width + pp] - low) >> shift
                        hist[t, digit] = hist[t, digit] + 1
                    h[0] = 0
                    crowd[0] = 0
                    for d in range(buckets):
                        size: T.let = hist[t, d]
                        hist[t, d] = h[0]
                        h[0] = h[0] + size
                        crowd[0] = T.max(crowd[0], size)
                    if crowd[0] <= CROWDED:
                        for pp in range(length):
                            x: T.let = tmp[t * width + pp]
                            digit: T.let = (x - low) >> shift
                            c_indices[lo + hist[t, digit]] = x
                            hist[t, digit] = hist[t, digit] + 1
                        _insertion_sort(c_indices, lo, length, h)
                    else:
                        passes: T.let = (1 + T.Cast("int32", span > RADIX) + T.Cast("int32", span > RADIX * RADIX)
                                         + T.Cast("int32", span > RADIX * RADIX * RADIX))
                        for ps in range(passes):
                            if ps % 2 == 0:
                                _radix_pass(tmp, t * width, c_indices, lo, length, low, ps * 8, hist, t, h)
                            else:
                                _radix_pass(c_indices, lo, tmp, t * width, length, low, ps * 8, hist, t, h)
                        if passes % 2 == 0:
                            for pp in range(length):
                                c_indices[lo + pp] = tmp[t * width + pp]
                    for pp in range(length):
                        c_values[lo + pp] = acc[t, c_indices[lo + pp]]

    return spgemm_fill


def spgemm_fill_unsorted(dtype: str) -> "tirx.PrimFunc":
    """``A @ B`` at the row pointer ``c_indptr`` (from ``spgemm_count``), each row's columns in
    the order its products first reach them (``ops.spgemm(..., sorted=False)``, as MKL leaves
    them): the columns ``c_indices`` and the values ``c_values``, the first time a pair of
    structures meets. A chunk sums each row in its dense accumulator row (``acc``) and marks the
    columns it reached in its marker row, as ``spgemm_fill``, but puts nothing in order: one
    pass over the row's products appends each new column and starts its sum, or adds to it, and
    the values are then read from the accumulator in the columns' order.

    The pass branches on whether a column is new. Measured against two branch-free passes (list
    the columns, then sum) on cora, pubmed, bcsstk16 and rgg_n_2_15_s0, and against choosing
    per row by the share of new columns, the one pass was as fast or faster on all but pubmed
    (0.85x there): the branch mostly goes one way (a graph's products mostly reach new columns,
    a mesh's mostly old ones).
    """

    @T.prim_func
    def spgemm_fill_unsorted(a_values: T.Buffer(("nnz_a",), dtype), b_values: T.Buffer(("nnz_b",), dtype),
                             c_values: T.Buffer(("nnz_c",), dtype),
                             a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                             b_indptr: T.Buffer(("k + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                             c_indptr: T.Buffer(("m + 1",), "int32"), c_indices: T.Buffer(("nnz_c",), "int32"),
                             marker: T.Buffer(("parts", "n"), "int32"), acc: T.Buffer(("parts", "n"), dtype),
                             part: T.Buffer(("parts + 1",), "int32"),
                             m: T.int32, n: T.int32, k: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32,
                             parts: T.int32):
        T.func_attr({"global_symbol": "ops_spgemm_fill_unsorted", "tir.noalias": True})
        for t in T.parallel(parts):
            for j in range(n):
                marker[t, j] = -1
            for ii in range(part[t + 1] - part[t]):
                i: T.let = part[t] + ii
                lo: T.let = c_indptr[i]
                length: T.let = c_indptr[i + 1] - lo
                count = T.alloc_buffer((1,), "int32", scope="global")
                count[0] = 0
                _mark_and_sum(a_indptr, a_indices, a_values, b_indptr, b_indices, b_values, marker, acc, None, t, i,
                              False, c_indices, lo, length, count, True)
                for pp in range(length):
                    c_values[lo + pp] = acc[t, c_indices[lo + pp]]

    return spgemm_fill_unsorted


@T.macro
def _chunk_valid(indptr, indices, r0, r1, n, bad):
    # Adds to ``bad`` the entries of rows [r0, r1) outside [0, n) and the places where a row's
    # columns do not increase, in one flat pass over the chunk that vectorizes (a pass per row
    # costs more than the row's few entries): every entry out of range and every descent
    # between neighbouring entries counts, and the descents where a row ends and the next
    # begins are taken back.
    lo: T.let = indptr[r0]
    hi: T.let = indptr[r1]
    for p in range(T.max(hi - lo - 1, 0)):
        bad[0] = (bad[0] + T.Cast("int32", T.Cast("uint32", indices[lo + p]) >= T.Cast("uint32", n))
                  + T.Cast("int32", indices[lo + p] >= indices[lo + p + 1]))
    if lo < hi:
        bad[0] = bad[0] + T.Cast("int32", T.Cast("uint32", indices[hi - 1]) >= T.Cast("uint32", n))
    # A row start ``s`` after a nonempty row, inside the chunk: the pair (s - 1, s) spans rows.
    for rr in range(T.max(r1 - r0 - 1, 0)):
        s: T.let = indptr[r0 + rr + 1]
        if indptr[r0 + rr] < s and s < hi:
            bad[0] = bad[0] - T.Cast("int32", indices[s - 1] >= indices[s])


def merge_count(union: bool) -> "tirx.PrimFunc":
    """The row pointer ``c_indptr`` of the union (``union``) or intersection of ``A``'s and
    ``B``'s rows, and ``sizes[t + 1]``: the entries of chunks ``0..t`` (int64, so the caller
    sees a total past the int32 range); ``bad[t]`` is 1 when chunk ``t``'s rows are not all
    strictly increasing within ``[0, n)`` in both (the caller names the problem): the
    structures' check rides on the pass that reads them.

    Each chunk writes its rows' running count (from 0) into the row pointer; after the chunks,
    their sizes are summed in order and each chunk adds its offset (the prefix sum in the
    kernel: NumPy's ``cumsum`` takes about 2 ns an entry, as long as counting pubmed's rows).

    A chunk whose rows hold the same columns in both (adding matrices of one pattern, or a
    symmetric one and its transpose) is recognized by flat comparisons that vectorize. In other
    chunks, with ``marked``, a row's columns in ``A`` mark the chunk's row of ``marker`` with
    the row's number and its columns in ``B`` count the marks they find: no branch on a
    comparison and no chain of dependent loads (rows whose merge mispredicts counted in a fifth
    of the time, rows that predict well in the same). Without ``marked`` (too many columns for
    a row of marks per chunk) rows merge, branching on each step's comparison (without
    branches, each step adding its comparisons to the pointers, it took as long on randomly
    interleaved rows, a chain of dependent loads per step, and 1.3x as long on rows whose
    branches predict well). Marks are written and read only for columns in ``[0, n)``, and the
    count runs only on chunks found valid, so an in-place edit of the columns cannot make it
    address memory elsewhere."""

    @T.prim_func
    def merge_count(a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                    b_indptr: T.Buffer(("m + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                    c_indptr: T.Buffer(("m + 1",), "int32"), sizes: T.Buffer(("parts + 1",), "int64"),
                    bad: T.Buffer(("parts",), "int32"), part: T.Buffer(("parts + 1",), "int32"),
                    marker: T.Buffer(("marker_size",), "int32"),
                    m: T.int32, n: T.int32, nnz_a: T.int32, nnz_b: T.int32, parts: T.int32, marked: T.int32,
                    marker_size: T.int32):
        T.func_attr({"global_symbol": "ops_union_count" if union else "ops_intersection_count",
                     "tir.noalias": True})
        for t in T.parallel(parts):
            r0: T.let = part[t]
            r1: T.let = part[t + 1]
            a0: T.let = a_indptr[r0]
            b0: T.let = b_indptr[r0]
            wrong = T.alloc_buffer((1,), "int32", scope="global")
            differ = T.alloc_buffer((1,), "int32", scope="global")
            pa = T.alloc_buffer((1,), "int32", scope="global")
            pb = T.alloc_buffer((1,), "int32", scope="global")
            both = T.alloc_buffer((1,), "int32", scope="global")
            run = T.alloc_buffer((1,), "int64", scope="global")
            wrong[0] = 0
            _chunk_valid(a_indptr, a_indices, r0, r1, n, wrong)
            differ[0] = T.Cast("int32", a_indptr[r1] - a0 != b_indptr[r1] - b0)
            if differ[0] == 0:
                for rr in range(r1 - r0):
                    differ[0] = differ[0] | T.Cast("int32", a_indptr[r0 + rr] - a0 != b_indptr[r0 + rr] - b0)
            if differ[0] == 0:
                for p in range(a_indptr[r1] - a0):
                    differ[0] = differ[0] | T.Cast("int32", a_indices[a0 + p] != b_indices[b0 + p])
            if differ[0] == 0:
                for rr in range(r1 - r0):
                    c_indptr[r0 + rr + 1] = a_indptr[r0 + rr + 1] - a0
                sizes[t + 1] = T.Cast("int64", a_indptr[r1] - a0)
            else:
                _chunk_valid(b_indptr, b_indices, r0, r1, n, wrong)
                run[0] = T.int64(0)
                by_marks: T.let = marked != 0 and wrong[0] == 0
                if by_marks:
                    for c in range(n):
                        marker[t * n + c] = -1
                for ii in range(r1 - r0):
                    i: T.let = r0 + ii
                    a_hi: T.let = a_indptr[i + 1]
                    b_hi: T.let = b_indptr[i + 1]
                    both[0] = 0
                    if by_marks:
                        for p in range(a_hi - a_indptr[i]):
                            ca: T.let = a_indices[a_indptr[i] + p]
                            if T.Cast("uint32", ca) < T.Cast("uint32", n):
                                marker[t * n + ca] = i
                        for p in range(b_hi - b_indptr[i]):
                            cb: T.let = b_indices[b_indptr[i] + p]
                            both[0] = both[0] + T.Cast("int32", T.if_then_else(
                                T.Cast("uint32", cb) < T.Cast("uint32", n), marker[t * n + cb], -1) == i)
                    else:
                        pa[0] = a_indptr[i]
                        pb[0] = b_indptr[i]
                        while pa[0] < a_hi and pb[0] < b_hi:
                            ca: T.let = a_indices[pa[0]]
                            cb: T.let = b_indices[pb[0]]
                            if ca == cb:
                                both[0] = both[0] + 1
                                pa[0] = pa[0] + 1
                                pb[0] = pb[0] + 1
                            elif ca < cb:
                                pa[0] = pa[0] + 1
                            else:
                                pb[0] = pb[0] + 1
                    if union:
                        run[0] = run[0] + T.Cast("int64", (a_hi - a_indptr[i]) + (b_hi - b_indptr[i]) - both[0])
                    else:
                        run[0] = run[0] + T.Cast("int64", both[0])
                    c_indptr[i + 1] = T.Cast("int32", run[0])
                sizes[t + 1] = run[0]
            bad[t] = T.Cast("int32", wrong[0] != 0)
        _chunk_offsets(c_indptr, sizes, part, parts)

    return merge_count


def merge_fill(union: bool, dtype: str, sources: bool) -> "tirx.PrimFunc":
    """The columns and values of the union or intersection at the row pointer ``c_indptr``
    (from ``merge_count``), and with ``sources`` for each output entry the entry of ``A`` and
    of ``B`` it comes from (``src_a``, ``src_b``; -1 where the operand has none), which
    ``merge_values`` gathers the values of later calls through.

    Every write stays inside its row of the output, also when the columns were edited in place
    since they were counted (a wrong answer then, never a write elsewhere)."""

    @T.macro(hygienic=False)
    def put(q, column, pa, pb, value):
        c_indices[q] = column
        if sources:
            src_a[q] = pa
            src_b[q] = pb
        c_values[q] = value

    @T.macro(hygienic=False)
    def merge_rows(t):
        # Chunk ``t``'s rows by a two-pointer merge.
        for ii in range(part[t + 1] - part[t]):
            i: T.let = part[t] + ii
            a_hi: T.let = a_indptr[i + 1]
            b_hi: T.let = b_indptr[i + 1]
            c_hi: T.let = c_indptr[i + 1]
            pa = T.alloc_buffer((1,), "int32", scope="global")
            pb = T.alloc_buffer((1,), "int32", scope="global")
            q = T.alloc_buffer((1,), "int32", scope="global")
            pa[0] = a_indptr[i]
            pb[0] = b_indptr[i]
            q[0] = c_indptr[i]
            while pa[0] < a_hi and pb[0] < b_hi and q[0] < c_hi:
                ca: T.let = a_indices[pa[0]]
                cb: T.let = b_indices[pb[0]]
                if ca == cb:
                    if union:
                        put(q[0], ca, pa[0], pb[0], a_values[pa[0]] + b_values[pb[0]])
                    else:
                        put(q[0], ca, pa[0], pb[0], a_values[pa[0]] * b_values[pb[0]])
                    q[0] = q[0] + 1
                    pa[0] = pa[0] + 1
                    pb[0] = pb[0] + 1
                elif ca < cb:
                    if union:
                        # An entry in one operand only is copied (x + 0 would turn -0.0 into 0.0).
                        put(q[0], ca, pa[0], -1, a_values[pa[0]])
                        q[0] = q[0] + 1
                    pa[0] = pa[0] + 1
                else:
                    if union:
                        put(q[0], cb, -1, pb[0], b_values[pb[0]])
                        q[0] = q[0] + 1
                    pb[0] = pb[0] + 1
            if union:
                for rr in range(T.min(a_hi - pa[0], c_hi - q[0])):
                    put(q[0] + rr, a_indices[pa[0] + rr], pa[0] + rr, -1, a_values[pa[0] + rr])
                q[0] = q[0] + T.min(a_hi - pa[0], c_hi - q[0])
                for rr in range(T.min(b_hi - pb[0], c_hi - q[0])):
                    put(q[0] + rr, b_indices[pb[0] + rr], -1, pb[0] + rr, b_values[pb[0] + rr])

    @T.prim_func
    def merge_fill(a_values: T.Buffer(("nnz_a",), dtype), b_values: T.Buffer(("nnz_b",), dtype),
                   c_values: T.Buffer(("nnz_c",), dtype),
                   a_indptr: T.Buffer(("m + 1",), "int32"), a_indices: T.Buffer(("nnz_a",), "int32"),
                   b_indptr: T.Buffer(("m + 1",), "int32"), b_indices: T.Buffer(("nnz_b",), "int32"),
                   c_indptr: T.Buffer(("m + 1",), "int32"), c_indices: T.Buffer(("nnz_c",), "int32"),
                   src_a: T.Buffer(("nnz_s",), "int32"), src_b: T.Buffer(("nnz_s",), "int32"),
                   part: T.Buffer(("parts + 1",), "int32"),
                   m: T.int32, nnz_a: T.int32, nnz_b: T.int32, nnz_c: T.int32, nnz_s: T.int32, parts: T.int32):
        T.func_attr({"global_symbol": ("ops_union_fill" if union else "ops_intersection_fill")
                     + ("_sources" if sources else ""), "tir.noalias": True})
        for t in T.parallel(parts):
            a0: T.let = a_indptr[part[t]]
            b0: T.let = b_indptr[part[t]]
            c0: T.let = c_indptr[part[t]]
            length: T.let = c_indptr[part[t + 1]] - c0
            if length == a_indptr[part[t + 1]] - a0 and length == b_indptr[part[t + 1]] - b0:
                # The chunk's result has as many entries as either operand, in a union or an
                # intersection: its rows hold the same columns in both (``merge_count`` found
                # them so), entry by entry, one flat loop that vectorizes.
                for p in range(length):
                    if union:
                        put(c0 + p, a_indices[a0 + p], a0 + p, b0 + p, a_values[a0 + p] + b_values[b0 + p])
                    else:
                        put(c0 + p, a_indices[a0 + p], a0 + p, b0 + p, a_values[a0 + p] * b_values[b0 + p])
            else:
                merge_rows(t)

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
            # One flat loop over the chunk's entries: a value does not depend on its row, and
            # rows of a few entries each made a loop per row cost more than the gathers.
            lo: T.let = c_indptr[part[t]]
            for qq in range(c_indptr[part[t + 1]] - lo):
                q: T.let = lo + qq
                if union:
                    # Without branches (entries of one operand only come in no order a branch
                    # predicts); an entry in one operand only is copied (x + 0 would turn -0.0
                    # into 0.0). The caller passes no empty operand: every load is in bounds.
                    av: T.let = a_values[T.max(src_a[q], 0)]
                    bv: T.let = b_values[T.max(src_b[q], 0)]
                    c_values[q] = T.Select(src_a[q] < 0, bv, T.Select(src_b[q] < 0, av, av + bv))
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
                i: T.let = part[t] + ii
                lo: T.let = c_indptr[i]
                for pp in range(c_indptr[i + 1] - lo):
                    pos[t, c_indices[lo + pp]] = lo + pp
                    c_values[lo + pp] = T.cast(0, dtype)
                for pp in range(a_indptr[i + 1] - a_indptr[i]):
                    p: T.let = a_indptr[i] + pp
                    r: T.let = a_indices[p]
                    av: T.let = a_values[p]
                    for qq in range(b_indptr[r + 1] - b_indptr[r]):
                        q: T.let = b_indptr[r] + qq
                        w: T.let = pos[t, b_indices[q]]
                        if w >= 0:
                            c_values[w] = c_values[w] + av * b_values[q]
                for pp in range(c_indptr[i + 1] - lo):
                    pos[t, c_indices[lo + pp]] = -1

    return spgemm_values

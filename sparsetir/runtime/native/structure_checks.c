/* The indptr check of a kernel call, one pass over the array (runtime/native_checks.py).
 *
 * A kernel reads indices[indptr[i] + j] without bounds checks, so every checked call verifies
 * its indptr. NumPy does that in several passes, each with a fixed cost that outweighs the pass
 * itself on small matrices; this loop does it in one, and only says whether the array is
 * valid: on a failure the NumPy checks run again to name the first bad position.
 */
#include <stdint.h>

/* Vectorized: the loop below is a plain reduction (GCC vectorizes it at -O3, not at the -O2
 * the launcher is built with). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

/* 1 when p[0..rows] is an indptr: p[0] == 0, never decreasing, p[rows] == nnz (nnz < 0: any
 * end), no row longer than max_len (max_len < 0: any length); else 0. */
/* The library is built for any x86-64 (SSE2, which has no unsigned 32-bit maximum); the hot
 * loops are also compiled for AVX2, chosen at load time on machines that have it. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
#define HOT __attribute__((target_clones("avx2", "default")))
#else
#define HOT
#endif

#define CHECK_INDPTR(NAME, T, U)                                                     \
    HOT int NAME(const T* p, long rows, long nnz, long max_len) {                       \
        if (p[0] != 0) return 0;                                                    \
        int bad = 0;                                                                \
        U limit = max_len >= 0 ? (U)max_len : (U)-1;                                \
        for (long i = 0; i < rows; i++) {                                           \
            /* unsigned: no overflow; a decrease is refused before the length counts */ \
            U len = (U)p[i + 1] - (U)p[i];                                          \
            bad |= (p[i + 1] < p[i]) | (len > limit);                               \
        }                                                                           \
        return !bad && (nnz < 0 || (long)p[rows] == nnz);                           \
    }

CHECK_INDPTR(sparsetir_check_indptr_i32, int32_t, uint32_t)
CHECK_INDPTR(sparsetir_check_indptr_i64, int64_t, uint64_t)

/* ---- A call's structure checks as one plan ----
 *
 * A kernel called again with the very arrays of its last call (a model's loop) must still check
 * their contents, which may have been edited in place; its sizes and the arrays' addresses are
 * those of the last call. runtime/native_checks.py writes the checks into an array of these
 * once, and each such call runs them all in one call, without re-deriving anything in Python.
 */
enum { CHECK_INDPTR = 0, CHECK_RANGE = 1, CHECK_SORTED_ROWS = 2, CHECK_SORTED_WIDTH = 3 };

struct sparsetir_check {
    long kind;
    long wide;          /* the checked array's entries are int64 (else int32) */
    const void* array;
    long count;         /* indptr: rows; range and sorted: entries */
    long a;             /* indptr: nnz (< 0: any); range: the length (at most 2^31 for int32
                           entries: every non-negative one is then below it); sorted_rows: the
                           rows; sorted_width: the row width */
    long b;             /* indptr: the longest row allowed (< 0: any) */
    const void* ptr;    /* sorted_rows: the rows' indptr, `a` + 1 entries */
    long ptr_wide;      /* its entries are int64 */
};

#define CHECK_RANGE_FN(NAME, U)                                                      \
    HOT static int NAME(const U* p, long n, U length) {                                 \
        U top = 0;                                                                  \
        for (long i = 0; i < n; i++) top = p[i] > top ? p[i] : top;                 \
        return n == 0 || top < length;                                              \
    }
/* Viewed unsigned: a negative coordinate is one of the largest values. */
CHECK_RANGE_FN(in_range_u32, uint32_t)
CHECK_RANGE_FN(in_range_u64, uint64_t)

/* Strictly increasing within each row of `width` entries. */
#define CHECK_WIDTH_FN(NAME, T)                                                      \
    static int NAME(const T* p, long n, long width) {                               \
        if (width <= 0) return 1;                                                   \
        for (long start = 0; start < n; start += width) {                           \
            long end = start + width < n ? start + width : n;                       \
            for (long k = start + 1; k < end; k++)                                  \
                if (p[k] <= p[k - 1]) return 0;                                     \
        }                                                                           \
        return 1;                                                                   \
    }
CHECK_WIDTH_FN(sorted_width_i32, int32_t)
CHECK_WIDTH_FN(sorted_width_i64, int64_t)

/* Strictly increasing within each row ptr[r] .. ptr[r + 1] of the n entries of idx (a row
 * outside them, or a ptr that decreases, fails: the checks in Python then say what is wrong).
 *
 * Two flat passes instead of a loop per row with an early exit (which ran at about 1 ns an
 * entry on rows of ten): every descent between neighbouring entries (p[k] <= p[k - 1]) is
 * counted over the rows' whole range, a vectorized reduction; then each non-empty row that
 * starts after the first entry takes back the descent at its start, where the previous row
 * ends. The rows are sorted when the two counts agree: a descent inside a row is never taken
 * back, and a row's start is taken back at most once (the starts of non-empty rows differ). */
#define SORTED_ROWS_FN(NAME, T, P)                                                   \
    HOT static int NAME(const T* p, long n, const P* ptr, long rows) {                \
        long lo = (long)ptr[0], hi = (long)ptr[rows];                                   \
        if (lo < 0 || hi > n || hi < lo) return 0;                                      \
        if (hi - lo < 2) { /* no two neighbours: only the ptr to check */               \
            for (long r = 1; r < rows; r++)                                             \
                if (ptr[r] < lo || ptr[r + 1] < ptr[r] || ptr[r + 1] > hi) return 0;    \
            return 1;                                                                   \
        }                                                                               \
        long descents = 0;                                                              \
        for (long k = lo + 1; k < hi; k++) descents += p[k] <= p[k - 1];                \
        long bad = 0, starts = 0;                                                       \
        for (long r = 1; r < rows; r++) {                                               \
            long s = (long)ptr[r], e = (long)ptr[r + 1];                                \
            bad |= (s < lo) | (e < s) | (e > hi);                                       \
            long take = (s > lo) & (s < e) & (s < hi);                                  \
            long t = take ? s : hi - 1; /* a place inside the range to read */          \
            starts += take & (p[t] <= p[t - 1]);                                        \
        }                                                                               \
        return !bad && descents == starts;                                              \
    }
SORTED_ROWS_FN(sorted_rows_i32_p32, int32_t, int32_t)
SORTED_ROWS_FN(sorted_rows_i32_p64, int32_t, int64_t)
SORTED_ROWS_FN(sorted_rows_i64_p32, int64_t, int32_t)
SORTED_ROWS_FN(sorted_rows_i64_p64, int64_t, int64_t)

static int sorted_rows(const void* idx, long wide, long n, const void* ptr, long ptr_wide, long rows) {
    if (rows < 1) return 1;
    if (wide)
        return ptr_wide ? sorted_rows_i64_p64(idx, n, ptr, rows) : sorted_rows_i64_p32(idx, n, ptr, rows);
    return ptr_wide ? sorted_rows_i32_p64(idx, n, ptr, rows) : sorted_rows_i32_p32(idx, n, ptr, rows);
}

/* The position of the first check in c[0..n) that fails, or -1 when all hold. */
long sparsetir_check_plan(const struct sparsetir_check* c, long n) {
    for (long i = 0; i < n; i++) {
        int ok = 0;
        switch (c[i].kind) {
            case CHECK_INDPTR:
                ok = c[i].wide ? sparsetir_check_indptr_i64(c[i].array, c[i].count, c[i].a, c[i].b)
                               : sparsetir_check_indptr_i32(c[i].array, c[i].count, c[i].a, c[i].b);
                break;
            case CHECK_RANGE:
                ok = c[i].a > 0 && (c[i].wide ? in_range_u64(c[i].array, c[i].count, (uint64_t)c[i].a)
                                              : in_range_u32(c[i].array, c[i].count, (uint32_t)c[i].a));
                ok = ok || c[i].count == 0;
                break;
            case CHECK_SORTED_ROWS:
                ok = sorted_rows(c[i].array, c[i].wide, c[i].count, c[i].ptr, c[i].ptr_wide, c[i].a);
                break;
            case CHECK_SORTED_WIDTH:
                ok = c[i].wide ? sorted_width_i64(c[i].array, c[i].count, c[i].a)
                               : sorted_width_i32(c[i].array, c[i].count, c[i].a);
                break;
        }
        if (!ok) return i;
    }
    return -1;
}

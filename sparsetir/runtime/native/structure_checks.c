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
#define CHECK_INDPTR(NAME, T, U)                                                     \
    int NAME(const T* p, long rows, long nnz, long max_len) {                       \
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

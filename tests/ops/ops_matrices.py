"""Test matrices for ``sparsetir.ops``: random CSR matrices with the awkward cases."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def random_csr(m: int, n: int, density: float, seed: int, dtype=np.float32, empty_rows: bool = True,
               long_row: bool = True) -> sp.csr_matrix:
    """A random CSR matrix with empty rows (first and last included) and one long row."""
    rng = np.random.default_rng(seed)
    a = sp.random(m, n, density=density, format="lil", dtype=dtype, random_state=rng)
    if empty_rows and m > 2:
        for row in [0, m - 1, *rng.choice(m, size=max(1, m // 10), replace=False)]:
            a[row, :] = 0
    if long_row and m > 2:
        a[m // 2, :] = rng.random(n).astype(dtype) + 0.5
    return a.tocsr()


MATRICES = {
    "random": lambda dtype=np.float32: random_csr(70, 50, 0.1, 1, dtype),
    "single_row": lambda dtype=np.float32: random_csr(1, 40, 0.3, 2, dtype, empty_rows=False, long_row=False),
    "all_empty": lambda dtype=np.float32: sp.csr_matrix((5, 7), dtype=dtype),
    "skewed": lambda dtype=np.float32: random_csr(300, 200, 0.01, 3, dtype),
}




def snapshot(*arrays):
    """Copies of arrays, to check later that inputs were not modified."""
    return [np.array(a, copy=True) for a in arrays]

"""``runtime.output_pool``: large outputs on memory used again once every array on it is gone,
never while one still is."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir.ops as ops
from sparsetir.runtime import output_pool
from sparsetir.runtime.output_pool import MIN_BYTES, OutputPool, size_class

SHAPE = (MIN_BYTES // 4 + 10, 1)  # just over the threshold, float32


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def test_memory_comes_back_once_the_array_is_gone():
    pool = OutputPool()
    a = pool.empty(SHAPE, np.float32)
    first = _address(a)
    assert a.flags.c_contiguous and a.flags.writeable and first % 4096 == 0 and a.shape == SHAPE
    del a
    b = pool.empty(SHAPE, np.float32)
    assert _address(b) == first and pool.reused == 1 and pool.mapped == 1


def test_memory_is_never_handed_out_while_a_view_or_tensor_holds_it():
    torch = pytest.importorskip("torch")
    pool = OutputPool()
    a = pool.empty(SHAPE, np.float32)
    a[:] = 7
    view = a[5:9].T
    t = torch.from_numpy(a)
    first = _address(a)
    del a
    b = pool.empty(SHAPE, np.float32)  # the view and the tensor still use the first block
    b[:] = 1
    assert _address(b) != first and (view == 7).all() and bool((t == 7).all())
    del view
    assert _address(pool.empty(SHAPE, np.float32)) != first  # the tensor still does
    del t
    gc.collect()
    assert _address(pool.empty(SHAPE, np.float32)) == first


def test_small_outputs_come_from_numpy():
    pool = OutputPool()
    small = pool.empty((16, 16), np.float64)
    assert small.base is None and pool.mapped == 0


def test_the_limit_bounds_idle_memory():
    pool = OutputPool(limit=size_class(SHAPE[0] * 4))  # room for one idle block
    arrays = [pool.empty(SHAPE, np.float32) for _ in range(3)]
    assert pool.mapped == 3 and pool.idle_bytes == 0
    del arrays
    assert pool.idle_bytes == size_class(SHAPE[0] * 4)  # one kept, two unmapped
    pool.set_limit(0)
    assert pool.idle_bytes == 0
    pool.empty(SHAPE, np.float32)
    assert pool.mapped == 4


def test_idle_blocks_of_one_size_make_room_for_another():
    # Large outputs of one size, all idle, must not keep the next size's blocks out.
    big = (MIN_BYTES // 4 * 3, 1)
    pool = OutputPool(limit=2 * size_class(big[0] * 4))
    arrays = [pool.empty(big, np.float32) for _ in range(2)]
    del arrays  # the pool is full of idle blocks of that size
    first = _address(pool.empty(SHAPE, np.float32))  # dropped at once: kept, evicting one
    assert pool.idle_bytes <= pool.limit
    assert _address(pool.empty(SHAPE, np.float32)) == first and pool.reused == 1


def test_release_unmaps_idle_memory():
    pool = OutputPool()
    pool.empty(SHAPE, np.float32)  # dropped at once: idle
    assert pool.idle_bytes > 0
    pool.release()
    assert pool.idle_bytes == 0


def test_size_classes_cover_the_request_with_little_waste():
    for n in (MIN_BYTES, MIN_BYTES + 1, 3 << 20, 40 << 20, (40 << 20) + 12345, 1 << 33):
        c = size_class(n)
        assert n <= c <= n * 1.125 + (1 << 16) and c % (1 << 16) == 0


def test_op_results_on_reused_memory_stay_distinct():
    # Results kept by the caller are never overwritten by later calls; dropped ones are reused.
    rng = np.random.default_rng(5)
    A = sp.random(3000, 2000, density=0.01, format="csr", dtype=np.float32, random_state=5)
    X = [rng.standard_normal((2000, 512), dtype=np.float32) for _ in range(4)]  # 6 MB outputs
    before = output_pool.POOL.reused
    kept = [ops.spmm(A, x) for x in X[:2]]
    for x in X[2:]:
        for _ in range(3):
            ops.spmm(A, x)  # dropped at once
    for x, y in zip(X, kept):
        np.testing.assert_allclose(y, A @ x, rtol=1e-4, atol=1e-4)
    assert output_pool.POOL.reused > before


def test_threads_sharing_the_pool_never_share_memory():
    # Four threads call an op with large outputs at once, keeping some results and dropping
    # the others (their finalizers run on whichever thread drops them): every kept result
    # stays right.
    import threading

    rng = np.random.default_rng(6)
    A = sp.random(2500, 1500, density=0.01, format="csr", dtype=np.float32, random_state=6)
    X = [rng.standard_normal((1500, 512), dtype=np.float32) for _ in range(4)]  # 5 MB outputs
    expected = [A @ x for x in X]
    failures = []
    before = output_pool.POOL.reused

    def work(k):
        kept = []
        for step in range(12):
            y = ops.spmm(A, X[k])
            if step % 3 == 0:
                kept.append(y)
        for y in kept:
            if not np.allclose(y, expected[k], rtol=1e-4, atol=1e-4):
                failures.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures and output_pool.POOL.reused > before

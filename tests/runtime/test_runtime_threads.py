"""Keeping the calling thread off TVM's pool-worker cores (sparsetir/runtime/threads.py)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from sparsetir.runtime import threads

pytestmark = pytest.mark.skipif(
    threads._getcpu is None or len(os.sched_getaffinity(0)) < 2 or not threads.worker_cores(),
    reason="needs Linux thread affinity, two cores and a TVM pool with bound workers",
)


@pytest.fixture
def restore_affinity():
    allowed = os.sched_getaffinity(0)
    yield allowed
    os.sched_setaffinity(0, allowed)


def _sit_on(core: int, allowed: set[int]) -> None:
    """Move the calling thread onto ``core`` while leaving it allowed on all of ``allowed``."""
    os.sched_setaffinity(0, {core})
    assert threads._getcpu() == core
    os.sched_setaffinity(0, allowed)


def _bound_alone(core: int) -> list[int]:
    return [tid for tid in threads._thread_ids() if threads._affinity(tid) == {core}]


def test_worker_cores_are_those_of_bound_pool_threads(restore_affinity):
    assert threads.worker_cores() <= restore_affinity
    assert threads.worker_cores() != restore_affinity  # the caller's core is not a worker's
    for core in threads.worker_cores():
        assert _bound_alone(core), f"no thread is bound to worker core {core}"


def test_a_caller_on_a_worker_core_runs_elsewhere_and_gets_its_affinity_back(restore_affinity):
    worker = min(threads.worker_cores())
    _sit_on(worker, restore_affinity)
    seen = threads.call_off_workers(lambda x: (x, threads._getcpu(), os.sched_getaffinity(0)), (7,))
    assert seen[0] == 7
    assert seen[1] not in threads.worker_cores()
    assert seen[2] == restore_affinity - threads.worker_cores()
    assert os.sched_getaffinity(0) == restore_affinity


def test_a_caller_off_the_worker_cores_is_left_alone(restore_affinity):
    free = min(restore_affinity - threads.worker_cores())
    _sit_on(free, restore_affinity)
    affinity = threads.call_off_workers(lambda: os.sched_getaffinity(0), ())
    assert affinity == restore_affinity


def test_affinity_is_restored_when_the_call_raises(restore_affinity):
    _sit_on(min(threads.worker_cores()), restore_affinity)

    def fail():
        raise ValueError("kernel refused an argument")

    with pytest.raises(ValueError, match="kernel refused an argument"):
        threads.call_off_workers(fail, ())
    assert os.sched_getaffinity(0) == restore_affinity


def test_a_caller_allowed_only_worker_cores_is_not_restricted(restore_affinity):
    worker = min(threads.worker_cores())
    os.sched_setaffinity(0, {worker})
    assert threads.call_off_workers(lambda: os.sched_getaffinity(0), ()) == {worker}


def test_bind_new_threads_binds_each_started_thread_to_one_core_off_the_first():
    release = threading.Event()
    started: list[threading.Thread] = []

    def start_two():
        for _ in range(2):
            thread = threading.Thread(target=release.wait)
            thread.start()
            started.append(thread)

    try:
        cores = threads.bind_new_threads(start_two)
        allowed = sorted(os.sched_getaffinity(0))
        for thread in started:
            affinity = os.sched_getaffinity(thread.native_id)
            assert len(affinity) == 1 and affinity <= cores
        assert allowed[0] not in cores or len(started) >= len(allowed)
    finally:
        release.set()
        for thread in started:
            thread.join()


def test_ops_results_are_right_from_a_worker_core(restore_affinity):
    import scipy.sparse

    from sparsetir import ops

    rng = np.random.default_rng(3)
    A = scipy.sparse.random(300, 200, density=0.05, format="csr", dtype=np.float32, random_state=rng)
    X = rng.standard_normal((200, 16), dtype=np.float32)
    _sit_on(min(threads.worker_cores()), restore_affinity)
    np.testing.assert_allclose(ops.spmm(A, X), A.astype(np.float64) @ X, rtol=1e-5, atol=1e-5)
    assert os.sched_getaffinity(0) == restore_affinity

"""sparsetir's parallel launcher (sparsetir/runtime/parallel.py, native/parallel_launch.c).

Every case checks results against SciPy and what the launcher says it did (its counters); none
measures time (the speed is in bench/notes/threads.md).
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import numpy as np
import pytest
import scipy.sparse

from sparsetir import ops
from sparsetir.runtime import launch, parallel
from sparsetir.runtime.toolchain import c_compiler

pytestmark = pytest.mark.skipif(
    c_compiler() is None, reason="the launcher is built with a C compiler, and none is installed (or not Linux)"
)


#: The launcher's default period for counting the machine's runnable threads.
CROWD_PERIOD_NS = 5_000_000


@pytest.fixture
def launcher():
    """The process's launcher; the tests that watch which backend ran do not want it limited by
    whatever else runs on the machine now, so counting others' runnable threads is off."""
    active = parallel.launcher()
    assert active is not None, parallel.unavailable_reason()
    threads = active.threads
    active.configure(crowd_period_ns=0)
    yield active
    active.set_threads(threads)
    active.configure(chunks_per_thread=4, late_ns=300_000, backoff_ns=(20_000_000, 1_280_000_000),
                     crowd_period_ns=CROWD_PERIOD_NS)
    active.find_openmp()


def _case(rows=400, cols=300, width=16, seed=0):
    rng = np.random.default_rng(seed)
    A = scipy.sparse.random(rows, cols, density=0.05, format="csr", dtype=np.float32, random_state=rng)
    X = rng.standard_normal((cols, width), dtype=np.float32)
    return A, X, A.astype(np.float64) @ X


def _check(A, X, expected):
    np.testing.assert_allclose(ops.spmm(A, X), expected, rtol=1e-5, atol=1e-5)


def test_kernels_run_on_the_launcher_and_share_torchs_openmp_runtime(launcher):
    torch = pytest.importorskip("torch")
    if "OpenMP" not in torch.__config__.parallel_info():
        pytest.skip("this torch does not run on OpenMP")
    assert launcher.openmp is not None and "omp" in os.path.basename(launcher.openmp)
    if launcher.openmp_avoided:
        pytest.skip("OpenMP is set aside just now (a late arrival on a busy machine)")
    A, X, expected = _case()
    before = launcher.stats()
    _check(A, X, expected)
    after = launcher.stats()
    assert after.openmp + after.pool > before.openmp + before.pool


def test_without_openmp_launches_go_to_the_pool(launcher):
    launcher.stop_openmp()
    A, X, expected = _case(seed=1)
    before = launcher.stats()
    for _ in range(3):
        _check(A, X, expected)
    after = launcher.stats()
    # On a loaded machine the pool may run with fewer helpers for a while, down to serial.
    assert (after.pool + after.serial) - (before.pool + before.serial) == 3 and after.openmp == before.openmp


def test_one_thread_runs_serially(launcher):
    launcher.set_threads(1)
    A, X, expected = _case(seed=2)
    before = launcher.stats()
    _check(A, X, expected)
    assert launcher.stats().serial == before.serial + 1


def test_a_serial_scope_runs_launches_on_the_caller_and_ends(launcher):
    A, X, expected = _case(seed=6)
    from sparsetir.ops.kernels import KernelKey

    ops.spmm(A, X)
    kernel = ops.library.get(KernelKey("spmm", "float32", X.shape[1]))
    prepared = ops.prepared.get("csr", A, lambda: None)
    out = np.zeros(expected.shape, dtype=np.float32)
    args = (prepared.values(), X, out) + prepared.tail
    before = launcher.stats()
    launcher.serial(kernel.compiled.invoke, args)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    middle = launcher.stats()
    assert middle.serial == before.serial + 1 and middle.openmp + middle.pool == before.openmp + before.pool
    with pytest.raises(ZeroDivisionError):
        launcher.serial(lambda _: 1 / 0, ())
    kernel.compiled.invoke(args)  # the scope ended, also after the exception
    assert launcher.stats().serial == middle.serial or launcher.threads == 1


@pytest.mark.parametrize("count", [0, -1, 2.5, True])
def test_thread_count_must_be_a_positive_integer(launcher, count):
    with pytest.raises(ValueError, match="positive integer"):
        launcher.set_threads(count)


def test_many_chunks_and_more_threads_than_cores_stay_correct(launcher):
    launcher.stop_openmp()
    launcher.set_threads(8)
    launcher.configure(chunks_per_thread=16)
    A, X, expected = _case(rows=2000, seed=3)
    for _ in range(5):
        _check(A, X, expected)


def test_a_late_openmp_thread_sets_openmp_aside_for_the_pool(launcher):
    if launcher.openmp is None:
        pytest.skip("no OpenMP runtime in this process")
    # With no grace at all, a helper arriving after the caller claimed every chunk is late: on a
    # tiny kernel that happens within a few launches. The pool then serves for the back-off.
    launcher.configure(late_ns=0, chunks_per_thread=1, backoff_ns=(60_000_000_000, 60_000_000_000))
    A, X, expected = _case(rows=8, cols=8, width=1, seed=4)
    tiny = _direct_call(A, X)  # ops would run so small a kernel serially
    before = launcher.stats()
    for _ in range(5000):
        tiny()
        if launcher.stats().late > before.late:
            break
    else:
        pytest.fail("no OpenMP thread ever arrived after the caller finished (5000 tiny launches)")
    assert launcher.openmp_avoided
    middle = launcher.stats()
    _check(A, X, expected)
    after = launcher.stats()
    assert after.openmp == middle.openmp and after.pool + after.serial == middle.pool + middle.serial + 1


#: A process that keeps a CPU busy until it is killed or its parent (the test run) is gone.
SPIN_WHILE_PARENT_LIVES = f"import os\nwhile os.getppid() == {os.getpid()}: pass"


def _pin_threads(cpus: set[int], *, except_tid: int) -> dict[int, set[int]]:
    """Pin every thread of this process but one to `cpus`; returns the masks to restore."""
    before = {}
    for name in os.listdir("/proc/self/task"):
        tid = int(name)
        if tid == except_tid:
            continue
        try:
            before[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, cpus)
        except (ProcessLookupError, PermissionError):
            pass  # a thread that ended meanwhile
    return before


def test_a_long_wait_for_a_pool_helper_halves_the_helpers(launcher):
    import subprocess
    import time

    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("needs two CPUs: one for the caller, one its helper shares with spinning processes")
    caller_cpu, crowded_cpu = allowed[0], allowed[1]
    launcher.set_threads(2)
    # one chunk per thread, each several time slices long (~10 ms)
    launcher.configure(chunks_per_thread=1, backoff_ns=(60_000_000_000, 60_000_000_000))
    A, X, expected = _case(rows=40000, cols=2000, width=128, seed=7)
    _check(A, X, expected)  # builds and attaches the kernel (which looks for OpenMP again)
    launcher.stop_openmp()
    _check(A, X, expected)  # starts the pool's helper before any thread is pinned
    assert launcher.stats().workers >= 1
    # The caller has a CPU to itself; its helper shares the other with spinning processes, so
    # the helper is descheduled for a time slice in the middle of its chunk while the caller
    # waits for it. One helper halved is none: launches then run serially.
    caller = threading.get_native_id()
    caller_mask = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {caller_cpu})
    restore = _pin_threads({crowded_cpu}, except_tid=caller)
    spin = f"import os\nos.sched_setaffinity(0, {{{crowded_cpu}}})\n{SPIN_WHILE_PARENT_LIVES}"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    try:
        time.sleep(0.2)
        before = launcher.stats()
        deadline = time.monotonic() + 60
        while launcher.stats().pool_late == before.pool_late:
            assert time.monotonic() < deadline, "the caller never waited long for its crowded helper"
            _check(A, X, expected)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
        for tid, mask in restore.items():
            try:
                os.sched_setaffinity(tid, mask)
            except ProcessLookupError:
                pass
        os.sched_setaffinity(0, caller_mask)
    middle = launcher.stats()
    _check(A, X, expected)
    after = launcher.stats()
    assert (after.serial, after.pool) == (middle.serial + 1, middle.pool)


def _usable_cores() -> int:
    """The CPUs this process may run on when that is every online CPU (the launcher counts
    runnable threads only then), else 0."""
    allowed = len(os.sched_getaffinity(0))
    return allowed if allowed == os.cpu_count() else 0


def test_other_processes_runnable_threads_leave_their_cores_alone(launcher):
    import subprocess
    import time

    cores = _usable_cores()
    if cores < 2:
        pytest.skip("needs two or more cores, all of them usable by this process")
    launcher.stop_openmp()
    launcher.set_threads(cores)
    A, X, expected = _case(rows=4000, cols=2000, width=32, seed=9)
    call = _direct_call(A, X)
    # As many spinning processes as cores: every core is taken, so a launch runs on its caller
    # alone, without a helper that would be descheduled at random.
    hogs = [subprocess.Popen([sys.executable, "-c", SPIN_WHILE_PARENT_LIVES]) for _ in range(cores)]
    try:
        time.sleep(0.2)
        launcher.configure(crowd_period_ns=1)  # count on every launch
        for _ in range(2):  # the count is the fewer of two samples in a row
            call()
        before = launcher.stats()
        for _ in range(5):
            call()
        after = launcher.stats()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert after.crowded - before.crowded == 5
    assert after.serial - before.serial == 5 and after.pool == before.pool


def _direct_call(A, X):
    """A call of ``ops.spmm``'s kernel for ``A @ X`` straight into the compiled code (parallel
    whatever the size), checking its result."""
    from sparsetir.ops.kernels import KernelKey

    ops.spmm(A, X)
    kernel = ops.library.get(KernelKey("spmm", "float32", X.shape[1]))
    prepared = ops.prepared.get("csr", A, lambda: None)
    out = np.zeros((A.shape[0], X.shape[1]), dtype=np.float32)
    args = (prepared.values(), X, out) + prepared.tail
    expected = A.astype(np.float64) @ X

    def call():
        out[...] = 0
        kernel.compiled.invoke(args)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)

    return call


def test_ops_run_tiny_work_serially(launcher):
    A, X, expected = _case(rows=20, cols=20, width=4, seed=8)
    assert A.nnz * X.shape[1] < launch.SERIAL_WORK
    before = launcher.stats()
    _check(A, X, expected)
    after = launcher.stats()
    assert after.serial == before.serial + 1 and (after.openmp, after.pool) == (before.openmp, before.pool)


def test_concurrent_callers_get_right_results(launcher):
    cases = [_case(rows=500 + 50 * k, seed=10 + k) for k in range(4)]
    failures: list[BaseException] = []

    def work(case):
        try:
            for _ in range(20):
                _check(*case)
        except BaseException as err:  # noqa: BLE001 - reported below
            failures.append(err)

    for use_openmp in (True, False):
        if not use_openmp:
            launcher.stop_openmp()
        threads = [threading.Thread(target=work, args=(case,)) for case in cases]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads), "a concurrent call hung"
        assert not failures, failures[0]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_runs_kernels(launcher):
    A, X, expected = _case(seed=5)
    _check(A, X, expected)  # the parent's OpenMP team and pool are running
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report by exit code, never return into pytest
        code = 1
        try:
            before = launcher.stats()
            _check(A, X, expected)
            after = launcher.stats()
            # libgomp's team does not survive fork(): the child runs on a pool of its own.
            code = 0 if after.openmp == before.openmp and after.pool == before.pool + 1 else 2
        finally:
            os.write(write, bytes([code]))
            os._exit(code)
    os.close(write)
    try:
        import select

        ready, _, _ = select.select([read], [], [], 120)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            pytest.fail("a kernel call hung in the forked child")
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child exit status {status}"
    finally:
        os.close(read)


def test_backend_says_where_loops_run(launcher):
    text = parallel.backend()
    assert "sparsetir's launcher" in text and str(launcher.threads) in text
    assert parallel.num_threads() == launcher.threads


def test_without_a_compiler_kernels_run_on_tvms_pool(tmp_path):
    import subprocess

    code = (
        "import warnings, numpy as np, scipy.sparse as sp\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    from sparsetir import ops\n"
        "    from sparsetir.runtime import parallel\n"
        "    A = sp.random(300, 200, density=0.05, format='csr', dtype=np.float32, random_state=0)\n"
        "    X = np.ones((200, 8), np.float32)\n"
        "    assert np.allclose(ops.spmm(A, X), A @ X, atol=1e-5)\n"
        "assert parallel.launcher() is None\n"
        "assert 'C compiler' in parallel.unavailable_reason()\n"
        "assert any(\"TVM's thread pool\" in str(w.message) for w in seen), [str(w.message) for w in seen]\n"
        "assert ops.library.loads == 0\n"
    )
    env = dict(os.environ, CC="no-such-compiler-anywhere", SPARSETIR_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr

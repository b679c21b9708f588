"""Keeping the calling thread off the cores TVM's pool workers are bound to.

Only for kernels that run on TVM's own thread pool: those compiled where there is no C compiler
to build sparsetir's parallel launcher (``parallel.py``), which replaces that pool.

A parallel kernel runs its first task on the calling thread and the others on TVM's pool
workers, each of which TVM binds to one core. The calling thread is not bound, and Linux wakes
it where it last ran: when that is a worker's core, the worker and the caller share the core for
the whole call and the kernel takes about twice as long (measured on the 2-core bench machine:
SDDMM on cora at width 128 went 0.08 ms or 0.15 ms from one process to the next, depending only
on where the main thread happened to sit; ``bench/notes/cpu_schedules.md``).

``call_off_workers`` checks the caller's core before each call (one ``sched_getcpu``) and, only
when it sits on a worker's core, restricts it to the other cores for the call, then restores its
affinity. The workers' cores are read once, at import, by starting the pool of the importing
thread (TVM would start it at the first parallel call) and looking at the threads it adds. Off
Linux it is a plain call.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, Callable, Optional

from .._tvm import tvm

_HAS_AFFINITY = hasattr(os, "sched_getaffinity") and os.path.isdir("/proc/self/task")


def _load_getcpu() -> Optional[Callable[[], int]]:
    if not _HAS_AFFINITY:
        return None
    try:
        getcpu = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    getcpu.restype = ctypes.c_int
    getcpu.argtypes = []
    return getcpu


_getcpu = _load_getcpu()


def _thread_ids() -> set[int]:
    try:
        return {int(tid) for tid in os.listdir("/proc/self/task") if tid.isdigit()}
    except OSError:
        return set()


def _affinity(tid: int) -> set[int]:
    try:
        return os.sched_getaffinity(tid)
    except OSError:  # the thread ended meanwhile
        return set()


def _started_threads(action: Callable[[], Any]) -> list[int]:
    """Run ``action``; the ids of the threads it started (none found off Linux)."""
    if _getcpu is None:
        action()
        return []
    before = _thread_ids()
    action()
    return sorted(_thread_ids() - before)


def _bound_cores(tids: list[int]) -> frozenset[int]:
    """The cores to which the threads ``tids`` are bound alone (one core each)."""
    cores: set[int] = set()
    for tid in tids:
        allowed = _affinity(tid)
        if len(allowed) == 1:
            cores |= allowed
    return frozenset(cores)


def bind_new_threads(action: Callable[[], Any]) -> frozenset[int]:
    """Run ``action`` (which starts a thread pool) and bind the threads it starts the way TVM
    binds its workers: the k-th to the (k+1)-th allowed core, round robin, leaving the first to
    the caller. The cores used."""
    started = _started_threads(action)
    cores = sorted(os.sched_getaffinity(0)) if started else []
    used: set[int] = set()
    for k, tid in enumerate(started):
        core = cores[(k + 1) % len(cores)]
        try:
            os.sched_setaffinity(tid, {core})
        except OSError:  # the thread ended meanwhile
            continue
        used.add(core)
    return frozenset(used)


class _Workers:
    """The cores TVM binds its pool workers to (the same for every thread's pool), found on first
    use by starting the calling thread's pool (``runtime.NumThreads`` creates it); empty if it
    was running already or binds no worker to one core."""

    def __init__(self) -> None:
        self.cores: Optional[frozenset[int]] = None

    def get(self) -> frozenset[int]:
        if self.cores is None:
            self.cores = _bound_cores(_started_threads(tvm.get_global_func("runtime.NumThreads")))
        return self.cores


_workers = _Workers()


def worker_cores() -> frozenset[int]:
    """The cores TVM's pool workers are bound to (starting the pool on first use)."""
    return _workers.get()


def set_threads(count: int) -> int:
    """Resize TVM's pool to ``count`` threads (the caller included); the count it now uses."""
    # Mode 1: the "big" cores, which on x86 are all of them. The pool keeps its workers and
    # starts more if it grows.
    configure = tvm.get_global_func("runtime.config_threadpool")
    known = worker_cores()
    _workers.cores = known | _bound_cores(_started_threads(lambda: configure(1, count)))
    return int(tvm.runtime.num_threads())


def call_off_workers(entry: Callable[..., Any], args: tuple) -> Any:
    """``entry(*args)``, with the calling thread kept off the pool workers' cores meanwhile."""
    workers = worker_cores()
    if not workers or _getcpu() not in workers:
        return entry(*args)
    allowed = os.sched_getaffinity(0)
    free = allowed - workers
    if not free:
        return entry(*args)
    os.sched_setaffinity(0, free)
    try:
        return entry(*args)
    finally:
        os.sched_setaffinity(0, allowed)

"""Where the parallel loops of compiled CPU kernels run.

TVM compiles a parallel loop into a call through the kernel library's global pointer
``__TVMBackendParallelLaunch``; TVM's own launcher runs one task on each worker of its pool
(each bound to a core) and waits for all of them. Called the way users call it, between torch
ops, that pool loses: torch's OpenMP threads spin for milliseconds after every op, a TVM worker
sharing a core with one waits for the scheduler tick (4 ms), and a 0.1 ms SpMM takes 3.7 ms.
Measured on the 2-core machine (``bench/notes/threads.md``), ms per call of ``ops.spmm`` on
bcsstk16 at width 32:

=========================  =======  =============  ===========  ============================
launcher                   alone    after a torch  another      torch op after ours
                                    op             process on   (alone 0.069 / 0.302)
                                                   a core
=========================  =======  =============  ===========  ============================
TVM's pool                 0.129    3.7 - 3.9      4.0          0.085 / 0.324
torch's OpenMP threads     0.129    0.130          8.0          0.071 / 0.295
a pool that sleeps         0.129    0.144 - 0.254  0.143        0.067 / 0.297
=========================  =======  =============  ===========  ============================

So sparsetir points every kernel's launch pointer at its own launcher
(``native/parallel_launch.c``), which cuts a loop into chunks that whoever runs claims, and
takes its helpers from the OpenMP runtime already in the process (torch's) while that works,
falling back to a pool of its own (workers that sleep, so a woken one gets a core at once) for
a while whenever an OpenMP thread arrives late. No environment variable, thread binding or
spin setting is needed; without torch the pool serves alone.

The launcher is built once per machine with the system C compiler (``toolchain.py``) into the
kernel cache directory. Without a compiler (or off Linux) kernels keep TVM's pool, with the
calling thread kept off its workers' cores (``threads.py``).
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from . import toolchain

SOURCE = Path(__file__).parent / "native" / "parallel_launch.c"

#: Shared libraries whose OpenMP runtime the launcher may share (GNU, LLVM and Intel runtimes
#: all export the GNU entry points), as they appear in ``/proc/self/maps``.
OPENMP_LIBRARY = re.compile(r"/lib(gomp|omp|iomp5)(-[0-9a-f]+)?\.so[.0-9]*$")


@dataclass(frozen=True)
class LaunchStats:
    """What the launcher has done in this process."""

    openmp: int  # launches run on the OpenMP runtime's threads
    pool: int  # launches run on sparsetir's own pool
    serial: int  # launches run on the calling thread alone
    late: int  # OpenMP launches in which a thread arrived late (each sets OpenMP aside a while)
    workers: int  # pool workers started
    pool_late: int  # pool launches that waited long for a descheduled helper (each halves the helpers a while)
    crowded: int = 0  # launches given fewer threads because other processes' threads were runnable


def default_threads() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Launcher:
    """sparsetir's parallel launcher, loaded into this process (one per process: it owns the
    pool's threads)."""

    def __init__(self, library: Path):
        self._lib = ctypes.CDLL(str(library))
        self._lib.sparsetir_parallel_configure.argtypes = [ctypes.c_int, ctypes.c_int] + [ctypes.c_long] * 4
        self._lib.sparsetir_parallel_use_openmp.argtypes = [ctypes.c_void_p] * 3
        self._lib.sparsetir_parallel_stats.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
        self._lib.sparsetir_parallel_configure_crowd.argtypes = [ctypes.c_long]
        self.address: int = ctypes.cast(self._lib.sparsetir_parallel_launch, ctypes.c_void_p).value
        self._serial_begin = self._lib.sparsetir_parallel_serial_begin
        self._serial_end = self._lib.sparsetir_parallel_serial_end
        for fn in (self._serial_begin, self._serial_end):
            fn.argtypes, fn.restype = [], None
        self.openmp: Optional[str] = None
        self._tvm_launch: Optional[int] = None  # TVM's launcher, as found in a kernel library
        self._lock = threading.Lock()
        self._threads = 0
        self.set_threads(default_threads())
        self.find_openmp()

    def serial(self, call: Callable[[tuple], Any], args: tuple) -> Any:
        """``call(args)`` with the parallel loops it launches on this thread run serially (for
        work too small to be worth a launch)."""
        self._serial_begin()
        try:
            return call(args)
        finally:
            self._serial_end()

    @property
    def threads(self) -> int:
        """Threads a parallel loop may use, the caller included (on OpenMP, at most as many as
        the OpenMP runtime's own setting, e.g. ``torch.set_num_threads``)."""
        return self._threads

    def set_threads(self, count: int) -> None:
        """Use ``count`` threads (the caller included) from the next launch on."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"thread count must be a positive integer, got {count!r}")
        self._lib.sparsetir_parallel_configure(count, -1, -1, -1, -1, -1)
        self._threads = count

    def configure(self, *, chunks_per_thread: int = -1, spin_ns: int = -1, late_ns: int = -1,
                  backoff_ns: tuple[int, int] = (-1, -1), crowd_period_ns: int = -1) -> None:
        """Tune the launcher (``-1`` keeps a setting): chunks per thread, how long pool workers
        spin before sleeping, how late a helper may arrive, the pool period after one did
        (doubling from the first to the second value), how often the machine's runnable threads
        are counted to leave other processes' cores alone (0: never)."""
        self._lib.sparsetir_parallel_configure(-1, chunks_per_thread, spin_ns, late_ns, *backoff_ns)
        self._lib.sparsetir_parallel_configure_crowd(crowd_period_ns)

    def find_openmp(self) -> Optional[str]:
        """Share the OpenMP runtime loaded in this process, if any (and not done yet); its path."""
        with self._lock:
            if self.openmp is None:
                found = _loaded_openmp()
                if found is not None:
                    path, entries = found
                    self._lib.sparsetir_parallel_use_openmp(*entries)
                    self.openmp = path
            return self.openmp

    def stop_openmp(self) -> None:
        """Run every launch on sparsetir's own pool from now on."""
        with self._lock:
            self._lib.sparsetir_parallel_use_openmp(None, None, None)
            self.openmp = None

    @property
    def openmp_avoided(self) -> bool:
        """Whether OpenMP is set aside now, after a thread of it arrived late."""
        return bool(self._lib.sparsetir_parallel_openmp_avoided())

    def stats(self) -> LaunchStats:
        """Counters since the process started."""
        out = (ctypes.c_uint64 * 7)()
        self._lib.sparsetir_parallel_stats(out)
        return LaunchStats(*(int(v) for v in out))

    def attach(self, library: Path) -> bool:
        """Point the parallel loops of the kernel library ``library`` (already loaded by TVM)
        at this launcher. True when its loops now run here (or it has none); False when it
        needs TVM's own launcher (a parallel barrier, which this launcher does not implement)."""
        handle = ctypes.CDLL(str(library), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        if _has_symbol(handle, "__TVMBackendParallelBarrier"):
            return False
        if _has_symbol(handle, "__TVMBackendParallelLaunch"):
            if self.openmp is None:
                self.find_openmp()  # torch may have been imported since
            slot = ctypes.c_void_p.in_dll(handle, "__TVMBackendParallelLaunch")
            if slot.value != self.address:
                self._tvm_launch = slot.value
            slot.value = self.address
        return True

    def detach(self, library: Path) -> None:
        """Give the kernel library ``library`` back to TVM's own launcher (for measuring the
        alternatives, ``bench/coexistence.py``)."""
        handle = ctypes.CDLL(str(library), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        if _has_symbol(handle, "__TVMBackendParallelLaunch") and self._tvm_launch is not None:
            ctypes.c_void_p.in_dll(handle, "__TVMBackendParallelLaunch").value = self._tvm_launch


def _has_symbol(handle: ctypes.CDLL, name: str) -> bool:
    try:
        ctypes.c_void_p.in_dll(handle, name)
    except ValueError:
        return False
    return True


def _preference(path: str) -> tuple[int, str]:
    """Torch's own OpenMP runtime first (its ops run on that one's threads; MKL, say, may have
    brought another), then by path."""
    torch = sys.modules.get("torch")
    home = os.path.dirname(getattr(torch, "__file__", None) or "") if torch is not None else ""
    return (0 if home and path.startswith(home + os.sep) else 1, path)


def _loaded_openmp() -> Optional[tuple[str, tuple[int, int, int]]]:
    """The OpenMP runtime mapped into this process and its entry points, if there is one."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(maxsplit=5)[-1].strip() for line in maps if ".so" in line}
    except OSError:
        return None
    for path in sorted((p for p in paths if OPENMP_LIBRARY.search(p)), key=_preference):
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            entries = tuple(ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                            for name in ("GOMP_parallel", "omp_get_thread_num", "omp_get_max_threads"))
        except (OSError, AttributeError):
            continue
        return path, entries
    return None


class _State:
    """The process's launcher, built on first use; why there is none when there is none."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.launcher: Optional[Launcher] = None
        self.unavailable: Optional[str] = None


_state = _State()


def launcher() -> Optional[Launcher]:
    """The process's launcher, built and loaded on first use; None where it cannot be (no C
    compiler, not Linux), and then ``unavailable_reason()`` says why."""
    if _state.launcher is not None or _state.unavailable is not None:
        return _state.launcher
    with _state.lock:
        if _state.launcher is None and _state.unavailable is None:
            try:
                from .disk_cache import native_directory

                _state.launcher = Launcher(toolchain.build_c_library(SOURCE, native_directory()))
            except (toolchain.ToolchainError, OSError) as err:
                _state.unavailable = str(err)
                warnings.warn(
                    f"sparsetir: parallel kernels run on TVM's thread pool, which is slow next to "
                    f"torch ops ({err})",
                    RuntimeWarning,
                    stacklevel=3,
                )
    return _state.launcher


def unavailable_reason() -> Optional[str]:
    """Why there is no launcher (after ``launcher()`` returned None)."""
    return _state.unavailable


def num_threads() -> int:
    """Threads a parallel kernel uses, the caller included."""
    active = launcher()
    if active is not None:
        return active.threads
    from .target import tvm_num_threads

    return tvm_num_threads()


def set_num_threads(count: int) -> None:
    """Run parallel kernels on ``count`` threads (the caller included). Matrices already seen
    by ``sparsetir.ops`` keep their row partition; ``ops.forget(A)`` prepares one again."""
    active = launcher()
    if active is not None:
        active.set_threads(count)
    else:
        from .threads import set_threads

        set_threads(count)


def backend() -> str:
    """How parallel loops run in this process, in words."""
    active = launcher()
    if active is None:
        return f"TVM's thread pool ({unavailable_reason()})"
    where = f"OpenMP threads of {active.openmp}" if active.openmp else "no OpenMP runtime loaded"
    return f"sparsetir's launcher, {active.threads} threads ({where}; its own pool otherwise)"

"""The one module that imports version-sensitive TVM names.

TVM 0.27 renamed the TIR namespace to ``tvm.tirx`` and the scheduler to ``tvm.s_tir``; older
and newer releases move these again. Everything else in sparsetir imports them from here, so a
rename is a one-file change.
"""

from __future__ import annotations

import os

# TVM's runtime picks hardware_concurrency/2 threads on x86, which is 1 on a 2-core VM without
# SMT; bandwidth-bound sparse kernels lose ~1.5x. Respect an explicit user setting.
os.environ.setdefault("TVM_NUM_THREADS", str(os.cpu_count() or 1))
# Idle TVM workers spin this many times before sleeping; the default spins long enough to starve
# another thread pool (torch) sharing the cores, turning its 0.05 ms calls into 8-32 ms ones.
os.environ.setdefault("TVM_THREAD_POOL_SPIN_COUNT", "3000")

import tvm  # noqa: E402
import tvm_ffi  # noqa: E402
from tvm import s_tir, tirx  # noqa: E402
from tvm.ir import Expr, Span, SourceName, Var  # noqa: E402
from tvm.script import tirx as tvmscript_tirx  # noqa: E402
from tvm_ffi import Object  # noqa: E402
from tvm_ffi.dataclasses import field, py_class  # noqa: E402
# TVM's JSON of an object, and reading back JSON written by this same TVM (``tvm.ir.load_json``
# first runs a version upgrader over it, which costs more than the load).
from tvm_ffi.serialization import from_json_graph_str as load_json_same_version  # noqa: E402

TensorLoad = tvm.ir.TensorLoad
TensorRegion = tvm.ir.TensorRegion
SequentialSpan = tvm.ir.SequentialSpan
PrimType = tvm.ir.PrimType
BufferType = tirx.BufferType
Schedule = s_tir.Schedule

structural_equal = tvm_ffi.structural_equal
structural_hash = tvm_ffi.structural_hash
structural_walk = tvm_ffi.structural_walk


def structural_map(root, callbacks=(), order="post"):
    """``tvm_ffi.structural_map`` that never lets a callback's exception cross into C++.

    An exception raised by a callback after an earlier callback replaced a node corrupts
    tvm_ffi's heap (the process aborts in ``malloc``). Here the first exception is kept, every
    later callback returns its input unchanged, and the exception is raised once the map is done.
    ``callbacks`` is a callable or a sequence of ``(type, callable)`` entries.
    """
    failure: list = []

    def guarded(fn):
        def run(value):
            if failure:
                return value
            try:
                return fn(value)
            except BaseException as error:  # noqa: BLE001 - re-raised below, after the map
                failure.append(error)
                return value

        return run

    if callable(callbacks):
        entries = guarded(callbacks)
    else:
        entries = [(kind, guarded(fn)) for kind, fn in callbacks]
    result = tvm_ffi.structural_map(root, entries, order=order)
    if failure:
        raise failure[0]
    return result

get_first_structural_mismatch = tvm_ffi.get_first_structural_mismatch

__all__ = [
    "BufferType",
    "Expr",
    "Object",
    "PrimType",
    "Schedule",
    "SequentialSpan",
    "SourceName",
    "Span",
    "TensorLoad",
    "TensorRegion",
    "Var",
    "field",
    "get_first_structural_mismatch",
    "load_json_same_version",
    "py_class",
    "s_tir",
    "structural_equal",
    "structural_hash",
    "structural_map",
    "structural_walk",
    "tirx",
    "tvm",
    "tvm_ffi",
    "tvmscript_tirx",
]

# Schedule handles and errors (used by sparsetir.schedule).
from tvm.s_tir.schedule import LoopRV, SBlockRV  # noqa: E402
from tvm.s_tir.schedule import ScheduleError as TVMScheduleError  # noqa: E402

IntImm = tirx.IntImm
FloatImm = tirx.FloatImm

__all__ += ["FloatImm", "IntImm", "LoopRV", "SBlockRV", "TVMScheduleError"]

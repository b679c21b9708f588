"""Running a compiled kernel on a call's arguments: the one place both paths meet.

``sparsetir.ops`` (arguments prepared once per matrix) and the kernels ``sparsetir.build``
returns (arguments checked on every call) both end here: a call with little work runs on the
calling thread alone (its parallel loops serial), everything else through the parallel
launcher; an argument TVM refuses (a read-only or size-0 numpy array) raises before the kernel
runs, and the call is made again with such arguments adapted.
"""

from __future__ import annotations

from typing import Any, Sequence

from .kernel import Kernel, call_error
from .parallel import launcher
from .validate import prepare_unchecked

#: Work (multiply-adds, or elements of the arrays: comparable steps) under which a kernel runs
#: on the calling thread alone: a parallel launch costs ~2 us when the other cores are idle.
#: Kept low: right after a torch op (how models call) the data is cold and torch's threads are
#: spinning, so even a cora-sized pass gains from a launch (a row sum: 58 us serial, 27 us on
#: two threads; 1-2 us lost when calls come back to back), and a busy machine is handled by
#: the launcher itself, which then runs the launch on the caller alone.
SERIAL_WORK = 1 << 12


def launch(kernel: Kernel, args: Sequence[Any], work: int) -> None:
    """Run ``kernel`` on ``args`` (in its parameter order, not checked here); ``work`` says how
    much there is to do."""
    try:
        _invoke(kernel, args, work)
    except (BufferError, ValueError):
        try:
            _invoke(kernel, prepare_unchecked(kernel.signature, args), work)
        except Exception as err:
            raise call_error(kernel.name, err) from err
    except Exception as err:  # TVM's own argument checks: with check=False nothing checked them
        raise call_error(kernel.name, err) from err


def _invoke(kernel: Kernel, args: Sequence[Any], work: int) -> None:
    if work < SERIAL_WORK:
        active = launcher()
        if active is not None:
            active.serial(kernel.compiled.invoke, args)
            return
    kernel.compiled.invoke(args)

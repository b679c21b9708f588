"""Timing implementations against each other in one run, in interleaved rounds with pauses.

TVM's thread pool and torch's OpenMP pool both spin-wait for work. On a machine with few cores,
calling one library right after the other makes whichever runs second fight the first one's
spinning threads, and can slow it many times over (bench/notes/cpu_schedules.md, section 1).
So each round runs every implementation in a rotating order, and each implementation's batch of
back-to-back calls starts after a pause that lets the other pools go to sleep, and one untimed
call that wakes the implementation's own pool, so the table reports steady per-call times for
every library alike. Every batch's
last answer is handed to ``accept`` (outside the timed region), so wrong answers are caught in
every round, not only in the warm-up.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from .kernels import Impl

PAUSE_S = 0.02
# Back-to-back calls in one batch: enough to last about BATCH_S, at most MAX_CALLS.
BATCH_S = 0.005
MAX_CALLS = 20
# Calls after the first (which may compile) whose fastest sets the batch size.
SIZING_CALLS = 3


@dataclass
class Timing:
    """The measurements of one implementation on one case."""

    first_call_ms: float  # includes compiling, for a kernel compiled on first use
    calls_per_round: int = 1
    round_ms: list[float] = field(default_factory=list)  # per-call time of each round
    results_checked: int = 0
    error: Optional[str] = None  # the first wrong answer or exception; no timing after it

    @property
    def median_ms(self) -> Optional[float]:
        """The median per-call time over rounds: the figure the table reports."""
        return statistics.median(self.round_ms) if self.round_ms and not self.error else None

    @property
    def best_ms(self) -> Optional[float]:
        """The fastest round's per-call time: robust against rounds hit by contention."""
        return min(self.round_ms) if self.round_ms and not self.error else None


Accept = Callable[[Impl, Any], Optional[str]]


def measure(
    impls: Sequence[Impl], rounds: int, accept: Accept, pause_s: float = PAUSE_S
) -> dict[str, Timing]:
    """Warm up, then time ``impls`` for ``rounds`` interleaved rounds; by implementation name.

    ``accept(impl, output)`` returns why an answer is wrong, or None; an implementation that
    raises or answers wrongly gets its ``error`` set and is not timed further.
    """
    timings: dict[str, Timing] = {}
    live: list[Impl] = []
    for impl in impls:
        start = time.perf_counter()
        output, error = _call(impl)
        timing = timings[impl.name] = Timing(first_call_ms=(time.perf_counter() - start) * 1e3)
        if _judge(timing, impl, output, error, accept):
            # The fastest of a few more calls estimates the steady per-call time: one slow call
            # (a thread wake-up) must not shrink the batch to a size the wake-up dominates.
            elapsed = math.inf
            for _ in range(SIZING_CALLS):
                start = time.perf_counter()
                output, error = _call(impl)
                elapsed = min(elapsed, time.perf_counter() - start)
                if not _judge(timing, impl, output, error, accept):
                    break
            else:
                timing.calls_per_round = max(1, min(MAX_CALLS, math.ceil(BATCH_S / elapsed)))
                live.append(impl)
    for round_index in range(rounds):
        shift = round_index % max(1, len(live))
        for impl in live[shift:] + live[:shift]:
            timing = timings[impl.name]
            if timing.error:
                continue
            time.sleep(pause_s)
            try:
                impl.call()  # untimed: wakes the thread pool the pause let sleep
                start = time.perf_counter()
                for _ in range(timing.calls_per_round):
                    output = impl.call()
            except Exception as err:
                _judge(timing, impl, None, err, accept)
                continue
            timing.round_ms.append((time.perf_counter() - start) * 1e3 / timing.calls_per_round)
            _judge(timing, impl, output, None, accept)
    return timings


def _call(impl: Impl) -> tuple[Any, Optional[Exception]]:
    try:
        return impl.call(), None
    except Exception as err:  # reported as this implementation's failure, not a crash
        return None, err


def _judge(
    timing: Timing, impl: Impl, output: Any, error: Optional[Exception], accept: Accept
) -> bool:
    """Record whether this answer is right; False (with ``timing.error`` set) when it is not."""
    if error is not None:
        timing.error = f"raised {type(error).__name__}: {error}"
        return False
    timing.results_checked += 1
    problem = accept(impl, output)
    if problem is not None:
        timing.error = problem
        return False
    return True

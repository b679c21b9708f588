"""Timing implementations against each other in one run: interleaved with a model's ops, or alone.

Users call sparse kernels between the dense ops of a model, and what runs before a call
changes how long it takes: torch's OpenMP threads keep spinning for a while after each torch
op, and a library whose threads then share the cores with them can run many times slower
(issue 10; ``../shared/probes/interleave.py``). So by default (``interleaved``) every timed call
of every implementation follows one untimed ``Interleave`` op, the way a model runs them.

``alone`` (``--alone``) times each implementation's steady speed on its own: batches of
back-to-back calls, each batch after a pause that lets the other libraries' thread pools go to
sleep and one untimed call that wakes the implementation's own pool. Only a batch's first call
can feel another library there.

In both modes, each round runs every implementation in an order that rotates from round to
round, and every round's last answer is handed to ``accept`` (outside the timed region), so
wrong answers are caught in every round, not only in the warm-up.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from .kernels import Impl

INTERLEAVED = "interleaved"
ALONE = "alone"
MODES = (INTERLEAVED, ALONE)

# Alone: the pause before each batch, for the other libraries' spinning threads to sleep.
PAUSE_S = 0.02
# Timed calls per round: enough to last about BATCH_S, at most MAX_CALLS.
BATCH_S = 0.005
MAX_CALLS = 20
# Calls after the first (which may compile) whose fastest sets the number of calls per round.
SIZING_CALLS = 3


@dataclass(frozen=True)
class Interleave:
    """The untimed op run before every timed call in interleaved mode, and what it is in words."""

    description: str
    call: Callable[[], Any]


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
    impls: Sequence[Impl],
    rounds: int,
    accept: Accept,
    between: Optional[Interleave] = None,
    pause_s: float = PAUSE_S,
) -> dict[str, Timing]:
    """Warm up, then time ``impls`` for ``rounds`` rounds; by implementation name.

    With ``between``, every timed call follows an untimed ``between.call()`` (interleaved);
    without, each round times a batch of back-to-back calls after a pause (alone).
    ``accept(impl, output)`` returns why an answer is wrong, or None; an implementation that
    raises or answers wrongly gets its ``error`` set and is not timed further.
    """
    if between is not None:
        between.call()  # warms it up, and a broken one fails here, not as an impl's error
    timings, live = _warm_up(impls, accept)
    for round_index in range(rounds):
        shift = round_index % max(1, len(live))
        for impl in live[shift:] + live[:shift]:
            timing = timings[impl.name]
            if timing.error:
                continue
            try:
                if between is None:
                    elapsed, output = _batch_after_pause(impl, timing.calls_per_round, pause_s)
                else:
                    elapsed, output = _interleaved(impl, timing.calls_per_round, between)
            except Exception as err:
                _judge(timing, impl, None, err, accept)
                continue
            timing.round_ms.append(elapsed * 1e3 / timing.calls_per_round)
            _judge(timing, impl, output, None, accept)
    return timings


def _warm_up(impls: Sequence[Impl], accept: Accept) -> tuple[dict[str, Timing], list[Impl]]:
    """Each implementation's first call (timed apart: it may compile) and its calls per round;
    the timings by name, and the implementations that answered right."""
    timings: dict[str, Timing] = {}
    live: list[Impl] = []
    for impl in impls:
        start = time.perf_counter()
        output, error = _call(impl)
        timing = timings[impl.name] = Timing(first_call_ms=(time.perf_counter() - start) * 1e3)
        if not _judge(timing, impl, output, error, accept):
            continue
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
    return timings, live


def _interleaved(impl: Impl, calls: int, between: Interleave) -> tuple[float, Any]:
    """The seconds ``calls`` calls of ``impl`` took in all, each right after ``between``; the
    last answer."""
    elapsed = 0.0
    for _ in range(calls):
        between.call()
        start = time.perf_counter()
        output = impl.call()
        elapsed += time.perf_counter() - start
    return elapsed, output


def _batch_after_pause(impl: Impl, calls: int, pause_s: float) -> tuple[float, Any]:
    """The seconds a batch of ``calls`` back-to-back calls took, after a pause; the last answer."""
    time.sleep(pause_s)
    impl.call()  # untimed: wakes the thread pool the pause let sleep
    start = time.perf_counter()
    for _ in range(calls):
        output = impl.call()
    return time.perf_counter() - start, output


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

"""The search: which choices to measure next, within a time budget, never losing to the default.

The space is small (a few values per knob, ``space.py``) and each point costs a compilation
(0.1-0.3 s) and some calls, so the search is a coordinate descent from the default, then
random points while time remains:

1. the default is built, checked (its result is the reference every candidate must match) and
   sized (how many calls make a timed round);
2. for each knob in turn, every value of it with the other knobs at the incumbent's: a *batch*;
   passes over the knobs repeat while the incumbent changes;
3. then points drawn at random from the space (the TVM trace's sampler, ``space.random_trace``),
   a few per batch, until the budget is spent or draws stop finding new points;
4. the last ``DECIDE_SHARE`` of the budget decides: the default and the ``CONFIRM`` best
   candidates (the finalists) run again, batch after batch until that time is spent, and the
   fastest finalist over those batches wins if it beats the default there by ``MARGIN``, else
   the default. The search picked the finalists among many noisy measurements, which flatters
   them; measured afresh, they are judged fairly.

Candidates whose schedule is the same program as one already seen (``program_key``: a knob that
does not apply to this program, e.g. ``prefetch`` where nothing is gathered) are not measured
twice, and a candidate's knobs that do not change its program are set back to their defaults
(so the choices name only what matters). Every batch also runs the default and the incumbent,
and the candidates take turns round by round (the order rotating), so a slow spell of the
machine falls on all of them. A candidate's score in a batch is its fastest call over the
default's fastest call in the same batch (a call nothing interrupted: on a shared machine, a
call another process preempts takes many times longer); over batches, the geometric mean. The
incumbent (where the descent goes on from) is the best candidate that beats the default by
``MARGIN``, else the default.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Optional

from ..schedule.default import Choices
from .measure import Bench
from .space import knobs, with_value

#: Timed rounds per batch (at least ``MIN_ROUNDS`` once the budget is spent).
ROUNDS = 5
MIN_ROUNDS = 2
#: Calls per candidate and round: enough to last ``ROUND_S``, at most ``MAX_CALLS``.
ROUND_S = 0.002
MAX_CALLS = 20
#: How much faster than the default a candidate must measure to be chosen.
MARGIN = 1.03
#: Random points per batch, and draws in a row without a new point before the space counts as
#: exhausted.
RANDOM_BATCH = 4
RANDOM_TRIES = 64
#: Candidates faster than the default that the decision runs again, and its share of the budget
#: (at least two batches' time).
CONFIRM = 3
DECIDE_SHARE = 0.25


@dataclass(eq=False)
class Candidate:
    """One point of the space and what measuring it found."""

    choices: Choices
    key: Hashable = None  # the program it builds (``Search``'s ``program_key``)
    kernel: Any = None
    error: Optional[str] = None  # why it was discarded (a failed build or call, a wrong result)
    prepare_s: float = 0.0  # build, first call (compiles) and check
    seconds: list[float] = field(default_factory=list)  # per batch: the fastest call
    ratios: list[float] = field(default_factory=list)  # per batch: seconds over the default's
    decided: list[float] = field(default_factory=list)  # ratios in the decision's batches

    @property
    def confirmed(self) -> Optional[float]:
        """Time relative to the default in the decision's batches (None: not a finalist)."""
        return _geomean(self.decided) if self.decided else None

    @property
    def ratio(self) -> float:
        """Time relative to the default over the batches it ran in (inf: never measured)."""
        return _geomean(self.ratios) if self.ratios else math.inf

    @property
    def time(self) -> Optional[float]:
        """Seconds per call over the batches it ran in."""
        return _geomean(self.seconds) if self.seconds else None


class Search:
    """One search (see the module docs). ``build`` makes a candidate's kernel, ``program_key``
    names the program a choice schedules (equal keys: the same kernel), ``draw(seed)`` returns
    a random point; ``progress`` is called after every batch."""

    def __init__(self, build: Callable[[Choices], Any], program_key: Callable[[Choices], Hashable],
                 draw: Callable[[int], Choices], bench: Bench, budget_s: float,
                 progress: Optional[Callable[["Search"], None]] = None):
        self._build = build
        self._program_key = program_key
        self._draw = draw
        self.bench = bench
        self.start = time.perf_counter()
        self.deadline = self.start + budget_s
        self._progress = progress or (lambda search: None)
        self.default = Candidate(Choices())
        self.candidates: list[Candidate] = []
        self._seen: set[Hashable] = set()
        self.calls = 1
        self._call_s = 0.0
        self._prepare_s = 0.0
        self._reserve = 0.0  # seconds kept for the decision
        self._budget_s = budget_s

    def run(self) -> Candidate:
        """Search until the budget is spent or the space is; return the winner."""
        start = time.perf_counter()
        # The default's errors are the caller's (bad arguments): raised as they are.
        self.default.kernel = self._build(self.default.choices)
        self.bench.check(self.default.kernel)
        self._prepare_s = self.default.prepare_s = time.perf_counter() - start
        self._seen.add(self._key(self.default.choices))
        self._size()
        improved = True
        while improved:
            improved = False
            for knob in knobs():
                incumbent = self.best
                new = self._new([with_value(incumbent.choices, knob, v) for v in knob.values])
                if new and not self._measure(new):
                    return self._decide()
                improved |= self.best is not incumbent
        seed = 1  # TVM takes seeds from 1
        while self._left() > 0:
            new: list[Candidate] = []
            misses = 0
            while len(new) < RANDOM_BATCH and misses < RANDOM_TRIES and self._left() > 0:
                found = self._new([self._draw(seed)])
                seed += 1
                misses = 0 if found else misses + 1
                new += found
            if not new or not self._measure(new):
                break
        return self._decide()

    @property
    def best(self) -> Candidate:
        """The fastest candidate measured that beats the default by ``MARGIN``, else the default."""
        winners = [c for c in self.candidates if c.ratios and c.ratio * MARGIN < 1.0]
        return min(winners, key=lambda c: c.ratio) if winners else self.default

    @property
    def default_seconds(self) -> float:
        """The default's time per call: over its batches, or its sizing calls when none ran."""
        return self.default.time if self.default.seconds else self._call_s

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def _left(self) -> float:
        """Seconds left for new candidates (the decision's time kept apart)."""
        return self.deadline - self._reserve - time.perf_counter()

    def _key(self, choices: Choices) -> Optional[Hashable]:
        try:
            return self._program_key(choices)
        except Exception:  # the schedule fails for these choices: never measured
            return None

    def _new(self, points: list[Choices]) -> list[Candidate]:
        """The points whose program was not seen yet, as candidates (now seen)."""
        new = []
        for choices in points:
            key = self._key(choices)
            if key is None or key in self._seen:
                continue
            self._seen.add(key)
            new.append(Candidate(self._plain(choices, key), key))
        return new

    def _plain(self, choices: Choices, key: Hashable) -> Choices:
        """``choices`` with every knob that does not change its program set back to the default."""
        default = Choices()
        for knob in knobs():
            value = getattr(default, knob.name)
            if getattr(choices, knob.name) != value and self._key(with_value(choices, knob, value)) == key:
                choices = with_value(choices, knob, value)
        return choices

    def _prepare(self, candidate: Candidate) -> None:
        start = time.perf_counter()
        try:
            candidate.kernel = self._build(candidate.choices)
            candidate.error = self.bench.check(candidate.kernel)
        except Exception as err:  # a candidate TVM or the kernel refuses is discarded, not fatal
            candidate.error = f"{type(err).__name__}: {err}"
        candidate.prepare_s = time.perf_counter() - start
        self.candidates.append(candidate)
        prepared = [self.default] + self.candidates
        self._prepare_s = sum(c.prepare_s for c in prepared) / len(prepared)

    def _size(self) -> None:
        """Calls per round from the default's speed (its first call compiled it)."""
        self._call_s = min(self.bench.time(self.default.kernel, 1) for _ in range(3))
        self.calls = max(1, min(MAX_CALLS, math.ceil(ROUND_S / max(self._call_s, 1e-9))))
        self._reserve = max(DECIDE_SHARE * self._budget_s, 2 * (1 + CONFIRM) * ROUNDS * self.calls * self._call_s)

    def _decide(self) -> Candidate:
        """The finalists and the default afresh, batch after batch until the budget is spent;
        return the winner."""
        faster = sorted((c for c in self.candidates if c.ratios and c.ratio < 1.0), key=lambda c: c.ratio)
        if not faster:
            return self.default
        self._reserve = 0.0
        finalists = faster[:CONFIRM]
        while not finalists[0].decided or self._left() > 0:
            for candidate, ratio in zip(finalists, self._time([self.default] + finalists, ROUNDS)[1:]):
                candidate.decided.append(ratio)
            self._progress(self)
        winner = min(finalists, key=lambda c: c.confirmed)
        return winner if winner.confirmed * MARGIN < 1.0 else self.default

    def _measure(self, new: list[Candidate]) -> bool:
        """Prepare and time ``new`` (as many as the budget allows) in a batch with the default and
        the incumbent; False when the budget is spent."""
        incumbent = self.best
        fixed = [self.default] + ([incumbent] if incumbent is not self.default else [])
        round_s = self.calls * self._call_s
        cost = self._prepare_s + ROUNDS * round_s
        fits = int((self._left() - ROUNDS * round_s * len(fixed)) // max(cost, 1e-9))
        if fits < 1:
            return False
        prepared = []
        for at, candidate in enumerate(new):
            if at >= fits or (prepared and self._left() < 0):
                self._seen.difference_update(c.key for c in new[at:])  # not measured: still unseen
                break
            self._prepare(candidate)
            if candidate.error is None:
                prepared.append(candidate)
        if prepared:
            self._time(fixed + prepared, ROUNDS)
        self._progress(self)
        return self._left() > 0

    def _time(self, batch: list[Candidate], rounds: int) -> list[float]:
        """Time ``batch`` (the default first) in rounds; add and return each one's ratio."""
        fastest = [math.inf] * len(batch)
        for round_ in range(rounds):
            if round_ >= MIN_ROUNDS and self._left() < 0:
                break
            for k in range(len(batch)):
                at = (k + round_) % len(batch)
                fastest[at] = min(fastest[at], self.bench.time(batch[at].kernel, self.calls))
        ratios = [seconds / fastest[0] for seconds in fastest]
        for candidate, seconds, ratio in zip(batch, fastest, ratios):
            candidate.seconds.append(seconds)
            candidate.ratios.append(ratio)
        return ratios


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))

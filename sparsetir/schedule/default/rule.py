"""What a default-schedule rule is, and the choices tuning may change.

A rule looks at one nest (``scope = "nest"``) or one block (``scope = "block"``) of a stage-II
program through its ``facts`` (or, ``scope = "iteration"``, at one sparse iteration of the
stage-I program, by name) and either does not apply (``apply`` returns False and touches
nothing) or schedules it through ``sparsetir.Schedule`` (every step checked and recorded, as a
user's steps are). A step TVM refuses raises ``ScheduleError``; the driver then drops everything
the rule did to that nest or block and moves on, so a rule never leaves a half-scheduled program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ...ir.stage2 import Stage2Function
from ..schedule import Schedule
from .facts import BlockFacts, Nest


@dataclass(frozen=True)
class Choices:
    """The parameters of the rules: what ``sparsetir.tune`` searches, and their defaults.

    The defaults are the measured best on the development machine (``bench/notes/cpu_schedules.md``).
    ``vector_bytes`` is the width of one SIMD register (64: AVX-512); ``max_vectors`` the vector
    accumulators a register tile may hold; rows of a streamed operand at least
    ``streamed_row_bytes`` wide are summed in place (one pass over the row) instead of
    register-tiled; ``prefetch`` makes the row loops prefetch the dense rows they gather,
    ``prefetch_distance`` entries ahead (``None``: decided per call from the matrix by the
    ``prefetch`` rule; ``-1`` never, ``0`` whole rows, ``k`` the first ``k`` cache lines of each
    row; a stage-III rewrite, ``transforms/prefetch_gathered_rows.py``). ``chunks_per_thread``
    is a call-time choice: how many row chunks per thread a partitioned loop runs (more chunks
    even out threads that start late, at a few microseconds of claiming each).
    """

    vector_bytes: int = 64
    max_vectors: int = 8
    streamed_row_bytes: int = 2048
    prefetch: Optional[int] = None
    chunks_per_thread: int = 1
    prefetch_distance: int = 8

    def lanes(self, dtype: str) -> int:
        """Vector lanes of ``dtype`` in one SIMD register."""
        return max(self.vector_bytes // np.dtype(dtype).itemsize, 1)


@dataclass
class Context:
    """What every rule may read besides its nest: the program's metadata and the choices; rules
    add the target options their code needs (``target_options``)."""

    func: Stage2Function
    choices: Choices
    target_options: dict[str, Any] = field(default_factory=dict)
    gathers: list[Any] = field(default_factory=list)  # ``facts.Gather``s of the rules that applied


class Rule:
    """A named rule of the default CPU schedule."""

    name: str = ""
    scope: str = "block"  # "iteration" (stage I), "nest" or "block"

    def apply(self, sch: Schedule, nest: Nest, block: Optional[BlockFacts], context: Context) -> bool:
        """Schedule ``nest`` (``block`` of it, for block rules; for an iteration rule, ``nest`` is
        None and ``block`` the iteration's name) and return True, or return False without a step
        when the rule does not apply."""
        raise NotImplementedError

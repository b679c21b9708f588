"""``ops.spmm(A, X, format="auto")``: the format chosen per matrix and width, then remembered.

SparseTIR tunes its formats by hand for each data set. Here a cost model narrows the formats
down from the matrix's structure (``sparsetir.formats.stats``), and a trial on the caller's
first product decides among the few that remain:

- **CSR** always takes part (it is the reference the others must beat);
- **BSR** with the block sizes whose blocks are at least ``BSR_MIN_DENSITY`` full (the zero cells
  of sparser blocks cost more than the blocking saves), the densest ``BSR_CANDIDATES`` of them;
- **hybrid ELL buckets** when most rows are short (90 % of them hold at most ``HYB_MAX_P90``
  entries), where a row's loop overhead weighs most.

Each candidate is converted (once per structure; kept with the matrix's preparation), compiled
(once per configuration and process; kept on disk), run ``WARMUPS`` times untimed and
``TRIALS`` times timed on the caller's ``X``, the candidates taking turns; the fastest best time wins, except that another format must beat CSR by ``MARGIN``, so
that noise alone never moves a matrix off CSR. The choice is kept with the matrix per width
and dtype (``choice(A, X)`` returns it with its timings), so later calls cost a dictionary
lookup. The first call pays for the trial: a few runs of each candidate, and the conversions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from . import formatted
from .formatted import CSR, SpmmFormat

BSR_CANDIDATES = 2
HYB_MAX_P90 = 16
TRIALS = 5
WARMUPS = 2
MARGIN = 1.05


@dataclass
class Choice:
    """The format ``auto`` chose for one matrix, width and dtype, and what the trial measured."""

    format: SpmmFormat
    width: int
    dtype: str
    #: Best time of a product, in seconds, per candidate (by its ``str``).
    seconds: dict = field(default_factory=dict)
    #: Conversion time of each converted candidate, in seconds.
    conversion: dict = field(default_factory=dict)
    #: The whole trial: conversions, first compilations, runs.
    trial_seconds: float = 0.0

    def describe(self) -> str:
        """One line: the choice and every candidate's time."""
        times = ", ".join(f"{name} {1e3 * s:.3f} ms" for name, s in sorted(self.seconds.items(), key=lambda kv: kv[1]))
        return f"width {self.width} {self.dtype}: {self.format} ({times}; trial {1e3 * self.trial_seconds:.0f} ms)"


def candidates(stats: Any) -> list[SpmmFormat]:
    """The formats worth a trial for a matrix with ``stats``, CSR first."""
    out = [CSR]
    dense = sorted(((d, b) for b, d in stats.block_density if d >= formatted.BSR_MIN_DENSITY and stats.nnz), reverse=True)
    out += [SpmmFormat("bsr", block=b) for _, b in dense[:BSR_CANDIDATES]]
    if stats.nnz and stats.row_p90 <= HYB_MAX_P90:
        out.append(SpmmFormat("hyb", widths=formatted.hyb_widths(stats)))
    return out


def choose(A: Any, a: Any, X: Any) -> SpmmFormat:
    """The format of ``A`` (prepared as ``a``) for products with ``X``'s width and dtype."""
    return choice(A, X, a).format


def choice(A: Any, X: Any, a: Any = None) -> Choice:
    """The ``Choice`` for ``A`` at ``X``'s width (made now when there is none yet)."""
    ops = _ops()
    if a is None:
        a = ops._csr("spmm: A", A)
    width = int(X.shape[1])
    choices = ops.prepared.get("auto", A, dict)  # (width, dtype) -> Choice, kept with A
    made = choices.get((width, a.dtype))
    if made is None:
        made = choices[(width, a.dtype)] = _trial(A, a, X, width)
    return made


def _ops() -> Any:
    from sparsetir import ops  # the package imports this module: resolve it at call time

    return ops


def _trial(A: Any, a: Any, X: Any, width: int) -> Choice:
    ops = _ops()
    start = time.perf_counter()
    made = Choice(CSR, width, a.dtype)
    pool = candidates(ops._stats(A, a)) if a.nnz and width else [CSR]
    runs = []
    for fmt in pool:
        if fmt.name != "csr":
            made.conversion[str(fmt)] = ops.converted(A, a, fmt).seconds
        runs.append((lambda: ops.spmm(A, X)) if fmt.name == "csr" else (lambda fmt=fmt: ops.spmm(A, X, format=fmt)))
    best = [float("inf")] * len(pool)
    # Round robin, so that a slow spell of the machine (another tenant, a clock change) falls on
    # every candidate alike instead of on whichever ran during it. The first rounds compile (or
    # load) the kernels and warm the caches and the allocator.
    for round_ in range(WARMUPS + TRIALS):
        for k, run in enumerate(runs):
            t0 = time.perf_counter()
            run()
            if round_ >= WARMUPS:
                best[k] = min(best[k], time.perf_counter() - t0)
    made.seconds = {str(fmt): seconds for fmt, seconds in zip(pool, best)}
    csr = made.seconds[str(CSR)]
    winner = min(pool, key=lambda f: made.seconds[str(f)])
    if winner.name != "csr" and made.seconds[str(winner)] * MARGIN <= csr:
        made.format = winner
    made.trial_seconds = time.perf_counter() - start
    return made


__all__ = ["Choice", "candidates", "choice", "choose"]

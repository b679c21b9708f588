"""Timing GPU kernels against cuSPARSE: the measuring half of ``sparsetir bench --device cuda``.

It needs torch (a CUDA build) and numpy only, and no other part of sparsetir, so that a GPU
machine without TVM runs it from an exported bundle (``gpu_bundle.py``) exactly as
``sparsetir bench --device cuda`` runs it where sparsetir is installed.

**How a call is timed.** The GPU time of small sparse kernels (a few microseconds on cora) is
below what Python spends launching them (tens of microseconds for sparsetir's launcher and for
``torch.sparse.mm`` alike), so timing calls from Python would time Python. Each implementation
is therefore captured in a CUDA graph of ``CALLS`` back-to-back calls (torch's
``torch.cuda.graph``; sparsetir's launcher and torch both launch on the capturing stream), and
the graph is replayed ``ROUNDS`` times, each replay timed with CUDA events; the median replay
divided by ``CALLS`` is the time per call. An implementation that cannot be captured (a
library allocating or synchronising inside a call) is timed the same way without a graph,
from Python, and its row says "eager".

The peers: cuSPARSE through ``torch.sparse.mm`` (SpMM, CSR times dense) and
``torch.sparse.sampled_addmm`` (SDDMM, ``beta=0``: the sampled dot products without ``A``'s
values; sparsetir's SDDMM scales by them too, so this favours torch by one pass over the
nonzeros, as in the CPU bench).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

#: Calls captured in one graph, and timed replays of it.
CALLS = 20
ROUNDS = 10
WARMUP = 3
#: Relative tolerance of the checks against torch in float64 (of the reference's magnitude).
RTOL = 1e-4


@dataclass
class Timing:
    """Milliseconds per call, and how they were measured ("graph" or "eager")."""

    ms: float
    method: str


@dataclass
class Row:
    """One kernel on one matrix at one width: sparsetir's and the peer's time, and the checks."""

    kernel: str
    matrix: str
    width: int
    nnz: int
    ours: Optional[Timing] = None
    peer: Optional[Timing] = None
    peer_name: str = ""
    errors: dict = field(default_factory=dict)
    #: How sparsetir ran it, where it chose (SpMM: "rows in pieces of 16"); empty: one pass.
    plan: str = ""

    @property
    def speedup(self) -> Optional[float]:
        """The peer's time over sparsetir's."""
        if self.ours is None or self.peer is None or self.ours.ms <= 0:
            return None
        return self.peer.ms / self.ours.ms


def time_on_gpu(call: Callable[[], Any], torch: Any, calls: int = CALLS, rounds: int = ROUNDS,
                graph: bool = True) -> Timing:
    """The GPU time of one ``call()`` (module docs): graph replays, else (or with ``graph``
    False: a call's Python in the time, as a training loop meets it) eager batches."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(WARMUP):
            call()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    def eager() -> None:
        for _ in range(calls):
            call()

    run, method = eager, "eager"
    if graph:
        try:
            captured = torch.cuda.CUDAGraph()
            with torch.cuda.graph(captured):
                eager()
            run, method = captured.replay, "graph"
        except Exception:  # noqa: BLE001 - any capture failure: time it eagerly instead
            torch.cuda.synchronize()
    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    times.sort()
    return Timing(times[len(times) // 2], method)


def mismatch(got: Any, expected: Any, torch: Any) -> Optional[str]:
    """None when ``got`` matches ``expected`` (computed in float64) within ``RTOL`` of the
    reference's largest magnitude, else what differs."""
    got64 = got.detach().to(torch.float64).reshape(-1)
    expected64 = expected.detach().to(torch.float64).reshape(-1)
    if got64.shape != expected64.shape:
        return f"shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
    if not bool(torch.isfinite(got64).all()) and bool(torch.isfinite(expected64).all()):
        return "non-finite values"
    scale = float(expected64.abs().max()) if expected64.numel() else 0.0
    worst = float((got64 - expected64).abs().max()) if got64.numel() else 0.0
    if worst > RTOL * max(scale, 1e-30):
        return f"largest difference {worst:.3g} (reference magnitude {scale:.3g})"
    return None


def torch_spmm(A: Any, X: Any, torch: Any) -> Callable[[], Any]:
    """cuSPARSE's SpMM through ``torch.sparse.mm``."""
    return lambda: torch.sparse.mm(A, X)


def torch_sddmm(A: Any, X: Any, Y: Any, torch: Any) -> Callable[[], Any]:
    """cuSPARSE's SDDMM through ``torch.sparse.sampled_addmm`` (module docs)."""
    Yt = Y.t()
    return lambda: torch.sparse.sampled_addmm(A, X, Yt, beta=0)


def geomean(values: list[float]) -> Optional[float]:
    """The geometric mean, or None for no values."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def table(rows: list[Row]) -> str:
    """A Markdown table of the rows and a geometric-mean line per kernel."""
    lines = ["| kernel | matrix | nnz | width | plan | sparsetir ms | peer | peer ms | speedup | timed |",
             "|---|---|---:|---:|---|---:|---|---:|---:|---|"]
    for row in rows:
        ours = f"{row.ours.ms:.4f}" if row.ours else "-"
        peer = f"{row.peer.ms:.4f}" if row.peer else "-"
        speedup = f"{row.speedup:.2f}x" if row.speedup else "-"
        timed = "/".join(sorted({t.method for t in (row.ours, row.peer) if t}))
        problems = "; ".join(f"{k}: {v}" for k, v in row.errors.items())
        lines.append(f"| {row.kernel} | {row.matrix} | {row.nnz} | {row.width} | {row.plan or '-'} | {ours} | "
                     f"{row.peer_name} | "
                     f"{peer} | {speedup} | {timed}{' ' + problems if problems else ''} |")
    lines.append("")
    for kernel in dict.fromkeys(row.kernel for row in rows):
        speedups = [row.speedup for row in rows if row.kernel == kernel and row.speedup and not row.errors]
        mean = geomean(speedups)
        if mean is not None:
            lines.append(f"{kernel}: geometric-mean speedup over {_peer(rows, kernel)} "
                         f"{mean:.2f}x over {len(speedups)} cases (worst {min(speedups):.2f}x)")
    return "\n".join(lines)


def _peer(rows: list[Row], kernel: str) -> str:
    return next(row.peer_name for row in rows if row.kernel == kernel)


def device_name(torch: Any) -> str:
    """The GPU's name and compute capability."""
    major, minor = torch.cuda.get_device_capability()
    return f"{torch.cuda.get_device_name()} (sm_{major}{minor})"


__all__ = ["CALLS", "ROUNDS", "RTOL", "Row", "Timing", "device_name", "geomean", "mismatch", "table",
           "time_on_gpu", "torch_sddmm", "torch_spmm"]

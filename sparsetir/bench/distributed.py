"""``sparsetir bench --distributed P``: what one distributed ``spmm`` costs each of P ranks.

For each matrix and for METIS and contiguous partitions: every rank's local product (the
compiled kernels on ``own @ X_local`` and ``halo @ X_halo``, as ``sparsetir.distributed.spmm``
runs them) is timed **in this one process, rank after rank**, on the thread count a rank would
have; the exchange is **not timed**: its volume comes from the halo plan (received rows × width
× itemsize; every row received is a row another rank sent). So the table says what each rank
computes and moves, not what a network would make of it: spawning P gloo processes on one
machine would time the loopback and P ranks sharing its cores instead. Every rank's product is
checked against SciPy's float64 ``(A @ X)[rows]`` within ``check.RTOL`` of each value's
magnitude.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from sparsetir import data

from .check import RTOL
from .command import BUSY_LOAD

DEFAULT_WIDTH = 128
DEFAULT_ROUNDS = 10
SMOKE_ROUNDS = 3
DEFAULT_THREADS = 1  # a rank's cores; P ranks of one machine would share them
DEFAULT_OUT = "bench-results"
METHODS = ("metis", "contiguous")
EXIT_USAGE = 2
EXIT_FAILED = 1
HOW = ("local products timed in one process, one rank after another; exchange volume from the "
       "halo plan (not timed)")


@dataclass(frozen=True)
class DistributedRow:
    """One matrix, partition method and rank count: the ranks' local costs and the exchange."""

    matrix: str
    ranks: int
    method: str
    rows: int
    nnz: int
    width: int
    max_rank_nnz: int
    max_rank_ms: float  # the slowest rank's local product (median over rounds)
    mean_rank_ms: float
    ns_per_nnz_col: float  # all ranks' time over all their nonzeros × width
    halo_rows: int  # rows received per product, summed over the ranks
    halo_fraction: float  # halo_rows / rows (received rows over owned rows, all ranks)
    max_rank_halo_fraction: float
    bytes_per_spmm: int  # halo_rows × width × itemsize, summed over the ranks
    partition_s: float


def bench_matrix(name: str, A: sp.csr_matrix, world_size: int, method: str, width: int, rounds: int,
                 seed: int = 0) -> DistributedRow:
    """Partition ``A`` over ``world_size`` ranks, time each rank's local product, check it."""
    import torch

    from sparsetir.distributed import partition, shard
    from sparsetir.distributed.local_products import product

    A = sp.csr_matrix(A, dtype=np.float32)
    X = torch.from_numpy(np.random.default_rng(seed).standard_normal((A.shape[0], width)).astype(np.float32))
    X64 = X.numpy().astype(np.float64)
    expected = A.astype(np.float64) @ X64
    # Rounding grows with the sum of the terms' magnitudes (as in check.py), not with the value.
    allowed = RTOL * (abs(A).astype(np.float64) @ np.abs(X64)) + np.finfo(np.float32).tiny
    start = time.perf_counter()
    part = partition(A, world_size, method)
    partition_s = time.perf_counter() - start
    times, nnzs, halos = [], [], []
    for rank in range(world_size):
        mine = shard(A, part, rank)
        rows = torch.from_numpy(part.rows(rank))
        X_local, X_halo = X[rows].contiguous(), X[torch.from_numpy(mine.halo)].contiguous()
        own, halo, _, _ = mine.products.matrices(np.float32)
        boundary = torch.from_numpy(mine.products.boundary)

        def local_spmm():
            Y = product(own, X_local)
            if boundary.shape[0]:
                Y.index_add_(0, boundary, product(halo, X_halo))
            return Y

        Y = local_spmm()  # compiles the kernels on the first matrix
        error = np.abs(Y.numpy() - expected[part.rows(rank)])
        if not np.all(error <= allowed[part.rows(rank)]):
            raise AssertionError(f"{name} {method} rank {rank}/{world_size}: the local product is wrong")
        times.append(statistics.median(_seconds(local_spmm) for _ in range(rounds)))
        nnzs.append(mine.matrix.nnz)
        halos.append(mine.comm_rows)
    n = A.shape[0]
    sizes = np.array([part.rows(r).shape[0] for r in range(world_size)])
    return DistributedRow(
        matrix=name, ranks=world_size, method=method, rows=n, nnz=A.nnz, width=width,
        max_rank_nnz=max(nnzs), max_rank_ms=1e3 * max(times), mean_rank_ms=1e3 * statistics.fmean(times),
        ns_per_nnz_col=1e9 * sum(times) / max(1, A.nnz * width),
        halo_rows=sum(halos), halo_fraction=sum(halos) / n,
        max_rank_halo_fraction=float(max(np.array(halos) / sizes)),
        bytes_per_spmm=sum(halos) * width * 4, partition_s=partition_s,
    )


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def format_table(rows: list[DistributedRow]) -> str:
    """The rows as a Markdown table."""
    lines = ["| matrix | P | method | nnz | max rank nnz | local spmm ms (max / mean rank) | ns per nnz×col "
             "| halo rows | halo fraction (all / max rank) | MB per spmm |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.matrix} | {r.ranks} | {r.method} | {r.nnz:,} | {r.max_rank_nnz:,} | "
                     f"{r.max_rank_ms:.3f} / {r.mean_rank_ms:.3f} | {r.ns_per_nnz_col:.3f} | {r.halo_rows:,} | "
                     f"{r.halo_fraction:.3f} / {r.max_rank_halo_fraction:.3f} | {r.bytes_per_spmm / 1e6:.2f} |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """The ``sparsetir bench --distributed P`` command; the exit code."""
    try:
        import torch
    except ImportError:
        print("sparsetir bench --distributed: needs torch (pip install 'sparsetir[torch]')", file=sys.stderr)
        return EXIT_USAGE
    from sparsetir.runtime.parallel import num_threads, set_num_threads

    world_size = int(args.distributed)
    smoke = bool(getattr(args, "smoke", False))
    widths = getattr(args, "widths", None) or [DEFAULT_WIDTH]
    rounds = getattr(args, "rounds", None) or (SMOKE_ROUNDS if smoke else DEFAULT_ROUNDS)
    threads = getattr(args, "threads", None) or DEFAULT_THREADS
    if world_size < 2 or len(widths) != 1 or widths[0] < 1 or rounds < 1 or threads < 1:
        print("sparsetir bench --distributed: P must be at least 2, --widths one positive width, --rounds "
              "and --threads positive", file=sys.stderr)
        return EXIT_USAGE
    specs = [*(getattr(args, "matrices", None) or []), *(getattr(args, "matrix", None) or [])]
    specs = specs or (["cora"] if smoke else ["cora", *(name for name in data.available() if name != "cora")])
    try:
        matrices = [data.load_named(spec) for spec in specs]
    except (OSError, ValueError) as err:
        print(f"sparsetir bench --distributed: {err}", file=sys.stderr)
        return EXIT_USAGE
    too_small = [name for name, A in matrices if A.shape[0] < world_size or A.shape[0] != A.shape[1]]
    if too_small:
        print(f"sparsetir bench --distributed: not square with at least {world_size} rows: "
              f"{', '.join(too_small)}", file=sys.stderr)
        return EXIT_USAGE
    before = (torch.get_num_threads(), num_threads())
    torch.set_num_threads(threads)
    set_num_threads(threads)
    try:  # the rank's thread count for the run only: the process gets its own back
        return _run(torch, world_size, widths[0], rounds, threads, matrices, args)
    finally:
        torch.set_num_threads(before[0])
        set_num_threads(before[1])


def _run(torch: Any, world_size: int, width: int, rounds: int, threads: int, matrices: list,
         args: argparse.Namespace) -> int:
    """The timed part of ``run``, with the thread counts set."""
    print(f"distributed spmm over P = {world_size} ranks, width {width}, float32, {threads} thread(s) per "
          f"rank, median of {rounds} rounds: {HOW}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load > BUSY_LOAD:  # a thread team waits for its preempted threads: times swing, most with --threads > 1
        print(f"note: load average {load:.2f} at the start: other processes compete for the cores, the times "
              "are noisy")
    rows = []
    try:
        for name, A in matrices:
            for method in METHODS:
                rows.append(bench_matrix(name, A, world_size, method, width, rounds, getattr(args, "seed", 0) or 0))
                if not getattr(args, "quiet", False):
                    print(f"{name} {method}: done", file=sys.stderr, flush=True)
    except AssertionError as err:
        print(f"sparsetir bench --distributed: {err}", file=sys.stderr)
        return EXIT_FAILED
    print(format_table(rows))
    out = Path(getattr(args, "out", None) or DEFAULT_OUT)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"distributed-{world_size}.json"
    report = {"ranks": world_size, "width": width, "threads_per_rank": threads, "rounds": rounds,
              "how": HOW, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "torch": torch.__version__,
                          "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None},
              "rows": [asdict(r) for r in rows]}
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {path}")
    return 0

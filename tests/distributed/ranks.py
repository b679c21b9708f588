"""Running a function on P gloo processes on 127.0.0.1, with bounded time: a failing or stuck
rank fails the test with its traceback instead of hanging it, and no child outlives it."""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from typing import Any, Callable

INIT_TIMEOUT_S = 60


def free_port() -> int:
    """A TCP port on the loopback that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_ranks(fn: Callable, world_size: int, args: tuple = (), timeout_s: float = 100) -> None:
    """Run ``fn(rank, world_size, *args)`` in ``world_size`` spawned processes joined in one gloo
    group; re-raise the first failure (with the child's traceback); kill everything on timeout."""
    import torch.multiprocessing as mp

    context = mp.start_processes(_rank_main, args=(fn, world_size, free_port(), args), nprocs=world_size,
                                 join=False, start_method="spawn")
    deadline = time.monotonic() + timeout_s
    try:
        while not context.join(timeout=max(0.1, min(1.0, deadline - time.monotonic()))):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{world_size} ranks did not finish within {timeout_s} s")
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
                process.join(5)


def _rank_main(rank: int, fn: Callable, world_size: int, port: int, args: tuple) -> None:
    import torch
    import torch.distributed as dist

    from sparsetir.runtime.parallel import set_num_threads

    torch.set_num_threads(1)  # P ranks share the machine's cores
    set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=INIT_TIMEOUT_S))
    try:
        fn(rank, world_size, *args)
        # Neither rank tears its gloo connections down while the other may still use them: a
        # rank that left first once made the other abort in C++ ("terminate called without an
        # active exception", SIGABRT) in CI.
        dist.barrier()
    finally:
        dist.destroy_process_group()

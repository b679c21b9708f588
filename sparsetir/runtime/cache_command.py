"""``sparsetir cache``: where compiled kernels are kept between processes, and clearing them."""

from __future__ import annotations

import argparse

from .disk_cache import code_fingerprint, default_disk
from .parallel import backend
from .toolchain import c_compiler


def run(args: argparse.Namespace) -> int:
    """Print the cache's place and contents (or clear it with ``--clear``)."""
    disk = default_disk
    if args.clear:
        count = len(disk.entries())
        disk.clear()
        print(f"removed {count} compiled kernel{'s' if count != 1 else ''} from {disk.root}")
        return 0
    entries = disk.entries()
    current = [p for p in entries if p.parent == disk.directory]
    print(f"directory:  {disk.root}")
    print(f"kernels:    {len(entries)} ({len(current)} for this version of sparsetir, "
          f"{code_fingerprint()[:16]}), {disk.size() / 2**20:.1f} MiB")
    print(f"compiler:   {c_compiler() or 'none found: kernels are compiled in memory, not kept'}")
    print(f"parallel:   {backend()}")
    return 0

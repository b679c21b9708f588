"""The system C compiler: it links compiled kernels into shared libraries and builds the
parallel launcher (``native/parallel_launch.c``).

TVM generates object code itself (LLVM); a compiler is needed only to link it into a ``.so``,
which is what lets a kernel outlive the process (the disk cache) and lets sparsetir point its
parallel loops at its own launcher. Without one, kernels still run, compiled in memory and on
TVM's thread pool (``parallel.py`` says what that costs).
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Optional

#: Compilers tried in order when ``$CC`` is not set. A C compiler first: the launcher is C11.
COMPILERS = ("cc", "gcc", "clang")


class ToolchainError(RuntimeError):
    """The C compiler failed or is missing."""


@lru_cache(maxsize=1)
def c_compiler() -> Optional[str]:
    """The C compiler to use: ``$CC`` if set, else the first of ``COMPILERS`` on the PATH; None
    when there is none (or off Linux, where the launcher's futex calls do not exist)."""
    if platform.system() != "Linux":
        return None
    named = os.environ.get("CC")
    if named:
        return shutil.which(named.split()[0]) and named
    for name in COMPILERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(command: list[str]) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ToolchainError(f"running {command[0]} failed: {err}") from err
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise ToolchainError(f"{' '.join(command)} failed: {' '.join(detail[-5:])}")


def link_shared(output: Path, objects: list[str], options: Optional[list[str]] = None) -> None:
    """Link ``objects`` into the shared library ``output`` (TVM's ``export_library`` hook)."""
    compiler = c_compiler()
    if compiler is None:
        raise ToolchainError("no C compiler found (set CC or install cc/gcc/clang)")
    _run(compiler.split() + ["-shared", "-fPIC", "-o", str(output)] + list(objects) + list(options or []))


def build_c_library(source: Path, directory: Path) -> Path:
    """``source`` compiled into a shared library in ``directory``, once: the file is named by a
    hash of the source, the compiler and the machine, and reused by every later process."""
    compiler = c_compiler()
    if compiler is None:
        raise ToolchainError("no C compiler found (set CC or install cc/gcc/clang)")
    text = source.read_bytes()
    digest = hashlib.sha256(text + compiler.encode() + platform.machine().encode()).hexdigest()[:20]
    target = directory / f"{source.stem}-{digest}.so"
    if target.exists():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(prefix=f".{source.stem}-", suffix=".so", dir=directory)
    os.close(fd)
    try:
        _run(compiler.split() + ["-O2", "-std=gnu11", "-shared", "-fPIC", "-pthread", "-o", scratch, str(source)])
        os.replace(scratch, target)  # atomic: a concurrent process sees the whole file or none
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)
    return target

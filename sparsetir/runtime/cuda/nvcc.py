"""Compiling CUDA C to device code with NVIDIA's nvcc, without a GPU.

nvcc is looked for, in order, in the ``nvidia-cuda-nvcc`` wheel (the ``cuda`` extra installs
CUDA 13.0's: ``nvidia/cu13/bin/nvcc`` inside the ``nvidia`` namespace package), on the ``PATH``
and in ``/usr/local/cuda/bin``. (The ``nvidia-cuda-nvcc-cu12`` wheels hold only ``ptxas`` and
libNVVM, not nvcc itself.)

``compile_sources`` compiles many sources in one nvcc run (one process start, and nvcc's
per-run setup, for all of them) into a fatbinary with machine code for every architecture
asked for; when that run fails, each source is compiled alone to name the ones that do not
compile. ``cached_image`` keeps the device code of a source on disk, next to the kernel cache,
keyed by the source, the architecture and nvcc's version.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional, Sequence

#: Architectures CI compiles every kernel for (Ampere and Hopper).
CI_ARCHS = ("sm_80", "sm_90")
#: Warnings TVM's generated code always triggers (unused common subexpressions and buffers).
_QUIET = ("-diag-suppress=177,550",)


class NvccError(RuntimeError):
    """nvcc is missing or refused a source; the message holds its diagnostics."""


@dataclass(frozen=True)
class Nvcc:
    """An nvcc executable and its release (``"13.0"``)."""

    path: Path
    release: str

    def run(self, args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess:
        """nvcc with ``args`` in ``cwd`` (its output captured)."""
        return subprocess.run([str(self.path), *args], cwd=cwd, capture_output=True, text=True, timeout=600)


@lru_cache(maxsize=1)
def find_nvcc() -> Optional[Nvcc]:
    """The nvcc to use (module docs), or None when there is none."""
    for candidate in _candidates():
        if candidate.is_file() and os.access(candidate, os.X_OK):
            release = _release(candidate)
            if release is not None:
                return Nvcc(candidate, release)
    return None


def require_nvcc() -> Nvcc:
    """``find_nvcc()``, or ``NvccError`` saying how to get one."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise NvccError("nvcc was not found: install sparsetir's 'cuda' extra (pip install 'sparsetir[cuda]', "
                        "NVIDIA's CUDA 13.0 compiler wheels) or put a CUDA toolkit's nvcc on the PATH")
    return nvcc


def _candidates() -> list[Path]:
    found: list[Path] = []
    try:
        import nvidia  # the namespace package of NVIDIA's wheels
    except ImportError:
        nvidia = None
    for root in getattr(nvidia, "__path__", []) if nvidia is not None else []:
        found += sorted(Path(root).glob("cu*/bin/nvcc"), reverse=True)  # cu13 before cu12
        found += sorted(Path(root).glob("cuda_nvcc/bin/nvcc"))
    on_path = shutil.which("nvcc")
    if on_path:
        found.append(Path(on_path))
    found.append(Path("/usr/local/cuda/bin/nvcc"))
    return found


def _release(path: Path) -> Optional[str]:
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        if "release" in line:
            return line.split("release", 1)[1].split(",")[0].strip()
    return None


def gencode_flags(archs: Sequence[str], ptx: bool = False) -> list[str]:
    """nvcc flags for machine code of each ``sm_XY`` in ``archs``; with ``ptx``, also the PTX of
    the last one, which the driver compiles for a newer GPU than any of them."""
    flags = []
    for arch in archs:
        if not (arch.startswith("sm_") and arch[3:].rstrip("a").isdigit()):
            raise NvccError(f"not a CUDA architecture: {arch!r} (expected e.g. 'sm_90')")
        flags += ["-gencode", f"arch=compute_{arch[3:]},code={arch}"]
    if ptx and archs:
        flags += ["-gencode", f"arch=compute_{archs[-1][3:]},code=compute_{archs[-1][3:]}"]
    return flags


def compile_sources(sources: dict[str, str], archs: Sequence[str] = CI_ARCHS,
                    nvcc: Optional[Nvcc] = None, ptx: bool = False) -> dict[str, bytes]:
    """Each source (by a name made of letters, digits and ``_``) compiled to a fatbinary with
    machine code for ``archs`` (and PTX, ``gencode_flags``); ``NvccError`` names every source
    that does not compile."""
    nvcc = nvcc or require_nvcc()
    for name in sources:
        if not name.replace("_", "").isalnum():
            raise NvccError(f"source name {name!r} must be letters, digits and '_'")
    with tempfile.TemporaryDirectory(prefix="sparsetir-nvcc-") as tmp:
        work = Path(tmp)
        for name, text in sources.items():
            (work / f"{name}.cu").write_text(text)
        files = [f"{name}.cu" for name in sources]
        # nvcc compiles the architectures of a source in parallel threads (halves CI's time on two cores)
        threads = min(len(archs) + ptx, os.cpu_count() or 1)
        flags = ["--fatbin", "--threads", str(threads), *gencode_flags(archs, ptx), *_QUIET]
        done = nvcc.run([*flags, *files], work)
        if done.returncode != 0:
            failures = []
            for name in sources:
                alone = nvcc.run([*flags, f"{name}.cu"], work)
                if alone.returncode != 0:
                    failures.append(f"{name}:\n{alone.stderr.strip()}")
            raise NvccError(f"nvcc {nvcc.release} could not compile {len(failures) or 'some'} of "
                            f"{len(sources)} sources for {', '.join(archs)}:\n" + "\n".join(failures or [done.stderr]))
        return {name: (work / f"{name}.fatbin").read_bytes() for name in sources}


def cached_image(source: str, arch: str, directory: Path, nvcc: Optional[Nvcc] = None) -> bytes:
    """Device code of ``source`` for ``arch`` (a fatbinary), from ``directory`` or compiled now
    and stored there."""
    nvcc = nvcc or require_nvcc()
    key = hashlib.sha256(f"{nvcc.release}\n{arch}\n{source}".encode()).hexdigest()[:32]
    path = directory / f"{key}.fatbin"
    if path.is_file():
        return path.read_bytes()
    image = compile_sources({"kernel": source}, [arch], nvcc)["kernel"]
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=directory, delete=False, suffix=".tmp") as out:
        out.write(image)
    os.replace(out.name, path)  # atomic: a concurrent reader sees all of it or nothing
    return image


__all__ = ["CI_ARCHS", "Nvcc", "NvccError", "cached_image", "compile_sources", "find_nvcc", "gencode_flags",
           "require_nvcc"]

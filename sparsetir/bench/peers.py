"""The peer libraries the bench times sparsetir against, each loaded only if it is installed.

SciPy is always there. torch (``sparsetir[torch]``) and Intel MKL's sparse BLAS through
``sparse_dot_mkl`` (``sparsetir[mkl]``) are optional; a missing one is a note, not an error.
Nothing here changes how a library runs: no thread binding, no spin or wait settings, no
environment variable left set. Each library runs as a user's program gets it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Optional


def load_torch(notes: list[str]) -> Optional[ModuleType]:
    """torch, or None (with a note) when it is not installed."""
    try:
        import torch
    except ModuleNotFoundError:
        notes.append(
            "torch is not installed, so it is not a peer (pip install 'sparsetir[torch]')"
        )
        return None
    return torch


def load_mkl(notes: list[str]) -> Optional[ModuleType]:
    """``sparse_dot_mkl``, or None (with a note when it is installed but MKL is not found).

    sparse_dot_mkl looks for ``libmkl_rt`` on the loader's paths, where the ``mkl`` wheel does
    not put it; then it is pointed at the wheel's copy through ``MKL_RT``, which it reads only
    while being imported (the variable is restored right after).
    """
    try:
        return importlib.import_module("sparse_dot_mkl")
    except ModuleNotFoundError as err:
        if err.name != "sparse_dot_mkl":
            raise
        return None  # not installed: the usual case, no note
    except ImportError as err:
        failure = err
    library = mkl_rt_of_wheel()
    if library is None or "MKL_RT" in os.environ:
        notes.append(f"no MKL peer: sparse_dot_mkl cannot load MKL ({_first_line(failure)})")
        return None
    _forget("sparse_dot_mkl")  # the failed import leaves submodules behind
    os.environ["MKL_RT"] = str(library)
    try:
        return importlib.import_module("sparse_dot_mkl")
    except ImportError as err:
        _forget("sparse_dot_mkl")
        notes.append(f"no MKL peer: sparse_dot_mkl cannot load {library} ({_first_line(err)})")
        return None
    finally:
        del os.environ["MKL_RT"]


def mkl_rt_of_wheel() -> Optional[Path]:
    """The ``libmkl_rt.so.*`` that the installed ``mkl`` wheel ships, if there is one."""
    try:
        distribution = importlib.metadata.distribution("mkl")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in distribution.files or ():
        if file.name.startswith("libmkl_rt.so"):
            path = Path(distribution.locate_file(file)).resolve()
            if path.is_file():
                return path
    return None


def mkl_version(mkl: ModuleType) -> str:
    """sparse_dot_mkl's version and MKL's."""
    return f"sparse_dot_mkl {mkl.__version__}, {mkl.mkl_get_version_string()}"


def _forget(package: str) -> None:
    for name in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
        del sys.modules[name]


def _first_line(err: BaseException) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__

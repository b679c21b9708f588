"""Sparse matrices for benchmarks and tests: the ones bundled here and those in data directories.

Every matrix comes back as a canonical scipy CSR matrix (sorted, duplicate-free column indices,
``int32`` index arrays, ``float32`` values), so kernels and their SciPy references always see
the same input, and a file that breaks those rules is refused when it is read, not deep inside
a kernel. Small matrices ship in this directory; larger ones are optional and are looked up
along ``search_path`` (see README.md here).
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Optional, Union

import numpy as np
import scipy.sparse

PathLike = Union[str, os.PathLike]

PACKAGE_DIR = Path(__file__).resolve().parent
ENV_VAR = "SPARSETIR_DATA"
SUFFIX = ".npz"


def search_path(search_dirs: Iterable[PathLike] = ()) -> list[Path]:
    """The directories ``load`` looks in, in order, without repeats.

    The package's own directory, then ``search_dirs``, then ``$SPARSETIR_DATA`` when it is set,
    then ``../shared/data`` beside the source checkout and beside the current directory (where
    the project's development machines keep their larger matrices).
    """
    dirs = [PACKAGE_DIR, *(Path(d) for d in search_dirs)]
    if os.environ.get(ENV_VAR):
        dirs.append(Path(os.environ[ENV_VAR]))
    checkout = PACKAGE_DIR.parents[1]
    dirs += [checkout.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"]
    unique: list[Path] = []
    for d in dirs:
        d = d.expanduser().resolve()
        if d not in unique:
            unique.append(d)
    return unique


def available(search_dirs: Iterable[PathLike] = ()) -> list[str]:
    """The sorted names of every matrix ``load`` can find."""
    names = {p.stem for d in search_path(search_dirs) if d.is_dir() for p in d.glob("*" + SUFFIX)}
    return sorted(names)


def find(name: str, search_dirs: Iterable[PathLike] = ()) -> Path:
    """The file ``load(name)`` reads: the first ``<name>.npz`` along ``search_path``."""
    _check_name(name)
    dirs = search_path(search_dirs)
    for d in dirs:
        path = d / (name + SUFFIX)
        if path.is_file():
            return path
    looked = "".join(f"\n  {d}" for d in dirs)
    raise FileNotFoundError(
        f"no matrix named {name!r}: {name}{SUFFIX} is in none of these directories:{looked}\n"
        f"Pass search_dirs=[...] or set {ENV_VAR} to a directory that holds it."
    )


def load(name: str, search_dirs: Iterable[PathLike] = ()) -> scipy.sparse.csr_matrix:
    """The matrix called ``name`` (a file name without ``.npz``, e.g. ``"cora"``), checked."""
    return load_file(find(name, search_dirs))


def load_file(path: PathLike) -> scipy.sparse.csr_matrix:
    """The CSR matrix stored in ``path`` by ``scipy.sparse.save_npz``, checked to be canonical."""
    path = Path(path)
    try:
        matrix = scipy.sparse.load_npz(path)
    except (ValueError, KeyError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path}: not a sparse matrix saved by scipy.sparse.save_npz") from err
    problem = _csr_problem(matrix)
    if problem is not None:
        raise ValueError(
            f"{path}: {problem}; expected a canonical CSR matrix (sorted, duplicate-free column "
            "indices, int32 indptr and indices, float32 values)"
        )
    return scipy.sparse.csr_matrix(matrix)


def load_named(spec: str) -> tuple[str, scipy.sparse.csr_matrix]:
    """(name, matrix) of a command line's matrix: a bundled or found name, or a ``.npz`` path."""
    if spec.endswith(SUFFIX) or os.sep in spec:
        return Path(spec).stem, load_file(spec)
    return spec, load(spec)


def _check_name(name: str) -> None:
    # A name is a file stem; anything path-like would let a caller read files outside the
    # search path, and "cora.npz" is almost always a caller who meant load_file.
    if not isinstance(name, str) or not name or name != Path(name).name or name.startswith("."):
        raise ValueError(
            f"matrix name {name!r} is not a plain name like 'cora'; use load_file for a path"
        )
    if name.endswith(SUFFIX):
        raise ValueError(
            f"matrix name {name!r}: give it without {SUFFIX}, or use load_file for a path"
        )


def _csr_problem(matrix) -> Optional[str]:
    """What keeps ``matrix`` from being canonical float32/int32 CSR, or None."""
    if matrix.format != "csr":
        return f"stored in {matrix.format.upper()} format"
    # scipy narrows index arrays to int32 whenever the values fit, so in practice this refuses
    # matrices too large for int32 positions, which the kernels are not built for.
    index_dtypes = {matrix.indptr.dtype, matrix.indices.dtype}
    if index_dtypes != {np.dtype(np.int32)}:
        return f"index arrays are {' and '.join(sorted(map(str, index_dtypes)))}"
    if matrix.dtype != np.float32:
        return f"values are {matrix.dtype}"
    try:
        matrix.check_format(full_check=True)
    except ValueError as err:
        return f"malformed CSR arrays ({err})"
    if not matrix.has_canonical_format:
        return "column indices are unsorted or repeated within a row"
    return None


#: Node features, labels and the standard split of the Planetoid graphs that ship here
#: (``nodes/<name>.npz``; see README.md here and ``sparsetir.models.load_node_data``).
NODES_DIR = PACKAGE_DIR / "nodes"


def node_data_file(name: str) -> Optional[Path]:
    """The bundled Planetoid node data of graph ``name`` (``cora``, ``citeseer``), or None."""
    _check_name(name)
    path = NODES_DIR / (name + SUFFIX)
    return path if path.is_file() else None


__all__ = ["ENV_VAR", "NODES_DIR", "PACKAGE_DIR", "available", "find", "load", "load_file", "load_named",
           "node_data_file",
           "search_path"]

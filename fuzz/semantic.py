"""Random valid scripts, built with the default schedule and as written, must compute the same.

``python -m fuzz.semantic --count 300 --seed 2`` writes random stage-I scripts: SpMM-, SDDMM-,
scatter-, row-reduction-, elementwise- and dense-shaped sparse iterations with random bodies
(``+ - *``, ``max``, ``min``, ``exp``, constants), chained so that later iterations read what
earlier ones wrote or update it in place, flat, nested in a row iteration, fused
(``T.fuse(I, J)``) or with the feature loop outside the row's entries, over CSR (int32 or int64
indices), ELL, ragged rows or BSR (blocks of 1 to 4), with float32, float64 or int32 values.
Each is built as written (``schedule="none"``: serial loops), with the default CPU schedule
(``sparsetir.build``), with the default schedule's rules under a random point of the tuning
space (``sparsetir.tune.space``) and with the default GPU schedule, its thread-bound loops run
serially on the CPU (``runtime/cuda/simulate.py``: no GPU needed); all four run on random
matrices (empty rows, a dense row, one row, wide and narrow) at awkward widths (1, 3, 17, 33,
100, ...). The scheduled builds must agree with the serial one (float tolerance: they sum in
another order; integers exactly), and the serial build with a NumPy evaluation of the script
(``evaluate``), so a bug shared by every build is caught too. A build or call that fails is a
finding as well.

The default schedule's rules (``sparsetir/schedule/default``) decide from what they can prove
about a program; this fuzzer gives them programs nobody wrote by hand.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

#: Widths the dense axis takes: vector multiples, tails, a scalar, wide rows.
WIDTHS = (1, 2, 3, 4, 5, 8, 16, 17, 31, 32, 33, 64, 100, 128, 130)


@dataclass(frozen=True)
class Buffer:
    """A buffer of the script: its name, axes (letters of ``I``, ``J``, ``D`` (dense columns),
    ``K`` (the width)) and whether the script writes it."""

    name: str
    axes: str
    output: bool = False


#: What an iterator reads each input buffer through: axes -> index expression.
INDEX = {"I": "i", "J": "j", "D": "j", "K": "k"}


@dataclass
class Iteration:
    """One sparse iteration: its shape (which iterators, which are reduced), the buffer it
    writes and its body expression, the reduction (``+`` or ``max``, or None)."""

    name: str
    axes: str  # "IJK", "IJ", "IK"
    kinds: str  # "SRS", ...
    out: Buffer
    expr: str
    reduce: Optional[str]
    nested: bool = False
    #: the iteration's axes in another order (``"IKJ"``: the feature loop outside the row's
    #: entries), or ``"fused"``: ``T.fuse(I, J)`` for its first two axes
    spelling: str = ""


@dataclass
class Script:
    """A generated program: its text, buffers, iterations and dtype."""

    text: str
    dtype: str
    buffers: list[Buffer]
    iterations: list[Iteration]
    uses_width: bool
    name: str = "fuzzed"
    #: "csr" (``T.sparse_variable``), "csr64" (the same with int64 indices), "ell"
    #: (``T.sparse_fixed``: every row the same number of stored columns) or "ragged"
    #: (``T.dense_variable``: a row's coordinates are its positions 0, 1, ...)
    format: str = "csr"


# --- generation ---------------------------------------------------------------------------------


#: Iteration shapes: (axes, kinds, output axes); the output's axes are the spatial ones.
SHAPES = (
    ("IJK", "SRS", "IK"),  # SpMM
    ("IJK", "SSR", "IJ"),  # SDDMM
    ("IJK", "SSS", "IJK"),  # a message per stored entry and feature
    ("IJ", "SR", "I"),  # row reduction
    ("IJ", "SS", "IJ"),  # elementwise on the stored entries
    ("IK", "SS", "IK"),  # dense
    ("IK", "SR", "I"),  # dense row reduction
    ("IJ", "RS", "D"),  # a scatter into the columns (column sums)
    ("IJK", "RSS", "DK"),  # the transposed SpMM, scattered into the rows of the output
)


def _readable(buffers: list[Buffer], axes: str) -> list[Buffer]:
    """Buffers an iteration over ``axes`` can read at its iterators: every axis of the buffer
    is one the iteration runs (``D``, the dense column axis, is read through ``j``)."""
    have = set(axes) | ({"D"} if "J" in axes else set())
    return [b for b in buffers if set(b.axes) <= have and not ("J" in b.axes and "D" in b.axes)]


def _block(fmt: str) -> int:
    """The block size of a ``"bsr<B>"`` format, 0 for the others."""
    return int(fmt[3:]) if fmt.startswith("bsr") else 0


def _read(b: Buffer, fmt: str = "csr") -> str:
    """``b`` read at the iteration's point. Under BSR a row ``i`` is ``io * B + ii`` and a
    column ``j`` is ``jo * B + ji``; a buffer over the stored entries is indexed by the block
    and the place in it."""
    block = _block(fmt)
    if not block:
        return f"{b.name}[{', '.join(INDEX[a] for a in b.axes)}]"
    if b.axes.startswith("IJ"):
        return f"{b.name}[{', '.join(['io', 'jo', 'ii', 'ji'] + ['k'] * ('K' in b.axes))}]"
    dense = {"I": f"io * {block} + ii", "D": f"jo * {block} + ji", "K": "k"}
    return f"{b.name}[{', '.join(dense[a] for a in b.axes)}]"


#: Under BSR: the axes, and the iterators, an axis of the generated shapes stands for.
BSR_AXES = {"I": ("IO", "II"), "J": ("JO", "JI"), "K": ("K",)}
BSR_ITERS = {"I": ("io", "ii"), "J": ("jo", "ji"), "K": ("k",)}
BSR_BUFFER_AXES = {"I": "M", "IK": "M, K", "D": "N", "DK": "N, K", "K": "K", "IJ": "IO, JO, II, JI",
                   "IJK": "IO, JO, II, JI, K"}


def _expr(rng: random.Random, leaves: list[str], dtype: str, depth: int) -> str:
    integer = dtype.startswith("int")
    if depth <= 0 or rng.random() < 0.3:
        if rng.random() < 0.15:
            return f"T.{dtype}({rng.choice(['1', '-2', '0'] if integer else ['0.5', '-1.25', '2.0', '0.0'])})"
        return rng.choice(leaves)
    op = rng.choice(["+", "-", "*", "*", "max", "min"] + ([] if integer else ["exp"]))
    a = _expr(rng, leaves, dtype, depth - 1)
    if op == "exp":
        return f"T.exp({a} * T.{dtype}(0.25))"
    b = _expr(rng, leaves, dtype, depth - 1)
    if op in ("max", "min"):
        return f"T.{op}({a}, {b})"
    return f"({a} {op} {b})"


#: An update in place of an earlier output: the iteration over the output's own axes.
UPDATES = {"IK": ("IK", "SS"), "IJ": ("IJ", "SS"), "IJK": ("IJK", "SSS"), "I": ("I", "S")}


def generate(rng: random.Random) -> Script:
    """A random valid script."""
    # int32 values are -1, 0 or 1 and expressions shallow, so no sum overflows (LLVM may assume
    # signed arithmetic does not, and the two builds could then differ legitimately)
    dtype = rng.choice(["float32", "float32", "float64", "int32"])
    fmt = rng.choice(["csr", "csr", "csr64", "ell", "ragged", "bsr1", "bsr2", "bsr3", "bsr4"])
    inputs = [Buffer("A", "IJ"), Buffer("X", "IK"), Buffer("Y", "DK"), Buffer("Z", "D"), Buffer("R", "I"),
              Buffer("W", "K")]
    buffers = list(inputs)
    iterations: list[Iteration] = []
    for number in range(rng.choice([1, 1, 2, 2, 3])):
        depth = rng.choice([1, 2] if dtype == "int32" else [1, 2, 2, 3])
        updatable = [b for b in buffers if b.output and b.axes in UPDATES]
        if updatable and rng.random() < 0.25:
            # an earlier output updated in place from its own value at each point
            out = rng.choice(updatable)
            axes, kinds = UPDATES[out.axes]
            leaves = [_read(b, fmt) for b in _readable(buffers, axes)]
            combine = rng.choice(["({} + {})", "({} * {})", "T.max({}, {})"])
            expr = combine.format(_read(out, fmt), _expr(rng, leaves, dtype, depth))
            iterations.append(Iteration(f"it{number}", axes, kinds, out, expr, None))
            continue
        axes, kinds, out_axes = rng.choice(SHAPES)
        leaves = [_read(b, fmt) for b in _readable(buffers, axes)]  # every buffer readable at its points
        out = Buffer(f"O{number}", out_axes, output=True)
        expr = _expr(rng, leaves, dtype, depth)
        reduce = None
        if "R" in kinds:
            reduce = rng.choice(["+", "+", "+", "max"])
        nested = axes.startswith("IJ") and kinds[0] == "S" and not _block(fmt) and rng.random() < 0.3
        spelling = ""
        if not nested and not _block(fmt) and axes == "IJK" and rng.random() < 0.2:
            spelling = "IKJ"
        elif not nested and not _block(fmt) and axes.startswith("IJ") and kinds[:2] == "SS" and rng.random() < 0.25:
            spelling = "fused"
        iterations.append(Iteration(f"it{number}", axes, kinds, out, expr, reduce, nested, spelling))
        buffers.append(out)
    used = {b.name for b in inputs if any(b.name + "[" in it.expr for it in iterations)} | {"A"}
    buffers = [b for b in buffers if b.output or b.name in used]
    uses_width = any("K" in b.axes for b in buffers) or any("K" in it.axes for it in iterations)
    return Script(_text(dtype, buffers, iterations, uses_width, fmt), dtype, buffers, iterations, uses_width,
                  format=fmt)


def _text(dtype: str, buffers: list[Buffer], iterations: list[Iteration], uses_width: bool, fmt: str = "csr") -> str:
    handles = [b.name.lower() for b in buffers]
    block = _block(fmt)
    if block:
        return _bsr_text(dtype, buffers, iterations, uses_width, block)
    structure = {"csr": ["indptr", "indices"], "csr64": ["indptr", "indices"], "ell": ["indices"],
                 "ragged": ["indptr"]}[fmt]
    params = [f"{h}: T.handle" for h in handles] + [f"{h}: T.handle" for h in structure] + ["m: T.int32",
                                                                                          "n: T.int32"]
    if uses_width:
        params.append("feat: T.int32")
    params.append("cols: T.int32" if fmt == "ell" else "nnz: T.int32")
    axis = {"csr": '    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")',
            "csr64": '    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int64")',
            "ell": '    J = T.sparse_fixed(I, (n, cols), indices, "int32")',
            "ragged": '    J = T.dense_variable(I, (n, nnz), indptr, "int32")'}[fmt]
    lines = _header(params) + ["    I = T.dense_fixed(m)", axis, "    D = T.dense_fixed(n)"]
    if uses_width:
        lines.append("    K = T.dense_fixed(feat)")
    for b in buffers:
        lines.append(f"    {b.name} = T.match_sparse_buffer({b.name.lower()}, ({', '.join(b.axes)},), "
                     f'dtype="{dtype}")')
    lines += _iteration_lines(dtype, iterations, "csr")
    return "\n".join(lines) + "\n"


def _header(params: list[str]) -> list[str]:
    return ["from sparsetir.script import tir as T", "", "", "@T.prim_func",
            f"def fuzzed({', '.join(params)}) -> None:", '    T.func_attr({"sparse_tir_level": 2})']


def _bsr_text(dtype: str, buffers: list[Buffer], iterations: list[Iteration], uses_width: bool, block: int) -> str:
    params = [f"{b.name.lower()}: T.handle" for b in buffers] + ["indptr: T.handle", "indices: T.handle",
                                                                "mb: T.int32", "nb: T.int32"]
    if uses_width:
        params.append("feat: T.int32")
    params.append("nnzb: T.int32")
    lines = _header(params) + ["    IO = T.dense_fixed(mb)",
                               '    JO = T.sparse_variable(IO, (nb, nnzb), (indptr, indices), "int32")',
                               f"    II = T.dense_fixed({block})", f"    JI = T.dense_fixed({block})",
                               f"    M = T.dense_fixed(mb * {block})", f"    N = T.dense_fixed(nb * {block})"]
    if uses_width:
        lines.append("    K = T.dense_fixed(feat)")
    for b in buffers:
        lines.append(f"    {b.name} = T.match_sparse_buffer({b.name.lower()}, ({BSR_BUFFER_AXES[b.axes]},), "
                     f'dtype="{dtype}")')
    lines += _iteration_lines(dtype, iterations, f"bsr{block}")
    return "\n".join(lines) + "\n"


def _iteration_lines(dtype: str, iterations: list[Iteration], fmt: str) -> list[str]:
    lines = []
    for it in iterations:
        target = _read(it.out, fmt)
        scatter = it.kinds[0] == "R"  # reduced over the rows: no init (it accumulates onto the output)
        if it.reduce == "+" and scatter:
            init, update = None, f"{target} + {it.expr}"
        elif it.reduce == "max" and scatter:
            init, update = None, f"T.max({target}, {it.expr})"
        elif it.reduce == "+":
            init, update = f"T.{dtype}(0)", f"{target} + {it.expr}"
        elif it.reduce == "max":
            init, update = f'T.min_value("{dtype}")', f"T.max({target}, {it.expr})"
        else:
            init, update = None, it.expr
        if _block(fmt):
            axes = [x for a in it.axes for x in BSR_AXES[a]]
            kinds = "".join(kind * len(BSR_AXES[a]) for a, kind in zip(it.axes, it.kinds))
            iters = [x for a in it.axes for x in BSR_ITERS[a]]
        elif it.spelling == "IKJ":
            order = [it.axes.index(a) for a in "IKJ"]
            axes, kinds, iters = [it.axes[k] for k in order], "".join(it.kinds[k] for k in order), \
                [INDEX[it.axes[k]] for k in order]
        else:
            axes, kinds, iters = list(it.axes), it.kinds, [INDEX[a] for a in it.axes]
            if it.spelling == "fused":
                axes = ["T.fuse(I, J)"] + axes[2:]
        if it.nested:
            lines.append(f'    with T.sp_iter([I], "S", "{it.name}") as [i]:')
            lines.append(f'        with T.sp_iter([{", ".join(axes[1:])}], "{kinds[1:]}", "{it.name}_inner") '
                         f"as [{', '.join(iters[1:])}]:")
            pad = "            "
        else:
            lines.append(f'    with T.sp_iter([{", ".join(axes)}], "{kinds}", "{it.name}") as [{", ".join(iters)}]:')
            pad = "        "
        if init is not None:
            lines.append(f"{pad}with T.init():")
            lines.append(f"{pad}    {target} = {init}")
        lines.append(f"{pad}{target} = {update}")
    return lines


# --- data and the reference ---------------------------------------------------------------------


def matrix(rng: np.random.Generator, fmt: str = "csr") -> sp.csr_matrix:
    """A random CSR matrix with sorted rows: some empty rows, sometimes a dense row or one row;
    for ``"ell"``, every row with the same number of stored columns."""
    if _block(fmt):  # blocks of a random pattern, each block's entries random (zeros too)
        block = _block(fmt)
        mb, nb = int(rng.choice([1, 3, 17, 40])), int(rng.choice([1, 4, 25]))
        pattern = sp.random(mb, nb, density=float(rng.choice([0.0, 0.1, 0.5, 1.0])), format="csr",
                            random_state=np.random.RandomState(int(rng.integers(1 << 30))))
        pattern.sort_indices()
        blocks = np.ones((pattern.nnz, block, block))
        return sp.bsr_matrix((blocks, pattern.indices, pattern.indptr), shape=(mb * block, nb * block))
    if fmt == "ragged":  # row r holds columns 0 .. length - 1: the CSR form of its positions
        m = int(rng.choice([1, 2, 7, 33, 100, 257]))
        n = int(rng.choice([1, 3, 16, 50, 200]))
        lengths = rng.integers(0, n + 1, m) * (rng.random(m) < 0.8)
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        indices = np.concatenate([np.arange(k) for k in lengths] + [np.zeros(0, int)])
        return sp.csr_matrix((np.ones(indptr[-1]), indices, indptr), shape=(m, n))
    if fmt == "ell":
        m = int(rng.choice([1, 2, 7, 33, 100, 257]))
        n = int(rng.choice([1, 3, 16, 50, 200]))
        cols = int(rng.integers(1, min(n, 9) + 1))
        indices = np.sort(np.stack([rng.choice(n, cols, replace=False) for _ in range(m)]), axis=1)
        return sp.csr_matrix((np.ones(m * cols), indices.ravel(), np.arange(m + 1) * cols), shape=(m, n))
    kind = rng.integers(6)
    m = int(rng.choice([1, 2, 7, 33, 100, 257])) if kind else 1
    n = int(rng.choice([1, 3, 16, 50, 200]))
    density = float(rng.choice([0.0, 0.02, 0.1, 0.4, 1.0]))
    a = sp.random(m, n, density=density, format="csr", random_state=np.random.RandomState(int(rng.integers(1 << 30))))
    a = a.tolil()
    if kind == 2 and m > 1:
        a[int(rng.integers(m)), :] = 1.0  # one dense row
    if kind == 3:
        a[: m // 2, :] = 0  # the first half empty
    a = a.tocsr()
    a.eliminate_zeros()
    a.sort_indices()
    return a


def arguments(script: Script, a: sp.csr_matrix, width: int, rng: np.random.Generator) -> dict:
    """The call's arguments by parameter name (outputs filled with garbage)."""
    m, n = a.shape
    sizes = {"I": m, "D": n, "K": width}
    args: dict = {}
    for b in script.buffers:
        block = _block(script.format)
        if b.axes.startswith("IJ") and block:  # (blocks, B, B), and the width
            shape: tuple = (a.indices.shape[0], block, block) + ((width,) if b.axes == "IJK" else ())
        elif b.axes == "IJ":
            shape = (a.nnz,)  # A and outputs alike
        elif b.axes == "IJK":
            shape = (a.nnz, width)
        else:
            shape = tuple(sizes[x] for x in b.axes)
        if b.output:
            args[b.name.lower()] = np.full(shape, 7.5, script.dtype)
        elif script.dtype == "int32":
            args[b.name.lower()] = rng.integers(-1, 2, shape).astype(np.int32)
        else:
            args[b.name.lower()] = np.asarray(rng.uniform(-1, 1, shape), script.dtype)
    if _block(script.format):
        block = _block(script.format)
        args.update(indptr=a.indptr.astype(np.int32), indices=a.indices.astype(np.int32), mb=m // block,
                    nb=n // block, nnzb=a.indices.shape[0])
    elif script.format == "ell":
        args.update(indices=a.indices.astype(np.int32), m=m, n=n, cols=a.nnz // max(m, 1))
    elif script.format == "ragged":
        args.update(indptr=a.indptr.astype(np.int32), m=m, n=n, nnz=a.nnz)
    elif script.format == "csr64":
        args.update(indptr=a.indptr.astype(np.int64), indices=a.indices.astype(np.int64), m=m, n=n, nnz=a.nnz)
    else:
        args.update(indptr=a.indptr.astype(np.int32), indices=a.indices.astype(np.int32), m=m, n=n, nnz=a.nnz)
    if script.uses_width:
        args["feat"] = width
    return args


def _entries(a) -> tuple[np.ndarray, np.ndarray]:
    """The row and the column of every stored entry of ``a``, in the order its values are stored
    (a BSR matrix's: block by block, each block row by row)."""
    if a.format != "bsr":
        return np.repeat(np.arange(a.shape[0]), np.diff(a.indptr)), a.indices
    block = a.blocksize[0]
    block_rows = np.repeat(np.arange(a.shape[0] // block), np.diff(a.indptr))
    ii, ji = np.meshgrid(np.arange(block), np.arange(block), indexing="ij")
    rows = (block_rows[:, None] * block + ii.ravel()[None, :]).ravel()
    cols = (a.indices[:, None] * block + ji.ravel()[None, :]).ravel()
    return rows, cols


def evaluate(script: Script, a: sp.csr_matrix, width: int, args: dict) -> dict:
    """The outputs by NumPy, entry by entry over the iterations (an interpreter of the generated
    shapes, independent of sparsetir's lowering)."""
    dtype = np.dtype(script.dtype)
    rows, cols = _entries(a)
    # arrays over the stored entries flat: entry e (and feature k) at [e] ([e, k])
    values = {b.name: np.array(args[b.name.lower()], dtype).reshape((a.nnz, width) if b.axes == "IJK" else (
        a.nnz,) if b.axes == "IJ" else args[b.name.lower()].shape) for b in script.buffers}
    for it in script.iterations:
        out = values[it.out.name]
        has_k = "K" in it.axes
        # Coordinates per point of the iteration space: e (stored entry) and/or k.
        if "J" in it.axes:
            e, i, j = np.arange(a.nnz), rows, cols
        else:
            e, i, j = None, np.arange(a.shape[0]), None
        shape = (i.shape[0], width) if has_k else (i.shape[0],)

        def read(name: str, axes: str) -> np.ndarray:
            # a buffer's first axis says where a point reads it: its entry, its row or its column
            arr = values[name]
            v = arr[None, :] if axes == "K" else arr[e if axes.startswith("IJ") else i if axes[0] == "I" else j]
            if has_k and v.ndim == 1:
                v = v[:, None]
            return np.broadcast_to(v, shape).astype(dtype)

        env = {"T": _NumpyT(dtype)}
        for b in script.buffers:
            env[b.name] = _Reader(b, read)
        with np.errstate(all="ignore"):  # a max over no entries is the lowest value: a product may overflow
            point = np.asarray(eval(_vectorized(it.expr), env), dtype)  # the generator's own text
        point = np.broadcast_to(point, shape)
        spatial = it.out.axes
        if it.reduce is None:
            out[e if spatial.startswith("IJ") else i] = point
            continue
        init = dtype.type(0) if it.reduce == "+" else _lowest(dtype)
        ufunc = np.add if it.reduce == "+" else np.maximum
        if spatial in ("D", "DK"):  # scattered over the rows: onto what the output holds
            ufunc.at(out, j, point)
            continue
        if "J" in it.axes and not spatial.startswith("IJ"):  # reduced over a row's entries
            acc = np.full(out.shape, init, dtype)
            ufunc.at(acc, i, point)
            out[...] = acc
        else:  # reduced over K
            out[e if spatial == "IJ" else i] = ufunc.reduce(point, axis=1, initial=init)
    return {b.name.lower(): values[b.name].reshape(args[b.name.lower()].shape) for b in script.buffers if b.output}


def _lowest(dtype: np.dtype):
    return np.iinfo(dtype).min if dtype.kind == "i" else np.finfo(dtype).min


class _Reader:
    def __init__(self, b: Buffer, read):
        self._b, self._read = b, read

    def __getitem__(self, _: object) -> np.ndarray:
        return self._read(self._b.name, self._b.axes)


class _NumpyT:
    def __init__(self, dtype: np.dtype):
        self._dtype = dtype
        setattr(self, str(dtype), lambda x: dtype.type(x))

    def max(self, a, b):
        return np.maximum(a, b)

    def min(self, a, b):
        return np.minimum(a, b)

    def exp(self, a):
        return np.exp(a)

    def min_value(self, _):
        return _lowest(self._dtype)


def _vectorized(expr: str) -> str:
    # a read such as ``A[i, j]`` or ``R[io * 2 + ii]`` reads a whole array through ``_Reader``:
    # the index expression itself needs no values
    return re.sub(r"\[[^\[\]]*\]", "[0]", expr)


# --- checking -----------------------------------------------------------------------------------


@dataclass
class Finding:
    kind: str  # "refused", "default_failed", "mismatch", "reference_mismatch"
    script: str
    detail: str
    case: str = ""


@dataclass
class Summary:
    scripts: int = 0
    calls: int = 0
    findings: list[Finding] = field(default_factory=list)


def _close(x: np.ndarray, y: np.ndarray, dtype: str) -> bool:
    """``x`` equals ``y`` up to rounding: integers exactly; floats with the same infinities and
    NaNs, and otherwise within a tolerance scaled by the largest ordinary value (a max over no
    entries leaves the lowest value, about -1e38, which must not widen the tolerance)."""
    if dtype.startswith("int"):
        return bool(np.array_equal(x, y))
    rtol = 2e-4 if dtype == "float32" else 1e-9
    finite = np.isfinite(y)
    if not np.array_equal(finite, np.isfinite(x)) or not np.array_equal(x[~finite], y[~finite], equal_nan=True):
        return False
    ordinary = np.abs(y[finite]) < 1e30
    scale = max(1.0, float(np.max(np.abs(y[finite][ordinary]))) if ordinary.any() else 1.0)
    return bool(np.allclose(x[finite], y[finite], rtol=rtol, atol=rtol * scale))


def check(script: Script, rng: np.random.Generator, cases: int = 3) -> list[Finding]:
    """Build ``script`` as written, with the default schedule and with the default schedule's
    rules under random choices of the tuning space, and compare them on ``cases`` random calls."""
    import sparsetir
    from sparsetir.default_build import build_default
    from sparsetir.runtime.cuda.simulate import simulate
    from sparsetir.script import parse
    from sparsetir.tune.space import describe

    try:
        f = parse(script.text)
        serial = sparsetir.build(f, schedule="none")
    except sparsetir.SparseTIRError as err:
        return [Finding("refused", script.text, f"{type(err).__name__}: {err}")]
    except Exception:  # noqa: BLE001 - every other failure is a finding
        return [Finding("refused", script.text, traceback.format_exc())]
    choices = random_choices(rng)
    builds = {}
    for label, make in (("default", lambda: sparsetir.build(f)),
                        (f"choices({describe(choices)})", lambda: build_default(f, "llvm", None, None, choices)),
                        ("gpu schedule (simulated)", lambda: simulate(sparsetir.build(f, target="cuda")))):
        try:
            builds[label] = make()
        except Exception:  # noqa: BLE001
            return [Finding("default_failed", script.text, f"{label}:\n{traceback.format_exc()}")]
    findings = []
    for _ in range(cases):
        a = matrix(rng, "csr" if script.format == "csr64" else script.format)
        width = int(rng.choice(WIDTHS)) if script.uses_width else 0
        args = arguments(script, a, width, rng)
        case = f"matrix {a.shape} nnz {a.nnz}, width {width}"
        runs = {}
        for label, kernel in (("serial", serial), *builds.items()):
            call = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
            try:
                kernel(**call)
            except Exception:  # noqa: BLE001
                findings.append(Finding("call_failed", script.text, f"{label}:\n{traceback.format_exc()}", case))
                continue
            runs[label] = call
        if "serial" not in runs:
            continue
        reference = evaluate(script, a, width, args)
        for name, expected in reference.items():
            if not _close(runs["serial"][name], expected, script.dtype):
                findings.append(Finding("reference_mismatch", script.text, f"output {name}: serial build != NumPy",
                                        case))
            for label in builds:
                if label in runs and not _close(runs[label][name], runs["serial"][name], script.dtype):
                    bad = np.flatnonzero(~np.isclose(runs[label][name], runs["serial"][name], rtol=1e-3, atol=1e-3))
                    findings.append(Finding("mismatch", script.text,
                                            f"output {name}: {label} != serial at {bad.size} entries "
                                            f"(first {bad[:5].tolist()})", case))
    return findings


def random_choices(rng: np.random.Generator) -> Any:
    """A point of the tuning space (``sparsetir.tune.space``), drawn at random: the rules'
    other parameters, which ``sparsetir.tune`` may pick."""
    from sparsetir.schedule.default import Choices
    from sparsetir.tune.space import knobs

    return Choices(**{k.name: k.values[int(rng.integers(len(k.values)))] for k in knobs()})


def run(count: int, seed: int, quiet: bool = False, stop_after: Optional[float] = None) -> Summary:
    """Generate and check ``count`` scripts from ``seed``."""
    rng = random.Random(seed)
    data_rng = np.random.default_rng(seed)
    summary = Summary()
    start = time.monotonic()
    for index in range(count):
        if stop_after is not None and time.monotonic() - start > stop_after:
            break
        script = generate(rng)
        found = check(script, data_rng)
        summary.scripts += 1
        summary.findings.extend(found)
        if not quiet:
            status = ", ".join(sorted({f.kind for f in found})) or "ok"
            print(f"[{index}] {status}", flush=True)
        for f in found:
            print(f"--- {f.kind} ({f.case}) in script {index} of seed {seed}:\n{f.script}{f.detail}\n", flush=True)
    return summary


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="scripts to generate (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet", action="store_true", help="print findings and the summary only")
    options = parser.parse_args(argv)
    start = time.monotonic()
    summary = run(options.count, options.seed, options.quiet)
    kinds = sorted({f.kind for f in summary.findings})
    print(f"{summary.scripts} scripts from seed {options.seed} in {time.monotonic() - start:.0f} s: "
          f"{len(summary.findings)} findings" + (f" ({', '.join(kinds)})" if kinds else ""))
    return 1 if summary.findings else 0


if __name__ == "__main__":
    sys.exit(main())

"""The GPU kernels the tests build once per session: every op configuration in ``OP_KEYS``
and the default-scheduled kernel of every workload (``tests/workloads.py``)."""

from __future__ import annotations

from functools import lru_cache

import sparsetir
from sparsetir.ops.cuda.kernels import build_cuda_kernel
from sparsetir.ops.kernels import KernelKey
from sparsetir.runtime.cuda.simulate import simulate
from workloads import WORKLOADS


def _key(op, dtype, feat=0, block=(0, 0), widths=()):
    return KernelKey(op, dtype, feat, block, widths=widths, target="cuda")


#: Op kernels: widths that take one lane per vector, several passes (f32 2048), sub-warp lane
#: groups (5, 16), odd widths (33, 127), one column (SpMV), both dtypes, BSR block shapes.
OP_KEYS = (
    [_key("spmm", "float32", f) for f in (1, 4, 32, 33, 127, 128, 512, 2048)]
    + [_key("spmm", "float64", f) for f in (1, 32, 128, 512)]
    + [_key("split_spmm", "float32", f) for f in (4, 33, 128)] + [_key("split_spmm", "float64", 32)]
    + [_key("sddmm", "float32", f) for f in (5, 16, 32, 33, 128, 512)]
    + [_key("sddmm", "float64", f) for f in (32, 128)]
    + [_key("segment_sum", "float32", f) for f in (1, 32, 100)]
    + [_key("softmax", "float32"), _key("softmax", "float64")]
    + [_key("bsr_spmm", "float32", f, b) for f, b in ((32, (4, 4)), (128, (2, 3)), (5, (3, 1)))]
    + [_key("ell_spmm", "float32", f) for f in (7, 32, 128)]
    + [_key("hybrid_spmm", "float32", f, widths=w) for f, w in ((1, (1, 2, 4)), (33, (2, 8)), (128, (1, 4, 16, 32)))]
    + [_key("hybrid_spmm", "float64", 32, widths=(4,))]
)


def hybrid_arguments(A, widths, X, C):
    """The GPU hybrid kernel's arguments for scipy CSR ``A`` (no duplicates), as NumPy arrays
    (``ops/cuda``'s ``DeviceBuckets.arguments`` makes them as tensors)."""
    import numpy as np

    from sparsetir import formats
    from sparsetir.ops import formatted
    from sparsetir.runtime.cuda.hybrid_layout import hybrid_layout

    made = formatted.bucket_arrays(formats.from_arrays(A.indptr, A.indices, A.data, A.shape), widths)
    lay = hybrid_layout(made.buckets, widths, np.ones(A.nnz, bool), made.empty)
    slots = A.data[lay.gather] if lay.gather.size else np.zeros(0, A.dtype)
    one = lambda k: np.arange(k + 1, dtype=np.int32)  # noqa: E731
    args = [X, C, lay.empty, lay.empty.shape[0]]
    for b in lay.buckets:
        args += [b.rows, one(b.count), b.cols, b.cols.reshape(b.count, b.width),
                 np.ascontiguousarray(slots[b.offset:b.offset + b.count * b.width]).reshape(b.count, b.width), b.count]
    p, w = lay.pieces, lay.piece_width
    ws = np.full((p, X.shape[1]), np.nan, X.dtype)
    args += [lay.long_rows, lay.long_ptr, one(p), lay.long_cols, lay.long_cols.reshape(p, w),
             np.ascontiguousarray(slots[lay.long_offset:lay.long_offset + p * w]).reshape(p, w), ws, lay.long_ptr[:-1],
             lay.long_rows.shape[0], lay.most_pieces, p, *A.shape]
    return tuple(_compact(a) for a in args)


def _compact(a):
    """``a``, or for an empty array one with the strides TVM's raw call takes (NumPy gives 0)."""
    import numpy as np

    if not isinstance(a, np.ndarray) or a.size:
        return a
    strides, step = [], a.dtype.itemsize
    for extent in reversed(a.shape):
        strides.append(step)
        step *= extent
    return np.lib.stride_tricks.as_strided(np.empty(1, a.dtype), a.shape, tuple(reversed(strides)))


def key_id(key: KernelKey) -> str:
    """A short test id: op, dtype, width and block shape."""
    block = f"_{key.block[0]}x{key.block[1]}" if key.block != (0, 0) else ""
    widths = f"_w{'_'.join(map(str, key.widths))}" if key.widths else ""
    return f"{key.op}_{key.dtype}_{key.feat}{block}{widths}"


@lru_cache(maxsize=None)
def op_kernel(key: KernelKey):
    """The CUDA kernel of an op configuration."""
    return build_cuda_kernel(key)


@lru_cache(maxsize=None)
def simulated_op(key: KernelKey):
    """The op kernel's CPU simulation."""
    return simulate(op_kernel(key))


def workload_function(name: str):
    """A workload's stage-I function."""
    w = WORKLOADS[name]
    f = sparsetir.parse_file(w.path)
    return f[w.function] if isinstance(f, dict) else f


@lru_cache(maxsize=None)
def workload_kernel(name: str):
    """A workload built for CUDA with no schedule: the default GPU schedule's kernel."""
    return sparsetir.build(workload_function(name), target="cuda")

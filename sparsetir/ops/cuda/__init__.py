"""``sparsetir.ops`` on torch CUDA tensors.

An op whose tensors are on a CUDA device runs here: the matrix's structure, the dense operands
and the result stay on the device (DLPack producers other than torch are taken through
``torch.from_dlpack``, without a copy), and the kernels of ``kernels.py`` run on the tensors'
device and torch's current stream, in order with the torch work around them.

The argument checks are the CPU path's, with the same messages:

- the matrix's structure (``indptr`` monotone from 0 to nnz, column indices in range, int32 or
  int64 indices that fit int32) is checked once per matrix object: the index tensors are copied
  to the host for that (one copy per matrix), and the device keeps int32 copies for the
  kernels; after editing a matrix's index tensors in place, call ``ops.forget(A)``, as on the
  CPU. Values are read on every call;
- dense operands are checked on every call (device, dtype, rank, rows: O(1)); a
  non-contiguous one, or one whose data is not 16-byte aligned (the kernels load up to 16
  bytes at once), is copied on the device.

``spmm`` computes on CSR, or with ``format="ell"``/``"hyb"`` (or an ``SpmmFormat`` of those) on the
GPU's layout of the hybrid format (``runtime/cuda/hybrid_layout.py``), made once per matrix and
format from the host copy of its structure and kept with it.

Gradients: ``spmm``, ``spmv``, ``sddmm``, ``softmax``, ``segment_sum`` and ``ell_spmm`` record
them for torch autograd when grad mode is on and an operand requires grad (``autograd.py``: the
backward runs these same kernels, Aᵀ's structure made on the device once per matrix), and
``bsr_spmm`` too (X's gradient only: a BSR ``A`` that requires grad is refused). ``CudaOps`` holds
the device type and the kernel source; ``ops`` is the one for CUDA (tests build one that
runs the same code on the CPU with the GPU kernels simulated, ``runtime/cuda/simulate.py``).
"""

from __future__ import annotations

import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from .. import formatted
from ..csr_tensors import CsrTensors
from ..inputs import (PreparedCache, VALUE_DTYPES, as_int32, check_offsets, check_structure, fail, memory_key, plain,
                      version)
from ..kernels import KernelKey
from ...runtime.cuda import row_split
from ...runtime.cuda.hybrid_layout import hybrid_layout
from . import autograd
from .autograd import records_gradients
from .kernels import build_cuda_kernel

#: Bytes the kernels may load at once from an array (a ``float4``): the alignment they need.
ALIGNMENT = 16
_INT32_MAX = 2**31 - 1


def on_cuda(*operands: Any) -> bool:
    """Whether any operand is a torch tensor on a CUDA device (or a ``CsrTensors`` of them);
    a dict lookup and a type check per operand when torch is not imported or nothing is."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    for x in operands:
        if isinstance(x, torch.Tensor) and x.device.type == "cuda":
            return True
        if type(x) is CsrTensors and isinstance(x.values, torch.Tensor) and x.values.device.type == "cuda":
            return True
    return False


@dataclass(frozen=True)
class DeviceCsr:
    """A CSR matrix's structure on its device, checked: int32 ``indptr`` and ``indices``; and
    its row splits for SpMM (``row_split.py``) and the row of each nonzero for SDDMM, made on
    first use."""

    indptr: Any
    indices: Any
    shape: tuple[int, int]
    dtype: str
    nnz: int
    max_row_length: int
    device: Any
    host_indptr: np.ndarray = field(repr=False, compare=False)
    #: What is derived from the structure on first use: SpMM's row splits by piece length and its
    #: choice per width (``("choice", width)``), SDDMM's row of every nonzero (``"rows"``), and the
    #: transposed structure the gradients take (``"transposed"``).
    splits: dict = field(default_factory=dict, repr=False, compare=False)

    def rows(self) -> Any:
        """Each nonzero's row (int32, on the device; SDDMM's COO order), made on first use."""
        if "rows" not in self.splits:
            counts = np.diff(self.host_indptr)
            self.splits["rows"] = _torch().from_numpy(
                np.repeat(np.arange(counts.shape[0], dtype=np.int32), counts)).to(self.device)
        return self.splits["rows"]

    def transposed(self) -> tuple["DeviceCsr", Any]:
        """The structure of Aᵀ and the map from its entries to A's (``perm``: Aᵀ's entry ``p`` is
        A's entry ``perm[p]``, int64 on the device), made on the device on first use: a stable
        sort of the entries by column lists them in Aᵀ's row-major order."""
        if "transposed" not in self.splits:
            torch = _torch()
            m, n = self.shape
            columns = self.indices.long()
            perm = torch.argsort(columns, stable=True)
            t_indptr = torch.zeros(n + 1, dtype=torch.int64, device=self.device)
            torch.cumsum(torch.bincount(columns, minlength=n), 0, out=t_indptr[1:])
            host = t_indptr.cpu().numpy().astype(np.int32)
            longest = int(np.diff(host).max()) if n else 0
            t = DeviceCsr(t_indptr.int(), self.rows()[perm].contiguous(), (n, m), self.dtype, self.nnz, longest,
                          self.device, host)
            self.splits["transposed"] = (t, perm)
        return self.splits["transposed"]

    def split(self, feat: int) -> Optional[tuple[int, Any, Any, int]]:
        """For SpMM at width ``feat``: None (one pass), or the row split's piece count,
        ``pieces`` and ``piece_ptr`` on the device, and the most pieces of one row."""
        itemsize = 8 if self.dtype == "float64" else 4
        choice = ("choice", feat)
        if choice not in self.splits:  # a walk over the rows: once per width, not per call
            self.splits[choice] = row_split.choose(self.host_indptr, feat, itemsize)
        length = self.splits[choice]
        if length is None:
            return None
        if length not in self.splits:
            plan = row_split.split_rows(self.host_indptr, length)
            torch = _torch()
            self.splits[length] = (plan.count, torch.from_numpy(plan.pieces).to(self.device),
                                   torch.from_numpy(plan.piece_ptr).to(self.device), plan.most)
        return self.splits[length]


@dataclass(frozen=True)
class DeviceBuckets:
    """A CSR matrix in the GPU's layout of the hybrid format (``runtime/cuda/hybrid_layout.py``)
    on its device: the arguments of the kernel that do not change per call, the index that
    gathers the slots' values from the matrix's (``gather``; empty when there are no slots), and,
    when the matrix has duplicate entries (summed into one slot), each entry's slot (int64) and
    the slot count, the source of that gather."""

    fmt: "formatted.SpmmFormat"
    empty: tuple
    buckets: tuple  # per width: (rows, one per row, columns, row count, width, offset)
    long: tuple  # (rows, piece pointer, one per piece, columns, offset, rows, most pieces, pieces, width)
    gather: Any
    entry_slot: Optional[Any]
    slots: int

    def arguments(self, values: Any, X: Any, C: Any) -> tuple:
        """The kernel's arguments for ``values`` (A's, in its entry order), ``X`` and ``C``."""
        torch = _torch()
        if self.entry_slot is not None:  # duplicates: each slot holds the sum of its entries
            values = torch.zeros(self.slots, dtype=values.dtype, device=values.device).index_add_(
                0, self.entry_slot, values)
        slots = torch.index_select(values, 0, self.gather) if self.gather.numel() else values.new_zeros(0)
        args: list = [X, C, *self.empty]
        for rows, one, cols, count, width, offset in self.buckets:  # the columns twice: flat, and (rows, width)
            args += [rows, one, cols, cols.view(count, width), slots[offset:offset + count * width].view(count, width),
                     count]
        rows, ptr, one, cols, offset, count, most, pieces, width = self.long
        if pieces * int(X.shape[1]) > _INT32_MAX:
            fail("spmm: X", f"the hybrid format's workspace of {pieces} long-row pieces x {int(X.shape[1])} "
                            "columns is past int32 indexing; use format='csr'")
        ws = torch.empty((pieces, int(X.shape[1])), dtype=X.dtype, device=X.device)
        args += [rows, ptr, one, cols, cols.view(pieces, width),
                 slots[offset:offset + pieces * width].view(pieces, width), ws, ptr[:-1], count, most, pieces]
        return tuple(args)


@dataclass(frozen=True)
class EllMatrix:
    """An ELL matrix's checked column indices on its device (int32, ``m * width``), its shape."""

    indices: Any
    m: int
    n: int
    width: int
    dtype: str
    device: Any

    def as_csr(self) -> DeviceCsr:
        """The same matrix as CSR (row ``i``'s entries are ``i * width ... i * width + width - 1``,
        padding included: its stored zeros take part, as in the ELL kernel)."""
        host = (np.arange(self.m + 1, dtype=np.int64) * self.width).astype(np.int32)
        return DeviceCsr(_torch().from_numpy(host).to(self.device), self.indices, (self.m, self.n), self.dtype,
                         self.m * self.width, self.width, self.device, host)


@dataclass(frozen=True)
class DeviceBsr:
    """A BSR matrix's checked block structure on its device (int32 ``indptr`` and ``indices``), its
    block shape, and its transposed structure for X's gradient, made on first use."""

    indptr: Any
    indices: Any
    block: tuple[int, int]
    device: Any
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    def transposed(self, block_cols: int) -> tuple[Any, Any, Any]:
        """Aᵀ's block ``indptr`` and ``indices`` and the map from its blocks to A's (``perm``)."""
        if "transposed" not in self.derived:
            torch = _torch()
            columns = self.indices.long()
            perm = torch.argsort(columns, stable=True)
            block_rows = torch.repeat_interleave(torch.arange(self.indptr.shape[0] - 1, device=self.device),
                                                 torch.diff(self.indptr.long()))
            t_indptr = torch.zeros(block_cols + 1, dtype=torch.int64, device=self.device)
            torch.cumsum(torch.bincount(columns, minlength=block_cols), 0, out=t_indptr[1:])
            self.derived["transposed"] = (t_indptr.int(), block_rows[perm].int().contiguous(), perm)
        return self.derived["transposed"]


class CudaKernels:
    """The compiled kernels by ``KernelKey`` (``target="cuda"``), built on first use; thread-safe."""

    def __init__(self, build: Callable[[KernelKey], Any] = build_cuda_kernel) -> None:
        self._build = build
        self._kernels: dict[KernelKey, Any] = {}
        self._lock = threading.Lock()

    def run(self, key: KernelKey, *args: Any) -> None:
        """Run the kernel of ``key`` on ``args`` (already checked)."""
        kernel = self._kernels.get(key)
        if kernel is None:
            with self._lock:
                kernel = self._kernels.get(key)
                if kernel is None:
                    kernel = self._kernels[key] = self._build(key)
        kernel.compiled.invoke(args)

    def __len__(self) -> int:
        return len(self._kernels)


class IndexKeyed:
    """Preparations keyed by the memory of two index tensors: each one's storage (a weak
    reference, so a new storage at a reused address is not taken for the old), data pointer,
    shape, strides, dtype and ``_version``."""

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple[tuple[Any, Any], tuple[int, int], Any]] = {}
        self._lock = threading.Lock()

    def get(self, crow: Any, col: Any, make: Callable[[], Any]) -> Any:
        """The preparation of ``(crow, col)``, made by ``make`` when missing or stale."""
        key = (memory_key(crow), memory_key(col))
        versions = (version(crow), version(col))
        entry = self._entries.get(key)
        if entry is not None:
            refs, seen, prepared = entry
            if seen == versions and refs[0]() is crow.untyped_storage() and refs[1]() is col.untyped_storage():
                return prepared
        prepared = make()
        drop = lambda _ref, key=key: self._drop(key, _ref)  # noqa: E731
        refs = (weakref.ref(crow.untyped_storage(), drop), weakref.ref(col.untyped_storage(), drop))
        with self._lock:
            self._entries[key] = (refs, versions, prepared)
        return prepared

    def forget(self, crow: Any, col: Any) -> None:
        """Drop what was prepared for these index tensors."""
        with self._lock:
            self._entries.pop((memory_key(crow), memory_key(col)), None)

    def _drop(self, key: tuple, ref: Any) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and any(r is ref for r in entry[0]):
                del self._entries[key]


@dataclass
class CudaOps:
    """The ops on tensors of one device type (``"cuda"``), with their kernels and preparations."""

    device_type: str = "cuda"
    kernels: CudaKernels = field(default_factory=CudaKernels)
    prepared: PreparedCache = field(default_factory=PreparedCache)
    by_index_memory: "IndexKeyed" = field(default_factory=lambda: IndexKeyed())

    # -- operands -----------------------------------------------------------------------------

    def csr(self, what: str, A: Any) -> DeviceCsr:
        """The checked structure of CSR ``A`` (torch sparse CSR or ``CsrTensors`` on the device):
        per tensor object, or for ``CsrTensors`` (a tuple, made anew by many callers) per memory of
        its index tensors, with their ``_version`` (as ``tensor_structures.py`` keys them)."""
        if type(A) is CsrTensors:
            return self.by_index_memory.get(A.crow_indices, A.col_indices, lambda: self._prepare_csr(what, A))
        return self.prepared.get("device_csr", A, lambda: self._prepare_csr(what, A))

    def forget(self, A: Any) -> None:
        """Drop the preparation of ``A`` (see ``sparsetir.ops.forget``)."""
        if type(A) is CsrTensors:
            self.by_index_memory.forget(A.crow_indices, A.col_indices)
        else:
            self.prepared.forget(A)

    def _prepare_csr(self, what: str, A: Any) -> DeviceCsr:
        torch = _torch()
        if type(A) is CsrTensors:
            crow, col, values, shape = A.crow_indices, A.col_indices, A.values, tuple(int(d) for d in A.shape)
        elif isinstance(A, torch.Tensor) and A.layout == torch.sparse_csr:
            if A.dim() != 2:
                fail(what, f"expected a 2-D sparse CSR tensor, got {A.dim()} dimensions")
            crow, col, values, shape = A.crow_indices(), A.col_indices(), A.values(), (int(A.shape[0]), int(A.shape[1]))
        else:
            fail(what, f"expected a torch sparse CSR tensor (or CsrTensors) on a {self.device_type} device, "
                       f"got {_describe(A)}")
        dtype = _dtype(values)
        if dtype not in VALUE_DTYPES:
            fail(what, f"values must be float32 or float64, got {dtype}")
        device = self._device_of(what, values)
        for name, t in (("crow_indices", crow), ("col_indices", col)):
            if t.device != device:
                fail(what, f"{name} is on {t.device}, but the values are on {device}")
        indptr = as_int32(what, "crow_indices", plain(crow).cpu().numpy())  # the one copy to the host
        indices = as_int32(what, "col_indices", plain(col).cpu().numpy())
        m, n = shape
        check_structure(what, indptr, indices, m, n, int(indices.shape[0]))
        longest = int(np.diff(indptr).max()) if m else 0
        return DeviceCsr(self._to_device(indptr, device), self._to_device(indices, device), shape, dtype,
                         int(indices.shape[0]), longest, device, indptr)  # the host copy made above

    def dense(self, what: str, X: Any, dtype: str, rows: Optional[int], device: Any, ndim: int = 2) -> Any:
        """``X`` checked (device, dtype, rank, rows) as a contiguous, aligned tensor on ``device``."""
        torch = _torch()
        if not isinstance(X, torch.Tensor):
            if not hasattr(X, "__dlpack__") or isinstance(X, np.ndarray):
                fail(what, f"expected a torch tensor on {device}, got {_describe(X)}")
            X = torch.from_dlpack(X)
        if X.layout != torch.strided:
            fail(what, f"expected a dense tensor, got layout {X.layout}")
        if X.device != device:
            fail(what, f"is on {X.device}, but the sparse matrix is on {device}; move it with .to({str(device)!r})")
        if X.dim() != ndim:
            fail(what, f"expected a {ndim}-D array, got shape {tuple(X.shape)}")
        if _dtype(X) != dtype:
            fail(what, f"dtype {_dtype(X)} does not match the sparse matrix's dtype {dtype}; convert one of them")
        if rows is not None and X.shape[0] != rows:
            fail(what, f"expected {rows} rows to match the sparse matrix, got shape {tuple(X.shape)}")
        return aligned(plain(X))

    def values(self, A: Any) -> Any:
        """The current values of ``A`` as the kernels take them."""
        values = A.values if type(A) is CsrTensors else A.values()
        return aligned(plain(values))

    def _device_of(self, what: str, t: Any) -> Any:
        if t.device.type != self.device_type:
            fail(what, f"is on {t.device}, not a {self.device_type} device")
        return t.device

    def _to_device(self, array: np.ndarray, device: Any) -> Any:
        if array.size == 0:  # numpy gives an empty array strides of 0, which TVM's checks refuse
            return _torch().empty(array.shape, dtype=getattr(_torch(), array.dtype.name), device=device)
        return _torch().from_numpy(np.ascontiguousarray(array)).to(device)

    # -- the ops ------------------------------------------------------------------------------

    def spmm(self, A: Any, X: Any, format: Any = "csr") -> Any:
        """``A @ X`` (see ``sparsetir.ops.spmm``), on CSR or, with ``format`` ``"ell"``, ``"hyb"``
        or an ``SpmmFormat`` of those, on the hybrid format's ELL buckets."""
        a = self.csr("spmm: A", A)
        buckets = None if isinstance(format, str) and format == "csr" else self.buckets(a, format)
        Xk = self.dense("spmm: X", X, a.dtype, a.shape[1], a.device)
        if records_gradients(A, X):
            return autograd.spmm(self, A, a, X, Xk, buckets)
        return self.spmm_on(a, self.values(A), Xk, buckets)

    def buckets(self, a: DeviceCsr, spec: Any) -> Optional[DeviceBuckets]:
        """``a`` in the format ``spec`` names (None for CSR), converted on the host once per matrix
        and format and kept with its structure."""
        what = "spmm: format"
        name = spec.name if isinstance(spec, formatted.SpmmFormat) else spec
        if name in ("bsr", "auto", "tuned"):
            fail(what, f"{name!r} works on the CPU; on CUDA tensors spmm computes on 'csr', 'ell' or 'hyb' "
                       "(or an ops.SpmmFormat of those; BSR tensors: ops.bsr_spmm)")
        if not isinstance(spec, str):  # an SpmmFormat's parameters checked (anything else refused)
            fmt = formatted.resolve(what, spec, None)
        elif spec in formatted.FORMAT_NAMES:
            if ("format", spec) not in a.splits:  # widths from the structure's statistics, once
                a.splits[("format", spec)] = formatted.resolve(what, spec, self._stats(a))
            fmt = a.splits[("format", spec)]
        else:
            fail(what, "format must be 'csr', 'ell' or 'hyb' (or an ops.SpmmFormat of those) on CUDA tensors, "
                       f"got {spec!r}")
        if fmt.name == "csr":
            return None
        if ("buckets", fmt) not in a.splits:
            a.splits[("buckets", fmt)] = self._device_buckets(a, fmt)
        return a.splits[("buckets", fmt)]

    def _device_buckets(self, a: DeviceCsr, fmt: "formatted.SpmmFormat") -> DeviceBuckets:
        made = formatted.bucket_arrays(self._host_csr(a), fmt.widths)
        slot_of = made.hybrid.entry_slot
        if made.refresh:  # the gather's source is the slot array: a slot is used if an entry lands there
            used = np.zeros(int(made.hybrid.slots), bool)
            used[slot_of[slot_of >= 0]] = True
        else:
            used = np.ones(a.nnz, bool)
        lay = hybrid_layout(made.buckets, fmt.widths, used, made.empty)
        dev = lambda x: self._to_device(x, a.device)  # noqa: E731
        one = lambda k: dev(np.arange(k + 1, dtype=np.int32))  # noqa: E731
        buckets = tuple((dev(b.rows), one(b.count), dev(b.cols), b.count, b.width, b.offset) for b in lay.buckets)
        long = (dev(lay.long_rows), dev(lay.long_ptr), one(lay.pieces), dev(lay.long_cols), lay.long_offset,
                int(lay.long_rows.shape[0]), lay.most_pieces, lay.pieces, lay.piece_width)
        entry_slot = _torch().from_numpy(slot_of.astype(np.int64)).to(a.device) if made.refresh else None
        return DeviceBuckets(fmt, (dev(lay.empty), int(lay.empty.shape[0])), buckets, long,
                             _torch().from_numpy(lay.gather).to(a.device), entry_slot, int(made.hybrid.slots))

    def _host_csr(self, a: DeviceCsr) -> Any:
        """``a``'s structure as a host ``formats.Csr`` (its column indices copied from the device;
        the values are not read: the kernels gather them through a position map)."""
        from ... import formats

        if "host" not in a.splits:
            a.splits["host"] = formats.from_arrays(a.host_indptr, a.indices.cpu().numpy(),
                                                   np.zeros(a.nnz, np.float32), a.shape)
        return a.splits["host"]

    def _stats(self, a: DeviceCsr) -> Any:
        from ... import formats

        if "stats" not in a.splits:
            a.splits["stats"] = formats.stats(self._host_csr(a))
        return a.splits["stats"]

    def spmm_on(self, a: DeviceCsr, values: Any, X: Any, buckets: Optional[DeviceBuckets] = None) -> Any:
        """``A @ X`` for the checked structure ``a`` with ``values`` and a checked ``X``, on CSR
        or on ``buckets``."""
        m, n = a.shape
        feat = int(X.shape[1])
        C = _torch().empty((m, feat), dtype=X.dtype, device=a.device)
        if m == 0 or feat == 0:
            return C.zero_()
        if buckets is not None:
            self.kernels.run(KernelKey("hybrid_spmm", a.dtype, feat, widths=buckets.fmt.widths, target="cuda"),
                             *buckets.arguments(values, X, C), m, n)
            return C
        split = a.split(feat)
        if split is None:
            self.kernels.run(KernelKey("spmm", a.dtype, feat, target="cuda"), values, X, C, a.indptr, a.indices, m, n,
                             a.nnz)
            return C
        count, pieces, piece_ptr, most = split
        W = _torch().empty((count, feat), dtype=X.dtype, device=a.device)
        self.kernels.run(KernelKey("split_spmm", a.dtype, feat, target="cuda"), values, X, C, W, pieces, piece_ptr,
                         a.indices, m, n, a.nnz, count, most)
        return C

    def spmv(self, A: Any, x: Any) -> Any:
        """``A @ x`` (see ``sparsetir.ops.spmv``)."""
        a = self.csr("spmv: A", A)
        xk = self.dense("spmv: x", x, a.dtype, a.shape[1], a.device, ndim=1)
        if records_gradients(A, x):
            return autograd.spmv(self, A, a, x, xk)
        return self.spmv_on(a, self.values(A), xk)

    def spmv_on(self, a: DeviceCsr, values: Any, x: Any) -> Any:
        """``A @ x`` for the checked structure ``a`` with ``values`` and a checked ``x``."""
        m, n = a.shape
        y = _torch().empty((m,), dtype=x.dtype, device=a.device)
        if m == 0:
            return y
        self.kernels.run(KernelKey("spmm", a.dtype, 1, target="cuda"), values, x.reshape(n, 1), y.reshape(m, 1),
                         a.indptr, a.indices, m, n, a.nnz)
        return y

    def sddmm(self, A: Any, X: Any, Y: Any) -> Any:
        """``A[i, j] * dot(X[i], Y[j])`` on ``A``'s entries (see ``sparsetir.ops.sddmm``)."""
        a = self.csr("sddmm: A", A)
        m, n = a.shape
        Xk = self.dense("sddmm: X", X, a.dtype, m, a.device)
        Yk = self.dense("sddmm: Y", Y, a.dtype, n, a.device)
        if Xk.shape[1] != Yk.shape[1]:
            fail("sddmm: Y", f"has {Yk.shape[1]} columns, but X has {Xk.shape[1]}")
        if records_gradients(A, X, Y):
            return autograd.sddmm(self, A, a, X, Y, Xk, Yk)
        return self._same_pattern(A, self.sddmm_on(a, self.values(A), Xk, Yk))

    def sddmm_on(self, a: DeviceCsr, values: Any, X: Any, Y: Any) -> Any:
        """The values of ``sddmm`` for the checked structure ``a`` with ``values`` and checked
        ``X`` and ``Y``, in ``a``'s entry order."""
        if a.nnz and X.shape[1]:
            out = _torch().empty((a.nnz,), dtype=X.dtype, device=a.device)
            self.kernels.run(KernelKey("sddmm", a.dtype, int(X.shape[1]), target="cuda"), values, X, Y, out, a.rows(),
                             a.indices, *a.shape, a.nnz)
            return out
        return values * 0  # an empty dot product is 0; A * 0 keeps A's NaN, as on the CPU

    def softmax(self, A: Any) -> Any:
        """Row-wise softmax over the stored entries (see ``sparsetir.ops.softmax``)."""
        a = self.csr("softmax: A", A)
        if records_gradients(A):
            return autograd.softmax(self, A, a)
        return self._same_pattern(A, self.softmax_on(a, self.values(A)))

    def softmax_on(self, a: DeviceCsr, values: Any) -> Any:
        """The values of ``softmax`` for the checked structure ``a`` with ``values``."""
        out = _torch().empty((a.nnz,), dtype=_torch_dtype(a.dtype), device=a.device)
        if a.nnz:
            self.kernels.run(KernelKey("softmax", a.dtype, target="cuda"), values, out, a.indptr, a.indices, *a.shape,
                             a.nnz)
        return out

    def row_sums(self, a: DeviceCsr, values: Any) -> Any:
        """The sum of each row's ``values`` (in ``a``'s entry order): ``segment_sum`` over ``a``'s rows."""
        m = a.shape[0]
        out = _torch().empty((m,), dtype=values.dtype, device=a.device)
        if m:
            self.kernels.run(KernelKey("segment_sum", a.dtype, 1, target="cuda"), values.reshape(a.nnz, 1),
                             out.reshape(m, 1), a.indptr, m, a.max_row_length, a.nnz)
        return out

    def segment_sum(self, values: Any, offsets: Any) -> Any:
        """Sums of consecutive segments (see ``sparsetir.ops.segment_sum``)."""
        torch = _torch()
        if not isinstance(values, torch.Tensor):
            fail("segment_sum: values", f"expected a torch tensor, got {_describe(values)}")
        dtype = _dtype(values)
        if dtype not in VALUE_DTYPES:
            fail("segment_sum: values", f"must be float32 or float64, got {dtype}")
        if values.dim() not in (1, 2):
            fail("segment_sum: values", f"expected a 1-D or 2-D array, got shape {tuple(values.shape)}")
        device = self._device_of("segment_sum: values", values)
        checked = self.dense("segment_sum: values", values, dtype, None, device, ndim=values.dim())
        host = plain(offsets).cpu().numpy() if isinstance(offsets, torch.Tensor) else np.asarray(offsets)
        offs = as_int32("segment_sum: offsets", "offsets", host)
        if offs.ndim != 1 or offs.shape[0] < 1:
            fail("segment_sum: offsets", f"expected a 1-D array of segments + 1 entries, got shape {offs.shape}")
        check_offsets("segment_sum", "offsets", offs, offs.shape[0] - 1, int(values.shape[0]))
        if records_gradients(values):
            return autograd.segment_sum(self, values, checked, offs)
        return self.segment_sum_on(checked, offs)

    def segment_sum_on(self, values: Any, offs: np.ndarray) -> Any:
        """``segment_sum`` of checked ``values`` over checked host ``offs``."""
        torch = _torch()
        nnz, segments = int(values.shape[0]), offs.shape[0] - 1
        feat = int(values.shape[1]) if values.dim() == 2 else 1
        out = torch.empty((segments, feat) if values.dim() == 2 else (segments,), dtype=values.dtype,
                          device=values.device)
        if segments == 0 or feat == 0:
            return out
        max_len = int((offs[1:] - offs[:-1]).max())
        self.kernels.run(KernelKey("segment_sum", _dtype(values), feat, target="cuda"), values.reshape(nnz, feat),
                         out.reshape(segments, feat), self._to_device(offs, values.device), segments, max_len, nnz)
        return out

    def ell_spmm(self, indices: Any, values: Any, X: Any, rows: Optional[int] = None) -> Any:
        """ELL ``A @ X`` (see ``sparsetir.ops.ell_spmm``)."""
        from .. import _ell_shape  # the shape rules are the CPU path's

        torch = _torch()
        if not isinstance(values, torch.Tensor):
            fail("ell_spmm: values", f"expected a torch tensor, got {_describe(values)}")
        dtype = _dtype(values)
        if dtype not in VALUE_DTYPES:
            fail("ell_spmm: values", f"must be float32 or float64, got {dtype}")
        device = self._device_of("ell_spmm: values", values)
        idx_host = plain(indices).cpu().numpy() if isinstance(indices, torch.Tensor) else np.asarray(indices)
        m, width = _ell_shape(tuple(idx_host.shape), tuple(values.shape), rows)
        Xk = self.dense("ell_spmm: X", X, dtype, None, device)
        n = int(Xk.shape[0])
        idx = as_int32("ell_spmm: indices", "indices", idx_host.reshape(m * width))
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
            fail("ell_spmm: indices", f"column index {bad} is out of range for X with {n} rows")
        ell = EllMatrix(self._to_device(idx, device), m, n, width, dtype, device)
        if records_gradients(values, X):
            return autograd.ell_spmm(self, ell, values, X, Xk)
        return self.ell_spmm_on(ell, aligned(plain(values)), Xk)

    def ell_spmm_on(self, ell: "EllMatrix", values: Any, X: Any) -> Any:
        """ELL ``A @ X`` for checked indices ``ell``, ``values`` and ``X``."""
        feat = int(X.shape[1])
        C = _torch().empty((ell.m, feat), dtype=X.dtype, device=ell.device)
        if ell.m == 0 or feat == 0 or ell.width == 0:
            return C.zero_()
        self.kernels.run(KernelKey("ell_spmm", ell.dtype, feat, target="cuda"), values.reshape(ell.m, ell.width), X, C,
                         ell.indices, ell.m, ell.n, ell.width)
        return C

    def bsr_spmm(self, A: Any, X: Any) -> Any:
        """BSR ``A @ X`` for a torch sparse BSR tensor ``A`` (see ``sparsetir.ops.bsr_spmm``)."""
        torch = _torch()
        what = "bsr_spmm: A"
        if not (isinstance(A, torch.Tensor) and A.layout == torch.sparse_bsr):
            fail(what, f"expected a torch sparse BSR tensor on a {self.device_type} device, got {_describe(A)}")
        if records_gradients(A):
            fail(what, "gradients of a BSR matrix's blocks on CUDA tensors are not implemented yet (X's gradient "
                             "is); call it with A.detach(), under torch.no_grad(), or on CPU tensors")
        a = self.prepared.get("device_bsr", A, lambda: self._prepare_bsr(what, A))
        m, n = (int(d) for d in A.shape)
        blocks = aligned(plain(A.values()))
        Xk = self.dense("bsr_spmm: X", X, _dtype(blocks), n, a.device)
        if records_gradients(X):
            return autograd.bsr_spmm(self, a, blocks, X, Xk, (m, n))
        return self.bsr_spmm_on(a, blocks, Xk, (m, n))

    def bsr_spmm_on(self, a: "DeviceBsr", blocks: Any, X: Any, shape: tuple[int, int]) -> Any:
        """BSR ``A @ X`` for the checked block structure ``a``, ``blocks`` and ``X``."""
        m, n = shape
        br, bc = a.block
        feat = int(X.shape[1])
        C = _torch().empty((m, feat), dtype=X.dtype, device=a.device)
        if m == 0 or feat == 0:
            return C.zero_()
        self.kernels.run(KernelKey("bsr_spmm", _dtype(blocks), feat, (br, bc), target="cuda"), blocks, X, C, a.indptr,
                         a.indices, m // br, n // bc, int(blocks.shape[0]))
        return C

    def _prepare_bsr(self, what: str, A: Any) -> "DeviceBsr":
        values = A.values()
        if _dtype(values) not in VALUE_DTYPES:
            fail(what, f"values must be float32 or float64, got {_dtype(values)}")
        device = self._device_of(what, values)
        br, bc = (int(d) for d in values.shape[1:])
        m, n = (int(d) for d in A.shape)
        indptr = as_int32(what, "crow_indices", plain(A.crow_indices()).cpu().numpy())
        indices = as_int32(what, "col_indices", plain(A.col_indices()).cpu().numpy())
        check_structure(what, indptr, indices, m // br, n // bc, int(values.shape[0]))
        return DeviceBsr(self._to_device(indptr, device), self._to_device(indices, device), (br, bc), device)

    def _same_pattern(self, A: Any, values: Any) -> Any:
        """A CSR matrix of ``A``'s kind with ``A``'s pattern and ``values``."""
        torch = _torch()
        if type(A) is CsrTensors:
            result = CsrTensors(A.crow_indices, A.col_indices, values, A.shape)
        else:
            # The structure was checked when A was prepared; torch's own checks are off, and said so.
            result = torch.sparse_csr_tensor(A.crow_indices().clone(), A.col_indices().clone(), values,
                                             size=tuple(A.shape), check_invariants=False)
        if type(result) is not CsrTensors:  # a CsrTensors result shares A's index tensors, and so its entry
            self.prepared.share("device_csr", result, self.csr("", A))
        return result


def aligned(t: Any) -> Any:
    """``t`` contiguous and 16-byte aligned (``ALIGNMENT``): itself, or a copy on its device."""
    if not t.is_contiguous():
        t = t.contiguous()
    if t.numel() and t.data_ptr() % ALIGNMENT:
        t = t.clone()
    return t


def _torch() -> Any:
    return sys.modules["torch"]


def _dtype(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.")


def _torch_dtype(name: str) -> Any:
    return getattr(_torch(), name)


def _describe(x: Any) -> str:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return f"a {x.layout} tensor on {x.device}"
    return type(x).__name__


#: The ops on CUDA devices.
ops = CudaOps()

__all__ = ["ALIGNMENT", "CudaKernels", "CudaOps", "DeviceBsr", "DeviceBuckets", "DeviceCsr", "EllMatrix", "IndexKeyed", "aligned", "on_cuda",
           "ops"]

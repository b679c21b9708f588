"""Prototype CPU SpMM / SDDMM kernels: stage-II TVMScript + sparsetir CPU recipes + hand flattening.

Run:  python bench/prototypes/spmm_sddmm_cpu.py [--mats a,b] [--feats 32,128,512] [--ops spmm,sddmm]

Stage II  -> stage III correspondence assumed by ``flatten`` (hand LowerSparseBuffer for CSR):
    A[vi, vj]          (m, n) position space  ->  A[J_indptr[vi] + vj]          (nnz,)
    J_indices[vi, vj]  (m, n)                 ->  J_indices[J_indptr[vi] + vj]  (nnz,)
    O[vi, vj] (SDDMM output)                  ->  O[J_indptr[vi] + vj]          (nnz,)
    a point region maps to its point, any other region of a sparse buffer to [0:nnz];
    dense buffers (B, C, X, Y, Part, rows) and schedule-created buffers are untouched.
Timing: TVM/torch on 2 threads, scipy on 1; for every fn, rounds of >= min_time/rounds seconds
are interleaved (a 20 ms pause before each round lets the other library's spinning workers sleep);
the reported time is the median over rounds of the per-call mean.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

os.environ.setdefault("TVM_NUM_THREADS", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import torch  # noqa: E402

from sparsetir._tvm import s_tir, tirx, tvm, tvm_ffi  # noqa: E402
from sparsetir.schedule.cpu_recipes import schedule_sddmm_cpu, schedule_spmm_cpu  # noqa: E402
from tvm.script import tirx as T  # noqa: E402
from tvm.target.codegen import llvm_get_system_cpu  # noqa: E402

torch.set_num_threads(2)
TARGET = tvm.target.Target({"kind": "llvm", "mcpu": llvm_get_system_cpu()})
DATA = os.environ.get("SPARSETIR_DATA", "/work/shared/data")
MATS = ["cora", "citeseer", "pubmed", "email_enron", "soc_slashdot0902", "rgg_n_2_15_s0", "bcsstk16"]

# --------------------------------------------------------------------------- stage-II kernels


@T.prim_func(s_tir=True)
def spmm(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
         m: T.int32, n: T.int32, nnz: T.int32, feat: T.int32):
    T.func_attr({"global_symbol": "spmm", "tir.noalias": True})
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (n, feat), "float32")
    C = T.match_buffer(c, (m, feat), "float32")
    J_indptr = T.match_buffer(indptr, (m + 1,), "int32")
    J_indices = T.match_buffer(indices, (m, n), "int32")
    for i in range(m):
        with T.sblock("spmm0"):
            vi = T.axis.spatial(m, i)
            for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                for k in range(feat):
                    with T.sblock("spmm1"):
                        vj = T.axis.reduce(n, j)
                        vk = T.axis.spatial(feat, k)
                        with T.init():
                            C[vi, vk] = T.float32(0)
                        C[vi, vk] = C[vi, vk] + A[vi, vj] * B[J_indices[vi, vj], vk]


@T.prim_func(s_tir=True)
def spmm_part(a: T.handle, b: T.handle, c: T.handle, indptr: T.handle, indices: T.handle,
              part: T.handle, m: T.int32, n: T.int32, nnz: T.int32, feat: T.int32, P: T.int32):
    # Same iteration as `spmm`, rows visited as P contiguous nnz-balanced chunks Part[t]:Part[t+1].
    T.func_attr({"global_symbol": "spmm_part", "tir.noalias": True})
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (n, feat), "float32")
    C = T.match_buffer(c, (m, feat), "float32")
    J_indptr = T.match_buffer(indptr, (m + 1,), "int32")
    J_indices = T.match_buffer(indices, (m, n), "int32")
    Part = T.match_buffer(part, (P + 1,), "int32")
    for t in range(P):
        for i in range(Part[t + 1] - Part[t]):
            with T.sblock("spmm0"):
                vi = T.axis.spatial(m, Part[t] + i)
                for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                    for k in range(feat):
                        with T.sblock("spmm1"):
                            vj = T.axis.reduce(n, j)
                            vk = T.axis.spatial(feat, k)
                            with T.init():
                                C[vi, vk] = T.float32(0)
                            C[vi, vk] = C[vi, vk] + A[vi, vj] * B[J_indices[vi, vj], vk]


@T.prim_func(s_tir=True)
def sddmm_part(a: T.handle, x: T.handle, y: T.handle, o: T.handle, indptr: T.handle,
               indices: T.handle, part: T.handle, m: T.int32, n: T.int32, nnz: T.int32,
               feat: T.int32, P: T.int32):
    T.func_attr({"global_symbol": "sddmm_part", "tir.noalias": True})
    A = T.match_buffer(a, (m, n), "float32")
    X = T.match_buffer(x, (m, feat), "float32")
    Y = T.match_buffer(y, (n, feat), "float32")
    O = T.match_buffer(o, (m, n), "float32")
    J_indptr = T.match_buffer(indptr, (m + 1,), "int32")
    J_indices = T.match_buffer(indices, (m, n), "int32")
    Part = T.match_buffer(part, (P + 1,), "int32")
    for t in range(P):
        for i in range(Part[t + 1] - Part[t]):
            with T.sblock("sddmm0"):
                vi = T.axis.spatial(m, Part[t] + i)
                for j in range(J_indptr[vi + 1] - J_indptr[vi]):
                    for k in range(feat):
                        with T.sblock("sddmm1"):
                            vj = T.axis.spatial(n, j)
                            vk = T.axis.reduce(feat, k)
                            with T.init():
                                O[vi, vj] = T.float32(0)
                            O[vi, vj] = O[vi, vj] + A[vi, vj] * X[vi, vk] * Y[J_indices[vi, vj], vk]


@T.prim_func(s_tir=True)
def sddmm_coo(a: T.handle, x: T.handle, y: T.handle, o: T.handle, rows: T.handle,
              indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32, feat: T.int32):
    # The loop structure sparse_fuse(I, J) produces: one position loop p over all nonzeros;
    # the row of p comes from a preprocessed row-index array (COO rows).  Already flat.
    T.func_attr({"global_symbol": "sddmm_coo", "tir.noalias": True})
    A = T.match_buffer(a, (nnz,), "float32")
    X = T.match_buffer(x, (m, feat), "float32")
    Y = T.match_buffer(y, (n, feat), "float32")
    O = T.match_buffer(o, (nnz,), "float32")
    I_rows = T.match_buffer(rows, (nnz,), "int32")
    J_indices = T.match_buffer(indices, (nnz,), "int32")
    for p in range(nnz):
        for k in range(feat):
            with T.sblock("sddmm1"):
                vp = T.axis.spatial(nnz, p)
                vk = T.axis.reduce(feat, k)
                with T.init():
                    O[vp] = T.float32(0)
                O[vp] = O[vp] + A[vp] * X[I_rows[vp], vk] * Y[J_indices[vp], vk]


# --------------------------------------------------------------------------- flattening, build


def flatten(func, sparse, indptr_name="J_indptr", nnz_name="nnz"):
    """Hand LowerSparseBuffer for CSR: X[vi, vj] (m, n) -> X[indptr[vi] + vj] (nnz,)."""
    params = {p.name: p for p in func.params}
    indptr, nnz = params[indptr_name], params[nnz_name]
    new = {name: tirx.decl_buffer((nnz,), params[name].dtype, name=name) for name in sparse}

    def off(idx):
        return tirx.BufferLoad(indptr, [idx[0]]) + idx[1]

    def find(src):
        return next((nm for nm in new if src.same_as(params[nm])), None)

    def on_load(x):
        nm = find(x.source)
        return x if nm is None else tirx.BufferLoad(new[nm], [off(x.indices)])

    def on_store(x):
        nm = find(x.buffer)
        return x if nm is None else tirx.BufferStore(new[nm], x.value, [off(x.indices)])

    def on_region(x):
        nm = find(x.source)
        if nm is None:
            return x
        r = x.region
        if all(isinstance(q.extent, tirx.IntImm) and q.extent.value == 1 for q in r):
            return tirx.BufferRegion(new[nm], [tvm.ir.Range.from_min_extent(off([q.min for q in r]), 1)])
        return tirx.BufferRegion(new[nm], [tvm.ir.Range.from_min_extent(0, nnz)])

    body = tvm_ffi.structural_map(func.body, [(tvm.ir.TensorLoad, on_load),
                                              (tirx.BufferStore, on_store),
                                              (tvm.ir.TensorRegion, on_region)])
    return tirx.PrimFunc([new.get(p.name, p) for p in func.params], body, func.ret_type, func.attrs)


_KEEP = []


def build(func, name):
    t0 = time.perf_counter()
    ex = tvm.compile(tvm.IRModule({name: func.with_attr("global_symbol", name)}), target=TARGET)
    f = ex[name]  # lazy LLVM JIT happens here
    _KEEP.append(ex)
    return f, time.perf_counter() - t0


def specialize_feat(func, feat):
    return func.specialize({next(p for p in func.params if p.name == "feat"): feat})


def make_spmm(feat, V, variant):
    part = variant.startswith("part")
    f = specialize_feat(spmm_part if part else spmm, feat)
    sch = s_tir.Schedule(f)
    schedule_spmm_cpu(sch, "spmm0", "spmm1", feat, vector_width=V, cache_write=not variant.endswith("nocw"))
    return build(flatten(sch.mod["main"], ["A", "J_indices"]), f"spmm_{variant}")


def make_sddmm(feat, V, variant):
    if variant == "coo":
        f = specialize_feat(sddmm_coo, feat)
        sch = s_tir.Schedule(f)
        schedule_sddmm_cpu(sch, "sddmm1", feat, vector_width=V)
        return build(sch.mod["main"], "sddmm_coo")
    f = specialize_feat(sddmm_part, feat)
    sch = s_tir.Schedule(f)
    schedule_sddmm_cpu(sch, "sddmm1", feat, vector_width=V, block0="sddmm0")
    return build(flatten(sch.mod["main"], ["A", "O", "J_indices"]), f"sddmm_{variant}")


# --------------------------------------------------------------------------- data, preprocessing


def aligned(a, align=64):
    """Copy into a 64-byte aligned array: TVM's codegen assumes the buffers' 64-byte alignment
    (znver4 codegen emits aligned vector moves; misaligned numpy arrays segfault)."""
    a = np.ascontiguousarray(a)
    buf = np.empty(a.nbytes + align, np.uint8)
    off = (-buf.ctypes.data) % align
    out = buf[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def load(name):
    A = sp.load_npz(os.path.join(DATA, name + ".npz")).tocsr()
    A.sort_indices()
    A.data, A.indices, A.indptr = aligned(A.data), aligned(A.indices), aligned(A.indptr)
    return A


def row_partition(indptr, P, row_cost=1.0):
    """P contiguous row chunks with equal nnz + row_cost*rows (once per matrix)."""
    m = len(indptr) - 1
    cost = indptr.astype(np.float64) + row_cost * np.arange(m + 1)
    part = np.searchsorted(cost, cost[-1] * np.arange(P + 1) / P, side="left").astype(np.int32)
    part[0], part[-1] = 0, m
    return aligned(np.maximum.accumulate(part).astype(np.int32))


def coo_rows(indptr):
    """Row index of every nonzero (once per matrix)."""
    m = len(indptr) - 1
    return aligned(np.repeat(np.arange(m, dtype=np.int32), np.diff(indptr)))


def timed(fn, reps=20):
    fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps * 1e3


def bench(fns, min_time=0.4, rounds=9):
    """Interleaved rounds; (median, min) over rounds of the per-call mean (ms)."""
    reps = {}
    for k, f in fns.items():
        f()
        t0 = time.perf_counter()
        f()
        reps[k] = max(1, int(min_time / rounds / max(time.perf_counter() - t0, 1e-7)))
    res = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            time.sleep(0.02)
            f()
            t0 = time.perf_counter()
            for _ in range(reps[k]):
                f()
            res[k].append((time.perf_counter() - t0) / reps[k] * 1e3)
    return {k: float(np.median(v)) for k, v in res.items()}, {k: float(np.min(v)) for k, v in res.items()}


def relerr(x, ref):
    return float(np.abs(x - ref).max() / max(np.abs(ref).max(), 1e-30))


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


# --------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mats", default=",".join(MATS))
    ap.add_argument("--feats", default="32,128,512")
    ap.add_argument("--ops", default="spmm,sddmm")
    ap.add_argument("--spmm", default="part", help="TVM SpMM variants: row,row_nocw,part,part_nocw")
    ap.add_argument("--sddmm", default="coo", help="TVM SDDMM variants: coo,csr_part")
    ap.add_argument("--vw", type=int, default=8, help="vector width (float32 lanes)")
    ap.add_argument("--parts", type=int, default=2, help="row chunks for *part variants")
    args = ap.parse_args()
    mats, feats, ops = args.mats.split(","), [int(f) for f in args.feats.split(",")], args.ops.split(",")
    spv, sdv = args.spmm.split(","), args.sddmm.split(",")
    print(f"target={TARGET}  TVM threads={os.environ['TVM_NUM_THREADS']}  torch threads="
          f"{torch.get_num_threads()}  loadavg={os.getloadavg()}")
    kern, compile_s = {}, {}
    for feat in feats:
        for v in spv if "spmm" in ops else []:
            kern["spmm", v, feat], compile_s["spmm", v, feat] = make_spmm(feat, args.vw, v)
        for v in sdv if "sddmm" in ops else []:
            kern["sddmm", v, feat], compile_s["sddmm", v, feat] = make_sddmm(feat, args.vw, v)
    print("compile+JIT s: " + ", ".join(f"{k[0]}/{k[1]}/{k[2]}={s:.2f}" for k, s in compile_s.items()))
    speed = {(op, v): [] for op in ops for v in (spv if op == "spmm" else sdv)}
    speed_min = {k: [] for k in speed}
    rng = np.random.default_rng(0)
    for name in mats:
        A = load(name)
        m, n = A.shape
        nnz = A.nnz
        t0 = time.perf_counter()
        part = row_partition(A.indptr, args.parts)
        t_part = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        rows = coo_rows(A.indptr)
        t_rows = (time.perf_counter() - t0) * 1e3
        tA = torch.sparse_csr_tensor(torch.from_numpy(A.indptr.astype(np.int64)),
                                     torch.from_numpy(A.indices.astype(np.int64)),
                                     torch.from_numpy(A.data), size=A.shape)
        print(f"\n== {name} (loadavg {os.getloadavg()[0]:.2f}): {m}x{n} nnz={nnz}  preprocessing: partition {t_part:.2f} ms, "
              f"coo rows {t_rows:.2f} ms")
        for feat in feats:
            X = aligned(rng.standard_normal((m if "sddmm" in ops else n, feat), dtype=np.float32))
            Y = aligned(rng.standard_normal((n, feat), dtype=np.float32))
            if "spmm" in ops:
                B = Y
                ref = A @ B
                tB = torch.from_numpy(B)
                fns = {"scipy": lambda: A @ B, "torch": lambda: torch.sparse.mm(tA, tB)}
                outs = {}
                for v in spv:
                    C = aligned(np.zeros((m, feat), np.float32))
                    outs[v] = C
                    k = kern["spmm", v, feat]
                    if v.startswith("part"):
                        fns[v] = (lambda k=k, C=C: k(A.data, B, C, A.indptr, A.indices, part, m, n, nnz, args.parts))
                    else:
                        fns[v] = (lambda k=k, C=C: k(A.data, B, C, A.indptr, A.indices, m, n, nnz))
                errt = relerr(torch.sparse.mm(tA, tB).numpy(), ref)
                r, rmin = bench(fns)
                base, base_min = min(r["scipy"], r["torch"]), min(rmin["scipy"], rmin["torch"])
                gbytes = (nnz * 8 + (m + 1) * 4 + nnz * feat * 4 + m * feat * 4) / 1e9
                line = f"spmm  {name:17s} f={feat:3d} scipy {r['scipy']:8.3f} torch {r['torch']:8.3f}(err {errt:.0e})"
                for v in spv:
                    s = base / r[v]
                    speed["spmm", v].append(s)
                    speed_min["spmm", v].append(base_min / rmin[v])
                    line += (f" | {v} {r[v]:8.3f} ms {gbytes / r[v] * 1e3:5.1f} GB/s x{s:4.2f} (min-based x{base_min / rmin[v]:4.2f})"
                             f" err {relerr(outs[v], ref):.0e}")
                print(line, flush=True)
            if "sddmm" in ops:
                Xs = X[:m] if X.shape[0] >= m else aligned(rng.standard_normal((m, feat), dtype=np.float32))
                Xs = aligned(Xs)
                dots = np.einsum("pk,pk->p", Xs[rows].astype(np.float64), Y[A.indices].astype(np.float64))
                ref = (A.data * dots).astype(np.float32)
                tX, tYt = torch.from_numpy(Xs), torch.from_numpy(Y).t()
                tYc = tYt.contiguous()
                fns = {"torch": lambda: torch.sparse.sampled_addmm(tA, tX, tYt, beta=0.0),
                       "torch_c": lambda: torch.sparse.sampled_addmm(tA, tX, tYc, beta=0.0)}
                outs = {}
                for v in sdv:
                    O = aligned(np.zeros(nnz, np.float32))
                    outs[v] = O
                    k = kern["sddmm", v, feat]
                    if v == "coo":
                        fns[v] = (lambda k=k, O=O: k(A.data, Xs, Y, O, rows, A.indices, m, n, nnz))
                    else:
                        fns[v] = (lambda k=k, O=O: k(A.data, Xs, Y, O, A.indptr, A.indices, part, m, n, nnz, args.parts))
                tout = torch.sparse.sampled_addmm(tA, tX, tYt, beta=0.0).values().numpy() * A.data
                errt = relerr(tout, ref)
                r, rmin = bench(fns)
                base, base_min = min(r["torch"], r["torch_c"]), min(rmin["torch"], rmin["torch_c"])
                gbytes = (nnz * 12 + (m + 1) * 4 + m * feat * 4 + nnz * feat * 4) / 1e9
                line = f"sddmm {name:17s} f={feat:3d} torch {r['torch']:8.3f} torch_c {r['torch_c']:8.3f} (err {errt:.0e})"
                for v in sdv:
                    s = base / r[v]
                    speed["sddmm", v].append(s)
                    speed_min["sddmm", v].append(base_min / rmin[v])
                    line += (f" | {v} {r[v]:8.3f} ms {gbytes / r[v] * 1e3:5.1f} GB/s x{s:4.2f} (min-based x{base_min / rmin[v]:4.2f})"
                             f" err {relerr(outs[v], ref):.0e}")
                print(line, flush=True)
    print("\n== geomean speedup (SpMM over min(scipy, torch); SDDMM over torch.sparse.sampled_addmm) ==")
    for (op, v), xs in speed.items():
        if xs:
            ys = speed_min[op, v]
            print(f"{op:5s} {v:10s} median-based: geomean x{gmean(xs):.2f} worst x{min(xs):.2f} best x{max(xs):.2f} | "
                  f"min-based: geomean x{gmean(ys):.2f} worst x{min(ys):.2f}  (n={len(xs)})")
    print(f"loadavg at end={os.getloadavg()}")


if __name__ == "__main__":
    main()

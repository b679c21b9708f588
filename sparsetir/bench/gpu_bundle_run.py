"""Run an exported sparsetir GPU bundle: its checks, then its bench (``gpu_bundle.py``).

    python3 run.py [--out DIR] [--only checks|bench] [--plan]

Needs torch with CUDA, NumPy and SciPy, and the NVIDIA driver; not TVM, not sparsetir. Writes
``results.json`` and ``results.md`` into ``--out`` (default: ``$OUT`` when set, else
``results``). ``--plan`` needs no GPU: it reads every program and evaluates its launches for
each check and bench case, which shows the bundle is whole. Exit codes: 0 everything passed,
1 a check or an answer failed, 3 no CUDA device.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sparsetir_cuda import measure, row_split  # noqa: E402
from sparsetir_cuda.launch import Launcher  # noqa: E402
from sparsetir_cuda.program import CudaProgram  # noqa: E402

EXIT_FAILED = 1
EXIT_NO_DEVICE = 3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or "results")
    parser.add_argument("--only", choices=["checks", "bench"])
    parser.add_argument("--plan", action="store_true", help="evaluate every launch without a GPU")
    args = parser.parse_args(argv)
    manifest = json.loads((HERE / "manifest.json").read_text())
    programs = {p.stem: CudaProgram.from_json(p.read_text()) for p in sorted((HERE / "kernels").glob("*.json"))}
    if args.plan:
        return plan(manifest, programs)
    try:
        import torch
    except ModuleNotFoundError:
        print("run.py: torch is not installed", file=sys.stderr)
        return EXIT_NO_DEVICE
    if not torch.cuda.is_available():
        print(f"run.py: no CUDA device (torch {torch.__version__} sees none)", file=sys.stderr)
        return EXIT_NO_DEVICE
    launchers = {name: Launcher(p, _image(name)) for name, p in programs.items()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"device": measure.device_name(torch), "torch": torch.__version__,
               "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "bundle": manifest["created"]}
    failed = False
    if args.only in (None, "checks"):
        results["checks"] = run_checks(manifest, launchers, torch)
        failed |= any(c["error"] for c in results["checks"])
    if args.only in (None, "bench"):
        rows = run_bench(manifest, launchers, torch)
        results["bench"] = [dict(row.__dict__, ours=_t(row.ours), peer=_t(row.peer), speedup=row.speedup)
                            for row in rows]
        failed |= any(row.errors for row in rows)
        results["table"] = measure.table(rows)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    (out / "results.md").write_text(_markdown(results))
    print(_markdown(results))
    return EXIT_FAILED if failed else 0


def _image(name: str):
    return lambda arch: (HERE / "kernels" / f"{name}.fatbin").read_bytes()


def _t(timing):
    return None if timing is None else {"ms": timing.ms, "method": timing.method}


def run_checks(manifest: dict, launchers: dict, torch) -> list:
    """Each check's kernel on its inputs, its outputs against the expected ones."""
    done = []
    for check in manifest["checks"]:
        data = np.load(HERE / "checks" / f"{check['name']}.npz")
        args = []
        for index in range(check["count"]):
            if str(index) in check["scalars"]:
                args.append(check["scalars"][str(index)])
            else:
                args.append(torch.from_numpy(np.ascontiguousarray(data[f"arg{index}"])).cuda())
        error = None
        try:
            launchers[check["program"]](args)
            torch.cuda.synchronize()
            for index in check["outputs"]:
                expected = torch.from_numpy(data[f"expected{index}"])
                problem = measure.mismatch(args[index].cpu(), expected, torch)
                if problem:
                    error = f"output {index}: {problem}"
                    break
        except Exception as err:  # noqa: BLE001 - a failed launch is a failed check, reported
            error = f"{type(err).__name__}: {err}"
        done.append({"name": check["name"], "error": error})
        print(f"check {check['name']}: {error or 'ok'}", flush=True)
    return done


def run_bench(manifest: dict, launchers: dict, torch) -> list:
    """Each bench case: sparsetir's kernel and the cuSPARSE peer, timed and checked."""
    import scipy.sparse

    rows = []
    generator = torch.Generator(device="cuda").manual_seed(0)
    for case in manifest["bench"]:
        csr = scipy.sparse.load_npz(HERE / "matrices" / f"{case['matrix']}.npz").tocsr()
        m, n = csr.shape
        width, kernel = case["width"], case["kernel"]
        row = measure.Row(kernel, case["matrix"], width, int(csr.nnz))
        A = torch.sparse_csr_tensor(torch.from_numpy(csr.indptr.astype(np.int64)),
                                    torch.from_numpy(csr.indices.astype(np.int64)),
                                    torch.from_numpy(csr.data.astype(np.float32)), size=csr.shape).cuda()
        values = A.values()
        indptr, indices = A.crow_indices().int(), A.col_indices().int()
        launcher = launchers[case["program"]]
        A64 = A.to(torch.float64)
        try:
            if kernel == "spmm":
                X = torch.randn(n, width, device="cuda", generator=generator)
                C = torch.empty(m, width, device="cuda")
                ours = lambda: launcher([values, X, C, indptr, indices, m, n, csr.nnz])  # noqa: E731
                length = row_split.choose(csr.indptr, width, 4)
                if length is not None:  # as sparsetir.ops.spmm does on a GPU
                    split = row_split.split_rows(csr.indptr, length)
                    pieces, piece_ptr = torch.from_numpy(split.pieces).cuda(), torch.from_numpy(split.piece_ptr).cuda()
                    W = torch.empty(split.count, width, device="cuda")
                    ours = lambda: launchers[case["split_program"]](  # noqa: E731
                        [values, X, C, W, pieces, piece_ptr, indices, m, n, csr.nnz, split.count, split.most])
                    row.plan = f"rows in pieces of {length}"
                ours()
                problem = measure.mismatch(C, torch.sparse.mm(A64, X.double()), torch)
                peer, row.peer_name = measure.torch_spmm(A, X, torch), "torch.sparse.mm (cuSPARSE)"
            else:
                X = torch.randn(m, width, device="cuda", generator=generator)
                Y = torch.randn(n, width, device="cuda", generator=generator)
                out = torch.empty(csr.nnz, device="cuda")
                row_of = torch.from_numpy(np.repeat(np.arange(m, dtype=np.int32), np.diff(csr.indptr))).cuda()
                ours = lambda: launcher([values, X, Y, out, row_of, indices, m, n, csr.nnz])  # noqa: E731
                ours()
                expected = torch.sparse.sampled_addmm(A64, X.double(), Y.double().t(), beta=0).values() * A64.values()
                problem = measure.mismatch(out, expected, torch)
                peer, row.peer_name = measure.torch_sddmm(A, X, Y, torch), "torch.sparse.sampled_addmm (cuSPARSE)"
            if problem:
                row.errors["sparsetir"] = problem
            row.ours = measure.time_on_gpu(ours, torch)
            row.peer = measure.time_on_gpu(peer, torch)
        except Exception as err:  # noqa: BLE001 - reported in the row
            row.errors["run"] = f"{type(err).__name__}: {err}"
        rows.append(row)
        print(f"bench {kernel} {case['matrix']} {width}: "
              f"{row.ours.ms if row.ours else '-'} ms vs {row.peer.ms if row.peer else '-'} ms {row.errors or ''}",
              flush=True)
    return rows


def plan(manifest: dict, programs: dict) -> int:
    """Evaluate the launches of every check and bench case with placeholder pointers."""
    import scipy.sparse

    count = 0
    for check in manifest["checks"]:
        data = np.load(HERE / "checks" / f"{check['name']}.npz")
        program = programs[check["program"]]
        scalars = {p.name: check["scalars"][str(i)] for i, p in enumerate(program.params) if str(i) in check["scalars"]}
        arrays = {p.name: (4096 * (i + 1), data[f"arg{i}"].shape) for i, p in enumerate(program.params)
                  if p.kind == "array"}
        count += len(program.launches(scalars, arrays))
    for case in manifest["bench"]:
        csr = scipy.sparse.load_npz(HERE / "matrices" / f"{case['matrix']}.npz")
        m, n = csr.shape
        program = programs[case["program"]]
        scalars = {"m": m, "n": n, "nnz": int(csr.nnz)}
        arrays = {p.name: (4096 * (i + 1), (1,)) for i, p in enumerate(program.params) if p.kind == "array"}
        count += len(program.launches(scalars, arrays))
        if "split_program" in case:
            split = row_split.split_rows(csr.tocsr().indptr, row_split.PIECE_LENGTHS[0])
            program = programs[case["split_program"]]
            arrays = {p.name: (4096 * (i + 1), (1,)) for i, p in enumerate(program.params) if p.kind == "array"}
            count += len(program.launches(dict(scalars, npieces=split.count, maxp=split.most), arrays))
    print(f"plan: {len(manifest['checks'])} checks and {len(manifest['bench'])} bench cases, {count} launches, "
          f"{len(programs)} programs")
    return 0


def _markdown(results: dict) -> str:
    lines = ["# sparsetir GPU bundle results", "", f"- device: {results['device']}",
             f"- torch: {results['torch']}", f"- date: {results['date']} (bundle made {results['bundle']})", ""]
    if "checks" in results:
        failed = [c for c in results["checks"] if c["error"]]
        lines.append(f"checks: {len(results['checks']) - len(failed)} of {len(results['checks'])} passed")
        lines += [f"- FAILED {c['name']}: {c['error']}" for c in failed]
        lines.append("")
    if "table" in results:
        lines += [f"timing: CUDA-graph replays of {measure.CALLS} calls, median of {measure.ROUNDS}", "",
                  results["table"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

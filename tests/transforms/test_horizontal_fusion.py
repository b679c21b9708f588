"""horizontal_fusion and lower_atomic_updates on a decomposed function: the ELL buckets and the
output's init run as one parallel loop over chunks given at run time, and give A @ X when every
chunk owns a row range; on CUDA the buckets' accumulations become atomic adds."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import sparsetir
from sparsetir._tvm import structural_map, tirx, tvm
from sparsetir.errors import LoweringError
from sparsetir.formats.rules import ell_rule
from sparsetir.transforms import pipeline
from sparsetir.transforms.atomic_updates import lower_atomic_updates, needs_atomics
from sparsetir.transforms.horizontal_fusion import horizontal_fusion

sys.path.insert(0, str(Path(__file__).parent))
from decompositions import csrmm  # noqa: E402
from test_format_decompose import MATRICES, _ell_structure, _operands  # noqa: E402

BLOCKS = ["csrmm_init0", "csrmm_20", "csrmm_40"]


def _stage2():
    _, compute = sparsetir.extract_preprocess(sparsetir.format_decompose(csrmm, [ell_rule(2), ell_rule(4)]))
    return pipeline.lower(compute, until=pipeline.STAGE_II)


def _ell_arguments(A):
    """The two buckets' arrays (rows of at most 2 entries in ELL(2), the rest in ELL(4)) with
    values gathered from A, and their row ids (sorted) per bucket."""
    lengths = np.diff(A.indptr)
    args, row_ids = {}, {}
    for w, rows in ((2, np.flatnonzero((lengths > 0) & (lengths <= 2))), (4, np.flatnonzero(lengths > 2))):
        ids, cols = _ell_structure(A, w, rows)
        values = np.zeros((1,) + cols.shape, np.float32)
        for r, i in enumerate(ids):
            start = A.indptr[i] + w * int(np.count_nonzero(ids[:r] == i))  # this piece's first entry
            count = min(w, A.indptr[i + 1] - start)
            values[0, r, :count] = A.data[start:start + count]
        args.update({f"a_{w}": values, f"indices_i_{w}": ids, f"indices_j_{w}": cols.reshape(-1), f"m_{w}": A.shape[0],
                     f"n_{w}": A.shape[1], f"num_rows_{w}": ids.size})
        row_ids[w] = ids
    return args, row_ids


def test_fused_loop_is_one_parallel_loop_over_the_chunks():
    fused = horizontal_fusion(_stage2(), BLOCKS)
    text = fused.script()
    assert text.count("T.parallel(P)") == 1 and text.count("for t") == 1
    assert fused.param_names[-4:] == ["part_csrmm_init0", "part_csrmm_20", "part_csrmm_40", "P"]
    # The chunk loops of the three iterations are in one body, in program order.
    body = text[text.index("T.parallel(P)"):]
    assert body.index('"csrmm_init0"') < body.index('"csrmm_20"') < body.index('"csrmm_40"')


@pytest.mark.parametrize("matrix", sorted(MATRICES))
@pytest.mark.parametrize("chunks", [1, 2, 5])
def test_fused_buckets_with_owner_chunks_compute_a_times_x(matrix, chunks):
    A = MATRICES[matrix]()
    X = _operands(A, 9)
    kernel = sparsetir.build(horizontal_fusion(_stage2(), BLOCKS))
    args, row_ids = _ell_arguments(A)
    m = A.shape[0]
    owner = np.linspace(0, m, chunks + 1).astype(np.int32)  # chunk t owns rows owner[t]:owner[t+1]
    parts = {"part_csrmm_init0": owner}
    for w, ids in row_ids.items():
        parts[f"part_csrmm_{w}0"] = np.searchsorted(ids, owner).astype(np.int32)
    C = np.full((m, 9), np.nan, np.float32)
    kernel(b=X, c=C, m=m, n=A.shape[1], feat_size=9, P=chunks, **args, **parts)
    np.testing.assert_allclose(C, A @ X, rtol=1e-5, atol=1e-5)


def test_chunk_boundaries_are_checked_like_an_indptr():
    A = MATRICES["odd_shape"]()
    kernel = sparsetir.build(horizontal_fusion(_stage2(), BLOCKS))
    args, row_ids = _ell_arguments(A)
    parts = {"part_csrmm_init0": np.array([0, 80], np.int32),  # past the 67 rows
             "part_csrmm_20": np.array([0, row_ids[2].size], np.int32),
             "part_csrmm_40": np.array([0, row_ids[4].size], np.int32)}
    with pytest.raises(sparsetir.ArgumentError, match="part_csrmm_init0"):
        kernel(b=_operands(A, 3), c=np.zeros((A.shape[0], 3), np.float32), m=A.shape[0], n=A.shape[1], feat_size=3,
               P=1, **args, **parts)


def test_fusion_needs_two_blocks_and_names_a_missing_one():
    with pytest.raises(LoweringError, match="two or more blocks"):
        horizontal_fusion(_stage2(), ["csrmm_20"])
    with pytest.raises(LoweringError, match="block 'nope'"):
        horizontal_fusion(_stage2(), ["csrmm_20", "nope"])


# --- atomics ---------------------------------------------------------------------------------------


def _bind(prim, names):
    """``prim`` with the loops ``names`` (loop var -> thread tag) bound to GPU threads."""

    def on_for(loop):
        tag = names.get(str(loop.loop_var.name))
        if tag is None:
            return loop
        iv = tirx.IterVar(tvm.ir.Range.from_min_extent(loop.min, loop.extent), tirx.Var(tag, "int32"), 1, tag)
        return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.THREAD_BINDING, loop.body, iv)

    return prim.with_body(structural_map(prim.body, [(tirx.For, on_for)]))


def test_bucket_accumulations_become_cuda_atomic_adds():
    f3 = pipeline.lower(horizontal_fusion(_stage2(), BLOCKS, parallel=False))
    atomic = lower_atomic_updates(f3, ["csrmm_20", "csrmm_40"])
    text = atomic.script()
    assert text.count("T.cuda.atomic_add(T.address_of(c[") == 2 or text.count("atomic_add(T.address_of(c[") == 2
    assert "C[" not in text and "csrmm_init0" in text  # the init stays a plain store
    lib = tvm.compile(tvm.IRModule({"main": _bind(atomic, {"t_m": "blockIdx.x"})}),
                      target=tvm.target.Target({"kind": "cuda", "arch": "sm_80"}))
    source = lib.mod.imports[0].inspect_source()
    assert "atomicAdd(" in source and source.count("tvm_builtin_cuda_atomic_add(") >= 3  # definition + 2 uses


def test_atomics_refuse_what_they_cannot_make_atomic():
    f3 = pipeline.lower(horizontal_fusion(_stage2(), BLOCKS, parallel=False))
    with pytest.raises(LoweringError, match="block 'csrmm_init0' stores c\\[...\\] = .*not an accumulation"):
        lower_atomic_updates(f3, ["csrmm_init0"])
    with pytest.raises(LoweringError, match="no block named 'nope'"):
        lower_atomic_updates(f3, ["nope"])
    assert needs_atomics("cuda") and not needs_atomics("llvm")

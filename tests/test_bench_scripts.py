"""``sparsetir bench --scripts``: users' scripts built with defaults, checked and timed.

The end-to-end runs build real kernels from the examples (a few, on a 40x30 matrix, one round)
and use a SciPy stand-in for ``sparsetir.ops``; the references are checked against the test
suite's own (``tests/workloads.py``) without compiling anything. No test looks at a timing.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

from sparsetir import cli
from sparsetir.bench import report, run, script_cases, scripts
from sparsetir.bench.kernels import Impl
from sparsetir.bench.timing import SIZING_CALLS, measure

sys.path.insert(0, str(Path(__file__).parent))
import workloads  # noqa: E402

CHECKOUT = Path(__file__).resolve().parents[1]


def _small(seed: int = 2) -> scipy.sparse.csr_matrix:
    """A 40x30 canonical float32 CSR matrix with an empty row."""
    small = scipy.sparse.random(40, 30, density=0.2, format="csr", dtype=np.float32, random_state=seed).tolil()
    small[7, :] = 0
    small = small.tocsr()
    small.eliminate_zeros()
    small.sort_indices()
    return small


@pytest.fixture
def small_file(tmp_path) -> Path:
    path = tmp_path / "small.npz"
    scipy.sparse.save_npz(path, _small())
    return path


def _fake_ops() -> types.ModuleType:
    """sparsetir.ops's spmm and sddmm, computed with SciPy."""
    ops = types.ModuleType("fake_ops")
    ops.spmm = lambda a, x: np.asarray(a @ x, dtype=np.float32)

    def sddmm(a, x, y):
        coo = a.tocoo()
        values = (coo.data * np.sum(x[coo.row] * y[coo.col], axis=1)).astype(np.float32)
        return scipy.sparse.csr_matrix((values, a.indices, a.indptr), shape=a.shape)

    ops.sddmm = sddmm
    return ops


def _bench(argv, ops=None) -> int:
    args = cli.build_parser().parse_args(["bench", "--quiet", *argv])
    return run(args, ops=ops if ops is not None else _fake_ops())


@pytest.mark.parametrize("name", sorted(scripts.README_SCRIPTS))
def test_the_readme_scripts_are_the_readmes(name):
    readme = (CHECKOUT / "README.md").read_text()
    body = scripts.README_SCRIPTS[name].split("\n\n\n", 1)[1]  # the function, after the import
    assert body in readme


#: Examples whose kernel assembles its output (returns it): tests/workloads.py holds the inputs
#: and reference of the example computing the same into a given pattern, which they share.
ASSEMBLED = {"csr_add_assembled": "csr_add", "csr_multiply_assembled": "csr_multiply"}


def _workload(name: str):
    return workloads.WORKLOADS[ASSEMBLED.get(name, name)]


def test_every_example_has_inputs_and_a_reference():
    examples = {path.stem for path in (CHECKOUT / "examples").glob("*.py")}
    assert examples == set(script_cases.SPECS)
    assert scripts.unknown_examples() == []
    assert set(workloads.WORKLOADS) | set(ASSEMBLED) >= examples
    for name, spec in script_cases.SPECS.items():
        assert _workload(name).outputs == (spec.output,)


@pytest.mark.parametrize("name", sorted(script_cases.SPECS))
def test_references_agree_with_the_test_suites(name):
    """Each reference, on the bench's own inputs (from a small matrix with an empty row), gives
    what tests/workloads.py's gives; its magnitude bounds every value."""
    spec = script_cases.SPECS[name]
    rng = np.random.default_rng(0)
    inputs = spec.inputs(_small(), rng) if spec.graph else spec.inputs(rng)
    assert set(inputs) == set(_workload(name).params)
    expected = spec.reference(inputs)
    theirs = _workload(name).reference(inputs)[spec.output].astype(np.float64)
    magnitude = script_cases.magnitude_of(spec, inputs)
    assert expected.shape == inputs[spec.output].shape == magnitude.shape
    assert np.all(np.abs(expected - theirs) <= 1e-6 * magnitude + 1e-30)
    assert np.all(np.abs(expected) <= magnitude * (1 + 1e-12))


def test_large_inputs_are_cut_to_the_work_budget(monkeypatch):
    monkeypatch.setattr(script_cases, "WORK_BUDGET", 10_000)
    graph = scipy.sparse.random(512, 512, density=0.05, format="csr", dtype=np.float32, random_state=0)
    spec = dataclasses.replace(script_cases.SPECS["csr_spmm_detached"], work=lambda g: float(g.shape[0]) ** 2)
    cut, side = script_cases.fitted(spec, graph)
    assert side == 64 and cut.shape == (64, 64) and cut.has_sorted_indices
    assert np.array_equal(cut.toarray(), graph.toarray()[:64, :64])
    spec = dataclasses.replace(spec, work=lambda g: 1.0)
    assert script_cases.fitted(spec, graph) == (graph, None)


def test_sddmm_script_computes_ops_sddmm_with_its_operands_mapped():
    """examples/sddmm.py's y = x * (a @ b.T) on the pattern is ops.sddmm(A, X, Y) with a = X,
    b = Y and x = A's values: the reference the vs-peers part checks the script against."""
    matrix = _small()
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((40, 6), dtype=np.float32), rng.standard_normal((30, 6), dtype=np.float32)
    inputs = dict(a=x, b=y, x=matrix.data, y=np.empty(matrix.nnz, np.float32), indptr=matrix.indptr,
                  indices=matrix.indices, m=40, n=30, feat_size=6, nnz=matrix.nnz)
    expected = _fake_ops().sddmm(matrix, x, y).data
    assert np.allclose(script_cases.sddmm_reference(inputs), expected, rtol=1e-5, atol=1e-6)


def test_a_kernel_that_stops_writing_fails_its_check():
    """Each checked answer puts the output back to NaN: a kernel that wrote the right answer once
    and then writes nothing cannot pass on the stale array."""
    calls = []

    def kernel(out, value):
        if not calls:
            out[:] = value
        calls.append(1)

    impl = scripts._script_impl("default", kernel, {"out": np.full(3, np.nan, np.float32), "value": 2.0}, "out")
    expected = np.full(3, 2.0)

    def accept(impl: Impl, output):
        got = impl.values(output)
        return None if np.array_equal(got, expected) else f"got {got}"

    timing = measure([impl], 2, accept)["default"]
    assert timing.error == "got [nan nan nan]"
    assert timing.results_checked == 2  # the first call's answer passed, the second's did not


def test_scripts_run_checks_and_reports_both_parts(small_file, tmp_path, capsys):
    names = ["csr_spmm", "sddmm", "csr_to_bsr", "rgcn_heterogeneous", "batched_ragged_matmul"]
    argv = ["--matrix", str(small_file), "--widths", "5,8", "--rounds", "1", "--out", str(tmp_path)]
    for name in names:
        argv += ["--script", name]
    assert _bench(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "timed interleaved" in out
    assert "script ms" in out and "ops ms" in out and "script/ops" in out and "vs faster" in out
    assert "default ms" in out and "serial ms" in out and "rules applied" in out
    assert "results matched their float64 references" in out
    table = out.splitlines()
    for kernel in ("spmm", "sddmm"):
        for width in (5, 8):
            assert any(line.split()[:3] == ["small", kernel, str(width)] for line in table)
    for name in names:
        assert any(line.split()[:2] == [name, "random" if name == "batched_ragged_matmul" else "small"]
                   for line in table)

    document = json.loads((tmp_path / report.JSON_NAME).read_text())
    assert document["passed"] is True and document["rows"] == []
    assert document["settings"]["scripts"] == names
    results = document["scripts"]
    assert results["passed"] is True
    assert [(row["kernel"], row["width"]) for row in results["vs_peers"]] == [
        ("spmm", 5), ("spmm", 8), ("sddmm", 5), ("sddmm", 8)]
    for row in results["vs_peers"]:
        assert {"script", "ops", "scipy"} <= row["impls"].keys()
        assert row["script_vs"]["ops"] > 0 and row["script_vs_faster_peer"] > 0
        for impl in row["impls"].values():
            assert impl["error"] is None and impl["results_checked"] == 2 + SIZING_CALLS
    assert [row["script"] for row in results["vs_serial"]] == names
    for row in results["vs_serial"]:
        assert row["passed"] is True and set(row["impls"]) == {"default", "serial"}
        assert row["kernel"] == "SpecializedKernel" and row["speedup"] > 0
        assert all(impl["results_checked"] == 2 + SIZING_CALLS for impl in row["impls"].values())
        assert all(rule.split("@")[0] in {"row_parallel", "streamed_rows", "register_tile", "dot_product",
                                          "vectorize_inner"} for rule in row["rules_applied"])
        assert row["parallel"] == any(r.startswith("row_parallel@") for r in row["rules_applied"])
    summary = results["summary"]
    assert set(summary["vs_peers"]) == {"spmm", "sddmm"}
    assert summary["vs_peers"]["spmm"]["vs_ops"]["rows"] == 2
    assert summary["vs_serial"]["rows"] == len(names) and summary["vs_serial"]["geomean"] > 0
    if (tmp_path / report.PLOT_NAME).exists():
        assert (tmp_path / report.PLOT_NAME).read_bytes().startswith(b"\x89PNG")


def test_a_wrong_answer_fails_the_run(small_file, tmp_path, capsys, monkeypatch):
    spec = script_cases.SPECS["csr_rowsum"]
    monkeypatch.setitem(script_cases.SPECS, "csr_rowsum",
                        dataclasses.replace(spec, reference=lambda p: spec.reference(p) + 1.0))
    argv = ["--matrix", str(small_file), "--script", "csr_rowsum", "--rounds", "1", "--alone",
            "--out", str(tmp_path)]
    assert _bench(argv) == 1
    captured = capsys.readouterr()
    assert "FAILED" in captured.err and "csr_rowsum built default on small" in captured.err
    assert "differ from the float64 reference" in captured.err
    assert "FAIL" in captured.out
    document = json.loads((tmp_path / report.JSON_NAME).read_text())
    assert document["passed"] is False and document["settings"]["mode"] == "alone"
    row = document["scripts"]["vs_serial"][0]
    assert row["passed"] is False and row["impls"]["serial"]["error"]


def test_unknown_script_is_a_usage_error(capsys):
    assert _bench(["--script", "nope"]) == 2
    assert "unknown script 'nope'" in capsys.readouterr().err


def test_a_script_that_does_not_build_fails_the_run(small_file, tmp_path, capsys, monkeypatch):
    def broken(name):
        raise ValueError(f"cannot read {name}")

    monkeypatch.setattr(scripts, "script_function", broken)
    argv = ["--matrix", str(small_file), "--script", "csr_rowsum", "--rounds", "1", "--out", str(tmp_path)]
    assert _bench(argv) == 1
    assert "sparsetir.build failed: raised ValueError: cannot read csr_rowsum" in capsys.readouterr().err
    row = json.loads((tmp_path / report.JSON_NAME).read_text())["scripts"]["vs_serial"][0]
    assert row["passed"] is False and row["rules_applied"] == [] and row["kernel"] == ""

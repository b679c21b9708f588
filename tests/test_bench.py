"""``sparsetir bench``: a smoke run end to end, wrong kernels caught, bad options refused.

The runs use a SciPy stand-in for ``sparsetir.ops`` (so they test the benchmark, not the
kernels), except one that runs the real ops once they exist. No test looks at a timing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest
import scipy.sparse

from sparsetir import cli, data
from sparsetir.bench import check, interleave, kernels, peers, report, run, timing
from sparsetir.bench.timing import SIZING_CALLS, Timing


def _spmm(matrix, x):
    return np.asarray(matrix @ x, dtype=np.float32)


def _sddmm(matrix, x, y):
    coo = matrix.tocoo()
    values = coo.data * np.sum(x[coo.row] * y[coo.col], axis=1)
    return scipy.sparse.csr_matrix((values, matrix.indices, matrix.indptr), shape=matrix.shape)


def _segment_sum(values, offsets):
    segments = scipy.sparse.csr_matrix(
        (np.ones(values.shape[0], values.dtype), np.arange(values.shape[0]), offsets),
        shape=(offsets.shape[0] - 1, values.shape[0]),
    )
    return np.asarray(segments @ values, dtype=values.dtype)


def _bsr_spmm(matrix, x):
    return np.asarray(matrix @ x, dtype=np.float32)


def _ell_spmm(indices, values, x):
    return np.einsum("ij,ijk->ik", values, x[indices]).astype(np.float32)


def _softmax(matrix):
    result = matrix.copy()
    for row in range(matrix.shape[0]):
        part = slice(matrix.indptr[row], matrix.indptr[row + 1])
        exps = np.exp(matrix.data[part] - matrix.data[part].max(initial=0))
        result.data[part] = exps / exps.sum()
    return result


def fake_ops(**overrides) -> types.ModuleType:
    """A stand-in for sparsetir.ops computing with SciPy, with some kernels replaced."""
    ops = types.ModuleType("fake_ops")
    ops.spmm, ops.sddmm, ops.spmv = _spmm, _sddmm, _spmm
    ops.segment_sum, ops.bsr_spmm, ops.ell_spmm = _segment_sum, _bsr_spmm, _ell_spmm
    ops.softmax = _softmax
    for name, kernel in overrides.items():
        setattr(ops, name, kernel)
    return ops


def bench(argv, ops=None) -> int:
    """Run ``sparsetir bench ARGV`` quietly, with ``ops`` in place of sparsetir.ops."""
    args = cli.build_parser().parse_args(["bench", "--quiet", *argv])
    return run(args, ops=ops)


def test_smoke_run_writes_checked_results(tmp_path, capsys):
    assert bench(["--smoke", "--out", str(tmp_path)], ops=fake_ops()) == 0
    out = capsys.readouterr().out
    assert "sparsetir ms" in out and "scipy ms" in out
    assert "results matched SciPy" in out

    document = json.loads((tmp_path / report.JSON_NAME).read_text())
    assert document["schema"] == report.SCHEMA
    assert document["passed"] is True
    environment = document["environment"]
    assert {"timestamp", "cpu", "threads", "versions", "load_average"} <= environment.keys()
    assert {"sparsetir", "tvm", "numpy", "scipy", "torch", "mkl"} <= environment["versions"].keys()
    assert environment["threads"].keys() == {"sparsetir", "torch", "mkl", "scipy"}
    assert environment["parallel_backend"]
    assert document["settings"]["widths"] == [32] and document["settings"]["smoke"] is True
    assert document["settings"]["mode"] == "interleaved"
    assert document["settings"]["threads"] is None
    # Every kernel by default; ELL is skipped on cora, whose longest row is 43x its mean.
    assert [(row["matrix"], row["kernel"], row["width"]) for row in document["rows"]] == [
        ("cora", "spmm", 32),
        ("cora", "sddmm", 32),
        ("cora", "spmv", None),
        ("cora", "segment_sum", 32),
        ("cora", "bsr_spmm", 32),
        ("cora", "softmax", None),
    ]
    assert "skipped ell_spmm on cora: its longest row (168) is 43x" in " ".join(document["notes"])
    assert "bsr_spmm on cora: 4x4 blocks" in " ".join(document["notes"])
    for row in document["rows"]:
        assert row["passed"] is True
        assert row["nnz"] == data.load("cora").nnz and row["bytes_moved"] > 0
        assert {"sparsetir", "scipy"} <= row["impls"].keys()
        for impl in row["impls"].values():
            assert impl["error"] is None
            # The warm-up's two answers and each round's last one are all checked.
            assert impl["results_checked"] == 1 + SIZING_CALLS + document["settings"]["rounds"]
            assert impl["ms"] > 0 and len(impl["round_ms"]) == document["settings"]["rounds"]
        assert row["speedup"]["scipy"] > 0
    assert set(document["summary"]) == {
        "spmm", "sddmm", "spmv", "segment_sum", "bsr_spmm", "softmax"
    }


def test_smoke_run_draws_the_plot(tmp_path):
    pytest.importorskip("matplotlib")
    assert bench(["--smoke", "--rounds", "1", "--out", str(tmp_path)], ops=fake_ops()) == 0
    assert (tmp_path / report.PLOT_NAME).read_bytes().startswith(b"\x89PNG")


def test_without_the_bench_extra_no_plot_and_a_note(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert bench(["--smoke", "--rounds", "1", "--out", str(tmp_path)], ops=fake_ops()) == 0
    assert "note: no plot: matplotlib is not installed" in capsys.readouterr().err
    assert (tmp_path / report.JSON_NAME).is_file()
    assert not (tmp_path / report.PLOT_NAME).exists()


def test_smoke_run_of_sparsetir_ops(tmp_path, capsys):
    ops = pytest.importorskip("sparsetir.ops")
    if not any(hasattr(ops, name) for name in ("spmm", "sddmm")):
        pytest.skip("sparsetir.ops has neither spmm nor sddmm yet")
    status = cli.main(["bench", "--smoke", "--quiet", "--rounds", "1", "--out", str(tmp_path)])
    assert status == 0, capsys.readouterr().err
    assert json.loads((tmp_path / report.JSON_NAME).read_text())["passed"] is True


def test_formats_are_timed_beside_csr_and_auto_reports_its_choice(tmp_path, capsys):
    status = cli.main(["bench", "cora", "--kernels", "spmm", "--widths", "16", "--rounds", "1", "--formats",
                       "bsr,hyb,auto", "--quiet", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0
    result = json.loads((tmp_path / report.JSON_NAME).read_text())
    row = result["rows"][0]
    assert {"sparsetir:bsr", "sparsetir:hyb", "sparsetir:auto"} <= set(row["impls"])
    assert all(row["impls"][name]["results_checked"] > 0 for name in row["impls"])  # every format checked
    facts = row["formats"]
    assert facts["bsr"]["format"].startswith("bsr(") and facts["bsr"]["conversion_ms"] > 0
    assert facts["hyb"]["format"].startswith("hyb(") and facts["auto"]["choice"] in facts["auto"]["candidates_ms"]
    assert facts["auto"]["speedup_over_csr"] > 0
    assert set(result["formats_summary"]) == {"bsr", "hyb", "auto"}
    assert "auto chose" in out and "spmm on auto: geomean speedup over sparsetir's CSR" in out


def test_formats_option_is_checked(capsys):
    assert cli.main(["bench", "--formats", "coo"]) == 2
    assert "unknown format 'coo' (choose from bsr, ell, hyb, auto, or none)" in capsys.readouterr().err


def _off_by_one_value(matrix, x):
    result = _spmm(matrix, x)
    result[5, 3] += 1.0
    return result


def _other_pattern(matrix, x, y):
    return scipy.sparse.csr_matrix(matrix.shape, dtype=np.float32)


def _raises(matrix, x, y):
    raise RuntimeError("kernel exploded")


@pytest.mark.parametrize(
    "kernel, wrong, message",
    [
        ("spmm", _off_by_one_value, "1 of 86656 values differ from SciPy; worst at [5, 3]"),
        ("sddmm", _other_pattern, "result does not have the sparsity pattern of A"),
        ("sddmm", _raises, "raised RuntimeError: kernel exploded"),
    ],
    ids=["wrong-value", "wrong-pattern", "raises"],
)
def test_wrong_kernel_fails_the_run(tmp_path, capsys, kernel, wrong, message):
    argv = ["--smoke", "--rounds", "1", "--out", str(tmp_path)]
    status = bench(argv, ops=fake_ops(**{kernel: wrong}))
    assert status == 1
    err = capsys.readouterr().err
    assert "sparsetir bench: FAILED: 1 implementation(s) gave a wrong answer or an error" in err
    assert f"sparsetir {kernel} on cora (width 32): {message}" in err
    document = json.loads((tmp_path / report.JSON_NAME).read_text())
    assert document["passed"] is False
    [failed] = [row for row in document["rows"] if not row["passed"]]
    assert message in failed["impls"]["sparsetir"]["error"]
    assert failed["impls"]["sparsetir"]["ms"] is None


def test_missing_matrix_file_is_a_usage_error(tmp_path, capsys):
    missing = tmp_path / "missing.npz"
    assert cli.main(["bench", "--smoke", "--matrix", str(missing)]) == 2
    assert capsys.readouterr().err == f"sparsetir bench: matrix file {missing}: no such file\n"
    assert not (tmp_path / report.JSON_NAME).exists()


def test_unknown_matrix_name_lists_where_it_looked(capsys):
    assert cli.main(["bench", "--smoke", "no_such_matrix"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sparsetir bench: no matrix named 'no_such_matrix'")
    assert str(data.PACKAGE_DIR) in err


def test_matrix_file_and_name(tmp_path, capsys):
    small = scipy.sparse.random(40, 30, density=0.2, format="csr", dtype=np.float32, random_state=1)
    small.sort_indices()
    scipy.sparse.save_npz(tmp_path / "small.npz", small)
    argv = ["--matrix", str(tmp_path / "small.npz"), "cora", "--kernels", "spmv,spmm"]
    assert bench([*argv, "--widths", "4", "--rounds", "1", "--out", str(tmp_path)], fake_ops()) == 0
    rows = json.loads((tmp_path / report.JSON_NAME).read_text())["rows"]
    assert [(row["matrix"], row["kernel"], row["width"]) for row in rows] == [
        ("cora", "spmv", None),
        ("cora", "spmm", 4),
        ("small", "spmv", None),
        ("small", "spmm", 4),
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--kernels", "spmm,gemm"],
            "unknown kernel 'gemm' (choose from spmm, sddmm, spmv, segment_sum, bsr_spmm, "
            "ell_spmm, softmax)",
        ),
        (["--widths", "0"], "--widths must be positive"),
        (["--rounds", "0"], "--rounds must be at least 1"),
    ],
)
def test_bad_options_are_usage_errors(capsys, argv, message):
    assert bench(argv, ops=fake_ops()) == 2
    assert capsys.readouterr().err.startswith(f"sparsetir bench: {message}")


def test_widths_must_be_integers(capsys):
    assert cli.main(["bench", "--widths", "32,wide"]) == 2
    assert "argument --widths: '32,wide' is not a comma-separated list" in capsys.readouterr().err


def test_kernel_missing_from_ops_is_skipped_with_a_note(tmp_path, capsys):
    ops = fake_ops()
    del ops.sddmm
    argv = ["--smoke", "--rounds", "1", "--kernels", "spmm,sddmm", "--out", str(tmp_path)]
    assert bench(argv, ops=ops) == 0
    assert "note: skipped sddmm: fake_ops has no sddmm()" in capsys.readouterr().err
    rows = json.loads((tmp_path / report.JSON_NAME).read_text())["rows"]
    assert [row["kernel"] for row in rows] == ["spmm"]


def test_no_kernel_at_all_is_refused(capsys):
    assert bench(["--smoke"], ops=types.ModuleType("empty_ops")) == 2
    assert "nothing to run: skipped spmm" in capsys.readouterr().err


def _case(kernel: str, width: int = 3):
    matrix = data.load("cora")
    return kernels.KERNELS[kernel].case("cora", matrix, width, seed=0)


def test_check_allows_float32_rounding_where_terms_cancel():
    case = _case("spmm")
    impl = kernels.Impl("x", lambda: None, np.asarray)
    # float32 rounding of a sum near zero is large relative to the sum, small to its terms.
    rounded = case.expected + 1e-6 * case.magnitude
    assert check.mismatch(case, impl, rounded) is None
    assert "worst at" in check.mismatch(case, impl, case.expected + 1e-3 * case.magnitude)


def test_check_catches_nan_and_shape():
    case = _case("sddmm")
    impl = kernels.Impl("x", lambda: None, np.asarray)
    broken = case.expected.copy()
    broken[7] = np.nan
    row, col = case.locate(7)
    assert f"1 of {case.matrix.nnz} values differ from SciPy; worst at [{row}, {col}]" in (
        check.mismatch(case, impl, broken)
    )
    assert "has shape (3,)" in check.mismatch(case, impl, np.zeros(3))


def _timing(*round_ms: float) -> Timing:
    return Timing(first_call_ms=1.0, round_ms=list(round_ms))


def test_speedups_and_summary():
    def row(width, ours, scipy_ms, torch_ms):
        timings = {
            "sparsetir": _timing(ours), "scipy": _timing(scipy_ms), "torch": _timing(torch_ms)
        }
        return report.Row("m", "m.npz", (4, 4), 8, "spmm", width, 1_000_000, timings)

    rows = [row(32, 1.0, 2.0, 4.0), row(128, 2.0, 16.0, 1.0)]
    assert rows[0].faster_peer == "scipy" and rows[0].speedup("scipy") == 2.0
    assert rows[1].faster_peer == "torch" and rows[1].speedup("torch") == 0.5
    assert rows[0].gbps("sparsetir") == 1.0  # 1 MB in 1 ms
    stats = report.summary(rows)["spmm"]
    assert stats["geomean_speedup"] == pytest.approx(1.0)
    assert stats["min_speedup"] == 0.5 and stats["min_at"] == {
        "matrix": "m", "width": 128, "peer": "torch"
    }
    lines = report.table(rows).splitlines()
    assert lines[0].split()[-2:] == ["vs", "faster"]
    assert lines[1].endswith("2.00x") and lines[2].endswith("0.50x")


@pytest.mark.parametrize("speedups", [(1.3, 2.1), (0.9, 1.1), (0.02, 40.0)], ids=["modest", "near-1", "wide"])
def test_the_plot_labels_its_speedup_axes(tmp_path, speedups):
    """A log axis labels only powers of ten by default: speedups between 0.5x and 5x got one label."""
    pytest.importorskip("matplotlib")
    from matplotlib import pyplot

    def row(kernel, width, speedup):
        timings = {"sparsetir": _timing(1.0), "scipy": _timing(speedup), "torch": _timing(speedup * 1.1)}
        return report.Row("cora", "cora.npz", (4, 4), 8, kernel, width, 1_000_000, timings)

    rows = [row(kernel, width, s) for kernel in ("spmm", "sddmm") for width, s in zip((32, 128), speedups)]
    figure = report.speedup_figure(rows)
    try:
        figure.savefig(tmp_path / report.PLOT_NAME)  # drawn as written: its ticks are final
        assert len(figure.axes) == 2
        for axis in figure.axes:
            low, high = axis.get_ylim()
            labels = [label.get_text() for at, label in zip(axis.get_yticks(), axis.get_yticklabels())
                      if low <= at <= high and label.get_text()]
            assert len(labels) >= 3, (axis.get_title(), labels)
            assert "1x" in labels and all(label.endswith("x") for label in labels)
    finally:
        pyplot.close(figure)


def test_log_ticks_take_the_densest_series_that_fits():
    assert report.log_ticks(0.667, 1.5) == [0.7, 1.0, 1.5]
    assert report.log_ticks(0.1, 30) == [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
    assert report.log_ticks(0.01, 1000) == [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]


def test_long_errors_are_shortened_on_stderr_and_whole_in_json(tmp_path, capsys):
    long_message = "\n".join(f"line {i}" for i in range(50))

    def raises_long(matrix, x):
        raise RuntimeError(long_message)

    argv = ["--smoke", "--rounds", "1", "--kernels", "spmm", "--out", str(tmp_path)]
    assert bench(argv, ops=fake_ops(spmm=raises_long)) == 1
    err = capsys.readouterr().err
    assert "raised RuntimeError: line 0\nline 1\nline 2\n" in err
    assert "... 43 more lines in bench.json ...\nline 46\nline 47\nline 48\nline 49" in err
    [row] = json.loads((tmp_path / report.JSON_NAME).read_text())["rows"]
    assert row["impls"]["sparsetir"]["error"] == f"raised RuntimeError: {long_message}"


# ------------------------------------------------ segment_sum, bsr_spmm, ell_spmm and softmax

NEW_KERNELS = ("segment_sum", "bsr_spmm", "ell_spmm", "softmax")


def _small_matrix(tmp_path):
    """A 40x30 canonical CSR file with an empty row (30 columns: BSR blocks of 2)."""
    small = scipy.sparse.random(40, 30, density=0.2, format="csr", dtype=np.float32,
                                random_state=2)
    small = small.tolil()
    small[7, :] = 0
    small = small.tocsr()
    small.eliminate_zeros()
    small.sort_indices()
    assert np.diff(small.indptr)[7] == 0
    path = tmp_path / "small.npz"
    scipy.sparse.save_npz(path, small)
    return path


def test_new_kernels_of_sparsetir_ops_match_their_peers(tmp_path, capsys):
    ops = pytest.importorskip("sparsetir.ops")
    if not all(hasattr(ops, name) for name in NEW_KERNELS):
        pytest.skip("sparsetir.ops lacks one of " + ", ".join(NEW_KERNELS))
    argv = ["bench", "--quiet", "--matrix", str(_small_matrix(tmp_path)), "--kernels",
            ",".join(NEW_KERNELS), "--widths", "5", "--rounds", "1", "--out", str(tmp_path)]
    status = cli.main(argv)
    assert status == 0, capsys.readouterr().err
    document = json.loads((tmp_path / report.JSON_NAME).read_text())
    assert [(row["kernel"], row["width"]) for row in document["rows"]] == [
        ("segment_sum", 5), ("bsr_spmm", 5), ("ell_spmm", 5), ("softmax", None)
    ]
    peers_of_all = {"sparsetir", "scipy"} | ({"torch"} if _has_torch() else set())
    has_mkl = document["environment"]["versions"]["mkl"] is not None
    for row in document["rows"]:
        assert row["passed"] is True
        with_mkl = has_mkl and row["kernel"] in ("bsr_spmm", "ell_spmm")
        assert set(row["impls"]) == peers_of_all | ({"mkl"} if with_mkl else set())
        assert all(impl["results_checked"] == 2 + SIZING_CALLS for impl in row["impls"].values())
    assert "bsr_spmm on small: 2x2 blocks" in " ".join(document["notes"])


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True


def _sum_one_short(values, offsets):
    result = _segment_sum(values, offsets)
    result[3, 1] += 1.0
    return result


def _bsr_last_block_row_lost(matrix, x):
    result = _bsr_spmm(matrix, x)
    result[-matrix.blocksize[0]:] = 0
    return result


def _ell_padding_counted(indices, values, x):
    return np.einsum("ij,ijk->ik", np.where(values == 0, 1, values), x[indices]).astype(np.float32)


def _softmax_unnormalized(matrix):
    result = matrix.copy()
    result.data = np.exp(matrix.data)
    return result


def _softmax_other_pattern(matrix):
    result = matrix.copy()
    result.indices = np.roll(result.indices, 1)
    return result


@pytest.mark.parametrize(
    "kernel, wrong, message",
    [
        ("segment_sum", _sum_one_short, "1 of 200 values differ from SciPy; worst at [3, 1]"),
        ("bsr_spmm", _bsr_last_block_row_lost, "values differ from SciPy; worst at [3"),
        ("ell_spmm", _ell_padding_counted, "values differ from SciPy; worst at ["),
        ("softmax", _softmax_unnormalized, "values differ from SciPy; worst at ["),
        ("softmax", _softmax_other_pattern, "result does not have the sparsity pattern of A"),
    ],
    ids=["segment-sum", "bsr-block-row", "ell-padding", "softmax-value", "softmax-pattern"],
)
def test_wrong_new_kernel_fails_the_run(tmp_path, capsys, kernel, wrong, message):
    argv = ["--matrix", str(_small_matrix(tmp_path)), "--kernels", ",".join(NEW_KERNELS),
            "--widths", "5", "--rounds", "1", "--out", str(tmp_path)]
    assert bench(argv, ops=fake_ops(**{kernel: wrong})) == 1
    err = capsys.readouterr().err
    assert "FAILED: 1 implementation(s) gave a wrong answer or an error" in err
    width = "" if kernel == "softmax" else " (width 5)"
    assert f"sparsetir {kernel} on small{width}: " in err and message in err
    rows = json.loads((tmp_path / report.JSON_NAME).read_text())["rows"]
    assert [row["kernel"] for row in rows if not row["passed"]] == [kernel]


def test_ell_is_skipped_on_a_skewed_matrix(tmp_path, capsys):
    assert bench(["--kernels", "ell_spmm", "--out", str(tmp_path)], ops=fake_ops()) == 2
    err = capsys.readouterr().err
    assert err.startswith("sparsetir bench: nothing to run: ")
    assert ("skipped ell_spmm on cora: its longest row (168) is 43x its mean row length (3.9), "
            "over the 8x limit: ELL would be mostly padding") in err
    assert not (tmp_path / report.JSON_NAME).exists()


def test_bsr_block_is_the_largest_that_divides_the_shape():
    def block(rows, cols):
        return kernels.bsr_block(scipy.sparse.csr_matrix((rows, cols), dtype=np.float32))

    assert (block(8, 12), block(6, 10), block(8, 6), block(5, 8)) == (4, 2, 2, 1)


def test_ell_form_stores_the_matrix_with_zero_padding(tmp_path):
    matrix = data.load_file(_small_matrix(tmp_path))
    indices, values = kernels.ell_form(matrix)
    longest = np.diff(matrix.indptr).max()
    assert indices.shape == values.shape == (40, longest) and indices.dtype == np.int32
    rebuilt = np.zeros(matrix.shape, np.float32)
    np.add.at(rebuilt, (np.arange(40)[:, None], indices), values)
    np.testing.assert_array_equal(rebuilt, matrix.toarray())


def test_softmax_and_segment_sum_references_handle_empty_rows(tmp_path):
    matrix = data.load_file(_small_matrix(tmp_path))
    softmax = kernels.KERNELS["softmax"].case("small", matrix, None, seed=0)
    scores = softmax.operands[0].toarray()
    row = 3
    stored = scores[row, matrix.indices[matrix.indptr[row]:matrix.indptr[row + 1]]]
    np.testing.assert_allclose(
        softmax.expected[matrix.indptr[row]:matrix.indptr[row + 1]],
        np.exp(stored) / np.exp(stored).sum(), rtol=1e-6,
    )
    assert softmax.expected.shape == (matrix.nnz,)
    segment_sum = kernels.KERNELS["segment_sum"].case("small", matrix, 3, seed=0)
    assert np.all(segment_sum.expected[7] == 0)
    values, offsets = segment_sum.operands
    np.testing.assert_allclose(segment_sum.expected[row],
                               values[offsets[row]:offsets[row + 1]].sum(0), rtol=1e-6)


# ----------------------------------------------- timing modes, threads, and MKL as a peer


def _run_small(tmp_path, *extra, kernels_arg="spmm,spmv", ops=None) -> int:
    argv = ["--matrix", str(_small_matrix(tmp_path)), "--kernels", kernels_arg, "--widths", "5",
            "--rounds", "1", "--out", str(tmp_path), *extra]
    return bench(argv, ops=ops or fake_ops())


def _document(tmp_path) -> dict:
    return json.loads((tmp_path / report.JSON_NAME).read_text())


def test_interleaved_is_the_default_and_is_reported(tmp_path, capsys):
    assert _run_small(tmp_path) == 0
    library = "torch" if _has_torch() else "NumPy (no torch)"
    out = capsys.readouterr().out
    assert out.startswith(f"timed interleaved: every timed call follows an untimed {library} X @ W")
    settings = _document(tmp_path)["settings"]
    assert settings["mode"] == "interleaved" and settings["pause_ms"] is None
    assert settings["interleaved_with"].startswith(f"{library} X @ W (X: the case's dense operand")
    rows = _document(tmp_path)["rows"]
    prefix = "torch" if _has_torch() else "numpy"
    # SpMM's X is (30, 5); SpMV has no dense matrix operand: a (rows, 32) one stands in.
    assert [row["interleaved_with"] for row in rows] == [
        f"{prefix} X @ W (30x5 @ 5x5)", f"{prefix} X @ W (40x32 @ 32x32)"
    ]


def test_alone_times_batches_after_a_pause_and_says_so(tmp_path, capsys):
    assert _run_small(tmp_path, "--alone") == 0
    out = capsys.readouterr().out
    assert out.startswith("timed alone (--alone): batches of back-to-back calls, each after a "
                          "20 ms pause")
    document = _document(tmp_path)
    assert document["settings"]["mode"] == "alone" and document["settings"]["pause_ms"] == 20.0
    assert document["settings"]["interleaved_with"] is None
    assert all(row["interleaved_with"] is None for row in document["rows"])
    assert all(row["passed"] for row in document["rows"])


def _logging_impls(log: list) -> list:
    def impl(name):
        return kernels.Impl(name, lambda: log.append(name) or np.zeros(1), np.asarray)

    return [impl("a"), impl("b")]


def test_interleaved_runs_the_op_before_every_timed_call():
    log: list = []
    between = timing.Interleave("log", lambda: log.append("between"))
    timings = timing.measure(_logging_impls(log), 3, lambda impl, out: None, between)
    warm_up = 1 + 2 * (1 + SIZING_CALLS)  # the op once, then each impl's first and sizing calls
    assert log[:warm_up] == ["between"] + ["a"] * (1 + SIZING_CALLS) + ["b"] * (1 + SIZING_CALLS)
    timed = log[warm_up:]
    assert set(timed[0::2]) == {"between"} and set(timed[1::2]) == {"a", "b"}
    for name in "ab":
        assert timed.count(name) == 3 * timings[name].calls_per_round
        assert len(timings[name].round_ms) == 3
        assert timings[name].results_checked == 1 + SIZING_CALLS + 3


def test_alone_runs_no_op_between_calls():
    log: list = []
    timings = timing.measure(_logging_impls(log), 2, lambda impl, out: None, pause_s=0.0)
    assert set(log) == {"a", "b"}
    # Each round: one untimed wake-up call, then the batch.
    assert log.count("a") == 1 + SIZING_CALLS + 2 * (1 + timings["a"].calls_per_round)


def test_the_interleaved_op_multiplies_the_case_operand(tmp_path):
    matrix = data.load_file(_small_matrix(tmp_path))
    cases = {
        "spmm": ("30x5 @ 5x5", (30, 5)),
        "sddmm": ("30x5 @ 5x5", (30, 5)),  # Y, the (columns, width) operand
        "segment_sum": (f"{matrix.nnz}x5 @ 5x5", (matrix.nnz, 5)),
        "spmv": ("40x32 @ 32x32", (40, 32)),
        "softmax": ("40x32 @ 32x32", (40, 32)),
    }
    for kernel, (shape, result_shape) in cases.items():
        case = kernels.KERNELS[kernel].case("small", matrix, 5, seed=0)
        op = interleave.between_op(case, None)
        assert op.description == f"numpy X @ W ({shape})", kernel
        assert op.call().shape == result_shape
    wide = kernels.KERNELS["spmm"].case("small", matrix, 512, seed=0)
    assert interleave.between_op(wide, None).description == "numpy X @ W (30x32 @ 32x32)"
    if _has_torch():
        import torch

        op = interleave.between_op(wide, torch)
        assert op.description == "torch X @ W (30x32 @ 32x32)"
        assert isinstance(op.call(), torch.Tensor)


def test_without_torch_interleaves_a_numpy_matmul(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now fails
    assert _run_small(tmp_path) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(
        "timed interleaved: every timed call follows an untimed NumPy (no torch) X @ W"
    )
    note = "note: interleaved: without torch, a NumPy dense matmul runs before every timed call"
    assert note in captured.err
    document = _document(tmp_path)
    assert document["environment"]["threads"]["torch"] is None
    for row in document["rows"]:
        assert row["interleaved_with"].startswith("numpy X @ W")
        assert "torch" not in row["impls"]


# Runs the bench with a SciPy SpMM in a fresh process, where torch's OpenMP threads start
# during the run, and prints what it changed: the affinities of the threads, torch's thread
# count, the environment. TVM's pool workers, which TVM binds itself, are started first.
NO_SETTINGS_SCRIPT = """
import json, os, sys, types
import numpy as np
from sparsetir import cli
from sparsetir._tvm import tvm
from sparsetir.bench import run

def affinities():
    found = {}
    for tid in map(int, os.listdir("/proc/self/task")):
        try:
            found[tid] = sorted(os.sched_getaffinity(tid))
        except OSError:
            pass
    return found

import torch
tvm.runtime.num_threads()
before, environment, torch_threads = affinities(), dict(os.environ), torch.get_num_threads()
ops = types.ModuleType("ops")
ops.spmm = lambda matrix, x: np.asarray(matrix @ x, dtype=np.float32)
args = cli.build_parser().parse_args(
    ["bench", "--quiet", "--kernels", "spmm", "--widths", "4", "--rounds", "1",
     "--out", sys.argv[1]]
)
status = run(args, ops=ops)
torch.ones(1 << 22).add_(1.0)
after = affinities()
print(json.dumps({
    "status": status,
    "changed": {tid: cores for tid, cores in after.items() if before.get(tid, cores) != cores},
    "narrowed": {tid: cores for tid, cores in after.items()
                 if tid not in before and cores != sorted(os.sched_getaffinity(0))},
    "torch_threads": [torch_threads, torch.get_num_threads()],
    "environment_kept": dict(os.environ) == environment,
}))
"""


def test_no_thread_binding_or_setting_without_threads_option(tmp_path):
    pytest.importorskip("torch")
    if not hasattr(os, "sched_getaffinity") or not os.path.isdir("/proc/self/task"):
        pytest.skip("thread affinities are Linux-only")
    result = subprocess.run([sys.executable, "-c", NO_SETTINGS_SCRIPT, str(tmp_path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report_ = json.loads(result.stdout.strip().splitlines()[-1])
    assert report_["status"] == 0
    # No thread had its cores changed, and torch's OpenMP threads, started during the run,
    # may run on every core the process may; torch keeps its own thread count.
    assert report_["changed"] == {} and report_["narrowed"] == {}
    assert report_["torch_threads"][0] == report_["torch_threads"][1]
    assert report_["environment_kept"] is True
    threads = _document(tmp_path)["environment"]["threads"]
    assert threads["torch"] == report_["torch_threads"][0]


def _fake_mkl(**overrides) -> types.ModuleType:
    """A stand-in for sparse_dot_mkl computing with SciPy."""
    mkl = types.ModuleType("fake_mkl")
    mkl.__version__ = "0.0"
    mkl.dot_product_mkl = lambda matrix, x: np.asarray(matrix @ x, dtype=np.float32)
    mkl.mkl_get_version_string = lambda: "fake MKL"
    mkl.threads_set = []
    mkl.mkl_get_max_threads = lambda: mkl.threads_set[-1] if mkl.threads_set else 2
    mkl.mkl_set_num_threads = mkl.threads_set.append
    for name, value in overrides.items():
        setattr(mkl, name, value)
    return mkl


def test_threads_option_sets_sparsetir_torch_and_mkl(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    from sparsetir.runtime import parallel

    mkl = _fake_mkl()
    monkeypatch.setattr(peers, "load_mkl", lambda notes: mkl)
    before = (parallel.num_threads(), torch.get_num_threads())
    try:
        assert _run_small(tmp_path, "--threads", "1") == 0
    finally:
        parallel.set_num_threads(before[0])
        torch.set_num_threads(before[1])
    document = _document(tmp_path)
    assert document["settings"]["threads"] == 1
    assert document["environment"]["threads"] == {"sparsetir": 1, "torch": 1, "mkl": 1, "scipy": 1}
    assert mkl.threads_set == [1]


def test_threads_must_be_positive(capsys):
    assert bench(["--threads", "0"], ops=fake_ops()) == 2
    assert capsys.readouterr().err.startswith("sparsetir bench: --threads must be at least 1")


def test_mkl_is_a_peer_with_its_own_summary(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(peers, "load_mkl", lambda notes: _fake_mkl())
    assert _run_small(tmp_path, kernels_arg="spmm,sddmm,spmv") == 0
    out = capsys.readouterr().out
    header = out.splitlines()[1]
    assert "mkl ms" in header and "vs mkl" in header
    assert "spmm: geomean speedup over mkl " in out and "spmv: geomean speedup over mkl " in out
    assert "sddmm: geomean speedup over mkl" not in out  # MKL has no SDDMM
    document = _document(tmp_path)
    assert document["environment"]["versions"]["mkl"] == "sparse_dot_mkl 0.0, fake MKL"
    rows = {row["kernel"]: row for row in document["rows"]}
    assert "mkl" in rows["spmm"]["impls"] and "mkl" not in rows["sddmm"]["impls"]
    assert rows["spmm"]["impls"]["mkl"]["results_checked"] == 2 + SIZING_CALLS
    assert rows["spmm"]["speedup"]["mkl"] > 0
    # "vs faster" stays the faster of SciPy and torch; MKL is compared on its own.
    assert rows["spmm"]["faster_peer"] in ("scipy", "torch")
    summary = document["summary"]
    assert summary["spmm"]["vs_mkl"]["rows"] == 1
    assert summary["spmm"]["vs_mkl"]["min_at"] == {"matrix": "small", "width": 5, "peer": "mkl"}
    assert summary["sddmm"]["vs_mkl"] is None


def test_wrong_mkl_answer_fails_the_run(tmp_path, capsys, monkeypatch):
    mkl = _fake_mkl(dot_product_mkl=lambda matrix, x: _off_by_one_value(matrix, x))
    monkeypatch.setattr(peers, "load_mkl", lambda notes: mkl)
    assert _run_small(tmp_path, kernels_arg="spmm") == 1
    err = capsys.readouterr().err
    assert "mkl spmm on small (width 5): 1 of 200 values differ from SciPy; worst at [5, 3]" in err
    [row] = _document(tmp_path)["rows"]
    assert row["impls"]["mkl"]["ms"] is None and row["impls"]["sparsetir"]["error"] is None


def test_without_mkl_there_is_no_mkl_column_and_no_note(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "sparse_dot_mkl", None)  # import sparse_dot_mkl now fails
    assert _run_small(tmp_path) == 0
    captured = capsys.readouterr()
    assert "mkl" not in captured.out.splitlines()[1]  # the table's header
    assert "MKL" not in captured.err
    document = _document(tmp_path)
    assert document["environment"]["threads"]["mkl"] is None
    assert document["environment"]["versions"]["mkl"] is None
    assert all("mkl" not in row["impls"] for row in document["rows"])
    assert all(stats["vs_mkl"] is None for stats in document["summary"].values())


def test_mkl_is_found_in_the_mkl_wheel():
    if importlib.util.find_spec("sparse_dot_mkl") is None:
        pytest.skip("sparse_dot_mkl is not installed")
    if peers.mkl_rt_of_wheel() is None:
        pytest.skip("the mkl wheel is not installed")
    # A fresh process: this one may have imported sparse_dot_mkl already.
    script = (
        "import os, numpy as np, scipy.sparse as sp\n"
        "from sparsetir.bench import peers\n"
        "before, notes = dict(os.environ), []\n"
        "mkl = peers.load_mkl(notes)\n"
        "a = sp.random(50, 40, density=0.2, format='csr', dtype=np.float32, random_state=0)\n"
        "x = np.ones((40, 3), np.float32)\n"
        "print(mkl is not None, notes, dict(os.environ) == before,\n"
        "      np.allclose(mkl.dot_product_mkl(a, x), a @ x, rtol=1e-5))\n"
    )
    environment = {k: v for k, v in os.environ.items() if k != "MKL_RT"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=environment, timeout=300, check=True)
    assert result.stdout.split("\n")[-2] == "True [] True True"

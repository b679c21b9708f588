"""``sparsetir bench --distributed P``: the per-rank table and its JSON, quickly on Cora."""

from __future__ import annotations

import json

import pytest

from sparsetir import cli

pytest.importorskip("torch")
pytest.importorskip("pymetis")


def test_bench_distributed_on_cora_with_two_ranks(tmp_path, capsys):
    import torch

    from sparsetir.runtime.parallel import num_threads

    before = (torch.get_num_threads(), num_threads())
    assert cli.main(["bench", "--distributed", "2", "cora", "--rounds", "2", "--out", str(tmp_path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "exchange volume from the halo plan (not timed)" in out
    assert "| cora | 2 | metis |" in out and "| cora | 2 | contiguous |" in out
    report = json.loads((tmp_path / "distributed-2.json").read_text())
    rows = {row["method"]: row for row in report["rows"]}
    assert rows["metis"]["halo_rows"] == 294 and rows["contiguous"]["halo_rows"] == 2214  # docs/distributed.md
    for row in rows.values():
        assert row["bytes_per_spmm"] == row["halo_rows"] * 128 * 4
        assert row["halo_fraction"] == pytest.approx(row["halo_rows"] / 2708)
        assert row["max_rank_ms"] >= row["mean_rank_ms"] > 0
    assert (torch.get_num_threads(), num_threads()) == before  # one thread per rank for the run only


@pytest.mark.parametrize("argv", [["--distributed", "1"], ["--distributed", "2", "--widths", "8,16"],
                                  ["--distributed", "2", "no_such_matrix"]])
def test_bench_distributed_usage_errors(argv, capsys):
    assert cli.main(["bench", *argv]) == 2
    assert "sparsetir bench --distributed" in capsys.readouterr().err


def test_bench_help_names_the_distributed_option(capsys):
    assert cli.main(["bench", "--help"]) == 0
    assert "--distributed P" in capsys.readouterr().out

"""``sparsetir show --schedule default --width NAME=VALUE``: the variant a call at that width runs,
every scheduled loop annotated with its script lines; a bad ``--width`` is a one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparsetir.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "csr_spmm.py"


def show(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def line_of(text: str) -> int:
    """The 1-based line of ``text`` in the example script."""
    return next(k for k, ln in enumerate(EXAMPLE.read_text().splitlines(), 1) if text in ln)


def annotated(out: str, statement: str) -> list[str]:
    """The annotations (``# <- ...``) of the output lines whose statement is ``statement``."""
    found = []
    for ln in out.splitlines():
        code, _, note = ln.partition("  # <- ")
        if code.strip() == statement:
            found.append(note)
    return found


def test_stage_2_shows_the_partition_and_vector_loops_with_their_lines(capsys):
    code, out, err = show(capsys, str(EXAMPLE), "--stage", "2", "--schedule", "default", "--width", "feat_size=64")
    assert code == 0 and err == ""
    iteration, init, update = line_of("T.sp_iter"), line_of("T.float32(0)"), line_of("C[i, k] = C[i, k] +")
    assert "K = T.dense_fixed(64)" in out and "feat_size" not in out  # the width is bound
    assert '"sparsetir.partitions": [["part", "P", "m", "indptr"]]' in out
    # the row loop, split into nnz-balanced chunks run in parallel, comes from the iteration
    assert annotated(out, "for t in T.parallel(P):") == [f"line {iteration}"]
    assert annotated(out, "for i in range(part[t + 1] - part[t]):") == [f"line {iteration}"]
    # the register tile's vector loops come from the iteration and the init or the update
    assert annotated(out, "for k_2_init in T.vectorized(16):") == [f"lines {iteration}, {init}"]
    assert annotated(out, "for k_1 in T.unroll(4):") == [f"lines {iteration}, {update}"]
    assert annotated(out, "for k_2 in T.vectorized(16):") == [f"lines {iteration}, {update}"]
    assert annotated(out, "for ax0_1 in T.vectorized(16):") == [f"line {iteration}"]  # the tile's store


def test_without_the_default_schedule_the_loops_stay_serial(capsys):
    code, out, _ = show(capsys, str(EXAMPLE), "--stage", "2", "--width", "feat_size=64")
    assert code == 0
    assert "K = T.dense_fixed(64)" in out and "T.parallel" not in out and "T.vectorized" not in out


@pytest.mark.parametrize(
    "width, message",
    [
        ("feat_size=abc", "sparsetir show: --width 'feat_size=abc': expected NAME=INTEGER, such as feat_size=128"),
        ("feat_size", "sparsetir show: --width 'feat_size': expected NAME=INTEGER, such as feat_size=128"),
        ("feat=64", "sparsetir show: csr_spmm has no parameter 'feat' to specialize"),
    ],
)
def test_a_bad_width_is_a_one_line_error(capsys, width, message):
    code, out, err = show(capsys, str(EXAMPLE), "--stage", "2", "--schedule", "default", "--width", width)
    assert code == 1 and out == ""
    assert err.splitlines() == [message]


def test_a_negative_width_is_refused_at_the_axis_it_sizes(capsys):
    code, out, err = show(capsys, str(EXAMPLE), "--stage", "2", "--schedule", "default", "--width", "feat_size=-3")
    assert code == 1 and out == ""
    line = line_of("K = T.dense_fixed(feat_size)")
    first = err.splitlines()[0]
    assert first.startswith(f"{EXAMPLE}:{line}:") or first.startswith(f"examples/csr_spmm.py:{line}:")
    assert "the length of axis 'K' is -3" in first


def test_a_zero_width_is_shown_or_refused_naming_it(capsys):
    code, out, err = show(capsys, str(EXAMPLE), "--stage", "2", "--schedule", "default", "--width", "feat_size=0")
    shown = code == 0 and "K = T.dense_fixed(0)" in out
    refused = code == 1 and "feat_size" in err and len(err.splitlines()) == 1
    assert shown or refused, err

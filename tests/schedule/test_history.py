"""History across stages: every snapshot verifies and prints back, prefixes replay, JSON reloads."""

from __future__ import annotations

import json

import pytest

import sparsetir
from sparsetir._tvm import tvm
from sparsetir.schedule import History, Schedule, Step, replay
from schedule_helpers import assert_computes_reference, parse_snapshot, stage1


def three_stage_schedule():
    """A CSR SpMM schedule with steps at every stage: (original, schedule)."""
    original = stage1("csr_spmm")
    sch = Schedule(original)
    sch.annotate_sparse_iter("csr_spmm", "note", "rows")
    sch.lower_sparse_iter()
    block = sch.get_sblock("csr_spmm1")
    j, k = sch.get_loops(block)
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(ko, j, ki)
    sch.vectorize(ki)
    sch.parallel(sch.get_loops(sch.get_sblock("csr_spmm0"))[0])
    sch.lower_sparse_buffer()
    update = sch.get_sblock("csr_spmm1_update")
    sch.annotate(update, "pragma_note", 1)
    return original, sch


def test_every_step_is_recorded_with_its_stage():
    _, sch = three_stage_schedule()
    assert [(s.primitive, s.stage) for s in sch.history] == [
        ("annotate_sparse_iter", 1),
        ("lower_sparse_iter", 2),
        ("split", 2),
        ("reorder", 2),
        ("vectorize", 2),
        ("parallel", 2),
        ("lower_sparse_buffer", 3),
        ("annotate", 3),
    ]
    assert sch.history[2].args == {
        "loop": {"handle": "loop", "sblock": "csr_spmm1", "index": 1},
        "factors": [None, 4],
        "preserve_unit_iters": True,
        "disable_predication": False,
    }
    assert sch.history[3].args == {
        "ordered_loops": [
            {"handle": "loop", "sblock": "csr_spmm1", "index": 1},
            {"handle": "loop", "sblock": "csr_spmm1", "index": 0},
            {"handle": "loop", "sblock": "csr_spmm1", "index": 2},
        ]
    }
    assert sch.history[-1].args == {
        "block_or_loop": {"handle": "sblock", "name": "csr_spmm1_update"},
        "ann_key": "pragma_note",
        "ann_val": 1,
    }
    assert sch.history[-1].script == sch.func.script()


def test_every_snapshot_verifies_and_prints_back():
    _, sch = three_stage_schedule()
    for step in sch.history:
        again = parse_snapshot(step.script, step.stage)  # stage I/II parsing runs the verifiers
        assert again.script() == step.script, step.primitive
        if step.stage == 2:
            assert isinstance(again, sparsetir.Stage2Function)
            assert tvm.s_tir.analysis.verify_well_formed(again.func)


def test_every_prefix_replays_to_its_snapshot():
    original, sch = three_stage_schedule()
    for k, step in enumerate(sch.history):
        prefix = History(sch.history.initial_script, sch.history.steps[: k + 1], sch.history.stage)
        assert replay(original, prefix).script() == step.script, step.primitive


def test_replay_is_structurally_equal_and_builds():
    original, sch = three_stage_schedule()
    again = replay(original, History.from_json(sch.history.to_json()))
    assert sparsetir.structural_equal(again, sch.func)
    assert_computes_reference("csr_spmm", again)


def test_json_round_trip():
    _, sch = three_stage_schedule()
    text = sch.history.to_json()
    data = json.loads(text)
    assert data["stage"] == 1 and data["initial"] == stage1("csr_spmm").script()
    assert [s["primitive"] for s in data["steps"]][:2] == ["annotate_sparse_iter", "lower_sparse_iter"]
    assert History.from_json(text) == sch.history


def test_history_of_a_stage2_schedule():
    f2 = sparsetir.lower_sparse_iter(stage1("sddmm"))
    sch = Schedule(f2)
    assert sch.history.stage == 2 and sch.history.initial_script == f2.script()
    _, k = sch.get_loops(sch.get_sblock("sddmm1"))
    sch.split(k, [None, 4])
    again = replay(f2, History.from_json(sch.history.to_json()))
    sparsetir.assert_structural_equal(again, sch.func)
    with pytest.raises(sparsetir.ScheduleError, match="the history starts at stage II, but the function is at stage I"):
        replay(stage1("sddmm"), sch.history)


def test_blocks_sharing_a_name_are_recorded_by_order():
    f3 = tvm.script.from_source(TWO_COPIES)
    sch = Schedule(f3)
    second = sch.get_child_blocks(sch.get_sblock("root"))[1]
    sch.split(sch.get_loops(second)[0], [None, 4])
    assert sch.history[-1].args["loop"] == {"handle": "loop", "sblock": "copy", "nth": 1, "index": 0}
    text = sch.func.script()
    assert text.index("for i in range(8):") < text.index("for i_0, i_1 in T.grid(2, 4):")
    assert sparsetir.structural_equal(replay(f3, History.from_json(sch.history.to_json())), sch.func)


def test_bad_steps_are_refused():
    sch = Schedule(stage1("csr_spmm"))
    with pytest.raises(sparsetir.ScheduleError, match="step 'split' was recorded at stage II, but here it would give stage I"):
        sch.apply_step(Step("split", {}, 2, ""))
    sch.lower_sparse_iter()
    with pytest.raises(sparsetir.ScheduleError, match="cannot replay unknown step 'transform_layout'"):
        sch.apply_step(Step("transform_layout", {}, 2, ""))
    with pytest.raises(sparsetir.ScheduleError, match="split: the program has no block 'nope' number 0"):
        sch.apply_step(Step("split", {"loop": {"handle": "loop", "sblock": "nope", "index": 0}, "factors": [None, 2]}, 2, ""))


TWO_COPIES = """
@T.prim_func(s_tir=True)
def main(a: T.Buffer((8,), "float32"), b: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.sblock("copy"):
            vi = T.axis.spatial(8, i)
            b[vi] = a[vi]
    for i in range(8):
        with T.sblock("copy"):
            vi = T.axis.spatial(8, i)
            b[vi] = b[vi] + a[vi]
"""


def test_a_schedule_keeping_no_record_has_no_history_and_still_schedules():
    original = stage1("csr_spmm")
    recorded = three_stage_schedule()[1]
    sch = Schedule(original, keep_record=False)
    sch.annotate_sparse_iter("csr_spmm", "note", "rows")
    sch.lower_sparse_iter()
    j, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(ko, j, ki)
    sch.vectorize(ki)
    sch.parallel(sch.get_loops(sch.get_sblock("csr_spmm0"))[0])
    sch.lower_sparse_buffer()
    sch.annotate(sch.get_sblock("csr_spmm1_update"), "pragma_note", 1)
    assert len(sch.history) == 0 and list(sch.history) == []
    assert sch.stage == 3
    tvm.ir.assert_structural_equal(sch.func, recorded.func)
    assert_computes_reference("csr_spmm", sch)
    assert len(sch.fork().history) == 0

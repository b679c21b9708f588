"""The pass record of a compilation and the schedule snapshots the explorer shows."""

from __future__ import annotations

import sparsetir
from sparsetir.schedule import Schedule
from sparsetir.trace import record_passes, replay_snapshots
from sparsetir.transforms import pipeline
from examples import EXAMPLES


def _csr_spmm():
    return next(f for _, name, f in EXAMPLES if name == "csr_spmm")


def test_a_record_per_pass_chained_from_the_input_to_stage_iii():
    func = _csr_spmm()
    records = record_passes(func)
    assert [r.name for r in records] == [p.name for p in pipeline.PASSES]
    assert records[0].before is func
    assert all(a.after is b.before for a, b in zip(records, records[1:]))
    assert [(r.stage_before, r.stage_after) for r in records] == [(p.reads, p.writes) for p in pipeline.PASSES]
    assert all(r.seconds > 0 for r in records)
    sparsetir.assert_structural_equal(records[-1].after, pipeline.lower(func))


def test_a_stage_ii_program_records_only_the_passes_left():
    stage2 = sparsetir.lower_sparse_iter(_csr_spmm())
    assert [r.name for r in record_passes(stage2)] == [p.name for p in pipeline.PASSES if p.reads >= 2]
    assert record_passes(pipeline.lower(stage2)) == []


def _schedule():
    sch = Schedule(_csr_spmm())
    sch.annotate_sparse_iter("csr_spmm", "note", "rows")
    sch.lower_sparse_iter()
    j, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    ko, ki = sch.split(k, [None, 8])
    sch.reorder(ko, j, ki)
    sch.lower_sparse_buffer()
    return sch


def test_snapshots_replay_every_step_of_the_history():
    sch = _schedule()
    replay = replay_snapshots(sch.initial, sch.history)
    assert replay.error is None
    assert [s.step for s in replay.snapshots] == [None, *sch.history]
    assert [s.stage for s in replay.snapshots] == [1, 1, 2, 2, 2, 3]
    assert replay.snapshots[0].program is sch.initial
    for snapshot in replay.snapshots[1:]:
        assert snapshot.program.script() == snapshot.step.script  # the program the step recorded
    sparsetir.assert_structural_equal(replay.snapshots[-1].program, sch.func)


def test_a_step_that_no_longer_applies_ends_the_replay_with_its_reason():
    sch = _schedule()
    renamed = sparsetir.parse(sch.initial.script().replace('"csr_spmm") as', '"spmm") as'), "edited.py")
    replay = replay_snapshots(renamed, sch.history)
    assert len(replay.snapshots) == 1
    assert replay.error.startswith("step 1 (annotate_sparse_iter) no longer applies:")
    assert "csr_spmm" in replay.error


def test_a_history_of_another_stage_is_refused():
    sch = _schedule()
    replay = replay_snapshots(sparsetir.lower_sparse_iter(_csr_spmm()), sch.history)
    assert replay.error == "the schedule starts at stage 1, the program is at stage 2"
    assert [s.stage for s in replay.snapshots] == [2]

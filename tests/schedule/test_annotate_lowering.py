"""``annotate_sparse_iter`` survives lowering: the blocks lowered from the iteration carry it."""

from __future__ import annotations

import sparsetir
from sparsetir._tvm import Schedule as TVMSchedule, tvm
from sparsetir.schedule import Schedule
from schedule_helpers import assert_computes_reference, assert_history_sound, stage1


def _annotations(prim, name: str) -> dict:
    """The annotations of block ``name`` of a PrimFunc."""
    sch = TVMSchedule(prim)
    return dict(sch.get(sch.get_sblock(name)).annotations)


def annotated_schedule() -> tuple:
    original = stage1("csr_spmm")
    sch = Schedule(original)
    sch.annotate_sparse_iter("csr_spmm", "note", "rows")
    sch.annotate_sparse_iter("csr_spmm", "unroll_hint", 4)
    return original, sch


def test_annotations_reach_every_stage_ii_block_of_the_iteration():
    _, sch = annotated_schedule()
    sch.lower_sparse_iter()
    text = sch.func.script()
    for block in ("csr_spmm0", "csr_spmm1"):
        ann = _annotations(sch.func.func, block)
        assert str(ann["note"]) == "rows" and int(ann["unroll_hint"]) == 4, block
        assert bool(ann["sparse"])
    assert '"note": "rows"' in text
    again = sparsetir.parse(text)
    assert again.script() == text


def test_annotations_reach_stage_iii_and_round_trip():
    original, sch = annotated_schedule()
    sch.lower_sparse_iter()
    sch.lower_sparse_buffer()
    text = sch.func.script()
    assert '"note": "rows"' in text
    assert tvm.script.from_source(text).script() == text
    assert str(_annotations(sch.func, "csr_spmm0")["note"]) == "rows"
    assert_history_sound(sch, original)
    assert_computes_reference("csr_spmm", sch)


def test_unannotated_iteration_keeps_only_the_sparse_mark():
    sch = Schedule(stage1("csr_spmm"))
    sch.lower_sparse_iter()
    assert set(_annotations(sch.func.func, "csr_spmm1")) == {"sparse"}

"""The span-filling helper: every statement every pass produces carries the spans it came from."""

from __future__ import annotations

import pytest

import sparsetir
from sparsetir._tvm import SequentialSpan, Span, s_tir, structural_map, structural_walk, tirx, tvm_ffi
from sparsetir.schedule import Schedule
from sparsetir.trace import fill_spans, record_passes
from sparsetir.trace.spans import merge_spans, span_locations
from sparsetir.transforms import pipeline
from examples import EXAMPLE_DIR, EXAMPLES, IDS

STATEMENTS = (tirx.For, tirx.BufferStore, tirx.While, tirx.IfThenElse, tirx.Evaluate, tirx.SeqStmt,
              s_tir.SBlock, s_tir.SBlockRealize)


def _statements(program):
    prim = getattr(program, "prim", program)
    found = []
    structural_walk(prim.body, [(STATEMENTS, lambda node: found.append(node))])
    return found


def _block(program, name):
    return next(s for s in _statements(program) if isinstance(s, s_tir.SBlock) and str(s.name_hint) == name)


@pytest.mark.parametrize("file, name, func", EXAMPLES, ids=IDS)
def test_every_statement_of_every_pass_carries_spans_into_the_script(file, name, func):
    n_lines = len((EXAMPLE_DIR.parent / file).read_text().splitlines())
    for record in record_passes(func):
        for stmt in _statements(record.after):
            where = span_locations(stmt.span)
            assert where, f"{record.name}: a {type(stmt).__name__} without a span"
            assert all(f == file and 1 <= line <= n_lines for f, line in where), (record.name, where)
            if isinstance(stmt, (tirx.BufferStore, tirx.Evaluate)):
                assert isinstance(stmt.span, Span)  # code generation keeps line info only for these


def test_merged_sources_make_a_sequential_span():
    """A block carries the iteration and the statement lowered into it; TVM's decompose_reduction
    makes the init block without a span, and the pipeline gives it the iteration and the init."""
    _, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    stage3 = pipeline.lower(func)
    update, init = _block(stage3, "csr_spmm1_update"), _block(stage3, "csr_spmm1_init")
    assert isinstance(update.span, SequentialSpan) and isinstance(init.span, SequentialSpan)
    assert [line for _, line in span_locations(update.span)] == [25, 28]
    assert [line for _, line in span_locations(init.span)] == [25, 27]


def test_filling_keeps_the_program_and_returns_a_filled_one_as_is():
    _, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    stage2 = sparsetir.lower_sparse_iter(func)
    assert fill_spans(stage2) is stage2
    bare = _without_spans(stage2.func)
    filled = fill_spans(bare)
    sparsetir.assert_structural_equal(filled, bare)  # spans are not part of equality
    assert all(span_locations(s.span) for s in _statements(filled))
    assert fill_spans(filled) is filled


def test_loops_a_primitive_makes_get_the_spans_of_what_they_wrap():
    _, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    sch = Schedule(func)
    sch.lower_sparse_iter()
    j, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    sch.split(k, [None, 8])
    loops = [s for s in _statements(sch.func.prim) if isinstance(s, tirx.For)]
    filled = [s for s in _statements(fill_spans(sch.func).prim) if isinstance(s, tirx.For)]
    assert any(s.span is None for s in loops)
    assert all(span_locations(s.span) for s in filled)


def test_stage_one_iterations_without_spans_take_their_statements():
    _, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    iteration = tvm_ffi.dataclasses.replace(func.body[0], span=None)
    bare = tvm_ffi.dataclasses.replace(func, body=[iteration])
    filled = fill_spans(bare)
    assert [line for _, line in span_locations(filled.body[0].span)] == [27, 28]
    assert fill_spans(filled) is filled


def test_the_pipeline_fills_what_a_new_pass_leaves_without_spans(monkeypatch):
    """A pass added to the pipeline that drops spans still produces statements that carry them."""

    def drop_store_spans(f2):
        body = structural_map(f2.prim.body, [(tirx.BufferStore, lambda s: tirx.BufferStore(s.buffer, s.value, s.indices))])
        return sparsetir.Stage2Function(f2.prim.with_body(body), list(f2.axes), list(f2.buffers), list(f2.param_names))

    extra = pipeline.Pass("drop_store_spans", 2, 2, drop_store_spans)
    monkeypatch.setattr(pipeline, "PASSES", (*pipeline.PASSES[:1], extra, *pipeline.PASSES[1:]))
    _, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    records = record_passes(func)
    assert [r.name for r in records][:2] == ["lower_sparse_iter", "drop_store_spans"]
    stores = [s for s in _statements(records[1].after) if isinstance(s, tirx.BufferStore)]
    assert stores and all(isinstance(s.span, Span) for s in stores)


def test_merge_spans_flattens_and_drops_repeated_lines():
    name = "x.py"
    a, b = (sparsetir._tvm.Span(sparsetir._tvm.SourceName(name), n, n, 1, 1) for n in (3, 7))
    assert merge_spans([]) is None and merge_spans([None]) is None
    assert merge_spans([a, None, a]).same_as(a)
    merged = merge_spans([a, SequentialSpan([b, a])])
    assert span_locations(merged) == [(name, 3), (name, 7)]


def _without_spans(prim):
    """``prim`` with no span on any statement but the root block (where the function is)."""
    def strip(node):
        if isinstance(node, tirx.For):
            return tirx.For(node.loop_var, node.min, node.extent, node.kind, node.body, node.thread_binding,
                            node.annotations, node.step)
        if isinstance(node, s_tir.SBlockRealize) and str(node.block.name_hint) != "root":
            b = node.block
            block = s_tir.SBlock(b.iter_vars, b.reads, b.writes, b.name_hint, b.body, b.init, b.alloc_buffers,
                                 b.match_buffers, b.annotations)
            return s_tir.SBlockRealize(node.iter_values, node.predicate, block)
        if isinstance(node, tirx.BufferStore):
            return tirx.BufferStore(node.buffer, node.value, node.indices)
        return node

    body = structural_map(prim.body, [((tirx.For, s_tir.SBlockRealize, tirx.BufferStore), strip)])
    stripped = prim.with_body(body)
    assert sum(1 for s in _statements(stripped) if span_locations(s.span)) == 2  # the root block only
    return stripped

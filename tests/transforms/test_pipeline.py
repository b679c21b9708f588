"""The lowering pipeline: one list of passes, run once each by every caller."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

import sparsetir
from sparsetir.runtime import KernelCache
from sparsetir.ir.stage2 import Stage2Function
from sparsetir.show import render
from sparsetir.transforms import pipeline

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"
NAMES = [p.name for p in pipeline.PASSES]


@pytest.fixture
def counted(monkeypatch):
    """Every pass of the pipeline, counting its runs."""
    runs: Counter = Counter()

    def counting(p):
        def run(func):
            runs[p.name] += 1
            return p.run(func)

        return replace(p, run=run)

    monkeypatch.setattr(pipeline, "PASSES", tuple(counting(p) for p in pipeline.PASSES))
    return runs


def _stage1():
    return sparsetir.parse_file(str(EXAMPLE))


def test_steps_yield_the_program_after_every_pass_in_order():
    seen = list(pipeline.steps(_stage1()))
    assert [name for name, _ in seen] == NAMES
    assert [pipeline.stage_of(program) for _, program in seen] == [2, 2, 2, 3]
    assert sparsetir.structural_equal(seen[-1][1], pipeline.lower(_stage1()))


def test_until_a_pass_or_a_stage():
    f = _stage1()
    f2 = pipeline.lower(f, until=2)
    assert isinstance(f2, Stage2Function)
    assert sparsetir.structural_equal(f2, pipeline.lower(f, until="lower_sparse_iter"))
    assert sparsetir.structural_equal(f2, sparsetir.lower_sparse_iter(f))
    assert [name for name, _ in pipeline.steps(f2)] == NAMES[1:]
    assert [name for name, _ in pipeline.steps(f2, until="bound_cache_extents")] == NAMES[1:3]
    assert list(pipeline.steps(f2, until=2)) == []  # already there
    f3 = pipeline.lower(f2)
    assert pipeline.stage_of(f3) == 3 and pipeline.lower(f3) is f3
    with pytest.raises(ValueError, match="no pass named"):
        pipeline.lower(f, until="nope")


def test_a_stage2_primfunc_enters_the_pipeline_as_stage2():
    f2 = pipeline.lower(_stage1(), until=2)
    assert pipeline.stage_of(f2.func) == 2
    assert sparsetir.structural_equal(pipeline.lower(f2.func), pipeline.lower(f2))


def test_build_runs_every_pass_once(counted):
    sparsetir.build(_stage1(), cache=KernelCache(disk=None))
    assert counted == Counter({name: 1 for name in NAMES})


def test_building_an_equal_function_again_runs_no_pass(counted):
    first = sparsetir.build(_stage1())
    counted.clear()
    assert sparsetir.build(_stage1()) is first  # parsed anew: equal, found before lowering
    assert counted == Counter()


def test_show_runs_the_passes_up_to_the_stage_once(counted):
    render(_stage1(), "2")
    assert counted == Counter({"lower_sparse_iter": 1})
    counted.clear()
    render(_stage1(), "3")
    assert counted == Counter({name: 1 for name in NAMES})


def test_schedule_lowerings_run_the_pipeline_once(counted):
    sch = sparsetir.Schedule(_stage1())
    sch.lower_sparse_iter()
    assert counted == Counter({"lower_sparse_iter": 1})
    sch.lower_sparse_buffer()
    assert counted == Counter({name: 1 for name in NAMES})


def test_lower_sparse_buffer_is_the_rest_of_the_pipeline(counted):
    f2 = sparsetir.lower_sparse_iter(_stage1())
    f3 = sparsetir.lower_sparse_buffer(f2)
    assert counted == Counter({name: 1 for name in NAMES})  # each pass once, across both calls
    assert sparsetir.structural_equal(f3, pipeline.lower(f2))
    with pytest.raises(sparsetir.errors.LoweringError, match="stage-II"):
        sparsetir.lower_sparse_buffer(f3)



def test_fuse_of_three_axes_lowers_to_one_loop_and_two_searches():
    text = (Path(__file__).parent / "scripts" / "csf_fuse3.py").read_text()
    f2 = pipeline.lower(sparsetir.parse(text), until=2)
    names = set(sparsetir.trace.spans.span_table(f2))
    assert {"csf_scale0", "csf_scale_ijk_search0", "csf_scale_ijk_search1"} <= names

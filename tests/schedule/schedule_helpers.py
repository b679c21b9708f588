"""Shared by the schedule tests: workload loading, reference checks, history soundness checks."""

from __future__ import annotations

import numpy as np

import sparsetir
from sparsetir._tvm import tvm
from sparsetir.schedule import History, Schedule, replay
from workloads import WORKLOADS


def stage1(name: str) -> sparsetir.SparseFunction:
    """The workload's stage-I function, parsed under its bare file name (stable spans)."""
    w = WORKLOADS[name]
    f = sparsetir.parse(w.path.read_text(), w.path.name)
    return f[w.function] if isinstance(f, dict) else f


def at_stage2(name: str) -> Schedule:
    """A schedule of the workload, moved to stage II."""
    sch = Schedule(stage1(name))
    sch.lower_sparse_iter()
    return sch


def assert_computes_reference(name: str, program) -> None:
    """Build ``program`` (any stage, or a Schedule) and compare every case with the NumPy reference."""
    w = WORKLOADS[name]
    kernel = sparsetir.build(program)
    for case in w.cases:
        inputs = w.make_inputs(np.random.default_rng(11), case)
        expected = w.reference(inputs)
        kernel(**inputs)
        for out in w.outputs:
            np.testing.assert_allclose(inputs[out], expected[out], rtol=2e-5, atol=2e-5, err_msg=f"{name}/{case}/{out}")


def parse_snapshot(script: str, stage: int):
    """The program a history snapshot holds, parsed with the stage's parser."""
    if stage == 3:
        return tvm.script.from_source(script)
    return sparsetir.parse(script)


def assert_history_sound(sch: Schedule, original) -> None:
    """Every snapshot parses and prints back; the JSON reloads; the whole history replays equal."""
    for step in sch.history:
        again = parse_snapshot(step.script, step.stage)
        assert again.script() == step.script, step.primitive
    reloaded = History.from_json(sch.history.to_json())
    assert reloaded == sch.history
    assert sparsetir.structural_equal(replay(original, reloaded), sch.func)

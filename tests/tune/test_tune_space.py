"""The tuning space as a TVM trace, and matrix fingerprints."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

from sparsetir._tvm import s_tir
from sparsetir.schedule.default import Choices
from sparsetir.tune.fingerprint import Fingerprint, RowLengths, fingerprint, row_lengths
from sparsetir.tune.space import choices_of, knobs, random_trace, trace_of
from sparsetir.tune.workload import TuningKey

WORKLOAD = TuningKey("program", (("feat", 8),), Fingerprint((("m", 3),), ()), "llvm").module()


def test_every_knob_is_a_choices_field_with_its_default_among_its_values():
    fields = {f.name: f.default for f in dataclasses.fields(Choices)}
    assert knobs()
    for knob in knobs():
        assert fields[knob.name] in knob.values and len(set(knob.values)) == len(knob.values)


points = st.fixed_dictionaries({k.name: st.sampled_from(k.values) for k in knobs()})


@given(points)
def test_a_trace_replays_to_its_choices(values):
    choices = Choices(**values)
    trace = trace_of(choices, WORKLOAD)
    assert choices_of(trace, WORKLOAD) == choices
    # as MetaSchedule stores it: JSON, applied to a fresh schedule
    sch = s_tir.Schedule(WORKLOAD)
    s_tir.Trace.apply_json_to_schedule(trace.as_json(), sch)
    assert choices_of(sch.trace, WORKLOAD) == choices


def test_random_traces_are_points_of_the_space_and_follow_the_seed():
    drawn = [choices_of(random_trace(WORKLOAD, seed), WORKLOAD) for seed in range(1, 30)]
    for choices in drawn:
        for knob in knobs():
            assert getattr(choices, knob.name) in knob.values
    assert len(set(drawn)) > 5
    assert drawn == [choices_of(random_trace(WORKLOAD, seed), WORKLOAD) for seed in range(1, 30)]


def test_a_value_outside_the_space_is_refused_by_name():
    with pytest.raises(ValueError, match="max_vectors=3 is not in the tuning space"):
        trace_of(Choices(max_vectors=3), WORKLOAD)


def test_row_length_histogram_counts_powers_of_two():
    indptr = np.array([0, 0, 1, 3, 6, 10, 10, 18], np.int32)  # lengths 0 1 2 3 4 0 8
    r = row_lengths("indptr", indptr)
    assert (r.rows, r.nnz) == (7, 18)
    assert r.histogram == (2, 1, 2, 1, 1)  # 0 | 1 | 2-3 | 4-7 | 8-15
    assert r.longest == 16


@given(st.lists(st.integers(0, 50), min_size=1, max_size=40))
def test_histogram_matches_a_direct_count(lengths):
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    r = row_lengths("p", indptr)
    expected = {}
    for n in lengths:
        bucket = 0 if n == 0 else n.bit_length()
        expected[bucket] = expected.get(bucket, 0) + 1
    assert {b: c for b, c in enumerate(r.histogram) if c} == expected
    assert sum(r.histogram) == len(lengths)


def _fp(rows, nnz, histogram, n=100):
    return Fingerprint((("m", rows), ("n", n), ("nnz", nnz)), (RowLengths("indptr", rows, nnz, histogram),))


def test_distance_is_zero_for_equal_matrices_symmetric_and_grows_with_size():
    a, b, c = _fp(100, 1000, (0, 10, 90)), _fp(200, 2000, (0, 10, 190)), _fp(10000, 100000, (0, 10, 9990))
    assert a.distance(a) == 0
    assert a.distance(b) == pytest.approx(b.distance(a))
    assert 0 < a.distance(b) < a.distance(c)


def test_distance_sees_the_row_length_distribution():
    short = _fp(100, 1000, (0, 0, 0, 0, 100))
    skewed = _fp(100, 1000, (50, 40, 0, 0, 0, 0, 0, 10))
    assert short.distance(skewed) > 2.0


def test_fingerprint_leaves_widths_and_arrays_out():
    indptr = np.array([0, 2, 3], np.int32)
    fp = fingerprint({"a": np.ones(3), "indptr": indptr, "m": 2, "n": np.int64(5), "feat": 32, "alpha": 0.5},
                     ["indptr"], ["feat"])
    assert fp.scalars == (("m", 2), ("n", 5))
    assert fp.indptrs == (RowLengths("indptr", 2, 3, (0, 1, 1)),)

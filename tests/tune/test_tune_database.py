"""The tuning database: records found again by another process, the nearest matrix's record
for a new one, the target and the widths kept apart, unreadable files ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sparsetir._tvm import tvm
from sparsetir.schedule.default import Choices
from sparsetir.tune import TuningDatabase, key_of, tuned
from sparsetir.tune.workload import TuningKey
from tune_cases import skewed_csr, spmm, spmm_args

HERE = Path(__file__).resolve().parent

CHILD = """
import json, sys, time
sys.path.insert(0, {here!r})
import numpy as np
from sparsetir.tune import search  # (sparsetir.tune is the function; its modules import from the package)
from sparsetir.tune import tuned
from tune_cases import skewed_csr, spmm, spmm_args

def refuse(self):
    raise AssertionError("the second process measured")

search.Search.run = refuse
a = skewed_csr(11, 300, 250)
args = spmm_args(a, 16)
start = time.perf_counter()
result = tuned(spmm(), args, 30, database={database!r}, progress=False)
decided = time.perf_counter() - start
result.kernel(**args)
print(json.dumps({{"how": result.how, "trials": len(result.trials), "choices": repr(result.choices),
                  "decided_s": decided, "error": float(np.abs(args["c"] - a @ args["b"]).max())}}))
"""


def test_a_second_process_finds_the_record_and_measures_nothing(tmp_path):
    a = skewed_csr(11, 300, 250)
    first = tuned(spmm(), spmm_args(a, 16), 1.0, database=tmp_path, progress=False)
    assert first.how == "measured"
    child = subprocess.run([sys.executable, "-c", CHILD.format(here=str(HERE), database=str(tmp_path))],
                           capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert child.returncode == 0, child.stderr
    second = json.loads(child.stdout.strip().splitlines()[-1])
    assert second["how"] == "database" and second["trials"] == 0
    assert second["choices"] == repr(first.choices)
    assert second["error"] < 1e-3
    assert second["decided_s"] < 5.0


def _commit(db, f, args, choices, seconds=1e-3):
    db.commit(key_of(f, args), [(Choices(), seconds), (choices, seconds / 2)] if choices != Choices()
              else [(Choices(), seconds)])


def test_nearest_neighbour_takes_the_record_of_the_most_similar_matrix(tmp_path):
    db = TuningDatabase(tmp_path)
    f = spmm()
    small, large = skewed_csr(20, 100, 100), skewed_csr(21, 3000, 3000)
    _commit(db, f, spmm_args(small, 16), Choices(prefetch=2))
    _commit(db, f, spmm_args(large, 16), Choices(max_vectors=4, chunks_per_thread=4))
    _commit(db, f, spmm_args(large, 64), Choices(prefetch=0))  # another width: never a neighbour
    similar = skewed_csr(22, 2500, 2800)
    start = time.perf_counter()
    result = tuned(f, spmm_args(similar, 16), 0, database=tmp_path, progress=False)
    assert time.perf_counter() - start < 1.0
    assert result.how == "nearest" and result.choices == Choices(max_vectors=4, chunks_per_thread=4)
    assert result.distance > 0 and result.speedup == pytest.approx(2.0)
    near_small = tuned(f, spmm_args(skewed_csr(23, 120, 90), 16), 0, database=tmp_path, progress=False)
    assert near_small.choices == Choices(prefetch=2)


def test_cold_decision_without_records_is_the_default(tmp_path):
    result = tuned(spmm(), spmm_args(skewed_csr(24, 100, 100), 16), 0, database=tmp_path, progress=False)
    assert (result.how, result.choices, result.trials) == ("default", Choices(), ())
    assert not any(tmp_path.iterdir())  # a decision without measuring writes nothing


def test_an_exact_record_wins_over_a_budget(tmp_path):
    f, args = spmm(), spmm_args(skewed_csr(25, 100, 100), 16)
    _commit(TuningDatabase(tmp_path), f, args, Choices(vector_bytes=32))
    result = tuned(f, args, 30, database=tmp_path, progress=False)
    assert (result.how, result.choices, result.trials) == ("database", Choices(vector_bytes=32), ())


def test_records_of_another_target_are_not_used(tmp_path):
    f, args = spmm(), spmm_args(skewed_csr(26, 100, 100), 16)
    key = key_of(f, args)
    other = TuningKey(key.program, key.widths, key.matrix, str(tvm.target.Target({"kind": "llvm", "mcpu": "generic"})))
    TuningDatabase(tmp_path).commit(other, [(Choices(prefetch=4), 1e-3)])
    assert TuningDatabase(tmp_path).best(key) is None
    assert TuningDatabase(tmp_path).nearest(key) is None
    assert TuningDatabase(tmp_path).best(other).choices == Choices(prefetch=4)


def test_an_unreadable_database_is_ignored_with_a_warning(tmp_path):
    f, args = spmm(), spmm_args(skewed_csr(27, 100, 100), 16)
    _commit(TuningDatabase(tmp_path), f, args, Choices(prefetch=0))
    records = tmp_path / "database_tuning_record.json"
    records.write_text(records.read_text()[:-20])
    with pytest.warns(UserWarning, match="cannot read the tuning database"):
        result = tuned(f, args, 0, database=tmp_path, progress=False)
    assert result.how == "default"


def test_a_meta_schedule_database_object_can_hold_the_records(tmp_path):
    from tvm.s_tir import meta_schedule as ms

    f, args = spmm(), spmm_args(skewed_csr(28, 100, 100), 16)
    memory = ms.database.MemoryDatabase()
    first = tuned(f, args, 0.5, database=memory, progress=False)
    assert len(memory) >= 1
    again = tuned(f, args, 0.5, database=memory, progress=False)
    assert (again.how, again.choices) == ("database", first.choices)


def test_the_workload_key_round_trips_through_the_files(tmp_path):
    f, args = spmm(), spmm_args(skewed_csr(29, 100, 100), 16)
    key = key_of(f, args)
    TuningDatabase(tmp_path).commit(key, [(Choices(), 1e-3)])
    from tvm.s_tir import meta_schedule as ms

    stored = ms.database.JSONDatabase(work_dir=str(tmp_path)).get_all_tuning_records()
    assert [TuningKey.of_record(r) for r in stored] == [key]
    assert key.widths == (("feat_size", 16),)
    assert dict(key.matrix.scalars) == {"m": 100, "n": 100, "nnz": int(args["nnz"])}
    row_lengths = np.diff(args["indptr"])
    assert key.matrix.indptrs[0].histogram[0] == int((row_lengths == 0).sum())

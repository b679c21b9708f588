"""The tuning problem as a MetaSchedule workload: an ``IRModule`` that carries its key.

MetaSchedule's database finds records by their *workload*, an ``IRModule`` compared by
structural equality. A sparsetir tuning problem is a program, its width values and a matrix
(``fingerprint.py``); the target is the record's own field. So the workload here is a
``PrimFunc`` whose body is an empty root block (what the space's trace annotates,
``space.py``) and whose attributes hold the key::

    @T.prim_func(private=True, s_tir=True)
    def main():
        T.func_attr({"sparsetir.tune.program": "@T.prim_func\\ndef csr_spmm(...", "sparsetir.tune.widths":
                     {"feat_size": 128}, "sparsetir.tune.matrix": {"scalars": {"m": 2708, ...},
                     "indptrs": {"indptr": {"rows": 2708, "nnz": 10556, "histogram": [0, 485, ...]}}}})
        with T.sblock("root"):
            T.evaluate(0)

The program is its printed script (a stage-I script prints without source locations, so the
same program parsed from another file is the same key). Two processes that tune the same
program on the same matrix build equal modules, which is what lets the second one find the
first one's record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._tvm import s_tir, tirx, tvm
from .fingerprint import Fingerprint

PROGRAM = "sparsetir.tune.program"
WIDTHS = "sparsetir.tune.widths"
MATRIX = "sparsetir.tune.matrix"


@dataclass(frozen=True)
class TuningKey:
    """What a tuning record is for: a program, its width values, a matrix and a target."""

    program: str  # the printed script
    widths: tuple[tuple[str, int], ...]
    matrix: Fingerprint
    target: str  # str(tvm.target.Target)

    def module(self) -> "tvm.IRModule":
        """The MetaSchedule workload of this key (see the module docs)."""
        root = s_tir.SBlock([], [], [], "root", tirx.Evaluate(tirx.const(0, "int32")))
        body = s_tir.SBlockRealize([], tirx.const(True, "bool"), root)
        func = tirx.PrimFunc([], body).with_attrs({
            "s_tir": True,
            PROGRAM: self.program,
            WIDTHS: dict(self.widths),
            MATRIX: self.matrix.as_attrs(),
        })
        return tvm.IRModule({"main": func})

    def same_problem(self, other: "TuningKey") -> bool:
        """Whether ``other`` tunes the same program at the same widths for the same target (on
        any matrix): the records a nearest-neighbour decision may take."""
        return (self.program, self.widths, self.target) == (other.program, other.widths, other.target)

    @classmethod
    def of_record(cls, record: Any) -> "TuningKey":
        """The key of a MetaSchedule ``TuningRecord`` written by ``TuningDatabase``; ``ValueError``
        for a record of another kind (a database shared with other MetaSchedule tuning)."""
        func = {g.name_hint: f for g, f in record.workload.mod.functions.items()}.get("main")
        attrs = getattr(func, "attrs", None)
        if attrs is None or PROGRAM not in attrs or record.target is None:
            raise ValueError("not a sparsetir tuning record")
        widths = tuple(sorted((str(k), int(v)) for k, v in attrs[WIDTHS].items()))
        return cls(str(attrs[PROGRAM]), widths, Fingerprint.from_attrs(attrs[MATRIX]), str(record.target))

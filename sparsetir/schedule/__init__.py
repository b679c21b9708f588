"""Schedules: one ``Schedule`` across stages I-III, its checks, guards and replayable history.

- ``schedule.py``: the ``Schedule`` object and ``replay``;
- ``stage1.py``: the stage-I primitives (sparse_reorder, sparse_fuse, sparse_split,
  annotate_sparse_iter); ``compute_at.py``: sparse_compute_at;
- ``tvm_primitives.py``: the TVM ``s_tir`` primitives offered at stages II and III;
- ``guards.py``: refusals of TVM primitives that are wrong on sparse loops;
- ``checks.py``: the program checks run after every stage-II/III step;
- ``handles.py``: block and loop handles as JSON data; ``history.py``: ``History`` and ``Step``.
"""

from .history import History, Step
from .schedule import Schedule, replay
from .compute_at import sparse_compute_at
from .stage1 import annotate_sparse_iter, sparse_fuse, sparse_reorder

__all__ = ["History", "Schedule", "Step", "annotate_sparse_iter", "replay", "sparse_compute_at", "sparse_fuse", "sparse_reorder"]

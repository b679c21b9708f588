"""Schedules: stage-I primitives (sparse_reorder, sparse_fuse, annotate_sparse_iter) and their history."""

from .history import History, Step
from .schedule import Schedule, replay
from .stage1 import annotate_sparse_iter, sparse_fuse, sparse_reorder

__all__ = ["History", "Schedule", "Step", "annotate_sparse_iter", "replay", "sparse_fuse", "sparse_reorder"]

"""Tuning the default schedule's choices on the user's own arguments: ``sparsetir.tune``.

``sparsetir.build`` schedules an unscheduled program by fixed rules whose parameters
(``Choices``: vector width, register tile, prefetch, chunks per thread...) were measured best
on average. ``sparsetir.tune(f, example_args, budget_s)`` measures them for one program and one
matrix and keeps the winner in a database on disk::

    space.py        the knobs and their values, as a MetaSchedule design space (a TVM trace)
    fingerprint.py  what is remembered of a matrix: sizes and row-length histogram, a distance
    workload.py     the tuning problem as a MetaSchedule workload (an IRModule with the key)
    database.py     records in MetaSchedule's JSONDatabase: exact lookup, nearest neighbour
    measure.py      running a candidate on the user's arguments (outputs copied), checked
    search.py       coordinate descent from the default, then random points, in timed rounds
    tuner.py        tune / tuned: the decision (database, nearest, default, or a search)

``docs/tuning.md`` describes the API and which MetaSchedule parts are used, and why others are not.
"""

from .database import Found, TuningDatabase
from .fingerprint import Fingerprint, RowLengths, fingerprint
from .space import Knob, knobs
from .tuner import Trial, Tuned, key_of, tune, tuned
from .workload import TuningKey

__all__ = [
    "Fingerprint",
    "Found",
    "Knob",
    "RowLengths",
    "Trial",
    "Tuned",
    "TuningDatabase",
    "TuningKey",
    "fingerprint",
    "key_of",
    "knobs",
    "tune",
    "tuned",
]

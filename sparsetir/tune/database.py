"""Tuning results on disk: MetaSchedule's ``JSONDatabase``, keyed by ``TuningKey``.

Each tuning problem is a MetaSchedule *workload* (``workload.py``: the program, widths and
matrix fingerprint as attributes of an empty module) and each result a ``TuningRecord``: the
space's trace (``space.py``: the decisions that pick the choices), the target, and
``run_secs``. A search commits two records per problem, the choices it picked and the
default's, each with the default's measured time scaled by its speed relative to the default
(so a record's mean time orders records as the search did, and the pair gives the speedup).

The files are ``database_workload.json`` and ``database_tuning_record.json`` in the directory
(by default ``tuning/`` under the disk cache root). ``JSONDatabase`` appends a line per commit,
and a record names its workload by line number, which it counts in memory: two processes
appending workloads at once would number them alike. So writers hold an exclusive lock
(``lock`` in the directory) and load the files afresh before they commit; readers hold a shared
lock while they load. A file that cannot be read is reported (a warning) and ignored: tuning
then falls back to measuring, or to the default, never to an error.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence, Union

from .._tvm import s_tir, tvm
from ..runtime.disk_cache import default_root
from ..schedule.default import Choices
from .space import choices_of, trace_of
from .workload import TuningKey

try:
    import fcntl
except ImportError:  # not POSIX: no locking (one process at a time)
    fcntl = None

ms = s_tir.meta_schedule
FILES = ("database_workload.json", "database_tuning_record.json")


@dataclass(frozen=True)
class Found:
    """A stored decision: the choices, the key they were tuned for, their time and the default's
    (None when the database holds only one of them), and the matrix distance (0: exact)."""

    choices: Choices
    key: TuningKey
    seconds: float
    default_seconds: Optional[float]
    distance: float = 0.0

    @property
    def speedup(self) -> Optional[float]:
        """The default's time over the choices', as measured when they were tuned."""
        return self.default_seconds / self.seconds if self.default_seconds and self.seconds else None


class TuningDatabase:
    """Where ``sparsetir.tune`` keeps its decisions: a directory holding a MetaSchedule
    ``JSONDatabase`` (default: ``tuning/`` under the disk cache root), or any MetaSchedule
    ``Database`` object given as ``meta_schedule`` (e.g. a ``MemoryDatabase``: nothing on disk)."""

    def __init__(self, directory: Union[str, os.PathLike, None] = None, *, meta_schedule: Any = None):
        if directory is not None and meta_schedule is not None:
            raise ValueError("give a directory or a MetaSchedule database, not both")
        self.directory = None if meta_schedule is not None else Path(directory or default_root() / "tuning")
        self._given = meta_schedule
        self._loaded: Optional[tuple[tuple, Any]] = None  # (the files' size and mtime, the database)

    def best(self, key: TuningKey) -> Optional[Found]:
        """The decision stored for exactly this key, or None."""
        db = self._read()
        if db is None:
            return None
        mod = key.module()
        if not db.has_workload(mod):
            return None
        records = [r for r in db.get_top_k(db.commit_workload(mod), max(len(db), 1)) if str(r.target) == key.target]
        return _found(key, records, mod, 0.0) if records else None

    def nearest(self, key: TuningKey) -> Optional[Found]:
        """The decision stored for the nearest matrix (``Fingerprint.distance``) among the records of
        the same program, widths and target, or None when there is none."""
        db = self._read()
        if db is None:
            return None
        by_workload: dict[Any, tuple[TuningKey, list]] = {}  # records of one workload share its object
        for record in db.get_all_tuning_records():
            entry = by_workload.get(record.workload)
            if entry is None:
                try:
                    other = TuningKey.of_record(record)
                except (ValueError, KeyError, TypeError):
                    continue  # a record of other MetaSchedule tuning sharing the database
                entry = by_workload[record.workload] = (other, [])
            other, records = entry
            if str(record.target) == key.target and other.same_problem(key) and other.matrix.comparable(key.matrix):
                records.append(record)
        scored = [(other.matrix.distance(key.matrix), n, other, records)
                  for n, (other, records) in enumerate(by_workload.values()) if records]
        if not scored:
            return None
        distance, _, other, records = min(scored, key=lambda s: s[:2])
        records.sort(key=lambda r: _mean(r.run_secs))
        return _found(other, records, records[0].workload.mod, distance)

    def commit(self, key: TuningKey, results: Sequence[tuple[Choices, float]]) -> None:
        """Store ``results`` (choices and their seconds) for ``key``."""
        target = tvm.target.Target(key.target)
        with self._writing() as db:
            if db is None:
                return
            mod = key.module()
            workload = db.commit_workload(mod)
            for choices, seconds in results:
                db.commit_tuning_record(ms.database.TuningRecord(trace_of(choices, mod), workload, [float(seconds)],
                                                                 target, None))
        self._loaded = None

    def __len__(self) -> int:
        db = self._read()
        return len(db) if db is not None else 0

    def __repr__(self) -> str:
        where = self.directory if self.directory is not None else type(self._given).__name__
        return f"TuningDatabase({where})"

    def _read(self) -> Any:
        """The database as the files hold it now (None: no files, or unreadable ones)."""
        if self._given is not None:
            return self._given
        stamp = self._stamp()
        if stamp is None:
            return None
        if self._loaded is not None and self._loaded[0] == stamp:
            return self._loaded[1]
        with self._lock(shared=True):  # no writer between the stamp and the load
            stamp, db = self._stamp(), self._open("read")
        self._loaded = (stamp, db) if db is not None else None
        return db

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Any]:
        if self._given is not None:
            yield self._given
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            warnings.warn(f"sparsetir.tune: cannot create the tuning database {self.directory} ({err}); "
                          "the result is not kept", stacklevel=4)
            yield None
            return
        with self._lock(shared=False):
            yield self._open("update")

    def _open(self, purpose: str) -> Any:
        paths = [str(self.directory / name) for name in FILES]
        try:
            return ms.database.JSONDatabase(*paths, allow_missing=True)
        except Exception as err:  # TVM's parser on a truncated or edited file
            detail = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), type(err).__name__)
            warnings.warn(f"sparsetir.tune: cannot {purpose} the tuning database {self.directory} ({detail}); "
                          "ignoring it", stacklevel=4)
            return None

    def _stamp(self) -> Optional[tuple]:
        try:
            stats = [(self.directory / name).stat() for name in FILES]
        except OSError:
            return None
        return tuple((s.st_size, s.st_mtime_ns) for s in stats)

    @contextlib.contextmanager
    def _lock(self, shared: bool) -> Iterator[None]:
        if fcntl is None:
            yield
            return
        try:
            handle = open(self.directory / "lock", "a")
        except OSError:  # a read-only database: nobody writes it
            yield
            return
        with handle:
            fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def as_database(database: Any) -> TuningDatabase:
    """``sparsetir.tune``'s ``database=``: None (the default directory), a directory, a
    ``TuningDatabase`` or a MetaSchedule ``Database``."""
    if database is None or isinstance(database, (str, os.PathLike)):
        return TuningDatabase(database)
    if isinstance(database, TuningDatabase):
        return database
    if isinstance(database, ms.database.Database):
        return TuningDatabase(meta_schedule=database)
    raise TypeError("database must be a directory (str or os.PathLike), a sparsetir.tune.TuningDatabase or a "
                    f"MetaSchedule Database, got {type(database).__name__}")


def _found(key: TuningKey, records: list, mod: Any, distance: float) -> Found:
    """The best of ``records`` (sorted, best first) of one workload, and the default's time."""
    best = records[0]
    default = Choices()
    default_seconds = None
    decided = [(choices_of(r.trace, mod), _mean(r.run_secs)) for r in records]
    for choices, seconds in decided:
        if choices == default:
            default_seconds = seconds
            break
    return Found(decided[0][0], key, _mean(best.run_secs), default_seconds, distance)


def _mean(run_secs: Any) -> float:
    values = [float(s) for s in run_secs] if run_secs else []
    return sum(values) / len(values) if values else float("inf")

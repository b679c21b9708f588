"""The seed scripts the fuzzer mutates: stage-I files from the repository and stage-II texts printed
from them at run time (lowered, scheduled, and the ``sparsetir.ops`` kernels).

Every seed is checked to parse before it is used, so a finding is always the mutation's doing.
Building one kind of seed may fail while the tree is being changed; such a source is skipped and
named in ``Corpus.skipped`` rather than stopping the run.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

REPO = Path(__file__).resolve().parents[1]

#: ``sparsetir.ops`` kernel configurations printed as stage-II seeds (op, dtype, feat, block).
KERNEL_CONFIGS = [
    ("spmm", "float32", 16, (0, 0)),
    ("spmm", "float32", 127, (0, 0)),  # main + tail split
    ("spmm", "float64", 32, (0, 0)),
    ("sddmm", "float32", 32, (0, 0)),
    ("sddmm", "float32", 33, (0, 0)),  # overlapping last vector
    ("segment_sum", "float32", 16, (0, 0)),
    ("segment_sum", "float32", 100, (0, 0)),
    ("segment_sum", "float32", 512, (0, 0)),  # streamed rows
    ("bsr_spmm", "float32", 16, (2, 2)),
    ("bsr_spmm", "float32", 100, (4, 4)),
    ("ell_spmm", "float32", 16, (0, 0)),
    ("ell_spmm", "float32", 100, (0, 0)),
    ("softmax", "float32", 0, (0, 0)),
    ("softmax", "float64", 0, (0, 0)),
]


@dataclass(frozen=True)
class Seed:
    """One valid script: where it came from, its stage (1 or 2) and its text."""

    name: str
    stage: int
    text: str


@dataclass
class Corpus:
    """The seeds of both stages, and the sources that could not be built (with the reason)."""

    seeds: list[Seed] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def of_stage(self, stage: int) -> list[Seed]:
        return [s for s in self.seeds if s.stage == stage]


def stage1_files() -> list[Path]:
    """Every script file of the repository that the corpus starts from."""
    return sorted([*(REPO / "examples").glob("*.py"), *(REPO / "tests" / "scripts").glob("**/*.py")])


def _functions(parsed: Any) -> list[Any]:
    return list(parsed.values()) if isinstance(parsed, dict) else [parsed]


def _stage_of(func: Any) -> int:
    import sparsetir

    return 2 if isinstance(func, sparsetir.Stage2Function) else 1


# --- schedules applied after lower_sparse_iter: generic recipes over whatever blocks there are ---


def _blocks(sch: Any) -> list[str]:
    """The block names of the scheduled program, read from its printed text (our own output)."""
    return [b for b in re.findall(r'T\.sblock\("([^"]+)"\)', sch.func.script()) if b != "root"]


def _split_inner(sch: Any, block: str) -> None:
    loops = sch.get_loops(sch.get_sblock(block))
    sch.split(loops[-1], [None, 4])


def _vectorize_rows(sch: Any, block: str) -> None:
    loops = sch.get_loops(sch.get_sblock(block))
    outer, inner = sch.split(loops[-1], [None, 4])
    if len(loops) >= 2:
        sch.reorder(outer, loops[-2], inner)
    sch.vectorize(inner)


def _parallel_outer(sch: Any, block: str) -> None:
    sch.parallel(sch.get_loops(sch.get_sblock(block))[0])


def _unroll_inner(sch: Any, block: str) -> None:
    sch.unroll(sch.get_loops(sch.get_sblock(block))[-1])


def _decompose(sch: Any, block: str) -> None:
    rv = sch.get_sblock(block)
    sch.decompose_reduction(rv, sch.get_loops(rv)[0])


def _cache_write(sch: Any, block: str) -> None:
    rv = sch.get_sblock(block)
    tile = sch.cache_write(rv, 0, "local")
    sch.reverse_compute_at(tile, sch.get_loops(rv)[0])


def _cache_read(sch: Any, block: str) -> None:
    sch.cache_read(sch.get_sblock(block), 0, "local")


def _fuse_outer(sch: Any, block: str) -> None:
    loops = sch.get_loops(sch.get_sblock(block))
    sch.fuse(loops[0], loops[1])


def _partition(sch: Any, block: str) -> None:
    sch.partition_rows(block)


SCHEDULE_RECIPES: list[Callable[[Any, str], None]] = [
    _split_inner, _vectorize_rows, _parallel_outer, _unroll_inner, _decompose, _cache_write,
    _cache_read, _fuse_outer, _partition,
]


def scheduled_texts(func: Any) -> Iterator[tuple[str, str]]:
    """``(steps, stage-II text)`` after each schedule step that applies to ``func``.

    One schedule per function, the recipes applied in turn (each to the first block it fits),
    so later texts carry several steps; a refused step leaves the schedule as it was.
    """
    import sparsetir

    sch = sparsetir.Schedule(func)
    sch.lower_sparse_iter()
    steps: list[str] = []
    for recipe in SCHEDULE_RECIPES:
        for block in _blocks(sch):
            try:
                recipe(sch, block)
            except Exception:  # noqa: BLE001 - a recipe that does not fit this block is skipped
                continue
            steps.append(f"{recipe.__name__.lstrip('_')}({block})")
            yield "+".join(steps), sch.func.script()
            break


def kernel_text(op: str, dtype: str, feat: int, block: tuple[int, int]) -> str:
    """The stage-II text of one ``sparsetir.ops`` kernel configuration, scheduled as ops builds it."""
    from sparsetir.ops.kernels import MAKERS, KernelKey

    return MAKERS[op](KernelKey(op, dtype, feat, block)).script()


def build_corpus(schedules: int | None = None, kernels: bool = True) -> Corpus:
    """All seeds; each one parses (a text that does not is recorded in ``skipped``).

    ``schedules`` limits how many stage-I functions are scheduled (None: all; scheduling is the
    slow part of building the corpus); ``kernels`` adds the ops kernels.
    """
    import sparsetir

    corpus = Corpus()
    seen: set[str] = set()

    def add(name: str, text: str) -> None:
        if text in seen:
            return
        try:
            stages = {_stage_of(f) for f in _functions(sparsetir.parse(text, name))}
        except Exception as err:  # noqa: BLE001
            corpus.skipped.append(f"{name}: does not parse: {type(err).__name__}: {str(err).splitlines()[0]}")
            return
        seen.add(text)
        corpus.seeds.append(Seed(name, max(stages), text))

    def attempt(name: str, make: Callable[[], Iterator[tuple[str, str]]]) -> None:
        try:
            for sub, text in make():
                add(f"{name}:{sub}" if sub else name, text)
        except Exception as err:  # noqa: BLE001 - keep going while the tree changes
            corpus.skipped.append(f"{name}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")

    stage1_funcs = []
    for path in stage1_files():
        rel = str(path.relative_to(REPO))
        text = path.read_text()
        add(rel, text)
        try:
            funcs = _functions(sparsetir.parse(text, rel))
        except Exception:  # noqa: BLE001 - already recorded by add()
            continue
        stage1_funcs += [(f"{rel}:{f.name}", f) for f in funcs if _stage_of(f) == 1]

    for name, func in stage1_funcs:
        attempt(f"{name}:lowered", lambda func=func: iter([("", sparsetir.lower_sparse_iter(copy.deepcopy(func)).script())]))
    for config in KERNEL_CONFIGS if kernels else []:
        op, dtype, feat, _ = config
        attempt(f"ops:{op}-{dtype}-{feat}", lambda config=config: iter([("", kernel_text(*config))]))
    for name, func in stage1_funcs[:schedules]:
        attempt(f"{name}:scheduled", lambda func=func: scheduled_texts(func))
    return corpus

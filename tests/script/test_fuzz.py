"""The fuzzer's CI budget: a fixed, seeded run of mutated scripts of both stages finds nothing.

``fuzz/`` (at the repository root) mutates valid scripts — token and line edits, injected Python
at every kind of position, deep nesting, huge literals, ``None`` arithmetic, stage-level edits —
and checks each in a sandboxed worker process: parse, print, parse again and compare, lower. A
finding is an exception that is not a ``SparseTIRError``, a crash, a hang, code from the script
running, a print -> parse mismatch, or a parse error that is not located in the script. The
longer run is ``python -m fuzz --count 10000 --jobs 2 --seed 1``.

The budget's seed rotates: it is the UTC day (``fuzz_seed`` in ``tests/conftest.py``), so every
day's CI tries mutants no earlier run tried. A failure's message, and the summary line of every
run, name the seed; ``--fuzz-seed N`` reruns exactly those mutants (they depend only on the seed
and the corpus, i.e. the checkout).

Besides the budget, these tests keep the fuzzer honest: the unmutated seeds come back clean (no
false alarms from the audit hook), every payload run as Python *is* detected (no blind spots), a
worker that crashes or hangs is attributed to its script and replaced, and mutants are
deterministic in the seed.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import sparsetir  # noqa: E402
from fuzz import mutators, payloads  # noqa: E402
from fuzz.corpus import Corpus, Seed, build_corpus  # noqa: E402
from fuzz.runner import Mutant, Pool, Result, Summary, mutants, seeds_as_mutants  # noqa: E402
from script_programs import random_programs  # noqa: E402

MUTANTS_PER_STAGE = 2000  # with the corpus and the workers' start: about 70 s on 2 cores
SCHEDULED_FUNCTIONS = 6  # stage-I functions whose schedule steps become stage-II seeds
TIMEOUT_S = 10.0
JOBS = 2


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    """The repository's seeds, plus generated stage-I programs and their stage-II lowerings.

    A generated program is a seed only if it lowers (or is refused with a sparsetir error): the
    budget is about the parsers, and a seed that already fails would fail every mutant of it.
    """
    built = build_corpus(schedules=SCHEDULED_FUNCTIONS)
    for k, text in enumerate(random_programs(seed=4242, count=8)):
        try:
            lowered = sparsetir.lower_sparse_iter(sparsetir.parse(text))
            sparsetir.lower_sparse_buffer(lowered)
            lowered_text = lowered.script()
        except sparsetir.SparseTIRError:
            continue
        except Exception:  # noqa: BLE001 - a lowering bug, reported by `python -m fuzz --seeds-only`
            continue
        built.seeds += [Seed(f"generated-{k}", 1, text), Seed(f"generated-{k}:lowered", 2, lowered_text)]
    return built


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory):
    workers = Pool(JOBS, tmp_path_factory.mktemp("fuzz-workers"), TIMEOUT_S)
    yield workers
    workers.close()


def _report(results: list[Result]) -> str:
    lines = []
    for r in results:
        reply = r.reply
        lines.append(
            f"--- #{r.mutant.index} {r.finding}: stage {r.mutant.stage}, seed {r.mutant.seed}, "
            f"mutations {', '.join(r.mutant.mutations)}\n[{reply.get('phase')}] {reply.get('error')}: "
            f"{reply.get('message')}\nevents: {reply.get('events')} files: {reply.get('files')}\n"
            f"{reply.get('traceback', '')[-1500:]}--- script ---\n{r.mutant.text[:3000]}"
        )
    return "\n".join(lines)


def test_corpus_has_both_stages(corpus: Corpus):
    assert len(corpus.of_stage(1)) >= 20 and len(corpus.of_stage(2)) >= 40, corpus.skipped
    assert any(":scheduled:" in s.name for s in corpus.seeds)
    assert any(s.name.startswith("ops:") for s in corpus.seeds)
    assert all('"sparse_tir_level": 1' in s.text for s in corpus.of_stage(2))


def test_unmutated_seeds_are_clean(corpus: Corpus, pool: Pool):
    """No false alarms: every seed parses and round-trips with no audited event."""
    results = list(pool.run(seeds_as_mutants(corpus)))
    bad = [r for r in results if r.finding or r.reply["phase"] == "parse"]
    assert not bad, _report(bad)


def test_every_payload_is_detected_when_run(pool: Pool):
    """No blind spots: each payload, run as plain Python in a worker, is seen as code execution."""
    texts = [payloads.statement(k) for k, t in enumerate(payloads.STATEMENTS) if t not in payloads.INERT]
    texts += [f"fz = {payloads.expression(k)}" for k, t in enumerate(payloads.EXPRESSIONS) if t not in payloads.INERT]
    results = list(pool.run([Mutant(k, 0, "payload", (), t) for k, t in enumerate(texts)], mode="exec_payload"))
    blind = [r for r in results if r.finding != "code_execution"]
    assert not blind, _report(blind)
    assert len(results) == len(texts)


def test_crash_and_hang_are_attributed_and_the_worker_replaced(tmp_path: Path):
    small = Pool(1, tmp_path, timeout_s=2.0)
    try:
        crash = list(small.run([Mutant(0, 1, "crash", (), "")], mode="crash"))
        hang = list(small.run([Mutant(1, 1, "hang", (), "")], mode="hang"))
        after = list(small.run([Mutant(2, 1, "ok", (), "x = (")]))
    finally:
        small.close()
    assert [r.finding for r in crash] == ["crash"] and "SIGSEGV" in crash[0].reply["error"]
    assert [r.finding for r in hang] == ["hang"]
    assert [r.reply["outcome"] for r in after] == ["sparsetir_error"]
    assert small.started == 3


def _budget(corpus: Corpus, pool: Pool, stage: int, seed: int) -> Summary:
    summary = Summary()
    for result in pool.run(mutants(corpus, seed, MUTANTS_PER_STAGE, stages=(stage,))):
        summary.add(result)
    return summary


def _findings(summary: Summary, stage: int, seed: int) -> str:
    """The failure message: the seed and how to rerun it first, then each finding."""
    return (f"fuzz budget, stage {stage}, seed {seed}: {summary.line()}\n"
            f"rerun: python -m pytest tests/script/test_fuzz.py -k budget_stage{stage} --fuzz-seed {seed}\n"
            + _report(summary.findings))


def test_fuzz_budget_stage1(corpus: Corpus, pool: Pool, fuzz_seed: int):
    summary = _budget(corpus, pool, 1, fuzz_seed)
    assert summary.scripts[1] == MUTANTS_PER_STAGE, _findings(summary, 1, fuzz_seed)
    assert not summary.findings, _findings(summary, 1, fuzz_seed)


def test_fuzz_budget_stage2(corpus: Corpus, pool: Pool, fuzz_seed: int):
    """Stage II is read by our own allow-list parser (``script/stage2_parser.py``): nothing of
    the text may run, crash TVM or escape as a TVM error."""
    summary = _budget(corpus, pool, 2, fuzz_seed)
    assert summary.scripts[2] == MUTANTS_PER_STAGE, _findings(summary, 2, fuzz_seed)
    assert not summary.findings, _findings(summary, 2, fuzz_seed)


def test_budget_seed_is_the_utc_day_unless_given(pytestconfig: pytest.Config, fuzz_seed: int):
    from datetime import datetime, timedelta, timezone

    given = pytestconfig.getoption("--fuzz-seed")
    now = datetime.now(timezone.utc)
    days = {int(day.strftime("%Y%m%d")) for day in (now, now - timedelta(days=1))}  # the run may span midnight
    assert fuzz_seed == given if given is not None else fuzz_seed in days


def test_mutants_are_deterministic(corpus: Corpus):
    first = [m.text for m in mutants(corpus, 7, 40)]
    assert first == [m.text for m in mutants(corpus, 7, 40)]
    assert first != [m.text for m in mutants(corpus, 8, 40)]
    assert {m.stage for m in mutants(corpus, 7, 40)} == {1, 2}


def test_a_mutant_past_twice_the_script_limit_is_cut_there(monkeypatch):
    from sparsetir.script.source import MAX_SCRIPT_CHARS

    assert mutators.MAX_MUTANT_CHARS == 2 * MAX_SCRIPT_CHARS
    grow = lambda text, rng: text * 1000  # noqa: E731
    grow.__name__ = "grow"
    monkeypatch.setattr(mutators, "MUTATORS", [(grow, 1)])
    monkeypatch.setattr(mutators, "MAX_MUTANT_CHARS", 50_000)
    rng = random.Random(1)
    for _ in range(20):
        text, applied = mutators.mutate("x = 1\n", rng)
        assert len(text) <= 50_000
        if len(applied) > 1:  # grown past the cap: cut, and mutated no further
            assert applied[-1] == "cut" and len(text) == 50_000


@pytest.mark.parametrize("mutator", [m for m, _ in mutators.MUTATORS], ids=lambda m: m.__name__)
def test_each_mutator_changes_some_seed(corpus: Corpus, mutator):
    rng = random.Random(3)
    seeds = corpus.of_stage(1)[:4] + corpus.of_stage(2)[:4]
    assert any(mutator(s.text, rng) != s.text for s in seeds for _ in range(3))


def test_injections_reach_every_named_position(corpus: Corpus):
    """The injection mutator finds each kind of place it aims at in the stage-II seeds."""
    kinds = {p.kind for s in corpus.of_stage(2) for p in mutators.places(s.text)}
    assert set(mutators.PLACE_KINDS) - {"docstring", "decorator_arg"} <= kinds  # printed: no docstring, bare decorator

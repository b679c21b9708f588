"""Mutated scripts: the parser either accepts them or raises a located ``ScriptError``.

Every valid fixture under tests/scripts and a seeded corpus of generated programs are mutated at
the token level (Python's ``tokenize``): delete, swap, duplicate or rename a token, truncate the
text, or several of these at once. No mutation may make ``sparsetir.parse`` raise anything
outside the documented ``ScriptError`` family, or hang; one that parses must still round-trip.
"""

from __future__ import annotations

import io
import random
import signal
import time
import tokenize
import traceback
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

import sparsetir
from script_programs import random_programs
from sparsetir.script.stage2_parser import is_stage2_text

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
PACKAGE_DIR = str(Path(sparsetir.__file__).resolve().parent)
MUTATIONS_PER_SCRIPT = 16
PARSE_TIMEOUT_S = 5.0
GENERATED = random_programs(seed=4242, count=16)
EXAMPLES = SCRIPTS.parent.parent / "examples"
FIXTURES = sorted(  # stage I
    p for p in [*SCRIPTS.glob("**/*.py"), *EXAMPLES.glob("*.py")] if not is_stage2_text(p.read_text())
)
STAGE2_SOURCES = ["csr_spmm", "csr_spmm_detached", "sddmm_fused", "bsr_spmm"]  # lowered, printed
CORPUS = (
    [pytest.param(p.read_text(), id=f"{p.parent.name}/{p.name}") for p in FIXTURES]
    + [pytest.param(text, id=f"generated-{k}") for k, text in enumerate(GENERATED)]
    + [
        pytest.param(
            sparsetir.lower_sparse_iter(sparsetir.parse_file(EXAMPLES / f"{name}.py")).script(),
            id=f"stage2-{name}",
        )
        for name in STAGE2_SOURCES
    ]
)


@dataclass(frozen=True)
class Token:
    text: str
    start: int  # offsets into the script text
    end: int
    is_name: bool


def tokens_of(text: str) -> list[Token]:
    """The non-empty tokens of ``text`` with their character offsets."""
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if not tok.string:
                continue
            start = line_starts[tok.start[0] - 1] + tok.start[1]
            end = line_starts[tok.end[0] - 1] + tok.end[1]
            is_name = tok.type == tokenize.NAME and tok.string.isidentifier()
            out.append(Token(tok.string, start, end, is_name))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # an earlier mutation broke tokenizing; the tokens read so far still serve
    return out


def delete_token(text: str, toks: list[Token], rng: random.Random) -> str:
    t = rng.choice(toks)
    return text[: t.start] + text[t.end :]


def swap_tokens(text: str, toks: list[Token], rng: random.Random) -> str:
    a, b = sorted(rng.sample(toks, 2), key=lambda t: t.start)
    return text[: a.start] + b.text + text[a.end : b.start] + a.text + text[b.end :]


def duplicate_token(text: str, toks: list[Token], rng: random.Random) -> str:
    t = rng.choice(toks)
    sep = rng.choice(["", " "])
    return text[: t.end] + sep + t.text + text[t.end :]


def truncate(text: str, toks: list[Token], rng: random.Random) -> str:
    if rng.random() < 0.5:
        return text[: rng.randrange(len(text))]
    return text[: rng.choice(toks).end]


def rename_identifier(text: str, toks: list[Token], rng: random.Random) -> str:
    names = [t for t in toks if t.is_name]
    if len({t.text for t in names}) < 2:
        return delete_token(text, toks, rng)
    t = rng.choice(names)
    other = rng.choice(sorted({n.text for n in names} - {t.text}))
    return text[: t.start] + other + text[t.end :]


MUTATORS: list[Callable[[str, list[Token], random.Random], str]] = [
    delete_token,
    swap_tokens,
    duplicate_token,
    truncate,
    rename_identifier,
]


def mutate(text: str, rng: random.Random) -> str:
    """One to three random mutations of ``text``."""
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        toks = tokens_of(text)
        if len(toks) < 2:
            break
        text = rng.choice(MUTATORS)(text, toks, rng)
    return text


class Hang(Exception):
    """The parser ran past its time budget."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ``Hang`` in this (main) thread after ``seconds``; an outer SIGALRM timer survives."""

    def on_alarm(signum, frame):
        raise Hang(f"parse took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    start = time.monotonic()
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_delay:  # re-arm an enclosing timer, e.g. pytest-timeout's, with its time left
            left = max(outer_delay - (time.monotonic() - start), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, outer_interval)


def check_mutant(text: str) -> None:
    """Parse ``text``: a ScriptError is fine; success must round-trip; anything else fails."""
    with time_limit(PARSE_TIMEOUT_S):
        try:
            parsed = sparsetir.parse(text, "<mutant>")
        except sparsetir.ScriptError as err:
            rendered = str(err)
            assert rendered.startswith("<mutant>")
            assert err.line is None or err.line >= 1
            assert PACKAGE_DIR not in rendered  # the mutant's own text may say "sparsetir/"
            return
        for func in parsed.values() if isinstance(parsed, dict) else [parsed]:
            printed = func.script()
            again = sparsetir.parse(printed, "<printed mutant>")
            sparsetir.assert_structural_equal(func, again)
            assert again.script() == printed


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # Python's own, about mutants like `1in`
@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM for the per-parse time limit")
@pytest.mark.parametrize("text", CORPUS)
def test_mutants_fail_cleanly(text: str, request: pytest.FixtureRequest):
    rng = random.Random(zlib.crc32(request.node.callspec.id.encode()))
    failures = []
    for _ in range(MUTATIONS_PER_SCRIPT):
        mutant = mutate(text, rng)
        try:
            check_mutant(mutant)
        except Exception:  # noqa: BLE001 - collect every failure with its input
            failures.append(f"--- mutant ---\n{mutant}\n--- error ---\n{traceback.format_exc()}")
    assert not failures, "\n".join(failures)


def test_corpus_parses_unmutated():
    """The seeds themselves are valid, so every failure above is the mutation's doing."""
    for param in CORPUS:
        sparsetir.parse(param.values[0], param.id)


def test_mutations_change_the_text():
    rng = random.Random(0)
    text = GENERATED[0]
    toks = tokens_of(text)
    for mutator in MUTATORS:
        assert mutator(text, toks, rng) != text, mutator.__name__


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
def test_time_limit_interrupts_a_hang_and_keeps_outer_timers():
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: None)
    outer = signal.setitimer(signal.ITIMER_REAL, 100.0)  # e.g. pytest-timeout's own timer
    try:
        with pytest.raises(Hang):
            with time_limit(0.05):
                while True:
                    pass
        assert 90.0 < signal.getitimer(signal.ITIMER_REAL)[0] <= 100.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, *outer)
        signal.signal(signal.SIGALRM, previous)

"""Golden scripts per pass: every example's stage II and stage III, checked in under tests/golden/.

The files are ``tests/golden/<example>/<func>.stage2.py`` (after LowerSparseIter) and
``<func>.stage3.py`` (after the rest of the pipeline). When a lowering or printer change is
intended, regenerate them all with::

    python tests/golden/regen.py

and review the diff. Each stage-II file is also a round trip: parsing it gives a function
structurally equal to the lowered one. Stage III is compared as text.
"""

from __future__ import annotations

import difflib

import pytest

import sparsetir
from regen import ROOT, examples, file_text, functions, golden_path, lowered

CASES = [(example, name) for example in examples() for name in functions(example)]
IDS = [f"{example.stem}/{name}" for example, name in CASES]


def _first_difference(expected: str, actual: str) -> str:
    diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "golden", "now", n=2, lineterm="")
    return "\n".join(list(diff)[:12])


def _check(path, text):
    assert path.exists(), f"{path.relative_to(ROOT)} is missing: run python tests/golden/regen.py"
    golden = path.read_text()
    if golden != text:
        pytest.fail(
            f"{path.relative_to(ROOT)} differs (run python tests/golden/regen.py if intended):\n"
            + _first_difference(golden, text),
            pytrace=False,
        )


@pytest.mark.parametrize("example, name", CASES, ids=IDS)
def test_stage2_matches_golden_and_round_trips(example, name):
    stage2, _ = lowered(functions(example)[name])
    path = golden_path(example, name, 2)
    _check(path, file_text(stage2.script()))
    again = sparsetir.parse(path.read_text(), str(path.relative_to(ROOT)))
    sparsetir.assert_structural_equal(stage2, again)


@pytest.mark.parametrize("example, name", CASES, ids=IDS)
def test_stage3_matches_golden(example, name):
    _, stage3 = lowered(functions(example)[name])
    _check(golden_path(example, name, 3), file_text(stage3.script()))


def test_every_golden_file_belongs_to_an_example():
    expected = {golden_path(example, name, stage) for example, name in CASES for stage in (2, 3)}
    found = set(golden_path(examples()[0], "x", 2).parents[1].glob("*/*.stage[23].py"))
    assert found <= expected, sorted(str(p.relative_to(ROOT)) for p in found - expected)

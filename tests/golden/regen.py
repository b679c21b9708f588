"""Write the golden stage-II and stage-III scripts of every example: ``python tests/golden/regen.py``.

For ``examples/<name>.py`` (and ``tests/transforms/scripts/<name>.py``) and each of its functions ``<func>``, ``tests/golden/<name>/<func>.stage2.py``
is the function after LowerSparseIter and ``<func>.stage3.py`` after the rest of the pipeline, as
``.script()`` prints them. Examples are parsed under their path relative to the repository root
(``examples/<name>.py``), so the spans the scripts carry do not depend on where the checkout is.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import sparsetir  # noqa: E402
from sparsetir.transforms import pipeline  # noqa: E402


def examples() -> list[Path]:
    """Every example script, and the lowering's own fixtures (fused iterations over 3+ axes)."""
    return sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "tests" / "transforms" / "scripts").glob("*.py"))


def functions(example: Path) -> dict:
    """The example's stage-I functions by name, parsed under the repository-relative path."""
    relative = example.relative_to(ROOT).as_posix()
    parsed = sparsetir.parse(example.read_text(), relative)
    return parsed if isinstance(parsed, dict) else {parsed.name: parsed}


def lowered(func) -> tuple:
    """(stage II as LowerSparseIter writes it, stage III) of a stage-I function."""
    stage2 = pipeline.lower(func, until=pipeline.STAGE_II)
    return stage2, pipeline.lower(stage2)


def golden_path(example: Path, name: str, stage: int) -> Path:
    """Where the golden script of ``name`` in ``example`` at ``stage`` lives."""
    return GOLDEN / example.stem / f"{name}.stage{stage}.py"


def texts() -> Iterator[tuple[Path, str, int, str]]:
    """(example, function name, stage, script text) for every golden file."""
    for example in examples():
        for name, func in functions(example).items():
            stage2, stage3 = lowered(func)
            yield example, name, 2, file_text(stage2.script())
            yield example, name, 3, file_text(stage3.script())


def file_text(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def decomposition_texts() -> Iterator[tuple[Path, str]]:
    """(golden path, stage-I script) of every decomposition of ``tests/transforms/decompositions.py``."""
    sys.path.insert(0, str(ROOT / "tests" / "transforms"))
    import decompositions

    for name in decompositions.RULES:
        yield GOLDEN / "format_decompose" / f"{name}.stage1.py", file_text(decompositions.decomposed(name).script())


def main() -> None:
    written = 0
    outputs = [(golden_path(example, name, stage), text) for example, name, stage, text in texts()]
    for path, text in outputs + list(decomposition_texts()):
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written += 1
            print(f"wrote {path.relative_to(ROOT)}")
    print(f"{written} golden file(s) changed")


if __name__ == "__main__":
    main()

"""The bundled examples as the trace tests read them: every function of every examples/*.py."""

from __future__ import annotations

from pathlib import Path

import sparsetir

EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(EXAMPLE_DIR.glob("*.py"))


def functions(path: Path) -> dict[str, sparsetir.SparseFunction]:
    """The functions of a script file by name, parsed under the file's relative path."""
    rel = str(path.relative_to(EXAMPLE_DIR.parent))
    parsed = sparsetir.parse(path.read_text(), rel)
    return parsed if isinstance(parsed, dict) else {parsed.name: parsed}


def example_functions() -> list[tuple[str, str, sparsetir.SparseFunction]]:
    """(file, function name, function) for every function of every example."""
    return [(str(p.relative_to(EXAMPLE_DIR.parent)), name, f) for p in EXAMPLE_FILES for name, f in functions(p).items()]


EXAMPLES = example_functions()
IDS = [f"{Path(file).stem}:{name}" for file, name, _ in EXAMPLES]

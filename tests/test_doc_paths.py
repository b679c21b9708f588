"""Every repository path the README and docs/ name exists in the repository (a user's clone has
nothing outside it).

A path is a markdown link target (relative to its page) or an inline code span whose first part
is a top-level entry of the repository, or ``..`` (relative to the repository or the page).
Fenced code blocks are left out: their commands name files they create.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
PAGES = [CHECKOUT / "README.md", *sorted((CHECKOUT / "docs").glob("*.md"))]

_FENCED = re.compile(r"^```.*?^```", re.S | re.M)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")


def _top_level() -> set[str]:
    """The repository's top-level entries: those git tracks (not what a local run left behind,
    such as the bench's ``bench-results/``), or every entry outside a git checkout."""
    try:
        tracked = subprocess.run(["git", "ls-files"], cwd=CHECKOUT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return {p.name for p in CHECKOUT.iterdir() if not p.name.startswith(".") or p.name == ".ci"}
    return {line.split("/")[0] for line in tracked.stdout.splitlines() if line}


def paths_named(page: Path) -> list[tuple[str, list[Path]]]:
    """(path as written, the places it may be relative to) for each path the page names."""
    text = _FENCED.sub("", page.read_text())
    found = []
    for target in _LINK_TARGET.findall(text):
        target = target.split("#")[0]
        if target and not re.match(r"[a-z]+:", target):  # not https:, mailto:, or an anchor
            found.append((target, [page.parent]))
    top = _top_level()
    for span in _CODE_SPAN.findall(text):
        span = re.sub(r":\d+$", "", span.strip().rstrip(".,;:"))  # path:line
        if " " in span or "/" not in span or re.search(r"[*<>{}$=()\[\]]", span):  # commands, globs, code
            continue
        if span.split("/")[0] in top | {".."}:
            found.append((span, [CHECKOUT, page.parent]))
    return found


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(CHECKOUT).as_posix() for p in PAGES])
def test_paths_named_in_the_docs_exist_in_the_repository(page):
    missing = []
    for written, bases in paths_named(page):
        places = [(base / written).resolve() for base in bases]
        if not any(p.exists() and p.is_relative_to(CHECKOUT) for p in places):
            missing.append(written)
    assert not missing, f"{page.name} names paths that are not in the repository: {missing}"


def test_the_check_sees_the_paths():
    """The patterns still find paths: the pages name dozens, among them these."""
    named = {written for page in PAGES for written, _ in paths_named(page)}
    assert len(named) > 40
    assert {"docs/gpu.md", "sparsetir/bench/cuda_measure.py", "bench/notes/gpu.md"} <= named

"""Shared by the explorer tests: the example, its schedule, and reading a page's document."""

from __future__ import annotations

import json
import re
from pathlib import Path

import sparsetir
from sparsetir.schedule import History

CHECKOUT = Path(__file__).resolve().parents[2]
EXAMPLE = CHECKOUT / "examples" / "csr_spmm.py"
SIDECAR = CHECKOUT / "examples" / "csr_spmm.schedule.json"
SCRIPT_NAME = "examples/csr_spmm.py"  # the name the tests parse the example under


def example_text() -> str:
    return EXAMPLE.read_text()


def example_function() -> sparsetir.SparseFunction:
    """The example's function, its spans naming ``SCRIPT_NAME``."""
    return sparsetir.parse(example_text(), SCRIPT_NAME)


def example_history() -> History:
    return History.from_json(SIDECAR.read_text())


def line_of(needle: str) -> int:
    """The 1-based line of the example that contains ``needle``."""
    return next(k for k, line in enumerate(example_text().splitlines(), 1) if needle in line)


def page_document(page: str) -> dict:
    """The document a page carries."""
    found = re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', page, re.S)
    assert found, "the page carries no document"
    return json.loads(found.group(1))


def pane_text(document: dict, pane_id: str) -> str:
    """The plain text of a pane (its highlighted lines without their tags)."""
    lines = [document["lines"][k] for k in document["panes"][pane_id]["lines"]]
    return "\n".join(re.sub(r"<[^>]+>", "", line).replace("&lt;", "<").replace("&gt;", ">")
                     .replace("&quot;", '"').replace("&#39;", "'").replace("&amp;", "&") for line in lines)


#: a script line that makes ``slow_job`` sleep instead of compiling
SLOW = "# slow\n"


def slow_job(script, text, func):
    """A compile job for the server tests (it runs in the worker process): a script holding
    ``SLOW`` takes ten minutes, any other compiles as usual."""
    import time

    from sparsetir.explorer.compiler import compile_script

    if SLOW in text:
        time.sleep(600)
    return compile_script(script, text, func)

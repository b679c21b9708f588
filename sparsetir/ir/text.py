"""How IR objects reach their text form without the IR depending on the script package.

The script package (printer and parser) sits above the IR: it imports IR classes, never the
other way round. ``SparseFunction.script()`` and friends are still methods, for users; they call
the functions that ``sparsetir.script`` installs here when it is imported (``install``), which
``import sparsetir`` always does.
"""

from __future__ import annotations

from typing import Any, Callable

_FORMS: dict[str, Callable[..., Any]] = {}


def install(**forms: Callable[..., Any]) -> None:
    """Register the text-form functions: ``print_stage1``, ``print_stage2``, ``specialize``."""
    _FORMS.update(forms)


def form(name: str) -> Callable[..., Any]:
    """The installed function ``name``; an error if ``sparsetir.script`` was never imported."""
    try:
        return _FORMS[name]
    except KeyError:
        raise RuntimeError(f"no text form '{name}': import sparsetir (or sparsetir.script) first") from None

"""A pane's content: a text, its highlighted lines, and the script lines of each line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..trace.listing import Listing
from .highlight import highlight_lines


@dataclass(frozen=True)
class Pane:
    """What one pane shows: ``text`` in ``lang``, one HTML fragment and one list of script line
    numbers per line; ``note`` says why there is nothing to show (an error, a missing stage)."""

    lang: str
    text: str
    html: tuple[str, ...]
    origins: tuple[tuple[int, ...], ...]
    note: Optional[str] = None

    @staticmethod
    def of_listing(lst: Listing, lang: str, home: Optional[str]) -> "Pane":
        """A listing's text, highlighted, with its lines in ``home``."""
        return Pane(lang, lst.text, tuple(highlight_lines(lst.text, lang)), tuple(tuple(x) for x in lst.lines_in(home)))

    @staticmethod
    def of_script(text: str) -> "Pane":
        """The script itself: every line is its own origin."""
        count = len(text.splitlines())
        return Pane("python", text, tuple(highlight_lines(text, "python")), tuple((k,) for k in range(1, count + 1)))

    @staticmethod
    def missing(note: str) -> "Pane":
        """No program to show, and why."""
        return Pane("text", "", (), (), note)

    def to_json(self, line_id: Callable[[str], int]) -> dict[str, Any]:
        """The pane as the page's script reads it, each line as ``line_id(html)``."""
        return {"lang": self.lang, "lines": [line_id(h) for h in self.html], "origins": [list(o) for o in self.origins],
                "note": self.note}

"""The explorer: every compiler stage side by side, every line linked, every pass and step replayed.

- ``exploration.py``: ``explore`` (Python, Jupyter) and ``explore_file`` (the command), and
  where schedule steps come from;
- ``document.py``: everything a page shows, as JSON data read from the trace records;
- ``pane.py``, ``highlight.py``, ``diff.py``: pane contents, Pygments highlighting, difflib diffs;
- ``page.py``: the self-contained HTML page (``static/``: its stylesheet, script and template);
- ``server.py``: the local server (127.0.0.1 only) that also recompiles edited scripts;
- ``command.py``: ``sparsetir explore FILE``.
"""

from .command import run
from .exploration import Exploration, Script, explore, explore_file

__all__ = ["Exploration", "Script", "explore", "explore_file", "run"]

"""Trace records: where every line of every stage came from, every pass, every schedule step.

- ``spans.py``: reading and merging spans (``Span``, ``SequentialSpan``), the block table;
- ``fill.py``: the span-filling helper the pipeline runs after every pass;
- ``listing.py``: a program's printed text with the script lines of each line;
- ``code.py``: the same for generated code (LLVM IR, assembly), from its debug line information;
- ``passes.py``: the pass record of one compilation;
- ``steps.py``: the program after every step of a schedule's history.

The explorer (``sparsetir/explorer``) and ``sparsetir show`` only read these records.
"""

from .code import code_listing
from .fill import fill_spans
from .listing import Listing, home_of, listing
from .passes import PassRecord, record_passes
from .steps import Replay, Snapshot, replay_snapshots

__all__ = [
    "Listing",
    "PassRecord",
    "Replay",
    "Snapshot",
    "code_listing",
    "fill_spans",
    "home_of",
    "listing",
    "record_passes",
    "replay_snapshots",
]

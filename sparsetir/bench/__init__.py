"""The ``sparsetir bench`` command: sparsetir's kernels checked against SciPy, timed against peers.

``kernels`` says what each kernel computes and how every implementation computes it, ``peers``
loads the optional peer libraries (torch, MKL), ``check`` compares an answer with the float64
reference, ``timing`` runs the rounds (interleaved with a model's op, or alone), ``interleave``
builds that op, ``report`` turns the measurements into the table, JSON and plot, and ``command``
runs it all. See docs/bench.md for how to run it and read its output.
"""

from .command import run

__all__ = ["run"]

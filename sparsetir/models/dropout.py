"""Dropout whose mask comes from ``torch.rand``: the function of ``F.dropout``, at a third of its cost.

On the CPU, ``F.dropout`` draws its mask with ``bernoulli_``, about 11 ns per element on the
project's 2-core VM; ``torch.rand(...) >= p`` gives a mask with the same distribution (each
element kept with probability ``1 - p``) at about 3 ns. In a GAT epoch on Cora the four dropouts
(input features, attention coefficients twice, hidden features) took a quarter to a third of the
sparsetir backend's time with ``F.dropout``.

Every backend's model code calls this one function in the same order (PyG's ``GATConv`` keeps
its own attention dropout), so the sparsetir and torch backends draw the same masks from the
same seed and stay comparable step by step.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """``x`` with each element zeroed with probability ``p`` and the rest scaled by ``1 / (1 - p)``
    when ``training``; ``x`` itself otherwise. Gradients flow through the kept elements."""
    if not training or p == 0:
        return x
    if not 0 < p < 1:
        # p == 1 (everything dropped) and invalid p: F.dropout's result and error message.
        return F.dropout(x, p, training)
    # The mask holds 0 or 1 / (1 - p) in x's dtype: one product forward and one backward.
    return x * torch.rand_like(x).ge_(p).mul_(1.0 / (1.0 - p))

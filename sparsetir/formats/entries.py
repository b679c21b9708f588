"""Entry maps: where each stored entry of a conversion's input lands in a format's value array.

Every conversion records ``entry_slot``: for entry ``k`` of its input, in the input's own
storage order, the index of the slot of the format's flat value array that holds it, or -1 when
the format does not hold it (a part of ``bsr.decompose``, which holds some entries only).
Several entries map to one slot when the input has duplicates; their values are summed.

``Scatter`` is the plan that turns new input values into the format's flat value array, built
once per conversion so that refreshing values per call is one allocation and one scatter:

- every entry held, no two sharing a slot (the usual case): ``out[entry_slot] = data``;
- some entries not held: ``out[dst] = data[src]`` over the held ones;
- duplicates: the held entries are grouped by slot once (a stable sort, so each group keeps
  the input's storage order) and each group is summed with ``np.add.reduceat``, in the value
  dtype and in storage order: every format sums a group of duplicates the same way, so all of
  them agree with ``csr.canonical`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .vectorized import run_starts


@dataclass(frozen=True, eq=False)
class Scatter:
    """How input values reach a format's slots: ``out[dst] = sum of data[src] per group``."""

    #: Length of the flat value array.
    slots: int
    #: The slots written, each once (in no particular order): exactly the slots that hold
    #: entries; None when entry k lands in slot k (the identity: values are copied).
    dst: Optional[np.ndarray]
    #: The input entries read, in the order of ``dst`` (grouped when ``starts`` is set); None
    #: reads every entry in storage order.
    src: Optional[np.ndarray]
    #: Where each group of ``data[src]`` starts, one group per ``dst`` slot; None when every
    #: slot holds one entry.
    starts: Optional[np.ndarray]

    @classmethod
    def plan(cls, entry_slot: np.ndarray, slots: int, injective: bool, complete: Optional[bool] = None) -> "Scatter":
        """The plan for ``entry_slot``; ``injective``: no two entries share a slot, ``complete``:
        every entry is held (None: look for -1). The conversion knows ``injective``, so it is
        not checked here."""
        held = None
        if complete is None:
            complete = not (entry_slot.size and int(entry_slot.min()) < 0)
        if not complete:
            held = np.flatnonzero(entry_slot >= 0)
        targets = entry_slot if held is None else entry_slot[held]
        if injective:
            return cls(slots, targets, held, None)
        order = np.argsort(targets, kind="stable")
        grouped = targets[order]
        starts = np.flatnonzero(run_starts(grouped))
        src = order if held is None else held[order]
        return cls(slots, grouped[starts], src, starts)

    @classmethod
    def identity(cls, slots: int) -> "Scatter":
        """The plan of an entry map that sends entry k to slot k."""
        return cls(slots, None, None, None)

    def __call__(self, data: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The flat value array for input values ``data`` (checked by the caller): zero where
        no entry lands, duplicates summed; written into ``out`` when given (no allocation)."""
        if self.dst is None:
            if out is None:
                return data.copy()
            np.copyto(out, data)
            return out
        if out is None:
            out = np.zeros(self.slots, data.dtype)
        elif self.dst.shape[0] < self.slots:  # padding or fill slots: clear what an earlier call left
            out.fill(0)
        values = data if self.src is None else data[self.src]
        if self.starts is not None and values.size:
            values = np.add.reduceat(values, self.starts)
        out[self.dst] = values
        return out

    def held(self) -> np.ndarray:
        """A boolean mask over the slots: True where an entry of the input lands."""
        if self.dst is None:
            return np.ones(self.slots, bool)
        mask = np.zeros(self.slots, bool)
        mask[self.dst] = True
        return mask

    def held_slots(self) -> np.ndarray:
        """The slots holding entries, each once (in no particular order)."""
        return np.arange(self.slots) if self.dst is None else self.dst

    @property
    def entries(self) -> int:
        """Number of distinct slots holding entries (the canonical nnz of what is held)."""
        return self.slots if self.dst is None else int(self.dst.shape[0])

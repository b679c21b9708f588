"""``sparsetir.formats``: sparse formats and their conversions from CSR, in NumPy/SciPy.

Every conversion takes a CSR input (a SciPy CSR matrix or array, a CPU torch sparse CSR tensor,
or ``csr.from_arrays(indptr, indices, data, shape)``), validates it like ``sparsetir.ops`` does,
never modifies it, and returns a frozen dataclass of int32 structure arrays, the values in the
format's layout (``data``), and an entry map (``entry_slot``: where each input entry landed) so
that ``values(new_data)`` refreshes the values with one scatter. See ``docs/formats.md``.

==============  ==============================================  =====================
format          built by                                        module
==============  ==============================================  =====================
``Csr``         ``canonical(A)`` (sorted, duplicates summed)    ``csr.py``
``Csc``         ``Csc.from_csr(A)``                             ``csc.py``
``Bsr``         ``Bsr.from_csr(A, (br, bc))``,                  ``bsr.py``
                ``bsr.decompose(A, sizes, min_density)``
``Ell``         ``Ell.from_csr(A, width)``                      ``ell.py``
``PaddedCsr``   ``PaddedCsr.from_csr(A, pad)``                  ``padded.py``
``Dcsr``        ``Dcsr.from_csr(A)``                            ``dcsr.py``
``Csf``         ``Csf.from_coo(coords, values, shape)``,        ``csf.py``
                ``Csf.from_csr(A)``
``Hybrid``      ``Hybrid.from_csr(A, col_parts, widths)``       ``hybrid.py``
==============  ==============================================  =====================

``stats(A)`` (``stats.py``) measures what a format choice depends on. The ELL-like formats share
one bucketing routine (``buckets.py``); entry maps and ``values`` are ``entries.py``'s, the
methods every format has ``base.py``'s.
"""

from . import bsr, buckets, csc, csf, csr, dcsr, ell, hybrid, padded
from .base import Format
from .bsr import Bsr
from .buckets import EllPart
from .csc import Csc
from .csf import Csf
from .csr import Csr, CsrArrays, canonical, from_arrays
from .dcsr import Dcsr
from .ell import Ell
from .hybrid import Hybrid
from .padded import PaddedCsr
from .stats import BLOCK_SIZES, Stats, stats

#: Every format class, in the order of the table above.
FORMATS = (Csr, Csc, Bsr, Ell, PaddedCsr, Dcsr, Csf, Hybrid)

__all__ = [
    "BLOCK_SIZES",
    "Bsr",
    "Csc",
    "Csf",
    "Csr",
    "CsrArrays",
    "Dcsr",
    "Ell",
    "EllPart",
    "FORMATS",
    "Format",
    "Hybrid",
    "PaddedCsr",
    "Stats",
    "bsr",
    "buckets",
    "canonical",
    "csc",
    "csf",
    "csr",
    "dcsr",
    "ell",
    "from_arrays",
    "hybrid",
    "padded",
    "stats",
]

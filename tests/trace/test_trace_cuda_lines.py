"""CUDA C linked to the script: the stores of a kernel built for ``target="cuda"`` (no GPU or
nvcc needed to generate the source) carry the script lines of their stage-III stores."""

from __future__ import annotations

import sparsetir
from sparsetir.schedule import Schedule
from sparsetir.trace import code_listing
from sparsetir.trace.code import _cuda_lines, mark_stores
from sparsetir.transforms import pipeline
from examples import EXAMPLE_DIR

HOME = str(EXAMPLE_DIR / "csr_spmm.py")


def _bound_csr_spmm():
    """Stage III of the example, rows on blocks and columns on threads."""
    sch = Schedule(sparsetir.parse_file(HOME), round_trip=False)
    sch.lower_sparse_iter()
    (i,) = sch.get_loops(sch.get_sblock("csr_spmm0"))
    sch.bind(i, "blockIdx.x")
    _, k = sch.get_loops(sch.get_sblock("csr_spmm1"))
    sch.bind(k, "threadIdx.x")
    return pipeline.lower(sch.func)


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_cuda_stores_carry_their_script_lines():
    f3 = _bound_csr_spmm()
    text = sparsetir.build(f3, target="cuda").source("cuda")
    marked = sparsetir.build(mark_stores(f3), target="cuda").source("cuda")
    assert "__sparsetir_line_" not in text and "__sparsetir_line_28();" in marked
    listing = code_listing(text, "cuda", HOME, marked)
    assert listing.text == text
    init = next(k for k, line in enumerate(listing.lines) if "] = 0x0p+0f" in line)
    update = next(k for k, line in enumerate(listing.lines) if "] = (c_ptr[" in line)
    assert listing.origins[init] == ((HOME, _line(open(HOME).read(), "C[i, k] = T.float32(0)")),)
    assert listing.origins[update] == ((HOME, _line(open(HOME).read(), "C[i, k] = C[i, k] + A[i, j]")),)
    # declarations, loops and braces come from no store
    assert all(not listing.origins[k] for k, line in enumerate(listing.lines) if "int cse_v" in line or "for (" in line)
    assert code_listing(text, "cuda", HOME).origins == ((),) * len(listing.lines)  # nothing marked, nothing linked


def test_a_marker_goes_to_the_next_store_and_unmatched_lines_stay_unlinked():
    marked = ["{", "  __sparsetir_line_7();", "  int cse_v1 = (x[0] * 2);", "  y[cse_v1] = 1;",
              "  __sparsetir_line_9();", "  __sparsetir_line_8();", "  *(float4*)(z + 4) = w;", "}"]
    real = ["{", "  int cse_v1 = (x[0] * 2);", "  y[cse_v1] = 1;", "  z[4] = w[0];", "}"]
    assert _cuda_lines(real, marked) == [0, 0, 7, 0, 0]
    assert _cuda_lines(marked[:1] + marked[2:4] + marked[6:], marked) == [0, 0, 7, 8, 0]
